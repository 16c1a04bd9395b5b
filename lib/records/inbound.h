/*
 * records/inbound.h: every inbound message of a webhook body's change
 * (value.messages[]), of any type, made into one JSON object of the
 * columns of sql/schema.sql's inbound_messages, for pg/statusdb.h to
 * insert with the batch's statement (jsonb_to_recordset).
 */
#ifndef WA_RECORDS_INBOUND_H
#define WA_RECORDS_INBOUND_H

#include <stddef.h>

#include <json-c/json.h>

#include "core/buf.h"

/*
 * Appends message m of the change's value to out, a JSON array's
 * opening bracket and elements ("," between them; the caller closes
 * it), and counts it in *n; lineno, its body's line, goes in as
 * "line" (for a message Postgres would refuse: not a column). Never
 * fails: what it does not know is kept in raw alone.
 */
void wa_inbound_add(struct wa_buf *out, size_t *n, struct json_object *value,
    struct json_object *m, unsigned long lineno);

/*
 * Appends, as wa_inbound_add does, a change of one of the fields that
 * speak of the business rather than a person (message_template_status_
 * update, template_category_update, account_update,
 * business_capability_update): an object of field, waba (its entry's
 * id, when digits), ts (the value's timestamp, when it has one), raw
 * (the value) and line, for pg/statusdb.h to keep in account_events and
 * act on.
 */
void wa_inbound_event(struct wa_buf *out, size_t *n, const char *field,
    const char *waba, struct json_object *value, unsigned long lineno);

/*
 * Whether s has the shape of a business-scoped user id (cloud-api-
 * 2026.md §6): a country's two letters, a period, then up to 128 letters
 * and digits, a parent's with "ENT." after the period.
 */
int wa_bsuid_ok(const char *s);

#endif
