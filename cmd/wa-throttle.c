/*
 * wa-throttle: passes each line on once the bucket of its phone number
 * has a token, so that the pipeline's backpressure starts here.
 *
 * Reads NDJSON send requests on stdin; writes each one on stdout, its
 * bytes unchanged and whole, after taking a token from the bucket of its
 * phone_number_id (or of --number, which reads any lines, unparsed); the
 * lines that pass together go out in one write, before any wait. A wait
 * for a token lasts a few ms longer than the token (WA_GATHER_MS), so
 * that at 1,000/s a wake-up passes several lines, not one.
 * The bucket of a number is shared by every process on the host
 * (WA_STATE_DIR) and, with --cluster, by every host (Postgres). It holds
 * one line at a time: while it waits, its input pipe fills. The
 * number's rate, less its reserve (--reserve), is shared by weight
 * (--weight) between the processes drawing from it: each paces itself at
 * its share, and one with nothing to send leaves its share to the others
 * within half a second; while an --urgent one draws, the others wait.
 * With --pause, --set-rate or --set-reserve it changes a bucket and
 * exits.
 *
 * Stopping is draining: after SIGTERM or SIGINT it takes no more tokens
 * and passes on at once the line it holds and every line still in its
 * input, for wa-send (stopping too) to answer unsent, until the end of
 * input or DRAIN_MS after the stop; a second signal ends it at once.
 *
 * Exits 0 at the end of input or when stopped, 65 if a line was rejected
 * (no phone_number_id, not a JSON object, not UTF-8, over 4 MiB), 69 when
 * Postgres was unreachable at the end (--cluster), 74 when reading stdin
 * or writing stdout or the reject file fails (its reader gone, noticed
 * even while it waits), 78 when the state directory
 * cannot be used, 64 on a usage error; killed by the signal after a
 * second one.
 */
#include <dirent.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/lines.h"
#include "core/metrics.h"
#include "core/opts.h"
#include "core/out.h"
#include "core/sig.h"
#include "core/state.h"
#include "records/input.h"
#include "records/json.h"
#include "records/request.h"
#include "api/bucket.h"
#include "api/share.h"
#include "pg/lease.h"
#include "pg/pg.h"

#define MAX_NUMBERS 1000
#define MAX_SLEEP_MS 100	/* so that a rate set live is seen soon */
#define DRAIN_MS 2000		/* once stopped, the wait for end of input */
#define WRITE_BYTES 65536	/* lines held for one write, at most */

struct number {
	char		*id;
	struct wa_bucket *b;		/* on this host */
	struct wa_lease	*l;		/* its tokens: b's or the cluster's */
	int64_t		 pause_seen;	/* end of the last pause counted */
	int		 told;		/* whether -r was checked on the row */
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
	int		 show;
	int		 create;
	int		 weight;
	double		 reserve;	/* -1: not given */
	int		 set_reserve;
	int		 urgent;
	const char	*reject;
} opt = { WA_BUCKET_RATE, 0, NULL, 0, NULL, 100, 0, 0, 0, WA_PG_TIMEOUT, 0,
    0, 1, -1, 0, 0, NULL };
static int control_only;	/* control(): changes a bucket and exits */

static struct number numbers[MAX_NUMBERS];
static int nnumbers;
static struct wa_cluster *cluster;
static volatile sig_atomic_t report_asked;

static void
usage(FILE *f, int status)
{
	fprintf(f, "usage: wa-throttle [-r rate] [-b burst] [--number id] "
	    "[--reject file]\n"
	    "                  [--weight n] [--urgent] [--reserve percent]\n"
	    "                  [--metrics file [--metrics-label name=value]]\n"
	    "                  [--cluster [-d conninfo] [--lease-ms ms] "
	    "[--pg-timeout secs]]\n"
	    "       wa-throttle --number id [--set-rate rate [-b burst]] "
	    "[--pause ms]\n"
	    "                  [--set-reserve percent] [--create] "
	    "[--cluster [-d conninfo]]\n"
	    "       wa-throttle --show [--number id] "
	    "[--cluster [-d conninfo]]\n"
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
		    wa_state_dir());
	nnumbers++;
	nb->id = wa_strdup(id);
	nb->l = wa_lease_open(cluster, nb->b, id, opt.rate, opt.burst,
	    opt.lease_ms * 1000000, control_only ? 0 : opt.weight,
	    opt.urgent);
	if (!control_only && opt.reserve >= 0 && wa_lease_set_reserve(nb->l,
	    opt.reserve) < 0)
		wa_warn("%s: the reserve is not set: postgres is down", id);
	wa_bucket_stats(nb->b, &st);
	differs = opt.burst && st.burst != opt.burst;
	if (opt.rate_given && fabs(st.base - opt.rate) > opt.rate / 1000)
		differs = 1;
	if (cluster == NULL && differs && !opt.set_rate && !opt.pause_ms)
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
		if (st.share < 1)
			wa_warn("%s: its share %g/s (weight %d, reserve %g%%)",
			    nb->id, st.rate * st.share, opt.weight,
			    st.reserve * 100);
	}
	if (nnumbers == 0)
		wa_warn("no line yet");
}

/*
 * How much longer than until the next token a wait lasts, in ms: up to
 * WA_GATHER_MS, so that a few tokens come together and the lines behind
 * them go in one wake-up (one a millisecond at 1,000/s, each costing
 * more than its line), but never more tokens than the bucket holds, so
 * none is lost and the rate stays. Not with --cluster: a lease's tokens
 * end with it.
 */
static int64_t
gather_ms(struct number *nb)
{
	struct wa_bucket_stats st;
	double frac, ms;

	if (cluster != NULL)
		return 0;
	wa_lease_stats(nb->l, &st);
	frac = st.share > 0 && st.share < 1 ? st.share : 1;
	ms = 1000 * (st.burst * frac - 1) / (st.rate * frac);
	return ms < 1 ? 0 : ms > WA_GATHER_MS ? WA_GATHER_MS : (int64_t)ms;
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
		ms = ns < 0 ? 250 : (ns + 999999) / 1000000 + gather_ms(nb);
		wa_out_flush();
		wa_sleep_ms(ms < MAX_SLEEP_MS ? ms : MAX_SLEEP_MS);
		if (report_asked)
			report();
	}
	if (cluster != NULL && !nb->told && !wa_stopping) {
		/* The first lease told the row's rate: say if -r is not it. */
		struct wa_bucket_stats st;

		nb->told = 1;
		wa_lease_stats(nb->l, &st);
		if ((opt.rate_given && fabs(st.rate - opt.rate) > opt.rate /
		    1000) || (opt.burst && st.burst != opt.burst))
			wa_warn("%s: the cluster's bucket runs at %g/s, burst "
			    "%lld, which this process keeps: -r and -b only "
			    "make a new row (use --set-rate --cluster)", nb->id,
			    st.rate, (long long)st.burst);
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

/* A pause's end as RFC 3339 UTC, ms from now; "-" when none. */
static const char *
until_text(int64_t ms)
{
	static char buf[32];
	struct timespec ts;
	struct tm tm;
	time_t t;

	if (ms <= 0)
		return "-";
	clock_gettime(CLOCK_REALTIME, &ts);
	t = ts.tv_sec + (ts.tv_nsec / 1000000 + ms + 999) / 1000;
	gmtime_r(&t, &tm);
	strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

static void
show_line(const char *id, const struct wa_bucket_stats *st,
    const char *where)
{
	char reserve[16] = "-";

	if (st->reserve > 0)
		snprintf(reserve, sizeof reserve, "%g%%", st->reserve * 100);
	printf("%-16s %10.6g %10.6g %7lld  %-20s %7s  %-10s  %s\n", id,
	    st->rate, st->base, (long long)st->burst,
	    until_text(st->paused_ms), reserve, st->drawing, where);
}

static void
show_row(const char *id, const struct wa_bucket_stats *st)
{
	show_line(id, st, "cluster");
}

static int
bucket_file(const struct dirent *d)
{
	return strncmp(d->d_name, "bucket-", 7) == 0 &&
	    wa_number_id_valid(d->d_name + 7);
}

/*
 * --show: each bucket (or --number's) on this host, or with --cluster
 * the cluster's rows: the rate in force and the configured one, burst,
 * the end of a pause, and where it lives. Exits 0, 69 when --number has
 * no bucket.
 */
static int
show(void)
{
	struct wa_bucket_stats st;
	struct dirent **names = NULL;
	struct wa_buf path = { 0 };
	struct wa_bucket *b;
	struct wa_share *sh;
	const char *dir = wa_state_dir();
	int i, n, found = 0;

	printf("%-16s %10s %10s %7s  %-20s %7s  %-10s  %s\n", "number",
	    "rate/s", "own/s", "burst", "paused_until", "reserve", "drawing",
	    "where");
	if (cluster != NULL) {
		if ((found = wa_cluster_buckets(cluster, opt.number,
		    show_row)) < 0)
			wa_die(EX_UNAVAILABLE, "no bucket shown: postgres "
			    "could not be reached within --pg-timeout "
			    "(%lld s)", opt.pg_timeout);
	} else if ((n = scandir(dir, &names, bucket_file, alphasort)) >= 0) {
		for (i = 0; i < n; i++) {
			const char *id = names[i]->d_name + 7;

			if ((opt.number == NULL || strcmp(id, opt.number) ==
			    0) && (b = wa_bucket_find(id)) != NULL) {
				wa_bucket_stats(b, &st);
				if ((sh = wa_share_open(id, 0, 0)) != NULL) {
					st.reserve = wa_share_reserve(sh);
					wa_share_drawing(sh, st.drawing,
					    sizeof st.drawing);
					wa_share_close(sh);
				}
				path.len = 0;
				wa_buf_printf(&path, "%s/%s", dir,
				    names[i]->d_name);
				show_line(id, &st, path.s);
				wa_bucket_close(b);
				found++;
			}
			free(names[i]);
		}
		free(names);
	}
	wa_buf_free(&path);
	if (found == 0 && opt.number == NULL)
		wa_warn("no bucket %s%s", cluster ? "in the cluster" :
		    "in ", cluster ? "" : dir);
	if (found > 0 || opt.number == NULL)
		return 0;
	wa_warn("number %s has no bucket %s", opt.number, cluster ?
	    "in the cluster (throttle_buckets)" : "on this host");
	if (cluster == NULL)
		wa_warn("(looked in %s: is WA_STATE_DIR the pipelines'?)", dir);
	return EX_UNAVAILABLE;
}

static struct wa_bucket_stats row;

static void
copy_row(const char *id, const struct wa_bucket_stats *st)
{
	(void)id;
	row = *st;
}

/*
 * Whether --number has a bucket, on this host or in the cluster: 1 or 0,
 * or -1 when Postgres could not be reached within --pg-timeout.
 */
static int
exists(struct wa_bucket_stats *st)
{
	struct wa_bucket *b;
	struct wa_share *sh;
	int n;

	if (cluster != NULL) {
		if ((n = wa_cluster_buckets(cluster, opt.number, copy_row)) < 0)
			return -1;
		if (n == 0)
			return 0;
		*st = row;
		return 1;
	}
	if ((b = wa_bucket_find(opt.number)) == NULL)
		return 0;
	wa_bucket_stats(b, st);
	wa_bucket_close(b);
	if ((sh = wa_share_open(opt.number, 0, 0)) != NULL) {
		st->reserve = wa_share_reserve(sh);
		wa_share_close(sh);
	}
	return 1;
}

/* Says what control() left undone for want of Postgres: 69. */
static int
unreached(const char *what)
{
	wa_warn("number %s: %s: postgres could not be reached within "
	    "--pg-timeout (%lld s)", opt.number, what, opt.pg_timeout);
	return EX_UNAVAILABLE;
}

/*
 * A change to a number that has no bucket: most likely a mistyped
 * number, which a change would not reach (and a pause would not hold).
 */
static int
nobucket(void)
{
	const char *host = cluster ? "the cluster" : "this host";

	if (opt.set_reserve) {
		wa_warn("number %s has no bucket on %s: check the number",
		    opt.number, host);
		return EX_USAGE;
	}
	if (opt.set_rate > 0)
		wa_warn("number %s has no bucket on %s: check the number, or "
		    "add --create to make one at %g/s", opt.number, host,
		    opt.set_rate);
	else
		wa_warn("number %s has no bucket on %s, so no pipeline draws "
		    "from it: check the number, or add --create to pause it "
		    "before any starts", opt.number, host);
	if (cluster == NULL)
		wa_warn("(looked in %s: is WA_STATE_DIR the pipelines'?)",
		    wa_state_dir());
	return EX_USAGE;
}

/*
 * --pause, --set-rate and --set-reserve: change the bucket of --number
 * and exit. Only a bucket that exists is changed, unless --create: a
 * mistyped number must not make one.
 */
static int
control(void)
{
	struct wa_bucket_stats was = { 0 };
	struct number *nb;
	const char *where = cluster ? "the cluster's" : "this host's";
	int there;

	control_only = 1;
	if (!wa_number_id_valid(opt.number))
		wa_die(EX_USAGE, "'%s' is not a phone number id", opt.number);
	if ((there = exists(&was)) < 0)
		return unreached("nothing changed");
	if (!there && !opt.create)
		return nobucket();
	nb = number(opt.number);
	if (opt.set_rate > 0) {
		if (wa_lease_set_rate(nb->l, opt.set_rate, opt.burst) < 0)
			return unreached("the rate is not set");
		if (there)
			wa_warn("number %s: %s bucket's rate %g/s -> %g/s, "
			    "burst %lld -> %lld", opt.number, where, was.base,
			    opt.set_rate, (long long)was.burst,
			    (long long)(opt.burst ? opt.burst :
			    wa_bucket_default_burst(opt.set_rate)));
		else
			wa_warn("number %s: %s bucket made at %g/s, burst "
			    "%lld", opt.number, where, opt.set_rate,
			    (long long)(opt.burst ? opt.burst :
			    wa_bucket_default_burst(opt.set_rate)));
	}
	if (opt.reserve >= 0) {
		if (wa_lease_set_reserve(nb->l, opt.reserve) < 0)
			return unreached("the reserve is not set");
		wa_warn("number %s: %s bucket keeps %g%% of its rate back, "
		    "%g%% before", opt.number, where, opt.reserve * 100,
		    was.reserve * 100);
	}
	if (opt.pause_ms > 0) {
		if (wa_lease_pause(nb->l, opt.pause_ms) < 0)
			return unreached("the number is not paused");
		wa_warn("number %s: %s bucket paused %lld ms, until %s",
		    opt.number, where, opt.pause_ms,
		    until_text(opt.pause_ms));
	}
	return 0;
}

/* --reserve: a percentage, "10%" or "10", from 0 to 99. */
static double
reserve_of(const char *s)
{
	char buf[32];
	size_t n = strlen(s);

	if (n > 0 && n < sizeof buf && s[n - 1] == '%') {
		memcpy(buf, s, n - 1);
		buf[n - 1] = '\0';
		s = buf;
	}
	return wa_fnum(s, 0, WA_SHARE_RESERVE_MAX * 100, "reserve") / 100;
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

enum mode { FILTER, SHOW, CONTROL };

/*
 * The mode the options ask for: --show, a change to the bucket of
 * --number (--pause, --set-rate, --set-reserve), or the filter. Options
 * that do not go together are a usage error.
 */
static enum mode
mode(void)
{
	int change = opt.pause_ms || opt.set_rate || opt.set_reserve;

	if (change && opt.number == NULL) {
		wa_warn("%s needs --number ID: the phone number id whose "
		    "bucket to change (wa-throttle --show lists them)",
		    opt.set_rate ? "--set-rate" : opt.pause_ms ? "--pause" :
		    "--set-reserve");
		usage(stderr, EX_USAGE);
	}
	if (opt.create && !opt.set_rate && !opt.pause_ms) {
		wa_warn("--create goes with --set-rate or --pause");
		usage(stderr, EX_USAGE);
	}
	if (opt.show && (opt.pause_ms || opt.set_rate || opt.reserve >= 0)) {
		wa_warn("--show changes nothing: use it apart from --set-rate, "
		    "--set-reserve and --pause");
		usage(stderr, EX_USAGE);
	}
	return opt.show ? SHOW : change ? CONTROL : FILTER;
}

/*
 * Passes each line of in on to stdout once it has a token from its
 * number: nb, --number's, or else the line's phone_number_id's. Until
 * the end of input or of the drain; a second signal ends the program.
 * Returns 0, or 74 when reading failed.
 */
static int
loop(struct wa_input *in, struct number *nb)
{
	struct wa_record rec = { 0 };
	struct wa_bucket_stats st;
	int r, wait, status = 0;

	for (;;) {
		if (wa_stopping > 1) {
			wa_out_flush();
			wa_metrics_write();
			wa_signal_exit();
		}
		if ((wait = patience()) == 0) {
			wa_warn("the input had not ended %d s after the stop: "
			    "its other lines stay in the pipe",
			    DRAIN_MS / 1000);
			break;
		}
		/* The lines passed go out together before any wait. */
		if (wa_out_held() >= WRITE_BYTES ||
		    (r = wa_input_next(in, &rec, 0)) == WA_AGAIN) {
			wa_out_flush();
			r = wa_input_next(in, &rec, wait);
		}
		if (r == WA_LINE && opt.number == NULL &&
		    (nb = number_of(in, &rec)) == NULL)
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
		wa_out_add(rec.line, rec.len);
		nb->passed++;
		wa_metric_add(nb->m_lines, 1);
		wa_lease_stats(nb->l, &st);
		wa_metric_set(nb->m_rate, st.rate);
		wa_metrics_tick();
	}
	wa_out_flush();
	json_object_put(rec.obj);
	return status;
}

/* The filter: stdin to stdout, each line paced by its number's bucket. */
static int
filter(void)
{
	struct wa_input in;
	struct number *nb = NULL;
	int i, status;

	wa_signals();
	wa_watch_reader(STDOUT_FILENO);
	if (opt.number != NULL)
		wa_metrics_label("number", opt.number);
	wa_metrics_on_usr2(NULL);
	wa_signal(SIGUSR1, on_usr1);
	wa_input_init(&in, STDIN_FILENO, "<stdin>", 1);
	in.raw = opt.number != NULL;	/* any line will do: bytes checked */
	if (opt.reject != NULL)
		wa_input_reject_file(&in, opt.reject);
	if (opt.number != NULL && (nb = number(opt.number)) == NULL)
		wa_die(EX_USAGE, "'%s' is not a phone number id", opt.number);
	status = loop(&in, nb);
	wa_metrics_write();
	if (in.rejected > 0 && status == 0)
		status = EX_DATAERR;
	if (cluster != NULL && wa_cluster_down(cluster) && status == 0)
		status = EX_UNAVAILABLE;
	wa_input_free(&in);
	for (i = 0; i < nnumbers; i++) {
		wa_bucket_close(numbers[i].b);
		wa_lease_close(numbers[i].l);
		free(numbers[i].id);
	}
	return status;
}

int
main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "cluster", no_argument, NULL, 'C' },
		{ "create", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "lease-ms", required_argument, NULL, 'L' },
		{ "pg-timeout", required_argument, NULL, 'T' },
		{ "metrics", required_argument, NULL, WA_OPT_METRICS },
		{ "metrics-label", required_argument, NULL, WA_OPT_LABEL },
		{ "number", required_argument, NULL, 'N' },
		{ "pause", required_argument, NULL, 'P' },
		{ "reject", required_argument, NULL, 'j' },
		{ "reserve", required_argument, NULL, 'R' },
		{ "set-rate", required_argument, NULL, 'S' },
		{ "set-reserve", required_argument, NULL, 'X' },
		{ "show", no_argument, NULL, 's' },
		{ "version", no_argument, NULL, WA_OPT_VERSION },
		{ "urgent", no_argument, NULL, 'U' },
		{ "weight", required_argument, NULL, 'W' },
		{ NULL, 0, NULL, 0 }
	};
	enum mode m;
	double rate;
	int c, status;

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
		case 'c':
			opt.create = 1;
			break;
		case 's':
			opt.show = 1;
			break;
		case 'd':
			opt.conninfo = optarg;
			break;
		case 'j':
			opt.reject = optarg;
			break;
		case 'T':
			opt.pg_timeout = wa_num(optarg, 0, 86400 * 7,
			    "pg-timeout");
			break;
		case 'L':
			opt.lease_ms = wa_num(optarg, 1, 60000, "lease-ms");
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
		case 'R':
		case 'X':
			opt.reserve = reserve_of(optarg);
			opt.set_reserve |= c == 'X';
			break;
		case 'U':
			opt.urgent = 1;
			break;
		case 'W':
			opt.weight = wa_num(optarg, 1, WA_SHARE_WEIGHT_MAX,
			    "weight");
			break;
		default:
			if (!wa_common_opt(c, optarg, usage))
				usage(stderr, EX_USAGE);
		}
	if (optind != argc)
		usage(stderr, EX_USAGE);

	m = mode();
	if (opt.cluster)
		cluster = wa_cluster_open(opt.conninfo, opt.pg_timeout);
	status = m == SHOW ? show() : m == CONTROL ? control() : filter();
	wa_cluster_close(cluster);
	return status;
}
