/*
 * wa_pg.h: Postgres for the programs that use it (they link libpq).
 */
#ifndef WA_PG_H
#define WA_PG_H

#include <libpq-fe.h>

#include "wa.h"

PGconn *wa_pg_connect(const char *);
PGconn *wa_pg_try_connect(const char *);
PGresult *wa_pg_exec(PGconn *, const char *, int, const char *const *);
PGresult *wa_pg_must(PGconn *, const char *, int, const char *const *);
PGresult *wa_pg_prepare(PGconn *, const char *, const char *, int);
PGresult *wa_pg_exec_prepared(PGconn *, const char *, const char *, int,
    const char *const *);
void wa_pg_warn(PGconn *, PGresult *, const char *);
int wa_pg_retryable(PGconn *, PGresult *);
void wa_pg_array_start(struct wa_buf *);
void wa_pg_array_add(struct wa_buf *, const char *, size_t);
void wa_pg_array_int(struct wa_buf *, long long);
void wa_pg_array_str(struct wa_buf *, const char *);
void wa_pg_array_null(struct wa_buf *);
void wa_pg_array_end(struct wa_buf *);
const char *wa_pg_conninfo(const char *);

#endif
