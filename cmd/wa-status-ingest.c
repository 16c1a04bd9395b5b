/*
 * wa-status-ingest: applies Meta's status webhooks to campaign_recipients.
 *
 * Reads webhook bodies, one per line: from stdin (replays; no checkpoint)
 * or, with --follow DIR, from wa-webhook's spool, resuming from the
 * checkpoint that each batch commits together with its statuses, so a
 * crash neither loses a body nor applies one twice; with --prune, the
 * segments before a committed checkpoint are removed. Each batch is reduced
 * to the highest-ranked status per message and applied with one
 * statement, sorted and rank-monotone (lib/records/status.c,
 * lib/pg/statusdb.c);
 * statuses whose row is not there yet wait in unmatched_statuses and are
 * applied when it appears. The pricing a status carries (category, type,
 * billable) is kept with its row. An inbound text whose whole body, trimmed and
 * in lower case, is a keyword of optout_keywords adds its sender to the
 * suppressions of the number written to, in the same statement (an
 * opt-out: wa-claim sends them nothing more). Every inbound message, of
 * any type, goes into inbound_messages in the same statement, once
 * (lib/records/inbound.c), with the campaign row it answers. While
 * Postgres is away (a restart, a failover) it reads nothing and waits
 * up to --pg-timeout. A status Postgres refuses for its data is
 * reported with its body's line number, the rest of its batch applied.
 * Writes nothing on stdout. Exits 0 at the end of input, after SIGTERM
 * or SIGINT (the batch in hand is applied first) or, with --once, when
 * the spool is caught up; 65 if a line was rejected (not a JSON object,
 * not UTF-8, over WA_LINE_MAX, a status timestamp that is not a time:
 * copied whole to --reject, a spool line over WA_LINE_MAX reread from
 * its segment in pieces) or a status was refused, 66 when the spool is
 * missing, 69 when Postgres stays away past --pg-timeout or fails, 74
 * when stdin or the spool cannot be read or the reject file written, 75
 * when another process follows the same spool, 64 on a usage error.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "core/lines.h"
#include "core/metrics.h"
#include "core/opts.h"
#include "core/sig.h"
#include "records/input.h"
#include "records/status.h"
#include "pg/statusdb.h"
#include "pg/pg.h"
#include "spool/spool.h"

#define RETRY_MS 1000		/* retry kept statuses at most this often */
#define ALL 3153600000LL	/* a retry window of 100 years */

static struct {
	const char	*conninfo;
	const char	*follow;
	long long	 batch;
	long long	 flush_ms;
	long long	 window;
	long long	 sweep;
	long long	 ttl;
	long long	 pg_timeout;
	int		 once;
	int		 prune;
} opt = { NULL, NULL, 1000, 100, 600, 600, 7 * 86400, WA_PG_TIMEOUT, 0, 0 };

static struct wa_input in;
static struct wa_spool_reader rd;
static struct wa_status_sink sink;
static int64_t retried_at, sweep_at;
static struct wa_metric *m_seen[WA_ST_N], *m_odd[WA_ODD_N], *m_bodies;
static struct wa_metric *m_applied[4], *m_kept, *m_matched, *m_expired;
static struct wa_metric *m_rejected, *m_size, *m_texts, *m_optouts;
static struct wa_metric *m_inbound;
static unsigned long long bodies;	/* lines taken, not rejected */

static void
usage(FILE *f, int status)
{
	fprintf(f, "usage: wa-status-ingest [--once] [--prune] [-d conninfo] "
	    "[-n batch] [--flush-ms ms]\n"
	    "                        [--pg-timeout secs] [--reject file]\n"
	    "                        [--metrics file "
	    "[--metrics-label name=value]]\n"
	    "                        [--retry-window s] [--sweep-interval s] "
	    "[--unmatched-ttl s]\n"
	    "                        [--follow dir]\n"
	    "       wa-status-ingest -h | --help | --version\n");
	exit(status);
}

static void
metrics(void)
{
	static const double sizes[] = { 1, 10, 100, 500, 1000, 2000, 5000,
	    10000 };
	static const double secs[] = { .001, .005, .01, .025, .05, .1, .25,
	    .5, 1, 5 };
	static const double lags[] = { 1, 5, 15, 60, 300, 900, 3600, 21600,
	    86400 };
	char l[64];
	int i;

	for (i = 0; i < WA_ST_N; i++) {
		snprintf(l, sizeof l, "status=\"%s\"", wa_st_names[i]);
		m_seen[i] = wa_counter("wa_status_ingest_statuses_total", l,
		    "Statuses read, by status value.");
		if (i < 4)
			m_applied[i] = wa_counter(
			    "wa_status_ingest_applied_total", l,
			    "Statuses that moved a row up, by status.");
	}
	for (i = 0; i < WA_ODD_N; i++) {
		snprintf(l, sizeof l, "kind=\"%s\"", wa_odd_names[i]);
		m_odd[i] = wa_counter("wa_status_ingest_skipped_total", l,
		    "Things in bodies that are not statuses, by kind.");
	}
	m_bodies = wa_counter("wa_status_ingest_bodies_total", NULL,
	    "Webhook bodies read.");
	m_texts = wa_counter("wa_status_ingest_inbound_texts_total", NULL,
	    "Inbound text messages read.");
	m_optouts = wa_counter("wa_status_ingest_optouts_total", NULL,
	    "People added to suppressions by an opt-out keyword.");
	m_inbound = wa_counter("wa_status_ingest_inbound_stored_total", NULL,
	    "Inbound messages added to inbound_messages (redeliveries not).");
	m_rejected = wa_counter("wa_status_ingest_rejected_total", NULL,
	    "Lines that were not a JSON object.");
	m_kept = wa_counter("wa_status_ingest_unmatched_kept_total", NULL,
	    "Statuses that matched no row, kept in unmatched_statuses.");
	m_matched = wa_counter("wa_status_ingest_unmatched_matched_total",
	    NULL, "Kept statuses whose row appeared later.");
	m_expired = wa_counter("wa_status_ingest_unmatched_expired_total",
	    NULL, "Kept statuses dropped after --unmatched-ttl.");
	m_size = wa_histogram("wa_status_ingest_batch_statuses", NULL,
	    "Statuses in one batch, before reduction.", sizes, 8);
	sink.secs = wa_histogram("wa_status_ingest_batch_seconds", NULL,
	    "From sending a batch to its commit.", secs, 10);
	sink.lag = wa_histogram("wa_status_ingest_lag_seconds", NULL,
	    "From a status's timestamp to its application.", lags, 9);
}

/* Brings the counters up to date and writes them now and then. */
static void
report(void)
{
	int i;

	for (i = 0; i < WA_ST_N; i++)
		wa_metric_set(m_seen[i], sink.b[0].seen[i] + sink.b[1].seen[i]);
	for (i = 0; i < WA_ODD_N; i++)
		wa_metric_set(m_odd[i], sink.b[0].odd[i] + sink.b[1].odd[i] +
		    (i == WA_ODD_FOREIGN ? sink.total.foreign : 0));
	for (i = 0; i < 4; i++)
		wa_metric_set(m_applied[i], sink.total.applied[i]);
	wa_metric_set(m_texts, sink.b[0].texts + sink.b[1].texts);
	wa_metric_set(m_optouts, sink.total.optouts);
	wa_metric_set(m_inbound, sink.total.inbound);
	wa_metric_set(m_kept, sink.total.kept);
	wa_metric_set(m_matched, sink.total.matched);
	wa_metric_set(m_rejected, in.rejected);
	wa_metric_set(m_bodies, bodies + in.rejected);
	wa_metrics_tick();
}

/* A status Postgres refused on its own: reported, counted. */
static void
refused(unsigned long lineno, const char *why)
{
	wa_warn("%s:%lu: postgres refused a status of this body: %s",
	    in.lines.name, lineno, why);
	in.rejected++;
}

/*
 * A batch is committed with its checkpoint in segment seg: the segments
 * before it are applied for good (--prune).
 */
static void
prune(long long seg)
{
	wa_spool_prune(sink.spool, seg);
}

static void
flush(void)
{
	wa_metric_observe(m_size, sink.b[sink.cur].n);
	wa_status_flush(&sink, rd.seg, rd.off);
	report();
}

/* Kept statuses: the young ones now and then, all at each sweep. */
static void
retry(void)
{
	long long n;

	if (wa_now_ms() < sweep_at) {
		wa_status_retry(&sink, opt.window);
		retried_at = wa_now_ms();
		return;
	}
	wa_status_retry(&sink, ALL);
	retried_at = wa_now_ms();
	sweep_at = retried_at + opt.sweep * 1000;
	if (opt.ttl > 0 && (n = wa_status_expire(&sink, opt.ttl)) > 0) {
		wa_warn("expired %lld unmatched statuses older than %llds", n,
		    opt.ttl);
		wa_metric_add(m_expired, n);
	}
}

/* When the loop must next retry without input (ms). */
static int64_t
due(void)
{
	if (sink.kept_at > 0 && wa_now_ms() - sink.kept_at <=
	    opt.window * 1000 && retried_at + RETRY_MS < sweep_at)
		return retried_at + RETRY_MS;
	return sweep_at;
}

enum { REJECTED = 100 };	/* a spool line rejected, for the checkpoint */

/*
 * A spool line over WA_LINE_MAX, which the reader skipped: reported with
 * its number and copied whole to the reject file, reread from its
 * segment in pieces as stdin's come. REJECTED, or WA_ERROR (said).
 */
static int
toolong(struct wa_record *rec)
{
	char buf[65536];
	long long at = 0;
	ssize_t n = 0;

	while (at < rd.long_len) {
		if ((n = wa_spool_reread(&rd, buf, sizeof buf, at)) < 0) {
			wa_warn("read %s:", rd.path);
			return WA_ERROR;
		}
		if ((at += n) < rd.long_len)
			wa_input_reject_part(&in, buf, n, rec->lineno);
	}
	rec->line = buf;
	rec->len = n;
	wa_input_reject(&in, rec, "line longer than %d bytes", WA_LINE_MAX);
	rec->line = NULL;
	rec->len = 0;
	return REJECTED;
}

/*
 * The next body, parsed, in *rec: WA_LINE, REJECTED, WA_AGAIN, WA_EOF or
 * WA_ERROR (said on stderr). Lines are checked by the reader both from
 * stdin and from the spool.
 */
static int
next(struct wa_record *rec, int timeout)
{
	int r;

	if (opt.follow == NULL)
		return wa_input_next(&in, rec, timeout);
	if (in.failed)
		return WA_ERROR;
	r = wa_spool_next(&rd, &rec->line, &rec->len);
	if (r == WA_AGAIN && timeout != 0) {
		wa_sleep_ms(timeout < 0 || timeout > 50 ? 50 : timeout);
		r = wa_spool_next(&rd, &rec->line, &rec->len);
	}
	in.lines.name = rd.path;
	rec->lineno = rd.lineno;
	switch (r) {
	case WA_TOOLONG:
		return toolong(rec);
	case WA_LINE:
		return wa_input_check(&in, rec) ? WA_LINE : REJECTED;
	case WA_ERROR:
		wa_warn("read %s:", rd.path);
		break;
	}
	return r;
}

/* Reads and applies bodies until the input ends; returns an exit code. */
static int
loop(void)
{
	struct wa_record rec = { 0 };
	const char *why;
	int64_t first = 0, wait;
	int r, pend = 0;

	for (;;) {
		if (pend == 0 && !wa_stopping && wa_now_ms() >= due())
			retry();
		if (wa_stopping)
			break;
		wait = (pend ? first + opt.flush_ms : due()) - wa_now_ms();
		if (!pend && sink.busy)
			wait = 0;	/* first collect the batch in flight */
		r = next(&rec, wait < 0 ? 0 : wait > INT_MAX ? INT_MAX :
		    (int)wait);
		if (r == WA_LINE || r == REJECTED) {
			/* A rejected line counts, so the checkpoint moves. */
			if (pend++ == 0)
				first = wa_now_ms();
			if (r == WA_LINE && (why = wa_status_walk(
			    &sink.b[sink.cur], rec.obj, in.lines.name,
			    rec.lineno)) != NULL)
				wa_input_reject(&in, &rec, "%s", why);
			else
				bodies += r == WA_LINE;
			if ((long long)(sink.b[sink.cur].n +
			    sink.b[sink.cur].nmsg) >= opt.batch) {
				flush();
				pend = 0;
			}
		} else if (r == WA_ERROR) {
			json_object_put(rec.obj);
			return EX_IOERR;
		} else if (r == WA_EOF)
			break;
		else if (pend && wa_now_ms() - first >= opt.flush_ms) {
			flush();
			pend = 0;
		} else if (!pend) {
			wa_status_collect(&sink);
			report();
			if (opt.once)
				break;
		}
	}
	json_object_put(rec.obj);
	if (pend)
		flush();
	wa_status_collect(&sink);
	if (sink.kept_at > 0)
		wa_status_retry(&sink, opt.window);
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "flush-ms", required_argument, NULL, 'f' },
		{ "follow", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ "metrics", required_argument, NULL, WA_OPT_METRICS },
		{ "metrics-label", required_argument, NULL, WA_OPT_LABEL },
		{ "once", no_argument, NULL, '1' },
		{ "pg-timeout", required_argument, NULL, 'T' },
		{ "prune", no_argument, NULL, 'p' },
		{ "reject", required_argument, NULL, 'R' },
		{ "retry-window", required_argument, NULL, 'w' },
		{ "sweep-interval", required_argument, NULL, 'S' },
		{ "unmatched-ttl", required_argument, NULL, 't' },
		{ "version", no_argument, NULL, WA_OPT_VERSION },
		{ NULL, 0, NULL, 0 }
	};
	const char *reject = NULL;
	long long seg, off;
	int c, status;

	wa_prog = "wa-status-ingest";
	while ((c = getopt_long(argc, argv, "d:hn:", longs, NULL)) != -1)
		switch (c) {
		case 'd':
			opt.conninfo = optarg;
			break;
		case 'f':
			opt.flush_ms = wa_num(optarg, 0, 3600000, "flush-ms");
			break;
		case 'F':
			opt.follow = optarg;
			break;
		case 'n':
			opt.batch = wa_num(optarg, 1, 100000, "batch");
			break;
		case '1':
			opt.once = 1;
			break;
		case 'p':
			opt.prune = 1;
			break;
		case 'R':
			reject = optarg;
			break;
		case 'S':
			opt.sweep = wa_num(optarg, 1, 86400 * 365,
			    "sweep-interval");
			break;
		case 'T':
			opt.pg_timeout = wa_num(optarg, 0, 86400 * 7,
			    "pg-timeout");
			break;
		case 't':
			opt.ttl = wa_num(optarg, 0, 86400 * 3650,
			    "unmatched-ttl");
			break;
		case 'w':
			opt.window = wa_num(optarg, 0, 86400 * 3650,
			    "retry-window");
			break;
		default:
			if (!wa_common_opt(c, optarg, usage))
				usage(stderr, EX_USAGE);
		}
	if (optind != argc || ((opt.once || opt.prune) && !opt.follow))
		usage(stderr, EX_USAGE);

	wa_signals();
	wa_metrics_on_usr2(NULL);
	metrics();
	wa_input_init(&in, STDIN_FILENO, "<stdin>", 0);
	in.flags = 0;		/* Meta's bodies: status.c checks the fields */
	if (reject != NULL)
		wa_input_reject_file(&in, reject);
	sink.db = wa_pg_open(opt.conninfo, opt.pg_timeout);
	wa_status_deployment(&sink);
	sink.refused = refused;
	if (opt.prune)
		sink.committed = prune;
	rd.seg = -1;
	rd.fd = -1;
	if (opt.follow != NULL) {
		if ((sink.spool = realpath(opt.follow, NULL)) == NULL)
			wa_die(EX_NOINPUT, "open %s:", opt.follow);
		wa_spool_reader_lock(sink.spool);
		wa_status_checkpoint(&sink, &seg, &off);
		wa_spool_reader_open(&rd, sink.spool, seg, off);
	}
	status = loop();
	report();
	wa_metrics_write();
	wa_pg_close(sink.db);
	wa_status_free(&sink.b[0]);
	wa_status_free(&sink.b[1]);
	wa_input_free(&in);
	wa_spool_reader_close(&rd);
	free((char *)sink.spool);
	return status ? status : in.rejected ? EX_DATAERR : 0;
}
