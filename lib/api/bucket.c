/*
 * bucket.c: the per-number token bucket, kept as a GCRA ("generic cell
 * rate algorithm") in a file mapped by every process that sends from the
 * number. One 64-bit theoretical arrival time (TAT, CLOCK_MONOTONIC ns)
 * is the whole state: a token may go at time t when TAT - tau <= t, where
 * tau = (burst - 1) * interval, and taking it moves TAT to
 * max(TAT, t) + interval. Updates are compare-and-swap on the shared word,
 * so N processes together never exceed the rate and no lock can be left
 * held by a killed process. A pause moves TAT past its end: nothing goes
 * before it and nothing accumulates during it; the end is also kept apart
 * and checked, so that a rate or burst changed during the pause cannot
 * shorten it.
 *
 * The rate in force may be below the configured one: wa-send cuts it on
 * Meta's throughput errors, and it climbs back by steps (adaptive rate,
 * api/guard.c). Setting the rate sets both.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/sig.h"
#include "core/state.h"
#include "records/request.h"
#include "api/bucket.h"

#define MAGIC 0x77616275u	/* "wabu" */

struct state {
	uint32_t	magic;
	uint32_t	size;
	char		boot_id[40];	/* the clock counts from this boot */
	_Atomic int64_t	tat;
	_Atomic int64_t	interval;	/* ns per token, in force */
	_Atomic int64_t	base;		/* ns per token, as configured */
	_Atomic int64_t	changed;	/* when the rate was last adapted */
	_Atomic int64_t	burst;
	_Atomic int64_t	paused_until;
	_Atomic uint64_t passed;
	_Atomic uint64_t waited_ns;
	_Atomic uint64_t pauses;
};

struct wa_bucket {
	struct state	*s;
	int		 fd;
};

/* 100 ms worth of tokens, at least one. */
int64_t
wa_bucket_default_burst(double rate)
{
	return rate >= 10 ? (int64_t)(rate / 10) : 1;
}

static double
clamp_rate(double rate)
{
	if (!(rate >= WA_BUCKET_RATE_MIN))
		return WA_BUCKET_RATE_MIN;
	return rate > WA_BUCKET_RATE_MAX ? WA_BUCKET_RATE_MAX : rate;
}

/* The interval rounded up, so that rounding never makes it faster. */
static int64_t
interval_of(double rate)
{
	double ns = 1e9 / clamp_rate(rate);
	int64_t i = (int64_t)ns;

	return i < ns ? i + 1 : i;
}

static int64_t
burst_of(double rate, int64_t burst)
{
	if (burst <= 0)
		burst = wa_bucket_default_burst(clamp_rate(rate));
	return burst > WA_BUCKET_BURST_MAX ? WA_BUCKET_BURST_MAX : burst;
}

/*
 * Opens (creating if needed) the bucket of number. rate and burst apply
 * only to a new bucket (<= 0: the defaults, 70/s and 100 ms worth); an
 * existing one keeps its own, so starting one more pipeline never resets,
 * refills or speeds it up. Returns NULL after a message.
 */
struct wa_bucket *
wa_bucket_open(const char *number, double rate, int64_t burst)
{
	struct wa_bucket *b;
	char boot[40];
	struct state *s;
	int fd, fresh;

	if (!wa_number_id_valid(number)) {
		wa_warn("'%s' is not a phone number id", number);
		return NULL;
	}
	if ((s = wa_state_map("bucket", number, sizeof *s, &fd)) == NULL)
		return NULL;
	wa_boot_id(boot, sizeof boot);
	fresh = s->magic != MAGIC || s->size != sizeof *s;
	if (fresh) {
		if (rate <= 0)
			rate = WA_BUCKET_RATE;
		memset(s, 0, sizeof *s);
		atomic_store(&s->interval, interval_of(rate));
		atomic_store(&s->base, interval_of(rate));
		atomic_store(&s->burst, burst_of(rate, burst));
		s->size = sizeof *s;
		s->magic = MAGIC;
	}
	if (fresh || strcmp(s->boot_id, boot) != 0) {
		/*
		 * New, or a clock from an earlier boot, which means nothing
		 * now. The bucket starts empty, as pv's does: one token now,
		 * then one an interval, and a burst only after a lull. What
		 * a full one would let go at once on top of the rate, right
		 * when every pipeline starts, is what Meta would see.
		 */
		atomic_store(&s->tat, wa_now_ns() + (atomic_load(&s->burst) -
		    1) * atomic_load(&s->interval));
		atomic_store(&s->paused_until, 0);
		memcpy(s->boot_id, boot, sizeof boot);
	}
	flock(fd, LOCK_UN);
	b = wa_alloc(sizeof *b);
	b->s = s;
	b->fd = fd;
	return b;
}

/*
 * The bucket of number if some process has made one, else NULL, quietly:
 * for a sender that only honours and records pauses (wa-send), which must
 * not make the bucket at the default rate before wa-throttle makes it at
 * its own.
 */
struct wa_bucket *
wa_bucket_find(const char *number)
{
	struct wa_buf path = { 0 };
	int there;

	if (!wa_number_id_valid(number))
		return NULL;
	wa_buf_printf(&path, "%s/bucket-%s", wa_state_dir(), number);
	there = access(path.s, F_OK) == 0;
	wa_buf_free(&path);
	return there ? wa_bucket_open(number, 0, 0) : NULL;
}

/* Takes a token: returns 0, or the ns to wait before asking again. */
int64_t
wa_bucket_take(struct wa_bucket *b)
{
	struct state *s = b->s;
	int64_t now, tat, next, interval, tau, paused;

	for (;;) {
		now = wa_now_ns();
		paused = atomic_load(&s->paused_until);
		if (paused > now)
			return paused - now;
		tat = atomic_load(&s->tat);
		interval = atomic_load(&s->interval);
		tau = (atomic_load(&s->burst) - 1) * interval;
		if (tat - tau > now)
			return tat - tau - now;
		next = (tat > now ? tat : now) + interval;
		if (atomic_compare_exchange_weak(&s->tat, &tat, next)) {
			atomic_fetch_add(&s->passed, 1);
			return 0;
		}
	}
}

/* When the pause in force ends (CLOCK_MONOTONIC ns); 0 if none ever. */
int64_t
wa_bucket_paused_until(struct wa_bucket *b)
{
	return atomic_load(&b->s->paused_until);
}

/* Adds ns to the time this number's senders have spent waiting. */
void
wa_bucket_waited(struct wa_bucket *b, int64_t ns)
{
	atomic_fetch_add(&b->s->waited_ns, ns);
}

/*
 * Gives no token for ms from now, and none accumulated after: the first
 * goes when the pause ends, the next one interval later. A pause never
 * shortens one already longer.
 */
void
wa_bucket_pause(struct wa_bucket *b, int64_t ms)
{
	struct state *s = b->s;
	int64_t until, tat, want, p;

	if (ms > WA_BUCKET_PAUSE_MAX)
		ms = WA_BUCKET_PAUSE_MAX;
	if (ms <= 0)
		return;
	until = wa_now_ns() + ms * 1000000;
	/* The end first, so that no take can slip in before TAT moves. */
	p = atomic_load(&s->paused_until);
	while (p < until && !atomic_compare_exchange_weak(&s->paused_until,
	    &p, until))
		;
	tat = atomic_load(&s->tat);
	do {
		want = until + (atomic_load(&s->burst) - 1) *
		    atomic_load(&s->interval);
		if (tat >= want)
			break;
	} while (!atomic_compare_exchange_weak(&s->tat, &tat, want));
	atomic_fetch_add(&s->pauses, 1);
}

/*
 * Changes the rate for every process, at once, and the burst: to burst
 * if > 0, else to 100 ms worth of the new rate (a burst kept from a much
 * higher rate would let seconds' worth of messages go at once).
 */
void
wa_bucket_set_rate(struct wa_bucket *b, double rate, int64_t burst)
{
	atomic_store(&b->s->burst, burst_of(rate, burst));
	atomic_store(&b->s->base, interval_of(rate));
	atomic_store(&b->s->interval, interval_of(rate));
	atomic_store(&b->s->changed, 0);
}

/*
 * Adaptive rate, for every process at once. A cut multiplies the rate in
 * force by factor (< 1), down to WA_BUCKET_ADAPT_MIN or the configured
 * rate if that is lower; the burst stays. Returns the new rate, or 0 if
 * it was at the floor already.
 */
double
wa_bucket_cut(struct wa_bucket *b, double factor)
{
	struct state *s = b->s;
	int64_t i = atomic_load(&s->interval), want, floor;

	floor = interval_of(WA_BUCKET_ADAPT_MIN);
	if (atomic_load(&s->base) > floor)
		floor = atomic_load(&s->base);
	do {
		want = interval_of(1e9 / i * factor);
		if (want > floor)
			want = floor;
		if (want <= i)
			return 0;
	} while (!atomic_compare_exchange_weak(&s->interval, &i, want));
	atomic_store(&s->changed, wa_now_ns());
	return 1e9 / want;
}

/*
 * The other half: once every ns since the last change, the rate in force
 * climbs by step per second, up to the configured rate. One process
 * makes each step (the one that moves the time of the last change).
 * Returns the new rate, or 0 when it was not this caller's to change.
 */
double
wa_bucket_climb(struct wa_bucket *b, double step, int64_t ns)
{
	struct state *s = b->s;
	int64_t now = wa_now_ns(), base = atomic_load(&s->base), i, want;
	int64_t last = atomic_load(&s->changed);

	i = atomic_load(&s->interval);
	if (i <= base || now - last < ns ||
	    !atomic_compare_exchange_strong(&s->changed, &last, now))
		return 0;
	do {
		want = interval_of(1e9 / i + step);
		if (want < base)
			want = base;
		if (want >= i)
			return 0;
	} while (!atomic_compare_exchange_weak(&s->interval, &i, want));
	return 1e9 / want;
}

/* The rate in force, tokens per second, and the burst: cheap. */
double
wa_bucket_rate(struct wa_bucket *b, int64_t *burst)
{
	*burst = atomic_load(&b->s->burst);
	return 1e9 / atomic_load(&b->s->interval);
}

void
wa_bucket_stats(struct wa_bucket *b, struct wa_bucket_stats *st)
{
	int64_t left = atomic_load(&b->s->paused_until) - wa_now_ns();

	st->rate = 1e9 / atomic_load(&b->s->interval);
	st->base = 1e9 / atomic_load(&b->s->base);
	st->burst = atomic_load(&b->s->burst);
	st->paused_ms = left > 0 ? (left + 999999) / 1000000 : 0;
	st->passed = atomic_load(&b->s->passed);
	st->waited_ns = atomic_load(&b->s->waited_ns);
	st->pauses = atomic_load(&b->s->pauses);
	st->reserve = 0;
	st->share = 1;
	snprintf(st->drawing, sizeof st->drawing, "-");
}

void
wa_bucket_close(struct wa_bucket *b)
{
	if (b == NULL)
		return;
	munmap(b->s, sizeof *b->s);
	close(b->fd);
	free(b);
}
