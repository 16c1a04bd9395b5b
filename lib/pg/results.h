/*
 * pg/results.h: send results (wa-send's output lines) applied to
 * campaign_recipients in batches, one statement per batch, fenced on
 * (id, attempt), rank-monotone; a batch Postgres refuses for the data of
 * one line is split until that line alone is refused. Used by wa-record
 * for its input and by wa-record and wa-reconcile for results kept on
 * disk (pg/spill.h).
 */
#ifndef WA_PG_RESULTS_H
#define WA_PG_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "pg/pg.h"

#define WA_OUTCOMES 5	/* sent, retry, failed, unknown, halt */

extern const char *const wa_outcome_names[WA_OUTCOMES];

struct wa_results;

/* Results applied through db; retry delays from base_ms and cap_ms. */
struct wa_results *wa_results_new(struct wa_pg *db, int64_t base_ms,
    int64_t cap_ms);
void wa_results_free(struct wa_results *r);
/*
 * Called for a line Postgres refused on its own (name, lineno: where it
 * came from; why: Postgres's words).
 */
void wa_results_on_refused(struct wa_results *r,
    void (*fn)(const char *line, size_t len, const char *name,
    unsigned long lineno, const char *why, void *arg), void *arg);

/* Adds a parsed line to the batch: NULL, or why it is no result. */
const char *wa_results_take(struct wa_results *r, struct json_object *obj,
    const char *line, size_t len, const char *name, unsigned long lineno);
size_t wa_results_count(const struct wa_results *r);
/*
 * Applies the batch: 0 when every line was applied, found stale or
 * refused alone; -1 when Postgres is gone (wa_pg_state: WA_PG_DOWN) or
 * refuses the statement itself: the batch is then kept, whole. waiting,
 * when not NULL, is called once if Postgres does not answer at once, before
 * the wait (to put the batch on disk).
 */
int wa_results_apply(struct wa_results *r,
    void (*waiting)(struct wa_results *r, void *arg), void *arg);
/* Each line of the batch in input order, refused ones left out. */
void wa_results_each(const struct wa_results *r,
    void (*fn)(const char *line, size_t len, void *arg), void *arg);
void wa_results_clear(struct wa_results *r);

/*
 * Counts since the start: by outcome, stale (fenced off), naming no row
 * (with the first such ids, space-separated), refused.
 */
unsigned long long wa_results_done(const struct wa_results *r, int outcome);
unsigned long long wa_results_stale(const struct wa_results *r);
unsigned long long wa_results_norow(const struct wa_results *r);
const char *wa_results_norow_ids(const struct wa_results *r);
unsigned long long wa_results_refused(const struct wa_results *r);

#endif
