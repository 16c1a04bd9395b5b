/*
 * records/claim.h: the send request of a claimed row, as wa-claim writes
 * it and wa-campaign run --dry-run shows it: one builder for both (and
 * for fuzz/import.c), from the row's fields as plain strings.
 */
#ifndef WA_RECORDS_CLAIM_H
#define WA_RECORDS_CLAIM_H

#include <stddef.h>

#include "core/buf.h"

/*
 * The campaign's fields every request shares ($1: the campaign id), and
 * the database's deployment tag.
 */
#define WA_CLAIM_HEAD_SQL "SELECT phone_number_id, template_name," \
    " template_lang, (SELECT tag FROM wapipe_deployment)" \
    " FROM campaigns WHERE id = $1"

/*
 * A block of WA_CLAIM_TOKENS claim tokens, its first (sql/schema.sql's
 * wapipe_claim_tags): wa-claim marks each claim's rows with the next of
 * its block; wa-campaign run gives each round's wa-claim a block (--tag)
 * and finds by it the rows the round claimed.
 */
#define WA_CLAIM_TAG_SQL "SELECT nextval('wapipe_claim_tags')"
#define WA_CLAIM_TOKENS 65536	/* the sequence's increment */

/*
 * Fills head with campaign id's number, template and language, and the
 * deployment tag ("deployment"; none when tag is empty).
 */
void wa_claim_head(struct wa_buf *head, const char *id, const char *number,
    const char *template, const char *lang, const char *tag);
/*
 * Adds to line the request of one row: its id, attempt and phone, and
 * its template parameters (params, n bytes of JSON: an array, or an
 * object whose members go into the template); "\n" ended.
 */
void wa_claim_line(struct wa_buf *line, const struct wa_buf *head,
    const char *id, const char *attempt, const char *phone,
    const char *params, size_t n);

#endif
