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
 * message, other fields and inbound messages are counted, logged the
 * first time (system errors every time), and skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "records/json.h"
#include "records/request.h"
#include "records/status.h"

const char *const wa_st_names[WA_ST_N] = { "sent", "delivered", "read",
    "failed", "played", "deleted", "warning", "other" };
const char *const wa_odd_names[WA_ODD_N] = { "malformed_status",
    "system_error", "inbound_message", "other_field", "other_object" };

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

/* A timestamp: seconds as a number or a string (milliseconds scaled). */
static int64_t
stamp(struct json_object *o)
{
	int64_t v = 0;
	char *end;

	o = wa_json_get(o, "timestamp");
	switch (json_object_get_type(o)) {
	case json_type_int:
		v = json_object_get_int64(o);
		break;
	case json_type_double:
		v = (int64_t)json_object_get_double(o);
		break;
	case json_type_string:
		v = strtoll(json_object_get_string(o), &end, 10);
		if (*end != '\0' && *end != '.')
			v = 0;
		break;
	default:
		break;
	}
	if (v > 100000000000LL)
		v /= 1000;
	return v > 0 ? v : 0;
}

/* The recipient id in "wapipe:<id>[:<attempt>]", or 0. */
static int64_t
recipient(const char *s)
{
	char *end;
	long long id;

	size_t p = strlen(WA_CALLBACK_PREFIX);

	if (s == NULL || strncmp(s, WA_CALLBACK_PREFIX, p) != 0 ||
	    s[p] < '0' || s[p] > '9')
		return 0;
	id = strtoll(s + p, &end, 10);
	return *end == '\0' || *end == ':' ? id : 0;
}

/*
 * Copies s into the batch's strings, at most max bytes of whole
 * characters, bytes that are not UTF-8 as '?' (Postgres would refuse the
 * whole batch); returns its offset, its length in *len and how many bytes
 * were replaced in *bad.
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
		}
		if (i + k > max)
			break;
		if (k == 1 && (unsigned char)s[i] >= 0x80)
			wa_buf_add(&b->str, "?", 1);
		else
			wa_buf_add(&b->str, s + i, k);
	}
	*len = b->str.len - at;
	return at;
}

static void
status(struct wa_status_batch *b, struct json_object *o, const char *where,
    unsigned long lineno)
{
	const char *id = wa_json_str(o, "id"), *st = wa_json_str(o, "status");
	const char *title;
	struct json_object *err;
	struct wa_status *s;
	size_t bad;
	char c[64];
	int k;

	if (id == NULL || *id == '\0' || strlen(id) > 256 || st == NULL) {
		odd(b, WA_ODD_MALFORMED, where, lineno, "a status without "
		    "\"id\" or \"status\" (or an id over 256 bytes)", NULL);
		return;
	}
	for (k = 0; k < WA_ST_OTHER && strcmp(st, wa_st_names[k]) != 0; k++)
		;
	b->seen[k]++;
	if (ranks[k] == 0) {
		if (logged[k]++ == 0)
			wa_warn("%s:%lu: status \"%s\" not applied (counted; "
			    "further ones are not logged)", where, lineno,
			    clean(st, c, sizeof c));
		return;
	}
	if (b->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 1024;
		b->v = wa_realloc(b->v, b->cap * sizeof *b->v);
	}
	s = &b->v[b->n++];
	memset(s, 0, sizeof *s);
	s->rank = ranks[k];
	s->lineno = lineno;
	s->ts = stamp(o);
	s->rid = recipient(wa_json_str(o, "biz_opaque_callback_data"));
	s->wamid = keep(b, id, 256, &s->wamid_len, &bad);
	if (bad > 0) {
		b->n--;
		b->str.len = s->wamid;
		odd(b, WA_ODD_MALFORMED, where, lineno,
		    "a status whose id is not UTF-8", NULL);
		return;
	}
	if (k != WA_ST_FAILED || (err = array(o, "errors")) == NULL ||
	    (err = json_object_array_get_idx(err, 0)) == NULL)
		return;
	s->has_code = wa_json_int(err, "code", &s->code) == 1 &&
	    s->code >= -2147483647 && s->code <= 2147483647;
	if ((title = wa_json_str(err, "title")) != NULL ||
	    (title = wa_json_str(err, "message")) != NULL)
		s->title = keep(b, title, 512, &s->title_len, &bad);
}

static void
change(struct wa_status_batch *b, struct json_object *ch, const char *where,
    unsigned long lineno)
{
	const char *field = wa_json_str(ch, "field");
	struct json_object *a, *e;
	char c[64], code[32];
	size_t i;

	if (field == NULL || strcmp(field, "messages") != 0) {
		odd(b, WA_ODD_FIELD, where, lineno, "field", field ? field :
		    "");
		return;
	}
	if ((a = array(ch, "value.statuses")) != NULL)
		for (i = 0; i < json_object_array_length(a); i++)
			status(b, json_object_array_get_idx(a, i), where,
			    lineno);
	if ((a = array(ch, "value.messages")) != NULL)
		for (i = 0; i < json_object_array_length(a); i++)
			odd(b, WA_ODD_MESSAGE, where, lineno,
			    "an inbound message", NULL);
	if ((a = array(ch, "value.errors")) != NULL)
		for (i = 0; i < json_object_array_length(a); i++) {
			e = json_object_array_get_idx(a, i);
			b->odd[WA_ODD_SYSTEM_ERROR]++;
			wa_warn("%s:%lu: system error %s: %s", where, lineno,
			    clean(json_object_get_string(wa_json_get(e,
			    "code")), code, sizeof code),
			    clean(wa_json_str(e, "title"), c, sizeof c));
		}
}

/* Adds the statuses of one webhook body; where:lineno for messages. */
void
wa_status_walk(struct wa_status_batch *b, struct json_object *body,
    const char *where, unsigned long lineno)
{
	const char *obj = wa_json_str(body, "object");
	struct json_object *entries, *changes;
	size_t i, j;

	entries = array(body, "entry");
	if (obj == NULL || strcmp(obj, "whatsapp_business_account") != 0 ||
	    entries == NULL) {
		odd(b, WA_ODD_OBJECT, where, lineno, "object", obj ? obj :
		    "");
		return;
	}
	for (i = 0; i < json_object_array_length(entries); i++) {
		changes = array(json_object_array_get_idx(entries, i),
		    "changes");
		for (j = 0; changes && j < json_object_array_length(changes);
		    j++)
			change(b, json_object_array_get_idx(changes, j), where,
			    lineno);
	}
}

static int
blank(const char *s, size_t n)
{
	while (n > 0 && strchr(" \t\r", s[n - 1]) != NULL)
		n--;
	return n == 0;
}

/*
 * Parses one line with tok and walks it; returns why it is not one JSON
 * object, or NULL (a blank line is nothing to take).
 */
const char *
wa_status_take(struct wa_status_batch *b, struct json_tokener *tok,
    const char *line, size_t len, const char *where, unsigned long lineno)
{
	static char why[128];
	struct json_object *o;
	enum json_tokener_error e;
	size_t end;

	if (blank(line, len))
		return NULL;
	json_tokener_reset(tok);
	o = json_tokener_parse_ex(tok, line, len);
	e = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	if (o == NULL || e != json_tokener_success)
		snprintf(why, sizeof why, "not valid JSON: %s",
		    e == json_tokener_continue ? "unexpected end of line" :
		    json_tokener_error_desc(e));
	else if (!json_object_is_type(o, json_type_object) ||
	    !blank(line + end, len - end))
		snprintf(why, sizeof why, "not one JSON object");
	else
		*why = '\0';
	if (*why == '\0')
		wa_status_walk(b, o, where, lineno);
	json_object_put(o);
	return *why ? why : NULL;
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

/* Keeps the highest-ranked (then earliest) status of each message. */
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
	b->n = n + 1;
}

void
wa_status_clear(struct wa_status_batch *b)
{
	b->n = 0;
	b->str.len = 0;
}

void
wa_status_free(struct wa_status_batch *b)
{
	int i;

	free(b->v);
	wa_buf_free(&b->str);
	for (i = 0; i < 6; i++)
		wa_buf_free(&b->arr[i]);
}
