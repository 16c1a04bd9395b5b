/*
 * migrate.c: wa-campaign migrate: brings a database's schema up to this
 * release's, in place. Reads the version in wapipe_schema: a database without
 * that table but with campaigns was made by release 0.1.0 (version 1); one
 * without either is empty (0). Writes sql/schema.sql, built into the program
 * (wa_schema_sql), which creates only what is missing and so takes any older
 * version to this one: the step of each release is the whole schema, applied in
 * one transaction under an advisory lock (two migrations at once run one after
 * the other), with the new version. Refuses a database newer than the programs:
 * its columns and functions may mean what these programs do not know.
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/err.h"
#include "campaign.h"

extern const char wa_schema_sql[];

/* The lock's key: any constant no other program takes. */
#define LOCK "SELECT pg_advisory_xact_lock(7761616970)"

/* Whether there is a version table, and whether there are campaigns. */
static const char *tables_sql =
    "SELECT to_regclass('wapipe_schema') IS NOT NULL,"
    " to_regclass('campaigns') IS NOT NULL";

static void
must(PGconn *conn, const char *sql, const char *what)
{
	PGresult *res = PQexec(conn, sql);

	if (PQresultStatus(res) != PGRES_COMMAND_OK &&
	    PQresultStatus(res) != PGRES_TUPLES_OK) {
		wa_pg_warn(conn, res, what);
		PQclear(res);
		wa_die(EX_UNAVAILABLE, "nothing was changed");
	}
	PQclear(res);
}

/* The schema version of this release; sql/schema.sql records the same. */
#define SCHEMA_VERSION 10

int
cmd_migrate(struct opts *o)
{
	PGconn *conn = campaign_db(o);
	PGresult *res;
	int v;

	must(conn, "BEGIN", "begin");
	must(conn, LOCK, "lock");
	res = wa_pg_must(conn, tables_sql, 0, NULL);
	v = *PQgetvalue(res, 0, 0) == 't' ? -1 :
	    *PQgetvalue(res, 0, 1) == 't' ? 1 : 0;
	PQclear(res);
	if (v < 0) {
		res = wa_pg_must(conn, "SELECT coalesce(max(version), 0)"
		    " FROM wapipe_schema", 0, NULL);
		v = atoi(PQgetvalue(res, 0, 0));
		PQclear(res);
	}
	if (v > SCHEMA_VERSION)
		wa_die(EX_DATAERR, "the database's schema is version %d, "
		    "newer than these programs' (%d): install the wapipe "
		    "that made it", v, SCHEMA_VERSION);
	if (v == SCHEMA_VERSION) {
		printf("schema version %d: up to date\n", v);
		must(conn, "ROLLBACK", "rollback");
		return 0;
	}
	must(conn, wa_schema_sql, "the schema");
	res = wa_pg_must(conn, "SELECT max(version) FROM wapipe_schema", 0,
	    NULL);
	if (atoi(PQgetvalue(res, 0, 0)) != SCHEMA_VERSION)
		wa_die(EX_SOFTWARE, "sql/schema.sql records version %s, the "
		    "programs %d: built from different trees?",
		    PQgetvalue(res, 0, 0), SCHEMA_VERSION);
	PQclear(res);
	must(conn, "COMMIT", "commit");
	printf("schema version %d: upgraded to %d\n", v, SCHEMA_VERSION);
	return 0;
}
