/*
 * pg/blocked.h: why a running campaign's due rows cannot be claimed now,
 * read from messaging_limits and campaigns (Postgres), as wa-claim and
 * wa-campaign run both say it.
 */
#ifndef WA_PG_BLOCKED_H
#define WA_PG_BLOCKED_H

#include <stddef.h>

#include "pg/pg.h"

enum wa_blocked {
	WA_BLOCKED_NOT,		/* nothing in the way */
	WA_BLOCKED_LIMIT,	/* its number messaged its limit */
	WA_BLOCKED_URGENT	/* an urgent campaign on its number first */
};

/*
 * What keeps campaign's due rows back; *ms: until a place under the
 * limit frees (-1 when unknown); why[n]: the reason, for people, with
 * when it ends. Exits 69 when Postgres stays away.
 */
enum wa_blocked wa_blocked(struct wa_pg *db, const char *campaign,
    long long *ms, char *why, size_t n);

#endif
