/*
 * records/json.h: fields of a parsed record by dotted path
 * ("result.error.code"), and a record written as one output line.
 */
#ifndef WA_RECORDS_JSON_H
#define WA_RECORDS_JSON_H

#include <stdint.h>

#include <json-c/json.h>

struct json_object *wa_json_get(struct json_object *o, const char *path);
/* The string at path, or NULL when absent or not a string. */
const char *wa_json_str(struct json_object *o, const char *path);
/* 1 with *v set, 0 when absent or null, -1 when not an integer. */
int wa_json_int(struct json_object *o, const char *path, int64_t *v);
/* Compact text of o, valid until o changes or is freed. */
const char *wa_json_text(struct json_object *o);
void wa_out_json(struct json_object *o);

#endif
