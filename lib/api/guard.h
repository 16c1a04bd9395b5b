/*
 * api/guard.h: what one send's answer means for the others. Per number:
 * pauses of its shared token bucket (api/bucket.h) on throughput and
 * availability errors, and while the API cannot be reached (an outage).
 * Per campaign: the canary, halts on campaign-fatal errors and the
 * circuit breaker on a run of one permanent error.
 */
#ifndef WA_API_GUARD_H
#define WA_API_GUARD_H

#include <stdint.h>

#include "api/answer.h"

/* Throughput pauses: the first, their cap, how often one may halve. */
#define WA_PAUSE_FIRST_MS	1000
#define WA_PAUSE_MAX_MS		60000
#define WA_PAUSE_DECAY_MS	1000
/*
 * Adaptive rate: a throughput error multiplies a number's shared rate by
 * WA_RATE_CUT; it climbs back by WA_RATE_STEP of its configured rate
 * every WA_RATE_STEP_MS.
 */
#define WA_RATE_CUT		0.9
#define WA_RATE_STEP		0.02
#define WA_RATE_STEP_MS		1000
/* After a cut, the answers to sends this soon after say nothing. */
#define WA_RATE_SETTLE_MS	1000
/*
 * An error of class unavailable (131057, 131048, ...) pauses its number
 * for its row's delay in api/class.h's table.
 */
#define WA_BREAKER		50
/*
 * Outages: 5xx answers in a row that make one; the pause of a number
 * while the API cannot be reached, first and at most.
 */
#define WA_OUTAGE_RUN		5
#define WA_OUTAGE_FIRST_MS	1000
#define WA_OUTAGE_MAX_MS	30000

struct wa_guard;
struct wa_halt {
	int64_t		code;		/* the error that halted, or -1 */
	int64_t		subcode;	/* its error_subcode, or -1 */
	char		why[320];
};

struct wa_guard *wa_guard_new(int breaker);
void wa_guard_free(struct wa_guard *g);
/* The halt of the campaign keyed key (wa_request.campaign), or NULL. */
const struct wa_halt *wa_guard_halted(struct wa_guard *g, const char *key);
/*
 * 1 when a request of campaign key must wait for the first call's
 * answer (the canary); else 0, and a campaign with no answer yet takes
 * the caller's call as its canary.
 */
int wa_guard_canary(struct wa_guard *g, const char *key);
/* Whether the canary of campaign key is out, its answer not in. */
int wa_guard_canary_out(struct wa_guard *g, const char *key);
/* ms until number may send, 0 now. */
int64_t wa_guard_paused(struct wa_guard *g, const char *number);
int64_t wa_guard_take(struct wa_guard *g, const char *number);
/*
 * Takes in the answer to a request of campaign key on number, sent at
 * started (ns): pauses the number, halts the campaign. A breaker trip
 * turns the answer into a halt.
 */
void wa_guard_answer(struct wa_guard *g, const char *number,
    const char *key, struct wa_answer *a, int64_t started);
/* How many campaigns halted. */
int wa_guard_halts(const struct wa_guard *g);
/*
 * How long (ms) the API has been unreachable, 0 if it answers; *why (if
 * not NULL) is the last failure.
 */
int64_t wa_guard_outage(const struct wa_guard *g, const char **why);

#endif
