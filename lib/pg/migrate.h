/*
 * pg/migrate.h: a database's schema brought up to this release's, in
 * place (wa-campaign migrate).
 */
#ifndef WA_PG_MIGRATE_H
#define WA_PG_MIGRATE_H

#include <libpq-fe.h>

/* The schema version of this release; sql/schema.sql records the same. */
#define WA_SCHEMA_VERSION 3

/*
 * Upgrades conn's database to WA_SCHEMA_VERSION in one transaction, or
 * says it is up to date (on stdout). Returns 0;
 * exits 65 when the database is newer than the programs, 69 when
 * Postgres fails (nothing applied).
 */
int wa_migrate(PGconn *conn);

#endif
