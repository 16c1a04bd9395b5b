/*
 * report.c: every figure of a campaign's report (wa-campaign report,
 * its --json and its HTML), as one JSON object: the status report of
 * status.c (status_report, the same statement, so the two can never
 * disagree) and, beside its keys, what only the report shows. Both
 * statements run in one read-only REPEATABLE READ transaction: one
 * snapshot for every figure.
 *
 * Everything is aggregated by Postgres: what comes back is a few hundred
 * numbers however many rows the campaign has, so memory stays flat.
 *
 *   funnel        claimed (attempted at least once), sent (accepted by
 *                 the API), delivered (delivered or read), read; failed,
 *                 unknown, pending (pending or sending); suppressed
 *                 and expired (never sent: opted out, or too late)
 *   bucket_seconds, series
 *                 per bucket (a minute, wider when the campaign spans
 *                 more than 480 of them): rows accepted, by the time of
 *                 their claim; rows delivered, read and failed, by the
 *                 time of their current status (a read row counts once,
 *                 as read)
 *   latency       {delivered, read}: the seconds from the claim that
 *                 sent a row to its current status, for the rows in that
 *                 status: count, p50, p90, p99 (to 0.1 s below 10 s, to
 *                 the second below 10 minutes) and a histogram
 *   errors_by_code
 *                 every error of every attempt (recipient_errors) and
 *                 of every failed row, by code (the 50 most common):
 *                 Meta's title, wapipe's class and what it did (retried,
 *                 failed, halted, unknown, put back), the attempts that
 *                 met it and the rows failed with it now
 *   retries       rows pending with a retry not yet due: how many, the
 *                 next and the last due time, how many due within 1 m,
 *                 5 m, 15 m, 1 h, 6 h, 24 h and later
 *   timeline      each change of state with its time and reason
 *                 (campaign_events), or the campaign's created, started
 *                 and finished times when it has none
 */
#include <stdlib.h>

#include "core/err.h"
#include "records/json.h"
#include "campaign.h"


/* The histogram's lower bounds, in seconds (the last bucket is open). */
#define BOUNDS "'{0,1,2,5,10,30,60,120,300,600,1800,3600,21600,86400}'"

/* The latency of status s at quantile q: the least value reaching it. */
#define PCT(s, q) \
    "(SELECT round(min(lq)::numeric, 1) FROM (SELECT lq, sum(n) OVER" \
    "  (ORDER BY lq) AS cum, sum(n) OVER () AS total FROM g WHERE set = 25" \
    "  AND status = '" s "' AND lq IS NOT NULL) c WHERE cum >= " q " * total)"

/* Latency of the rows in status s: count, percentiles, histogram. */
#define LATENCY(s) \
    "json_build_object('count', (SELECT coalesce(sum(n), 0) FROM g" \
    "  WHERE set = 25 AND status = '" s "' AND lq IS NOT NULL)," \
    " 'p50', " PCT(s, "0.5") ", 'p90', " PCT(s, "0.9") "," \
    " 'p99', " PCT(s, "0.99") "," \
    " 'histogram', (SELECT json_agg(json_build_object('from', b.b[i]," \
    "  'to', b.b[i + 1], 'count', coalesce(h.n, 0)) ORDER BY i)" \
    "  FROM (SELECT " BOUNDS "::float8[] AS b) b, generate_series(1, 14) i" \
    "  LEFT JOIN (SELECT width_bucket(lq, " BOUNDS "::float8[]) AS w," \
    "  sum(n) AS n FROM g WHERE set = 25 AND status = '" s "'" \
    "  AND lq IS NOT NULL GROUP BY 1) h ON h.w = i))"

/*
 * One pass over the rows, grouped five ways (the bits of GROUPING(sm,
 * tm, status, lq, fc) say which): accepted rows by the minute of their
 * claim (15), delivered, read and failed rows by the minute of their
 * status (19), delivered and read rows by latency (25), failed rows by
 * error code (30), and all of them (31, the funnel). Latency is kept to
 * 0.1 s below 10 s, to the second below 10 minutes, to the minute below
 * 10 hours, to 10 minutes beyond (lq, rounded down): a few hundred
 * groups, from which the percentiles and the histogram are read, so
 * that no pass has to sort a million values. The plan must hash, not
 * sort (see figures()).
 */
static const char *figures_sql =
    "WITH r AS NOT MATERIALIZED (SELECT status, attempt, claimed_at,"
    "   status_at, error_code, error_title,"
    "   status IN ('sent', 'delivered', 'read') OR wamid IS NOT NULL"
    "   AS acc, CASE WHEN status IN ('delivered', 'read')"
    "   THEN greatest(0, date_part('epoch', status_at - claimed_at))"
    "   END AS secs FROM campaign_recipients WHERE campaign_id = $1),"
    " g AS (SELECT GROUPING(sm, tm, status, lq, fc) AS set, sm, tm,"
    "   status, lq, fc, count(*) AS n, max(error_title) AS title,"
    "   count(*) FILTER (WHERE attempt > 0) AS claimed,"
    "   count(*) FILTER (WHERE acc) AS sent,"
    "   count(*) FILTER (WHERE status IN ('delivered', 'read')) AS deliv,"
    "   count(*) FILTER (WHERE status = 'read') AS read,"
    "   count(*) FILTER (WHERE status = 'failed') AS failed,"
    "   count(*) FILTER (WHERE status = 'unknown') AS unknown,"
    "   count(*) FILTER (WHERE status = 'suppressed') AS suppressed,"
    "   count(*) FILTER (WHERE status = 'expired') AS expired,"
    "   count(*) FILTER (WHERE status IN ('pending', 'sending'))"
    "   AS pending"
    "  FROM (SELECT *, CASE WHEN acc THEN date_trunc('minute', claimed_at)"
    "    END AS sm, CASE WHEN status IN ('delivered', 'read', 'failed')"
    "    THEN date_trunc('minute', status_at) END AS tm,"
    "    CASE WHEN secs < 10 THEN floor(secs * 10) / 10"
    "    WHEN secs < 600 THEN floor(secs)"
    "    WHEN secs < 36000 THEN floor(secs / 60) * 60"
    "    ELSE floor(secs / 600) * 600 END AS lq,"
    "    CASE WHEN status = 'failed' THEN coalesce(error_code, -1) END"
    "    AS fc FROM r) x"
    "  GROUP BY GROUPING SETS ((sm), (tm, status), (status, lq), (fc),"
    "   ())),"
    /* Per minute first (few rows), then into buckets of width w. */
    " m AS (SELECT sm AS t, 'sent' AS k, n FROM g WHERE set = 15"
    "   AND sm IS NOT NULL UNION ALL SELECT tm, status, n FROM g"
    "   WHERE set = 19 AND tm IS NOT NULL),"
    " w AS (SELECT coalesce((SELECT min(x) FROM unnest('{60,120,300,600,"
    "   900,1800,3600,10800,21600,43200,86400}'::int[]) x WHERE x * 480"
    "   >= span), ceil(span / 480 / 86400) * 86400)::bigint AS s"
    "   FROM (SELECT coalesce(extract(epoch FROM max(t) - min(t)), 0)"
    "   AS span"
    "   FROM m) y),"
    " s AS (SELECT to_timestamp(floor(extract(epoch FROM m.t) / w.s) *"
    "   w.s) AS t, sum(n) FILTER (WHERE k = 'sent') AS sent,"
    "   sum(n) FILTER (WHERE k = 'delivered') AS delivered,"
    "   sum(n) FILTER (WHERE k = 'read') AS read,"
    "   sum(n) FILTER (WHERE k = 'failed') AS failed"
    "   FROM m, w GROUP BY 1),"
    " e AS (SELECT coalesce(e.code, -1) AS code, max(e.title) AS title,"
    "   max(e.class) AS class,"
    "   count(*) AS n, max(e.at) AS last FROM recipient_errors e"
    "   JOIN campaign_recipients c ON c.id = e.recipient_id"
    "   WHERE c.campaign_id = $1 GROUP BY 1),"
    " ef AS (SELECT fc AS code, title, n FROM g"
    "   WHERE set = 30 AND fc IS NOT NULL),"
    " q AS (SELECT next_attempt_at - now() AS d, next_attempt_at AS at"
    "   FROM campaign_recipients WHERE campaign_id = $1"
    "   AND status = 'pending' AND next_attempt_at > now())"
    " SELECT json_build_object("
    "  'funnel', (SELECT json_build_object('claimed', claimed, 'sent',"
    "   sent, 'delivered', deliv, 'read', read, 'failed', failed,"
    "   'unknown', unknown, 'pending', pending, 'suppressed', suppressed,"
    "   'expired', expired) FROM g WHERE set = 31),"
    "  'bucket_seconds', (SELECT s FROM w),"
    "  'series', (SELECT coalesce(json_agg(json_build_object('at', "
    "   " ISO("t") ", 'sent', coalesce(sent, 0), 'delivered',"
    "   coalesce(delivered, 0), 'read', coalesce(read, 0), 'failed',"
    "   coalesce(failed, 0)) ORDER BY t), '[]') FROM s),"
    "  'latency', json_build_object('delivered', " LATENCY("delivered")
    ", 'read', " LATENCY("read") "),"
    "  'errors_by_code', (SELECT coalesce(json_agg(json_build_object("
    "   'code', code, 'title', title, 'class', class, 'did', CASE"
    "    WHEN class IS NULL OR class = 'permanent'"
    "    THEN 'failed' WHEN class = 'fatal' THEN 'halted'"
    "    WHEN class = 'ambiguous' THEN 'unknown'"
    "    WHEN class IN ('outage', 'unsent') THEN 'put back'"
    "    ELSE 'retried' END,"
    "   'attempts', attempts, 'failed_rows', failed_rows,"
    "   'last_at', " ISO("last") ") ORDER BY attempts DESC,"
    "   failed_rows DESC, code), '[]')"
    "   FROM (SELECT nullif(coalesce(e.code, ef.code), -1) AS code,"
    "    coalesce(e.title, ef.title) AS title, e.class,"
    "    coalesce(e.n, 0) AS attempts, coalesce(ef.n, 0) AS failed_rows,"
    "    e.last FROM e FULL JOIN ef ON ef.code = e.code"
    "    ORDER BY 4 DESC, 5 DESC LIMIT 50) y),"
    "  'retries', (SELECT json_build_object('pending', count(*),"
    "   'next_at', " ISO("min(at)") ", 'last_at', " ISO("max(at)") ","
    "   'due', json_build_array("
    "    json_build_object('within', '1m', 'count', count(*) FILTER"
    "     (WHERE d <= interval '1 minute')),"
    "    json_build_object('within', '5m', 'count', count(*) FILTER"
    "     (WHERE d > interval '1 minute' AND d <= interval '5 minutes')),"
    "    json_build_object('within', '15m', 'count', count(*) FILTER"
    "     (WHERE d > interval '5 minutes' AND d <= interval '15 minutes')),"
    "    json_build_object('within', '1h', 'count', count(*) FILTER"
    "     (WHERE d > interval '15 minutes' AND d <= interval '1 hour')),"
    "    json_build_object('within', '6h', 'count', count(*) FILTER"
    "     (WHERE d > interval '1 hour' AND d <= interval '6 hours')),"
    "    json_build_object('within', '24h', 'count', count(*) FILTER"
    "     (WHERE d > interval '6 hours' AND d <= interval '24 hours')),"
    "    json_build_object('within', 'later', 'count', count(*) FILTER"
    "     (WHERE d > interval '24 hours')))) FROM q),"
    "  'timeline', coalesce((SELECT json_agg(json_build_object('at', "
    "   " ISO("at") ", 'state', state, 'reason', reason) ORDER BY at)"
    "   FROM campaign_events WHERE campaign_id = $1),"
    "   (SELECT json_agg(json_build_object('at', " ISO("v.at") ","
    "    'state', v.state, 'reason', v.reason) ORDER BY v.at)"
    "    FROM campaigns c, LATERAL (VALUES (c.created_at, 'draft', NULL),"
    "    (c.started_at, 'running', NULL), (c.finished_at, c.state,"
    "    c.state_reason)) v(at, state, reason)"
    "    WHERE c.id = $1 AND v.at IS NOT NULL)))";

static void
sql(PGconn *conn, const char *s)
{
	PGresult *res = wa_pg_exec(conn, s, 0, NULL);

	if (res == NULL)
		exit(EX_UNAVAILABLE);
	PQclear(res);
}

static struct json_object *
figures(PGconn *conn, const char *id)
{
	const char *p[] = { id };
	struct json_object *o, *more;
	PGresult *res;

	sql(conn, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
	/*
	 * Room for the planner to hash every grouping set in one pass: it
	 * takes each minute for a group of its own (a million groups for a
	 * million rows) where there are a few thousand, and would sort
	 * every row to disk instead. The real hash tables stay small.
	 */
	sql(conn, "SET LOCAL work_mem = '1GB'");
	if ((o = status_report(conn, id)) == NULL) {
		sql(conn, "ROLLBACK");
		return NULL;
	}
	if ((res = wa_pg_exec(conn, figures_sql, 1, p)) == NULL)
		exit(EX_UNAVAILABLE);
	if ((more = json_tokener_parse(PQgetvalue(res, 0, 0))) == NULL)
		wa_die(EX_SOFTWARE, "the report's figures are not JSON");
	PQclear(res);
	sql(conn, "COMMIT");
	json_object_object_foreach(more, k, v)
		json_object_object_add(o, k, json_object_get(v));
	json_object_put(more);
	return o;
}

/* wa-campaign report: the HTML page, or (--json) its figures. */
int
cmd_report(struct opts *o)
{
	struct json_object *r = figures(campaign_db(o), o->args[0]);

	if (r == NULL)
		wa_die(EX_USAGE, "no campaign %s", o->args[0]);
	if (o->given & O(JSON))
		wa_out_json(r);		/* on stdout, as status --json */
	else
		html_report(stdout, r);
	json_object_put(r);
	return 0;
}
