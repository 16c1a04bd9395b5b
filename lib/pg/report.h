/*
 * pg/report.h: where a campaign stands, as one JSON object built by one
 * statement (so every figure comes from the same snapshot), and the same
 * in plain text for people; and the list of every campaign (text or
 * one JSON object per line).
 */
#ifndef WA_PG_REPORT_H
#define WA_PG_REPORT_H

#include <stdio.h>

#include <json-c/json.h>

#include "pg/pg.h"

struct json_object *wa_report(PGconn *conn, const char *id);
void wa_report_print(FILE *f, struct json_object *report);
void wa_report_list(PGconn *conn, FILE *f, int json);

#endif
