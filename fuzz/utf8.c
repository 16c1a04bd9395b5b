/*
 * utf8.c: core/buf.h's UTF-8 helpers against a decoder written apart
 * from them. wa_utf8_valid and wa_text_bad agree with it; wa_utf8_cut
 * never cuts inside a character and cuts no more than it must;
 * wa_answer_text always gives valid UTF-8 that fits; wa_buf_json_string
 * of valid UTF-8 is a JSON string that reads back as the same bytes.
 */
#include "fuzz.h"
#include "api/answer.h"

/* The length of the character at s by Unicode's table 3-7, or 0. */
static size_t
ref_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len, i;
	unsigned lo = 0x80, hi = 0xbf;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0;
		if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;
		if (c == 0xf4)
			hi = 0x8f;
	} else
		return 0;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/* The offset of the first invalid byte (or NUL when nul), else n. */
static size_t
ref_bad(const unsigned char *s, size_t n, int nul)
{
	size_t i = 0, k;

	while (i < n) {
		if (nul && s[i] == 0)
			return i;
		if ((k = ref_len(s + i, n - i)) == 0)
			return i;
		i += k;
	}
	return n;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct json_tokener *tok;
	const unsigned char *u = data;
	struct json_object *o, *v;
	struct wa_buf b = { 0 };
	char *s = fuzz_copy(data, size), *out, why[256];
	size_t max, cut, i, k, len, valid;

	valid = ref_bad(u, size, 0) == size;
	PROP(wa_utf8_valid(s, size) == (int)valid);
	PROP(wa_text_bad(s, size) == ref_bad(u, size, 1));
	for (i = 0; i < size; i += k ? k : 1) {
		k = wa_utf8_len(u + i, size - i);
		PROP(k == ref_len(u + i, size - i));
	}

	/* Cut at every length, on valid text (what the callers give it). */
	if (valid) {
		for (max = 0; max <= size + 1; max++) {
			cut = wa_utf8_cut(s, size, max);
			PROP(cut <= max && cut <= size);
			PROP(cut == size || (u[cut] & 0xc0) != 0x80);
			PROP(wa_utf8_valid(s, cut));
			/* No shorter than it must be. */
			if (cut < size)
				PROP(cut + ref_len(u + cut, size - cut) > max);
		}
	}

	/* A copy made valid, in every size of buffer up to one that fits. */
	out = malloc(3 * size + 2);
	for (max = 0; max < 3 * size + 2 && max < 64; max++) {
		memset(out, 'x', 3 * size + 2);
		len = wa_answer_text(out, max, s);
		PROP(max == 0 || (len < max && out[len] == '\0'));
		PROP(max == 0 || wa_utf8_valid(out, len));
	}
	len = wa_answer_text(out, 3 * size + 2, s);
	PROP(len == strlen(out) && wa_utf8_valid(out, len));
	/* Valid text without NUL comes through as it is. */
	if (valid && strlen(s) == size)
		PROP(len == size && memcmp(out, s, size) == 0);
	free(out);

	/* A JSON string of valid text reads back as the same bytes. */
	if (valid) {
		wa_buf_puts(&b, "{\"k\":");
		wa_buf_json_string(&b, s, size);
		wa_buf_puts(&b, "}");
		if (tok == NULL)
			tok = wa_json_tokener();
		PROP(wa_utf8_valid(b.s, b.len));
		o = wa_json_parse(tok, b.s, b.len, 0, WA_JSON_DEPTH, why,
		    sizeof why);
		PROP(o != NULL);
		v = wa_json_get(o, "k");
		PROP(json_object_is_type(v, json_type_string));
		PROP((size_t)json_object_get_string_len(v) == size);
		PROP(memcmp(json_object_get_string(v), s, size) == 0);
		json_object_put(o);
		/* And without NUL, the strictest check takes it. */
		if (strlen(s) == size)
			PROP(fuzz_strict(b.s, b.len));
		wa_buf_free(&b);
	}
	free(s);
	return 0;
}
