/*
 * requeue.c: a manual replay. Puts rows of a campaign back to pending,
 * due now, chosen by status (failed by default; unknown; pending, to
 * retry now rows waiting for their retry), by error code, by error class
 * and by a file of phone numbers, all that are given. A row's error is
 * its current one, or when it has none (a row put back by wa-reconcile)
 * its latest in recipient_errors. The classes are lib/api/class.c's
 * (outage, transient, ambiguous, ...) and two more: timeout (the call
 * timed out, curl 28) and http (an HTTP status without an API error).
 *
 * Reads the phones file (phonelist.c). Reads and writes
 * campaign_recipients and recipient_errors, in one transaction: the
 * current error is cleared, after being added to recipient_errors unless
 * it is there already, so the history keeps it.
 * The attempt is kept: it is the fencing token, so a late result of the
 * earlier attempt cannot touch the new one, and the next claim makes it
 * attempt + 1, whose result wa-record applies as any other. Rows in
 * sending are never chosen. A completed campaign runs again.
 *
 * Writes the count on stdout (with dry, then up to 10 of the rows, tab
 * separated: phone, status, attempts, error code, class, title); says on
 * stderr which numbers of the file are not in the campaign. Returns 0,
 * or 65 when lines were rejected; exits 64 on a bad option or campaign,
 * 65 when the campaign is cancelled, 66 when the file cannot be opened,
 * 69 when Postgres fails, 74 when reading fails, 75 on a signal.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/sig.h"
#include "records/import.h"
#include "records/phone.h"
#include "api/class.h"
#include "campaign.h"

/*
 * $1 campaign, $2 statuses, $3 code, $4 class, $5 phones (NULL: any).
 * t: the rows chosen, with their current error and the one that counts.
 */
#define CHOSEN \
    "WITH s AS (SELECT r.id, r.phone, r.status, r.attempt, r.status_at," \
    "   r.error_code AS cur_code, r.error_class AS cur_class," \
    "   r.error_title AS cur_title," \
    "   coalesce(r.error_code, h.code) AS code," \
    "   coalesce(r.error_class, h.class) AS class," \
    "   coalesce(r.error_title, h.title) AS title" \
    "  FROM campaign_recipients r" \
    "  LEFT JOIN LATERAL (SELECT e.code, e.class, e.title" \
    "   FROM recipient_errors e WHERE e.recipient_id = r.id" \
    "   AND r.error_code IS NULL AND r.error_title IS NULL" \
    "   AND r.error_class IS NULL" \
    "   ORDER BY e.attempt DESC, e.at DESC LIMIT 1) h ON true" \
    "  WHERE r.campaign_id = $1 AND r.status = ANY ($2::text[])" \
    "   AND ($5::text[] IS NULL" \
    "    OR r.phone IN (SELECT unnest($5::text[]))))," \
    " t AS (SELECT * FROM s WHERE ($3::integer IS NULL OR code = $3)" \
    "  AND ($4::text IS NULL OR CASE $4" \
    "   WHEN 'timeout' THEN coalesce(title LIKE '%(curl 28)%', false)" \
    "   WHEN 'http' THEN code IS NULL" \
    "    AND coalesce(title LIKE 'HTTP %', false)" \
    "   ELSE coalesce(class = $4, false) END))"

static const char *preview_sql = CHOSEN
    " SELECT count(*) OVER (), phone, status, attempt,"
    "  coalesce(code::text, '-'), coalesce(class, '-'),"
    "  coalesce(title, '-')"
    " FROM t ORDER BY phone LIMIT 10";

static const char *requeue_sql = CHOSEN ","
    " u AS (UPDATE campaign_recipients c SET status = 'pending',"
    "   next_attempt_at = now(), error_code = NULL, error_title = NULL,"
    "   error_class = NULL, wamid = NULL, status_at = NULL"
    "  FROM t WHERE c.id = t.id AND c.status = t.status RETURNING c.id),"
    " hist AS (INSERT INTO recipient_errors (recipient_id, attempt, code,"
    "   class, title, at)"
    "  SELECT t.id, t.attempt, t.cur_code, t.cur_class, t.cur_title,"
    "   coalesce(t.status_at, now()) FROM t JOIN u ON u.id = t.id"
    "  WHERE (t.cur_code IS NOT NULL OR t.cur_title IS NOT NULL)"
    "   AND coalesce(t.cur_class NOT IN ('outage', 'unsent'), true)"
    "   AND NOT EXISTS (SELECT 1 FROM recipient_errors e"
    "    WHERE e.recipient_id = t.id AND e.attempt = t.attempt"
    "    AND e.code IS NOT DISTINCT FROM t.cur_code"
    "    AND e.title IS NOT DISTINCT FROM t.cur_title))"
    " SELECT count(*) FROM u";

/* The numbers of the file that are not the campaign's. */
static const char *absent_sql =
    "SELECT count(*), string_agg(p, ', ') FILTER (WHERE n <= 3)"
    " FROM (SELECT p, row_number() OVER (ORDER BY p) AS n"
    "  FROM (SELECT DISTINCT p FROM unnest($2::text[]) p) d"
    "  WHERE NOT EXISTS (SELECT 1 FROM campaign_recipients"
    "   WHERE campaign_id = $1 AND phone = p)) x";

struct requeue {
	const char	*id;		/* the campaign */
	const char	*status;	/* "failed,unknown", or NULL: default */
	const char	*code;		/* an error code, or NULL */
	const char	*class;		/* an error class, timeout, http */
	const char	*phones;	/* a file of numbers ("-": stdin) */
	const char	*reject;	/* where its bad lines go, or NULL */
	const char	*cc;		/* --country-code digits, or NULL */
	int		 dry;		/* -n: count and show, change nothing */
};

static const char *const requeueable[] = { "failed", "unknown", "pending" };

/* Checks the comma-separated statuses s into the array literal a. */
static void
statuses(struct wa_buf *a, const char *s)
{
	size_t i, n;

	wa_pg_array_start(a);
	for (; *s != '\0'; s += n + (s[n] == ',')) {
		n = strcspn(s, ",");
		for (i = 0; i < 3; i++)
			if (strlen(requeueable[i]) == n &&
			    strncmp(s, requeueable[i], n) == 0)
				break;
		if (i == 3)
			wa_die(EX_USAGE, "--status is failed, unknown or "
			    "pending, or a list of them (failed,unknown), "
			    "not '%.*s'", (int)n, s);
		wa_pg_array_str(a, requeueable[i]);
	}
	wa_pg_array_end(a);
}

static void
check_class(const char *s)
{
	int c;

	if (strcmp(s, "timeout") == 0 || strcmp(s, "http") == 0)
		return;
	for (c = 0; c <= WA_UNSENT; c++)
		if (strcmp(s, wa_class_name(c)) == 0)
			return;
	wa_die(EX_USAGE, "--class is outage, timeout, http or one of "
	    "transient, permanent, ambiguous, throughput, unavailable, "
	    "pair_rate, later, fatal, unsent; not '%s'", s);
}

/* Says which numbers of the file are not in the campaign. */
static void
absent(PGconn *conn, const struct requeue *rq, const char *list)
{
	const char *p[] = { rq->id, list };
	PGresult *res = wa_pg_must(conn, absent_sql, 2, p);
	unsigned long n = strtoul(PQgetvalue(res, 0, 0), NULL, 10);

	if (n > 0)
		wa_warn("%s: %lu numbers are not recipients of campaign %s "
		    "(%s%s)", rq->phones, n, rq->id, PQgetvalue(res, 0, 1),
		    n > 3 ? ", ..." : "");
	PQclear(res);
}

/* 0, or 65 when lines of the phones file were rejected. */
static int
requeue(PGconn *conn, const struct requeue *rq)
{
	struct wa_buf st = { 0 }, list = { 0 };
	const char *p[5], *status = rq->status;
	unsigned long bad = 0, n = 0;
	PGresult *res;
	int i;

	if (status == NULL)
		status = rq->class != NULL && strcmp(rq->class, "outage") ==
		    0 ? "pending" : "failed";
	statuses(&st, status);
	if (rq->code != NULL)
		wa_num(rq->code, 0, 2147483647, "error code");
	if (rq->class != NULL)
		check_class(rq->class);
	if (rq->phones != NULL)
		n = phone_list(rq->phones, rq->cc, rq->reject,
		    "nothing requeued", &list, &bad);
	p[0] = rq->id;
	p[1] = st.s;
	p[2] = rq->code;
	p[3] = rq->class;
	p[4] = rq->phones != NULL ? list.s : NULL;
	PQclear(wa_pg_must(conn, "BEGIN", 0, NULL));
	if (strcmp(campaign_state(conn, rq->id, 1), "cancelled") == 0)
		wa_die(EX_DATAERR, "campaign %s is cancelled: nothing to "
		    "requeue", rq->id);
	if (rq->phones != NULL && n > 0)
		absent(conn, rq, list.s);
	if (rq->dry) {
		res = wa_pg_must(conn, preview_sql, 5, p);
		printf("%s\n", PQntuples(res) ? PQgetvalue(res, 0, 0) : "0");
		for (i = 0; i < PQntuples(res); i++)
			printf("%s\t%s\t%s\t%s\t%s\t%s\n",
			    PQgetvalue(res, i, 1), PQgetvalue(res, i, 2),
			    PQgetvalue(res, i, 3), PQgetvalue(res, i, 4),
			    PQgetvalue(res, i, 5), PQgetvalue(res, i, 6));
		PQclear(res);
		PQclear(wa_pg_must(conn, "ROLLBACK", 0, NULL));
		wa_warn("dry run (-n): nothing requeued");
	} else {
		res = wa_pg_must(conn, requeue_sql, 5, p);
		printf("%s\n", PQgetvalue(res, 0, 0));
		PQclear(res);
		if (campaign_reopen(conn, rq->id))
			wa_warn("campaign %s was completed and runs again: "
			    "start the pipeline to send the requeued rows",
			    rq->id);
		PQclear(wa_pg_must(conn, "COMMIT", 0, NULL));
	}
	wa_buf_free(&st);
	wa_buf_free(&list);
	return bad > 0 ? EX_DATAERR : 0;
}

int
cmd_requeue(struct opts *o)
{
	const char *const *v = o->val;
	struct requeue rq = { o->args[0], v[STATUS], v[CODE], v[CLASS],
	    v[PHONES], v[REJECT], v[CC], (o->given & O(DRY)) != 0 };

	if ((v[REJECT] != NULL || v[CC] != NULL) && v[PHONES] == NULL)
		wa_die(EX_USAGE, "--reject and --country-code go with "
		    "--phones");
	return requeue(campaign_db(o), &rq);
}
