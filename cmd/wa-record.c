/*
 * wa-record: applies send results to campaign_recipients in batches.
 *
 * Reads NDJSON send results (wa-send's output) on stdin. Writes each batch
 * with one statement, sorted by id, fenced on (id, attempt) and status
 * sending, rank-monotone: sent stores the wamid; retry goes back to
 * pending after a jittered backoff, or to failed after max_attempts;
 * failed keeps the error; unknown waits for a webhook or wa-reconcile;
 * halt puts the row back (attempt not counted) and pauses the campaign.
 * Echoes every line on stdout once its batch is committed. Exits 0; 65
 * when a line was rejected; 69 when Postgres fails; 74 when reading stdin
 * or writing the reject file fails; 64 on a usage error.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/metrics.h"
#include "core/out.h"
#include "core/sig.h"
#include "records/input.h"
#include "records/json.h"
#include "api/class.h"
#include "pg/pg.h"

static const char *apply_sql =
    "WITH r AS (SELECT * FROM unnest($1::bigint[], $2::int[], $3::text[],"
    "   $4::text[], $5::int[], $6::text[], $7::bigint[])"
    "   AS r(id, attempt, outcome, wamid, code, title, delay_ms)),"
    " upd AS (UPDATE campaign_recipients c SET"
    "   status = CASE WHEN c.status <> 'sending' THEN c.status"
    "     WHEN r.outcome IN ('sent', 'failed', 'unknown') THEN r.outcome"
    "     WHEN r.outcome = 'retry' AND c.attempt >= k.max_attempts"
    "       THEN 'failed'"
    "     ELSE 'pending' END,"
    "   attempt = CASE WHEN c.status = 'sending' AND r.outcome = 'halt'"
    "     THEN c.attempt - 1 ELSE c.attempt END,"
    "   next_attempt_at = CASE WHEN c.status = 'sending'"
    "     AND r.outcome = 'retry'"
    "     THEN now() + r.delay_ms * interval '1 millisecond'"
    "     ELSE c.next_attempt_at END,"
    "   wamid = coalesce(c.wamid, r.wamid),"
    "   status_at = CASE WHEN c.status = 'sending' THEN now()"
    "     ELSE c.status_at END,"
    "   error_code = CASE WHEN c.status = 'sending' THEN r.code"
    "     ELSE c.error_code END,"
    "   error_title = CASE WHEN c.status = 'sending' THEN r.title"
    "     ELSE c.error_title END"
    "  FROM r, campaigns k"
    "  WHERE c.id = r.id AND c.attempt = r.attempt AND k.id = c.campaign_id"
    "   AND (c.status = 'sending' OR (r.wamid IS NOT NULL"
    "     AND c.wamid IS NULL))"
    "  RETURNING c.id),"
    " halt AS (UPDATE campaigns k SET state = 'paused', updated_at = now(),"
    "   state_reason = h.reason"
    "  FROM (SELECT DISTINCT ON (c.campaign_id) c.campaign_id,"
    "     'halt: ' || coalesce(r.code::text || ' ', '')"
    "     || coalesce(r.title, 'campaign-wide error') AS reason"
    "   FROM r JOIN campaign_recipients c ON c.id = r.id"
    "   WHERE r.outcome = 'halt' ORDER BY c.campaign_id, r.id) h"
    "  WHERE k.id = h.campaign_id AND k.state = 'running')"
    " SELECT count(*) FROM upd";

static const char *outcomes[] = { "sent", "retry", "failed", "unknown",
    "halt" };

struct row {
	int64_t		 id;
	int64_t		 attempt;
	int		 outcome;	/* index in outcomes[] */
	int64_t		 code;		/* -1: none */
	int64_t		 delay_ms;
	char		*wamid;
	char		*title;
};

static struct {
	long long	 batch;
	long long	 flush_ms;
	long long	 base_ms;
	long long	 cap_ms;
	const char	*conninfo;
} opt = { 500, 200, 1000, 300000, NULL };

static PGconn *conn;
static struct row *rows;
static size_t nrows;
static struct wa_buf lines;	/* the batch's input lines, to echo */
static int64_t first_ms;	/* when the batch's first line came */
static struct wa_metric *by_outcome[5], *stale_total, *batch_seconds;
static unsigned long long done[5], stale;
static int progress;

static void
usage(FILE *f, int status)
{
	fprintf(f, "usage: wa-record [-d conninfo] [-n batch] "
	    "[--backoff-base ms] [--backoff-cap ms]\n"
	    "                 [--flush-ms ms] [--metrics file] "
	    "[--reject file]\n"
	    "       wa-record -h | --help | --version\n");
	exit(status);
}

static int
bycmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

static void
show(void)
{
	fprintf(stderr, "\rwa-record: sent %llu  retry %llu  failed %llu  "
	    "unknown %llu  halt %llu  stale %llu ", done[0], done[1],
	    done[2], done[3], done[4], stale);
}

/* Writes the batch in one statement; echoes its lines once committed. */
static void
flush(void)
{
	struct wa_buf a[7] = { { 0 } };
	const char *p[7];
	PGresult *res = NULL;
	int64_t t0 = wa_now_ns();
	size_t i, j, applied;
	int tries, retry;

	if (nrows == 0)
		return;
	qsort(rows, nrows, sizeof *rows, bycmp);
	for (j = 0; j < 7; j++)
		wa_pg_array_start(&a[j]);
	for (i = 0; i < nrows; i++) {
		struct row *r = &rows[i];

		wa_pg_array_int(&a[0], r->id);
		wa_pg_array_int(&a[1], r->attempt);
		wa_pg_array_str(&a[2], outcomes[r->outcome]);
		wa_pg_array_str(&a[3], r->wamid);
		if (r->code >= 0)
			wa_pg_array_int(&a[4], r->code);
		else
			wa_pg_array_null(&a[4]);
		wa_pg_array_str(&a[5], r->title);
		wa_pg_array_int(&a[6], r->delay_ms);
	}
	for (j = 0; j < 7; j++) {
		wa_pg_array_end(&a[j]);
		p[j] = a[j].s;
	}
	/* One statement is one transaction: a kill leaves all or none. */
	for (tries = 0; tries < 5; tries++) {
		res = wa_pg_prepare(conn, "wa_record_apply", apply_sql, 7);
		if (res == NULL)
			res = PQexecPrepared(conn, "wa_record_apply", 7, p,
			    NULL, NULL, 0);
		if (PQresultStatus(res) == PGRES_TUPLES_OK)
			break;
		wa_pg_warn(conn, res, "record batch");
		retry = wa_pg_retryable(conn, res);
		PQclear(res);
		res = NULL;
		if (!retry)
			break;
		wa_sleep_ms(200 << tries);
	}
	for (j = 0; j < 7; j++)
		wa_buf_free(&a[j]);
	if (res == NULL)
		wa_die(EX_UNAVAILABLE, "not recorded: a batch of %zu results "
		    "(their rows stay sending for wa-reconcile)", nrows);
	applied = strtoull(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	if (applied < nrows) {
		wa_metric_add(stale_total, nrows - applied);
		stale += nrows - applied;
	}
	for (i = 0; i < nrows; i++) {
		wa_metric_add(by_outcome[rows[i].outcome], 1);
		done[rows[i].outcome]++;
		free(rows[i].wamid);
		free(rows[i].title);
	}
	wa_metric_observe(batch_seconds, (wa_now_ns() - t0) / 1e9);
	wa_out_flush();		/* the lines added by take() */
	nrows = 0;
	lines.len = 0;
	if (progress)
		show();
	wa_metrics_tick();
}

/* The least delay before a retry, by the error's class. */
static int64_t
delay(struct json_object *o, int64_t attempt)
{
	int64_t code = -1, http = 0, d;

	wa_json_int(o, "result.error.code", &code);
	wa_json_int(o, "result.http_status", &http);
	d = wa_backoff_ms(attempt, opt.base_ms, opt.cap_ms);
	return d + wa_class_min_delay_ms(wa_class_of(code, http));
}

static int
take(struct wa_record *rec, void *in)
{
	static size_t cap;
	struct row *r;
	const char *s;
	int64_t id, attempt, code;
	int k;

	if (rec == NULL) {
		if (nrows > 0 && wa_now_ms() - first_ms >= opt.flush_ms)
			flush();
		return 0;
	}
	s = wa_json_str(rec->obj, "result.outcome");
	if (wa_json_int(rec->obj, "id", &id) != 1 ||
	    wa_json_int(rec->obj, "attempt", &attempt) != 1) {
		wa_input_reject(in, rec, "no integer \"id\" and \"attempt\"");
		return 0;
	}
	/* What the batch's columns take (bigint, integer), here. */
	if (id < 1 || attempt < 0 || attempt > INT32_MAX) {
		wa_input_reject(in, rec, "\"id\" %lld or \"attempt\" %lld "
		    "out of range", (long long)id, (long long)attempt);
		return 0;
	}
	for (k = 0; k < 5 && s != NULL && strcmp(s, outcomes[k]) != 0; k++)
		;
	if (s == NULL || k == 5) {
		wa_input_reject(in, rec, "no \"result\" with an outcome of "
		    "sent, retry, failed, unknown or halt");
		return 0;
	}
	if (wa_json_int(rec->obj, "result.error.code", &code) != 1 ||
	    code < 0 || code > INT32_MAX)
		code = -1;
	if (nrows == cap) {
		cap = cap ? cap * 2 : 64;
		rows = wa_realloc(rows, cap * sizeof *rows);
	}
	r = &rows[nrows++];
	r->id = id;
	r->attempt = attempt;
	r->outcome = k;
	r->code = code;
	r->delay_ms = k == 1 ? delay(rec->obj, attempt) : 0;
	s = wa_json_str(rec->obj, "result.wamid");
	r->wamid = s && k == 0 ? wa_strdup(s) : NULL;
	s = wa_json_str(rec->obj, "result.error.title");
	r->title = s ? wa_strdup(s) : NULL;
	wa_out_add(rec->line, rec->len);
	if (nrows == 1)
		first_ms = wa_now_ms();
	if ((long long)nrows >= opt.batch ||
	    wa_now_ms() - first_ms >= opt.flush_ms)
		flush();
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "backoff-base", required_argument, NULL, 'B' },
		{ "backoff-cap", required_argument, NULL, 'C' },
		{ "flush-ms", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "metrics", required_argument, NULL, 'M' },
		{ "reject", required_argument, NULL, 'R' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	static const double secs[] = { .001, .005, .01, .05, .1, .5, 1, 5 };
	struct wa_input in;
	int c, k, r;

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
		case 'h':
			usage(stdout, 0);
			break;
		case 'M':
			wa_metrics_open(optarg);
			break;
		case 'n':
			opt.batch = wa_num(optarg, 1, 100000, "batch");
			break;
		case 'R':
			wa_input_reject_file(&in, optarg);
			break;
		case 'V':
			wa_version();
		default:
			usage(stderr, EX_USAGE);
		}
	if (optind != argc)
		usage(stderr, EX_USAGE);

	wa_signals();
	wa_metrics_on_usr2(NULL);
	for (k = 0; k < 5; k++) {
		char label[32];

		snprintf(label, sizeof label, "outcome=\"%s\"", outcomes[k]);
		by_outcome[k] = wa_counter("wa_record_results_total", label,
		    "Results recorded, by outcome.");
	}
	stale_total = wa_counter("wa_record_stale_total", NULL,
	    "Results not applied: the row had moved on (fencing).");
	batch_seconds = wa_histogram("wa_record_batch_seconds", NULL,
	    "Time to write one batch.", secs, 8);
	progress = isatty(STDERR_FILENO);
	conn = wa_pg_connect(opt.conninfo);
	r = wa_loop(&in, (int)opt.flush_ms, take, &in);
	flush();
	if (progress)
		fputc('\n', stderr);
	if (stale > 0)
		wa_warn("%llu results not applied: their rows had moved on "
		    "(a webhook or wa-reconcile got there first)", stale);
	wa_metrics_write();
	PQfinish(conn);
	free(rows);
	wa_input_free(&in);
	if (r < 0)
		return EX_IOERR;
	return in.rejected ? EX_DATAERR : 0;
}
