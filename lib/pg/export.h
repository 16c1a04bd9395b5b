/*
 * pg/export.h: a campaign's recipients, one line each, streamed from
 * Postgres to stdout (COPY ... TO STDOUT) in flat memory.
 */
#ifndef WA_PG_EXPORT_H
#define WA_PG_EXPORT_H

#include "pg/pg.h"

enum { WA_EXPORT_CSV, WA_EXPORT_NDJSON };

struct wa_export {
	const char	*id;		/* the campaign */
	const char	*status;	/* only rows in this status, or NULL */
	const char	*code;		/* only rows with this error code */
	int		 format;	/* WA_EXPORT_CSV or WA_EXPORT_NDJSON */
};

/* Whether s is a status a row can have. */
int wa_export_status(const char *s);
/* Rows written; exits 69 when Postgres fails, 74 when stdout does. */
unsigned long long wa_export(PGconn *conn, const struct wa_export *e);

#endif
