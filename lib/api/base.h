/*
 * api/base.h: where Cloud API calls go: $WA_API_BASE (wa-fake-api, a
 * proxy) or Meta's Graph API at the version wapipe speaks by default
 * (the Makefile's GRAPH_API_VERSION, compiled in as WA_GRAPH_API_VERSION).
 */
#ifndef WA_API_BASE_H
#define WA_API_BASE_H

#define WA_API_BASE "https://graph.facebook.com/" WA_GRAPH_API_VERSION

/* $WA_API_BASE without its trailing '/', or the default; exits 78. */
char *wa_api_base(void);

#endif
