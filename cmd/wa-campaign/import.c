/*
 * import.c: wa-campaign import. Reads a recipients file (CSV or NDJSON,
 * records/import.c; stdin for "-") and puts its rows into a campaign, all of
 * them or none: one transaction that streams them with COPY into a temporary
 * table without indexes (the fast path: no index, no WAL), then moves them with
 * one INSERT ... SELECT that skips, and counts, every phone number the campaign
 * already has or the file repeats (the first row in the file wins). Memory
 * stays flat however big the file is; the campaign number's suppressions (its
 * own and those of scope '*') are read first and kept, sorted, so that a
 * suppressed row is rejected with its line and reason as it is read. Each row's
 * number's country (the region of its plan, records/numplan.h: what its price
 * follows, see estimate.c) goes into recipient_countries in the same
 * statement. A zone that this Postgres does not know is dropped before (the
 * campaign's --tz then stands for it), so that no claim ever fails on it.
 *
 * Writes the counts on stderr, bad and suppressed lines to --reject. Returns 0,
 * or 65 when lines were rejected (not counting the suppressed numbers it
 * skips); exits 64 when there is no such campaign, 65 when it is completed or
 * cancelled, 66 when the file cannot be opened, 69 when Postgres fails, 74 when
 * reading fails, 75 when a signal stops it (and then nothing is imported).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/lines.h"
#include "core/sig.h"
#include "records/import.h"
#include "records/numplan.h"
#include "campaign.h"

/*
 * Imports of one campaign take turns, so that the phones it has (the
 * schema's campaign_phones) stay what this import saw.
 */
static const char *turn_sql =
    "SELECT pg_advisory_xact_lock(hashtext('wapipe_import'),"
    " hashint8($1::bigint))";

/*
 * Duplicates in the file or in the campaign are skipped, the file's
 * first kept. Returns the rows added, those of them without a zone of
 * their own, and the campaign's window and zone, which then stand for
 * theirs.
 */
static const char *insert_sql =
    "WITH ins AS (INSERT INTO campaign_recipients (campaign_id, phone,"
    "  template_params, tz, expires_at)"
    "  SELECT $1::bigint, phone, params::jsonb, tz, exp"
    "  FROM (SELECT DISTINCT ON (phone) * FROM wa_import"
    "   ORDER BY phone, line) w"
    "  WHERE NOT EXISTS (SELECT 1 FROM campaign_phones p"
    "   WHERE p.campaign_id = $1 AND p.phone = w.phone)"
    "  ORDER BY line RETURNING id, phone, tz),"
    " cty AS (INSERT INTO recipient_countries (recipient_id, country)"
    "  SELECT DISTINCT ON (i.id) i.id, w.country FROM ins i"
    "  JOIN wa_import w ON w.phone = i.phone WHERE w.country IS NOT NULL"
    "  ORDER BY i.id)"
    " SELECT (SELECT count(*) FROM ins),"
    "  (SELECT count(*) FROM ins WHERE tz IS NULL),"
    "  c.window_from IS NOT NULL, coalesce(c.tz, 'UTC')"
    " FROM campaigns c WHERE c.id = $1";

/* The zones of $1 that this Postgres does not know. */
static const char *unknown_sql =
    "SELECT z FROM unnest($1::text[]) z"
    " EXCEPT SELECT name FROM pg_timezone_names";

/* Who the campaign's number must not message, by phone in byte order. */
static const char *suppressed_sql =
    "SELECT DISTINCT ON (s.phone COLLATE \"C\") s.phone, s.reason"
    " FROM suppressions s JOIN campaigns c"
    "  ON s.scope IN (c.phone_number_id, '*') WHERE c.id = $1"
    " ORDER BY s.phone COLLATE \"C\", s.scope = '*'";

/* Pending rows in a completed campaign: it runs again. */
static const char *reopen_sql =
    "UPDATE campaigns c SET state = 'running', finished_at = NULL,"
    " updated_at = now() WHERE id = $1 AND state = 'completed'"
    " AND EXISTS (SELECT 1 FROM campaign_recipients"
    "  WHERE campaign_id = c.id AND phase = 0 AND status = 'pending')";

static void
put(PGconn *conn, struct wa_buf *b)
{
	if (b->len > 0 && PQputCopyData(conn, b->s, b->len) != 1) {
		wa_pg_warn(conn, NULL, "copy");
		exit(EX_UNAVAILABLE);
	}
	b->len = 0;
}

/* Appends s in COPY's text format: JSON text has no tab or newline. */
static void
copytext(struct wa_buf *b, const char *s, size_t n)
{
	const char *q;

	while ((q = memchr(s, '\\', n)) != NULL) {
		wa_buf_add(b, s, q - s + 1);
		wa_buf_add(b, "\\", 1);
		n -= q - s + 1;
		s = q + 1;
	}
	wa_buf_add(b, s, n);
}

static void
zone(const char *z, void *arg)
{
	wa_pg_array_str(arg, z);
}

/*
 * Drops the zones this Postgres does not know (an older tzdata than
 * ours): a row with one would stop every claim of its campaign.
 */
static void
zones(PGconn *conn)
{
	struct wa_buf a = { 0 };
	const char *p;
	PGresult *res;
	int i;

	wa_pg_array_start(&a);
	wa_zone_each(zone, &a);
	wa_pg_array_end(&a);
	p = a.s;
	res = wa_pg_must(conn, unknown_sql, 1, &p);
	for (i = 0; i < PQntuples(res); i++) {
		wa_warn("time zone %s is unknown to Postgres: its countries' "
		    "recipients get the campaign's", PQgetvalue(res, i, 0));
		wa_zone_drop(PQgetvalue(res, i, 0));
	}
	PQclear(res);
	wa_buf_free(&a);
}

/* The reason phone is suppressed (res: suppressed_sql's), or NULL. */
static const char *
suppressed(const char *phone, void *arg)
{
	PGresult *res = arg;
	int lo = 0, hi = PQntuples(res), mid, c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((c = strcmp(phone, PQgetvalue(res, mid, 0))) == 0)
			return PQgetvalue(res, mid, 1);
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* Streams the good rows into the temporary table; returns how many. */
static unsigned long
copy(PGconn *conn, struct wa_rows *rows)
{
	struct wa_buf b = { 0 };
	unsigned long good = 0;
	PGresult *res;
	int r;

	PQclear(wa_pg_must(conn, "CREATE TEMP TABLE wa_import (line bigint,"
	    " phone text, params text, tz text, exp timestamptz,"
	    " country text)"
	    " ON COMMIT DROP", 0, NULL));
	res = PQexec(conn, "COPY wa_import FROM STDIN");
	if (PQresultStatus(res) != PGRES_COPY_IN) {
		wa_pg_warn(conn, res, "copy");
		exit(EX_UNAVAILABLE);
	}
	PQclear(res);
	for (;;) {
		r = wa_rows_next(rows);
		if (wa_stopping || r == WA_EOF || r == WA_ERROR)
			break;
		if (r != WA_LINE)
			continue;
		wa_buf_printf(&b, "%lu\t%s\t", rows->lineno, rows->phone);
		copytext(&b, rows->params.s, rows->params.len);
		wa_buf_printf(&b, "\t%s\t%s\t%s\n", rows->tz ? rows->tz :
		    "\\N", *rows->expires ? rows->expires : "\\N",
		    *rows->country ? rows->country : "\\N");
		if (++good % 512 == 0)
			put(conn, &b);
	}
	/* A read error, or a reject file that failed: said already. */
	if (r == WA_ERROR)
		wa_die(EX_IOERR, "%s: nothing imported", rows->in.lines.name);
	put(conn, &b);
	wa_buf_free(&b);
	if (wa_stopping || PQputCopyEnd(conn, NULL) != 1)
		wa_die(EX_TEMPFAIL, "interrupted: nothing imported");
	while ((res = PQgetResult(conn)) != NULL) {
		if (PQresultStatus(res) != PGRES_COMMAND_OK) {
			wa_pg_warn(conn, res, "copy");
			exit(EX_UNAVAILABLE);
		}
		PQclear(res);
	}
	return good;
}

/* Imports rows into campaign id; the rows imported. */
static unsigned long
load(PGconn *conn, const char *id, struct wa_rows *rows)
{
	unsigned long good, added, nozone;
	PGresult *res, *supp;
	char tz[64] = "";
	const char *st;

	PQclear(wa_pg_must(conn, "BEGIN", 0, NULL));
	PQclear(wa_pg_must(conn, turn_sql, 1, &id));
	st = campaign_state(conn, id, 0);
	if (strcmp(st, "completed") == 0 || strcmp(st, "cancelled") == 0)
		wa_die(EX_DATAERR, "campaign %s is %s: no more recipients",
		    id, st);
	zones(conn);
	supp = wa_pg_must(conn, suppressed_sql, 1, &id);
	rows->plan = 1;
	rows->suppressed = suppressed;
	rows->suppressed_arg = supp;
	good = copy(conn, rows);
	rows->suppressed = NULL;
	PQclear(supp);
	res = wa_pg_must(conn, insert_sql, 1, &id);
	added = strtoul(PQgetvalue(res, 0, 0), NULL, 10);
	nozone = strtoul(PQgetvalue(res, 0, 1), NULL, 10);
	if (nozone > 0 && *PQgetvalue(res, 0, 2) == 't')
		snprintf(tz, sizeof tz, "%s", PQgetvalue(res, 0, 3));
	PQclear(res);
	/* A signal that came during the statements still stops it. */
	wa_wait(NULL, 0, 0);
	if (wa_stopping)
		wa_die(EX_TEMPFAIL, "interrupted: nothing imported");
	PQclear(wa_pg_must(conn, "COMMIT", 0, NULL));
	if (campaign_reopen(conn, id))
		wa_warn("campaign %s completed during the import and runs "
		    "again: start the pipeline for the new rows", id);
	if (*tz)
		wa_warn("campaign %s: %lu of the rows imported have no time "
		    "zone of their own (their country has several): its "
		    "window is read in %s, the campaign's --tz, for them",
		    id, nozone, tz);
	wa_warn("%s: %lu imported, %lu skipped as duplicates, %lu suppressed, "
	    "%lu rejected", rows->in.lines.name, added, good - added,
	    rows->nsuppressed, rows->in.rejected - rows->nsuppressed);
	return added;
}

int
campaign_reopen(PGconn *conn, const char *id)
{
	PGresult *res = wa_pg_must(conn, reopen_sql, 1, &id);
	int done = strcmp(PQcmdTuples(res), "1") == 0;

	PQclear(res);
	return done;
}

int
cmd_import(struct opts *o)
{
	const char *path = o->args[1];
	struct wa_rows rows;
	int fd = STDIN_FILENO, ret;

	if (strcmp(path, "-") != 0 &&
	    (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		wa_die(EX_NOINPUT, "open %s:", path);
	wa_rows_init(&rows, fd, fd == STDIN_FILENO ? "<stdin>" : path,
	    o->val[CC]);
	if (o->val[REJECT] != NULL)
		wa_input_reject_file(&rows.in, o->val[REJECT]);
	load(campaign_db(o), o->args[0], &rows);
	/* Suppressed rows are kept in --reject, but the file had no fault. */
	ret = rows.in.rejected > rows.nsuppressed ? EX_DATAERR : 0;
	wa_rows_free(&rows);
	if (fd != STDIN_FILENO)
		close(fd);
	return ret;
}
