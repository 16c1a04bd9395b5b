/*
 * send.c: one Cloud API send, from request line to result line.
 *
 * wa_send_prepare checks a send request (DESIGN.md "The NDJSON contract")
 * and builds the template message Meta expects, with the recipient id and
 * attempt in biz_opaque_callback_data. The wa_answer_* functions sort what
 * came back into a wa_class: an HTTP answer by its error.code (class.c),
 * a libcurl failure by whether the request can have left this host.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "wa_secret.h"
#include "wa_send.h"

/* Scalars as text: strings as they are, numbers in JSON. */
static const char *
scalar(struct json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_string:
	case json_type_int:
		return json_object_get_string(o);
	default:
		return NULL;
	}
}

/* E.164 with its '+', spaces, dots, dashes and brackets dropped. */
static const char *
e164(const char *in, char *out, size_t size)
{
	size_t n = 0;

	if (*in++ != '+')
		return NULL;
	out[n++] = '+';
	for (; *in; in++) {
		if (strchr(" .-()", *in) != NULL)
			continue;
		if (!isdigit((unsigned char)*in) || n + 1 >= size)
			return NULL;
		out[n++] = *in;
	}
	out[n] = '\0';
	if (n < 8 || n > 16 || out[1] == '0')
		return NULL;
	return out;
}

static void
text_param(struct wa_buf *b, const char *name, const char *text)
{
	wa_buf_puts(b, "{\"type\":\"text\",");
	if (name != NULL) {
		wa_buf_puts(b, "\"parameter_name\":");
		wa_buf_json_string(b, name, strlen(name));
		wa_buf_add(b, ",", 1);
	}
	wa_buf_puts(b, "\"text\":");
	wa_buf_json_string(b, text, strlen(text));
	wa_buf_add(b, "}", 1);
}

/*
 * template.params as the body's parameters: an array fills positional
 * {{1}}, {{2}}...; an object fills named ones. A value that is itself an
 * object is a whole parameter (currency, date_time...), sent verbatim.
 */
static const char *
params(struct wa_buf *b, struct json_object *p)
{
	struct json_object *v;
	const char *t;
	size_t i, n;
	int first = 1;

	if (p == NULL || json_object_is_type(p, json_type_null))
		return NULL;
	wa_buf_puts(b, ",\"components\":[{\"type\":\"body\",\"parameters\":[");
	if (json_object_is_type(p, json_type_array)) {
		n = json_object_array_length(p);
		for (i = 0; i < n; i++) {
			v = json_object_array_get_idx(p, i);
			if (i > 0)
				wa_buf_add(b, ",", 1);
			if (json_object_is_type(v, json_type_object))
				wa_buf_puts(b, wa_json_text(v));
			else if ((t = scalar(v)) != NULL)
				text_param(b, NULL, t);
			else
				return "template.params holds a value that "
				    "is not a string, number or object";
		}
	} else if (json_object_is_type(p, json_type_object)) {
		json_object_object_foreach(p, k, val) {
			if (!first)
				wa_buf_add(b, ",", 1);
			first = 0;
			if ((t = scalar(val)) == NULL)
				return "template.params holds a value that "
				    "is not a string or number";
			text_param(b, k, t);
		}
	} else
		return "template.params is not an array or object";
	wa_buf_puts(b, "]}]");
	return NULL;
}

/*
 * Keeps the request's text, line (len bytes), for its result: as it came,
 * or re-written without the "result" of an earlier run.
 */
static void
keep(struct wa_send *s, struct json_object *req, const char *line,
    size_t len)
{
	s->line.len = 0;
	if (json_object_object_get_ex(req, "result", NULL)) {
		json_object_object_del(req, "result");
		wa_buf_puts(&s->line, wa_json_text(req));
		return;
	}
	while (len > 0 && strchr(" \t\r", line[len - 1]) != NULL)
		len--;
	wa_buf_add(&s->line, line, len);
}

/*
 * Checks request req (the text of line, len bytes) and fills s for a POST
 * under base. Returns NULL, or why the request cannot be sent. A request
 * belongs to its campaign_id; one without (hand-written) to its number
 * and template, for halts.
 */
const char *
wa_send_prepare(struct wa_send *s, struct json_object *req, const char *line,
    size_t len, const char *base)
{
	struct json_object *tpl, *lang, *comp, *o;
	const char *number, *to, *name, *id, *attempt, *why;
	char phone[24], cb[WA_CALLBACK_MAX + 1];
	size_t n;

	s->url.len = s->body.len = s->campaign.len = 0;
	keep(s, req, line, len);
	number = scalar(wa_json_get(req, "phone_number_id"));
	if (number == NULL || *number == '\0')
		return "no phone_number_id";
	if (strlen(number) >= sizeof s->number || number[strspn(number,
	    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "_-")] != '\0')
		return "phone_number_id is not a phone number id";
	if ((to = wa_json_str(req, "to")) == NULL)
		return "no \"to\"";
	if (e164(to, phone, sizeof phone) == NULL)
		return "\"to\" is not an E.164 number with its '+'";
	tpl = wa_json_get(req, "template");
	if ((name = wa_json_str(tpl, "name")) == NULL || *name == '\0')
		return "no template.name";
	lang = wa_json_get(tpl, "language");
	if (!json_object_is_type(lang, json_type_string) &&
	    wa_json_str(lang, "code") == NULL)
		return "no template.language";
	comp = wa_json_get(tpl, "components");
	if (comp != NULL && !json_object_is_type(comp, json_type_array))
		return "template.components is not an array";

	snprintf(s->number, sizeof s->number, "%s", number);
	wa_buf_printf(&s->url, "%s/%s/messages", base, number);
	wa_buf_puts(&s->body, "{\"messaging_product\":\"whatsapp\","
	    "\"recipient_type\":\"individual\",\"to\":");
	wa_buf_json_string(&s->body, phone, strlen(phone));
	wa_buf_puts(&s->body, ",\"type\":\"template\"");
	if ((o = wa_json_get(req, "id")) != NULL) {
		if ((id = scalar(o)) == NULL)
			return "id is not a string or number";
		attempt = scalar(wa_json_get(req, "attempt"));
		n = snprintf(cb, sizeof cb, WA_CALLBACK_PREFIX "%s%s%s", id,
		    attempt ? ":" : "", attempt ? attempt : "");
		if (n >= sizeof cb)
			return "id too long for biz_opaque_callback_data";
		wa_buf_puts(&s->body, ",\"biz_opaque_callback_data\":");
		wa_buf_json_string(&s->body, cb, n);
	}
	wa_buf_puts(&s->body, ",\"template\":{\"name\":");
	wa_buf_json_string(&s->body, name, strlen(name));
	wa_buf_puts(&s->body, ",\"language\":");
	if (json_object_is_type(lang, json_type_string)) {
		wa_buf_puts(&s->body, "{\"code\":");
		wa_buf_json_string(&s->body, json_object_get_string(lang),
		    json_object_get_string_len(lang));
		wa_buf_add(&s->body, "}", 1);
	} else
		wa_buf_puts(&s->body, wa_json_text(lang));
	if (comp != NULL) {
		wa_buf_puts(&s->body, ",\"components\":");
		wa_buf_puts(&s->body, wa_json_text(comp));
	} else if ((why = params(&s->body, wa_json_get(tpl, "params"))))
		return why;
	wa_buf_puts(&s->body, "}}");

	if ((o = wa_json_get(req, "campaign_id")) != NULL && scalar(o))
		wa_buf_printf(&s->campaign, "campaign %s", scalar(o));
	else
		wa_buf_printf(&s->campaign, "number %s template %s", number,
		    name);
	return NULL;
}

void
wa_send_free(struct wa_send *s)
{
	wa_buf_free(&s->url);
	wa_buf_free(&s->body);
	wa_buf_free(&s->campaign);
	wa_buf_free(&s->resp);
	wa_buf_free(&s->line);
	if (s->easy != NULL)
		curl_easy_cleanup(s->easy);
	s->easy = NULL;
}

static struct json_tokener *tok;	/* for answers, kept */

static void
answer_init(struct wa_answer *a, long http)
{
	memset(a, 0, sizeof *a);
	a->http = http;
	a->code = a->subcode = -1;
}

static void
copy(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

/*
 * Sorts an HTTP answer. Success is a 2xx whose body names the message
 * (messages[0].id); a 2xx without one may or may not have been taken, so
 * it is ambiguous. Errors are classified on error.code, falling back on
 * the status when the body is not the API's error JSON.
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
			copy(a->wamid, sizeof a->wamid, t);
			copy(a->status, sizeof a->status,
			    wa_json_str(msg, "message_status"));
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
	if ((t = wa_json_str(o, "error.message")) == NULL)
		t = wa_json_str(o, "error.error_user_title");
	/* "(#131026) Message undeliverable": the title webhooks carry. */
	if (t != NULL && strncmp(t, "(#", 2) == 0 && strstr(t, ") ") != NULL)
		t = strstr(t, ") ") + 2;
	if (t != NULL)
		copy(a->title, sizeof a->title, t);
	else
		snprintf(a->title, sizeof a->title, "HTTP %ld%s", http,
		    o ? "" : " with a body that is not the API's JSON");
	a->class = wa_class_of(a->code, http);
	json_object_put(o);
}

/*
 * Sorts a call that ended without an answer. Failing to resolve, connect
 * or finish the TLS handshake means the request never left: retry. Any
 * other failure (timeout, reset, nothing back) is ambiguous once request
 * bytes may have been written (sent != 0): Meta may have the message.
 */
void
wa_answer_curl(struct wa_answer *a, CURLcode rc, int sent)
{
	answer_init(a, 0);
	a->curl = rc;
	switch (rc) {
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_CACERT_BADFILE:
		sent = 0;
		break;
	default:
		break;
	}
	a->class = sent ? WA_AMBIGUOUS : WA_TRANSIENT;
	snprintf(a->title, sizeof a->title, "%s (curl %d)%s",
	    curl_easy_strerror(rc), (int)rc, sent ?
	    ": the request may have arrived" : ": nothing was sent");
}

/* The answer to the call on e that ended with rc. */
void
wa_answer_done(struct wa_answer *a, CURL *e, CURLcode rc,
    const struct wa_buf *resp)
{
	curl_off_t pre = 0;
	long http = 0, size = 0;

	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &http);
	curl_easy_getinfo(e, CURLINFO_REQUEST_SIZE, &size);
	curl_easy_getinfo(e, CURLINFO_PRETRANSFER_TIME_T, &pre);
	if (rc == CURLE_OK)
		wa_answer_http(a, http, resp->s ? resp->s : "", resp->len);
	else
		wa_answer_curl(a, rc, size > 0 || pre > 0);
}

/* Not sent, of class c (a halt, a stop), for why; code or -1. */
void
wa_answer_unsent(struct wa_answer *a, enum wa_class c, int64_t code,
    const char *why)
{
	answer_init(a, 0);
	a->class = c;
	a->code = code;
	snprintf(a->title, sizeof a->title, "not sent: %s", why);
}

/* $WA_API_BASE without its trailing '/', or the default; exits 78. */
char *
wa_send_base(void)
{
	const char *env = getenv("WA_API_BASE");
	char *b = wa_strdup(env && *env ? env : WA_API_BASE);
	size_t n = strlen(b);

	while (n > 0 && b[n - 1] == '/')
		b[--n] = '\0';
	if (strncmp(b, "https://", 8) != 0 && strncmp(b, "http://", 7) != 0)
		wa_die(EX_CONFIG, "WA_API_BASE must be an http(s) URL");
	return b;
}

/*
 * Queues (wa_out_add) the line of s with a's "result" added: DESIGN.md's
 * send result, spliced into the request's own text, which keeps every
 * field as it came.
 */
void
wa_answer_out(const struct wa_send *s, const struct wa_answer *a)
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
	if (*a->wamid) {
		wa_buf_puts(&b, ",\"wamid\":");
		wa_buf_json_string(&b, a->wamid, strlen(a->wamid));
	}
	if (*a->status) {
		wa_buf_puts(&b, ",\"message_status\":");
		wa_buf_json_string(&b, a->status, strlen(a->status));
	}
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
		wa_buf_puts(&b, "\"title\":");
		wa_buf_json_string(&b, a->title, strlen(a->title));
		wa_buf_add(&b, "}", 1);
	}
	wa_buf_add(&b, "}}", 2);
	wa_out_add(b.s, b.len);
}

/*
 * The request headers, with the token of WA_TOKEN_FILE or WA_TOKEN
 * (lib/secret.c); exits 78 without one. The token is never printed.
 */
struct curl_slist *
wa_send_headers(void)
{
	char *tok = wa_secret("WA_TOKEN");
	struct curl_slist *h = NULL, *t;
	struct wa_buf auth = { 0 };
	size_t n, i;

	if (tok == NULL)
		wa_die(EX_CONFIG, "no API token: set WA_TOKEN_FILE or "
		    "WA_TOKEN");
	n = strlen(tok);
	for (i = 0; i < n; i++)
		if ((unsigned char)tok[i] <= ' ' || tok[i] == 0x7f)
			wa_die(EX_CONFIG, "the API token holds a space or "
			    "control character");
	wa_buf_printf(&auth, "Authorization: Bearer %s", tok);
	explicit_bzero(tok, n);
	free(tok);
	h = curl_slist_append(h, auth.s);
	explicit_bzero(auth.s, auth.len);
	wa_buf_free(&auth);
	if (h == NULL || (t = curl_slist_append(h,
	    "Content-Type: application/json")) == NULL ||
	    (t = curl_slist_append(t, "Expect:")) == NULL)
		wa_die(EX_OSERR, "out of memory");
	return h;
}

static size_t
collect(char *p, size_t size, size_t n, void *arg)
{
	struct wa_buf *b = arg;

	/* Enough for any answer of the API; the rest is dropped. */
	if (b->len + size * n <= 65536)
		wa_buf_add(b, p, size * n);
	return size * n;
}

/*
 * An easy handle for the sends of s, kept for reuse: TLS verified,
 * HTTP/2 where the server offers it, no signals. Timeouts in ms.
 */
static CURL *
easy(struct wa_send *s, struct curl_slist *headers, long timeout,
    long connect)
{
	CURL *e = curl_easy_init();

	if (e == NULL)
		wa_die(EX_OSERR, "curl_easy_init failed");
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, &s->resp);
	curl_easy_setopt(e, CURLOPT_POST, 1L);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, connect);
	curl_easy_setopt(e, CURLOPT_USERAGENT, "wa-send/" WA_VERSION);
	return e;
}

/*
 * The handle that POSTs s's request, with headers, timeouts in ms and
 * priv as CURLINFO_PRIVATE; s keeps it for its next request. Over TLS,
 * ALPN soon tells whether a connection multiplexes, so a call waits for
 * that rather than opening one more; plain HTTP is HTTP/1.1, where
 * waiting would serialise the calls behind the first answer.
 */
CURL *
wa_send_start(struct wa_send *s, struct curl_slist *headers, long timeout,
    long connect, void *priv)
{
	CURL *e;

	if (s->easy == NULL)
		s->easy = easy(s, headers, timeout, connect);
	e = s->easy;
	curl_easy_setopt(e, CURLOPT_PRIVATE, priv);
	curl_easy_setopt(e, CURLOPT_PIPEWAIT,
	    strncmp(s->url.s, "https:", 6) == 0 ? 1L : 0L);
	curl_easy_setopt(e, CURLOPT_URL, s->url.s);
	curl_easy_setopt(e, CURLOPT_POSTFIELDS, s->body.s);
	curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)s->body.len);
	s->resp.len = 0;
	return e;
}

/* Adds what --dry-run shows: the URL and the body it would POST. */
void
wa_send_dry(struct json_object *req, const struct wa_send *s)
{
	struct json_object *d = json_object_new_object();

	json_object_object_add(d, "url", json_object_new_string(s->url.s));
	json_object_object_add(d, "body", json_tokener_parse(s->body.s));
	json_object_object_add(req, "dry_run", d);
}

/* Counts a result in the metrics: outcome, error code, latency. */
void
wa_answer_count(const struct wa_answer *a)
{
	static const double secs[] = { .01, .025, .05, .1, .25, .5, 1, 2.5,
	    5, 10, 30 };
	static struct wa_metric *outcomes[WA_AMBIGUOUS + 1], *latency;
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
