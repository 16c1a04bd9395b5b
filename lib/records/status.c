/*
 * status.c: walks a webhook body (every entry, every change, every status:
 * Meta batches up to 1,000 updates in one POST) and keeps each message
 * status in a batch; then reduces the batch to the highest-ranked status
 * per message and sorts it, so that one UPDATE takes its row locks in one
 * order (unsorted overlapping batches deadlock).
 *
 * A status names its message by wamid ("id") and, when the send carried
 * biz_opaque_callback_data "wapipe:<recipient id>:<attempt>", by recipient
 * id too; the id wins, as it holds even when the wamid was never recorded.
 * Meta's oddities are tolerated: recipient_id missing, timestamps as
 * numbers or strings, unknown status values, value.errors with no
 * message, other fields and inbound messages that are not texts are
 * counted, logged the first time (system errors every time), and
 * skipped. The changes about the business (template status and
 * category, account, messaging limit: business_fields) go with the
 * inbound messages, for account_events.
 *
 * A status's pricing object (on sent, and on one of delivered and read)
 * becomes one small number, category * 16 + type * 4 + billable, as
 * sql/schema.sql's pricing_kinds spells it out: the category 1 to 7 (0
 * for one not known here, said once), the type 1 to 3 (0: none), and
 * billable 2 true, 1 false, 0 absent (Meta means to drop it). The
 * reduced status of a message takes the pricing of the highest-ranked
 * of its statuses that has one.
 *
 * An inbound text (value.messages[], "type":"text") may be an opt-out:
 * its sender ("+" and "from", or its from_user_id when Meta leaves the
 * number out), the number it came to
 * (value.metadata.phone_number_id) and its body trimmed of white space
 * and folded to lower case (Unicode, through the C library) go into the
 * batch when the body is short enough to be a keyword; Postgres looks the
 * word up in optout_keywords. The text itself is never logged. Every
 * inbound message, whatever its type, also goes into the batch whole
 * (records/inbound.c), for inbound_messages.
 *
 * What Postgres would refuse is refused here, before a batch holds it: a
 * timestamp that is not a time (not finite, below zero, past the year
 * 9999) leaves its status out and has the line rejected; a wamid that is
 * not UTF-8 or holds a NUL is a malformed status; an error title is cut
 * to 512 bytes on a character boundary.
 */
#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

#include "core/buf.h"
#include "core/err.h"
#include "records/inbound.h"
#include "records/json.h"
#include "records/request.h"
#include "records/status.h"

const char *const wa_st_names[WA_ST_N] = { "sent", "delivered", "read",
    "failed", "played", "deleted", "warning", "other" };
const char *const wa_odd_names[WA_ODD_N] = { "malformed_status",
    "system_error", "inbound_message", "other_field", "other_object",
    "foreign_status" };

/* Rank of each status value in the table's order; 0: not applied. */
static const int ranks[WA_ST_N] = { 1, 3, 4, 2, 4, 0, 0, 0 };
const char *const wa_rank_names[] = { NULL, "sent", "failed",
    "delivered", "read" };

static int logged[WA_ST_N + WA_ODD_N];

/* s made safe to log: printable ASCII, at most 60 bytes. */
static const char *
clean(const char *s, char *out, size_t size)
{
	size_t i;

	for (i = 0; s != NULL && s[i] != '\0' && i + 1 < size && i < 60; i++)
		out[i] = s[i] >= ' ' && s[i] < 127 ? s[i] : '?';
	out[i] = '\0';
	return out;
}

/* Counts a thing skipped; logs the first of its kind: what "value". */
static void
odd(struct wa_status_batch *b, int kind, const char *where,
    unsigned long lineno, const char *what, const char *value)
{
	char c[64];

	b->odd[kind]++;
	if (logged[WA_ST_N + kind]++ == 0)
		wa_warn("%s:%lu: %s%s%s%s skipped (counted; further ones are "
		    "not logged)", where, lineno, what, value ? " \"" : "",
		    value ? clean(value, c, sizeof c) : "", value ? "\"" : "");
}

static struct json_object *
array(struct json_object *o, const char *key)
{
	o = wa_json_get(o, key);
	return json_object_is_type(o, json_type_array) ? o : NULL;
}

/*
 * The last time a status may carry, 9999-12-31T23:59:59Z: every tool
 * writes it, and Postgres takes far more.
 */
#define TS_MAX 253402300799LL

/*
 * The status's timestamp, seconds as a number or a string of digits
 * (milliseconds, past 1e11, scaled), in *ts: 0 when it has none. Returns
 * NULL, or why it is not a time (not a number, below zero, not finite,
 * past TS_MAX), the text it had in c.
 */
static const char *
stamp(struct json_object *o, int64_t *ts, char *c, size_t size)
{
	const char *s;
	double d;
	char *end;

	*ts = 0;
	o = wa_json_get(o, "timestamp");
	switch (json_object_get_type(o)) {
	case json_type_null:
		return NULL;
	case json_type_int:
		if (wa_json_int(o, "", ts) != 1)
			break;
		if (*ts > 100000000000LL)
			*ts /= 1000;
		if (*ts >= 0 && *ts <= TS_MAX)
			return NULL;
		break;
	case json_type_double:
		/* Compared before the cast: NaN and 1e400 fail here. */
		d = json_object_get_double(o);
		if (d > 1e11)
			d /= 1000;
		if (d >= 0 && d <= TS_MAX) {
			*ts = (int64_t)d;
			return NULL;
		}
		break;
	case json_type_string:
		s = json_object_get_string(o);
		if (*s < '0' || *s > '9')
			break;
		errno = 0;
		*ts = strtoll(s, &end, 10);
		if (*end == '.')
			end += 1 + strspn(end + 1, "0123456789");
		if (errno != 0 || *end != '\0')
			break;
		if (*ts > 100000000000LL)
			*ts /= 1000;
		if (*ts <= TS_MAX)
			return NULL;
		break;
	default:
		break;
	}
	*ts = 0;
	snprintf(c, size, "%s", json_object_get_string(o));
	return "not a time";
}

/*
 * The code of status o's pricing object (see above), or -1 when it has
 * none. authentication_international is the spelling of the
 * conversation object's origin, taken as well.
 */
static int
pricing(struct json_object *o, const char *where, unsigned long lineno)
{
	static const char *const cats[] = { "marketing", "utility",
	    "authentication", "authentication-international", "service",
	    "marketing_lite", "referral_conversion" };
	static const char *const types[] = { "regular",
	    "free_customer_service", "free_entry_point" };
	static int said;
	struct json_object *p = wa_json_get(o, "pricing"), *b;
	const char *c, *t;
	int ci = 0, ti = 0, bi = 0, i;
	char x[64];

	if (!json_object_is_type(p, json_type_object))
		return -1;
	if ((c = wa_json_str(p, "category")) != NULL) {
		for (i = 0; i < 7 && strcmp(c, cats[i]) != 0; i++)
			;
		if (i == 7 && strcmp(c, "authentication_international") == 0)
			i = 3;
		if (i < 7)
			ci = i + 1;
		else if (said++ == 0)
			wa_warn("%s:%lu: pricing category \"%s\" not known: "
			    "kept as other (further ones are not logged)",
			    where, lineno, clean(c, x, sizeof x));
	}
	if ((t = wa_json_str(p, "type")) != NULL)
		for (i = 0; i < 3; i++)
			if (strcmp(t, types[i]) == 0)
				ti = i + 1;
	b = wa_json_get(p, "billable");
	if (json_object_is_type(b, json_type_boolean))
		bi = json_object_get_boolean(b) ? 2 : 1;
	return ci * 16 + ti * 4 + bi;
}

/* The number of the n digits at s, or -1 (none, too many). */
static int64_t
number(const char *s, size_t n)
{
	int64_t v = 0;
	size_t i;

	if (n == 0 || n > 18)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

/*
 * The row callback data s names (request.h): "wapipe:<tag>:<id>:<attempt>",
 * "wapipe:<id>:<attempt>" (before the tag) or "wapipe:<id>": its id, or
 * 0 (none of these); its attempt in *attempt (-1: none); *foreign set
 * when the tag is not tag, this database's.
 */
static int64_t
recipient(const char *s, const char *tag, int64_t *attempt, int *foreign)
{
	const char *f[4];
	size_t p = strlen(WA_CALLBACK_PREFIX), len[4];
	int64_t id;
	int n = 0;

	*attempt = -1;
	*foreign = 0;
	if (s == NULL || strncmp(s, WA_CALLBACK_PREFIX, p) != 0)
		return 0;
	for (s += p; n < 4; s += len[n++] + 1) {
		f[n] = s;
		len[n] = strcspn(s, ":");
		if (s[len[n]] == '\0') {
			n++;
			break;
		}
	}
	if (n == 4)
		return 0;
	if (n == 3) {
		if (len[0] > 16 || strspn(f[0], "0123456789"
		    "abcdefghijklmnopqrstuvwxyz") < len[0] || len[0] == 0)
			return 0;
		*foreign = strlen(tag) != len[0] ||
		    strncmp(f[0], tag, len[0]) != 0;
		f[0] = f[1], len[0] = len[1];
		f[1] = f[2], len[1] = len[2];
		n = 2;
	}
	if ((id = number(f[0], len[0])) <= 0)
		return 0;
	if (n == 2 && (*attempt = number(f[1], len[1])) < 0)
		return 0;
	return id;
}

/*
 * Copies s into the batch's strings, bytes that are not UTF-8 as '?'
 * (Postgres would refuse the whole batch), then cut to at most max bytes
 * on a character boundary; returns its offset, its length in *len and
 * how many bytes were replaced in *bad.
 */
static size_t
keep(struct wa_status_batch *b, const char *s, size_t max, size_t *len,
    size_t *bad)
{
	size_t at = b->str.len, n = strlen(s), i, k;

	*bad = 0;
	for (i = 0; i < n; i += k) {
		if ((k = wa_utf8_len((const unsigned char *)s + i,
		    n - i)) == 0) {
			k = 1;
			++*bad;
			wa_buf_add(&b->str, "?", 1);
		} else
			wa_buf_add(&b->str, s + i, k);
	}
	*len = b->str.len > at ? wa_utf8_cut(b->str.s + at, b->str.len - at,
	    max) : 0;
	b->str.len = at + *len;
	if (b->str.s != NULL)
		b->str.s[b->str.len] = '\0';
	return at;
}

static size_t
put(struct wa_status_batch *b, const char *s, size_t n)
{
	size_t at = b->str.len;

	wa_buf_add(&b->str, s, n);
	return at;
}

static const char *digits(struct json_object *, const char *, size_t);

/*
 * Adds status o to the batch; returns NULL, or why it cannot be applied
 * (it is then left out, and its line rejected).
 */
static const char *
status(struct wa_status_batch *b, struct json_object *o, const char *where,
    unsigned long lineno)
{
	static char why[256];
	struct json_object *idobj = wa_json_get(o, "id"), *err;
	const char *id = wa_json_str(o, "id"), *st = wa_json_str(o, "status");
	const char *title, *bad, *uid, *ph;
	struct wa_status *s;
	size_t bad_bytes;
	int64_t ts;
	char c[64], t[64];
	int k, foreign;

	/* A wamid with a NUL in it would match another one. */
	if (id == NULL || *id == '\0' || strlen(id) > 256 || st == NULL ||
	    strlen(id) != (size_t)json_object_get_string_len(idobj)) {
		odd(b, WA_ODD_MALFORMED, where, lineno, "a status without "
		    "\"id\" or \"status\" (or an id over 256 bytes)", NULL);
		return NULL;
	}
	for (k = 0; k < WA_ST_OTHER && strcmp(st, wa_st_names[k]) != 0; k++)
		;
	b->seen[k]++;
	if (ranks[k] == 0) {
		if (logged[k]++ == 0)
			wa_warn("%s:%lu: status \"%s\" not applied (counted; "
			    "further ones are not logged)", where, lineno,
			    clean(st, c, sizeof c));
		return NULL;
	}
	if ((bad = stamp(o, &ts, t, sizeof t)) != NULL) {
		snprintf(why, sizeof why, "status %.16s of %.64s: timestamp "
		    "\"%.40s\" is %s (the body's other statuses are applied)",
		    clean(st, c, sizeof c), id, clean(t, t, sizeof t), bad);
		return why;
	}
	if (b->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 1024;
		b->v = wa_realloc(b->v, b->cap * sizeof *b->v);
	}
	s = &b->v[b->n++];
	memset(s, 0, sizeof *s);
	s->rank = ranks[k];
	s->lineno = lineno;
	s->ts = ts;
	s->pricing = pricing(o, where, lineno);
	s->rid = recipient(wa_json_str(o, "biz_opaque_callback_data"), b->tag,
	    &s->attempt, &foreign);
	if (foreign) {
		b->n--;
		odd(b, WA_ODD_FOREIGN, where, lineno, "a status of another "
		    "deployment (its callback data's tag is not this "
		    "database's)", NULL);
		return NULL;
	}
	s->wamid = keep(b, id, 256, &s->wamid_len, &bad_bytes);
	if (bad_bytes > 0) {
		b->n--;
		b->str.len = s->wamid;
		odd(b, WA_ODD_MALFORMED, where, lineno,
		    "a status whose id is not UTF-8", NULL);
		return NULL;
	}
	/* Who it went to, as the business knows them (a BSUID), for an
	   opt-out that names them by it alone (pg/statusdb.c). */
	if ((uid = wa_json_str(o, "recipient_user_id")) != NULL &&
	    wa_bsuid_ok(uid)) {
		s->uid_len = strlen(uid);
		s->uid = put(b, uid, s->uid_len);
	}
	/* Who, by number (their wa_id: Meta may leave it out): how
	   pg/statusdb.c finds the row of a wamid the named row lacks. */
	if ((ph = digits(o, "recipient_id", 15)) != NULL) {
		s->phone_len = strlen(ph) + 1;
		s->phone = put(b, "+", 1);
		put(b, ph, s->phone_len - 1);
	}
	if (k != WA_ST_FAILED || (err = array(o, "errors")) == NULL ||
	    (err = json_object_array_get_idx(err, 0)) == NULL)
		return NULL;
	s->has_code = wa_json_int(err, "code", &s->code) == 1 &&
	    s->code >= -2147483647 && s->code <= 2147483647;
	/* As wa-send reads an answer's: "(#131026) " is no title. */
	if ((title = wa_json_error_text(err)) != NULL)
		s->title = keep(b, title, 512, &s->title_len, &bad_bytes);
	return NULL;
}

/* The code point of the n-byte UTF-8 sequence at s (n from wa_utf8_len). */
static uint32_t
decode(const unsigned char *s, size_t n)
{
	uint32_t c;
	size_t i;

	if (n == 1)
		return s[0];
	c = s[0] & (0x7f >> n);
	for (i = 1; i < n; i++)
		c = c << 6 | (s[i] & 0x3f);
	return c;
}

static void
encode(struct wa_buf *b, uint32_t c)
{
	char u[4];

	if (c < 0x80) {
		u[0] = c;
		wa_buf_add(b, u, 1);
	} else if (c < 0x800) {
		u[0] = 0xc0 | c >> 6;
		u[1] = 0x80 | (c & 0x3f);
		wa_buf_add(b, u, 2);
	} else if (c < 0x10000) {
		u[0] = 0xe0 | c >> 12;
		u[1] = 0x80 | (c >> 6 & 0x3f);
		u[2] = 0x80 | (c & 0x3f);
		wa_buf_add(b, u, 3);
	} else {
		u[0] = 0xf0 | c >> 18;
		u[1] = 0x80 | (c >> 12 & 0x3f);
		u[2] = 0x80 | (c >> 6 & 0x3f);
		u[3] = 0x80 | (c & 0x3f);
		wa_buf_add(b, u, 4);
	}
}

/* The C library's lower case for c, when it is a character; else c. */
static uint32_t
lower(uint32_t c)
{
	static locale_t loc;
	static int tried;
	wint_t l;

	if (!tried) {
		tried = 1;
		loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
	}
	if (c < 0x80 || loc == (locale_t)0)
		return c >= 'A' && c <= 'Z' ? c + 32 : c;
	l = towlower_l(c, loc);
	if (l == WEOF || l > 0x10ffff || (l >= 0xd800 && l <= 0xdfff) ||
	    l == 0)
		return c;
	return l;
}

void
wa_status_fold(struct wa_buf *out, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i, k;

	for (i = 0; i < n; i += k)
		if ((k = wa_utf8_len(u + i, n - i)) == 0) {
			k = 1;
			wa_buf_add(out, "?", 1);
		} else
			encode(out, lower(decode(u + i, k)));
}

/* White space around a keyword: ASCII's, no-break and Unicode spaces. */
static int
space(uint32_t c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0 ||
	    c == 0x1680 || (c >= 0x2000 && c <= 0x200b) || c == 0x2028 ||
	    c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000 ||
	    c == 0xfeff;
}

/* s (n bytes, UTF-8) without white space around it; its length in *n. */
static const char *
trim(const char *s, size_t *n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i, k, last = 0, first = *n;

	for (i = 0; i < *n; i += k) {
		k = wa_utf8_len(u + i, *n - i);
		if (!space(decode(u + i, k))) {
			if (first == *n)
				first = i;
			last = i + k;
		}
	}
	*n = first < last ? last - first : 0;
	return s + (first < last ? first : 0);
}

/*
 * The string at o's key when it is 1 to max digits and nothing else,
 * else NULL.
 */
static const char *
digits(struct json_object *o, const char *key, size_t max)
{
	const char *s = wa_json_str(o, key);
	size_t n;

	if (s == NULL || (n = strlen(s)) == 0 || n > max ||
	    strspn(s, "0123456789") != n ||
	    (size_t)json_object_get_string_len(wa_json_get(o, key)) != n)
		return NULL;
	return s;
}

/*
 * The user_preferences field (cloud-api-2026.md §5): each marketing stop
 * or resume of value.user_preferences[] goes with the inbound messages,
 * as one of type "user_preferences" from its wa_id (or user_id, a BSUID,
 * when Meta leaves the wa_id out), its event in raw,
 * for pg/statusdb.c to suppress or lift (never stored as a message).
 */
static void
preferences(struct wa_status_batch *b, struct json_object *ch,
    unsigned long lineno)
{
	struct json_object *a = array(ch, "value.user_preferences"), *e, *m;
	char ts[24];
	size_t i;

	for (i = 0; a != NULL && i < json_object_array_length(a); i++) {
		e = json_object_array_get_idx(a, i);
		if (wa_json_str(e, "wa_id") == NULL &&
		    !wa_bsuid_ok(wa_json_str(e, "user_id")))
			continue;
		m = json_object_new_object();
		if (wa_json_str(e, "wa_id") != NULL)
			json_object_object_add(m, "from",
			    json_object_new_string(wa_json_str(e, "wa_id")));
		if (wa_json_str(e, "user_id") != NULL)
			json_object_object_add(m, "from_user_id",
			    json_object_new_string(wa_json_str(e,
			    "user_id")));
		json_object_object_add(m, "type",
		    json_object_new_string("user_preferences"));
		snprintf(ts, sizeof ts, "%lld", (long long)
		    json_object_get_int64(wa_json_get(e, "timestamp")));
		json_object_object_add(m, "timestamp",
		    json_object_new_string(ts));
		json_object_object_add(m, "user_preferences",
		    json_object_get(e));
		wa_inbound_add(&b->msgs, &b->nmsg, wa_json_get(ch, "value"), m,
		    lineno);
		json_object_put(m);
	}
}

/*
 * Inbound message m of the change whose phone_number_id is pnid (NULL:
 * none): a text short enough to be a keyword goes into the batch; one
 * that is not a text, or lacks its sender or number, is counted odd.
 */
static void
inbound(struct wa_status_batch *b, struct json_object *m, const char *pnid,
    const char *where, unsigned long lineno)
{
	const char *from = digits(m, "from", 15), *type, *text, *uid;
	struct wa_inbound *in;
	size_t n;

	type = wa_json_str(m, "type");
	text = wa_json_str(m, "text.body");
	uid = wa_json_str(m, "from_user_id");
	if (from == NULL && uid != NULL && !wa_bsuid_ok(uid))
		uid = NULL;
	if (pnid == NULL || (from == NULL && uid == NULL) || type == NULL ||
	    strcmp(type, "text") != 0 || text == NULL ||
	    (n = strlen(text)) != (size_t)json_object_get_string_len(
	    wa_json_get(m, "text.body")) || !wa_utf8_valid(text, n)) {
		odd(b, WA_ODD_MESSAGE, where, lineno, "an inbound message "
		    "that is not a text with a sender and a phone_number_id",
		    NULL);
		return;
	}
	b->texts++;
	text = trim(text, &n);
	if (n == 0 || n > WA_INBOUND_MAX)
		return;
	if (b->nin == b->incap) {
		b->incap = b->incap ? 2 * b->incap : 64;
		b->in = wa_realloc(b->in, b->incap * sizeof *b->in);
	}
	in = &b->in[b->nin++];
	in->lineno = lineno;
	in->scope_len = strlen(pnid);
	in->scope = put(b, pnid, in->scope_len);
	if (from != NULL) {
		in->phone = put(b, "+", 1);
		in->phone_len = 1 + strlen(from);
		put(b, from, in->phone_len - 1);
	} else {
		in->phone_len = strlen(uid);
		in->phone = put(b, uid, in->phone_len);
	}
	in->said_len = n;
	in->said = put(b, text, n);
	in->word = b->str.len;
	wa_status_fold(&b->str, text, n);
	in->word_len = b->str.len - in->word;
}

/* The fields of changes about the business: account_events. */
static const char *const business_fields[] = {
	"message_template_status_update", "template_category_update",
	"account_update", "business_capability_update",
};

/* Change ch of entry waba (its id). */
static const char *
change(struct wa_status_batch *b, struct json_object *ch, const char *waba,
    const char *where, unsigned long lineno)
{
	const char *field = wa_json_str(ch, "field"), *why = NULL, *w;
	struct json_object *a, *e;
	char c[64], code[32];
	size_t i;

	if (field != NULL && strcmp(field, "user_preferences") == 0) {
		preferences(b, ch, lineno);
		return NULL;
	}
	for (i = 0; field != NULL && i < sizeof business_fields /
	    sizeof *business_fields; i++)
		if (strcmp(field, business_fields[i]) == 0 &&
		    json_object_is_type(wa_json_get(ch, "value"),
		    json_type_object)) {
			wa_inbound_event(&b->msgs, &b->nmsg, field, waba,
			    wa_json_get(ch, "value"), lineno);
			b->events++;
			return NULL;
		}
	if (field == NULL || strcmp(field, "messages") != 0) {
		odd(b, WA_ODD_FIELD, where, lineno, "field", field ? field :
		    "");
		return NULL;
	}
	if ((a = array(ch, "value.statuses")) != NULL)
		for (i = 0; i < json_object_array_length(a); i++)
			if ((w = status(b, json_object_array_get_idx(a, i),
			    where, lineno)) != NULL && why == NULL)
				why = w;
	if ((a = array(ch, "value.messages")) != NULL)
		for (i = 0; i < json_object_array_length(a); i++) {
			inbound(b, json_object_array_get_idx(a, i), digits(
			    wa_json_get(ch, "value.metadata"),
			    "phone_number_id", 64), where, lineno);
			wa_inbound_add(&b->msgs, &b->nmsg, wa_json_get(ch,
			    "value"), json_object_array_get_idx(a, i),
			    lineno);
		}
	if ((a = array(ch, "value.errors")) != NULL)
		for (i = 0; i < json_object_array_length(a); i++) {
			e = json_object_array_get_idx(a, i);
			b->odd[WA_ODD_SYSTEM_ERROR]++;
			wa_warn("%s:%lu: system error %s: %s", where, lineno,
			    clean(json_object_get_string(wa_json_get(e,
			    "code")), code, sizeof code),
			    clean(wa_json_str(e, "title"), c, sizeof c));
		}
	return why;
}

/*
 * Adds the statuses of one webhook body; where:lineno for messages.
 * Returns NULL, or why a status was left out (the first one).
 */
const char *
wa_status_walk(struct wa_status_batch *b, struct json_object *body,
    const char *where, unsigned long lineno)
{
	const char *obj = wa_json_str(body, "object"), *why = NULL, *w;
	struct json_object *entries, *entry, *changes;
	size_t i, j;

	entries = array(body, "entry");
	if (obj == NULL || strcmp(obj, "whatsapp_business_account") != 0 ||
	    entries == NULL) {
		odd(b, WA_ODD_OBJECT, where, lineno, "object", obj ? obj :
		    "");
		return NULL;
	}
	for (i = 0; i < json_object_array_length(entries); i++) {
		entry = json_object_array_get_idx(entries, i);
		changes = array(entry, "changes");
		for (j = 0; changes && j < json_object_array_length(changes);
		    j++)
			if ((w = change(b, json_object_array_get_idx(changes,
			    j), wa_json_str(entry, "id"), where, lineno)) !=
			    NULL && why == NULL)
				why = w;
	}
	return why;
}

/* By recipient id (statuses without one last), wamid, rank down, time. */
static int
cmp(const void *pa, const void *pb, void *arg)
{
	const struct wa_status *a = pa, *b = pb;
	const char *str = arg;
	size_t n;
	int d;

	if (a->rid != b->rid) {
		if (a->rid == 0 || b->rid == 0)
			return a->rid == 0 ? 1 : -1;
		return a->rid < b->rid ? -1 : 1;
	}
	if (a->rid == 0) {
		n = a->wamid_len < b->wamid_len ? a->wamid_len : b->wamid_len;
		if ((d = memcmp(str + a->wamid, str + b->wamid, n)) != 0)
			return d;
		if (a->wamid_len != b->wamid_len)
			return a->wamid_len < b->wamid_len ? -1 : 1;
	}
	if (a->rank != b->rank)
		return b->rank - a->rank;
	if (a->ts == b->ts)
		return 0;
	if (a->ts == 0 || b->ts == 0)
		return a->ts == 0 ? 1 : -1;
	return a->ts < b->ts ? -1 : 1;
}

static int
same(const struct wa_status_batch *b, const struct wa_status *x,
    const struct wa_status *y)
{
	if (x->rid != 0 || y->rid != 0)
		return x->rid == y->rid;
	return x->wamid_len == y->wamid_len &&
	    memcmp(b->str.s + x->wamid, b->str.s + y->wamid, x->wamid_len) == 0;
}

/*
 * Keeps the highest-ranked (then earliest) status of each message, with
 * the pricing and the user id of the first of its statuses in that order
 * that has one.
 */
void
wa_status_reduce(struct wa_status_batch *b)
{
	size_t i, n = 0;

	if (b->n == 0)
		return;
	qsort_r(b->v, b->n, sizeof *b->v, cmp, b->str.s);
	for (i = 1; i < b->n; i++)
		if (!same(b, &b->v[n], &b->v[i]))
			b->v[++n] = b->v[i];
		else {
			if (b->v[n].pricing < 0)
				b->v[n].pricing = b->v[i].pricing;
			if (b->v[n].uid_len == 0)
				b->v[n].uid = b->v[i].uid,
				b->v[n].uid_len = b->v[i].uid_len;
			if (b->v[n].phone_len == 0)
				b->v[n].phone = b->v[i].phone,
				b->v[n].phone_len = b->v[i].phone_len;
		}
	b->n = n + 1;
}

void
wa_status_clear(struct wa_status_batch *b)
{
	b->n = 0;
	b->nin = 0;
	b->str.len = 0;
	b->nmsg = 0;
	b->msgs.len = 0;
}

void
wa_status_free(struct wa_status_batch *b)
{
	int i;

	free(b->v);
	free(b->in);
	wa_buf_free(&b->str);
	wa_buf_free(&b->msgs);
	for (i = 0; i < 14; i++)
		wa_buf_free(&b->arr[i]);
}
