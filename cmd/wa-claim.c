/*
 * wa-claim: emits the claimable rows of a running campaign as send
 * requests, claiming only as many as its output pipe accepts.
 *
 * Reads campaign_recipients (Postgres); marks each row it emits sending,
 * with attempt + 1 and claimed_at, by the rules of the road (the schema's
 * wapipe_claim: a row past its expiry ends expired, one whose person
 * opted out suppressed, one outside its send window waits for it; a
 * number at its messaging limit, or with an urgent campaign to send,
 * claims nothing new: wa-claim says why and until when, and waits), and
 * lists each claim's rows in campaign_claims, where the rows in flight
 * are found.
 * Writes one NDJSON send request per row on stdout. A row it claimed but
 * could not write (SIGTERM or SIGINT, or its reader gone) it puts back,
 * fenced on its attempt. A scheduled campaign it waits for (without
 * --once): the first claim after its time starts it. While Postgres is
 * away it waits up to --pg-timeout. Exits 0 when the campaign is
 * completed; 75 when it is paused, not started or (--once) scheduled,
 * when rows are left
 * unknown, when --once leaves rows to do, or after SIGTERM or SIGINT; 77
 * when it is cancelled; 69 when Postgres stays away or fails; 74 when its
 * reader has gone; 64 on a usage error or when the campaign does not
 * exist (or was deleted).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/metrics.h"
#include "core/opts.h"
#include "core/out.h"
#include "core/sig.h"
#include "records/claim.h"
#include "pg/blocked.h"
#include "pg/pg.h"

/*
 * The rules of the road are the schema's (sql/schema.sql, wapipe_claim).
 * Each claim marks its rows with a token of its own, the next of a block
 * (records/claim.h): --tag, else one taken from wapipe_claim_tags.
 * When a claim had to be run again, the first run may have committed
 * with its answer lost (a failover): the rows under its token, never
 * sent, are then all emitted (found_sql).
 */
static const char *claim_sql = "SELECT * FROM wapipe_claim($1, $2, $3)";
static const char *found_sql =
    "SELECT id, attempt, phone, template_params FROM campaign_recipients"
    " WHERE id IN (SELECT unnest(ids) FROM campaign_claims"
    "  WHERE campaign_id = $1 AND token = $2)"
    "  AND status = 'sending' AND claim_token = $2";

/*
 * Why nothing was claimed: the campaign's state and what is left (a
 * number at its limit, or an urgent campaign first: pg/blocked.c). Rows
 * in flight are found through their claims; with no row pending, the
 * pending index holds only them, and is asked too.
 */
static const char *left_sql =
    "SELECT c.state, coalesce(c.state_reason, ''), p.pending,"
    "  EXISTS (SELECT 1 FROM campaign_claims k WHERE k.campaign_id = c.id"
    "    AND claim_in_flight(k))"
    "  OR (NOT p.pending AND EXISTS (SELECT 1 FROM campaign_recipients"
    "    WHERE campaign_id = c.id AND phase = 0 AND status = 'sending')),"
    "  (SELECT count(*) FROM campaign_recipients WHERE campaign_id = c.id"
    "    AND phase = 1 AND status = 'unknown'),"
    "  (SELECT (extract(epoch FROM min(next_attempt_at) - now())"
    "    * 1000)::bigint FROM campaign_recipients WHERE campaign_id = c.id"
    "    AND phase = 0 AND status = 'pending'),"
    "  CASE WHEN c.state = 'scheduled' THEN greatest(0, (extract(epoch"
    "    FROM c.start_at - now()) * 1000)::bigint) END,"
    "  to_char(c.start_at AT TIME ZONE 'UTC',"
    "    'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
    " FROM campaigns c, LATERAL (SELECT EXISTS (SELECT 1"
    "  FROM campaign_recipients WHERE campaign_id = c.id AND phase = 0"
    "  AND status = 'pending') AS pending) p"
    " WHERE c.id = $1";

/* Rows claimed but never written: back to pending, fenced, uncounted. */
static const char *putback_sql =
    "UPDATE campaign_recipients c SET status = 'pending',"
    "  attempt = c.attempt - 1"
    " FROM unnest($1::bigint[], $2::int[]) AS u(id, attempt)"
    " WHERE c.id = u.id AND c.attempt = u.attempt AND c.status = 'sending'";

static const char *complete_sql =
    "UPDATE campaigns c SET state = 'completed', finished_at = now(),"
    "  updated_at = now()"
    " WHERE id = $1 AND state = 'running' AND NOT EXISTS (SELECT 1"
    "  FROM campaign_recipients WHERE campaign_id = c.id"
    "  AND (phase = 0 OR phase = 1))";

static struct {
	const char	*campaign;
	long long	 batch;
	int		 once;
	int		 quiet;		/* say nothing of what it waits for */
	long long	 poll_ms;
	long long	 pipe_size;
	long long	 pg_timeout;
	const char	*conninfo;
	long long	 tag;		/* the first token of its block */
	int		 tagged;	/* --tag given */
} opt = { NULL, 1000, 0, 0, 1000, 32768, WA_PG_TIMEOUT, NULL, 0, 0 };

#define EX_CANCELLED EX_NOPERM	/* 77: sending is no longer allowed */

static struct wa_pg *db;
static int said;		/* what it said it waits for, since a claim */
static int said_when;	/* said once that the campaign waits for its time */
static struct wa_buf head;	/* `{"id":` ... the part every row shares */
static int nonblock;		/* stdout was made non-blocking */
static size_t written;		/* bytes written to stdout so far */
static struct wa_metric *rows_total, *claims_total, *claim_seconds;

static void
usage(FILE *f, int status)
{
	fprintf(f, "usage: wa-claim [--once] [-q | --quiet] [-d conninfo] "
	    "[-n batch]\n"
	    "                [--pg-timeout secs] "
	    "[--metrics file [--metrics-label name=value]]\n"
	    "                [--pipe-size bytes] [--poll-ms ms] [--tag n] "
	    "-c campaign\n"
	    "       wa-claim -h | --help | --version\n");
	exit(status);
}

/*
 * Loads the campaign's fixed fields into the shared part of a request,
 * and takes a block of claim tokens unless --tag gave one; returns 0 or
 * an exit status.
 */
static int
load(void)
{
	const char *p[] = { opt.campaign };
	PGresult *res = wa_pg_need(db, NULL, WA_CLAIM_HEAD_SQL, 1, p);

	if (PQntuples(res) != 1) {
		PQclear(res);
		wa_warn("no campaign %s", opt.campaign);
		return EX_USAGE;
	}
	wa_claim_head(&head, opt.campaign, PQgetvalue(res, 0, 0),
	    PQgetvalue(res, 0, 1), PQgetvalue(res, 0, 2),
	    PQgetvalue(res, 0, 3));
	PQclear(res);
	if (!opt.tagged) {
		res = wa_pg_need(db, NULL, WA_CLAIM_TAG_SQL, 0, NULL);
		opt.tag = atoll(PQgetvalue(res, 0, 0));
		PQclear(res);
	}
	return 0;
}

/* Adds one send request (lib/records/claim.c). */
static void
request(struct wa_buf *line, PGresult *res, int i)
{
	wa_claim_line(line, &head, PQgetvalue(res, i, 0),
	    PQgetvalue(res, i, 1), PQgetvalue(res, i, 2),
	    PQgetvalue(res, i, 3), PQgetlength(res, i, 3));
}

/*
 * Writes out[0..len), lines ending at ends[0..n): returns the bytes
 * written, all unless the reader has gone (*gone set) or a signal stops
 * us. Writes go out in whole lines of at most PIPE_BUF bytes together,
 * which a pipe takes whole or not at all, so a reader never sees half a
 * request; a longer line begun when a signal comes is finished if the
 * reader takes it within a second (else it sees a cut line at the end of
 * its input, and rejects it), and a second signal stops at once.
 */
static size_t
emit(const char *out, size_t len, const size_t *ends, int n, int *gone)
{
	struct pollfd pfd = { STDOUT_FILENO, POLLOUT, 0 };
	size_t done = 0, upto;
	int64_t until = 0;
	ssize_t w;
	int i = 0, j;

	*gone = 0;
	while (done < len && wa_stopping < 2) {
		while (i < n && ends[i] <= done)
			i++;
		if (wa_stopping && until == 0)
			until = wa_now_ms() + 1000;
		/* Stopping: not past the end of the line begun. */
		if (wa_stopping && (i == 0 ? done == 0 : ends[i - 1] == done))
			break;
		if (wa_stopping && wa_now_ms() >= until)
			break;
		for (j = i; j + 1 < n && ends[j + 1] - done <= PIPE_BUF &&
		    !wa_stopping; j++)
			;
		upto = ends[j];
		w = write(STDOUT_FILENO, out + done, upto - done);
		if (w > 0) {
			done += w;
			continue;
		}
		if (w < 0 && errno == EPIPE) {
			*gone = 1;
			break;
		}
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			wa_die(EX_IOERR, "write to stdout:");
		if (w < 0 && errno == EAGAIN)
			wa_wait(&pfd, 1, wa_stopping ? 100 : -1);
	}
	return done;
}

/*
 * Runs claim number seq for n rows: its rows, with those of a first run
 * whose answer was lost when it had to run again; NULL when Postgres
 * refused it or stayed away.
 */
static PGresult *
claim(long long n, long long seq)
{
	char limit[24], token[24];
	const char *p[3] = { opt.campaign, limit, token };
	PGresult *res, *found;

	snprintf(limit, sizeof limit, "%lld", n);
	snprintf(token, sizeof token, "%lld", opt.tag + seq % WA_CLAIM_TOKENS);
	if ((res = wa_pg_run(db, "wa_claim", claim_sql, 3, p)) == NULL ||
	    !wa_pg_retried(db))
		return res;
	p[1] = token;
	if ((found = wa_pg_run(db, NULL, found_sql, 2, p)) == NULL) {
		wa_warn("%d rows claimed stay sending: wa-reconcile settles "
		    "them", PQntuples(res));
		PQclear(res);
		return NULL;
	}
	if (PQntuples(found) > PQntuples(res))
		wa_warn("a claim's answer was lost with the server: its %d "
		    "rows, found by their token, go out now",
		    PQntuples(found) - PQntuples(res));
	PQclear(res);
	return found;
}

/*
 * Puts back the rows of res from i on: claimed, never written. Fenced on
 * the attempt, so a row something else has moved since is left alone.
 */
static void
putback(PGresult *res, int i)
{
	struct wa_buf ids = { 0 }, atts = { 0 };
	const char *p[2];
	int n = PQntuples(res) - i;

	if (n <= 0)
		return;
	wa_pg_array_start(&ids);
	wa_pg_array_start(&atts);
	for (; i < PQntuples(res); i++) {
		wa_pg_array_add(&ids, PQgetvalue(res, i, 0),
		    PQgetlength(res, i, 0));
		wa_pg_array_add(&atts, PQgetvalue(res, i, 1),
		    PQgetlength(res, i, 1));
	}
	wa_pg_array_end(&ids);
	wa_pg_array_end(&atts);
	p[0] = ids.s;
	p[1] = atts.s;
	wa_pg_patience(db, 2);
	PQclear(wa_pg_run(db, NULL, putback_sql, 2, p));
	if (wa_pg_state(db) != WA_PG_OK)
		wa_warn("%d rows claimed but not written stay sending: "
		    "wa-reconcile settles them", n);
	else
		wa_warn("put back %d rows claimed but not written", n);
	wa_buf_free(&ids);
	wa_buf_free(&atts);
}

/*
 * A pipe holds about HOLD_MS of its reader's pace, from --pipe-size up
 * to PIPE_MAX: a fast reader (flat out, or many lines a second) gets
 * larger claims, fewer a second, as Postgres spends most of a small
 * claim on the statement, not its rows; a slow one keeps the small
 * pipe. Either way a reader that stops leaves at most a pipe's worth of
 * rows sending, and a stop drains within about HOLD_MS. The pace is what
 * the reader took (taken: bytes so far) over at least HOLD_MS, or
 * sooner once that is more than the pipe holds: never a burst of what
 * was in it. The pipe grows, never shrinks (not at all with
 * --pipe-size 0).
 */
#define HOLD_MS 250
#define PIPE_MAX (1 << 20)

static void
grow(long long *capacity, long long taken)
{
	static int64_t since;
	static long long from;
	int64_t now = wa_now_ms();
	long long size = *capacity, took = taken - from;
	int got;

	if (opt.pipe_size == 0)
		return;
	if (since == 0)
		since = now;
	if (now - since < HOLD_MS && took <= *capacity)
		return;
	took = took * HOLD_MS / (now > since ? now - since : 1);
	since = now;
	from = taken;
	while (size < took && size < PIPE_MAX)
		size *= 2;
	if (size > *capacity && (got = fcntl(STDOUT_FILENO, F_SETPIPE_SZ,
	    (int)size)) > *capacity)
		*capacity = got;
}

/*
 * How many rows the output takes now: all of a batch when it is not a
 * pipe; else, once the pipe has room for a fair batch (the batch, or half
 * the pipe), as many average lines as fit. A pipe is writable again as
 * soon as one page of it is free, some 16 lines: claiming that little
 * each time costs Postgres 2.4 times the CPU per row of batches of 500
 * (bench/RESULTS.md), so while the reader is still busy with what the
 * pipe holds we look again after 2 ms, then less often (up to every 50
 * ms) for a slow reader. The pipe grows to hold HOLD_MS of the reader's
 * pace (grow). 0 when a signal came, -1 when the reader has gone.
 */
static long long
room(long long *capacity, size_t avg)
{
	struct pollfd pfd = { STDOUT_FILENO, POLLOUT, 0 };
	int queued = 0;
	long long n, want;
	int ms = 2;

	if (*capacity == 0)
		return opt.batch;
	want = *capacity / 2 / (long long)avg;
	if (want > opt.batch)
		want = opt.batch;
	for (;;) {
		while (wa_wait(&pfd, 1, -1) < 0)
			if (errno != EINTR || wa_stopping)
				return 0;
		if (pfd.revents & POLLERR)
			return -1;
		queued = 0;
		ioctl(STDOUT_FILENO, FIONREAD, &queued);
		n = (*capacity - queued) / (long long)avg;
		if (n >= want || queued == 0)
			break;
		if (wa_sleep_ms(ms) < 0 && wa_stopping)
			return 0;
		ms = ms < 25 ? ms * 2 : 50;
	}
	grow(capacity, (long long)written - queued);
	n = (*capacity - queued) / (long long)avg;
	return n < 1 ? 1 : n < opt.batch ? n : opt.batch;
}

/* Says once what it waits for: 1 retries, 2 the limit, 3 urgent. */
static void
say(int what, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (said == what)
		return;
	said = what;
	if (opt.quiet)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	wa_warn("campaign %s: %s", opt.campaign, msg);
}

/*
 * Rows are left but none could be claimed: says why, once, and returns
 * the ms to wait (at most wait): for an urgent campaign on the number to
 * finish, for a place under the number's messaging limit, or for retries
 * not yet due (or a send window to open; column 5 of left_sql: ms to the
 * next).
 */
static long long
waiting(PGresult *res, long long wait)
{
	char when[40], why[512];
	long long ms;

	switch (wa_blocked(db, opt.campaign, &ms, why, sizeof why)) {
	case WA_BLOCKED_URGENT:
		say(3, "%s", why);
		return wait;
	case WA_BLOCKED_LIMIT:
		say(2, "%s", why);
		return ms < wait ? (ms < 20 ? 20 : ms) : wait;
	case WA_BLOCKED_NOT:
		break;
	}
	if (*PQgetvalue(res, 0, 2) != 't' || PQgetisnull(res, 0, 5))
		return wait;
	ms = atoll(PQgetvalue(res, 0, 5));
	if (ms < wait)
		wait = ms;
	if (*PQgetvalue(res, 0, 3) != 't' && ms >= 1000)
		say(1, "waiting for retries (or a send window); the next is "
		    "due at %s (in %lld s)",
		    wa_rfc3339(when, sizeof when, wa_unix_ms() + ms),
		    (ms + 999) / 1000);
	return wait;
}

/*
 * Nothing was claimed: returns the ms to wait before claiming again, or -1
 * with the exit status in *status.
 */
static long long
dry(int *status)
{
	const char *p[] = { opt.campaign };
	PGresult *res = wa_pg_need(db, NULL, left_sql, 1, p), *done;
	const char *state;
	long long wait = -1, unknown;
	int pending, sending;

	if (PQntuples(res) == 0) {
		PQclear(res);
		wa_warn("campaign %s is gone: it was deleted while wa-claim "
		    "ran", opt.campaign);
		*status = EX_USAGE;
		return -1;
	}
	state = PQgetvalue(res, 0, 0);
	pending = *PQgetvalue(res, 0, 2) == 't';
	sending = *PQgetvalue(res, 0, 3) == 't';
	unknown = atoll(PQgetvalue(res, 0, 4));
	*status = EX_TEMPFAIL;
	if (strcmp(state, "completed") == 0)
		*status = 0;
	else if (strcmp(state, "cancelled") == 0) {
		wa_warn("campaign %s is cancelled%s%s: nothing more is sent",
		    opt.campaign, *PQgetvalue(res, 0, 1) ? ": " : "",
		    PQgetvalue(res, 0, 1));
		*status = EX_CANCELLED;
	} else if (strcmp(state, "scheduled") == 0 && !opt.once) {
		/* Its time to come: looked at every second, so that a start
		 * now or a new time is seen; the claim then starts it. */
		if (!said_when++)
			wa_warn("campaign %s is scheduled: it starts at %s; "
			    "waiting", opt.campaign, PQgetvalue(res, 0, 7));
		*status = 0;
		wait = atoll(PQgetvalue(res, 0, 6));
		if (wait > 1000)
			wait = 1000;
	} else if (strcmp(state, "running") != 0)
		wa_warn("campaign %s is %s%s%s", opt.campaign,
		    strcmp(state, "draft") == 0 ? "not started" : state,
		    *PQgetvalue(res, 0, 1) ? ": " : "", PQgetvalue(res, 0, 1));
	else if (!pending && !sending && unknown > 0)
		wa_warn("campaign %s: nothing left to claim; %lld rows "
		    "unknown: wa-reconcile settles them", opt.campaign,
		    unknown);
	else if (!pending && !sending) {
		done = wa_pg_need(db, NULL, complete_sql, 1, p);
		if (atoll(PQcmdTuples(done)) == 1)
			*status = 0;
		else {
			*status = 0;	/* it changed meanwhile: look again */
			wait = 0;
		}
		PQclear(done);
	} else if (opt.once) {
		said = 0;
		waiting(res, 0);
		if (said == 0 && !opt.quiet)
			wa_warn("campaign %s: nothing ready now; rows %s",
			    opt.campaign, pending ? "wait for a retry" :
			    "are still being sent");
	}
	else {
		/* Sending rows only (NULL): poll, never spin. */
		*status = 0;
		wait = waiting(res, opt.poll_ms);
		if (wait < 20)
			wait = 20;	/* due rows locked by another claimer */
	}
	PQclear(res);
	return wait;
}

/* Leaves stdout as it found it: the shell may write to it after us. */
static void
restore(void)
{
	int fl;

	if (nonblock && (fl = fcntl(STDOUT_FILENO, F_GETFL)) >= 0)
		fcntl(STDOUT_FILENO, F_SETFL, fl & ~O_NONBLOCK);
}

int
main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "metrics", required_argument, NULL, WA_OPT_METRICS },
		{ "metrics-label", required_argument, NULL, WA_OPT_LABEL },
		{ "once", no_argument, NULL, '1' },
		{ "pg-timeout", required_argument, NULL, 'T' },
		{ "pipe-size", required_argument, NULL, 'P' },
		{ "poll-ms", required_argument, NULL, 'p' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "tag", required_argument, NULL, 't' },
		{ "version", no_argument, NULL, WA_OPT_VERSION },
		{ NULL, 0, NULL, 0 }
	};
	static const double secs[] = { .001, .005, .01, .05, .1, .5, 1 };
	struct wa_buf out = { 0 };
	struct stat st;
	PGresult *res;
	long long capacity = 0, n, wait, seq = 0;
	size_t avg = 200, *ends = NULL, done;
	int64_t t0;
	int c, i, rows, status, gone, fl, stop = 0;

	wa_prog = "wa-claim";
	while ((c = getopt_long(argc, argv, "c:d:hn:q", longs, NULL)) != -1)
		switch (c) {
		case 'c':
			wa_num(optarg, 1, LLONG_MAX, "campaign");
			opt.campaign = optarg;
			break;
		case 'd':
			opt.conninfo = optarg;
			break;
		case 'n':
			opt.batch = wa_num(optarg, 1, 100000, "batch");
			break;
		case 'q':
			opt.quiet = 1;
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
		case 'T':
			opt.pg_timeout = wa_num(optarg, 0, 86400 * 7,
			    "pg-timeout");
			break;
		case 't':
			opt.tag = wa_num(optarg, INT32_MIN,
			    INT32_MAX - WA_CLAIM_TOKENS + 1, "tag");
			if (opt.tag % WA_CLAIM_TOKENS != 0)
				wa_die(EX_USAGE, "tag: %s is not a multiple "
				    "of %d", optarg, WA_CLAIM_TOKENS);
			opt.tagged = 1;
			break;
		default:
			if (!wa_common_opt(c, optarg, usage))
				usage(stderr, EX_USAGE);
		}
	if (opt.campaign == NULL || optind != argc)
		usage(stderr, EX_USAGE);

	wa_signals();
	wa_metrics_label("campaign", opt.campaign);
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
		/* A full pipe must not hold us where no signal reaches. */
		if ((fl = fcntl(STDOUT_FILENO, F_GETFL)) >= 0 &&
		    fcntl(STDOUT_FILENO, F_SETFL, fl | O_NONBLOCK) == 0)
			nonblock = 1;
	}
	db = wa_pg_open(opt.conninfo, opt.pg_timeout);
	/* The first signal ends a wait for Postgres: nothing is held. */
	wa_pg_patience(db, 1);
	status = load();
	while (status == 0 && !stop) {
		/* Lets a pending signal in, even when nothing waits. */
		wa_wait(NULL, 0, 0);
		if (wa_stopping) {
			status = EX_TEMPFAIL;
			break;
		}
		if ((n = room(&capacity, avg)) <= 0) {
			status = n < 0 ? EX_IOERR : EX_TEMPFAIL;
			break;
		}
		t0 = wa_now_ns();
		if ((res = claim(n, seq++)) == NULL) {
			if (wa_pg_state(db) == WA_PG_REFUSED)
				wa_warn("postgres: %s", wa_pg_error(db));
			status = wa_stopping ? EX_TEMPFAIL : EX_UNAVAILABLE;
			break;
		}
		wa_metric_add(claims_total, 1);
		wa_metric_observe(claim_seconds, (wa_now_ns() - t0) / 1e9);
		rows = PQntuples(res);
		out.len = 0;
		ends = wa_realloc(ends, (rows + 1) * sizeof *ends);
		for (i = 0; i < rows; i++) {
			request(&out, res, i);
			ends[i] = out.len;
		}
		done = emit(out.s, out.len, ends, rows, &gone);
		written += done;
		for (i = 0; i < rows && ends[i] <= done; i++)
			;
		if (i < rows)
			putback(res, i);
		PQclear(res);
		wa_metric_add(rows_total, i);
		wa_metrics_tick();
		if (gone) {
			wa_warn("write to stdout: the reader has gone");
			status = EX_IOERR;
		} else if (i < rows)
			status = EX_TEMPFAIL;
		else if (rows > 0) {
			avg = (avg * 3 + out.len / rows) / 4;
			said = 0;
		}
		else if ((wait = dry(&status)) >= 0)
			wa_sleep_ms(wait);
		else
			stop = 1;
	}
	restore();
	if (wa_stopping && status == EX_TEMPFAIL)
		wa_warn("stopped: campaign %s is not completed", opt.campaign);
	wa_metrics_write();
	wa_pg_close(db);
	free(ends);
	wa_buf_free(&out);
	wa_buf_free(&head);
	return status;
}
