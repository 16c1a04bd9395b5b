/*
 * round.c: one round of wa-campaign run: the pipeline wa-claim --once |
 * wa-throttle | wa-send | wa-record, or wa-reconcile alone, each stage a
 * child in a process group of its own, started from the directory
 * wa-campaign is in (else found in PATH) with what run adds to its argv,
 * waited for while every stop is passed on; on a terminal, the stages'
 * stderr relayed above the live line of progress. Reads the campaign's
 * weight, priority and breaker (Postgres) at each round; puts back to
 * pending the rows the round claimed and never sent (its wa-claim's
 * tag); returns the round's verdict from the stages' exit statuses.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/err.h"
#include "core/sig.h"
#include "records/claim.h"
#include "run.h"

static const char *const names[NSTAGE] = { "wa-claim", "wa-throttle",
    "wa-send", "wa-record", "wa-reconcile" };

static char rbuf[8192];
static size_t rlen;
static char weight[16] = "1";	/* the campaign's, at this round */
static char breaker[16];	/* its breaker, or "": wa-send's default */
static int urgent;
static long long tag;		/* its claims' tokens (wa-claim --tag) */

/*
 * The rows this round claimed that are still sending once wa-send has
 * ended by itself and wa-record has committed everything it read: never
 * sent (still in the pipes when wa-send gave up, as in an outage). Back
 * to pending, the attempt not counted, as wa-claim puts back its own.
 */
static const char *sweep_sql =
    "UPDATE campaign_recipients SET status = 'pending',"
    "  attempt = attempt - 1"
    " WHERE id IN (SELECT unnest(ids) FROM campaign_claims"
    "  WHERE campaign_id = $1 AND token BETWEEN $2 AND $3)"
    "  AND status = 'sending' AND claim_token BETWEEN $2 AND $3";

void
args_add(struct args *a, const char *s)
{
	a->v = wa_realloc(a->v, (a->n + 2) * sizeof *a->v);
	a->v[a->n++] = wa_strdup(s);
	a->v[a->n] = NULL;
}

static void
args_addn(struct args *a, const char *name, long long v)
{
	char s[32];

	args_add(a, name);
	snprintf(s, sizeof s, "%lld", v);
	args_add(a, s);
}

void
args_free(struct args *a)
{
	int i;

	for (i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	a->v = NULL;
	a->n = 0;
}

/* The argv of stage k, with what run itself sets first. */
static void
argv_of(int k, struct args *a)
{
	char path[PATH_MAX + 16];
	int i;

	if (*run.dir)
		snprintf(path, sizeof path, "%s/%s", run.dir, names[k]);
	else
		snprintf(path, sizeof path, "%s", names[k]);
	args_add(a, path);
	if (k == CLAIM || k == RECONCILE) {
		args_add(a, "-c");
		args_add(a, run.id);
	}
	if (k == CLAIM) {
		args_add(a, "--once");
		args_add(a, "-q");	/* run says what it waits for, once */
		args_addn(a, "--tag", tag);
	}
	if (k == CLAIM || k == RECORD || k == RECONCILE)
		args_addn(a, "--pg-timeout", run.pg_timeout);
	if (k == THROTTLE) {
		args_add(a, "--weight");
		args_add(a, weight);
		if (urgent)
			args_add(a, "--urgent");
	}
	if (k == SEND && *breaker) {
		args_add(a, "--breaker");
		args_add(a, breaker);
	}
	if (k == RECONCILE) {
		args_addn(a, "--stale-after", run.stale);
		args_addn(a, "--unknown-after", run.unknown);
	}
	for (i = 0; i < run.extra[k].n; i++)
		args_add(a, run.extra[k].v[i]);
}

void
round_onchld(int sig)
{
	(void)sig;
}

/* Starts stage k on in, out and err (-1: run's own) in process group *pg. */
static pid_t
spawn(int k, int in, int out, int err, pid_t *pg)
{
	struct args a = { 0 };
	sigset_t none;
	pid_t pid, parent = getpid();

	argv_of(k, &a);
	if ((pid = fork()) < 0)
		wa_die(EX_OSERR, "fork:");
	if (pid == 0) {
		setpgid(0, *pg);
		/* If run dies, even by kill -9, the stage drains. */
		prctl(PR_SET_PDEATHSIG, SIGINT);
		if (getppid() != parent)
			raise(SIGINT);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGCHLD, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* The token is wa-send's alone. */
		if (k != SEND)
			unsetenv("WA_TOKEN");
		if ((in >= 0 && dup2(in, STDIN_FILENO) < 0) ||
		    (out >= 0 && dup2(out, STDOUT_FILENO) < 0) ||
		    (err >= 0 && dup2(err, STDERR_FILENO) < 0))
			_exit(EX_OSERR);
		execv(a.v[0], a.v);
		fprintf(stderr, "wa-campaign: cannot run %s: %s\n", a.v[0],
		    strerror(errno));
		_exit(EX_SOFTWARE);
	}
	if (*pg == 0)
		*pg = pid;
	setpgid(pid, *pg);
	args_free(&a);
	return pid;
}

/* Clears the live line, if it is on the screen. */
void
live_clear(void)
{
	if (run.shown)
		fputs("\r\033[K", stderr);
	run.shown = 0;
}

/* Draws the live line (a terminal) or writes it as a message. */
void
live_draw(int live)
{
	struct snap s;
	char line[512];

	if (live && !run.tty)
		return;
	if (snap_take(run.db, run.id, &s, 0) != 0)
		return;
	meter_line(&run.meter, run.id, &s, line, sizeof line);
	if (run.tty) {
		fprintf(stderr, "\r\033[K%s", line);
		run.shown = 1;
	} else
		wa_warn("%s", line);
	fflush(stderr);
}

/* Relays the stages' whole lines of stderr above the live line. */
static void
relay_read(void)
{
	ssize_t n;
	char *nl;
	size_t k;

	while ((n = read(run.relay[0], rbuf + rlen, sizeof rbuf - rlen)) > 0) {
		rlen += n;
		nl = memrchr(rbuf, '\n', rlen);
		if (nl == NULL && rlen < sizeof rbuf)
			continue;
		k = nl != NULL ? (size_t)(nl - rbuf) + 1 : rlen;
		live_clear();
		fwrite(rbuf, 1, k, stderr);
		fflush(stderr);
		memmove(rbuf, rbuf + k, rlen - k);
		rlen -= k;
	}
}

/*
 * Waits for the n children of pids (process group pg), passing each stop
 * on to them, relaying their stderr; their statuses (128 + the signal
 * when one killed them) into st.
 */
static void
await(const pid_t *pids, int *st, int n, pid_t pg)
{
	struct pollfd pfd = { run.relay[0], POLLIN, 0 };
	int64_t drawn = 0;
	int left = n, fwd = 0, ws, i;
	pid_t p;

	for (;;) {
		while ((p = waitpid(-pg, &ws, WNOHANG)) > 0)
			for (i = 0; i < n; i++)
				if (pids[i] == p) {
					st[i] = WIFEXITED(ws) ?
					    WEXITSTATUS(ws) :
					    128 + WTERMSIG(ws);
					left--;
				}
		if (p < 0 && errno == ECHILD)
			left = 0;
		if (run.tty)
			relay_read();
		if (left == 0)
			break;
		while (fwd < wa_stopping) {
			kill(-pg, SIGINT);
			fwd++;
		}
		if (run.tty && wa_now_ms() - drawn >= 1000) {
			live_draw(1);
			drawn = wa_now_ms();
		}
		if (runlock_beat(run.db) < 0)
			run.lost = 1;
		wa_wait(&pfd, run.tty, run.tty ? 1000 : 5000);
	}
}

/* After a stop: 75, or death by the second signal. */
int
run_stopped(void)
{
	live_clear();
	if (wa_stopping > 1)
		wa_signal_exit();
	wa_warn("stopped: campaign %s is not completed; wa-campaign run %s "
	    "goes on from where it is", run.id, run.id);
	return EX_TEMPFAIL;
}

/* Runs wa-reconcile (its report on stderr); 0 or its failure. */
int
round_reconcile(void)
{
	pid_t pg = 0, pid;
	int st = 0;

	pid = spawn(RECONCILE, -1, run.tty ? run.relay[1] : STDERR_FILENO,
	    run.tty ? run.relay[1] : -1, &pg);
	await(&pid, &st, 1, pg);
	if (wa_stopping)
		return run_stopped();
	if (st != 0) {
		live_clear();
		wa_warn("wa-reconcile exited %d", st);
		return st == EX_UNAVAILABLE ? st : st > 127 ? EX_SOFTWARE : st;
	}
	return 0;
}

/* The campaign's weight, priority and breaker, as its row says now. */
static void
share(void)
{
	const char *p[] = { run.id };
	PGresult *res;

	res = wa_pg_need(run.db, NULL, "SELECT weight, priority = 'urgent',"
	    " coalesce(breaker::text, '') FROM campaigns WHERE id = $1", 1, p);
	if (PQntuples(res) == 1) {
		snprintf(weight, sizeof weight, "%s", PQgetvalue(res, 0, 0));
		urgent = *PQgetvalue(res, 0, 1) == 't';
		snprintf(breaker, sizeof breaker, "%s",
		    PQgetvalue(res, 0, 2));
	}
	PQclear(res);
}

/* After the round: its rows claimed and never sent, back to pending. */
static void
sweep(void)
{
	char first[24], last[24];
	const char *p[] = { run.id, first, last };
	PGresult *res;

	snprintf(first, sizeof first, "%lld", tag);
	snprintf(last, sizeof last, "%lld", tag + WA_CLAIM_TOKENS - 1);
	if ((res = wa_pg_run(run.db, NULL, sweep_sql, 3, p)) == NULL)
		return;
	if (atoll(PQcmdTuples(res)) > 0) {
		live_clear();
		wa_warn("put back %s rows claimed and never sent (still in "
		    "the pipes when wa-send ended)", PQcmdTuples(res));
	}
	PQclear(res);
}

/*
 * One pipeline to the end: -1 to go on, or run's exit status. The
 * verdict: a stop; a halt (wa-send 79); Postgres or the API down (any
 * 69); cancelled (wa-claim 77); any other failure, as the stage had it.
 */
int
round_run(void)
{
	int p[3][2], st[4] = { 0 }, null, err = run.tty ? run.relay[1] : -1, i;
	pid_t pids[4], pg = 0;
	struct snap s;
	PGresult *res;

	share();
	res = wa_pg_need(run.db, NULL, WA_CLAIM_TAG_SQL, 0, NULL);
	tag = atoll(PQgetvalue(res, 0, 0));
	PQclear(res);
	for (i = 0; i < 3; i++)
		if (pipe2(p[i], O_CLOEXEC) < 0)
			wa_die(EX_OSERR, "pipe:");
	if ((null = open("/dev/null", O_WRONLY | O_CLOEXEC)) < 0)
		wa_die(EX_OSERR, "open /dev/null:");
	pids[CLAIM] = spawn(CLAIM, -1, p[0][1], err, &pg);
	pids[THROTTLE] = spawn(THROTTLE, p[0][0], p[1][1], err, &pg);
	pids[SEND] = spawn(SEND, p[1][0], p[2][1], err, &pg);
	pids[RECORD] = spawn(RECORD, p[2][0], null, err, &pg);
	for (i = 0; i < 3; i++) {
		close(p[i][0]);
		close(p[i][1]);
	}
	close(null);
	await(pids, st, 4, pg);
	if (st[SEND] < 128 && st[RECORD] == 0)
		sweep();
	if (wa_stopping)
		return run_stopped();
	live_clear();
	if (st[SEND] == WA_EX_HALTED) {
		if (snap_take(run.db, run.id, &s, 1) == 0 && *s.reason)
			wa_warn("campaign %s halted: %s; fix the cause, then "
			    "wa-campaign resume %s", run.id, s.reason, run.id);
		else
			wa_warn("campaign %s halted (wa-send says why above)",
			    run.id);
		return WA_EX_HALTED;
	}
	for (i = 0; i < 4; i++)
		if (st[i] == EX_UNAVAILABLE) {
			wa_warn("%s: %s is down (see above): run again when "
			    "it is back", names[i], i == SEND ? "the API" :
			    "Postgres");
			return EX_UNAVAILABLE;
		}
	if (st[CLAIM] == EX_NOPERM)
		return EX_NOPERM;
	/* Downstream first: a stage whose reader died exits 74 for it. */
	for (i = RECORD; i >= THROTTLE; i--)
		if (st[i] != 0) {
			wa_warn("%s %s %d", names[i], st[i] > 127 ?
			    "was killed by signal" : "exited",
			    st[i] > 127 ? st[i] - 128 : st[i]);
			return st[i] > 127 ? EX_SOFTWARE : st[i];
		}
	if (st[CLAIM] != 0 && st[CLAIM] != EX_TEMPFAIL) {
		wa_warn("wa-claim %s %d", st[CLAIM] > 127 ?
		    "was killed by signal" : "exited",
		    st[CLAIM] > 127 ? st[CLAIM] - 128 : st[CLAIM]);
		return st[CLAIM] > 127 ? EX_SOFTWARE : st[CLAIM];
	}
	if (!run.tty)
		live_draw(0);
	return -1;
}
