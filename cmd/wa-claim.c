/*
 * wa-claim: emits the claimable rows of a running campaign as send
 * requests, claiming only as many as its output pipe accepts.
 *
 * Reads campaign_recipients (Postgres); marks each row it emits sending,
 * with attempt + 1 and claimed_at. Writes one NDJSON send request per row
 * on stdout. Exits 0 when no row is left to claim (pending or sending;
 * with --once: when none is ready now), 75 when the campaign is paused,
 * cancelled or not started, 69 when Postgres fails, 64 on a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/metrics.h"
#include "core/out.h"
#include "core/sig.h"
#include "pg/pg.h"

static const char *claim_sql =
    "UPDATE campaign_recipients r"
    " SET status = 'sending', attempt = r.attempt + 1, claimed_at = now()"
    " FROM campaigns c"
    " WHERE r.id = ANY(ARRAY("
    "   SELECT id FROM campaign_recipients"
    "   WHERE campaign_id = $1 AND status = 'pending'"
    "     AND next_attempt_at <= now()"
    "   ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED))"
    "  AND c.id = r.campaign_id AND c.state = 'running'"
    " RETURNING r.id, r.attempt, r.phone, r.template_params";

/* Why nothing was claimed: the campaign's state and what is left. */
static const char *left_sql =
    "SELECT c.state, coalesce(c.state_reason, ''),"
    "  EXISTS (SELECT 1 FROM campaign_recipients WHERE campaign_id = c.id"
    "    AND status = 'pending'),"
    "  EXISTS (SELECT 1 FROM campaign_recipients WHERE campaign_id = c.id"
    "    AND status = 'sending'),"
    "  (SELECT count(*) FROM campaign_recipients WHERE campaign_id = c.id"
    "    AND status = 'unknown'),"
    "  (SELECT greatest(0, extract(epoch FROM min(next_attempt_at) - now())"
    "    * 1000)::bigint FROM campaign_recipients WHERE campaign_id = c.id"
    "    AND status = 'pending')"
    " FROM campaigns c WHERE c.id = $1";

static const char *complete_sql =
    "UPDATE campaigns c SET state = 'completed', finished_at = now(),"
    "  updated_at = now()"
    " WHERE id = $1 AND state = 'running' AND NOT EXISTS (SELECT 1"
    "  FROM campaign_recipients WHERE campaign_id = c.id"
    "  AND status IN ('pending', 'sending', 'unknown'))";

static struct {
	const char	*campaign;
	long long	 batch;
	int		 once;
	long long	 poll_ms;
	long long	 pipe_size;
	const char	*conninfo;
} opt = { NULL, 100, 0, 1000, 4096, NULL };

static struct wa_buf head;	/* `{"id":` ... the part every row shares */
static struct wa_metric *rows_total, *claims_total, *claim_seconds;

static void
usage(FILE *f, int status)
{
	fprintf(f, "usage: wa-claim [--once] [-d conninfo] [-n batch] "
	    "[--metrics file] [--pipe-size bytes]\n"
	    "                [--poll-ms ms] -c campaign\n"
	    "       wa-claim -h | --help | --version\n");
	exit(status);
}

/*
 * Loads the campaign's fixed fields into the shared part of a request;
 * returns 0 or an exit status.
 */
static int
load(PGconn *conn)
{
	const char *p[] = { opt.campaign };
	PGresult *res = wa_pg_exec(conn, "SELECT phone_number_id,"
	    " template_name, template_lang FROM campaigns WHERE id = $1",
	    1, p);

	if (res == NULL)
		return EX_UNAVAILABLE;
	if (PQntuples(res) != 1) {
		PQclear(res);
		wa_warn("no campaign %s", opt.campaign);
		return EX_USAGE;
	}
	wa_buf_printf(&head, ",\"campaign_id\":%s,\"phone_number_id\":",
	    opt.campaign);
	wa_buf_json_string(&head, PQgetvalue(res, 0, 0),
	    PQgetlength(res, 0, 0));
	wa_buf_puts(&head, ",\"template\":{\"name\":");
	wa_buf_json_string(&head, PQgetvalue(res, 0, 1),
	    PQgetlength(res, 0, 1));
	wa_buf_puts(&head, ",\"language\":");
	wa_buf_json_string(&head, PQgetvalue(res, 0, 2),
	    PQgetlength(res, 0, 2));
	PQclear(res);
	return 0;
}

/* Adds one send request; params is a JSON array or an object to merge. */
static size_t
request(struct wa_buf *line, PGresult *res, int i)
{
	const char *params = PQgetvalue(res, i, 3);
	size_t n = PQgetlength(res, i, 3);

	line->len = 0;
	wa_buf_printf(line, "{\"id\":%s,\"attempt\":%s", PQgetvalue(res, i, 0),
	    PQgetvalue(res, i, 1));
	wa_buf_add(line, head.s, head.len);
	if (params[0] == '{') {
		if (n > 2) {
			wa_buf_add(line, ",", 1);
			wa_buf_add(line, params + 1, n - 2);
		}
	} else {
		wa_buf_puts(line, ",\"params\":");
		wa_buf_add(line, params, n);
	}
	wa_buf_puts(line, "},\"to\":");
	wa_buf_json_string(line, PQgetvalue(res, i, 2), PQgetlength(res, i, 2));
	wa_buf_add(line, "}", 1);
	wa_out_add(line->s, line->len);
	return line->len + 1;
}

/*
 * How many rows the output takes now: all of a batch when it is not a
 * pipe; else, once the pipe has room, as many average lines as fit.
 */
static long long
room(long long capacity, size_t avg)
{
	struct pollfd pfd = { STDOUT_FILENO, POLLOUT, 0 };
	int queued = 0;
	long long n;

	if (capacity == 0)
		return opt.batch;
	while (wa_wait(&pfd, 1, -1) < 0)
		if (errno != EINTR || wa_stopping)
			return 0;
	if (pfd.revents & POLLERR)
		wa_die(EX_IOERR, "write to stdout: the reader has gone");
	ioctl(STDOUT_FILENO, FIONREAD, &queued);
	n = (capacity - queued) / (long long)avg;
	return n < 1 ? 1 : n < opt.batch ? n : opt.batch;
}

/*
 * Nothing was claimed: returns the ms to wait before claiming again, or -1
 * with the exit status in *status.
 */
static long long
dry(PGconn *conn, int *status)
{
	const char *p[] = { opt.campaign };
	PGresult *res = wa_pg_exec(conn, left_sql, 1, p);
	const char *state;
	long long wait = -1;

	*status = EX_UNAVAILABLE;
	if (res == NULL)
		return -1;
	state = PQgetvalue(res, 0, 0);
	*status = 0;
	if (strcmp(state, "running") != 0 && strcmp(state, "completed") != 0) {
		wa_warn("campaign %s is %s%s%s", opt.campaign,
		    strcmp(state, "draft") == 0 ? "not started" : state,
		    *PQgetvalue(res, 0, 1) ? ": " : "", PQgetvalue(res, 0, 1));
		*status = EX_TEMPFAIL;
	} else if (strcmp(state, "completed") == 0) {
		;
	} else if (*PQgetvalue(res, 0, 2) == 'f' &&
	    *PQgetvalue(res, 0, 3) == 'f') {
		if (atoll(PQgetvalue(res, 0, 4)) > 0)
			wa_warn("campaign %s: nothing left to claim; %s rows "
			    "unknown: wa-reconcile settles them", opt.campaign,
			    PQgetvalue(res, 0, 4));
		else
			PQclear(wa_pg_exec(conn, complete_sql, 1, p));
	} else if (!opt.once) {
		wait = opt.poll_ms;
		if (!PQgetisnull(res, 0, 5) &&
		    atoll(PQgetvalue(res, 0, 5)) < wait)
			wait = atoll(PQgetvalue(res, 0, 5));
	}
	PQclear(res);
	return wait;
}

int
main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "metrics", required_argument, NULL, 'M' },
		{ "once", no_argument, NULL, '1' },
		{ "pipe-size", required_argument, NULL, 'P' },
		{ "poll-ms", required_argument, NULL, 'p' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	static const double secs[] = { .001, .005, .01, .05, .1, .5, 1 };
	struct wa_buf line = { 0 }, limit = { 0 };
	const char *p[2];
	struct stat st;
	PGconn *conn;
	PGresult *res;
	long long capacity = 0, n, wait;
	size_t avg = 200, bytes;
	int64_t t0;
	int c, i, rows, status;

	wa_prog = "wa-claim";
	while ((c = getopt_long(argc, argv, "c:d:hn:", longs, NULL)) != -1)
		switch (c) {
		case 'c':
			wa_num(optarg, 1, LLONG_MAX, "campaign");
			opt.campaign = optarg;
			break;
		case 'd':
			opt.conninfo = optarg;
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
		case 'P':
			opt.pipe_size = wa_num(optarg, 0, 1 << 20, "pipe size");
			break;
		case 'p':
			opt.poll_ms = wa_num(optarg, 1, 3600000, "poll-ms");
			break;
		case 'V':
			wa_version();
		default:
			usage(stderr, EX_USAGE);
		}
	if (opt.campaign == NULL || optind != argc)
		usage(stderr, EX_USAGE);

	wa_signals();
	wa_metrics_on_usr2(NULL);
	rows_total = wa_counter("wa_claim_rows_total", NULL,
	    "Rows claimed and emitted.");
	claims_total = wa_counter("wa_claim_statements_total", NULL,
	    "Claim statements run.");
	claim_seconds = wa_histogram("wa_claim_statement_seconds", NULL,
	    "Time of one claim statement.", secs, 7);
	if (fstat(STDOUT_FILENO, &st) == 0 && S_ISFIFO(st.st_mode)) {
		/* A small pipe keeps few claimed rows waiting in it. */
		if (opt.pipe_size > 0)
			fcntl(STDOUT_FILENO, F_SETPIPE_SZ, (int)opt.pipe_size);
		capacity = fcntl(STDOUT_FILENO, F_GETPIPE_SZ);
	}
	conn = wa_pg_connect(opt.conninfo);
	status = load(conn);
	while (status == 0 && !wa_stopping) {
		n = room(capacity, avg);
		if (n == 0)
			break;
		limit.len = 0;
		wa_buf_printf(&limit, "%lld", n);
		t0 = wa_now_ns();
		p[0] = opt.campaign;
		p[1] = limit.s;
		if ((res = wa_pg_exec_prepared(conn, "wa_claim", claim_sql, 2,
		    p)) == NULL) {
			status = EX_UNAVAILABLE;
			break;
		}
		wa_metric_add(claims_total, 1);
		wa_metric_observe(claim_seconds, (wa_now_ns() - t0) / 1e9);
		rows = PQntuples(res);
		for (i = 0, bytes = 0; i < rows; i++)
			bytes += request(&line, res, i);
		PQclear(res);
		wa_out_flush();
		wa_metric_add(rows_total, rows);
		wa_metrics_tick();
		if (rows > 0)
			avg = (avg * 3 + bytes / rows) / 4;
		else if ((wait = dry(conn, &status)) < 0)
			break;
		else
			wa_sleep_ms(wait);
	}
	wa_metrics_write();
	PQfinish(conn);
	wa_buf_free(&line);
	wa_buf_free(&limit);
	wa_buf_free(&head);
	return status;
}
