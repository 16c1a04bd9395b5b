/*
 * httpd.c: starts a libmicrohttpd daemon on "ADDR:PORT" ("[ADDR6]:PORT"
 * for IPv6; port 0 picks a free one) and writes the port it got to a file,
 * so tests and scripts can run several servers side by side; then serves
 * until SIGTERM or SIGINT.
 *
 * The edge (wa_httpd_start_edge) guards a server that faces the internet,
 * where libmicrohttpd alone does not: its timeout counts idle time, so a
 * client that sends a byte now and then keeps a connection for ever. Here
 * every connection is on one of two lists, in the order it entered it:
 * waiting for a request's headers, or sending a body. A sweep every
 * SWEEP_MS closes, by shutdown(2), the heads whose time is up, and, when
 * the server is crowded, the connections that have waited longest; the
 * thread that owns the connection then sees the end of its stream and
 * frees it. A connection whose body is in (the handler has it) is on no
 * list: the wait is then ours, not the client's.
 */
#include <sys/resource.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/sig.h"
#include "spool/httpd.h"

#define SWEEP_MS	100

enum phase { WAITING, SENDING, OURS, CLOSING };

struct conn {
	struct conn	*prev, *next;
	int64_t		 since;		/* ms: when it entered its phase */
	int		 fd;
	enum phase	 phase;
};

struct list {
	struct conn	*head, *tail;
};

static struct {
	pthread_mutex_t	 mu;
	int		 on;
	struct wa_httpd_edge e;
	MHD_AccessHandlerCallback fn;
	void		*cls;
	struct list	 lists[2];	/* WAITING, SENDING */
	unsigned	 closing;	/* shut down, not yet freed */
	struct wa_httpd_stats st;
} edge = { .mu = PTHREAD_MUTEX_INITIALIZER };

static int
parse(const char *listen, struct sockaddr_storage *ss)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	char host[256];
	const char *colon = strrchr(listen, ':');
	size_t n;
	long port;
	char *end;

	if (colon == NULL || (n = colon - listen) >= sizeof host)
		return -1;
	port = strtol(colon + 1, &end, 10);
	if (colon[1] == '\0' || *end != '\0' || port < 0 || port > 65535)
		return -1;
	memcpy(host, listen, n);
	host[n] = '\0';
	memset(ss, 0, sizeof *ss);
	if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
		host[n - 1] = '\0';
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		return inet_pton(AF_INET6, host + 1, &in6->sin6_addr) == 1 ?
		    0 : -1;
	}
	in4->sin_family = AF_INET;
	in4->sin_port = htons(port);
	if (n == 0 || strcmp(host, "*") == 0)
		return 0;
	return inet_pton(AF_INET, host, &in4->sin_addr) == 1 ? 0 : -1;
}

static void
write_port(const char *path, unsigned port)
{
	struct wa_buf tmp = { 0 };
	FILE *f;

	wa_buf_printf(&tmp, "%s.tmp", path);
	if ((f = fopen(tmp.s, "w")) == NULL)
		wa_die(EX_CANTCREAT, "open %s:", tmp.s);
	fprintf(f, "%u\n", port);
	if (fclose(f) != 0 || rename(tmp.s, path) != 0)
		wa_die(EX_IOERR, "write %s:", path);
	wa_buf_free(&tmp);
}

/*
 * Starts serving fn on listen with MHD flags and extra options (may be
 * NULL), and writes the bound port to port_file when it is not NULL.
 * Exits 64 on a bad address, 69 when the daemon cannot start.
 */
struct MHD_Daemon *
wa_httpd_start(const char *listen, const char *port_file, unsigned int flags,
    MHD_AccessHandlerCallback fn, void *cls, const struct MHD_OptionItem *opts)
{
	static const struct MHD_OptionItem none[] = {
		{ MHD_OPTION_END, 0, NULL }
	};
	struct sockaddr_storage ss;
	const union MHD_DaemonInfo *info;
	struct MHD_Daemon *d;

	if (parse(listen, &ss) < 0)
		wa_die(EX_USAGE, "'%s' is not ADDR:PORT", listen);
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	d = MHD_start_daemon(flags, 0, NULL, NULL, fn, cls,
	    MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
	    MHD_OPTION_ARRAY, opts ? opts : none, MHD_OPTION_END);
	if (d == NULL)
		wa_die(EX_UNAVAILABLE, "cannot listen on %s", listen);
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	if (port_file != NULL && info != NULL)
		write_port(port_file, info->port);
	return d;
}

/* Takes c off its list, if it is on one; under edge.mu. */
static void
unlink_conn(struct conn *c)
{
	struct list *l;

	if (c->phase != WAITING && c->phase != SENDING)
		return;
	l = &edge.lists[c->phase];
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		l->head = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	else
		l->tail = c->prev;
	c->prev = c->next = NULL;
}

/* Moves c to phase, at the tail of its list; under edge.mu. */
static void
enter(struct conn *c, enum phase phase, int64_t now)
{
	struct list *l;

	unlink_conn(c);
	c->phase = phase;
	c->since = now;
	if (phase != WAITING && phase != SENDING)
		return;
	l = &edge.lists[phase];
	c->prev = l->tail;
	if (l->tail != NULL)
		l->tail->next = c;
	else
		l->head = c;
	l->tail = c;
}

/*
 * Closes c's stream under the thread that serves it, which then closes
 * the connection; under edge.mu, which MHD_CONNECTION_NOTIFY_CLOSED also
 * takes before the socket is closed, so the descriptor is still c's.
 */
static void
cut(struct conn *c, unsigned long long *why)
{
	shutdown(c->fd, SHUT_RDWR);
	enter(c, CLOSING, 0);
	edge.closing++;
	(*why)++;
}

/* Closes the connections out of time, then makes room if crowded. */
static void
sweep(void)
{
	int64_t now = wa_now_ms();
	struct list *w = &edge.lists[WAITING], *s = &edge.lists[SENDING];
	unsigned high = edge.e.max_connections - edge.e.max_connections / 8;
	unsigned low = edge.e.max_connections - edge.e.max_connections / 4;

	pthread_mutex_lock(&edge.mu);
	while (w->head != NULL &&
	    now - w->head->since >= (int64_t)edge.e.header_s * 1000)
		cut(w->head, &edge.st.header_timeouts);
	while (s->head != NULL &&
	    now - s->head->since >= (int64_t)edge.e.body_s * 1000)
		cut(s->head, &edge.st.body_timeouts);
	if (edge.st.open - edge.closing > high)
		while (w->head != NULL && edge.st.open - edge.closing > low)
			cut(w->head, &edge.st.crowded);
	pthread_mutex_unlock(&edge.mu);
}

static void
notify(void *cls, struct MHD_Connection *mc, void **ctx,
    enum MHD_ConnectionNotificationCode code)
{
	const union MHD_ConnectionInfo *fd;
	struct conn *c = *ctx;

	(void)cls;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		fd = MHD_get_connection_info(mc,
		    MHD_CONNECTION_INFO_CONNECTION_FD);
		c = wa_alloc(sizeof *c);
		c->fd = fd != NULL ? fd->connect_fd : -1;
		c->phase = OURS;
		pthread_mutex_lock(&edge.mu);
		edge.st.open++;
		if (c->fd >= 0)
			enter(c, WAITING, wa_now_ms());
		pthread_mutex_unlock(&edge.mu);
		*ctx = c;
	} else if (c != NULL) {
		pthread_mutex_lock(&edge.mu);
		edge.st.open--;
		if (c->phase == CLOSING)
			edge.closing--;
		unlink_conn(c);
		pthread_mutex_unlock(&edge.mu);
		free(c);
		*ctx = NULL;
	}
}

static struct conn *
conn_of(struct MHD_Connection *mc)
{
	const union MHD_ConnectionInfo *i;

	i = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return i != NULL ? i->socket_context : NULL;
}

/*
 * Before the handler: its first call for a request starts the body's
 * time; the last (no data) ends it.
 */
static enum MHD_Result
handle(void *cls, struct MHD_Connection *mc, const char *url,
    const char *method, const char *version, const char *data, size_t *n,
    void **state)
{
	struct conn *c = conn_of(mc);

	(void)cls;
	if (c != NULL) {
		pthread_mutex_lock(&edge.mu);
		if (c->phase == WAITING)
			enter(c, SENDING, wa_now_ms());
		else if (c->phase == SENDING && *n == 0)
			enter(c, OURS, 0);
		pthread_mutex_unlock(&edge.mu);
	}
	return edge.fn(edge.cls, mc, url, method, version, data, n, state);
}

/* A request ended: the connection waits for the next one's headers. */
static void
completed(void *cls, struct MHD_Connection *mc, void **state,
    enum MHD_RequestTerminationCode how)
{
	struct conn *c = conn_of(mc);

	(void)cls;
	if (c != NULL) {
		pthread_mutex_lock(&edge.mu);
		if (c->phase != CLOSING)
			enter(c, WAITING, wa_now_ms());
		pthread_mutex_unlock(&edge.mu);
	}
	if (edge.e.done != NULL)
		edge.e.done(edge.e.done_cls, mc, state, how);
}

/*
 * Raises the soft limit on file descriptors to the hard one; returns how
 * many connections it leaves room for, besides reserve descriptors.
 */
static unsigned
fd_room(unsigned reserve)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 1024 - reserve;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 1u << 30)
		return 1u << 30;
	return rl.rlim_cur > reserve + 16 ? rl.rlim_cur - reserve : 16;
}

struct MHD_Daemon *
wa_httpd_start_edge(const char *listen, const char *port_file,
    struct wa_httpd_edge *e, MHD_AccessHandlerCallback fn, void *cls)
{
	unsigned room = fd_room(64 + 2 * e->threads);
	struct MHD_OptionItem opts[] = {
		{ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)notify, NULL },
		{ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, NULL },
		{ MHD_OPTION_CONNECTION_LIMIT, 0, NULL },
		{ MHD_OPTION_PER_IP_CONNECTION_LIMIT, e->per_address, NULL },
		{ MHD_OPTION_CONNECTION_TIMEOUT, e->header_s + e->body_s,
		    NULL },
		{ MHD_OPTION_CONNECTION_MEMORY_LIMIT, e->memory, NULL },
		{ MHD_OPTION_THREAD_POOL_SIZE, e->threads, NULL },
		{ MHD_OPTION_STRICT_FOR_CLIENT, 1, NULL },
		{ MHD_OPTION_END, 0, NULL }
	};

	if (e->max_connections > room) {
		wa_warn("serving at most %u connections, not %u: the limit "
		    "on open files is too low for more", room,
		    e->max_connections);
		e->max_connections = room;
	}
	opts[2].value = e->max_connections;
	edge.e = *e;
	edge.fn = fn;
	edge.cls = cls;
	edge.on = 1;
	return wa_httpd_start(listen, port_file,
	    MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME, handle,
	    NULL, opts);
}

void
wa_httpd_stats(struct wa_httpd_stats *s)
{
	pthread_mutex_lock(&edge.mu);
	*s = edge.st;
	pthread_mutex_unlock(&edge.mu);
}

/*
 * Serves until SIGTERM or SIGINT, sweeping the edge if there is one; then
 * calls drain(arg) when it is not NULL, which must resume every suspended
 * connection (MHD cannot stop with one, see wa_later_drain), and stops
 * the daemon.
 */
void
wa_httpd_serve(struct MHD_Daemon *d, void (*drain)(void *), void *arg)
{
	while (!wa_stopping) {
		wa_sleep_ms(edge.on ? SWEEP_MS : 1000);
		if (edge.on)
			sweep();
		if (edge.on && edge.e.tick != NULL)
			edge.e.tick();
	}
	if (drain != NULL)
		drain(arg);
	MHD_stop_daemon(d);
}
