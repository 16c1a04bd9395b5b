/*
 * json.c: records/json.h's strict check and parse. The first byte picks
 * the flags and the depth, the rest is the text. Whatever wa_json_check
 * takes, wa_json_parse parses to an object; json-c's text of that object
 * is valid UTF-8 that the check takes again with the same flags and
 * depth, and that parses back to an equal object. Under WA_JSON_RECORD
 * no string holds a NUL and every integer fits in 64 bits.
 */
#include "fuzz.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	return 0;
}

/* No string in o holds a NUL (what WA_JSON_TEXT promises). */
static int
no_nul(struct json_object *o)
{
	size_t i, n;

	switch (json_object_get_type(o)) {
	case json_type_string:
		return strlen(json_object_get_string(o)) ==
		    (size_t)json_object_get_string_len(o);
	case json_type_array:
		n = json_object_array_length(o);
		for (i = 0; i < n; i++)
			if (!no_nul(json_object_array_get_idx(o, i)))
				return 0;
		return 1;
	case json_type_object: {
		json_object_object_foreach(o, k, v) {
			(void)k;
			if (!no_nul(v))
				return 0;
		}
		return 1;
	}
	default:
		return 1;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct json_tokener *tok;
	struct json_object *o, *back;
	const char *text;
	char *s, why[256], why2[256];
	int flags, depth, r;
	size_t n;

	if (size < 1)
		return 0;
	flags = data[0] & 3;
	depth = (data[0] >> 2) & 1 ? WA_JSON_DEPTH : 1 + (data[0] >> 3);
	s = fuzz_copy(data + 1, size - 1);
	n = size - 1;
	if (tok == NULL)
		tok = wa_json_tokener();

	memset(why, 0, sizeof why);
	r = wa_json_check(s, n, flags, depth, why, sizeof why);
	PROP(r == 0 || r == -1);
	/* A refusal says why, in a string that ends. */
	PROP(r == 0 || (why[0] != '\0' && memchr(why, '\0', sizeof why)));
	o = wa_json_parse(tok, s, n, flags, depth, why2, sizeof why2);
	/* The parse takes exactly what the check takes. */
	PROP((o != NULL) == (r == 0));
	if (o == NULL) {
		free(s);
		return 0;
	}
	PROP(json_object_is_type(o, json_type_object));
	/* Accepted bytes are UTF-8 without NUL; no \u0000 under TEXT. */
	PROP(wa_utf8_valid(s, n) && strlen(s) == n);
	if (flags & WA_JSON_TEXT)
		PROP(no_nul(o));

	/* What json-c writes of it, our check takes again. */
	text = wa_json_text(o);
	PROP(wa_utf8_valid(text, strlen(text)));
	r = wa_json_check(text, strlen(text), flags, depth, why2,
	    sizeof why2);
	if (r != 0)
		fprintf(stdout, "re-emitted text refused: %s\n%s\n", why2,
		    text);
	PROP(r == 0);
	back = wa_json_parse(tok, text, strlen(text), flags, depth, why2,
	    sizeof why2);
	PROP(back != NULL);
	PROP(json_object_equal(o, back));
	json_object_put(back);
	json_object_put(o);
	free(s);
	return 0;
}
