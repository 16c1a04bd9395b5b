/*
 * json.c: reading fields of a parsed record by dotted path, and writing
 * one as an output line.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/out.h"
#include "records/json.h"

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
 * The integer at path in *v: returns 1, or 0 when absent or null, or -1
 * when it is not an integer (a string of digits counts: some senders quote
 * their numbers).
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
		*v = json_object_get_int64(o);
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
