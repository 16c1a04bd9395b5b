/*
 * spool/httpd.h: the listening end shared by the HTTP servers (wa-fake-api,
 * wa-webhook), on libmicrohttpd; and the defences of one that faces the
 * internet (wa-webhook).
 */
#ifndef WA_SPOOL_HTTPD_H
#define WA_SPOOL_HTTPD_H

#include <stddef.h>

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

/*
 * The edge: threads event loops (epoll) serve up to max_connections at
 * once, each connection holding at most memory bytes for its headers and
 * reads. A connection has header_s seconds from its start, or from the
 * end of its previous request, to send a request's headers, then body_s
 * seconds to send the body; past that it is closed. When the open
 * connections pass 7/8 of max_connections, those that have waited longest
 * for headers are closed until 3/4 remain. per_address caps the
 * connections from one address (0: no cap). The handler may suspend a
 * connection (its drain must resume them all). done, when not NULL, is
 * called when a request ends (MHD_OPTION_NOTIFY_COMPLETED); tick, when
 * not NULL, after each sweep (every 100 ms), from the serving thread.
 */
struct wa_httpd_edge {
	unsigned	 max_connections;
	unsigned	 per_address;
	unsigned	 header_s;
	unsigned	 body_s;
	unsigned	 threads;
	size_t		 memory;
	MHD_RequestCompletedCallback done;
	void		*done_cls;
	void		(*tick)(void);
};

/* What the edge did, for metrics. */
struct wa_httpd_stats {
	unsigned long long open;		/* connections now */
	unsigned long long header_timeouts;	/* closed: headers too slow */
	unsigned long long body_timeouts;	/* closed: body too slow */
	unsigned long long crowded;		/* closed to make room */
};

/*
 * Like wa_httpd_start, guarded by e (one edge a process). Raises the
 * file-descriptor limit to its hard limit, and lowers e->max_connections,
 * saying so, when even that is too low for it.
 */
struct MHD_Daemon *wa_httpd_start_edge(const char *listen,
    const char *port_file, struct wa_httpd_edge *e,
    MHD_AccessHandlerCallback fn, void *cls);
void wa_httpd_stats(struct wa_httpd_stats *s);

#endif
