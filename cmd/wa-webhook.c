/*
 * wa-webhook: receives Meta's webhook calls and stores them durably.
 *
 * Reads HTTP on --listen ADDR:PORT (behind a TLS proxy): the GET
 * verification handshake, answered with hub.challenge when hub.verify_token
 * is WA_VERIFY_TOKEN, and POSTed bodies signed in X-Hub-Signature-256 with
 * the app secret (WA_APP_SECRET or WA_APP_SECRET_FILE). Writes each body
 * whose signature is right to the spool directory, one line per body
 * (lib/spool/spool.c), and answers 200 only once an fsync covers it; a missing
 * signature gets 401, a wrong one 403, a body over --max-body 413, and
 * nothing of those is stored. Exits 0 after SIGTERM or SIGINT (requests in
 * hand are finished first), 64 on a usage error, 69 when it cannot listen,
 * 73 when the spool cannot be created, 74 when it can no longer be written,
 * 75 when another process owns the spool, 78 without an app secret.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/lines.h"
#include "core/metrics.h"
#include "core/secret.h"
#include "core/sig.h"
#include "spool/hmac.h"
#include "spool/httpd.h"
#include "spool/spool.h"

static struct {
	const char	*listen;
	const char	*port_file;
	const char	*spool;
	long long	 segment;
	long long	 max_body;
	long long	 max_conns;
} opt = { "127.0.0.1:8080", NULL, NULL, 64 << 20, 3 << 20, 512 };

static char *secret, *verify_token;
static struct wa_spool *spool;
static volatile sig_atomic_t broken;

static const int codes[] = { 200, 400, 401, 403, 405, 413, 503 };
static const char *texts[] = { "", "empty body\n",
    "missing X-Hub-Signature-256\n", "bad signature\n",
    "GET or POST only\n", "body too large\n",
    "cannot store the body now\n" };
#define NCODES (int)(sizeof codes / sizeof codes[0])
static struct MHD_Response *canned[NCODES];

static pthread_mutex_t metrics_mu = PTHREAD_MUTEX_INITIALIZER;
static struct wa_metric *answers[NCODES], *bytes_total, *fsyncs_total;
static struct wa_metric *ack_seconds;

struct req {
	struct wa_buf	 body;
	char		 sig[WA_SIGNATURE_LEN + 1];
	long long	 dropped;	/* bytes past max_body */
	int64_t		 t0;
};

static void
usage(FILE *f, int status)
{
	fprintf(f, "usage: wa-webhook [-l | --listen addr:port] "
	    "[--max-body bytes] [--max-connections n]\n"
	    "                  [--metrics file] [--port-file file] "
	    "[--segment-bytes bytes]\n"
	    "                  -s | --spool spool-dir\n"
	    "       wa-webhook -h | --help | --version\n");
	exit(status);
}

static enum MHD_Result
answer(struct MHD_Connection *c, struct req *r, int i)
{
	enum MHD_Result ret = MHD_queue_response(c, codes[i], canned[i]);

	pthread_mutex_lock(&metrics_mu);
	wa_metric_add(answers[i], 1);
	if (r != NULL && i == 0) {
		wa_metric_add(bytes_total, r->body.len);
		pthread_mutex_lock(&spool->mu);
		wa_metric_set(fsyncs_total, spool->fsyncs);
		pthread_mutex_unlock(&spool->mu);
		wa_metric_observe(ack_seconds, (wa_now_ns() - r->t0) / 1e9);
	}
	wa_metrics_tick();
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
		return answer(c, NULL, 3);
	res = MHD_create_response_from_buffer(strlen(challenge),
	    (void *)challenge, MHD_RESPMEM_MUST_COPY);
	MHD_add_response_header(res, "Content-Type", "text/plain");
	ret = MHD_queue_response(c, 200, res);
	MHD_destroy_response(res);
	return ret;
}

/* The first call for a request: its headers are in. */
static enum MHD_Result
start(struct MHD_Connection *c, const char *method, void **state)
{
	const char *sig, *cl;
	long long len = 0;
	struct req *r;

	if (strcmp(method, "GET") == 0)
		return handshake(c);
	if (strcmp(method, "POST") != 0)
		return answer(c, NULL, 4);
	cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (cl != NULL && (len = strtoll(cl, NULL, 10)) > opt.max_body)
		return answer(c, NULL, 5);
	sig = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    "X-Hub-Signature-256");
	if (sig == NULL || strlen(sig) != WA_SIGNATURE_LEN ||
	    strncmp(sig, "sha256=", 7) != 0)
		return answer(c, NULL, 2);
	r = wa_alloc(sizeof *r);
	r->t0 = wa_now_ns();
	memcpy(r->sig, sig, sizeof r->sig);
	if (len > 0)
		wa_buf_grow(&r->body, len + 1);
	*state = r;
	return MHD_YES;
}

static enum MHD_Result
handle(void *cls, struct MHD_Connection *c, const char *url,
    const char *method, const char *version, const char *data, size_t *n,
    void **state)
{
	struct req *r = *state;
	int i;

	(void)cls, (void)url, (void)version;
	if (r == NULL)
		return start(c, method, state);
	if (*n > 0) {
		if (r->dropped == 0 && r->body.len + *n <= (size_t)opt.max_body)
			wa_buf_add(&r->body, data, *n);
		else if ((r->dropped += *n) > 4 * opt.max_body)
			return MHD_NO;
		*n = 0;
		return MHD_YES;
	}
	if (r->dropped > 0)
		return answer(c, NULL, 5);
	if (r->body.len == 0)
		return answer(c, NULL, 1);
	if (!wa_hmac_verify(secret, r->body.s, r->body.len, r->sig))
		return answer(c, NULL, 3);
	wa_buf_grow(&r->body, 1);
	if (wa_spool_append(spool, r->body.s, r->body.len) < 0) {
		wa_warn("store a body in %s:", opt.spool);
		pthread_mutex_lock(&spool->mu);
		i = spool->broken;
		pthread_mutex_unlock(&spool->mu);
		if (i) {
			broken = 1;
			wa_stopping = 1;
		}
		return answer(c, NULL, 6);
	}
	return answer(c, r, 0);
}

static void
done(void *cls, struct MHD_Connection *c, void **state,
    enum MHD_RequestTerminationCode toe)
{
	struct req *r = *state;

	(void)cls, (void)c, (void)toe;
	if (r != NULL) {
		wa_buf_free(&r->body);
		free(r);
		*state = NULL;
	}
}

int
main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "listen", required_argument, NULL, 'l' },
		{ "max-body", required_argument, NULL, 'B' },
		{ "max-connections", required_argument, NULL, 'C' },
		{ "metrics", required_argument, NULL, 'M' },
		{ "port-file", required_argument, NULL, 'P' },
		{ "segment-bytes", required_argument, NULL, 'S' },
		{ "spool", required_argument, NULL, 's' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	static const double secs[] = { .0005, .001, .0025, .005, .01, .025,
	    .05, .1, .25, 1 };
	struct MHD_OptionItem mopts[] = {
		{ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)done, NULL },
		{ MHD_OPTION_CONNECTION_LIMIT, 0, NULL },
		{ MHD_OPTION_CONNECTION_TIMEOUT, 60, NULL },
		{ MHD_OPTION_END, 0, NULL }
	};
	struct wa_buf label = { 0 };
	struct MHD_Daemon *d;
	int c, i;

	wa_prog = "wa-webhook";
	while ((c = getopt_long(argc, argv, "hl:s:", longs, NULL)) != -1)
		switch (c) {
		case 'B':
			opt.max_body = wa_num(optarg, 1, WA_LINE_MAX - 1,
			    "max-body");
			break;
		case 'C':
			opt.max_conns = wa_num(optarg, 1, 65536,
			    "max-connections");
			break;
		case 'h':
			usage(stdout, 0);
			break;
		case 'l':
			opt.listen = optarg;
			break;
		case 'M':
			wa_metrics_open(optarg);
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
		case 'V':
			wa_version();
		default:
			usage(stderr, EX_USAGE);
		}
	if (opt.spool == NULL || optind != argc)
		usage(stderr, EX_USAGE);
	if ((secret = wa_secret("WA_APP_SECRET")) == NULL)
		wa_die(EX_CONFIG, "no app secret: set WA_APP_SECRET or "
		    "WA_APP_SECRET_FILE");
	if ((verify_token = wa_secret("WA_VERIFY_TOKEN")) == NULL)
		wa_warn("no WA_VERIFY_TOKEN: the verification handshake "
		    "will be refused");

	wa_signals();
	wa_metrics_on_usr2(&metrics_mu);
	for (i = 0; i < NCODES; i++) {
		canned[i] = MHD_create_response_from_buffer(strlen(texts[i]),
		    (void *)texts[i], MHD_RESPMEM_PERSISTENT);
		MHD_add_response_header(canned[i], "Content-Type",
		    "text/plain");
		label.len = 0;
		wa_buf_printf(&label, "code=\"%d\"", codes[i]);
		answers[i] = wa_counter("wa_webhook_requests_total", label.s,
		    "Requests answered, by HTTP status.");
	}
	MHD_add_response_header(canned[4], "Allow", "GET, POST");
	bytes_total = wa_counter("wa_webhook_stored_bytes_total", NULL,
	    "Bytes of bodies stored and acknowledged.");
	fsyncs_total = wa_counter("wa_webhook_fsyncs_total", NULL,
	    "Syncs of the spool (one covers many bodies).");
	ack_seconds = wa_histogram("wa_webhook_ack_seconds", NULL,
	    "From a POST's headers to its 200, the body on disk.", secs, 10);
	spool = wa_spool_open(opt.spool, opt.segment);
	mopts[1].value = opt.max_conns;
	d = wa_httpd_start(opt.listen, opt.port_file,
	    MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_THREAD_PER_CONNECTION,
	    handle, NULL, mopts);
	wa_httpd_run(d);
	wa_metric_set(fsyncs_total, spool->fsyncs);
	wa_spool_close(spool);
	wa_metrics_write();
	for (i = 0; i < NCODES; i++)
		MHD_destroy_response(canned[i]);
	wa_buf_free(&label);
	free(secret);
	free(verify_token);
	return broken ? EX_IOERR : 0;
}
