/*
 * wa_httpd.h: the listening end shared by the HTTP servers (wa-fake-api,
 * wa-webhook), on libmicrohttpd.
 */
#ifndef WA_HTTPD_H
#define WA_HTTPD_H

#include <microhttpd.h>

struct MHD_Daemon *wa_httpd_start(const char *, const char *, unsigned int,
    MHD_AccessHandlerCallback, void *, const struct MHD_OptionItem *);
void wa_httpd_run(struct MHD_Daemon *);
void wa_httpd_serve(struct MHD_Daemon *, void (*)(void *), void *);

#endif
