/*
 * send.c: one Cloud API call over libcurl: the request's headers (the
 * bearer token), a kept easy handle per slot, and the answer or libcurl's
 * failure sorted into a wa_class: a failure by whether the request can
 * have left this host.
 *
 * libcurl sends a request again on a new connection when a kept-alive
 * one closes before any byte of the answer (up to five times), and has
 * no switch to stop it. The server may have taken the first copy: Meta
 * would then have the message once per copy. So the body goes to libcurl
 * through a read callback, and the seek callback libcurl needs to send
 * it again refuses once bytes went: one POST per message, and the call,
 * whose request may have arrived, is ambiguous (unknown).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "api/base.h"
#include "api/class.h"
#include "api/graph.h"
#include "api/send.h"

/*
 * The request headers, with the token of WA_TOKEN_FILE or WA_TOKEN
 * (api/graph.h's wa_api_auth); exits 78 without one. The token is never
 * printed.
 */
struct curl_slist *
wa_send_headers(void)
{
	struct curl_slist *h = wa_api_auth(NULL), *t;

	if ((t = curl_slist_append(h, "Content-Type: application/json")) ==
	    NULL || (t = curl_slist_append(t, "Expect:")) == NULL)
		wa_die(EX_OSERR, "out of memory");
	return t;
}

/* The body, to libcurl, from s->off. */
static size_t
body_read(char *p, size_t size, size_t n, void *arg)
{
	struct wa_send *s = arg;
	size_t left = s->rq.body.len - s->off;

	n = size * n < left ? size * n : left;
	memcpy(p, s->rq.body.s + s->off, n);
	s->off += n;
	return n;
}

/*
 * libcurl going back in the body: to send it again once bytes went,
 * which is refused (the call then fails, ambiguous), or to the start of
 * a body not yet sent.
 */
static int
body_seek(void *arg, curl_off_t to, int whence)
{
	struct wa_send *s = arg;

	if (whence != SEEK_SET || to < 0 || (size_t)to > s->rq.body.len)
		return CURL_SEEKFUNC_CANTSEEK;
	if ((size_t)to < s->off) {
		s->resent = 1;
		return CURL_SEEKFUNC_FAIL;
	}
	s->off = to;
	return CURL_SEEKFUNC_OK;
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
	curl_easy_setopt(e, CURLOPT_READFUNCTION, body_read);
	curl_easy_setopt(e, CURLOPT_READDATA, s);
	curl_easy_setopt(e, CURLOPT_SEEKFUNCTION, body_seek);
	curl_easy_setopt(e, CURLOPT_SEEKDATA, s);
	wa_api_easy(e);
	curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, connect);
	curl_easy_setopt(e, CURLOPT_USERAGENT, "wa-send/" WA_VERSION);
	return e;
}

/*
 * The handle that POSTs s's request, with headers, timeouts in ms and
 * priv as CURLINFO_PRIVATE; s keeps it for its next request (how calls
 * share connections is api/multi.h's).
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
	curl_easy_setopt(e, CURLOPT_URL, s->rq.url.s);
	curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
	    (curl_off_t)s->rq.body.len);
	s->resp.len = 0;
	s->off = 0;
	s->resent = 0;
	return e;
}

/*
 * Sorts a call of s that ended without an answer. Failing to resolve,
 * connect or finish the TLS handshake means the request never left, and
 * says the API cannot be reached: an outage, retried without counting an
 * attempt. Unless its body had gone out already on a connection that then
 * died unanswered: libcurl connects again to send it once more (without
 * asking to rewind a body it counts as not yet sent, over HTTP/2), and it
 * is that connection which failed. That, and any other failure (timeout,
 * reset, nothing back) once request bytes may have been written, is
 * ambiguous: Meta may have the message.
 */
static void
curl_answer(struct wa_answer *a, CURLcode rc, struct wa_send *s)
{
	int sent = wa_send_left(s);

	memset(a, 0, sizeof *a);
	a->code = a->subcode = -1;
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
		sent = s->off > 0 || s->resent;
		break;
	default:
		break;
	}
	a->class = sent ? WA_AMBIGUOUS : WA_OUTAGE;
	snprintf(a->title, sizeof a->title, "%s (curl %d)%s",
	    curl_easy_strerror(rc), (int)rc, sent ?
	    ": the request may have arrived" : ": nothing was sent");
}

/* Whether request bytes of s's call may have left this host. */
int
wa_send_left(struct wa_send *s)
{
	curl_off_t pre = 0;
	long size = 0;

	curl_easy_getinfo(s->easy, CURLINFO_REQUEST_SIZE, &size);
	curl_easy_getinfo(s->easy, CURLINFO_PRETRANSFER_TIME_T, &pre);
	return size > 0 || pre > 0 || s->off > 0 || s->resent;
}

/*
 * The answer to the call of s that ended with rc. A request libcurl
 * would have sent again (body_seek refused) is ambiguous: the first copy
 * may have been taken.
 */
void
wa_send_answer(struct wa_answer *a, struct wa_send *s, CURLcode rc)
{
	const struct wa_buf *resp = &s->resp;
	long http = 0;

	curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &http);
	if (rc == CURLE_OK)
		wa_answer_http(a, http, resp->s ? resp->s : "", resp->len);
	else
		curl_answer(a, rc, s);
	if (!s->resent || a->class == WA_SENT)
		return;
	a->class = WA_AMBIGUOUS;
	a->code = a->subcode = -1;
	wa_answer_title(a, "the request may have arrived: its connection "
	    "closed unanswered, and a message is never sent twice");
}

void
wa_send_free(struct wa_send *s)
{
	wa_request_free(&s->rq);
	wa_buf_free(&s->resp);
	if (s->easy != NULL)
		curl_easy_cleanup(s->easy);
	s->easy = NULL;
}
