/*
 * json.c: JSON as it enters, checked byte by byte before json-c builds
 * it; fields of a parsed record by dotted path, and the words of an
 * error object of Meta's; a record written as one output line.
 *
 * json-c takes more than JSON (trailing commas, NaN, single quotes,
 * comments), turns a lone surrogate into U+FFFD and clamps integers
 * beyond 64 bits, all in silence; and its messages ("null expected") say
 * little to a user. So every line is first checked here, in one pass
 * without allocating: UTF-8 without NUL, RFC 8259's syntax, the nesting
 * every stage takes, and, for our own records, the values Postgres and
 * the next stage take. A fault is told in words, with its byte.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/out.h"
#include "records/json.h"

struct scan {
	const char	*s;
	size_t		 n;
	size_t		 i;		/* the byte being looked at */
	int		 flags;
	char		*why;
	size_t		 size;
};

/*
 * Says what is at byte at, and then hint (or NULL): syntax faults as
 * "not valid JSON (what at byte N: hint)", others as "what at byte N:
 * hint".
 */
static int
fault(struct scan *c, int syntax, size_t at, const char *hint,
    const char *fmt, ...)
{
	char msg[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	snprintf(c->why, c->size, "%s%s at byte %zu%s%s%s",
	    syntax ? "not valid JSON (" : "", msg, at + 1, hint ? ": " : "",
	    hint ? hint : "", syntax ? ")" : "");
	return -1;
}

static int
ends(struct scan *c, const char *inside)
{
	snprintf(c->why, c->size, "not valid JSON (it ends inside %s)",
	    inside);
	return -1;
}

static int
word(int ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	    (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '+' ||
	    ch == '-';
}

/* The text at i for a message: a word, or one character, quoted. */
static const char *
token(const struct scan *c, size_t i, char *buf, size_t size)
{
	const unsigned char *p = (const unsigned char *)c->s + i;
	size_t n = 1, max = c->n - i;

	if (word(*p))
		while (n < max && word(p[n]))
			n++;
	else if (*p >= 0x80)
		n = wa_utf8_len(p, max);
	else if (*p < 0x20 || *p == 0x7f) {
		snprintf(buf, size, "byte 0x%02x", *p);
		return buf;
	}
	if (n > 24)
		snprintf(buf, size, "'%.24s...'", (const char *)p);
	else
		snprintf(buf, size, "'%.*s'", (int)n, (const char *)p);
	return buf;
}

/* The number from c->i to end, for a message. */
static const char *
number_text(const struct scan *c, size_t end, char *buf, size_t size)
{
	size_t n = end - c->i;

	snprintf(buf, size, "%.*s%s", n > 24 ? 24 : (int)n, c->s + c->i,
	    n > 24 ? "..." : "");
	return buf;
}

static int
hex4(const struct scan *c, size_t i, unsigned *v)
{
	size_t k;
	int ch;

	*v = 0;
	if (i > c->n || c->n - i < 4)
		return -1;
	for (k = 0; k < 4; k++) {
		ch = c->s[i + k];
		*v <<= 4;
		if (ch >= '0' && ch <= '9')
			*v |= ch - '0';
		else if (ch >= 'a' && ch <= 'f')
			*v |= ch - 'a' + 10;
		else if (ch >= 'A' && ch <= 'F')
			*v |= ch - 'A' + 10;
		else
			return -1;
	}
	return 0;
}

/* A string at c->i (its opening quote); moves past its closing one. */
static int
string(struct scan *c)
{
	unsigned cp, lo;
	size_t i = c->i + 1;
	int ch;

	for (;;) {
		if (i >= c->n)
			return ends(c, "a string");
		ch = (unsigned char)c->s[i];
		if (ch == '"')
			break;
		if (ch < 0x20)
			return fault(c, 1, i, "write it as an escape such as "
			    "\\n", "control character 0x%02x in a string",
			    ch);
		if (ch != '\\') {
			i++;
			continue;
		}
		if (i + 1 >= c->n)
			return ends(c, "a string");
		ch = c->s[i + 1];
		if (ch != 'u') {
			if (ch == '\0' || strchr("\"\\/bfnrt", ch) == NULL)
				return fault(c, 1, i, NULL, "unknown escape "
				    "\\%c", ch >= 0x20 && ch < 0x7f ? ch : '?');
			i += 2;
			continue;
		}
		if (hex4(c, i + 2, &cp) < 0)
			return fault(c, 1, i, NULL, "\\u without four hex "
			    "digits");
		if (cp >= 0xd800 && cp < 0xdc00 && c->n - i >= 12 &&
		    c->s[i + 6] == '\\' && c->s[i + 7] == 'u' &&
		    hex4(c, i + 8, &lo) == 0 && lo >= 0xdc00 && lo < 0xe000) {
			i += 12;
			continue;
		}
		if ((c->flags & WA_JSON_TEXT) && cp >= 0xd800 && cp < 0xe000)
			return fault(c, 0, i, "half a character, not text",
			    "lone surrogate \\u%04x", cp);
		if ((c->flags & WA_JSON_TEXT) && cp == 0)
			return fault(c, 0, i, "Postgres keeps no NUL in text",
			    "\\u0000");
		i += 6;
	}
	c->i = i + 1;
	return 0;
}

/*
 * Whether the number of n bytes at s (JSON syntax) is beyond a double's
 * range. Its decimal exponent settles all but the numbers near 1e308,
 * which strtod settles.
 */
static int
too_big(const char *s, size_t n)
{
	long long e10 = -1, exp = 0;
	size_t i = 0;
	int seen = 0, sign = 1;
	char *copy;
	double v;

	if (s[i] == '-')
		i++;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
		seen |= s[i] != '0';
		e10 += seen;
	}
	if (i < n && s[i] == '.')
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
			if (seen)
				continue;
			if (s[i] != '0')
				seen = 1;
			else
				e10--;
		}
	if (!seen)
		return 0;		/* zero */
	if (i < n) {
		i++;			/* 'e' or 'E' */
		if (s[i] == '-' || s[i] == '+')
			sign = s[i++] == '-' ? -1 : 1;
		for (; i < n; i++)
			if (exp < 1000000000)
				exp = exp * 10 + (s[i] - '0');
	}
	e10 += sign * exp;
	if (e10 != 308)
		return e10 > 308;
	copy = wa_alloc(n + 1);
	memcpy(copy, s, n);
	copy[n] = '\0';
	v = strtod(copy, NULL);
	free(copy);
	return !isfinite(v);
}

/* Whether the d digits of an integer are beyond int64_t. */
static int
beyond64(const char *digits, size_t d, int negative)
{
	/* 19 digits compare as text with 2^63 - 1, or 2^63 below zero. */
	return d > 19 || (d == 19 && memcmp(digits, negative ?
	    "9223372036854775808" : "9223372036854775807", 19) > 0);
}

/* A number at c->i; moves past it. */
static int
number(struct scan *c)
{
	const char *s = c->s, *digits;
	size_t i = c->i, d, n = c->n;
	int integer = 1;
	char t[40];

	if (s[i] == '-')
		i++;
	digits = s + i;
	if (i < n && s[i] == '0')
		i++;
	else if (i < n && s[i] >= '1' && s[i] <= '9')
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
	else
		goto bad;
	d = s + i - digits;
	if (i < n && s[i] == '.') {
		integer = 0;
		if (++i >= n || s[i] < '0' || s[i] > '9')
			goto bad;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		integer = 0;
		if (++i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i >= n || s[i] < '0' || s[i] > '9')
			goto bad;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	if (i < n && word((unsigned char)s[i]))
		goto bad;
	if ((c->flags & WA_JSON_NUMBERS) && integer && beyond64(digits, d,
	    s[c->i] == '-'))
		return fault(c, 0, c->i, "beyond 64 bits", "integer %s",
		    number_text(c, i, t, sizeof t));
	if ((c->flags & WA_JSON_NUMBERS) && !integer &&
	    too_big(s + c->i, i - c->i))
		return fault(c, 0, c->i, "beyond a double's range",
		    "number %s", number_text(c, i, t, sizeof t));
	c->i = i;
	return 0;
bad:
	token(c, c->i, t, sizeof t);
	if (strcmp(t, "'-Infinity'") == 0)
		return fault(c, 1, c->i, "JSON has no NaN or Infinity", "%s",
		    t);
	return fault(c, 1, c->i, NULL, "malformed number %s", t);
}

/* A value that is not an object or array, at c->i; moves past it. */
static int
scalar(struct scan *c)
{
	static const char *const lit[] = { "true", "false", "null" };
	const char *p = c->s + c->i;
	size_t k, len, left = c->n - c->i;
	char t[40];

	switch (*p) {
	case '"':
		return string(c);
	case '\'':
		return fault(c, 1, c->i, "JSON takes double quotes",
		    "a string in single quotes");
	case ',':
	case ']':
	case '}':
	case ':':
		return fault(c, 1, c->i, NULL, "a value missing before '%c'",
		    *p);
	}
	if (*p == '-' || (*p >= '0' && *p <= '9'))
		return number(c);
	for (k = 0; k < 3; k++) {
		len = strlen(lit[k]);
		if (left >= len && memcmp(p, lit[k], len) == 0 &&
		    (left == len || !word((unsigned char)p[len]))) {
			c->i += len;
			return 0;
		}
	}
	token(c, c->i, t, sizeof t);
	if (strcmp(t, "'NaN'") == 0 || strcmp(t, "'Infinity'") == 0)
		return fault(c, 1, c->i, "JSON has no NaN or Infinity", "%s",
		    t);
	return fault(c, 1, c->i, NULL, "unexpected %s", t);
}

static void
space(struct scan *c)
{
	while (c->i < c->n && (c->s[c->i] == ' ' || c->s[c->i] == '\t' ||
	    c->s[c->i] == '\n' || c->s[c->i] == '\r'))
		c->i++;
}

int
wa_json_bytes(const char *s, size_t n, char *why, size_t size)
{
	size_t at = wa_text_bad(s, n);

	if (at == n)
		return 0;
	snprintf(why, size, "%s (byte %zu)", s[at] == '\0' ? "a NUL byte" :
	    "not valid UTF-8", at + 1);
	return -1;
}

int
wa_json_check(const char *s, size_t n, int flags, int depth, char *why,
    size_t size)
{
	enum { VALUE, FIRST_VALUE, KEY, FIRST_KEY, COLON, AFTER } st;
	struct scan c = { s, n, 0, flags, why, size };
	char open[WA_JSON_DEPTH], t[40];
	int top = 0;

	if (depth < 1 || depth > WA_JSON_DEPTH)
		depth = WA_JSON_DEPTH;
	if (wa_json_bytes(s, n, why, size) < 0)
		return -1;
	space(&c);
	if (c.i == n) {
		snprintf(why, size, "not valid JSON (no value)");
		return -1;
	}
	if (s[c.i] != '{') {
		if (strchr("[\"-0123456789", s[c.i]) != NULL ||
		    scalar(&c) == 0) {
			snprintf(why, size, "not a JSON object");
			return -1;
		}
		return -1;
	}
	for (st = VALUE;; ) {
		space(&c);
		if (c.i == n) {
			if (top == 0 && st == AFTER)
				return 0;
			return ends(&c, top == 0 ? "nothing" : st == VALUE &&
			    open[top - 1] == '{' ? "an object, before a value" :
			    open[top - 1] == '{' ? "an object" : "an array");
		}
		switch (st) {
		case VALUE:
		case FIRST_VALUE:
			if (s[c.i] == '{' || s[c.i] == '[') {
				if (top == depth)
					return fault(&c, 0, c.i, NULL, "nested "
					    "deeper than %d levels", depth);
				open[top++] = s[c.i++];
				st = open[top - 1] == '{' ? FIRST_KEY :
				    FIRST_VALUE;
				continue;
			}
			if (s[c.i] == ']' && st == FIRST_VALUE) {
				top--;
				c.i++;
				st = AFTER;
				continue;
			}
			if (s[c.i] == ']' && open[top - 1] == '[')
				return fault(&c, 1, c.i, NULL, "a comma before "
				    "']'");
			if (scalar(&c) < 0)
				return -1;
			st = AFTER;
			continue;
		case KEY:
		case FIRST_KEY:
			if (s[c.i] == '"') {
				if (string(&c) < 0)
					return -1;
				st = COLON;
				continue;
			}
			if (s[c.i] == '}' && st == FIRST_KEY) {
				top--;
				c.i++;
				st = AFTER;
				continue;
			}
			if (s[c.i] == '}')
				return fault(&c, 1, c.i, NULL, "a comma before "
				    "'}'");
			if (s[c.i] == '\'')
				return fault(&c, 1, c.i, "JSON takes double "
				    "quotes", "a key in single quotes");
			return fault(&c, 1, c.i, NULL, "%s where a key in "
			    "double quotes belongs", token(&c, c.i, t,
			    sizeof t));
		case COLON:
			if (s[c.i] != ':')
				return fault(&c, 1, c.i, NULL, "%s where ':' "
				    "belongs after a key", token(&c, c.i, t,
				    sizeof t));
			c.i++;
			st = VALUE;
			continue;
		case AFTER:
			if (top == 0)
				return fault(&c, 1, c.i, NULL, "text after the "
				    "object");
			if (s[c.i] == ',') {
				c.i++;
				st = open[top - 1] == '{' ? KEY : VALUE;
				continue;
			}
			if (s[c.i] == (open[top - 1] == '{' ? '}' : ']')) {
				top--;
				c.i++;
				continue;
			}
			return fault(&c, 1, c.i, NULL, "%s where ',' or '%c' "
			    "belongs", token(&c, c.i, t, sizeof t),
			    open[top - 1] == '{' ? '}' : ']');
		}
	}
}

struct json_tokener *
wa_json_tokener(void)
{
	/* json-c counts a scalar in the deepest container as a level. */
	struct json_tokener *tok = json_tokener_new_ex(WA_JSON_DEPTH + 1);

	if (tok == NULL)
		wa_die(EX_OSERR, "out of memory");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	return tok;
}

struct json_object *
wa_json_parse(struct json_tokener *tok, const char *s, size_t n, int flags,
    int depth, char *why, size_t size)
{
	struct json_object *o;
	enum json_tokener_error e;

	if (wa_json_check(s, n, flags, depth, why, size) < 0)
		return NULL;
	json_tokener_reset(tok);
	o = json_tokener_parse_ex(tok, s, n);
	e = json_tokener_get_error(tok);
	if (o != NULL && e == json_tokener_success &&
	    json_object_is_type(o, json_type_object))
		return o;
	/* The check passed: json-c should have taken it. */
	json_object_put(o);
	snprintf(why, size, "not valid JSON (json-c: %s)",
	    e == json_tokener_continue ? "unexpected end" :
	    json_tokener_error_desc(e));
	return NULL;
}

/* The member at a dotted path such as "result.error.code", or NULL. */
struct json_object *
wa_json_get(struct json_object *o, const char *path)
{
	char key[128];
	const char *dot;
	size_t n;

	while (o != NULL && *path) {
		if (!json_object_is_type(o, json_type_object))
			return NULL;
		dot = strchr(path, '.');
		n = dot ? (size_t)(dot - path) : strlen(path);
		if (n >= sizeof key)
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		if (!json_object_object_get_ex(o, key, &o))
			return NULL;
		path += n + (dot != NULL);
	}
	return o;
}

/* The string at path, or NULL when absent or not a string. */
const char *
wa_json_str(struct json_object *o, const char *path)
{
	o = wa_json_get(o, path);
	if (!json_object_is_type(o, json_type_string))
		return NULL;
	return json_object_get_string(o);
}

/*
 * The words of one of Meta's error objects (a send answer's "error", a
 * status's "errors" item): its title; else its message, without the
 * "(#131026) " it starts with (Meta's message is the code and the title,
 * and titles are to go); else its error_user_title; else NULL. So the
 * same error reads the same whichever way it came.
 */
const char *
wa_json_error_text(struct json_object *err)
{
	const char *t;
	size_t n;

	if ((t = wa_json_str(err, "title")) != NULL)
		return t;
	if ((t = wa_json_str(err, "message")) != NULL) {
		if (t[0] == '(' && t[1] == '#' &&
		    (n = strspn(t + 2, "0123456789")) > 0 &&
		    strncmp(t + 2 + n, ") ", 2) == 0)
			t += 2 + n + 2;
		return t;
	}
	return wa_json_str(err, "error_user_title");
}

/*
 * The integer at path in *v: returns 1, or 0 when absent or null, or -1
 * when it is not an integer that fits in 64 bits (a string of digits
 * counts: some senders quote their numbers).
 */
int
wa_json_int(struct json_object *o, const char *path, int64_t *v)
{
	const char *s;
	char *end;

	o = wa_json_get(o, path);
	if (o == NULL)
		return 0;
	switch (json_object_get_type(o)) {
	case json_type_int:
		/* json-c keeps 2^63 and above as unsigned, clamped here. */
		*v = json_object_get_int64(o);
		if (*v == INT64_MAX && json_object_get_uint64(o) !=
		    (uint64_t)INT64_MAX)
			return -1;
		return 1;
	case json_type_string:
		s = json_object_get_string(o);
		errno = 0;
		*v = strtoll(s, &end, 10);
		return *s && !*end && !errno ? 1 : -1;
	default:
		return -1;
	}
}

int
wa_json_canon_int(struct json_object *o, const char *path, int64_t *v)
{
	struct json_object *p = wa_json_get(o, path);
	const char *s;
	size_t n;

	if (p != NULL && json_object_is_type(p, json_type_string)) {
		s = json_object_get_string(p);
		n = strspn(s, "0123456789");
		/* Its length: "5\u0000x" is not 5. */
		if (n == 0 || n != (size_t)json_object_get_string_len(p) ||
		    (s[0] == '0' && n > 1))
			return -1;
	}
	return wa_json_int(o, path, v);
}

/* Compact JSON text of o, valid until o changes or is freed. */
const char *
wa_json_text(struct json_object *o)
{
	return json_object_to_json_string_ext(o,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

void
wa_out_json(struct json_object *o)
{
	size_t n;
	const char *s = json_object_to_json_string_length(o,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);

	wa_out(s, n);
}
