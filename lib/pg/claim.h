/*
 * pg/claim.h: the send request of a claimed row, as wa-claim writes it
 * and wa-campaign run --dry-run shows it: one builder for both.
 */
#ifndef WA_PG_CLAIM_H
#define WA_PG_CLAIM_H

#include <libpq-fe.h>

#include "core/buf.h"

/* The campaign's fields every request shares ($1: the campaign id). */
#define WA_CLAIM_HEAD_SQL "SELECT phone_number_id, template_name," \
    " template_lang FROM campaigns WHERE id = $1"

/* Fills head from row 0 of res (WA_CLAIM_HEAD_SQL) for campaign id. */
void wa_claim_head(struct wa_buf *head, const char *id, PGresult *res);
/*
 * Adds to line the request of row i of res, whose columns are id,
 * attempt, phone, template_params; "\n" ended.
 */
void wa_claim_line(struct wa_buf *line, const struct wa_buf *head,
    PGresult *res, int i);

#endif
