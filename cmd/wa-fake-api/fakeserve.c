/*
 * fakeserve.c: the HTTP side of wa-fake-api. Reads each request whole
 * (at most WA_FAKE_BODY_MAX of body is kept) with its query's arguments
 * (decoded; one that is not UTF-8 is dropped) and its Host, lets
 * wa_fake_handle decide,
 * then answers now, or holds the connection (later.c) until its
 * delay is over, or closes it unanswered; a hang is held until the server
 * stops.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <json-c/json.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/sig.h"
#include "spool/httpd.h"
#include "fakeapi.h"
#include "later.h"

struct server {
	struct wa_fake	*fake;
	struct wa_later	*later;
};

/* One request, from its headers to the end of the connection's use. */
struct call {
	struct wa_buf	 body;
	int		 too_big;
	int		 decided;
	struct wa_fake_reply reply;
	struct wa_later_item later;
};

static enum MHD_Result
answer(struct MHD_Connection *conn, struct call *c)
{
	struct MHD_Response *res;
	enum MHD_Result ret;

	if (c->reply.how != WA_FAKE_ANSWER)
		return MHD_NO;		/* MHD closes the connection */
	res = MHD_create_response_from_buffer(c->reply.body.len,
	    c->reply.body.s, MHD_RESPMEM_MUST_COPY);
	if (res == NULL)
		return MHD_NO;
	MHD_add_response_header(res, MHD_HTTP_HEADER_CONTENT_TYPE,
	    c->reply.ctype);
	ret = MHD_queue_response(conn, c->reply.http, res);
	MHD_destroy_response(res);
	return ret;
}

/* A query's argument, decoded, into the object cls (the last wins). */
static enum MHD_Result
arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	(void)kind;
	if (wa_utf8_valid(key, strlen(key)) && (value == NULL ||
	    wa_utf8_valid(value, strlen(value))))
		json_object_object_add(cls, key,
		    json_object_new_string(value ? value : ""));
	return MHD_YES;
}

/*
 * MHD calls this once for the headers, once per piece of body, once when
 * the body is complete (decide, then answer or hold), and once more for a
 * held request when the timer resumes it.
 */
static enum MHD_Result
serve(void *cls, struct MHD_Connection *conn, const char *url,
    const char *method, const char *version, const char *data,
    size_t *size, void **ptr)
{
	struct server *s = cls;
	struct call *c = *ptr;
	struct wa_fake_call k;
	int64_t due;

	(void)version;
	if (c == NULL) {
		*ptr = wa_alloc(sizeof *c);
		return MHD_YES;
	}
	if (*size > 0) {
		if (c->body.len + *size <= WA_FAKE_BODY_MAX)
			wa_buf_add(&c->body, data, *size);
		else
			c->too_big = 1;
		*size = 0;
		return MHD_YES;
	}
	if (c->decided)
		return c->later.woke == WA_LATER_DUE ? answer(conn, c) : MHD_NO;
	c->decided = 1;
	k.method = method;
	k.url = url;
	k.query = json_object_new_object();
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, arg, k.query);
	k.host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_HOST);
	k.auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_AUTHORIZATION);
	k.body = c->too_big ? NULL : c->body.s ? c->body.s : "";
	k.len = c->body.len;
	wa_fake_handle(s->fake, &k, &c->reply);
	json_object_put(k.query);
	if (c->reply.how == WA_FAKE_NEVER || c->reply.delay_ms > 0) {
		due = c->reply.how == WA_FAKE_NEVER ? INT64_MAX :
		    wa_now_ns() + c->reply.delay_ms * 1000000;
		return wa_later_hold(s->later, &c->later, conn, due) == 0 ?
		    MHD_YES : MHD_NO;
	}
	return answer(conn, c);
}

static void
done(void *cls, struct MHD_Connection *conn, void **ptr,
    enum MHD_RequestTerminationCode why)
{
	struct call *c = *ptr;

	(void)cls;
	(void)conn;
	(void)why;
	if (c == NULL)
		return;
	wa_buf_free(&c->body);
	wa_fake_reply_free(&c->reply);
	free(c);
	*ptr = NULL;
}

/* Room for many held connections: up to the hard limit on descriptors. */
static unsigned int
max_connections(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 1000;
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur > 100064)
		return 100000;
	return rl.rlim_cur > 128 ? rl.rlim_cur - 64 : 64;
}

/*
 * Serves f on listen ("ADDR:PORT"; the port goes to port_file when not
 * NULL) with a pool of threads, saying so on stderr, until SIGTERM or
 * SIGINT; connections still held are then closed.
 */
void
wa_fake_serve(struct wa_fake *f, const char *listen, const char *port_file,
    int threads)
{
	struct server s = { f, wa_later_start() };
	struct MHD_OptionItem opts[] = {
		{ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)done, NULL },
		{ MHD_OPTION_CONNECTION_LIMIT, max_connections(), NULL },
		{ MHD_OPTION_THREAD_POOL_SIZE, threads, NULL },
		{ MHD_OPTION_END, 0, NULL }
	};
	const union MHD_DaemonInfo *info;
	struct MHD_Daemon *d;

	d = wa_httpd_start(listen, port_file, MHD_USE_AUTO_INTERNAL_THREAD |
	    MHD_ALLOW_SUSPEND_RESUME | MHD_USE_TURBO, serve, &s, opts);
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	wa_warn("listening on %.*s:%u", (int)(strrchr(listen, ':') - listen),
	    listen, info ? info->port : 0);
	wa_httpd_serve(d, wa_later_drain, s.later);
	wa_later_free(s.later);
}
