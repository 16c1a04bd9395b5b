/*
 * later.c: holds HTTP answers back until their time (later.h). One
 * thread sleeps until the earliest due time and resumes the connections
 * that are due; a held connection costs its socket and a heap slot, so
 * hundreds or thousands can wait at once. Before the daemon stops,
 * wa_later_drain resumes every connection still held (MHD cannot stop
 * with suspended ones), marked WA_LATER_STOP.
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "core/err.h"
#include "core/sig.h"
#include "later.h"

struct wa_later {
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	pthread_t	 thread;
	struct wa_heap	 heap;
	int		 stopping;
};

static void *
run(void *arg)
{
	struct wa_later *l = arg;
	struct wa_later_item *it;
	struct timespec ts;

	pthread_mutex_lock(&l->mu);
	while (!l->stopping) {
		it = (struct wa_later_item *)wa_heap_top(&l->heap);
		if (it != NULL && it->h.due <= wa_now_ns()) {
			/* Popped, it is ours alone: resume outside the lock. */
			wa_heap_pop(&l->heap);
			it->woke = WA_LATER_DUE;
			pthread_mutex_unlock(&l->mu);
			MHD_resume_connection(it->conn);
			pthread_mutex_lock(&l->mu);
		} else if (it == NULL || it->h.due == INT64_MAX) {
			pthread_cond_wait(&l->cv, &l->mu);
		} else {
			ts.tv_sec = it->h.due / 1000000000;
			ts.tv_nsec = it->h.due % 1000000000;
			pthread_cond_timedwait(&l->cv, &l->mu, &ts);
		}
	}
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

struct wa_later *
wa_later_start(void)
{
	struct wa_later *l = wa_alloc(sizeof *l);
	pthread_condattr_t ca;

	pthread_mutex_init(&l->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&l->thread, NULL, run, l) != 0)
		wa_die(EX_OSERR, "cannot start a thread");
	return l;
}

/*
 * From an access handler: suspends conn until due (wa_now_ns time;
 * INT64_MAX: until the server stops). Returns -1, holding nothing, when
 * the server is already stopping.
 */
int
wa_later_hold(struct wa_later *l, struct wa_later_item *it,
    struct MHD_Connection *conn, int64_t due)
{
	struct wa_heap_item *top;

	pthread_mutex_lock(&l->mu);
	if (l->stopping) {
		pthread_mutex_unlock(&l->mu);
		return -1;
	}
	it->h.due = due;
	it->conn = conn;
	it->woke = WA_LATER_HELD;
	wa_heap_push(&l->heap, &it->h);
	/* Suspended before the timer can see it, so never resumed first. */
	MHD_suspend_connection(conn);
	top = wa_heap_top(&l->heap);
	if (top == &it->h)
		pthread_cond_signal(&l->cv);
	pthread_mutex_unlock(&l->mu);
	return 0;
}

/* Stops the timer and resumes every held connection as WA_LATER_STOP. */
void
wa_later_drain(void *arg)
{
	struct wa_later *l = arg;
	struct wa_later_item *it;

	pthread_mutex_lock(&l->mu);
	l->stopping = 1;
	pthread_cond_signal(&l->cv);
	pthread_mutex_unlock(&l->mu);
	pthread_join(l->thread, NULL);
	while ((it = (struct wa_later_item *)wa_heap_pop(&l->heap)) != NULL) {
		it->woke = WA_LATER_STOP;
		MHD_resume_connection(it->conn);
	}
}

/* After wa_later_drain and MHD_stop_daemon. */
void
wa_later_free(struct wa_later *l)
{
	pthread_mutex_destroy(&l->mu);
	pthread_cond_destroy(&l->cv);
	wa_heap_free(&l->heap);
	free(l);
}
