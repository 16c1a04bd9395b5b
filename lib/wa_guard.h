/*
 * wa_guard.h: what one send's answer means for the others. Per number:
 * pauses of its shared token bucket (wa_bucket.h) on throughput and
 * availability errors. Per campaign: halts on campaign-fatal errors and
 * the circuit breaker on a run of one permanent error.
 */
#ifndef WA_GUARD_H
#define WA_GUARD_H

#include "wa_send.h"

/* Throughput pauses: the first, their cap, how often one may halve. */
#define WA_PAUSE_FIRST_MS	1000
#define WA_PAUSE_MAX_MS		60000
#define WA_PAUSE_DECAY_MS	1000
/* 131057 (maintenance, e.g. a throughput upgrade: about a minute). */
#define WA_PAUSE_MAINTENANCE_MS	60000
/* 131048 (spam rate limit: Meta restricts the number for a while). */
#define WA_PAUSE_SPAM_MS	(15 * 60000)
#define WA_BREAKER		50

struct wa_guard;
struct wa_halt {
	int64_t		code;		/* the error that halted, or -1 */
	char		why[320];
};

struct wa_guard *wa_guard_new(int);
void wa_guard_free(struct wa_guard *);
const struct wa_halt *wa_guard_halted(struct wa_guard *, const char *);
int64_t wa_guard_paused(struct wa_guard *, const char *);
int64_t wa_guard_take(struct wa_guard *, const char *);
void wa_guard_answer(struct wa_guard *, const struct wa_send *,
    struct wa_answer *, int64_t);
int wa_guard_halts(const struct wa_guard *);

#endif
