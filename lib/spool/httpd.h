/*
 * spool/httpd.h: the listening end shared by the HTTP servers (wa-fake-api,
 * wa-webhook), on libmicrohttpd.
 */
#ifndef WA_SPOOL_HTTPD_H
#define WA_SPOOL_HTTPD_H

#include <microhttpd.h>

/*
 * Listens on listen ("ADDR:PORT", port 0: any), writing the port to
 * port_file when not NULL; exits 69 or 64 when it cannot.
 */
struct MHD_Daemon *wa_httpd_start(const char *listen, const char *port_file,
    unsigned int flags, MHD_AccessHandlerCallback fn, void *cls,
    const struct MHD_OptionItem *opts);
/* Serves until SIGTERM or SIGINT, calling drain(arg) when stopping. */
void wa_httpd_serve(struct MHD_Daemon *d, void (*drain)(void *), void *arg);
void wa_httpd_run(struct MHD_Daemon *d);

#endif
