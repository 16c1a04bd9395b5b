/*
 * api/base.h: where Cloud API calls go and the Graph API version they
 * speak: $WA_API_BASE whole (wa-fake-api, a proxy), or Meta's Graph API
 * at $WA_API_VERSION, else at the default (the Makefile's
 * GRAPH_API_VERSION, compiled in as WA_GRAPH_API_VERSION).
 */
#ifndef WA_API_BASE_H
#define WA_API_BASE_H

#include <curl/curl.h>

#define WA_API_HOST "https://graph.facebook.com"

/* The base URL, without a trailing '/'; exits 78 on a bad setting. */
char *wa_api_base(void);

/*
 * The version in use: WA_API_BASE's when its path ends in one, else
 * WA_API_VERSION's, else the default; *from (when from is not NULL)
 * says which: "WA_API_BASE", "WA_API_VERSION" or "default". Exits 78
 * on a bad setting.
 */
const char *wa_api_version(const char **from);

/*
 * Sets what every call's handle shares: no signals, http(s) only, TLS
 * verified, against the certificates of $WA_CA_FILE when it is set.
 * Exits 78 on a bad setting.
 */
void wa_api_easy(CURL *e);

#endif
