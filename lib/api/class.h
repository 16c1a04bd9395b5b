/*
 * api/class.h: the Cloud API's error codes sorted into what to do: one
 * table (DESIGN.md "Error classes"), read by wa-send for its answers, by
 * wa-record for the retry delay and by wa-status-ingest for the errors
 * of failed statuses; and the retry delay's backoff.
 */
#ifndef WA_API_CLASS_H
#define WA_API_CLASS_H

#include <stddef.h>
#include <stdint.h>

enum wa_class {
	WA_SENT,		/* accepted */
	WA_THROUGHPUT,		/* pause the number, retry the row */
	WA_UNAVAILABLE,		/* pause the number longer, retry the row */
	WA_PAIR_RATE,		/* retry this row only, after >= 6 s */
	WA_LATER,		/* retry this row no sooner than its delay */
	WA_TRANSIENT,		/* retry with backoff */
	WA_PERMANENT,		/* this row failed */
	WA_FATAL,		/* halt the campaign */
	WA_AMBIGUOUS,		/* may have been sent: unknown */
	WA_OUTAGE,		/* the API unreachable (refused, DNS, TLS,
				   a run of 5xx): retry, not an attempt */
	WA_UNSENT		/* never left this host (stopping): retry at
				   once, not an attempt */
};

/*
 * One row of the table: error.code lo to hi, with error_subcode subcode
 * (-1: any), its class, the least delay before the row is tried again
 * (for class unavailable also how long the number pauses), and what it
 * means, in a few words (wa-send(1) prints the table).
 */
struct wa_error {
	int64_t		 lo, hi;
	int64_t		 subcode;
	enum wa_class	 class;
	int64_t		 delay_ms;
	const char	*meaning;
};

/* The table, by code, a subcode's row before the code's other one. */
extern const struct wa_error wa_errors[];
extern const size_t wa_nerrors;

/* The row of code and subcode (-1: none), or NULL. */
const struct wa_error *wa_error_find(int64_t code, int64_t subcode);
/*
 * The class of an answer: error.code and error_subcode (-1: none), else
 * the HTTP status (0: none, as for a webhook's error).
 */
enum wa_class wa_class_of(int64_t code, int64_t subcode, long http);
/* The least delay (ms) before a row that met this error is tried again. */
int64_t wa_error_delay_ms(int64_t code, int64_t subcode);
/* The result's outcome: sent, retry, failed, unknown or halt. */
const char *wa_class_outcome(enum wa_class c);
const char *wa_class_name(enum wa_class c);
/*
 * What an error of class c stops: "campaign" (a halt), "number" (a
 * pause of its bucket) or "recipient" (that row alone); NULL for the
 * classes that are no error of the API's.
 */
const char *wa_class_stops(enum wa_class c);
/* Full jitter: random(0, min(cap, base * 2^attempt)). */
int64_t wa_backoff_ms(int attempt, int64_t base, int64_t cap);

#endif
