/*
 * import.c: the rows of a recipients file, CSV or NDJSON, told apart by
 * the first byte that is not blank ('{' means NDJSON).
 *
 * CSV: a header line naming the columns, one of them "phone" and maybe
 * one "expires_at"; the other columns, in order, are the template's
 * parameters. Fields are separated
 * by commas; a field in double quotes may hold commas, and "" stands for
 * one quote. A row is one line: a quoted field cannot span lines (the
 * API refuses parameters with newlines anyway). NDJSON: one object per
 * line with "phone" and an optional "params" array (strings or numbers)
 * and an optional "components" array, kept as {"components": [...]}
 * for wa-claim to merge into the template, and an optional "expires_at";
 * "params" may also be such an object, as wa-campaign export --format
 * ndjson writes it, so an export imports as the same recipients and
 * parameters. Export's CSV (wamid and params columns: its params are
 * JSON, not parameters) is refused by an import, saying so; a list of
 * numbers (requeue --phones) takes its phone column.
 * An expiry is an RFC 3339 timestamp (records/stamp.c); empty or null,
 * none.
 *
 * For an import (r->plan), a number must also be one that a country
 * gives out (records/numplan.cc: libphonenumber's plans, not only 7 to
 * 15 digits), and gets the zone of its country when that has one.
 *
 * Every line is checked as records/input.c checks lines (UTF-8, no NUL;
 * NDJSON: RFC 8259, finite numbers, integers in 64 bits, no \u0000 or
 * lone surrogate, and at most WA_IMPORT_DEPTH levels, so that the send
 * request made of a row is one every stage takes). The components go
 * through Postgres's jsonb, which writes a number without its exponent
 * (1e19 as 10000000000000000000): one that would come out as an integer
 * beyond 64 bits, which the send stages refuse, is refused here, where
 * the row can still be fixed. A bad row is reported
 * with its line number and written to the reject file (after the CSV
 * header, so the file can be fixed and imported again), whole however
 * long, and counted; it never stops the rest. Blank lines, a UTF-8 byte
 * order mark and '\r' before '\n' are passed over.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/lines.h"
#include "records/import.h"
#include "records/input.h"
#include "records/json.h"
#include "records/numplan.h"
#include "records/phone.h"
#include "records/stamp.h"

void
wa_rows_init(struct wa_rows *r, int fd, const char *name, const char *cc)
{
	memset(r, 0, sizeof *r);
	wa_input_init(&r->in, fd, name, 0);
	r->in.raw = 1;		/* the lines' bytes: rows are parsed here */
	r->cc = cc;
}

void
wa_rows_free(struct wa_rows *r)
{
	wa_input_free(&r->in);
	wa_buf_free(&r->params);
	wa_buf_free(&r->field);
}

static int
blank(const char *s, size_t n)
{
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	return n == 0;
}

static int
say(char *why, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
say(char *why, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
	return -1;
}

/*
 * Normalises a phone number into r->phone, checks it against the plans
 * and finds its country and zone (r->plan): 0, or -1 with why.
 */
static int
phone(struct wa_rows *r, const char *s, size_t n, char *why, size_t size)
{
	const char *bad = wa_phone_e164(s, n, r->cc, r->phone);
	struct wa_numplan np;
	char w[160];

	r->tz = NULL;
	r->country[0] = '\0';
	if (bad != NULL)
		return say(why, size, "phone '%.*s': %s%s", n > 40 ? 40 :
		    (int)n, s, bad, bad == wa_phone_no_cc ?
		    ", or use --country-code" : "");
	if (!r->plan)
		return 0;
	if (wa_numplan_check(r->phone, &np, 0, w, sizeof w) < 0)
		return say(why, size, "phone '%s': %s", r->phone, w);
	r->tz = wa_zone_of(np.region);
	snprintf(r->country, sizeof r->country, "%s", np.region);
	return 0;
}

/* Reads an expiry into r->expires ("" for none): 0, or -1 with why. */
static int
expiry(struct wa_rows *r, const char *s, size_t n, char *why, size_t size)
{
	const char *bad;

	while (n > 0 && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	r->expires[0] = '\0';
	if (n == 0 || (bad = wa_stamp(s, n, r->expires)) == NULL)
		return 0;
	return say(why, size, "expires_at '%.*s': %s", n > 40 ? 40 : (int)n,
	    s, bad);
}

/*
 * Reads the CSV field at *p (the line ends at e) into f, unquoted, and
 * moves *p past it and its comma; *more says whether a field follows.
 * Returns NULL, or why the field is bad.
 */
static const char *
field(const char **p, const char *e, struct wa_buf *f, int *more)
{
	const char *s = *p, *q;

	f->len = 0;
	wa_buf_add(f, "", 0);
	for (q = s; q < e && (*q == ' ' || *q == '\t'); q++)
		;
	if (q < e && *q == '"') {
		for (s = q + 1;; s = q + 2) {
			if ((q = memchr(s, '"', e - s)) == NULL)
				return "a quoted field has no closing quote";
			wa_buf_add(f, s, q - s + (q + 1 < e && q[1] == '"'));
			if (q + 1 >= e || q[1] != '"')
				break;
		}
		for (s = q + 1; s < e && (*s == ' ' || *s == '\t'); s++)
			;
		if (s < e && *s != ',')
			return "text after a closing quote";
	} else {
		if ((q = memchr(s, ',', e - s)) == NULL)
			q = e;
		if (memchr(s, '"', q - s) != NULL)
			return "a quote inside a field that does not start "
			    "with one";
		wa_buf_add(f, s, q - s);
		s = q;
	}
	*more = s < e;
	*p = s + (s < e);
	return NULL;
}

/* s without the spaces around it. */
static char *
trim(char *s)
{
	size_t n;

	s += strspn(s, " \t");
	for (n = strlen(s); n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'); n--)
		s[n - 1] = '\0';
	return s;
}

/* Reads the header: 0, or -2 with why the file cannot be imported. */
static int
header(struct wa_rows *r, const char *s, size_t n, char *why, size_t size)
{
	const char *e = s + n, *bad;
	int more = 1, export = 0;

	r->phonecol = r->expcol = -1;
	r->ncols = 0;
	while (more) {
		if ((bad = field(&s, e, &r->field, &more)) != NULL)
			return say(why, size, "header: %s", bad) - 1;
		if (strcasecmp(trim(r->field.s), "phone") == 0) {
			if (r->phonecol >= 0)
				return say(why, size, "header: two phone "
				    "columns") - 1;
			r->phonecol = r->ncols;
		} else if (strcasecmp(trim(r->field.s), "expires_at") == 0) {
			if (r->expcol >= 0)
				return say(why, size, "header: two "
				    "expires_at columns") - 1;
			r->expcol = r->ncols;
		} else if (strcasecmp(trim(r->field.s), "wamid") == 0)
			export |= 1;
		else if (strcasecmp(trim(r->field.s), "params") == 0)
			export |= 2;
		r->ncols++;
	}
	if (r->phonecol < 0)
		return say(why, size, "the CSV header (the first line) has no "
		    "'phone' column") - 1;
	if (export == 3 && r->plan)
		return say(why, size, "header: this is wa-campaign export's "
		    "CSV, whose params column holds JSON, not a parameter: "
		    "export --format ndjson and import that") - 1;
	return 0;
}

static int
csv(struct wa_rows *r, const char *s, size_t n, char *why, size_t size)
{
	const char *e = s + n, *bad;
	int col = 0, more = 1, badphone = 0, badexp = 0;
	char pwhy[240], ewhy[160];

	r->params.len = 0;
	r->expires[0] = '\0';
	wa_buf_add(&r->params, "[", 1);
	while (more) {
		if ((bad = field(&s, e, &r->field, &more)) != NULL)
			return say(why, size, "%s", bad);
		if (col == r->phonecol)
			badphone = phone(r, r->field.s, r->field.len, pwhy,
			    sizeof pwhy);
		else if (col == r->expcol)
			badexp = expiry(r, r->field.s, r->field.len, ewhy,
			    sizeof ewhy);
		else if (col < r->ncols) {
			if (r->params.len > 1)
				wa_buf_add(&r->params, ",", 1);
			wa_buf_json_string(&r->params, r->field.s,
			    r->field.len);
		}
		col++;
	}
	if (col != r->ncols)
		return say(why, size, "%d field%s, the header has %d", col,
		    col == 1 ? "" : "s", r->ncols);
	wa_buf_add(&r->params, "]", 1);
	if (badphone)
		return say(why, size, "%s", pwhy);
	if (badexp)
		return say(why, size, "%s", ewhy);
	return 1;
}

/* Adds a "params" array: strings, or numbers taken as their text. */
static const char *
params(struct wa_buf *b, struct json_object *a)
{
	struct json_object *v;
	const char *s;
	size_t i, n;

	if (!json_object_is_type(a, json_type_array))
		return "\"params\" is not an array";
	wa_buf_add(b, "[", 1);
	for (i = 0, n = json_object_array_length(a); i < n; i++) {
		v = json_object_array_get_idx(a, i);
		if (!json_object_is_type(v, json_type_string) &&
		    !json_object_is_type(v, json_type_int) &&
		    !json_object_is_type(v, json_type_double))
			return "\"params\" holds something other than "
			    "strings and numbers";
		s = json_object_get_string(v);
		if (i > 0)
			wa_buf_add(b, ",", 1);
		wa_buf_json_string(b, s, json_object_is_type(v,
		    json_type_string) ? (size_t)json_object_get_string_len(v) :
		    strlen(s));
	}
	wa_buf_add(b, "]", 1);
	return NULL;
}

/*
 * Whether Postgres's numeric, and so jsonb, refuses the number written t
 * ("value overflows numeric format"): it keeps at most 16383 digits
 * after the point, and 0.5e-16383 needs 16384. A double cannot tell:
 * such numbers are 0 to it.
 */
static int
too_fine(const char *t)
{
	const char *dot = strchr(t, '.'), *x = strpbrk(t, "eE");
	long frac = 0, e = 0;

	if (dot != NULL)
		frac = (x != NULL ? x : t + strlen(t)) - dot - 1;
	if (x != NULL) {
		e = strtol(x + 1, NULL, 10);
		e = e < -1000000 ? -1000000 : e > 1000000 ? 1000000 : e;
	}
	return frac - e > 16383;
}

/*
 * A number in o that jsonb would write as an integer beyond 64 bits (any
 * of 2^63 or more, however written; -2^63 with an exponent too), or that
 * it would refuse (too_fine): its text, or NULL.
 */
static const char *
too_big(struct json_object *o)
{
	const double big = 9223372036854775808.0;
	const char *t;
	size_t i, n;
	double d;

	switch (json_object_get_type(o)) {
	case json_type_double:
		d = json_object_get_double(o);
		t = json_object_get_string(o);
		return d >= big || d <= -big || too_fine(t) ? t : NULL;
	case json_type_array:
		n = json_object_array_length(o);
		for (i = 0; i < n; i++)
			if ((t = too_big(json_object_array_get_idx(o, i))))
				return t;
		return NULL;
	case json_type_object: {
		json_object_object_foreach(o, k, v) {
			(void)k;
			if ((t = too_big(v)) != NULL)
				return t;
		}
		return NULL;
	}
	default:
		return NULL;
	}
}

/* The fields of a parsed NDJSON row: 1, or -1 with why. */
static int
fields(struct wa_rows *r, struct json_object *o, char *why, size_t size)
{
	struct json_object *v, *p = NULL, *c = NULL;
	const char *bad;

	if (!json_object_object_get_ex(o, "phone", &v))
		return say(why, size, "no \"phone\"");
	if (!json_object_is_type(v, json_type_string))
		return say(why, size, "\"phone\" is not a string");
	if (phone(r, json_object_get_string(v), json_object_get_string_len(v),
	    why, size) < 0)
		return -1;
	r->expires[0] = '\0';
	if (json_object_object_get_ex(o, "expires_at", &v) && v != NULL) {
		if (!json_object_is_type(v, json_type_string))
			return say(why, size, "\"expires_at\" is not a string");
		if (expiry(r, json_object_get_string(v),
		    json_object_get_string_len(v), why, size) < 0)
			return -1;
	}
	json_object_object_get_ex(o, "params", &p);
	json_object_object_get_ex(o, "components", &c);
	/* An export's params may be the object a row keeps: its parts. */
	if (c == NULL && p != NULL && json_object_is_type(p,
	    json_type_object)) {
		v = p;
		p = NULL;
		json_object_object_get_ex(v, "components", &c);
		json_object_object_get_ex(v, "params", &p);
		if (c == NULL)
			return say(why, size, "\"params\" is an object "
			    "without \"components\"");
	}
	r->params.len = 0;
	bad = NULL;
	if (c != NULL) {
		if (!json_object_is_type(c, json_type_array))
			return say(why, size, "\"components\" is not an "
			    "array");
		if ((bad = too_big(c)) != NULL)
			return say(why, size, "\"components\" holds %.40s: "
			    "Postgres would %s; write it as a string", bad,
			    too_fine(bad) ? "refuse it (more than 16383 "
			    "digits after the point)" : "write it as an "
			    "integer beyond 64 bits, which no send takes");
		wa_buf_puts(&r->params, "{\"components\":");
		wa_buf_puts(&r->params, wa_json_text(c));
		if (p != NULL) {
			wa_buf_puts(&r->params, ",\"params\":");
			bad = params(&r->params, p);
		}
		wa_buf_add(&r->params, "}", 1);
	} else if (p != NULL)
		bad = params(&r->params, p);
	else
		wa_buf_puts(&r->params, "[]");
	if (bad != NULL)
		return say(why, size, "%s", bad);
	return 1;
}

int
wa_rows_take(struct wa_rows *r, const char *s, size_t n, char *why,
    size_t size)
{
	struct json_object *o;
	size_t k;
	int ret;

	if (wa_json_bytes(s, n, why, size) < 0)
		return -1;
	if (n > 0 && s[n - 1] == '\r')
		n--;
	if (r->format == 0) {
		k = wa_utf8_bom(s, n);
		s += k;
		n -= k;
	}
	if (blank(s, n))
		return 0;
	if (r->format == 0) {
		r->format = s[strspn(s, " \t")] == '{' ? WA_NDJSON : WA_CSV;
		if (r->format == WA_CSV)
			return header(r, s, n, why, size);
	}
	if (r->format == WA_CSV)
		return csv(r, s, n, why, size);
	o = wa_json_parse(r->in.tok, s, n, WA_JSON_RECORD, WA_IMPORT_DEPTH,
	    why, size);
	if (o == NULL)
		return -1;
	ret = fields(r, o, why, size);
	json_object_put(o);
	return ret;
}

/*
 * Reads the next good row into r->phone and r->params (r->lineno is its
 * line) and returns WA_LINE; rejects bad rows on the way, and those whose
 * number r->suppressed names (with its reason). Returns WA_EOF
 * at the end, WA_ERROR after a read error or a reject file that failed
 * (said on stderr), WA_AGAIN when a signal came. A CSV header that is
 * not one ends the program (65).
 */
int
wa_rows_next(struct wa_rows *r)
{
	struct wa_record rec = { 0 };
	const char *reason;
	char why[320];
	int ret, csvhead;

	for (;;) {
		if ((ret = wa_input_next(&r->in, &rec, -1)) != WA_LINE)
			return ret;
		csvhead = r->format == 0;
		ret = wa_rows_take(r, rec.line, rec.len, why, sizeof why);
		if (ret == -2)
			wa_die(EX_DATAERR, "%s:%lu: %s", r->in.lines.name,
			    rec.lineno, why);
		if (csvhead && r->format == WA_CSV)
			wa_input_reject_header(&r->in, rec.line, rec.len);
		if (ret == 1 && r->suppressed != NULL && (reason =
		    r->suppressed(r->phone, r->suppressed_arg)) != NULL) {
			wa_input_reject(&r->in, &rec, "suppressed: %.200s",
			    reason);
			r->nsuppressed++;
		} else if (ret == 1) {
			r->lineno = rec.lineno;
			return WA_LINE;
		}
		if (ret < 0)
			wa_input_reject(&r->in, &rec, "%s", why);
	}
}
