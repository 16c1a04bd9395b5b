/*
 * wa-webhook: receives Meta's webhook calls and stores them durably.
 *
 * Reads HTTP on --listen ADDR:PORT (behind a TLS proxy): the GET
 * verification handshake, answered with hub.challenge when hub.verify_token
 * is WA_VERIFY_TOKEN, and POSTed bodies signed in X-Hub-Signature-256 with
 * the app secret (WA_APP_SECRET or WA_APP_SECRET_FILE). Writes each body
 * whose signature is right to the spool directory, one line per body
 * (lib/spool/spool.c), and answers 200 only once an fsync covers it; a missing
 * or malformed signature gets 401, a wrong one 403, a body over --max-body
 * 413, a body that would take the bodies held in memory past
 * --max-buffered 503, a request whose length two parsers could read
 * differently 400, and nothing of those is stored. The connections are
 * guarded by lib/spool/httpd.c (deadlines, room, a cap per address).
 * Exits 0 after SIGTERM or SIGINT (requests in hand are finished first),
 * 64 on a usage error, 69 when it cannot listen, 73 when the spool cannot
 * be created, 74 when it can no longer be written, 75 when another process
 * owns the spool, 78 without an app secret.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <openssl/crypto.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/lines.h"
#include "core/metrics.h"
#include "core/opts.h"
#include "core/secret.h"
#include "core/sig.h"
#include "spool/hmac.h"
#include "spool/httpd.h"
#include "spool/spool.h"

#define LOOPS		4		/* event loops: reading, answering */
#define STORERS		64		/* bodies checked and stored at once */
#define CONN_MEMORY	8192 		/* per connection: headers, reads */
#define DRAIN_S		5		/* at exit, for answers to go out */

static struct {
	const char	*listen;
	const char	*port_file;
	const char	*spool;
	long long	 segment;
	long long	 max_body;
	long long	 max_buffered;
	long long	 max_conns;
	long long	 per_address;
	long long	 header_s;
	long long	 body_s;
} opt = { "127.0.0.1:8080", NULL, NULL, 64 << 20, 3 << 20, 64 << 20,
    10000, 0, 10, 20 };

static char *secret, *verify_token;
static struct wa_spool *spool;
static volatile sig_atomic_t broken;

/* The answers, canned; several may share a status. */
enum { OK, EMPTY, UNSIGNED, FORGED, REFUSED, METHOD, TOO_BIG, UNSTORED,
    BUSY, FRAMING, NANSWERS };
static const struct {
	int		 code;
	const char	*text;
} answers[NANSWERS] = {
	{ 200, "" },
	{ 400, "empty body\n" },
	{ 401, "missing or malformed X-Hub-Signature-256\n" },
	{ 403, "bad signature\n" },
	{ 403, "verification refused: hub.mode must be subscribe and "
	    "hub.verify_token ours\n" },
	{ 405, "GET or POST only\n" },
	{ 413, "body too large\n" },
	{ 503, "cannot store the body now\n" },
	{ 503, "too many bodies in memory now, retry\n" },
	{ 400, "ambiguous body length (Content-Length, Transfer-Encoding)\n" },
};
static struct MHD_Response *canned[NANSWERS];

static pthread_mutex_t metrics_mu = PTHREAD_MUTEX_INITIALIZER;
static struct wa_metric *by_code[NANSWERS], *bytes_total, *fsyncs_total;
static struct wa_metric *ack_seconds, *open_conns, *held_bytes;
static struct wa_metric *closed_header, *closed_body, *closed_crowded;

/* Bytes of bodies held in memory, all requests: at most max_buffered. */
static pthread_mutex_t held_mu = PTHREAD_MUTEX_INITIALIZER;
static size_t held;

struct req {
	struct req	*next;		/* in the queue to the storers */
	struct MHD_Connection *conn;
	int		 result;	/* the answer once stored, or -1 */
	char		*body;
	size_t		 len;
	size_t		 cap;		/* counted in held */
	size_t		 expect;	/* Content-Length, or 0 */
	long long	 dropped;	/* bytes read and not kept */
	int		 refuse;	/* the answer once dropped */
	char		 sig[WA_SIGNATURE_LEN + 1];
	int64_t		 t0;
};

/*
 * Complete bodies wait here, their connections suspended, for one of the
 * storers: the event loops never wait for a disk, and up to STORERS
 * bodies share each fsync.
 */
static struct {
	pthread_mutex_t	 mu;
	pthread_cond_t	 work;
	pthread_cond_t	 idle;
	struct req	*head, *tail;
	unsigned	 busy;		/* requests queued or being stored */
	unsigned	 pending;	/* from queued to answered */
	int		 stopping;
} q = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
    PTHREAD_COND_INITIALIZER, NULL, NULL, 0, 0, 0 };
static pthread_t storers[STORERS];

static void
usage(FILE *f, int status)
{
	fprintf(f, "usage: wa-webhook [-l | --listen addr:port] "
	    "[--max-body bytes] [--max-buffered bytes]\n"
	    "                  [--max-connections n] [--max-per-address n] "
	    "[--header-timeout s]\n"
	    "                  [--body-timeout s] [--port-file file]\n"
	    "                  [--metrics file [--metrics-label name=value]]\n"
	    "                  [--segment-bytes bytes] -s | --spool spool-dir\n"
	    "       wa-webhook -h | --help | --version\n");
	exit(status);
}

/* Takes n bytes more for bodies, if that stays within --max-buffered. */
static int
take(size_t n)
{
	int ok;

	pthread_mutex_lock(&held_mu);
	if ((ok = held + n <= (size_t)opt.max_buffered))
		held += n;
	pthread_mutex_unlock(&held_mu);
	return ok;
}

static void
give(size_t n)
{
	pthread_mutex_lock(&held_mu);
	held -= n;
	pthread_mutex_unlock(&held_mu);
}

static void
drop_body(struct req *r)
{
	give(r->cap);
	free(r->body);
	r->body = NULL;
	r->len = r->cap = 0;
}

/* The gauges and counters of the edge; under metrics_mu. */
static void
edge_metrics(void)
{
	struct wa_httpd_stats st;
	size_t h;

	wa_httpd_stats(&st);
	pthread_mutex_lock(&held_mu);
	h = held;
	pthread_mutex_unlock(&held_mu);
	wa_metric_set(open_conns, st.open);
	wa_metric_set(held_bytes, h);
	wa_metric_set(closed_header, st.header_timeouts);
	wa_metric_set(closed_body, st.body_timeouts);
	wa_metric_set(closed_crowded, st.crowded);
}

static void
tick(void)
{
	pthread_mutex_lock(&metrics_mu);
	edge_metrics();
	wa_metrics_tick();
	pthread_mutex_unlock(&metrics_mu);
}

static enum MHD_Result
answer(struct MHD_Connection *c, struct req *r, int i)
{
	enum MHD_Result ret;

	ret = MHD_queue_response(c, answers[i].code, canned[i]);
	pthread_mutex_lock(&metrics_mu);
	wa_metric_add(by_code[i], 1);
	if (r != NULL && i == OK) {
		wa_metric_add(bytes_total, r->len);
		pthread_mutex_lock(&spool->mu);
		wa_metric_set(fsyncs_total, spool->fsyncs);
		pthread_mutex_unlock(&spool->mu);
		wa_metric_observe(ack_seconds, (wa_now_ns() - r->t0) / 1e9);
	}
	pthread_mutex_unlock(&metrics_mu);
	return ret;
}

static int
same(const char *a, const char *b)
{
	size_t n = strlen(a);

	return n == strlen(b) && CRYPTO_memcmp(a, b, n) == 0;
}

/* The handshake: echo hub.challenge if the token is ours. */
static enum MHD_Result
handshake(struct MHD_Connection *c)
{
	const char *mode, *token, *challenge;
	struct MHD_Response *res;
	enum MHD_Result ret;

	mode = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
	    "hub.mode");
	token = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
	    "hub.verify_token");
	challenge = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
	    "hub.challenge");
	if (verify_token == NULL || mode == NULL || token == NULL ||
	    challenge == NULL || strcmp(mode, "subscribe") != 0 ||
	    !same(token, verify_token))
		return answer(c, NULL, REFUSED);
	res = MHD_create_response_from_buffer(strlen(challenge),
	    (void *)challenge, MHD_RESPMEM_MUST_COPY);
	MHD_add_response_header(res, "Content-Type", "text/plain");
	ret = MHD_queue_response(c, 200, res);
	MHD_destroy_response(res);
	return ret;
}

/*
 * What a request's headers say of its body. Two lengths, a length and a
 * coding, a coding other than chunked, or a header name with a blank in
 * it could each be read one way by a proxy in front and another way here
 * (request smuggling): all get 400. Two signatures get 401.
 */
struct heads {
	int		 signatures;	/* X-Hub-Signature-256 headers */
	int		 lengths;	/* Content-Length headers */
	int		 codings;	/* Transfer-Encoding headers */
	int		 odd;		/* a value we do not take */
	const char	*length;
};

static enum MHD_Result
read_heads(void *cls, enum MHD_ValueKind kind, const char *key,
    const char *value)
{
	struct heads *f = cls;

	(void)kind;
	/* "Content-Length : 5" is a length to some, a stray header to us. */
	if (strpbrk(key, " \t") != NULL)
		f->odd = 1;
	if (strcasecmp(key, "X-Hub-Signature-256") == 0)
		f->signatures++;
	if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
		f->lengths++;
		f->length = value;
		if (value == NULL || *value == '\0' ||
		    strspn(value, "0123456789") != strlen(value))
			f->odd = 1;
	} else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) {
		f->codings++;
		if (value == NULL || strcasecmp(value, "chunked") != 0)
			f->odd = 1;
	}
	return MHD_YES;
}

/* A signature header of the right form: "sha256=" and 64 hex digits. */
static int
well_formed(const char *sig)
{
	return sig != NULL && strlen(sig) == WA_SIGNATURE_LEN &&
	    strncmp(sig, "sha256=", 7) == 0 &&
	    strspn(sig + 7, "0123456789abcdefABCDEF") == 64;
}

/*
 * The first call for a request: its headers are in, its body is not.
 * Everything that can be refused is refused here, before a byte of
 * body is read: smuggling shapes, a length over --max-body, a missing or
 * malformed signature; a length over the room left under --max-buffered
 * too, or once the body is read (and dropped: it never takes room).
 */
static enum MHD_Result
start(struct MHD_Connection *c, const char *method, void **state)
{
	struct heads f = { 0 };
	unsigned long long len = 0;
	const char *sig, *cont;
	struct req *r;
	size_t room;
	int full;

	if (strcmp(method, "GET") == 0)
		return handshake(c);
	if (strcmp(method, "POST") != 0)
		return answer(c, NULL, METHOD);
	MHD_get_connection_values(c, MHD_HEADER_KIND, read_heads, &f);
	if (f.lengths > 1 || f.codings > 1 || (f.lengths && f.codings) ||
	    f.odd)
		return answer(c, NULL, FRAMING);
	if (f.length != NULL) {
		errno = 0;
		len = strtoull(f.length, NULL, 10);
		if (errno != 0 || len > (unsigned long long)opt.max_body)
			return answer(c, NULL, TOO_BIG);
	}
	sig = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    "X-Hub-Signature-256");
	if (f.signatures != 1 || !well_formed(sig))
		return answer(c, NULL, UNSIGNED);
	pthread_mutex_lock(&held_mu);
	room = opt.max_buffered - held;
	pthread_mutex_unlock(&held_mu);
	/*
	 * No room: a client waiting for 100 Continue hears so at once; one
	 * already sending has its body read and dropped first, since
	 * closing on a body still coming may reset the connection before
	 * the client has read the answer.
	 */
	if ((full = len + 1 > room)) {
		cont = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
		    MHD_HTTP_HEADER_EXPECT);
		if (cont != NULL && strcasecmp(cont, "100-continue") == 0)
			return answer(c, NULL, BUSY);
	}
	r = wa_alloc(sizeof *r);
	r->result = -1;
	r->t0 = wa_now_ns();
	r->expect = len;
	r->refuse = full ? BUSY : 0;
	memcpy(r->sig, sig, sizeof r->sig);
	*state = r;
	return MHD_YES;
}

/*
 * Keeps n bytes of body. The buffer grows with what came, at most twice
 * it (never from what the request says it will send, which costs a
 * client nothing to say), within --max-body and --max-buffered; on
 * refusal, the body is dropped and r->refuse says how to answer.
 */
static void
keep(struct req *r, const char *data, size_t n)
{
	size_t need = r->len + n + 1, cap;

	if (r->refuse == 0 && need > (size_t)opt.max_body + 1)
		r->refuse = TOO_BIG;
	if (r->refuse == 0 && need > r->cap) {
		cap = 2 * r->cap;
		if (r->expect > 0 && cap > r->expect + 1)
			cap = r->expect + 1;
		if (cap > (size_t)opt.max_body + 1)
			cap = opt.max_body + 1;
		if (cap < need)
			cap = need;
		if (take(cap - r->cap)) {
			r->body = wa_realloc(r->body, cap);
			r->cap = cap;
		} else
			r->refuse = BUSY;
	}
	if (r->refuse != 0) {
		drop_body(r);
		r->dropped += n;
		return;
	}
	memcpy(r->body + r->len, data, n);
	r->len += n;
}

static enum MHD_Result
handle(void *cls, struct MHD_Connection *c, const char *url,
    const char *method, const char *version, const char *data, size_t *n,
    void **state)
{
	struct req *r = *state;

	(void)cls, (void)url, (void)version;
	if (r == NULL)
		return start(c, method, state);
	if (*n > 0) {
		keep(r, data, *n);
		/* Read on to answer, but not for ever. */
		if (r->dropped > opt.max_body)
			return MHD_NO;
		*n = 0;
		return MHD_YES;
	}
	if (r->result >= 0)		/* back from a storer */
		return answer(c, r, r->result);
	if (r->refuse != 0)
		return answer(c, NULL, r->refuse);
	if (r->len == 0)
		return answer(c, NULL, EMPTY);
	pthread_mutex_lock(&q.mu);
	if (q.stopping) {
		pthread_mutex_unlock(&q.mu);
		return answer(c, NULL, UNSTORED);
	}
	/* Suspended first: a storer may resume it at once. */
	MHD_suspend_connection(c);
	r->conn = c;
	if (q.tail != NULL)
		q.tail->next = r;
	else
		q.head = r;
	q.tail = r;
	q.busy++;
	q.pending++;
	pthread_cond_signal(&q.work);
	pthread_mutex_unlock(&q.mu);
	return MHD_YES;
}

/* Checks the signature of a body and stores it; the answer in r->result. */
static void
store(struct req *r)
{
	int broke;

	if (!wa_hmac_verify(secret, r->body, r->len, r->sig)) {
		r->result = FORGED;
		return;
	}
	if (wa_spool_append(spool, r->body, r->len) < 0) {
		wa_warn("store a body in %s:", opt.spool);
		pthread_mutex_lock(&spool->mu);
		broke = spool->broken;
		pthread_mutex_unlock(&spool->mu);
		if (broke) {
			broken = 1;
			wa_stopping = 1;
		}
		r->result = UNSTORED;
		return;
	}
	r->result = OK;
}

static void *
storer(void *arg)
{
	struct req *r;

	(void)arg;
	pthread_mutex_lock(&q.mu);
	for (;;) {
		while (q.head == NULL && !q.stopping)
			pthread_cond_wait(&q.work, &q.mu);
		if ((r = q.head) == NULL)
			break;
		if ((q.head = r->next) == NULL)
			q.tail = NULL;
		r->next = NULL;
		pthread_mutex_unlock(&q.mu);
		store(r);
		MHD_resume_connection(r->conn);
		pthread_mutex_lock(&q.mu);
		if (--q.busy == 0)
			pthread_cond_broadcast(&q.idle);
	}
	pthread_mutex_unlock(&q.mu);
	return NULL;
}

/*
 * At SIGTERM: bodies that come in from now on get 503; every body queued
 * is stored and its connection resumed (MHD cannot stop with one
 * suspended), and their answers get up to DRAIN_S seconds to go out.
 */
static void
drain(void *arg)
{
	struct timespec until;
	int i;

	(void)arg;
	pthread_mutex_lock(&q.mu);
	q.stopping = 1;
	pthread_cond_broadcast(&q.work);
	while (q.busy > 0)
		pthread_cond_wait(&q.idle, &q.mu);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += DRAIN_S;
	while (q.pending > 0 &&
	    pthread_cond_timedwait(&q.idle, &q.mu, &until) == 0)
		;
	pthread_mutex_unlock(&q.mu);
	for (i = 0; i < STORERS; i++)
		pthread_join(storers[i], NULL);
}

static void
done(void *cls, struct MHD_Connection *c, void **state,
    enum MHD_RequestTerminationCode toe)
{
	struct req *r = *state;

	(void)cls, (void)c, (void)toe;
	if (r != NULL) {
		if (r->conn != NULL) {
			pthread_mutex_lock(&q.mu);
			if (--q.pending == 0)
				pthread_cond_broadcast(&q.idle);
			pthread_mutex_unlock(&q.mu);
		}
		drop_body(r);
		free(r);
		*state = NULL;
	}
}

/* The metrics; answers with the same status share a counter. */
static void
metrics(void)
{
	static const char closed[] =
	    "Connections closed by the server's defences, by reason.";
	struct wa_buf label = { 0 };
	int i;

	for (i = 0; i < NANSWERS; i++) {
		label.len = 0;
		wa_buf_printf(&label, "code=\"%d\"", answers[i].code);
		by_code[i] = wa_counter("wa_webhook_requests_total", label.s,
		    "Requests answered, by HTTP status.");
	}
	wa_buf_free(&label);
	bytes_total = wa_counter("wa_webhook_stored_bytes_total", NULL,
	    "Bytes of bodies stored and acknowledged.");
	fsyncs_total = wa_counter("wa_webhook_fsyncs_total", NULL,
	    "Syncs of the spool (one covers many bodies).");
	open_conns = wa_gauge("wa_webhook_connections", NULL,
	    "Connections open.");
	held_bytes = wa_gauge("wa_webhook_buffered_bytes", NULL,
	    "Bytes of bodies held in memory, at most --max-buffered.");
	closed_header = wa_counter("wa_webhook_closed_total",
	    "reason=\"header-timeout\"", closed);
	closed_body = wa_counter("wa_webhook_closed_total",
	    "reason=\"body-timeout\"", closed);
	closed_crowded = wa_counter("wa_webhook_closed_total",
	    "reason=\"crowded\"", closed);
}

int
main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "body-timeout", required_argument, NULL, 'b' },
		{ "header-timeout", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ "listen", required_argument, NULL, 'l' },
		{ "max-body", required_argument, NULL, 'B' },
		{ "max-buffered", required_argument, NULL, 'F' },
		{ "max-connections", required_argument, NULL, 'C' },
		{ "max-per-address", required_argument, NULL, 'A' },
		{ "metrics", required_argument, NULL, WA_OPT_METRICS },
		{ "metrics-label", required_argument, NULL, WA_OPT_LABEL },
		{ "port-file", required_argument, NULL, 'P' },
		{ "segment-bytes", required_argument, NULL, 'S' },
		{ "spool", required_argument, NULL, 's' },
		{ "version", no_argument, NULL, WA_OPT_VERSION },
		{ NULL, 0, NULL, 0 }
	};
	static const double secs[] = { .0005, .001, .0025, .005, .01, .025,
	    .05, .1, .25, 1 };
	struct wa_httpd_edge e = { 0 };
	struct MHD_Daemon *d;
	int c, i;

	wa_prog = "wa-webhook";
	while ((c = getopt_long(argc, argv, "hl:s:", longs, NULL)) != -1)
		switch (c) {
		case 'A':
			opt.per_address = wa_num(optarg, 0, 1000000,
			    "max-per-address");
			break;
		case 'B':
			opt.max_body = wa_num(optarg, 1, WA_LINE_MAX - 1,
			    "max-body");
			break;
		case 'b':
			opt.body_s = wa_num(optarg, 1, 3600, "body-timeout");
			break;
		case 'C':
			opt.max_conns = wa_num(optarg, 16, 1000000,
			    "max-connections");
			break;
		case 'F':
			opt.max_buffered = wa_num(optarg, 1, LLONG_MAX / 2,
			    "max-buffered");
			break;
		case 'H':
			opt.header_s = wa_num(optarg, 1, 3600,
			    "header-timeout");
			break;
		case 'l':
			opt.listen = optarg;
			break;
		case 'P':
			opt.port_file = optarg;
			break;
		case 'S':
			opt.segment = wa_num(optarg, 1, LLONG_MAX,
			    "segment-bytes");
			break;
		case 's':
			opt.spool = optarg;
			break;
		default:
			if (!wa_common_opt(c, optarg, usage))
				usage(stderr, EX_USAGE);
		}
	if (opt.spool == NULL || optind != argc)
		usage(stderr, EX_USAGE);
	if (opt.max_buffered <= opt.max_body)
		wa_die(EX_USAGE, "--max-buffered (%lld) must be more than "
		    "--max-body (%lld), or no body that large could be taken",
		    opt.max_buffered, opt.max_body);
	if ((secret = wa_secret("WA_APP_SECRET")) == NULL)
		wa_die(EX_CONFIG, "no app secret: set WA_APP_SECRET or "
		    "WA_APP_SECRET_FILE");
	if ((verify_token = wa_secret("WA_VERIFY_TOKEN")) == NULL)
		wa_warn("no WA_VERIFY_TOKEN: the verification handshake "
		    "will be refused");
#ifdef __GLIBC__
	/*
	 * Bodies of more than 128 KiB get pages of their own, given back
	 * when freed: memory follows --max-buffered, not its history.
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif

	wa_signals();
	wa_metrics_on_usr2(&metrics_mu);
	for (i = 0; i < NANSWERS; i++) {
		canned[i] = MHD_create_response_from_buffer(
		    strlen(answers[i].text), (void *)answers[i].text,
		    MHD_RESPMEM_PERSISTENT);
		MHD_add_response_header(canned[i], "Content-Type",
		    "text/plain");
	}
	MHD_add_response_header(canned[METHOD], "Allow", "GET, POST");
	MHD_add_response_header(canned[FRAMING], "Connection", "close");
	metrics();
	ack_seconds = wa_histogram("wa_webhook_ack_seconds", NULL,
	    "From a POST's headers to its 200, the body on disk.", secs, 10);
	spool = wa_spool_open(opt.spool, opt.segment);
	e.max_connections = opt.max_conns;
	e.per_address = opt.per_address;
	e.header_s = opt.header_s;
	e.body_s = opt.body_s;
	for (i = 0; i < STORERS; i++)
		if ((errno = pthread_create(&storers[i], NULL, storer,
		    NULL)) != 0)
			wa_die(EX_OSERR, "start a thread:");
	e.threads = LOOPS;
	e.memory = CONN_MEMORY;
	e.done = done;
	e.tick = tick;
	d = wa_httpd_start_edge(opt.listen, opt.port_file, &e, handle, NULL);
	wa_httpd_serve(d, drain, NULL);
	pthread_mutex_lock(&metrics_mu);
	edge_metrics();
	wa_metric_set(fsyncs_total, spool->fsyncs);
	pthread_mutex_unlock(&metrics_mu);
	wa_spool_close(spool);
	wa_metrics_write();
	for (i = 0; i < NANSWERS; i++)
		MHD_destroy_response(canned[i]);
	free(secret);
	free(verify_token);
	return broken ? EX_IOERR : 0;
}
