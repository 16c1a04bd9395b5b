/*
 * wa-reconcile: settles rows whose fate the pipeline could not tell, for
 * cron.
 *
 * Reads and writes campaigns and campaign_recipients (Postgres). First it
 * applies the send results that a wa-record on this host kept on disk
 * (WA_RESULTS_DIR) and whose writer is gone, so that no row is
 * settled by guess whose result is known. A row left in sending longer
 * than --stale-after (its pipeline died) becomes unknown. An unknown row
 * no status webhook has settled after --unknown-after gets its
 * campaign's on_unknown policy: resend (back to pending, attempt kept) or
 * fail; in a cancelled campaign it fails, as nothing more is sent. A
 * running campaign with nothing left to do is marked completed. Claims
 * with nothing left in flight are deleted (campaign_claims). Each move
 * is fenced on (id, attempt) and status, so a row a live pipeline still
 * holds, or a webhook has just settled, is never touched. Prints what it
 * did, one line per campaign and move, after the time off a terminal
 * (WA_LOG_TIME as for messages). Waits up to --pg-timeout for
 * Postgres. Exits 0, 69 when Postgres stays away or fails, 64 on a usage
 * error.
 */
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "core/opts.h"
#include "pg/pg.h"
#include "pg/results.h"
#include "pg/spill.h"

/* $1: campaign id or NULL for all, $2: seconds, $3: dry run. */
static const char *stale_sql =
    "WITH s AS (SELECT r.id, r.attempt, r.campaign_id"
    "  FROM campaign_recipients r"
    "   JOIN campaigns c ON c.id = r.campaign_id"
    "  WHERE r.id IN (SELECT unnest(ids) FROM campaign_claims"
    "    WHERE $1::bigint IS NULL OR campaign_id = $1)"
    "   AND r.status = 'sending'"
    "   AND c.state IN ('running', 'paused', 'cancelled')"
    "   AND ($1::bigint IS NULL OR c.id = $1)"
    "   AND r.claimed_at < now() - $2 * interval '1 second'"
    "  ORDER BY r.id FOR UPDATE OF r SKIP LOCKED),"
    " u AS (UPDATE campaign_recipients r SET status = 'unknown',"
    "   status_at = now()"
    "  FROM s WHERE NOT $3 AND r.id = s.id AND r.attempt = s.attempt"
    "   AND r.status = 'sending' RETURNING r.campaign_id)"
    " SELECT campaign_id, count(*) FROM u GROUP BY 1"
    " UNION ALL SELECT campaign_id, count(*) FROM s WHERE $3 GROUP BY 1"
    " ORDER BY 1";

static const char *unknown_sql =
    "WITH s AS (SELECT r.id, r.attempt, r.campaign_id,"
    "   CASE WHEN c.state = 'cancelled' THEN 'cancelled'"
    "    ELSE c.on_unknown END AS on_unknown"
    "  FROM campaign_recipients r JOIN campaigns c ON c.id = r.campaign_id"
    "  WHERE r.phase = 1 AND r.status = 'unknown'"
    "   AND c.state IN ('running', 'paused', 'cancelled')"
    "   AND ($1::bigint IS NULL OR c.id = $1)"
    "   AND coalesce(r.status_at, r.claimed_at)"
    "     < now() - $2 * interval '1 second'"
    "  ORDER BY r.id FOR UPDATE OF r SKIP LOCKED),"
    " u AS (UPDATE campaign_recipients r SET"
    "   status = CASE s.on_unknown WHEN 'resend' THEN 'pending'"
    "     ELSE 'failed' END,"
    "   next_attempt_at = now(), status_at = now(),"
    "   error_code = NULL,"
    "   error_title = CASE s.on_unknown WHEN 'resend' THEN NULL"
    "     WHEN 'fail' THEN"
    "     'fate unknown (no answer, no status); on_unknown is fail'"
    "     ELSE 'fate unknown (no answer, no status); the campaign was"
    " cancelled' END,"
    "   error_class = CASE s.on_unknown WHEN 'resend' THEN NULL"
    "     ELSE 'ambiguous' END"
    "  FROM s WHERE NOT $3 AND r.id = s.id AND r.attempt = s.attempt"
    "   AND r.status = 'unknown' RETURNING r.campaign_id, s.on_unknown)"
    " SELECT campaign_id, on_unknown, count(*) FROM u GROUP BY 1, 2"
    " UNION ALL SELECT campaign_id, on_unknown, count(*) FROM s WHERE $3"
    "  GROUP BY 1, 2"
    " ORDER BY 1";

/* $1: campaign id or NULL. Claims with nothing left in flight. */
static const char *claims_sql =
    "DELETE FROM campaign_claims k"
    " WHERE ($1::bigint IS NULL OR k.campaign_id = $1)"
    "  AND NOT claim_in_flight(k)";

/* $1: campaign id or NULL, $2: dry run. */
static const char *complete_sql =
    "WITH done AS (SELECT id FROM campaigns c WHERE state = 'running'"
    "   AND ($1::bigint IS NULL OR id = $1) AND NOT EXISTS (SELECT 1"
    "   FROM campaign_recipients WHERE campaign_id = c.id"
    "   AND (phase = 0 OR phase = 1))),"
    " u AS (UPDATE campaigns c SET state = 'completed', finished_at = now(),"
    "   updated_at = now() FROM done WHERE NOT $2 AND c.id = done.id)"
    " SELECT id FROM done ORDER BY id";

/*
 * A line of the report on stdout: after the time when stdout is not a
 * terminal (the cron log), as messages on stderr; WA_LOG_TIME says too.
 */
static void __attribute__((format(printf, 1, 2)))
report(const char *fmt, ...)
{
	static int stamp = -1;
	char when[40];
	va_list ap;

	if (stamp < 0)
		stamp = wa_log_time(STDOUT_FILENO);
	if (stamp)
		printf("%s ", wa_rfc3339_now(when, sizeof when));
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

static void
usage(FILE *f, int status)
{
	fprintf(f, "usage: wa-reconcile [-n | --dry-run] [-c campaign] "
	    "[-d conninfo]\n"
	    "                   [--pg-timeout secs] [--stale-after secs] "
	    "[--unknown-after secs]\n"
	    "       wa-reconcile -h | --help | --version\n");
	exit(status);
}

int
main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ "pg-timeout", required_argument, NULL, 'T' },
		{ "stale-after", required_argument, NULL, 's' },
		{ "unknown-after", required_argument, NULL, 'u' },
		{ "version", no_argument, NULL, WA_OPT_VERSION },
		{ NULL, 0, NULL, 0 }
	};
	const char *campaign = NULL, *conninfo = NULL, *stale = "600",
	    *unknown = "600", *p[3];
	const char *verb;
	PGresult *res;
	struct wa_pg *db;
	struct wa_results *kept;
	unsigned long long applied = 0;
	long long timeout = WA_PG_TIMEOUT;
	int c, i, dry = 0, files;

	wa_prog = "wa-reconcile";
	while ((c = getopt_long(argc, argv, "c:d:hn", longs, NULL)) != -1)
		switch (c) {
		case 'c':
			wa_num(optarg, 1, LLONG_MAX, "campaign");
			campaign = optarg;
			break;
		case 'd':
			conninfo = optarg;
			break;
		case 'n':
			dry = 1;
			break;
		case 's':
			wa_num(optarg, 0, INT_MAX, "stale-after");
			stale = optarg;
			break;
		case 'T':
			timeout = wa_num(optarg, 0, 86400 * 7, "pg-timeout");
			break;
		case 'u':
			wa_num(optarg, 0, INT_MAX, "unknown-after");
			unknown = optarg;
			break;
		default:
			if (!wa_common_opt(c, optarg, usage))
				usage(stderr, EX_USAGE);
		}
	if (optind != argc)
		usage(stderr, EX_USAGE);

	db = wa_pg_open(conninfo, timeout);
	verb = dry ? "would move" : "moved";

	/* Known results first: they settle rows better than any guess. */
	if (!dry) {
		kept = wa_results_new(db, 1000, 300000);
		if ((files = wa_spill_replay(kept, &applied)) < 0)
			wa_die(EX_UNAVAILABLE, "results kept on disk not "
			    "applied: postgres went away");
		if (files > 0)
			report("applied %llu results kept on disk by wa-record "
			    "(%d files)\n", applied, files);
		wa_results_free(kept);
	}
	p[0] = campaign;
	p[2] = dry ? "true" : "false";

	p[1] = stale;
	res = wa_pg_need(db, NULL, stale_sql, 3, p);
	for (i = 0; i < PQntuples(res); i++)
		report("campaign %s: %s %s rows from sending (claimed over %s "
		    "s ago) to unknown\n", PQgetvalue(res, i, 0), verb,
		    PQgetvalue(res, i, 1), stale);
	PQclear(res);
	if (!dry)
		PQclear(wa_pg_need(db, NULL, claims_sql, 1, p));

	p[1] = unknown;
	res = wa_pg_need(db, NULL, unknown_sql, 3, p);
	for (i = 0; i < PQntuples(res); i++)
		report("campaign %s: %s %s unknown rows to %s (%s%s)\n",
		    PQgetvalue(res, i, 0), verb, PQgetvalue(res, i, 2),
		    strcmp(PQgetvalue(res, i, 1), "resend") == 0 ? "pending" :
		    "failed", strcmp(PQgetvalue(res, i, 1), "cancelled") == 0 ?
		    "" : "on_unknown ", strcmp(PQgetvalue(res, i, 1),
		    "cancelled") == 0 ? "the campaign is cancelled" :
		    PQgetvalue(res, i, 1));
	PQclear(res);

	p[1] = p[2];
	res = wa_pg_need(db, NULL, complete_sql, 2, p);
	for (i = 0; i < PQntuples(res); i++)
		report("campaign %s: %s\n", PQgetvalue(res, i, 0),
		    dry ? "would be completed" : "completed");
	PQclear(res);
	wa_pg_close(db);
	if (fflush(stdout) != 0 || ferror(stdout))
		wa_die(EX_IOERR, "write to stdout:");
	return 0;
}
