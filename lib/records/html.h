/*
 * records/html.h: a campaign's report as one self-contained HTML page
 * (inline CSS and SVG, no script, nothing fetched), from the figures
 * object of pg/figures.h.
 */
#ifndef WA_RECORDS_HTML_H
#define WA_RECORDS_HTML_H

#include <stdio.h>

#include <json-c/json.h>

void wa_html_report(FILE *f, struct json_object *figures);

#endif
