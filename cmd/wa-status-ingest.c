/*
 * wa-status-ingest: applies Meta's status webhooks to campaign_recipients.
 *
 * Reads webhook bodies, one per line: from stdin (replays; no checkpoint)
 * or, with --follow DIR, from wa-webhook's spool, resuming from the
 * checkpoint that each batch commits together with its statuses, so a
 * crash neither loses a body nor applies one twice. Each batch is reduced
 * to the highest-ranked status per message and applied with one
 * statement, sorted and rank-monotone (lib/status.c); statuses whose row
 * is not there yet go to unmatched_statuses and are applied when it
 * appears. Writes nothing on stdout. Exits 0 at the end of input, after
 * SIGTERM or SIGINT (the batch in hand is applied first) or, with --once,
 * when the spool is caught up; 65 if a line was not a JSON object, 69
 * when Postgres fails, 74 when the spool cannot be read, 75 when another
 * process follows the same spool, 64 on a usage error.
 */
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wa_pg.h"
#include "wa_spool.h"
#include "wa_status.h"

static struct {
	const char	*conninfo;
	const char	*follow;
	long long	 batch;
	long long	 flush_ms;
	long long	 window;
	long long	 sweep;
	long long	 ttl;
	int		 once;
	int		 prune;
} opt = { NULL, NULL, 1000, 100, 600, 600, 7 * 86400, 0, 0 };

static PGconn *conn;
static struct wa_input in;
static struct wa_spool_reader rd;
static char *spool;			/* the followed directory's path */
static struct wa_status_batch batch;
static struct wa_metric *m_seen[WA_ST_N], *m_odd[WA_ODD_N], *m_bodies;
static struct wa_metric *m_applied[4], *m_kept, *m_retried, *m_expired;
static struct wa_metric *m_rejected, *m_size, *m_secs, *m_lag;

static void
usage(FILE *f, int status)
{
	fprintf(f, "usage: wa-status-ingest [--once] [--prune] [-d conninfo] "
	    "[-n batch] [--flush-ms ms]\n"
	    "                        [--metrics file] [--reject file] "
	    "[--retry-window s]\n"
	    "                        [--sweep-interval s] "
	    "[--unmatched-ttl s] [--follow dir]\n");
	exit(status);
}

/*
 * Applies the batch, retrying unmatched statuses received within window
 * seconds (-1: all), and commits the spool position with it.
 */
static void
flush(long long window)
{
	struct wa_status_result r;
	int64_t t0 = wa_now_ns();
	size_t statuses = batch.n;
	int i;

	wa_status_reduce(&batch);
	wa_status_apply(conn, &batch, rd.seg >= 0 ? spool : NULL, rd.seg,
	    rd.off, window, &r, m_lag);
	for (i = 0; i < 4; i++)
		wa_metric_add(m_applied[i], r.applied[i]);
	wa_metric_add(m_kept, r.kept);
	wa_metric_add(m_retried, r.matched);
	if (statuses > 0) {
		wa_metric_observe(m_size, statuses);
		wa_metric_observe(m_secs, (wa_now_ns() - t0) / 1e9);
	}
	for (i = 0; i < WA_ST_N; i++)
		wa_metric_set(m_seen[i], batch.seen[i]);
	for (i = 0; i < WA_ODD_N; i++)
		wa_metric_set(m_odd[i], batch.odd[i]);
	wa_metric_set(m_rejected, in.rejected);
	wa_status_clear(&batch);
	if (opt.prune && rd.seg >= 0)
		wa_spool_prune(spool, rd.seg);
	wa_metrics_tick();
}

/* Retries every unmatched status, then drops those past their ttl. */
static void
sweep(void)
{
	long long n;

	flush(-1);
	if (opt.ttl > 0 && (n = wa_status_expire(conn, opt.ttl)) > 0) {
		wa_warn("expired %lld unmatched statuses older than %llds", n,
		    opt.ttl);
		wa_metric_add(m_expired, n);
	}
}

/* The next body: WA_LINE, WA_TOOLONG, WA_AGAIN, WA_EOF or WA_ERROR. */
static int
next(char **line, size_t *len, unsigned long *lineno, int timeout)
{
	int r;

	if (opt.follow == NULL) {
		r = wa_lines_next(&in.lines, line, len, timeout);
		*lineno = in.lines.lineno;
		return r;
	}
	r = wa_spool_next(&rd, line, len);
	if (r == WA_AGAIN && timeout != 0) {
		wa_sleep_ms(timeout < 0 || timeout > 50 ? 50 : timeout);
		r = wa_spool_next(&rd, line, len);
	}
	in.lines.name = rd.path;
	*lineno = rd.lineno;
	return r;
}

static int
blank(const char *s, size_t n)
{
	while (n > 0 && strchr(" \t\r", s[n - 1]) != NULL)
		n--;
	return n == 0;
}

/* Takes one body into the batch; a line that is no JSON object is rejected. */
static void
take(char *line, size_t len, unsigned long lineno)
{
	struct wa_record rec = { NULL, line, len, lineno };
	enum json_tokener_error e;
	size_t end;

	if (blank(line, len))
		return;
	json_tokener_reset(in.tok);
	rec.obj = json_tokener_parse_ex(in.tok, line, len);
	e = json_tokener_get_error(in.tok);
	end = json_tokener_get_parse_end(in.tok);
	if (rec.obj == NULL || e != json_tokener_success)
		wa_input_reject(&in, &rec, "not valid JSON: %s",
		    e == json_tokener_continue ? "unexpected end of line" :
		    json_tokener_error_desc(e));
	else if (!json_object_is_type(rec.obj, json_type_object) ||
	    !blank(line + end, len - end))
		wa_input_reject(&in, &rec, "not one JSON object");
	else
		wa_status_walk(&batch, rec.obj, in.lines.name, lineno);
	json_object_put(rec.obj);
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
	}
	for (i = 0; i < 4; i++) {
		snprintf(l, sizeof l, "status=\"%s\"", wa_st_names[i]);
		m_applied[i] = wa_counter("wa_status_ingest_applied_total", l,
		    "Statuses that moved a row up, by status.");
	}
	for (i = 0; i < WA_ODD_N; i++) {
		snprintf(l, sizeof l, "kind=\"%s\"", wa_odd_names[i]);
		m_odd[i] = wa_counter("wa_status_ingest_skipped_total", l,
		    "Things in bodies that are not statuses, by kind.");
	}
	m_bodies = wa_counter("wa_status_ingest_bodies_total", NULL,
	    "Webhook bodies read.");
	m_rejected = wa_counter("wa_status_ingest_rejected_total", NULL,
	    "Lines that were not a JSON object.");
	m_kept = wa_counter("wa_status_ingest_unmatched_kept_total", NULL,
	    "Statuses that matched no row, kept in unmatched_statuses.");
	m_retried = wa_counter("wa_status_ingest_unmatched_matched_total",
	    NULL, "Kept statuses whose row appeared later.");
	m_expired = wa_counter("wa_status_ingest_unmatched_expired_total",
	    NULL, "Kept statuses dropped after --unmatched-ttl.");
	m_size = wa_histogram("wa_status_ingest_batch_statuses", NULL,
	    "Statuses in one batch, before reduction.", sizes, 8);
	m_secs = wa_histogram("wa_status_ingest_batch_seconds", NULL,
	    "Time to apply one batch.", secs, 10);
	m_lag = wa_histogram("wa_status_ingest_lag_seconds", NULL,
	    "From a status's timestamp to its application.", lags, 9);
}

int
main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "flush-ms", required_argument, NULL, 'f' },
		{ "follow", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ "metrics", required_argument, NULL, 'M' },
		{ "once", no_argument, NULL, '1' },
		{ "prune", no_argument, NULL, 'p' },
		{ "reject", required_argument, NULL, 'R' },
		{ "retry-window", required_argument, NULL, 'w' },
		{ "sweep-interval", required_argument, NULL, 'S' },
		{ "unmatched-ttl", required_argument, NULL, 't' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const char *reject = NULL;
	long long seg, off, wait;
	int64_t first = 0, sweep_at = 0;
	unsigned long lineno;
	char *line;
	size_t len;
	int c, r, pend = 0, status = 0;

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
		case 'h':
			usage(stdout, 0);
			break;
		case 'M':
			wa_metrics_open(optarg);
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
		case 't':
			opt.ttl = wa_num(optarg, 0, 86400 * 3650,
			    "unmatched-ttl");
			break;
		case 'w':
			opt.window = wa_num(optarg, 0, 86400 * 3650,
			    "retry-window");
			break;
		case 'V':
			wa_version();
		default:
			usage(stderr, EX_USAGE);
		}
	if (optind != argc || ((opt.once || opt.prune) && !opt.follow))
		usage(stderr, EX_USAGE);

	wa_signals();
	metrics();
	wa_input_init(&in, STDIN_FILENO, "<stdin>", 0);
	if (reject != NULL)
		wa_input_reject_file(&in, reject);
	conn = wa_pg_connect(opt.conninfo);
	rd.seg = -1;
	rd.fd = -1;
	if (opt.follow != NULL) {
		if ((spool = realpath(opt.follow, NULL)) == NULL)
			wa_die(EX_NOINPUT, "open %s:", opt.follow);
		wa_status_checkpoint(conn, spool, &seg, &off);
		wa_spool_reader_open(&rd, spool, seg, off);
	}
	for (;;) {
		if (pend == 0 && !wa_stopping && wa_now_ms() >= sweep_at) {
			sweep();
			sweep_at = wa_now_ms() + opt.sweep * 1000;
		}
		if (wa_stopping)
			break;
		wait = pend ? first + opt.flush_ms - wa_now_ms() :
		    sweep_at - wa_now_ms();
		r = next(&line, &len, &lineno, wait < 0 ? 0 : (int)wait);
		if (r == WA_LINE || r == WA_TOOLONG) {
			if (pend++ == 0)
				first = wa_now_ms();
			wa_metric_add(m_bodies, 1);
			if (r == WA_LINE)
				take(line, len, lineno);
			else
				wa_input_reject(&in, &(struct wa_record){
				    NULL, NULL, 0, lineno },
				    "line longer than %d bytes", WA_LINE_MAX);
			if ((long long)batch.n >= opt.batch) {
				flush(opt.window);
				pend = 0;
			}
		} else if (r == WA_ERROR) {
			wa_warn("read %s:", in.lines.name);
			status = EX_IOERR;
			break;
		} else if (r == WA_EOF)
			break;
		else if (pend && wa_now_ms() - first >= opt.flush_ms) {
			flush(opt.window);
			pend = 0;
		} else if (!pend && opt.once)
			break;
	}
	if (pend || opt.follow == NULL)
		flush(opt.window);
	wa_metrics_write();
	PQfinish(conn);
	wa_status_free(&batch);
	wa_input_free(&in);
	wa_spool_reader_close(&rd);
	free(spool);
	return status ? status : in.rejected ? EX_DATAERR : 0;
}
