/*
 * pg/phonelist.h: a file of phone numbers (requeue --phones, suppress
 * import) as a Postgres text[] literal.
 */
#ifndef WA_PG_PHONELIST_H
#define WA_PG_PHONELIST_H

#include "core/buf.h"

/*
 * Reads path ("-": stdin): one number per line, or a CSV with a "phone"
 * column (an export), or NDJSON with "phone"; cc: the country code of
 * national numbers, or NULL. A bad line is reported with its number and
 * copied to reject (if not NULL); the others go into a as an array
 * literal. Returns how many went in, *bad how many were rejected; exits
 * 66 when path cannot be opened, 74 when reading fails, 75 on a signal
 * (what: what is then not done, as "nothing requeued").
 */
unsigned long wa_phone_list(const char *path, const char *cc,
    const char *reject, const char *what, struct wa_buf *a,
    unsigned long *bad);

#endif
