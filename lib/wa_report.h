/*
 * wa_report.h: where a campaign stands, as one JSON object built by one
 * statement (so every figure comes from the same snapshot), and the same
 * in plain text for people; and the list of every campaign.
 */
#ifndef WA_REPORT_H
#define WA_REPORT_H

#include "wa_pg.h"

struct json_object *wa_report(PGconn *, const char *);
void wa_report_print(FILE *, struct json_object *);
void wa_report_list(PGconn *, FILE *);

#endif
