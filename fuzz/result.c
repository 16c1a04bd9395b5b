/*
 * result.c: a send result line as wa-record takes it (records/input.h's
 * checks, then pg/results.h's wa_results_take, which touches no
 * database: it is given none). What take accepts is what the batch's
 * columns hold: id >= 1 (bigint), attempt from 0 to 2^31 - 1 (integer),
 * an outcome of sent, retry, failed, unknown or halt, and text Postgres
 * takes (UTF-8 without NUL) in the wamid and the error title; the line
 * is kept whole, for the batch to echo.
 */
#include "fuzz.h"
#include "pg/results.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	return 0;
}

static const char *line_s;
static size_t line_n;
static int echoed;

static void
echo(const char *line, size_t len, void *arg)
{
	(void)arg;
	PROP(len == line_n && memcmp(line, line_s, len) == 0);
	echoed++;
}

/* Text Postgres takes, when it is there at all. */
static int
text_ok(struct json_object *o, const char *path)
{
	const char *s = wa_json_str(o, path);

	return s == NULL || wa_text_bad(s, strlen(s)) == strlen(s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct json_tokener *tok;
	static struct wa_results *res;
	struct json_object *o;
	const char *why, *out;
	char *s = fuzz_copy(data, size), w[256];
	int64_t id, attempt;
	int k;

	/* One line, as the line reader hands it out: no '\n' inside. */
	size = line_len(s, size);
	if (tok == NULL) {
		tok = wa_json_tokener();
		res = wa_results_new(NULL, 1000, 60000);
	}
	o = wa_json_parse(tok, s, size, WA_JSON_RECORD, WA_JSON_DEPTH, w,
	    sizeof w);
	if (o == NULL) {
		free(s);
		return 0;
	}
	why = wa_results_take(res, o, s, size, "fuzz", 1);
	if (why != NULL) {
		PROP(*why != '\0');
		PROP(wa_results_count(res) == 0);
	} else {
		PROP(wa_results_count(res) == 1);
		PROP(wa_json_int(o, "id", &id) == 1 && id >= 1);
		PROP(wa_json_int(o, "attempt", &attempt) == 1);
		PROP(attempt >= 0 && attempt <= INT32_MAX);
		out = wa_json_str(o, "result.outcome");
		PROP(out != NULL);
		for (k = 0; k < WA_OUTCOMES &&
		    strcmp(out, wa_outcome_names[k]) != 0; k++)
			;
		PROP(k < WA_OUTCOMES);
		PROP(text_ok(o, "result.wamid"));
		PROP(text_ok(o, "result.error.title"));
		line_s = s;
		line_n = size;
		echoed = 0;
		wa_results_each(res, echo, NULL);
		PROP(echoed == 1);
	}
	wa_results_clear(res);
	json_object_put(o);
	free(s);
	return 0;
}
