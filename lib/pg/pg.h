/*
 * pg/pg.h: Postgres for the programs that use it (they link libpq): the
 * connection, statements whose failure is reported once, array literals
 * for the one-statement-per-batch writes, and a session (struct wa_pg)
 * that rides out a restart or a failover: one retry policy and one cache
 * of prepared statements for every program (none behind a pooler in
 * transaction pooling: WA_PG_POOLING).
 */
#ifndef WA_PG_PG_H
#define WA_PG_PG_H

#include <stdint.h>

#include <libpq-fe.h>

#include "core/buf.h"

#define WA_PG_TIMEOUT 300	/* --pg-timeout's default, in seconds */

/* -d CONNINFO, else DATABASE_URL, else "" (libpq's PG* variables). */
const char *wa_pg_conninfo(const char *opt);
PGconn *wa_pg_connect(const char *conninfo);	/* or exit 69 */
PGconn *wa_pg_try_connect(const char *conninfo);	/* or NULL */
/* The result, or NULL after a warning; the must form exits 69. */
PGresult *wa_pg_exec(PGconn *conn, const char *sql, int n,
    const char *const *params);
PGresult *wa_pg_must(PGconn *conn, const char *sql, int n,
    const char *const *params);
void wa_pg_warn(PGconn *conn, PGresult *res, const char *what);

/*
 * A session that waits for Postgres: a statement that fails because the
 * server is gone (a restart, a failover, too many connections) or on a
 * deadlock is run again, with backoff, for up to timeout seconds; the
 * program says once that it waits and once that Postgres is back.
 */
enum wa_pg_state {
	WA_PG_OK,		/* the last statement succeeded */
	WA_PG_WAIT,		/* down, will try again (wa_pg_try only) */
	WA_PG_REFUSED,		/* Postgres refused the statement itself */
	WA_PG_DOWN		/* unreachable past the timeout, or a second
				   signal while waiting: give up */
};

struct wa_pg;

struct wa_pg *wa_pg_open(const char *conninfo, long long timeout_s);
void wa_pg_close(struct wa_pg *db);
/* Stop waiting once this many SIGTERM/SIGINT came (default 2). */
void wa_pg_patience(struct wa_pg *db, int signals);
PGconn *wa_pg_conn(struct wa_pg *db);	/* connected, or NULL */
enum wa_pg_state wa_pg_state(const struct wa_pg *db);
/* After WA_PG_REFUSED: the error's SQLSTATE and message (one line). */
const char *wa_pg_sqlstate(const struct wa_pg *db);
const char *wa_pg_error(const struct wa_pg *db);
/* Whether a refused statement failed on the data it was given. */
int wa_pg_data_error(const struct wa_pg *db);

/*
 * Runs sql (prepared once per session under name, a string constant, or
 * not prepared when name is NULL) until it succeeds, is refused, or
 * Postgres stays away past the timeout; the result, or NULL: see
 * wa_pg_state. Waiting, it reads no input, so backpressure holds the
 * pipeline.
 */
PGresult *wa_pg_run(struct wa_pg *db, const char *name, const char *sql,
    int n, const char *const *params);
/*
 * Whether the last wa_pg_run ran its statement again after a failure:
 * the first run may have committed, its answer lost with the server.
 */
int wa_pg_retried(const struct wa_pg *db);
/* wa_pg_run that never waits: NULL with WA_PG_WAIT while down. */
PGresult *wa_pg_try(struct wa_pg *db, const char *name, const char *sql,
    int n, const char *const *params);
/* wa_pg_run, or exit 69 after saying why. */
PGresult *wa_pg_need(struct wa_pg *db, const char *name, const char *sql,
    int n, const char *const *params);

/*
 * The same policy for statements sent without waiting: wa_pg_ready
 * connects and prepares name (NULL: nothing to prepare) and returns the
 * connection, or NULL (see wa_pg_state); after a failed result res (NULL
 * when the connection failed), wa_pg_again says whether to send it again
 * (1, after the wait), or not (0: refused, -1: down); wa_pg_ok after a
 * success.
 */
PGconn *wa_pg_ready(struct wa_pg *db, const char *name, const char *sql,
    int n);
/* Sends sql (name, as wa_pg_ready prepared it) on wa_pg_ready's session. */
int wa_pg_send(struct wa_pg *db, const char *name, const char *sql, int n,
    const char *const *p);
/*
 * 1 when db is behind a pooler in transaction pooling
 * (WA_PG_POOLING=transaction, read by wa_pg_open, which exits 78 on a
 * value other than that or "session"): nothing is prepared, and no lock
 * may outlive its transaction.
 */
int wa_pg_unprepared(const struct wa_pg *db);
int wa_pg_again(struct wa_pg *db, PGresult *res);
void wa_pg_ok(struct wa_pg *db);

/* A text array literal, '{...}', built one element at a time. */
void wa_pg_array_start(struct wa_buf *b);
void wa_pg_array_add(struct wa_buf *b, const char *s, size_t n);
void wa_pg_array_int(struct wa_buf *b, long long v);
void wa_pg_array_str(struct wa_buf *b, const char *s);	/* NULL: null */
void wa_pg_array_null(struct wa_buf *b);
void wa_pg_array_end(struct wa_buf *b);

#endif
