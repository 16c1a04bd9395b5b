/*
 * statusdb.c: applying a batch of statuses to campaign_recipients in one
 * statement, and the spool checkpoint that commits with it.
 *
 * The statement resolves each status to its row (the recipient id, else
 * the wamid), adds the kept statuses of unmatched_statuses whose row has
 * appeared (those received within the retry window, or all of them when
 * sweeping) and deletes them, keeps one status per row (the highest rank,
 * then the earliest), updates the rows whose rank it raises in id order,
 * keeps what matched no row, and moves the checkpoint: all or nothing, as
 * one statement is one transaction. Rows settle through the same guard:
 * a row in sending or unknown that gets any status leaves rank 0.
 */
#include <stdlib.h>
#include <string.h>

#include "wa_pg.h"
#include "wa_status.h"

static const char *apply_sql =
    "WITH b AS (SELECT coalesce(b.rid, (SELECT c.id FROM campaign_recipients"
    "   c WHERE c.wamid = b.wamid)) AS id, b.rid, b.wamid, b.status,"
    "   to_timestamp(b.ts) AS at, b.code, b.title"
    "  FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[],"
    "   $5::integer[], $6::text[]) AS b(rid, wamid, status, ts, code, title)),"
    " old AS (SELECT u.wamid, u.status, coalesce(u.recipient_id, (SELECT c.id"
    "   FROM campaign_recipients c WHERE c.wamid = u.wamid)) AS id"
    "  FROM unmatched_statuses u WHERE $10::float8 IS NULL"
    "   OR u.received_at >= now() - make_interval(secs => $10)),"
    " retried AS (DELETE FROM unmatched_statuses u"
    "  USING old o, campaign_recipients c"
    "  WHERE u.wamid = o.wamid AND u.status = o.status AND c.id = o.id"
    "  RETURNING c.id, u.status, u.status_at AS at, u.error_code AS code,"
    "   u.error_title AS title),"
    " m AS (SELECT DISTINCT ON (id) * FROM (SELECT id, status, at, code,"
    "   title FROM b WHERE id IS NOT NULL UNION ALL SELECT * FROM retried) s"
    "  ORDER BY id, status_rank(status) DESC, at),"
    " upd AS (UPDATE campaign_recipients r SET status = m.status,"
    "   status_at = coalesce(m.at, now()),"
    "   error_code = CASE WHEN m.status = 'failed' THEN m.code"
    "    ELSE r.error_code END,"
    "   error_title = CASE WHEN m.status = 'failed' THEN m.title"
    "    ELSE r.error_title END"
    "  FROM m WHERE r.id = m.id"
    "   AND status_rank(m.status) > status_rank(r.status)"
    "  RETURNING r.id, m.status, extract(epoch FROM now() - m.at) AS lag),"
    " kept AS (INSERT INTO unmatched_statuses (wamid, status, recipient_id,"
    "   status_at, error_code, error_title)"
    "  SELECT b.wamid, b.status, b.rid, b.at, b.code, b.title FROM b"
    "  WHERE NOT EXISTS (SELECT 1 FROM upd WHERE upd.id = b.id)"
    "   AND NOT EXISTS (SELECT 1 FROM campaign_recipients c"
    "    WHERE c.id = b.id)"
    "  ON CONFLICT DO NOTHING RETURNING 1),"
    " ck AS (INSERT INTO spool_checkpoints (spool, segment, byte_offset)"
    "  SELECT $7::text, $8::bigint, $9::bigint WHERE $7::text IS NOT NULL"
    "  ON CONFLICT (spool) DO UPDATE SET segment = excluded.segment,"
    "   byte_offset = excluded.byte_offset, updated_at = now()"
    "  RETURNING 1)"
    " SELECT status, lag FROM upd"
    " UNION ALL SELECT 'kept', count(*) FROM kept"
    " UNION ALL SELECT 'retried', count(*) FROM retried"
    " UNION ALL SELECT 'checkpoint', count(*) FROM ck";

static void
num(struct wa_buf *a, int has, int64_t v)
{
	char s[32];

	if (!has) {
		wa_pg_array_null(a);
		return;
	}
	snprintf(s, sizeof s, "%lld", (long long)v);
	wa_pg_array_add(a, s, strlen(s));
}

/*
 * Six array literals in a[0..5]: recipient ids, wamids, statuses,
 * timestamps, error codes, error titles (NULL where absent).
 */
static void
arrays(const struct wa_status_batch *b, struct wa_buf *a)
{
	const struct wa_status *s;
	int i;

	for (i = 0; i < 6; i++)
		wa_pg_array_start(&a[i]);
	for (s = b->v; s < b->v + b->n; s++) {
		num(&a[0], s->rid != 0, s->rid);
		wa_pg_array_add(&a[1], b->str.s + s->wamid, s->wamid_len);
		wa_pg_array_add(&a[2], wa_rank_names[s->rank],
		    strlen(wa_rank_names[s->rank]));
		num(&a[3], s->ts != 0, s->ts);
		num(&a[4], s->has_code, s->code);
		if (s->title_len > 0)
			wa_pg_array_add(&a[5], b->str.s + s->title,
			    s->title_len);
		else
			wa_pg_array_null(&a[5]);
	}
	for (i = 0; i < 6; i++)
		wa_pg_array_end(&a[i]);
}

static void
lock(PGconn *conn, const char *spool)
{
	const char *p[] = { spool };
	PGresult *res = wa_pg_exec(conn, "SELECT pg_try_advisory_lock("
	    "hashtext('wa-status-ingest'), hashtext($1))", 1, p);

	if (res == NULL)
		exit(EX_UNAVAILABLE);
	if (*PQgetvalue(res, 0, 0) != 't')
		wa_die(EX_TEMPFAIL, "another wa-status-ingest follows %s",
		    spool);
	PQclear(res);
}

/*
 * Runs sql, again after a deadlock or a lost connection (then taking the
 * spool's lock again), or exits 69.
 */
static PGresult *
run(PGconn *conn, const char *spool, const char *sql, int n,
    const char *const *p)
{
	PGresult *res;
	int try;

	for (try = 0;; try++) {
		res = PQexecParams(conn, sql, n, NULL, p, NULL, NULL, 0);
		if (PQresultStatus(res) == PGRES_TUPLES_OK ||
		    PQresultStatus(res) == PGRES_COMMAND_OK)
			return res;
		wa_pg_warn(conn, res, "postgres");
		if (try >= 8 || !wa_pg_retryable(conn, res))
			exit(EX_UNAVAILABLE);
		PQclear(res);
		wa_sleep_ms(wa_backoff_ms(try, 100, 10000));
		if (spool != NULL && PQstatus(conn) == CONNECTION_OK)
			lock(conn, spool);
	}
}

/*
 * Takes the spool for this session (exits 75 when another process has
 * it) and returns where the last run stopped in *seg, *off (-1, 0: never).
 */
void
wa_status_checkpoint(PGconn *conn, const char *spool, long long *seg,
    long long *off)
{
	const char *p[] = { spool };
	PGresult *res;

	lock(conn, spool);
	res = run(conn, spool, "SELECT segment, byte_offset FROM"
	    " spool_checkpoints WHERE spool = $1", 1, p);
	*seg = -1;
	*off = 0;
	if (PQntuples(res) == 1) {
		*seg = atoll(PQgetvalue(res, 0, 0));
		*off = atoll(PQgetvalue(res, 0, 1));
	}
	PQclear(res);
}

/*
 * Applies the reduced batch b, retrying kept statuses received within
 * window seconds (-1: all), and saves (seg, off) as spool's checkpoint
 * (spool NULL: none). Counts go to *r; each applied status's lag to lag.
 */
void
wa_status_apply(PGconn *conn, struct wa_status_batch *b,
    const char *spool, long long seg, long long off, long long window,
    struct wa_status_result *r, struct wa_metric *lag)
{
	char num[3][32];
	const char *p[10], *what;
	PGresult *res;
	int i, k;

	arrays(b, b->arr);
	for (i = 0; i < 6; i++)
		p[i] = b->arr[i].s;
	snprintf(num[0], sizeof num[0], "%lld", seg);
	snprintf(num[1], sizeof num[1], "%lld", off);
	snprintf(num[2], sizeof num[2], "%lld", window);
	p[6] = spool;
	p[7] = num[0];
	p[8] = num[1];
	p[9] = window >= 0 ? num[2] : NULL;
	res = run(conn, spool, apply_sql, 10, p);
	memset(r, 0, sizeof *r);
	for (i = 0; i < PQntuples(res); i++) {
		what = PQgetvalue(res, i, 0);
		for (k = 0; k < 4 && strcmp(what, wa_st_names[k]) != 0; k++)
			;
		if (k < 4) {
			r->applied[k]++;
			if (!PQgetisnull(res, i, 1) && lag != NULL)
				wa_metric_observe(lag,
				    atof(PQgetvalue(res, i, 1)));
		} else if (strcmp(what, "kept") == 0)
			r->kept = atoll(PQgetvalue(res, i, 1));
		else if (strcmp(what, "retried") == 0)
			r->matched = atoll(PQgetvalue(res, i, 1));
	}
	PQclear(res);
}

/* Drops kept statuses older than ttl seconds; returns how many. */
long long
wa_status_expire(PGconn *conn, long long ttl)
{
	const char *p[1];
	PGresult *res;
	long long n;
	char s[32];

	snprintf(s, sizeof s, "%lld", ttl);
	p[0] = s;
	res = run(conn, NULL, "DELETE FROM unmatched_statuses"
	    " WHERE received_at < now() - make_interval(secs => $1)", 1, p);
	n = atoll(PQcmdTuples(res));
	PQclear(res);
	return n;
}

