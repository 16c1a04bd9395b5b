/*
 * graph.c: the token's header, and a GET of the Graph API over libcurl:
 * one kept handle (the calls of one check share a connection), TLS
 * verified, a timeout, at most GRAPH_MAX bytes of answer. Reads the
 * token from the environment; writes nothing but what it returns; the
 * URL it names in a message carries no token (that goes in a header).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/secret.h"
#include "records/json.h"
#include "api/base.h"
#include "api/graph.h"

#define GRAPH_MAX	(4 << 20)	/* bytes of an answer kept */
#define GRAPH_TIMEOUT	30000L		/* ms for a whole call */
#define GRAPH_CONNECT	10000L		/* ms to connect */

struct curl_slist *
wa_api_auth(struct curl_slist *h)
{
	char *tok = wa_secret("WA_TOKEN");
	struct curl_slist *t;
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
	t = curl_slist_append(h, auth.s);
	explicit_bzero(auth.s, auth.len);
	wa_buf_free(&auth);
	if (t == NULL)
		wa_die(EX_OSERR, "out of memory");
	return t;
}

static size_t
collect(char *p, size_t size, size_t n, void *arg)
{
	struct wa_buf *b = arg;

	if (b->len + size * n > GRAPH_MAX)
		return 0;	/* too long: the call fails */
	wa_buf_add(b, p, size * n);
	return size * n;
}

/* The handle, made once with the token's header; NULL if curl fails. */
static CURL *
handle(void)
{
	static struct curl_slist *headers;
	static CURL *e;

	if (e != NULL)
		return e;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	headers = wa_api_auth(NULL);
	if ((e = curl_easy_init()) == NULL)
		return NULL;
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, collect);
	wa_api_easy(e);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, GRAPH_TIMEOUT);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, GRAPH_CONNECT);
	curl_easy_setopt(e, CURLOPT_USERAGENT, "wapipe/" WA_VERSION);
	return e;
}

/* The URL of path and args under the base, into u; 0, or -1. */
static int
url(CURL *e, struct wa_buf *u, const char *path, const char *const *args)
{
	char *base = wa_api_base(), *v;
	int i;

	wa_buf_printf(u, "%s/%s", base, path);
	free(base);
	for (i = 0; args != NULL && args[i] != NULL; i += 2) {
		if ((v = curl_easy_escape(e, args[i + 1] ? args[i + 1] : "",
		    0)) == NULL)
			return -1;
		wa_buf_printf(u, "%c%s=%s", i == 0 ? '?' : '&', args[i], v);
		curl_free(v);
	}
	return 0;
}

/* Why an HTTP answer of status http, body b, is not one: in why. */
static void
http_error(long http, const struct wa_buf *b, const char *path, char *why,
    size_t size)
{
	struct json_tokener *tok = wa_json_tokener();
	struct json_object *o = NULL;
	const char *msg;
	char text[300];
	int64_t code = -1, sub = -1;

	if (b->len > 0)
		o = json_tokener_parse_ex(tok, b->s, b->len);
	json_tokener_free(tok);
	msg = wa_json_str(o, "error.message");
	if (msg != NULL) {
		wa_utf8_copy(text, sizeof text, msg, strlen(msg));
		wa_json_int(o, "error.code", &code);
		wa_json_int(o, "error.error_subcode", &sub);
		if (sub >= 0)
			snprintf(why, size, "GET %s: HTTP %ld, Graph error "
			    "%lld (subcode %lld): %s", path, http,
			    (long long)code, (long long)sub, text);
		else
			snprintf(why, size, "GET %s: HTTP %ld, Graph error "
			    "%lld: %s", path, http, (long long)code, text);
	} else
		snprintf(why, size, "GET %s: HTTP %ld with a body that is not "
		    "Graph's error", path, http);
	json_object_put(o);
}

int
wa_graph_get(const char *path, const char *const *args,
    struct json_object **out, char *why, size_t size)
{
	struct wa_buf u = { 0 }, b = { 0 };
	struct json_tokener *tok;
	char err[CURL_ERROR_SIZE] = "", bad[160];
	CURL *e = handle();
	CURLcode rc;
	long http = 0;
	int ret = -1;

	*out = NULL;
	if (e == NULL || url(e, &u, path, args) < 0) {
		snprintf(why, size, "GET %s: libcurl failed", path);
		goto done;
	}
	curl_easy_setopt(e, CURLOPT_URL, u.s);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, err);
	curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
	if ((rc = curl_easy_perform(e)) != CURLE_OK) {
		snprintf(why, size, "GET %s: %s (curl %d)%s%s", path,
		    curl_easy_strerror(rc), (int)rc, *err ? ": " : "", err);
		goto done;
	}
	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &http);
	if (http < 200 || http > 299) {
		http_error(http, &b, path, why, size);
		goto done;
	}
	tok = wa_json_tokener();
	*out = wa_json_parse(tok, b.s ? b.s : "", b.len, 0, WA_JSON_DEPTH,
	    bad, sizeof bad);
	json_tokener_free(tok);
	if (*out == NULL)
		snprintf(why, size, "GET %s: HTTP %ld with a body that is not "
		    "JSON: %s", path, http, bad);
	else
		ret = 0;
done:
	if (e != NULL)
		curl_easy_setopt(e, CURLOPT_ERRORBUFFER, NULL);
	wa_buf_free(&u);
	wa_buf_free(&b);
	return ret;
}
