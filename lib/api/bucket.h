/*
 * api/bucket.h: one token bucket per business phone number, shared by every
 * process on the host that sends from it (a small mmap'ed file per number
 * in the state directory, core/state.h).
 */
#ifndef WA_API_BUCKET_H
#define WA_API_BUCKET_H

#include <stdint.h>

#define WA_BUCKET_RATE 70	/* per second: under Meta's 80, on purpose */
#define WA_BUCKET_RATE_MIN 0.001
#define WA_BUCKET_RATE_MAX 1000000.0
#define WA_BUCKET_BURST_MAX 1000000
#define WA_BUCKET_ADAPT_MIN 1.0	/* a cut goes no lower */
#define WA_BUCKET_PAUSE_MAX 2592000000LL	/* ms: 30 days */

struct wa_bucket;
struct wa_bucket_stats {
	double		rate;		/* tokens per second, in force */
	double		base;		/* tokens per second, configured */
	int64_t		burst;		/* tokens that may go at once */
	int64_t		paused_ms;	/* pause left, 0 when none */
	uint64_t	passed;		/* tokens taken, by every process */
	uint64_t	waited_ns;	/* time spent waiting, every process */
	uint64_t	pauses;		/* pauses asked for */
	/* Filled by pg/lease.h, not here: */
	double		reserve;	/* the part of rate kept back */
	double		share;		/* this process's part of rate */
	char		drawing[48];	/* weights drawing now: "1+3", "-" */
};

int64_t wa_bucket_default_burst(double rate);
/* The bucket of number, made with rate and burst (0: default) if new. */
struct wa_bucket *wa_bucket_open(const char *number, double rate,
    int64_t burst);
/* The bucket of number if some process made it, else NULL. */
struct wa_bucket *wa_bucket_find(const char *number);
/* 0 when a token was taken, else ns until one may be. */
int64_t wa_bucket_take(struct wa_bucket *b);
int64_t wa_bucket_paused_until(struct wa_bucket *b);
void wa_bucket_waited(struct wa_bucket *b, int64_t ns);
void wa_bucket_pause(struct wa_bucket *b, int64_t ms);
void wa_bucket_set_rate(struct wa_bucket *b, double rate, int64_t burst);
/* Adaptive rate: the new rate, or 0 when unchanged. */
double wa_bucket_cut(struct wa_bucket *b, double factor);
double wa_bucket_climb(struct wa_bucket *b, double step, int64_t ns);
double wa_bucket_rate(struct wa_bucket *b, int64_t *burst);
void wa_bucket_stats(struct wa_bucket *b, struct wa_bucket_stats *st);
void wa_bucket_close(struct wa_bucket *b);

#endif
