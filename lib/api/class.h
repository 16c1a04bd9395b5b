/*
 * api/class.h: the Cloud API's error codes sorted into what to do
 * (DESIGN.md "Error classes"), and the retry delay.
 */
#ifndef WA_API_CLASS_H
#define WA_API_CLASS_H

#include <stdint.h>

enum wa_class {
	WA_SENT,		/* accepted */
	WA_THROUGHPUT,		/* pause the number, retry the row */
	WA_UNAVAILABLE,		/* pause the number longer, retry the row */
	WA_PAIR_RATE,		/* retry this row only, after >= 6 s */
	WA_LATER,		/* retry this row no sooner than 24 h */
	WA_TRANSIENT,		/* retry with backoff */
	WA_PERMANENT,		/* this row failed */
	WA_FATAL,		/* halt the campaign */
	WA_AMBIGUOUS,		/* may have been sent: unknown */
	WA_OUTAGE,		/* the API unreachable (refused, DNS, TLS,
				   a run of 5xx): retry, not an attempt */
	WA_UNSENT		/* never left this host (stopping): retry at
				   once, not an attempt */
};

/* The class of an answer: error.code (-1: none), else the HTTP status. */
enum wa_class wa_class_of(long code, long http);
/* The result's outcome: sent, retry, failed, unknown or halt. */
const char *wa_class_outcome(enum wa_class c);
const char *wa_class_name(enum wa_class c);
int64_t wa_class_min_delay_ms(enum wa_class c);
/* Full jitter: random(0, min(cap, base * 2^attempt)). */
int64_t wa_backoff_ms(int attempt, int64_t base, int64_t cap);

#endif
