/*
 * wa-record: applies send results to campaign_recipients in batches.
 *
 * Reads NDJSON send results (wa-send's output) on stdin, after applying
 * any results an earlier run kept on disk (WA_RESULTS_DIR). Writes
 * each batch with one statement (lib/pg/results.c: fenced, rank-monotone,
 * outage and unsent not counted as attempts). Echoes every line on stdout
 * once its batch is committed. When Postgres does not answer, the batch
 * goes to disk first, then wa-record waits up to --pg-timeout, reading
 * nothing (backpressure holds the pipeline); past it, it keeps every
 * further line on disk to the end of its input. On the first SIGTERM or
 * SIGINT it goes on to the end of its input; on a second it keeps what it
 * holds on disk and stops. Exits 0; 65 when a line was rejected; 69 when
 * Postgres stayed away (results kept on disk); 75 when stopped by a
 * second signal (results kept on disk); 74 on an I/O error; 64 on a usage
 * error.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/lines.h"
#include "core/metrics.h"
#include "core/opts.h"
#include "core/out.h"
#include "core/sig.h"
#include "records/input.h"
#include "pg/pg.h"
#include "pg/results.h"
#include "pg/spill.h"

static struct {
	long long	 batch;
	long long	 flush_ms;
	long long	 base_ms;
	long long	 cap_ms;
	long long	 pg_timeout;
	const char	*conninfo;
} opt = { 500, 200, 1000, 300000, WA_PG_TIMEOUT, NULL };

static struct wa_input in;
static struct wa_results *res;
static struct wa_spill *spill;
static int spilled;		/* the batch in hand is on disk */
static int64_t first_ms;	/* when the batch's first line came */
static struct wa_metric *by_outcome[WA_OUTCOMES], *stale_total, *norow_total;
static struct wa_metric *batch_seconds;
static unsigned long long counted[WA_OUTCOMES], stale_counted, norow_counted;
static int progress;

static void
usage(FILE *f, int status)
{
	fprintf(f, "usage: wa-record [-d conninfo] [-n batch] "
	    "[--backoff-base ms] [--backoff-cap ms]\n"
	    "                 [--flush-ms ms] [--pg-timeout secs] "
	    "[--reject file]\n"
	    "                 [--metrics file [--metrics-label name=value]]\n"
	    "       wa-record -h | --help | --version\n");
	exit(status);
}

static void
show(void)
{
	fprintf(stderr, "\rwa-record: sent %llu  retry %llu  failed %llu  "
	    "unknown %llu  halt %llu  stale %llu ",
	    wa_results_done(res, 0), wa_results_done(res, 1),
	    wa_results_done(res, 2), wa_results_done(res, 3),
	    wa_results_done(res, 4), wa_results_stale(res));
}

/* Brings the counters up to what the batches did. */
static void
tally(void)
{
	unsigned long long n;
	int k;

	for (k = 0; k < WA_OUTCOMES; k++) {
		n = wa_results_done(res, k);
		wa_metric_add(by_outcome[k], n - counted[k]);
		counted[k] = n;
	}
	n = wa_results_stale(res);
	wa_metric_add(stale_total, n - stale_counted);
	stale_counted = n;
	n = wa_results_norow(res);
	wa_metric_add(norow_total, n - norow_counted);
	norow_counted = n;
}

/* Says how many results named no row, and the first such ids. */
static void
norow_warn(void)
{
	const char *ids = wa_results_norow_ids(res), *p;
	unsigned long long named = 1;

	for (p = ids; *p != '\0'; p++)
		named += *p == ' ';
	wa_warn("%llu results name no row (ids %s%s): not applied",
	    wa_results_norow(res), ids,
	    named < wa_results_norow(res) ? " ..." : "");
}

static void
keep_line(const char *line, size_t len, void *arg)
{
	(void)arg;
	if (wa_spill_add(spill, line, len) < 0)
		wa_die(EX_IOERR, "cannot keep results on disk: %lu results "
		    "are lost, their rows stay sending for wa-reconcile",
		    (unsigned long)wa_results_count(res));
}

/* Puts the batch on disk: Postgres does not answer. */
static void
keep_batch(struct wa_results *r, void *arg)
{
	(void)arg;
	if (spilled)
		return;
	wa_results_each(r, keep_line, NULL);
	if (wa_spill_sync(spill) < 0)
		wa_die(EX_IOERR, "cannot keep results on disk");
	spilled = 1;
}

static void
echo(const char *line, size_t len, void *arg)
{
	(void)arg;
	wa_out_add(line, len);
}

/* A line Postgres refused on its own: rejected, with its number. */
static void
refused(const char *line, size_t len, const char *name, unsigned long lineno,
    const char *why, void *arg)
{
	struct wa_record rec = { NULL, (char *)line, len, lineno };

	(void)name;
	(void)arg;
	wa_input_reject(&in, &rec, "postgres refused this result: %s", why);
}

/*
 * Applies the batch and echoes its lines: 0, or -1 when Postgres is gone
 * (the batch is then on disk).
 */
static int
flush(void)
{
	int64_t t0 = wa_now_ns();

	if (wa_results_count(res) == 0)
		return 0;
	if (wa_results_apply(res, keep_batch, NULL) < 0) {
		keep_batch(res, NULL);
		return -1;
	}
	if (spilled)
		wa_spill_forget(spill);
	spilled = 0;
	wa_metric_observe(batch_seconds, (wa_now_ns() - t0) / 1e9);
	wa_results_each(res, echo, NULL);
	wa_out_flush();
	wa_results_clear(res);
	tally();
	if (progress)
		show();
	wa_metrics_tick();
	return 0;
}

/*
 * Postgres is gone for good: keeps every further line on disk, to the end
 * of the input (so that no stage before us loses a result), or until a
 * second signal. Returns the exit status.
 */
static int
drain(void)
{
	struct wa_record rec = { 0 };
	int r;

	if (wa_stopping < 2)
		wa_warn("keeping every further result in %s until the end "
		    "of input", wa_spill_path(spill));
	while (wa_stopping < 2 && (r = wa_input_next(&in, &rec, -1)) !=
	    WA_EOF) {
		if (r == WA_ERROR) {
			wa_warn("read %s:", in.lines.name);
			break;
		}
		if (r == WA_LINE && wa_spill_add(spill, rec.line, rec.len) < 0)
			break;
	}
	json_object_put(rec.obj);
	if (wa_spill_sync(spill) < 0)
		wa_warn("the results in %s may not all be on disk",
		    wa_spill_path(spill));
	wa_warn("%lu results kept in %s: the next wa-record or wa-reconcile "
	    "applies them", wa_spill_lines(spill), wa_spill_path(spill));
	return wa_stopping > 1 ? EX_TEMPFAIL : EX_UNAVAILABLE;
}

/* Reads and applies results to the end of input; the exit status. */
static int
loop(void)
{
	struct wa_record rec = { 0 };
	const char *why;
	int64_t wait;
	int r, status = -1;

	while (status < 0) {
		if (wa_stopping > 1) {
			keep_batch(res, NULL);
			status = drain();
			break;
		}
		wait = wa_results_count(res) == 0 ? -1 :
		    first_ms + opt.flush_ms - wa_now_ms();
		r = wa_input_next(&in, &rec, wait < 0 && wa_results_count(
		    res) ? 0 : (int)wait);
		switch (r) {
		case WA_LINE:
			why = wa_results_take(res, rec.obj, rec.line, rec.len,
			    in.lines.name, rec.lineno);
			if (why != NULL) {
				wa_input_reject(&in, &rec, "%s", why);
				break;
			}
			if (wa_results_count(res) == 1)
				first_ms = wa_now_ms();
			if ((long long)wa_results_count(res) >= opt.batch &&
			    flush() < 0)
				status = drain();
			break;
		case WA_EOF:
			status = flush() < 0 ? drain() : 0;
			break;
		case WA_ERROR:
			wa_warn("read %s:", in.lines.name);
			status = flush() < 0 ? drain() : EX_IOERR;
			break;
		default:
			if (wa_results_count(res) > 0 &&
			    wa_now_ms() - first_ms >= opt.flush_ms &&
			    flush() < 0)
				status = drain();
			break;
		}
	}
	json_object_put(rec.obj);
	return status;
}

int
main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "backoff-base", required_argument, NULL, 'B' },
		{ "backoff-cap", required_argument, NULL, 'C' },
		{ "flush-ms", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "metrics", required_argument, NULL, WA_OPT_METRICS },
		{ "metrics-label", required_argument, NULL, WA_OPT_LABEL },
		{ "pg-timeout", required_argument, NULL, 'T' },
		{ "reject", required_argument, NULL, 'R' },
		{ "version", no_argument, NULL, WA_OPT_VERSION },
		{ NULL, 0, NULL, 0 }
	};
	static const double secs[] = { .001, .005, .01, .05, .1, .5, 1, 5 };
	struct wa_results *old;
	struct wa_pg *db;
	unsigned long long replayed = 0;
	int c, k, status;

	wa_prog = "wa-record";
	wa_input_init(&in, STDIN_FILENO, "<stdin>", 0);
	while ((c = getopt_long(argc, argv, "d:hn:", longs, NULL)) != -1)
		switch (c) {
		case 'B':
			opt.base_ms = wa_num(optarg, 1, 86400000,
			    "backoff base");
			break;
		case 'C':
			opt.cap_ms = wa_num(optarg, 1, 86400000 * 7LL,
			    "backoff cap");
			break;
		case 'd':
			opt.conninfo = optarg;
			break;
		case 'f':
			opt.flush_ms = wa_num(optarg, 1, 3600000, "flush-ms");
			break;
		case 'n':
			opt.batch = wa_num(optarg, 1, 100000, "batch");
			break;
		case 'R':
			wa_input_reject_file(&in, optarg);
			break;
		case 'T':
			opt.pg_timeout = wa_num(optarg, 0, 86400 * 7,
			    "pg-timeout");
			break;
		default:
			if (!wa_common_opt(c, optarg, usage))
				usage(stderr, EX_USAGE);
		}
	if (optind != argc)
		usage(stderr, EX_USAGE);

	wa_signals();
	wa_metrics_on_usr2(NULL);
	for (k = 0; k < WA_OUTCOMES; k++) {
		char label[32];

		snprintf(label, sizeof label, "outcome=\"%s\"",
		    wa_outcome_names[k]);
		by_outcome[k] = wa_counter("wa_record_results_total", label,
		    "Results recorded, by outcome.");
	}
	stale_total = wa_counter("wa_record_stale_total", NULL,
	    "Results not applied: the row had moved on (fencing).");
	norow_total = wa_counter("wa_record_no_row_total", NULL,
	    "Results not applied: no row has their id.");
	batch_seconds = wa_histogram("wa_record_batch_seconds", NULL,
	    "Time to write one batch.", secs, 8);
	progress = isatty(STDERR_FILENO);
	db = wa_pg_open(opt.conninfo, opt.pg_timeout);
	res = wa_results_new(db, opt.base_ms, opt.cap_ms);
	wa_results_on_refused(res, refused, NULL);
	spill = wa_spill_new();

	/* Results an earlier run kept: before anything else. */
	old = wa_results_new(db, opt.base_ms, opt.cap_ms);
	if (wa_spill_replay(old, &replayed) < 0)
		status = drain();
	else {
		if (replayed > 0)
			wa_warn("applied %llu results kept on disk by an "
			    "earlier run", replayed);
		status = loop();
	}
	wa_results_free(old);
	if (progress)
		fputc('\n', stderr);
	if (wa_results_stale(res) > 0)
		wa_warn("%llu results not applied: their rows had moved on "
		    "(a webhook or wa-reconcile got there first)",
		    wa_results_stale(res));
	if (wa_results_norow(res) > 0)
		norow_warn();
	tally();
	wa_metrics_write();
	wa_spill_close(spill);
	wa_results_free(res);
	wa_pg_close(db);
	wa_input_free(&in);
	if (status != 0)
		return status;
	return in.rejected ? EX_DATAERR : 0;
}
