/*
 * bucket.c: the per-number token bucket, kept as a GCRA ("generic cell
 * rate algorithm") in a file mapped by every process that sends from the
 * number. One 64-bit theoretical arrival time (TAT, CLOCK_MONOTONIC ns)
 * is the whole state: a token may go at time t when TAT - tau <= t, where
 * tau = (burst - 1) * interval, and taking it moves TAT to
 * max(TAT, t) + interval. Updates are compare-and-swap on the shared word,
 * so N processes together never exceed the rate and no lock can be left
 * held by a killed process. A pause moves TAT past its end: nothing goes
 * before it and nothing accumulates during it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wa.h"
#include "wa_bucket.h"

#define MAGIC 0x77616275u	/* "wabu" */

struct state {
	uint32_t	magic;
	uint32_t	size;
	char		boot_id[40];	/* the clock counts from this boot */
	_Atomic int64_t	tat;
	_Atomic int64_t	interval;	/* ns per token */
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

static char dir[4096];

/* WA_STATE_DIR, else $XDG_RUNTIME_DIR/wapipe, else /tmp/wapipe-UID. */
const char *
wa_bucket_dir(void)
{
	const char *env = getenv("WA_STATE_DIR");
	const char *run = getenv("XDG_RUNTIME_DIR");

	if (env != NULL && *env)
		snprintf(dir, sizeof dir, "%s", env);
	else if (run != NULL && *run)
		snprintf(dir, sizeof dir, "%s/wapipe", run);
	else
		snprintf(dir, sizeof dir, "/tmp/wapipe-%ld", (long)getuid());
	return dir;
}

static void
boot_id(char *id, size_t n)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

	memset(id, 0, n);
	if (f != NULL) {
		if (fgets(id, n, f) == NULL)
			id[0] = '\0';
		fclose(f);
	}
}

static int
valid_number(const char *s)
{
	size_t n = strspn(s, "0123456789abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ_-");

	return n > 0 && n <= 64 && s[n] == '\0';
}

/*
 * Opens (creating if needed) the bucket of number. rate and burst apply
 * only to a new bucket (<= 0: the defaults); an existing one keeps its
 * own, so starting one more pipeline never resets or refills it. Returns
 * NULL after a message.
 */
struct wa_bucket *
wa_bucket_open(const char *number, double rate, int64_t burst)
{
	struct wa_bucket *b;
	struct wa_buf path = { 0 };
	char boot[40];
	struct state *s;
	int fd;

	if (!valid_number(number)) {
		wa_warn("'%s' is not a phone number id", number);
		return NULL;
	}
	if (mkdir(wa_bucket_dir(), 0700) < 0 && errno != EEXIST) {
		wa_warn("mkdir %s:", dir);
		return NULL;
	}
	wa_buf_printf(&path, "%s/bucket-%s", dir, number);
	fd = open(path.s, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || flock(fd, LOCK_EX) < 0 ||
	    ftruncate(fd, sizeof *s) < 0) {
		wa_warn("open %s:", path.s);
		wa_buf_free(&path);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (s == MAP_FAILED) {
		wa_warn("mmap %s:", path.s);
		wa_buf_free(&path);
		close(fd);
		return NULL;
	}
	boot_id(boot, sizeof boot);
	if (s->magic != MAGIC || s->size != sizeof *s) {
		if (rate <= 0)
			rate = WA_BUCKET_RATE;
		if (burst <= 0)
			burst = rate >= 10 ? (int64_t)(rate / 10) : 1;
		memset(s, 0, sizeof *s);
		atomic_store(&s->interval, (int64_t)(1e9 / rate));
		atomic_store(&s->burst, burst);
		s->size = sizeof *s;
		s->magic = MAGIC;
	}
	if (strcmp(s->boot_id, boot) != 0) {
		/* A clock from an earlier boot means nothing now. */
		atomic_store(&s->tat, 0);
		atomic_store(&s->paused_until, 0);
		memcpy(s->boot_id, boot, sizeof boot);
	}
	flock(fd, LOCK_UN);
	wa_buf_free(&path);
	b = wa_alloc(sizeof *b);
	b->s = s;
	b->fd = fd;
	return b;
}

/* Takes a token: returns 0, or the ns to wait before asking again. */
int64_t
wa_bucket_take(struct wa_bucket *b)
{
	struct state *s = b->s;
	int64_t now, tat, next, interval, tau;

	for (;;) {
		now = wa_now_ns();
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
	int64_t until = wa_now_ns() + ms * 1000000, tat, want, p;

	tat = atomic_load(&s->tat);
	do {
		want = until + (atomic_load(&s->burst) - 1) *
		    atomic_load(&s->interval);
		if (tat >= want)
			break;
	} while (!atomic_compare_exchange_weak(&s->tat, &tat, want));
	p = atomic_load(&s->paused_until);
	while (p < until && !atomic_compare_exchange_weak(&s->paused_until,
	    &p, until))
		;
	atomic_fetch_add(&s->pauses, 1);
}

/* Changes the rate (and burst, if > 0) for every process, at once. */
void
wa_bucket_set_rate(struct wa_bucket *b, double rate, int64_t burst)
{
	atomic_store(&b->s->interval, (int64_t)(1e9 / rate));
	if (burst > 0)
		atomic_store(&b->s->burst, burst);
}

void
wa_bucket_stats(struct wa_bucket *b, struct wa_bucket_stats *st)
{
	int64_t left = atomic_load(&b->s->paused_until) - wa_now_ns();

	st->rate = 1e9 / atomic_load(&b->s->interval);
	st->burst = atomic_load(&b->s->burst);
	st->paused_ms = left > 0 ? left / 1000000 : 0;
	st->passed = atomic_load(&b->s->passed);
	st->waited_ns = atomic_load(&b->s->waited_ns);
	st->pauses = atomic_load(&b->s->pauses);
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

/* pause(number, ms) for callers that hold no bucket open. */
int
wa_bucket_pause_number(const char *number, int64_t ms)
{
	struct wa_bucket *b = wa_bucket_open(number, 0, 0);

	if (b == NULL)
		return -1;
	wa_bucket_pause(b, ms);
	wa_bucket_close(b);
	return 0;
}
