/*
 * sig.c: signals and time. SIGTERM and SIGINT set wa_stopping: a filter
 * stops taking input, finishes and flushes what it holds, and exits. The
 * signals stay blocked except while the program waits (wa_wait,
 * wa_sleep_ms), so a signal can never slip in between the check of
 * wa_stopping and the wait that would then block for ever.
 */
#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "core/sig.h"

volatile sig_atomic_t wa_stopping;
static volatile sig_atomic_t stopsig;
static sigset_t waitmask;	/* the mask while waiting */
static int caught;

/* The first stop signal asks to drain, the second to stop at once. */
static void
onstop(int sig)
{
	stopsig = sig;
	if (wa_stopping < 2)
		wa_stopping++;
}

/*
 * Ends the program by the last stop signal, its default action restored,
 * so that the shell sees a death by that signal (a second Ctrl-C).
 */
void
wa_signal_exit(void)
{
	int sig = stopsig ? stopsig : SIGTERM;
	sigset_t set;

	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	raise(sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	_exit(128 + sig);
}

/* Catches sig with fn, delivered only while waiting. */
void
wa_signal(int sig, void (*fn)(int))
{
	struct sigaction sa = { 0 };
	sigset_t set;

	if (!caught) {
		sigprocmask(SIG_BLOCK, NULL, &waitmask);
		caught = 1;
	}
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sigdelset(&waitmask, sig);
}

void
wa_signals(void)
{
	struct sigaction ign = { .sa_handler = SIG_IGN };

	/* A closed reader shows up as EPIPE from write. */
	sigaction(SIGPIPE, &ign, NULL);
	wa_signal(SIGTERM, onstop);
	wa_signal(SIGINT, onstop);
}

/*
 * Lets the caught signals in (on != 0) around a wait that cannot take a
 * signal mask, such as curl_multi_poll; a signal then cuts the wait short
 * at worst by its timeout.
 */
void
wa_signals_allow(int on)
{
	static sigset_t saved;

	if (!caught)
		return;
	if (on)
		sigprocmask(SIG_SETMASK, &waitmask, &saved);
	else
		sigprocmask(SIG_SETMASK, &saved, NULL);
}

/* poll(2) with the caught signals let in; timeout in ms, -1 for ever. */
int
wa_wait(struct pollfd *fds, int n, int timeout)
{
	struct timespec ts, *tsp = NULL;

	if (timeout >= 0) {
		ts.tv_sec = timeout / 1000;
		ts.tv_nsec = (long)(timeout % 1000) * 1000000;
		tsp = &ts;
	}
	return ppoll(fds, n, tsp, caught ? &waitmask : NULL);
}

/* Sleeps ms; returns -1 if a signal cut the sleep short. */
int
wa_sleep_ms(int64_t ms)
{
	struct timespec ts;

	if (ms <= 0)
		return 0;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long)(ms % 1000) * 1000000;
	return ppoll(NULL, 0, &ts, caught ? &waitmask : NULL) < 0 ? -1 : 0;
}

int64_t
wa_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The wall clock, in ms since the epoch: for logs and payloads. */
int64_t
wa_unix_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
wa_now_ms(void)
{
	return wa_now_ns() / 1000000;
}
