/*
 * wa-throttle: passes each line on once the bucket of its phone number
 * has a token, so that the pipeline's backpressure starts here.
 *
 * Reads NDJSON send requests on stdin; writes each one on stdout, its
 * bytes unchanged, in one write, after taking a token from the bucket of
 * its phone_number_id (or of --number, which reads any lines, unparsed).
 * The bucket of a number is shared by every process on the host
 * (WA_STATE_DIR) and, with --cluster, by every host (Postgres). It holds
 * one line at a time: while it waits, its input pipe fills. With --pause
 * or --set-rate it changes a bucket and exits.
 *
 * Stopping is draining: after SIGTERM or SIGINT it takes no more tokens
 * and passes on at once the line it holds and every line still in its
 * input, for wa-send (stopping too) to answer unsent, until the end of
 * input or DRAIN_MS after the stop; a second signal ends it at once.
 *
 * Exits 0 at the end of input or when stopped, 65 if a line was rejected
 * (no phone_number_id, not a JSON object, not UTF-8, over 4 MiB), 69 when
 * Postgres was unreachable at the end (--cluster), 74 when reading stdin
 * or writing stdout or the reject file fails, 78 when the state directory
 * cannot be used, 64 on a usage error; killed by the signal after a
 * second one.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/lines.h"
#include "core/metrics.h"
#include "core/out.h"
#include "core/sig.h"
#include "records/input.h"
#include "records/json.h"
#include "records/request.h"
#include "api/bucket.h"
#include "pg/lease.h"
#include "pg/pg.h"

#define MAX_NUMBERS 1000
#define MAX_SLEEP_MS 100	/* so that a rate set live is seen soon */
#define DRAIN_MS 2000		/* once stopped, the wait for end of input */

struct number {
	char		*id;
	struct wa_bucket *b;		/* on this host */
	struct wa_lease	*l;		/* its tokens: b's or the cluster's */
	int64_t		 pause_seen;	/* end of the last pause counted */
	uint64_t	 passed;
	uint64_t	 pauses;
	int64_t		 waited;
	struct wa_metric *m_lines, *m_wait, *m_pauses, *m_rate;
};

static struct {
	double		 rate;
	long long	 burst;
	const char	*number;
	int		 cluster;
	const char	*conninfo;
	long long	 lease_ms;
	long long	 pause_ms;
	double		 set_rate;
	int		 rate_given;
	long long	 pg_timeout;
} opt = { WA_BUCKET_RATE, 0, NULL, 0, NULL, 100, 0, 0, 0, WA_PG_TIMEOUT };

static struct number numbers[MAX_NUMBERS];
static int nnumbers;
static struct wa_cluster *cluster;
static volatile sig_atomic_t report_asked;

static void
usage(FILE *f, int status)
{
	fprintf(f, "usage: wa-throttle [-r rate] [-b burst] [--number id] "
	    "[--reject file] [--metrics file]\n"
	    "                  [--cluster [-d conninfo] [--lease-ms ms] "
	    "[--pg-timeout secs]]\n"
	    "       wa-throttle --number id [--set-rate rate [-b burst]] "
	    "[--pause ms] [--cluster]\n"
	    "       wa-throttle -h | --help | --version\n");
	exit(status);
}

static void
on_usr1(int sig)
{
	(void)sig;
	report_asked = 1;
}

/* The number named id, its bucket opened on first use; NULL if none. */
static struct number *
number(const char *id)
{
	static struct number *last;
	struct wa_bucket_stats st;
	int differs;
	struct wa_buf label = { 0 };
	struct number *nb;
	int i;

	if (last != NULL && strcmp(last->id, id) == 0)
		return last;
	for (i = 0; i < nnumbers; i++)
		if (strcmp(numbers[i].id, id) == 0)
			return last = &numbers[i];
	if (!wa_number_id_valid(id) || nnumbers == MAX_NUMBERS)
		return NULL;
	nb = &numbers[nnumbers];
	if ((nb->b = wa_bucket_open(id, opt.rate, opt.burst)) == NULL)
		wa_die(EX_CONFIG, "cannot keep buckets in %s: set WA_STATE_DIR",
		    wa_bucket_dir());
	nnumbers++;
	nb->id = wa_strdup(id);
	nb->l = wa_lease_open(cluster, nb->b, id, opt.rate, opt.burst,
	    opt.lease_ms * 1000000);
	wa_bucket_stats(nb->b, &st);
	differs = opt.burst && st.burst != opt.burst;
	if (opt.rate_given && fabs(st.base - opt.rate) > opt.rate / 1000)
		differs = 1;
	if (cluster == NULL && differs)
		wa_warn("%s: its bucket is shared and runs at %g/s, burst "
		    "%lld: -r and -b only make a new bucket (use --set-rate)",
		    id, st.base, (long long)st.burst);
	wa_buf_printf(&label, "number=\"%s\"", id);
	nb->m_lines = wa_counter("wa_throttle_lines_total", label.s,
	    "Lines passed on.");
	nb->m_wait = wa_counter("wa_throttle_wait_seconds_total", label.s,
	    "Time spent waiting for a token.");
	nb->m_pauses = wa_counter("wa_throttle_pauses_total", label.s,
	    "Pauses of the number that held this process.");
	nb->m_rate = wa_gauge("wa_throttle_rate", label.s,
	    "The number's rate in force, tokens per second.");
	wa_buf_free(&label);
	return last = nb;
}

/* SIGUSR1: this process's counters, one line per number, on stderr. */
static void
report(void)
{
	struct wa_bucket_stats st;
	struct number *nb;
	int i;

	report_asked = 0;
	for (i = 0; i < nnumbers; i++) {
		nb = &numbers[i];
		wa_lease_stats(nb->l, &st);
		wa_warn("%s: %llu lines passed, %.3f s waiting, %llu pauses, "
		    "rate %g/s, burst %lld%s", nb->id,
		    (unsigned long long)nb->passed, nb->waited / 1e9,
		    (unsigned long long)nb->pauses, st.rate,
		    (long long)st.burst, cluster ? " (cluster)" : "");
	}
	if (nnumbers == 0)
		wa_warn("no line yet");
}

/*
 * Waits for a token without spinning, then the line may go. Once
 * stopping it takes none: the line goes on at once, and wa-send, which
 * stops too, answers it unsent.
 */
static void
take(struct number *nb)
{
	static int said;
	int64_t ns = 0, t0 = 0, now, until, ms;

	if (wa_stopping && !said++)
		wa_warn("stopping: the lines left go on without a token, for "
		    "wa-send to answer unsent");
	while (!wa_stopping && (ns = wa_lease_take(nb->l)) != 0) {
		now = wa_now_ns();
		t0 = t0 ? t0 : now;
		until = wa_lease_paused_until(nb->l);
		if (until > now && nb->pause_seen <= now) {
			/* A new pause; one made longer counts once. */
			nb->pauses++;
			wa_metric_add(nb->m_pauses, 1);
		}
		if (until > nb->pause_seen)
			nb->pause_seen = until;
		ms = ns < 0 ? 250 : (ns + 999999) / 1000000;
		wa_sleep_ms(ms < MAX_SLEEP_MS ? ms : MAX_SLEEP_MS);
		if (report_asked)
			report();
	}
	if (t0 != 0) {
		t0 = wa_now_ns() - t0;
		nb->waited += t0;
		wa_bucket_waited(nb->b, t0);
		wa_metric_add(nb->m_wait, t0 / 1e9);
	}
}

/* ms to wait for input: for ever, or what is left of the drain. */
static int
patience(void)
{
	static int64_t until;
	int64_t now = wa_now_ms();

	if (!wa_stopping)
		return -1;
	until = until ? until : now + DRAIN_MS;
	return until > now ? (int)(until - now) : 0;
}

/* --pause and --set-rate: change the bucket of --number and exit. */
static int
control(void)
{
	struct number *nb = number(opt.number);

	if (nb == NULL)
		wa_die(EX_USAGE, "'%s' is not a phone number id", opt.number);
	if ((opt.set_rate > 0 && wa_lease_set_rate(nb->l, opt.set_rate,
	    opt.burst) < 0) || (opt.pause_ms > 0 && wa_lease_pause(nb->l,
	    opt.pause_ms) < 0))
		return EX_UNAVAILABLE;
	return 0;
}

/* The number a record goes out on, or NULL after rejecting it. */
static struct number *
number_of(struct wa_input *in, struct wa_record *rec)
{
	struct json_object *o = wa_json_get(rec->obj, "phone_number_id");
	struct number *nb;
	const char *id;

	if (json_object_is_type(o, json_type_int))
		id = json_object_to_json_string(o);
	else if ((id = wa_json_str(rec->obj, "phone_number_id")) == NULL) {
		wa_input_reject(in, rec, "no phone_number_id");
		return NULL;
	}
	if (!wa_number_id_valid(id))
		wa_input_reject(in, rec, "phone_number_id '%.64s' is not a "
		    "phone number id", id);
	else if ((nb = number(id)) == NULL)
		wa_input_reject(in, rec, "more than %d phone numbers",
		    MAX_NUMBERS);
	else
		return nb;
	return NULL;
}

int
main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "cluster", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ "lease-ms", required_argument, NULL, 'L' },
		{ "pg-timeout", required_argument, NULL, 'T' },
		{ "metrics", required_argument, NULL, 'M' },
		{ "number", required_argument, NULL, 'N' },
		{ "pause", required_argument, NULL, 'P' },
		{ "reject", required_argument, NULL, 'j' },
		{ "set-rate", required_argument, NULL, 'S' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct wa_input in;
	struct wa_record rec = { 0 };
	struct wa_bucket_stats st;
	struct number *nb = NULL;
	const char *reject = NULL;
	double rate;
	int c, r, wait, status = 0;

	wa_prog = "wa-throttle";
	while ((c = getopt_long(argc, argv, "b:d:hr:", longs, NULL)) != -1)
		switch (c) {
		case 'b':
			opt.burst = wa_num(optarg, 1, WA_BUCKET_BURST_MAX,
			    "burst");
			break;
		case 'C':
			opt.cluster = 1;
			break;
		case 'd':
			opt.conninfo = optarg;
			break;
		case 'h':
			usage(stdout, 0);
			break;
		case 'j':
			reject = optarg;
			break;
		case 'T':
			opt.pg_timeout = wa_num(optarg, 0, 86400 * 7,
			    "pg-timeout");
			break;
		case 'L':
			opt.lease_ms = wa_num(optarg, 1, 60000, "lease-ms");
			break;
		case 'M':
			wa_metrics_open(optarg);
			break;
		case 'N':
			opt.number = optarg;
			break;
		case 'P':
			opt.pause_ms = wa_num(optarg, 1, WA_BUCKET_PAUSE_MAX,
			    "pause");
			break;
		case 'r':
		case 'S':
			rate = wa_fnum(optarg, WA_BUCKET_RATE_MIN,
			    WA_BUCKET_RATE_MAX, "rate");
			*(c == 'r' ? &opt.rate : &opt.set_rate) = rate;
			opt.rate_given |= c == 'r';
			break;
		case 'V':
			wa_version();
		default:
			usage(stderr, EX_USAGE);
		}
	if (optind != argc || ((opt.pause_ms || opt.set_rate) &&
	    opt.number == NULL))
		usage(stderr, EX_USAGE);
	if (opt.cluster)
		cluster = wa_cluster_open(opt.conninfo, opt.pg_timeout);
	if (opt.pause_ms || opt.set_rate) {
		status = control();
		wa_cluster_close(cluster);
		return status;
	}

	wa_signals();
	wa_metrics_on_usr2(NULL);
	wa_signal(SIGUSR1, on_usr1);
	wa_input_init(&in, STDIN_FILENO, "<stdin>", 1);
	in.raw = opt.number != NULL;	/* any line will do: bytes checked */
	if (reject != NULL)
		wa_input_reject_file(&in, reject);
	if (opt.number != NULL && (nb = number(opt.number)) == NULL)
		wa_die(EX_USAGE, "'%s' is not a phone number id", opt.number);
	for (;;) {
		if (wa_stopping > 1) {
			wa_metrics_write();
			wa_signal_exit();
		}
		if ((wait = patience()) == 0) {
			wa_warn("the input had not ended %d s after the stop: "
			    "its other lines stay in the pipe",
			    DRAIN_MS / 1000);
			break;
		}
		r = wa_input_next(&in, &rec, wait);
		if (r == WA_LINE && opt.number == NULL &&
		    (nb = number_of(&in, &rec)) == NULL)
			continue;
		if (report_asked)
			report();
		if (r == WA_EOF)
			break;
		if (r == WA_ERROR) {
			/* Reading, or the reject file: said already. */
			status = EX_IOERR;
			break;
		}
		if (r != WA_LINE)
			continue;
		take(nb);
		wa_out(rec.line, rec.len);
		nb->passed++;
		wa_metric_add(nb->m_lines, 1);
		wa_lease_stats(nb->l, &st);
		wa_metric_set(nb->m_rate, st.rate);
		wa_metrics_tick();
	}
	json_object_put(rec.obj);
	wa_metrics_write();
	if (in.rejected > 0 && status == 0)
		status = EX_DATAERR;
	if (cluster != NULL && wa_cluster_down(cluster) && status == 0)
		status = EX_UNAVAILABLE;
	wa_input_free(&in);
	for (c = 0; c < nnumbers; c++) {
		wa_bucket_close(numbers[c].b);
		wa_lease_close(numbers[c].l);
		free(numbers[c].id);
	}
	wa_cluster_close(cluster);
	return status;
}
