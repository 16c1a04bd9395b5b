/*
 * pg/figures.h: every figure of a campaign's report as one JSON object
 * (the status report's keys and the report's own), read in one snapshot
 * from SQL aggregates; NULL when there is no such campaign.
 */
#ifndef WA_PG_FIGURES_H
#define WA_PG_FIGURES_H

#include <stdio.h>

#include <json-c/json.h>

#include "pg/pg.h"

struct json_object *wa_figures(PGconn *conn, const char *id);
/* wa-campaign report: the HTML page, or (json) the figures, on f. */
int wa_figures_write(PGconn *conn, const char *id, int json, FILE *f);

#endif
