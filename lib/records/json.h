/*
 * records/json.h: JSON as it enters (checked, then parsed), fields of a
 * parsed record by dotted path ("result.error.code"), the words of a
 * Meta error object, and a record written as one output line.
 */
#ifndef WA_RECORDS_JSON_H
#define WA_RECORDS_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

/*
 * The nesting every stage takes: a request, a result and a Cloud API
 * body may hold at most this many objects and arrays inside one another
 * (what json-c's default depth takes when the deepest holds nothing).
 */
#define WA_JSON_DEPTH 32

/* What wa_json_check refuses besides RFC 8259's syntax. */
enum {
	WA_JSON_TEXT = 1,	/* \u0000 and lone surrogates in strings */
	WA_JSON_NUMBERS = 2,	/* integers beyond 64 bits, numbers beyond
				   a double's range */
	WA_JSON_RECORD = 3	/* both: what our NDJSON carries */
};

/*
 * Whether the n bytes at s are text Postgres takes: UTF-8 without NUL.
 * Returns 0, or -1 with why ("not valid UTF-8 (byte 7)").
 */
int wa_json_bytes(const char *s, size_t n, char *why, size_t size);
/*
 * Whether the n bytes at s are one JSON object, alone but for white
 * space: UTF-8 without NUL, RFC 8259's syntax (no trailing comma, no
 * NaN, no single quotes, no comment), at most depth levels deep (at most
 * WA_JSON_DEPTH), and what flags ask. Returns 0, or -1 with why in words
 * a user can act on, naming the byte at fault (size bytes of why).
 */
int wa_json_check(const char *s, size_t n, int flags, int depth, char *why,
    size_t size);
/* A tokener for wa_json_parse: strict, WA_JSON_DEPTH deep. */
struct json_tokener *wa_json_tokener(void);
/*
 * The n bytes at s checked (wa_json_check) and parsed with tok: returns
 * the object (the caller's), or NULL with why.
 */
struct json_object *wa_json_parse(struct json_tokener *tok, const char *s,
    size_t n, int flags, int depth, char *why, size_t size);

struct json_object *wa_json_get(struct json_object *o, const char *path);
/* The string at path, or NULL when absent or not a string. */
const char *wa_json_str(struct json_object *o, const char *path);
/*
 * The words of a Meta error object (a send answer's "error", a status's
 * "errors" item): title, else message without its "(#131026) ", else
 * error_user_title; NULL when none.
 */
const char *wa_json_error_text(struct json_object *err);
/*
 * 1 with *v set, 0 when absent or null, -1 when not an integer that fits
 * in 64 bits.
 */
int wa_json_int(struct json_object *o, const char *path, int64_t *v);
/*
 * As wa_json_int, but a string must be the integer's one canonical form:
 * decimal digits only, without sign, space or leading zero ("0" alone).
 * For the ids every stage reads back (" 5", "+5" and "05" are refused).
 */
int wa_json_canon_int(struct json_object *o, const char *path, int64_t *v);
/* Compact text of o, valid until o changes or is freed. */
const char *wa_json_text(struct json_object *o);
void wa_out_json(struct json_object *o);

#endif
