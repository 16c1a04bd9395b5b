/*
 * pg/load.h: the rows of an import (records/import.h) into a campaign,
 * in one transaction: COPY into a temporary table, then one INSERT ...
 * ON CONFLICT DO NOTHING. All or nothing. Numbers are checked against
 * the numbering plans and given their zone; suppressed ones are
 * rejected with their reason.
 */
#ifndef WA_PG_LOAD_H
#define WA_PG_LOAD_H

#include "pg/pg.h"
#include "records/import.h"

/* Rows added; exits on a Postgres failure. */
unsigned long wa_import_load(PGconn *conn, const char *id,
    struct wa_rows *rows);
int wa_import_reopen(PGconn *conn, const char *id);

#endif
