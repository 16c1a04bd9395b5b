/*
 * base.c: the base URL of every Cloud API call and the Graph API version
 * it speaks, read from the environment once per program: wa-send's
 * requests and wa-campaign run --dry-run's show the same URL, and the
 * version wa-send warns about is the one wa-campaign status shows.
 *
 * WA_API_BASE, when set, is the whole base, version included (the fake,
 * a proxy): the version is the last part of its path when that is one
 * ("v25.0"); a base that names none is taken to speak the default.
 * Else the base is Graph's at WA_API_VERSION, or at the default. Exits
 * 78 when both are set, on a malformed WA_API_VERSION, and on a base
 * that is not an http(s) URL.
 *
 * Every call's TLS is verified; WA_CA_FILE, when set, names the
 * certificates trusted instead of the system's (a TLS proxy's, a
 * rehearsal's own): exits 78 when it cannot be read.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "api/base.h"
#include "api/version.h"

static struct {
	char		*base;
	const char	*version;
	const char	*from;
	const char	*ca;
} api;

static void
resolve(void)
{
	const char *b = getenv("WA_API_BASE"), *v = getenv("WA_API_VERSION");
	char *path, *last;
	size_t n;

	if (api.base != NULL)
		return;
	if (!wa_api_version_valid(WA_GRAPH_API_VERSION))
		wa_die(EX_SOFTWARE, "built with GRAPH_API_VERSION=%s, not a "
		    "version like v25.0", WA_GRAPH_API_VERSION);
	api.version = WA_GRAPH_API_VERSION;
	api.from = "default";
	api.ca = getenv("WA_CA_FILE");
	if (api.ca != NULL && !*api.ca)
		api.ca = NULL;
	if (api.ca != NULL && access(api.ca, R_OK) < 0)
		wa_die(EX_CONFIG, "WA_CA_FILE %s:", api.ca);
	if (v != NULL && *v) {
		if (!wa_api_version_valid(v))
			wa_die(EX_CONFIG, "WA_API_VERSION must be a Graph API "
			    "version like %s, not \"%.32s\"",
			    WA_GRAPH_API_VERSION, v);
		if (b != NULL && *b)
			wa_die(EX_CONFIG, "WA_API_BASE and WA_API_VERSION are "
			    "both set: WA_API_BASE is the whole base, its "
			    "version included; set one of them");
		api.version = wa_strdup(v);
		api.from = "WA_API_VERSION";
	}
	if (b == NULL || !*b) {
		api.base = wa_alloc(sizeof WA_API_HOST + strlen(api.version) +
		    1);
		strcpy(api.base, WA_API_HOST "/");
		strcat(api.base, api.version);
		return;
	}
	api.base = wa_strdup(b);
	n = strlen(api.base);
	while (n > 0 && api.base[n - 1] == '/')
		api.base[--n] = '\0';
	if (strncmp(api.base, "https://", 8) != 0 &&
	    strncmp(api.base, "http://", 7) != 0)
		wa_die(EX_CONFIG, "WA_API_BASE must be an http(s) URL");
	path = strchr(strstr(api.base, "://") + 3, '/');
	if (path != NULL && (last = strrchr(path, '/')) != NULL &&
	    wa_api_version_valid(last + 1)) {
		api.version = last + 1;
		api.from = "WA_API_BASE";
	}
}

char *
wa_api_base(void)
{
	resolve();
	return wa_strdup(api.base);
}

const char *
wa_api_version(const char **from)
{
	resolve();
	if (from != NULL)
		*from = api.from;
	return api.version;
}

/* Sets e's protocols and TLS: verified, against WA_CA_FILE when set. */
void
wa_api_easy(CURL *e)
{
	resolve();
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
	if (api.ca != NULL)
		curl_easy_setopt(e, CURLOPT_CAINFO, api.ca);
}
