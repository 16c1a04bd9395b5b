/*
 * pg/spill.h: send results that wa-record could not apply, kept on disk
 * under WA_RESULTS_DIR until a later wa-record or wa-reconcile
 * applies them. Each process appends to a file of its own, locked while
 * it lives; a file whose owner is gone is applied, then removed.
 */
#ifndef WA_PG_SPILL_H
#define WA_PG_SPILL_H

#include <stddef.h>

#include "pg/results.h"

struct wa_spill;

struct wa_spill *wa_spill_new(void);	/* no file until the first line */
/* Appends a line (without its '\n'); -1 after saying why not. */
int wa_spill_add(struct wa_spill *s, const char *line, size_t len);
int wa_spill_sync(struct wa_spill *s);	/* on disk now: 0, or -1 */
void wa_spill_forget(struct wa_spill *s);	/* all of it was applied */
unsigned long wa_spill_lines(const struct wa_spill *s);
const char *wa_spill_path(const struct wa_spill *s);
void wa_spill_close(struct wa_spill *s);	/* removed when empty */

/*
 * Applies the files that no living process holds, oldest first, through
 * r (then emptied); their lines applied are added to *lines. Returns the
 * files applied and removed, or -1 when Postgres went away (what is left
 * stays on disk).
 */
int wa_spill_replay(struct wa_results *r, unsigned long long *lines);

#endif
