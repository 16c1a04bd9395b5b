/*
 * sig.c: signals and time. SIGTERM and SIGINT set wa_stopping: a filter
 * stops taking input, finishes and flushes what it holds, and exits; a
 * second one makes it 2, and the program stops at once. The
 * signals stay blocked except while the program waits (wa_wait,
 * wa_sleep_ms), so a signal can never slip in between the check of
 * wa_stopping and the wait that would then block for ever. Work a signal
 * asks for that a handler cannot do (SIGUSR2: write the metrics file) is
 * done right after the wait it came in (wa_signal_then). A filter
 * watching its output (wa_watch_reader) learns in any wait that its
 * reader has gone, not only at its next write.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/err.h"
#include "core/sig.h"

volatile sig_atomic_t wa_stopping;
static volatile sig_atomic_t stopsig;
static sigset_t waitmask;	/* the mask while waiting */
static int caught;

/* Work a signal asks for, done after the wait it cut short. */
#define NLATER 4
static struct {
	int	 sig;
	void	 (*fn)(void);
} later[NLATER];
static volatile sig_atomic_t due[NLATER];
static int nlater;

/* The output whose reader's going ends the program, or -1. */
#define WATCH_MAX 7
static int watched = -1;

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

static void
onlater(int sig)
{
	int i;

	for (i = 0; i < nlater; i++)
		if (later[i].sig == sig)
			due[i] = 1;
}

/*
 * Catches sig; fn runs after the wait the signal came in, in the
 * program's own flow rather than in a handler, so it may do what a
 * handler may not (allocate, write files).
 */
void
wa_signal_then(int sig, void (*fn)(void))
{
	int i;

	for (i = 0; i < nlater && later[i].sig != sig; i++)
		;
	if (i == NLATER)
		return;
	later[i].fn = fn;
	if (i == nlater) {
		later[i].sig = sig;
		nlater++;
	}
	wa_signal(sig, onlater);
}

/* Runs the work the signals caught during a wait asked for. */
static void
run_later(void)
{
	int i, saved = errno;

	for (i = 0; i < nlater; i++)
		if (due[i]) {
			due[i] = 0;
			later[i].fn();
		}
	errno = saved;
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
 * Watches fd, the pipe (or socket) the program writes its lines to: once
 * its reader has gone, the next wait ends the program as a write there
 * would (74). A filter that waits for input with nothing to write, or
 * for a token, would else never learn it, and a pipeline whose last
 * stage was killed would never end. Anything else is not watched.
 */
void
wa_watch_reader(int fd)
{
	struct stat st;

	if (fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) ||
	    S_ISSOCK(st.st_mode)))
		watched = fd;
}

/* poll(2) with the caught signals let in; timeout in ms, -1 for ever. */
int
wa_wait(struct pollfd *fds, int n, int timeout)
{
	struct pollfd all[WATCH_MAX + 1], *p = fds;
	struct timespec ts, *tsp = NULL;
	int r;

	if (timeout >= 0) {
		ts.tv_sec = timeout / 1000;
		ts.tv_nsec = (long)(timeout % 1000) * 1000000;
		tsp = &ts;
	}
	if (watched >= 0 && n <= WATCH_MAX) {
		if (n > 0)
			memcpy(all, fds, n * sizeof *fds);
		all[n] = (struct pollfd){ watched, 0, 0 };
		p = all;
	}
	r = ppoll(p, n + (p == all), tsp, caught ? &waitmask : NULL);
	if (p == all && r > 0 && all[n].revents) {
		if (all[n].revents & (POLLERR | POLLHUP))
			wa_die(EX_IOERR, "write to stdout: "
			    "the reader has gone");
		watched = -1;	/* closed (POLLNVAL): nothing to watch */
		r--;
	}
	if (p == all && n > 0)
		memcpy(fds, all, n * sizeof *fds);
	run_later();
	return r;
}

/* Sleeps ms; returns -1 if a signal cut the sleep short. */
int
wa_sleep_ms(int64_t ms)
{
	if (ms <= 0)
		return 0;
	return wa_wait(NULL, 0, ms > INT_MAX ? INT_MAX : (int)ms) < 0 ?
	    -1 : 0;
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
