/*
 * multi.c: a libcurl multi handle driven by epoll (curl_multi_socket_action).
 *
 * libcurl says which sockets it wants watched and when it next needs a
 * timeout; a wait polls the epoll descriptor (and one more descriptor of
 * the caller's, such as stdin) with the caught signals let in, then hands
 * libcurl the ready sockets only. curl_multi_perform and curl_multi_poll
 * walk every transfer on every wake-up instead: with hundreds in flight
 * and answers arriving one by one, that walk is most of the CPU.
 *
 * Over TLS the calls share few connections: HTTP/2 carries up to
 * STREAMS calls on one, so at most one connection per STREAMS calls is
 * opened, and a call waits for ALPN to tell whether a connection
 * multiplexes rather than opening one more; a server that answers over
 * HTTP/1.x gets one connection per call instead. Plain HTTP is HTTP/1.1,
 * where waiting would serialise the calls behind the first answer.
 * Connections opened are counted (wa_send_connections_total).
 *
 * STREAMS is 25, not the 100 a server must allow (RFC 9113 6.5.2): in
 * libcurl 7.88 a call costs more CPU the more calls share its
 * connection, 1.7 times as much with 100 on one as with 25 (paced at
 * 1,000 a second, 250 ms each: bench/send.sh).
 *
 * A caller with room for more calls than it has (a pace, not the bound,
 * sets the work) asks the wait to gather: it then wakes at most every
 * WA_GATHER_MS (core/sig.h), and takes the answers and lines of those
 * milliseconds in one round instead of a wake-up each. A caller whose
 * calls fill the bound does not gather: it wakes at the first answer.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/err.h"
#include "core/metrics.h"
#include "core/sig.h"
#include "api/multi.h"

#define STREAMS		25	/* calls on one HTTP/2 connection */

struct wa_multi {
	CURLM		*multi;
	int		 ep;		/* the epoll descriptor */
	int64_t		 due;		/* ms of libcurl's timeout, or -1 */
	int64_t		 woke;		/* ms of the last wake-up */
	long		 calls;		/* the most calls at once */
	long		 tls;		/* 1 over TLS: calls wait for ALPN */
	int		 narrow;	/* connections per host bounded */
	struct wa_metric *opened;	/* connections */
};

/* What libcurl wants watched; sockp remembers it (+1), to skip repeats. */
static int
sockets(CURL *e, curl_socket_t s, int what, void *arg, void *sockp)
{
	struct wa_multi *m = arg;
	struct epoll_event ev = { 0 };
	intptr_t had = (intptr_t)sockp;

	(void)e;
	if (what == CURL_POLL_REMOVE) {
		epoll_ctl(m->ep, EPOLL_CTL_DEL, s, NULL);
		return 0;
	}
	if (had == what + 1)
		return 0;
	ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0) |
	    (what & CURL_POLL_OUT ? EPOLLOUT : 0);
	ev.data.fd = s;
	if (epoll_ctl(m->ep, had ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, s, &ev) < 0 &&
	    epoll_ctl(m->ep, had ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, s, &ev) < 0)
		wa_warn("epoll_ctl:");
	curl_multi_assign(m->multi, s, (void *)(intptr_t)(what + 1));
	return 0;
}

static int
timer(CURLM *multi, long ms, void *arg)
{
	struct wa_multi *m = arg;

	(void)multi;
	m->due = ms < 0 ? -1 : wa_now_ms() + ms;
	return 0;
}

/*
 * A multi handle for up to calls calls at once: as many connections over
 * plain HTTP, one per STREAMS calls over TLS (tls), until an answer comes
 * over HTTP/1.x.
 */
struct wa_multi *
wa_multi_new(long calls, int tls)
{
	struct wa_multi *m = wa_alloc(sizeof *m);

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0 ||
	    (m->multi = curl_multi_init()) == NULL ||
	    (m->ep = epoll_create1(EPOLL_CLOEXEC)) < 0)
		wa_die(EX_SOFTWARE, "libcurl would not start:");
	m->due = -1;
	curl_multi_setopt(m->multi, CURLMOPT_SOCKETFUNCTION, sockets);
	curl_multi_setopt(m->multi, CURLMOPT_SOCKETDATA, m);
	curl_multi_setopt(m->multi, CURLMOPT_TIMERFUNCTION, timer);
	curl_multi_setopt(m->multi, CURLMOPT_TIMERDATA, m);
	curl_multi_setopt(m->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, calls);
	curl_multi_setopt(m->multi, CURLMOPT_MAXCONNECTS, calls);
	m->calls = calls;
	m->tls = tls != 0;
	if ((m->narrow = tls)) {
		curl_multi_setopt(m->multi, CURLMOPT_MAX_HOST_CONNECTIONS,
		    (calls + STREAMS - 1) / STREAMS);
		curl_multi_setopt(m->multi, CURLMOPT_MAX_CONCURRENT_STREAMS,
		    (long)STREAMS);
	}
	m->opened = wa_counter("wa_send_connections_total", NULL,
	    "Connections opened to the API.");
	return m;
}

/* A socket for a connection libcurl opens: counted. */
static curl_socket_t
opening(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct wa_multi *m = arg;

	(void)purpose;
	wa_metric_add(m->opened, 1);
	return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

/* Starts e's call; exits if libcurl will not. */
void
wa_multi_add(struct wa_multi *m, CURL *e)
{
	curl_easy_setopt(e, CURLOPT_PIPEWAIT, m->tls);
	curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, opening);
	curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, m);
	if (curl_multi_add_handle(m->multi, e) != CURLM_OK)
		wa_die(EX_SOFTWARE, "curl_multi_add_handle failed");
}

/* After e's call: widens the bound if e spoke HTTP/1.x. */
void
wa_multi_ended(struct wa_multi *m, CURL *e)
{
	long v = 0;

	if (!m->narrow)
		return;
	curl_easy_getinfo(e, CURLINFO_HTTP_VERSION, &v);
	if (v == CURL_HTTP_VERSION_1_0 || v == CURL_HTTP_VERSION_1_1) {
		curl_multi_setopt(m->multi, CURLMOPT_MAX_HOST_CONNECTIONS,
		    m->calls);
		m->narrow = 0;
	}
}

CURLM *
wa_multi_handle(struct wa_multi *m)
{
	return m->multi;
}

/* Runs libcurl's timeouts now (after adding transfers, say). */
void
wa_multi_kick(struct wa_multi *m)
{
	int running;

	m->due = -1;
	curl_multi_socket_action(m->multi, CURL_SOCKET_TIMEOUT, 0, &running);
}

/*
 * Waits up to timeout ms for libcurl's sockets or timer, or for fd (when
 * >= 0) to be readable; lets libcurl act on what is ready, a few sockets
 * at a time, so that the caller starts new calls while the server works
 * on others rather than in one burst after a whole round. Gathering, the
 * wait first lets WA_GATHER_MS pass since the last wake-up (at most timeout
 * ms), unless that wake-up left sockets ready. Signals get in only
 * during the wait. Returns whether fd is readable.
 */
int
wa_multi_wait(struct wa_multi *m, int fd, int timeout, int gather)
{
	struct pollfd p[2] = { { m->ep, POLLIN, 0 }, { fd, POLLIN, 0 } };
	struct epoll_event ev[8];
	int64_t now = wa_now_ms(), end = now + timeout;
	int64_t gathered = m->woke + WA_GATHER_MS;
	int i, n, flags, running;

	if (gather && gathered > now && end > now) {
		if (wa_wait(NULL, 0, (int)((gathered < end ? gathered : end) -
		    now)) < 0)
			return 0;
		now = wa_now_ms();
	}
	if (m->due >= 0 && m->due < end)
		end = m->due;
	if (wa_wait(p, fd >= 0 ? 2 : 1, end > now ? (int)(end - now) : 0) < 0)
		return 0;
	m->woke = wa_now_ms();
	if (p[0].revents & POLLIN) {
		n = epoll_wait(m->ep, ev, (int)(sizeof ev / sizeof *ev), 0);
		for (i = 0; i < n; i++) {
			flags = (ev[i].events & EPOLLIN ? CURL_CSELECT_IN : 0) |
			    (ev[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
			    (ev[i].events & (EPOLLERR | EPOLLHUP) ?
			    CURL_CSELECT_ERR : 0);
			curl_multi_socket_action(m->multi, ev[i].data.fd, flags,
			    &running);
		}
		/* More may be ready: the next wait gathers nothing first. */
		if (n == (int)(sizeof ev / sizeof *ev))
			m->woke = 0;
	}
	if (m->due >= 0 && wa_now_ms() >= m->due)
		wa_multi_kick(m);
	return fd >= 0 && (p[1].revents & (POLLIN | POLLHUP)) != 0;
}

void
wa_multi_free(struct wa_multi *m)
{
	curl_multi_cleanup(m->multi);
	close(m->ep);
	curl_global_cleanup();
	free(m);
}
