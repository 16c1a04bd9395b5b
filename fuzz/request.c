/*
 * request.c: a send request line as wa-send takes it (records/input.h's
 * checks, then records/request.h's wa_request_prepare). What it accepts
 * gives a body the Cloud API can parse: strictly valid UTF-8 JSON with
 * messaging_product "whatsapp", "to" in E.164, type "template" and a
 * template with a name and a language code, a callback within Meta's
 * limit, a URL under the base, the callback in the one form
 * "wapipe:<id>[:<attempt>]" that records/status.c reads back (digits
 * without sign, space or leading zero: the request's id, a row wa-record
 * writes too); and the result line wa-send writes for
 * it (api/answer.h) is strictly valid JSON that wa-record takes
 * (pg/results.h: id >= 1, attempt in 32 bits, a known outcome).
 */
#include "fuzz.h"
#include "capture.h"
#include "api/answer.h"
#include "pg/results.h"
#include "records/phone.h"
#include "records/request.h"

#define BASE "https://graph.example/v21.0"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	capture_init();
	return 0;
}

/* The body as the API would read it. */
static void
body_ok(const struct wa_request *rq, struct json_object *req)
{
	static struct json_tokener *tok;
	struct json_object *b, *lang;
	const char *to, *cb, *type;
	char why[256], want[64];
	int64_t id, attempt;
	size_t nb;

	PROP(fuzz_strict(rq->body.s, rq->body.len));
	if (tok == NULL)
		tok = wa_json_tokener();
	b = wa_json_parse(tok, rq->body.s, rq->body.len, WA_JSON_RECORD,
	    WA_JSON_DEPTH, why, sizeof why);
	PROP(b != NULL);
	PROP(strcmp(wa_json_str(b, "messaging_product") ?: "", "whatsapp")
	    == 0);
	PROP((to = wa_json_str(b, "to")) != NULL && wa_phone_is_e164(to));
	if (wa_json_get(req, "message") != NULL) {
		/* A conversation's: its type's object, no callback data,
		   and only with an open window (checked in prepare). */
		type = wa_json_str(b, "type");
		PROP(type != NULL && strcmp(type, "template") != 0);
		PROP(strcmp(type, wa_json_str(req, "message.type") ?: "")
		    == 0);
		PROP(json_object_equal(wa_json_get(b, type),
		    wa_json_get(wa_json_get(req, "message"), type)));
		PROP(wa_json_get(b, "biz_opaque_callback_data") == NULL);
		PROP(wa_json_get(req, "id") == NULL);
		PROP(wa_json_get(req, "window_closes_at") != NULL);
		json_object_put(b);
		return;
	}
	PROP(strcmp(wa_json_str(b, "type") ?: "", "template") == 0);
	PROP(json_object_is_type(wa_json_get(b, "template"),
	    json_type_object));
	PROP(*(wa_json_str(b, "template.name") ?: "") != '\0');
	lang = wa_json_get(b, "template.language");
	PROP(json_object_is_type(lang, json_type_object));
	PROP(wa_json_str(lang, "code") != NULL);
	if ((cb = wa_json_str(b, "biz_opaque_callback_data")) != NULL) {
		nb = strlen(cb);
		PROP(nb <= WA_CALLBACK_MAX);
		PROP(strncmp(cb, WA_CALLBACK_PREFIX,
		    strlen(WA_CALLBACK_PREFIX)) == 0);
		PROP(wa_json_canon_int(req, "id", &id) == 1 && id >= 0);
		if (wa_json_canon_int(req, "attempt", &attempt) == 1)
			snprintf(want, sizeof want, WA_CALLBACK_PREFIX
			    "%lld:%lld", (long long)id, (long long)attempt);
		else
			snprintf(want, sizeof want, WA_CALLBACK_PREFIX "%lld",
			    (long long)id);
		PROP(strcmp(cb, want) == 0);
	} else
		PROP(wa_json_get(req, "id") == NULL);
	PROP(wa_number_id_valid(rq->number));
	PROP(rq->url.len == strlen(BASE) + 1 + strlen(rq->number) + 9);
	PROP(memcmp(rq->url.s, BASE "/", strlen(BASE) + 1) == 0);
	json_object_put(b);
}

/* The result line for answer a: strict JSON; wa-record takes it. */
static void
result_ok(const struct wa_request *rq, const struct wa_answer *a,
    struct json_object *req, struct wa_results *res)
{
	static struct json_tokener *tok;
	struct json_object *o;
	char *out, why[256];
	const char *bad;
	size_t n;
	int64_t id, attempt;

	wa_answer_out(rq, a);
	out = capture_take(&n);
	PROP(n > 0 && out[n - 1] == '\n');
	n--;
	PROP(memchr(out, '\n', n) == NULL);
	PROP(fuzz_strict(out, n));
	if (tok == NULL)
		tok = wa_json_tokener();
	o = wa_json_parse(tok, out, n, WA_JSON_RECORD, WA_JSON_DEPTH, why,
	    sizeof why);
	PROP(o != NULL);
	PROP(strcmp(wa_json_str(o, "result.outcome") ?: "",
	    wa_class_outcome(a->class)) == 0);
	/* The request's fields are still there, as they were. */
	PROP(json_object_equal(wa_json_get(o, "to"), wa_json_get(req, "to")));
	PROP(json_object_equal(wa_json_get(o, "id"), wa_json_get(req, "id")));
	bad = wa_results_take(res, o, out, n, "fuzz", 1);
	if (wa_json_get(req, "message") != NULL)
		PROP(bad == NULL);
	else if (wa_json_int(req, "id", &id) == 1 && id >= 1 &&
	    wa_json_int(req, "attempt", &attempt) == 1 && attempt >= 0 &&
	    attempt <= INT32_MAX)
		PROP(bad == NULL);
	json_object_put(o);
	free(out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct json_tokener *tok;
	static struct wa_results *res;
	static const char sent[] = "{\"messaging_product\":\"whatsapp\","
	    "\"messages\":[{\"id\":\"wamid.HBgLMTU1NTEyMzQ1NjcVAgARGBI=\","
	    "\"message_status\":\"accepted\"}]}";
	static const char fail[] = "{\"error\":{\"message\":\"(#131026) "
	    "Message undeliverable\",\"code\":131026,\"error_subcode\":2494010,"
	    "\"fbtrace_id\":\"A\"}}";
	struct wa_request rq = { 0 };
	struct json_object *req;
	struct wa_answer a;
	const char *why;
	char *s = fuzz_copy(data, size), w[256];

	/* One line, as the line reader hands it out: no '\n' inside. */
	size = line_len(s, size);
	if (tok == NULL) {
		tok = wa_json_tokener();
		res = wa_results_new(NULL, 1000, 60000);
	}
	req = wa_json_parse(tok, s, size, WA_JSON_RECORD, WA_JSON_DEPTH, w,
	    sizeof w);
	if (req == NULL) {
		free(s);
		return 0;
	}
	why = wa_request_prepare(&rq, req, s, size, BASE);
	if (why != NULL) {
		PROP(*why != '\0');
	} else {
		body_ok(&rq, req);
		wa_answer_http(&a, 200, sent, sizeof sent - 1);
		PROP(a.class == WA_SENT);
		result_ok(&rq, &a, req, res);
		wa_answer_http(&a, 400, fail, sizeof fail - 1);
		result_ok(&rq, &a, req, res);
		wa_answer_unsent(&a, WA_UNSENT, -1, "stopping");
		result_ok(&rq, &a, req, res);
		wa_results_clear(res);
	}
	wa_request_free(&rq);
	json_object_put(req);
	free(s);
	return 0;
}
