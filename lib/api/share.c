/*
 * share.c: a number's fair share on this host. The file share-NUMBER in
 * the state directory, mapped by every process that draws tokens from the
 * number, holds the reserve (the part of the rate kept back for live
 * conversations, in millionths) and one slot per drawing process: its
 * pid, its weight and when it last wanted a token (CLOCK_MONOTONIC ns).
 * A process's share of the rate is (1 - reserve) * its weight / the sum
 * of the weights of the processes that wanted a token within the last
 * WA_SHARE_ACTIVE_NS: one that has nothing to send drops out within half
 * a second, and the others take its part (work-conserving). While an
 * urgent process draws, the others' share is nothing: the urgent ones
 * share the rate between them. The slots
 * are claimed by compare-and-swap, so a killed process holds none for
 * good: its slot stops counting at once, and is taken again once its pid
 * is gone. Computing the share scans the slots at most once every
 * RECOUNT_NS; between, noting the wish is one store.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/sig.h"
#include "core/state.h"
#include "records/request.h"
#include "api/share.h"

#define MAGIC 0x77617368u	/* "wash" */
#define NSLOT 128
#define RECOUNT_NS 10000000LL	/* 10 ms */
#define STALE_NS 5000000000LL	/* a dead pid's slot is taken after 5 s */
#define URGENT (1LL << 32)	/* in a slot's weight: an urgent process */

struct slot {
	_Alignas(64) _Atomic int64_t pid;	/* 0: free */
	_Atomic int64_t	weight;		/* with URGENT added if it is */
	_Atomic int64_t	last;		/* when it last wanted a token */
};

struct state {
	uint32_t	magic;
	uint32_t	size;
	char		boot_id[40];
	_Atomic int64_t	reserve;	/* millionths of the rate kept back */
	struct slot	slots[NSLOT];
};

struct wa_share {
	struct state	*s;
	int		 fd;
	int64_t		 pid;
	int64_t		 weight;	/* URGENT added if it is */
	int		 slot;		/* -1: none (yet) */
	int		 full;		/* said that no slot was free */
	int64_t		 counted;	/* when frac was last computed */
	double		 frac;
};

static int
dead(int64_t pid)
{
	return kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

/* Takes a free slot, or one whose process is gone: 0, or -1 if none. */
static int
claim(struct wa_share *sh, int64_t now)
{
	struct slot *sl;
	int64_t p;
	int i;

	for (i = 0; i < NSLOT; i++) {
		sl = &sh->s->slots[i];
		p = atomic_load(&sl->pid);
		if (p != 0 && (now - atomic_load(&sl->last) < STALE_NS ||
		    !dead(p)))
			continue;
		if (!atomic_compare_exchange_strong(&sl->pid, &p, sh->pid))
			continue;
		atomic_store(&sl->weight, sh->weight);
		atomic_store(&sl->last, now);
		sh->slot = i;
		return 0;
	}
	if (!sh->full++)
		wa_warn("%d processes share the number already: this one "
		    "draws unweighted", NSLOT);
	return -1;
}

/*
 * Opens (creating if needed) the share file of number; with weight > 0
 * this process draws with that weight. NULL after a message.
 */
struct wa_share *
wa_share_open(const char *number, int weight, int urgent)
{
	struct wa_share *sh;
	char boot[40];
	struct state *s;
	int fd;

	if ((s = wa_state_map("share", number, sizeof *s, &fd)) == NULL)
		return NULL;
	wa_boot_id(boot, sizeof boot);
	if (s->magic != MAGIC || s->size != sizeof *s ||
	    strcmp(s->boot_id, boot) != 0) {
		/* New, or from an earlier boot: its times mean nothing. */
		memset(s, 0, sizeof *s);
		memcpy(s->boot_id, boot, sizeof boot);
		s->size = sizeof *s;
		s->magic = MAGIC;
	}
	sh = wa_alloc(sizeof *sh);
	sh->s = s;
	sh->fd = fd;
	sh->pid = getpid();
	sh->weight = weight + (urgent && weight > 0 ? URGENT : 0);
	sh->slot = -1;
	sh->frac = 1;
	if (weight > 0)
		claim(sh, wa_now_ns());
	flock(fd, LOCK_UN);
	return sh;
}

static double
reserve_of(struct state *s)
{
	return atomic_load(&s->reserve) / 1e6;
}

/* The sums of the weights of the urgent and other processes drawing. */
static void
drawing(struct state *s, int64_t now, int64_t *urgent, int64_t *normal)
{
	struct slot *sl;
	int64_t l, w;
	int i;

	*urgent = *normal = 0;
	for (i = 0; i < NSLOT; i++) {
		sl = &s->slots[i];
		l = atomic_load(&sl->last);
		if (now - l >= WA_SHARE_ACTIVE_NS || now < l ||
		    atomic_load(&sl->pid) == 0)
			continue;
		w = atomic_load(&sl->weight);
		*(w >= URGENT ? urgent : normal) += w % URGENT;
	}
}

/*
 * Notes that this process wants a token at now, and returns its part of
 * the number's rate: (1 - reserve) * weight / the weights drawing (of
 * the urgent ones only, while one draws: the others' part is then 0). A
 * process without a slot (all taken) counts only the reserve.
 */
double
wa_share_now(struct wa_share *sh, int64_t now)
{
	struct slot *sl;
	int64_t urgent, normal, w = sh->weight % URGENT, sum;

	if (sh->weight <= 0)
		return 1 - reserve_of(sh->s);
	if (sh->slot >= 0) {
		sl = &sh->s->slots[sh->slot];
		if (atomic_load(&sl->pid) != sh->pid)
			sh->slot = -1;	/* taken while idle: claim again */
		else
			atomic_store(&sl->last, now);
	}
	if (now - sh->counted < RECOUNT_NS && sh->counted != 0)
		return sh->frac;
	sh->counted = now;
	if (sh->slot < 0 && claim(sh, now) < 0)
		return sh->frac = 1 - reserve_of(sh->s);
	drawing(sh->s, now, &urgent, &normal);
	if (urgent > 0 && sh->weight < URGENT)
		return sh->frac = 0;
	sum = urgent > 0 ? urgent : normal;
	sh->frac = (1 - reserve_of(sh->s)) * w / (sum > w ? sum : w);
	return sh->frac;
}

double
wa_share_reserve(struct wa_share *sh)
{
	return reserve_of(sh->s);
}

/* Keeps reserve (0 to WA_SHARE_RESERVE_MAX) of the rate back, at once. */
void
wa_share_set_reserve(struct wa_share *sh, double reserve)
{
	if (reserve < 0)
		reserve = 0;
	if (reserve > WA_SHARE_RESERVE_MAX)
		reserve = WA_SHARE_RESERVE_MAX;
	atomic_store(&sh->s->reserve, (int64_t)(reserve * 1e6 + 0.5));
	sh->counted = 0;
}

void
wa_share_drawing(struct wa_share *sh, char *buf, size_t n)
{
	int64_t now = wa_now_ns(), l, w;
	struct slot *sl;
	size_t len = 0;
	int i;

	snprintf(buf, n, "-");
	for (i = 0; i < NSLOT && len < n; i++) {
		sl = &sh->s->slots[i];
		l = atomic_load(&sl->last);
		if (now - l >= WA_SHARE_ACTIVE_NS || now < l ||
		    atomic_load(&sl->pid) == 0)
			continue;
		w = atomic_load(&sl->weight);
		len += snprintf(buf + len, n - len, "%s%s%lld", len ? "+" : "",
		    w >= URGENT ? "u" : "", (long long)(w % URGENT));
	}
}

/* Gives the slot back at once: the others take the whole rate. */
void
wa_share_close(struct wa_share *sh)
{
	struct slot *sl;
	int64_t p;

	if (sh == NULL)
		return;
	if (sh->slot >= 0) {
		sl = &sh->s->slots[sh->slot];
		p = sh->pid;
		atomic_store(&sl->last, 0);
		atomic_compare_exchange_strong(&sl->pid, &p, 0);
	}
	munmap(sh->s, sizeof *sh->s);
	close(sh->fd);
	free(sh);
}
