/*
 * answer.c: what the Cloud API answers, sorted (api/answer.h,
 * api/class.h). The first two bytes are the HTTP status (0 to 999), the
 * rest the body. Every answer gets a known class and outcome; a send
 * counts as sent only on a 2xx naming its message; wamid, status and
 * title are valid UTF-8 within their buffers; the result line wa-send
 * writes for it is strictly valid JSON that wa-record takes, with that
 * outcome. wa_class_of gives a class for any code, subcode and status,
 * and the retry delay stays within its cap.
 */
#include "fuzz.h"
#include "capture.h"
#include "api/answer.h"
#include "api/class.h"
#include "pg/results.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	capture_init();
	return 0;
}

static int
text_ok(const char *s, size_t size)
{
	const char *end = memchr(s, '\0', size);

	return end != NULL && wa_utf8_valid(s, (size_t)(end - s));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char req[] = "{\"id\":7,\"attempt\":2,\"campaign_id\":1,"
	    "\"phone_number_id\":\"106540352242922\",\"to\":\"+15551234567\","
	    "\"template\":{\"name\":\"hello\",\"language\":\"en_US\"}}";
	static struct json_tokener *tok;
	static struct wa_results *res;
	static struct wa_request rq;
	struct json_object *o;
	struct wa_answer a;
	const char *outcome;
	char *body, *out, why[256];
	long http;
	int64_t d, cap;
	size_t n;
	enum wa_class c;

	if (size < 2)
		return 0;
	if (tok == NULL) {
		tok = wa_json_tokener();
		res = wa_results_new(NULL, 1000, 60000);
		wa_buf_puts(&rq.line, req);
	}
	http = (data[0] << 8 | data[1]) % 1000;
	body = fuzz_copy(data + 2, size - 2);
	wa_answer_http(&a, http, body, size - 2);
	PROP(a.class >= WA_SENT && a.class <= WA_UNSENT);
	PROP(a.http == http);
	if (a.class == WA_SENT)
		PROP(http >= 200 && http < 300 && a.wamid[0] != '\0');
	PROP(text_ok(a.wamid, sizeof a.wamid));
	PROP(text_ok(a.status, sizeof a.status));
	PROP(text_ok(a.title, sizeof a.title));
	outcome = wa_class_outcome(a.class);
	PROP(outcome != NULL && wa_class_name(a.class) != NULL);

	wa_answer_out(&rq, &a);
	out = capture_take(&n);
	PROP(n > 0 && out[n - 1] == '\n');
	n--;
	PROP(memchr(out, '\n', n) == NULL);
	PROP(fuzz_strict(out, n));
	o = wa_json_parse(tok, out, n, WA_JSON_RECORD, WA_JSON_DEPTH, why,
	    sizeof why);
	PROP(o != NULL);
	PROP(strcmp(wa_json_str(o, "result.outcome"), outcome) == 0);
	PROP(wa_results_take(res, o, out, n, "fuzz", 1) == NULL);
	wa_results_clear(res);
	json_object_put(o);
	free(out);

	/*
	 * Any code, subcode and status: a class, and a delay of at most a
	 * day; any attempt: a backoff in bounds.
	 */
	if (size >= 10) {
		memcpy(&d, data + 2, sizeof d);
		c = wa_class_of(d, data[1] % 2 ? 33 : -1, http);
		PROP(c >= WA_SENT && c <= WA_UNSENT);
		d = wa_error_delay_ms(d, data[1] % 2 ? 33 : -1);
		PROP(d >= 0 && d <= 24 * 3600 * 1000LL);
		cap = (int64_t)(data[1] % 100 + 1) * 1000;
		d = wa_backoff_ms(data[0] % 64, 1000, cap);
		PROP(d >= 0 && d <= cap);
	}
	free(body);
	return 0;
}
