/*
 * api/base.h: where Cloud API calls go: $WA_API_BASE (wa-fake-api, a
 * proxy) or Meta's Graph API, one version of it.
 */
#ifndef WA_API_BASE_H
#define WA_API_BASE_H

#define WA_API_BASE "https://graph.facebook.com/v21.0"

/* $WA_API_BASE without its trailing '/', or the default; exits 78. */
char *wa_api_base(void);

#endif
