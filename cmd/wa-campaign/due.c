/*
 * due.c: the campaigns that start themselves, for wa-campaign run.
 *
 * run of a scheduled campaign (start --at) waits for its time, counting
 * down on a terminal (the live line, watch.c) and saying once when it
 * starts elsewhere; it reads the campaign every second, so a start now,
 * a pause, a cancel or a new time is seen at once. When the time comes,
 * the campaign is checked (check.c, unless --no-check) and started. A
 * check that refuses it pauses it, with the reason, so that a timer does
 * not try again every minute; one the API could not tell leaves it
 * scheduled for the next try.
 *
 * run --due runs every campaign whose time has come: scheduled ones,
 * and those that started at their time and are still running (a run
 * stopped or cut short goes on at the next --due). Each is a wa-campaign
 * run of its own, a child in a process group of its own, with run's
 * other options; all at once. A stop is passed on to each; if run --due
 * dies, even by kill -9, each gets SIGTERM and drains.
 *
 * Reads and writes campaigns (Postgres). run_scheduled returns -1 to go
 * on with the rounds, or run's exit status; run_due returns the worst of
 * the children's statuses: 0 when all ended 0 or were run by another
 * (80), else the highest; 0 when nothing is due.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/err.h"
#include "core/sig.h"
#include "run.h"

/* The campaign's state, and ms to its start when scheduled (else -1). */
static const char *left_sql =
    "SELECT state, CASE WHEN state = 'scheduled' THEN greatest(0,"
    " (extract(epoch FROM start_at - now()) * 1000)::bigint) ELSE -1 END,"
    " " ISO("start_at") " FROM campaigns WHERE id = $1";

/* A scheduled campaign whose time has come, started (as a claim would). */
static const char *start_sql =
    "UPDATE campaigns SET state = 'running', state_reason = 'started at"
    " its scheduled time', updated_at = now(), started_at ="
    " coalesce(started_at, now()) WHERE id = $1 AND state = 'scheduled'"
    " AND start_at <= now()";

/* A campaign that failed its check at its time: paused, saying why. */
static const char *refused_sql =
    "UPDATE campaigns SET state = 'paused', updated_at = now(),"
    " state_reason = 'halt: it failed its check at its scheduled time'"
    " WHERE id = $1 AND state = 'scheduled'";

/* What --due runs: every campaign whose time has come, oldest first. */
static const char *due_sql =
    "SELECT id FROM campaigns WHERE start_at <= now()"
    " AND state IN ('scheduled', 'running') ORDER BY start_at, id";

/* Campaign run.id's state into state; ms to its start, or -1. */
static long long
left(char *state, size_t size, char *when, size_t wsize)
{
	PGresult *res = wa_pg_need(run.db, NULL, left_sql, 1, &run.id);
	long long ms;

	if (PQntuples(res) != 1)
		wa_die(EX_USAGE, "campaign %s is gone: it was deleted",
		    run.id);
	snprintf(state, size, "%s", PQgetvalue(res, 0, 0));
	ms = atoll(PQgetvalue(res, 0, 1));
	snprintf(when, wsize, "%s", PQgetvalue(res, 0, 2));
	PQclear(res);
	return ms;
}

int
run_scheduled(int nocheck)
{
	char state[16], when[40], in[32];
	const char *id = run.id;
	long long ms = left(state, sizeof state, when, sizeof when);
	PGresult *res;
	int st;

	if (ms > 0) {
		campaign_span(in, sizeof in, (ms + 999) / 1000);
		if (run.idle && ms > RUN_IDLE_MS) {
			wa_warn("campaign %s is scheduled: it starts at %s, "
			    "in %s; run it again then", id, when, in);
			return EX_TEMPFAIL;
		}
		wa_warn("campaign %s is scheduled: it starts at %s, in %s; "
		    "waiting (wa-campaign start %s starts it now)", id, when,
		    in, id);
	}
	while (ms > 0) {
		if (run_nap(ms < 1000 ? ms : 1000) < 0)
			return run_cut();
		ms = left(state, sizeof state, when, sizeof when);
	}
	live_clear();
	if (strcmp(state, "scheduled") != 0)
		return -1;	/* started, paused, cancelled: the rounds say */
	if (!nocheck && (st = check_child(run.dir, id)) != 0) {
		if (wa_stopping)
			return run_stopped();
		if (st == EX_DATAERR) {
			PQclear(wa_pg_need(run.db, NULL, refused_sql, 1,
			    &id));
			wa_warn("campaign %s is paused: it failed its check "
			    "at its scheduled time; fix it, then "
			    "wa-campaign resume %s", id, id);
		}
		return st;
	}
	res = wa_pg_need(run.db, NULL, start_sql, 1, &id);
	if (strcmp(PQcmdTuples(res), "1") == 0)
		wa_warn("campaign %s: its time has come; started", id);
	PQclear(res);
	return -1;
}

/*
 * A child: wa-campaign run, the options of argv (argv[1] to argv[nopt - 1],
 * as getopt left them) but --due and -d, then id.
 */
static pid_t
spawn(char **argv, int nopt, const char *id)
{
	char path[PATH_MAX + 16], **v;
	pid_t pid, parent = getpid();
	sigset_t none;
	int i, n = 0;

	if ((v = calloc(nopt + 3, sizeof *v)) == NULL)
		wa_die(EX_OSERR, "calloc:");
	v[n++] = argv[0];
	v[n++] = "run";
	for (i = 1; i < nopt; i++)
		if (strcmp(argv[i], "-d") == 0)
			i++;	/* in DATABASE_URL, never in an argv */
		else if (strcmp(argv[i], "--due") != 0 &&
		    strncmp(argv[i], "-d", 2) != 0)
			v[n++] = argv[i];
	v[n++] = (char *)id;
	if (*run.dir)
		snprintf(path, sizeof path, "%s/wa-campaign", run.dir);
	else
		snprintf(path, sizeof path, "wa-campaign");
	if ((pid = fork()) < 0)
		wa_die(EX_OSERR, "fork:");
	if (pid == 0) {
		/* Stops come from us, once: not from the terminal too. */
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			raise(SIGTERM);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGCHLD, SIG_DFL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execvp(path, v);
		fprintf(stderr, "wa-campaign: cannot run %s: %s\n", path,
		    strerror(errno));
		_exit(EX_SOFTWARE);
	}
	free(v);
	return pid;
}

int
run_due(char **argv, int nopt)
{
	PGresult *res = wa_pg_need(run.db, NULL, due_sql, 0, NULL);
	int n = PQntuples(res), left = n, fwd = 0, worst = 0, st, ws, i;
	pid_t *pids, p;

	if (n == 0) {
		wa_warn("no campaign is due");
		PQclear(res);
		return 0;
	}
	if ((pids = calloc(n, sizeof *pids)) == NULL)
		wa_die(EX_OSERR, "calloc:");
	wa_warn("%d campaign%s due: running %s", n, n == 1 ? " is" : "s are",
	    n == 1 ? "it" : "them");
	for (i = 0; i < n; i++)
		pids[i] = spawn(argv, nopt, PQgetvalue(res, i, 0));
	while (left > 0) {
		while ((p = waitpid(-1, &ws, WNOHANG)) > 0)
			for (i = 0; i < n; i++) {
				if (pids[i] != p)
					continue;
				st = WIFEXITED(ws) ? WEXITSTATUS(ws) :
				    128 + WTERMSIG(ws);
				if (st != 0)
					wa_warn("campaign %s: run ended %d",
					    PQgetvalue(res, i, 0), st);
				if (st != WA_EX_BUSY && st > worst)
					worst = st;
				pids[i] = 0;
				left--;
			}
		for (; fwd < wa_stopping; fwd++)
			for (i = 0; i < n; i++)
				if (pids[i] > 0)
					kill(pids[i], SIGTERM);
		if (left > 0 && p < 0 && errno != EINTR && errno != ECHILD)
			wa_die(EX_OSERR, "waitpid:");
		if (left > 0)
			wa_sleep_ms(1000);
	}
	free(pids);
	PQclear(res);
	return worst;
}
