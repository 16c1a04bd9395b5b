/*
 * import.c: the rows of a recipients file, CSV or NDJSON, told apart by
 * the first byte that is not blank ('{' means NDJSON).
 *
 * CSV: a header line naming the columns, one of them "phone"; the other
 * columns, in order, are the template's parameters. Fields are separated
 * by commas; a field in double quotes may hold commas, and "" stands for
 * one quote. A row is one line: a quoted field cannot span lines (the
 * API refuses parameters with newlines anyway). NDJSON: one object per
 * line with "phone" and an optional "params" array (strings or numbers)
 * and an optional "components" array, kept as {"components": [...]}
 * for wa-claim to merge into the template.
 *
 * A bad row is reported with its line number and written to the reject
 * file (after the CSV header, so the file can be fixed and imported
 * again), and counted; it never stops the rest. Blank lines, a UTF-8
 * byte order mark and '\r' before '\n' are passed over.
 */
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
#include "records/phone.h"

static char why[320];	/* a reason that names the bad value */

void
wa_rows_init(struct wa_rows *r, int fd, const char *name, const char *cc)
{
	memset(r, 0, sizeof *r);
	wa_input_init(&r->in, fd, name, 0);
	r->cc = cc;
}

void
wa_rows_free(struct wa_rows *r)
{
	wa_input_free(&r->in);
	wa_buf_free(&r->params);
	wa_buf_free(&r->field);
	free(r->header);
}

static void
reject(struct wa_rows *r, char *line, size_t len, const char *msg)
{
	struct wa_record rec = { NULL, line, len, r->in.lines.lineno };

	if (r->format == WA_CSV && r->in.reject != NULL && !r->header_out) {
		fprintf(r->in.reject, "%s\n", r->header);
		r->header_out = 1;
	}
	wa_input_reject(&r->in, &rec, "%s", msg);
}

static int
blank(const char *s, size_t n)
{
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	return n == 0;
}

/* Whether s is UTF-8 that Postgres takes: no NUL, no surrogates. */
static int
utf8(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i, k;

	for (i = 0; i < n; i += k)
		if (s[i] == '\0' || (k = wa_utf8_len(s + i, n - i)) == 0)
			return 0;
	return 1;
}

/* Normalises a phone number into r->phone; NULL, or why it is bad. */
static const char *
phone(struct wa_rows *r, const char *s, size_t n)
{
	const char *bad = wa_phone_e164(s, n, r->cc, r->phone);

	if (bad == NULL)
		return NULL;
	snprintf(why, sizeof why, "phone '%.*s': %s", n > 40 ? 40 : (int)n,
	    s, bad);
	return why;
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

/* Reads the header; a file without a good one cannot be imported. */
static void
header(struct wa_rows *r, const char *s, size_t n)
{
	const char *e = s + n, *bad;
	int more = 1;

	r->phonecol = -1;
	r->header = wa_alloc(n + 1);
	memcpy(r->header, s, n);
	while (more) {
		if ((bad = field(&s, e, &r->field, &more)) != NULL)
			wa_die(EX_DATAERR, "%s:%lu: header: %s",
			    r->in.lines.name, r->in.lines.lineno, bad);
		if (strcasecmp(trim(r->field.s), "phone") == 0) {
			if (r->phonecol >= 0)
				wa_die(EX_DATAERR, "%s:%lu: header: two phone "
				    "columns", r->in.lines.name,
				    r->in.lines.lineno);
			r->phonecol = r->ncols;
		}
		r->ncols++;
	}
	if (r->phonecol < 0)
		wa_die(EX_DATAERR, "%s:%lu: the CSV header (the first line) "
		    "has no 'phone' column", r->in.lines.name,
		    r->in.lines.lineno);
}

static const char *
csv(struct wa_rows *r, const char *s, size_t n)
{
	const char *e = s + n, *bad, *badphone = NULL;
	int col = 0, more = 1;

	if (!utf8(s, n))
		return "not valid UTF-8";
	r->params.len = 0;
	wa_buf_add(&r->params, "[", 1);
	while (more) {
		if ((bad = field(&s, e, &r->field, &more)) != NULL)
			return bad;
		if (col == r->phonecol)
			badphone = phone(r, r->field.s, r->field.len);
		else if (col < r->ncols) {
			if (r->params.len > 1)
				wa_buf_add(&r->params, ",", 1);
			wa_buf_json_string(&r->params, r->field.s,
			    r->field.len);
		}
		col++;
	}
	if (col != r->ncols) {
		snprintf(why, sizeof why, "%d field%s, the header has %d",
		    col, col == 1 ? "" : "s", r->ncols);
		return why;
	}
	wa_buf_add(&r->params, "]", 1);
	return badphone;
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

/* Whether JSON text holds a \u0000, which Postgres refuses. */
static int
has_nul(const char *s, size_t n)
{
	const char *p, *e = s + n;
	size_t k;

	for (p = s; (p = memmem(p, e - p, "u0000", 5)) != NULL; p += 5) {
		for (k = 0; p - k > s && p[-1 - (long)k] == '\\'; k++)
			;
		if (k % 2 == 1)
			return 1;
	}
	return 0;
}

static const char *
fields(struct wa_rows *r, struct json_object *o)
{
	struct json_object *v, *p = NULL, *c = NULL;
	const char *bad;

	if (!json_object_object_get_ex(o, "phone", &v))
		return "no \"phone\"";
	if (!json_object_is_type(v, json_type_string))
		return "\"phone\" is not a string";
	if ((bad = phone(r, json_object_get_string(v),
	    json_object_get_string_len(v))) != NULL)
		return bad;
	json_object_object_get_ex(o, "params", &p);
	json_object_object_get_ex(o, "components", &c);
	r->params.len = 0;
	if (c != NULL) {
		if (!json_object_is_type(c, json_type_array))
			return "\"components\" is not an array";
		wa_buf_puts(&r->params, "{\"components\":");
		wa_buf_puts(&r->params, wa_json_text(c));
		if (p != NULL) {
			wa_buf_puts(&r->params, ",\"params\":");
			if ((bad = params(&r->params, p)) != NULL)
				return bad;
		}
		wa_buf_add(&r->params, "}", 1);
	} else if (p != NULL) {
		if ((bad = params(&r->params, p)) != NULL)
			return bad;
	} else
		wa_buf_puts(&r->params, "[]");
	if (has_nul(r->params.s, r->params.len) ||
	    !utf8(r->params.s, r->params.len))
		return "a string holds \\u0000 or a lone surrogate";
	return NULL;
}

static const char *
ndjson(struct wa_rows *r, const char *s, size_t n)
{
	struct json_tokener *tok = r->in.tok;
	struct json_object *o;
	enum json_tokener_error e;
	const char *bad;
	size_t end;

	if (!utf8(s, n))
		return "not valid UTF-8";
	json_tokener_reset(tok);
	o = json_tokener_parse_ex(tok, s, n);
	e = json_tokener_get_error(tok);
	if (o == NULL || e != json_tokener_success) {
		json_object_put(o);
		if (e == json_tokener_continue || e == json_tokener_success)
			return "not valid JSON: unexpected end of line";
		snprintf(why, sizeof why, "not valid JSON: %s",
		    json_tokener_error_desc(e));
		return why;
	}
	end = json_tokener_get_parse_end(tok);
	if (!blank(s + end, n - end))
		bad = "not valid JSON: text after the object";
	else if (!json_object_is_type(o, json_type_object))
		bad = "not a JSON object";
	else
		bad = fields(r, o);
	json_object_put(o);
	return bad;
}

/*
 * Reads the next good row into r->phone and r->params (r->lineno is its
 * line) and returns WA_LINE; rejects bad rows on the way. Returns WA_EOF
 * at the end, WA_ERROR after a read error (errno set), WA_AGAIN when a
 * signal came.
 */
int
wa_rows_next(struct wa_rows *r)
{
	const char *bad;
	char *line, *s;
	size_t len, n;
	int ret;

	for (;;) {
		ret = wa_lines_next(&r->in.lines, &line, &len, -1);
		if (ret == WA_TOOLONG) {
			snprintf(why, sizeof why, "line longer than %d bytes",
			    WA_LINE_MAX);
			reject(r, NULL, 0, why);
			continue;
		}
		if (ret != WA_LINE)
			return ret;
		s = line;
		n = len;
		if (n > 0 && s[n - 1] == '\r')
			n--;
		if (r->in.lines.lineno == 1 && n >= 3 &&
		    memcmp(s, "\xef\xbb\xbf", 3) == 0) {
			s += 3;
			n -= 3;
		}
		if (blank(s, n))
			continue;
		if (r->format == 0) {
			r->format = s[strspn(s, " \t")] == '{' ? WA_NDJSON :
			    WA_CSV;
			if (r->format == WA_CSV) {
				header(r, s, n);
				continue;
			}
		}
		bad = r->format == WA_CSV ? csv(r, s, n) : ndjson(r, s, n);
		if (bad == NULL) {
			r->lineno = r->in.lines.lineno;
			return WA_LINE;
		}
		reject(r, s, n, bad);
	}
}
