/*
 * api/share.h: how a number's rate is shared on this host between the
 * processes drawing tokens from it (one wa-throttle per campaign), by
 * weight, and how much of it is kept back for live conversations (the
 * reserve): a small mmap'ed file per number under WA_STATE_DIR, next to
 * its bucket.
 */
#ifndef WA_API_SHARE_H
#define WA_API_SHARE_H

#include <stdint.h>

#define WA_SHARE_WEIGHT_MAX 1000
#define WA_SHARE_ACTIVE_NS 500000000LL	/* drawing: wanted a token since */
#define WA_SHARE_RESERVE_MAX 0.99

struct wa_share;

/* The share file of number, this process drawing with weight (0: only
 * looking), urgent or not. NULL after a message. */
struct wa_share *wa_share_open(const char *number, int weight, int urgent);
/* The part of the number's rate that is this process's now (0 to 1),
 * noting that it wants a token. */
double wa_share_now(struct wa_share *s, int64_t now);
double wa_share_reserve(struct wa_share *s);
void wa_share_set_reserve(struct wa_share *s, double reserve);
/* The weights of the processes drawing now, as "1+3", an urgent one's
 * as "u1" ("-": none). */
void wa_share_drawing(struct wa_share *s, char *buf, size_t n);
void wa_share_close(struct wa_share *s);

#endif
