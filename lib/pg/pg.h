/*
 * pg/pg.h: Postgres for the programs that use it (they link libpq): the
 * connection, statements whose failure is reported once, and array
 * literals for the one-statement-per-batch writes.
 */
#ifndef WA_PG_PG_H
#define WA_PG_PG_H

#include <libpq-fe.h>

#include "core/buf.h"

/* -d CONNINFO, else DATABASE_URL, else "" (libpq's PG* variables). */
const char *wa_pg_conninfo(const char *opt);
PGconn *wa_pg_connect(const char *conninfo);	/* or exit 69 */
PGconn *wa_pg_try_connect(const char *conninfo);	/* or NULL */
/* The result, or NULL after a warning; the must form exits 69. */
PGresult *wa_pg_exec(PGconn *conn, const char *sql, int n,
    const char *const *params);
PGresult *wa_pg_must(PGconn *conn, const char *sql, int n,
    const char *const *params);
PGresult *wa_pg_prepare(PGconn *conn, const char *name, const char *sql,
    int n);
PGresult *wa_pg_exec_prepared(PGconn *conn, const char *name,
    const char *sql, int n, const char *const *params);
void wa_pg_warn(PGconn *conn, PGresult *res, const char *what);
/* Whether the failure res may pass: a lost connection, a deadlock... */
int wa_pg_retryable(PGconn *conn, PGresult *res);

/* A text array literal, '{...}', built one element at a time. */
void wa_pg_array_start(struct wa_buf *b);
void wa_pg_array_add(struct wa_buf *b, const char *s, size_t n);
void wa_pg_array_int(struct wa_buf *b, long long v);
void wa_pg_array_str(struct wa_buf *b, const char *s);	/* NULL: null */
void wa_pg_array_null(struct wa_buf *b);
void wa_pg_array_end(struct wa_buf *b);

#endif
