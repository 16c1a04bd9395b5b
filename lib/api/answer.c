/*
 * answer.c: what came back from the Cloud API, sorted into a wa_class
 * (api/class.h), and the send result line: the request with its "result"
 * added. Text taken from an answer (a title, a wamid) is made valid UTF-8
 * (a byte that is not becomes U+FFFD) and cut on a character boundary, so
 * that one odd answer cannot spoil the batch Postgres takes it in.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/metrics.h"
#include "core/out.h"
#include "records/json.h"
#include "api/answer.h"
#include "api/class.h"

static struct json_tokener *tok;	/* for answers, kept */

static void
answer_init(struct wa_answer *a, long http)
{
	memset(a, 0, sizeof *a);
	a->http = http;
	a->code = a->subcode = -1;
}

/*
 * Copies src (NULL: none) into dst of size bytes as valid UTF-8: each
 * byte of an invalid sequence becomes U+FFFD; the copy ends before the
 * first character that does not fit. Returns its length.
 */
size_t
wa_answer_text(char *dst, size_t size, const char *src)
{
	src = src ? src : "";
	return wa_utf8_copy(dst, size, src, strlen(src));
}

/* Sets a's title from fmt, as valid UTF-8 cut on a boundary. */
void
wa_answer_title(struct wa_answer *a, const char *fmt, ...)
{
	char t[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t, sizeof t, fmt, ap);
	va_end(ap);
	wa_answer_text(a->title, sizeof a->title, t);
}

/*
 * Sorts an HTTP answer. Success is a 2xx whose body names the message
 * (messages[0].id); a 2xx without one may or may not have been taken, so
 * it is ambiguous. Errors are classified on error.code and
 * error.error_subcode (api/class.h's table), falling back on the status
 * when the body is not the API's error JSON or its code is not there.
 */
void
wa_answer_http(struct wa_answer *a, long http, const char *body, size_t len)
{
	struct json_object *o = NULL, *msg = NULL;
	const char *t;

	answer_init(a, http);
	if (tok == NULL && (tok = json_tokener_new()) == NULL)
		wa_die(EX_OSERR, "out of memory");
	json_tokener_reset(tok);
	if (len > 0)
		o = json_tokener_parse_ex(tok, body, len + 1);
	if (!json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		o = NULL;
	}
	if (json_object_is_type(wa_json_get(o, "messages"), json_type_array))
		msg = json_object_array_get_idx(wa_json_get(o, "messages"), 0);
	if (wa_json_get(o, "error") == NULL && http >= 200 && http < 300) {
		if ((t = wa_json_str(msg, "id")) != NULL && *t != '\0') {
			a->class = WA_SENT;
			wa_answer_text(a->wamid, sizeof a->wamid, t);
			wa_answer_text(a->status, sizeof a->status,
			    wa_json_str(msg, "message_status"));
			/* The person's WhatsApp id: not always the number
			 * sent to (an old Brazilian account's lacks its
			 * ninth digit), and what their messages carry. */
			if (json_object_is_type(wa_json_get(o, "contacts"),
			    json_type_array))
				wa_answer_text(a->wa_id, sizeof a->wa_id,
				    wa_json_str(json_object_array_get_idx(
				    wa_json_get(o, "contacts"), 0), "wa_id"));
		} else {
			a->class = WA_AMBIGUOUS;
			snprintf(a->title, sizeof a->title, "HTTP %ld with %s",
			    http, o ? "no message id" : "a body that is not "
			    "the API's JSON");
		}
		json_object_put(o);
		return;
	}
	if (wa_json_int(o, "error.code", &a->code) != 1)
		a->code = -1;
	if (wa_json_int(o, "error.error_subcode", &a->subcode) != 1)
		a->subcode = -1;
	/* "(#131026) Message undeliverable": the title webhooks carry. */
	if ((t = wa_json_error_text(wa_json_get(o, "error"))) != NULL)
		wa_answer_text(a->title, sizeof a->title, t);
	else
		snprintf(a->title, sizeof a->title, "HTTP %ld%s", http,
		    o ? "" : " with a body that is not the API's JSON");
	a->class = wa_class_of(a->code, a->subcode, http);
	/* A 2xx with an error but no code names no message: unknown. */
	if (a->class == WA_SENT)
		a->class = WA_AMBIGUOUS;
	json_object_put(o);
}

/* Not sent, of class c (a halt, a stop), for why; code or -1. */
void
wa_answer_unsent(struct wa_answer *a, enum wa_class c, int64_t code,
    const char *why)
{
	answer_init(a, 0);
	a->class = c;
	a->code = code;
	wa_answer_title(a, "not sent: %s", why);
}

/* Adds key and s as a JSON string, valid UTF-8 whatever s holds. */
static void
text(struct wa_buf *b, const char *key, const char *s)
{
	char t[768];	/* room for a title of U+FFFDs */
	size_t n = strlen(s);

	wa_buf_puts(b, key);
	if (!wa_utf8_valid(s, n)) {
		n = wa_answer_text(t, sizeof t, s);
		s = t;
	}
	wa_buf_json_string(b, s, n);
}

/*
 * Queues (wa_out_add) the line of s with a's "result" added: DESIGN.md's
 * send result, spliced into the request's own text, which keeps every
 * field as it came.
 */
void
wa_answer_out(const struct wa_request *s, const struct wa_answer *a)
{
	static struct wa_buf b;
	size_t n = s->line.len;

	b.len = 0;
	while (n > 0 && s->line.s[n - 1] != '}')
		n--;
	if (n == 0)
		return;
	wa_buf_add(&b, s->line.s, n - 1);
	while (b.len > 0 && strchr(" \t\r\n", b.s[b.len - 1]) != NULL)
		b.len--;
	wa_buf_printf(&b, "%s\"result\":{\"outcome\":\"%s\",\"class\":\"%s\"",
	    b.len > 0 && b.s[b.len - 1] == '{' ? "" : ",",
	    wa_class_outcome(a->class), wa_class_name(a->class));
	if (*a->wamid)
		text(&b, ",\"wamid\":", a->wamid);
	if (*a->wa_id)
		text(&b, ",\"wa_id\":", a->wa_id);
	if (*a->status)
		text(&b, ",\"message_status\":", a->status);
	if (a->http > 0)
		wa_buf_printf(&b, ",\"http_status\":%ld", a->http);
	wa_buf_printf(&b, ",\"latency_ms\":%lld", (long long)a->latency_ms);
	if (a->class != WA_SENT) {
		wa_buf_puts(&b, ",\"error\":{");
		if (a->code >= 0)
			wa_buf_printf(&b, "\"code\":%lld,", (long long)a->code);
		if (a->subcode >= 0)
			wa_buf_printf(&b, "\"subcode\":%lld,",
			    (long long)a->subcode);
		if (a->curl != 0)
			wa_buf_printf(&b, "\"curl\":%d,", a->curl);
		text(&b, "\"title\":", a->title);
		wa_buf_add(&b, "}", 1);
	}
	wa_buf_add(&b, "}}", 2);
	wa_out_add(b.s, b.len);
}

/* Counts a result in the metrics: outcome, error code, latency. */
void
wa_answer_count(const struct wa_answer *a)
{
	static const double secs[] = { .01, .025, .05, .1, .25, .5, 1, 2.5,
	    5, 10, 30 };
	static struct wa_metric *outcomes[WA_UNSENT + 1], *latency;
	char label[64];

	if (outcomes[a->class] == NULL) {
		snprintf(label, sizeof label, "outcome=\"%s\"",
		    wa_class_outcome(a->class));
		outcomes[a->class] = wa_counter("wa_send_results_total", label,
		    "Results, by outcome.");
		latency = wa_histogram("wa_send_latency_seconds", NULL,
		    "Time from sending a request to its answer.", secs,
		    sizeof secs / sizeof secs[0]);
	}
	wa_metric_add(outcomes[a->class], 1);
	if (a->http > 0 || a->curl != 0)
		wa_metric_observe(latency, a->latency_ms / 1000.0);
	if (a->class == WA_SENT)
		return;
	if (a->code >= 0)
		snprintf(label, sizeof label, "code=\"%lld\"",
		    (long long)a->code);
	else if (a->curl)
		snprintf(label, sizeof label, "code=\"curl:%d\"", a->curl);
	else if (a->http)
		snprintf(label, sizeof label, "code=\"http:%ld\"", a->http);
	else
		snprintf(label, sizeof label, "code=\"none\"");
	wa_metric_add(wa_counter("wa_send_errors_total", label,
	    "Errors, by Cloud API code (curl:N, http:N without one)."), 1);
}
