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
 * other options; all at once. While any runs, campaigns whose time comes
 * join in (looked for every 10 s); one that ended is not run again by
 * the same --due. A stop is passed on to each; if run --due dies, even
 * by kill -9, each gets SIGTERM and drains.
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

/* How often --due looks for campaigns whose time has come meanwhile. */
#define DUE_SCAN_MS 10000

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

	if (PQntuples(res) != 1) {
		PQclear(res);
		wa_die(EX_USAGE, "campaign %s is gone: it was deleted",
		    run.id);
	}
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
	struct snap s;
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
	/* The rates of the live line count from now, not from the wait. */
	if (snap_take(run.db, id, &s, 1) == 0)
		meter_init(&run.meter, &s);
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

/* The campaigns --due has run, each with its child (0: ended). */
struct kids {
	struct kid {
		long long	 id;
		pid_t		 pid;
	}		*v;
	int		 n, alive, worst;
};

/* A child for each campaign due that has none yet in k. */
static void
spawn_due(struct kids *k, char **argv, int nopt)
{
	PGresult *res = wa_pg_need(run.db, NULL, due_sql, 0, NULL);
	long long id;
	int i, j;

	for (i = 0; i < PQntuples(res); i++) {
		id = atoll(PQgetvalue(res, i, 0));
		for (j = 0; j < k->n && k->v[j].id != id; j++)
			;
		if (j < k->n)
			continue;	/* running, or ended: not again */
		if ((k->v = realloc(k->v, (k->n + 1) * sizeof *k->v)) == NULL)
			wa_die(EX_OSERR, "realloc:");
		wa_warn("campaign %lld is due: running it", id);
		k->v[k->n].id = id;
		k->v[k->n++].pid = spawn(argv, nopt, PQgetvalue(res, i, 0));
		k->alive++;
	}
	PQclear(res);
}

/* The children that have ended, their statuses into k->worst. */
static void
reap(struct kids *k)
{
	pid_t p;
	int i, st, ws;

	while ((p = waitpid(-1, &ws, WNOHANG)) > 0)
		for (i = 0; i < k->n; i++) {
			if (k->v[i].pid != p)
				continue;
			st = WIFEXITED(ws) ? WEXITSTATUS(ws) :
			    128 + WTERMSIG(ws);
			if (st != 0)
				wa_warn("campaign %lld: its run ended %d",
				    k->v[i].id, st);
			if (st != WA_EX_BUSY && st > k->worst)
				k->worst = st;
			k->v[i].pid = 0;
			k->alive--;
		}
	if (p < 0 && errno != ECHILD && errno != EINTR)
		wa_die(EX_OSERR, "waitpid:");
}

int
run_due(char **argv, int nopt)
{
	struct kids k = { NULL, 0, 0, 0 };
	int64_t scan = wa_now_ms();
	int fwd = 0, i;

	spawn_due(&k, argv, nopt);
	if (k.n == 0)
		wa_warn("no campaign is due");
	while (k.alive > 0) {
		reap(&k);
		for (; fwd < wa_stopping; fwd++)
			for (i = 0; i < k.n; i++)
				if (k.v[i].pid > 0)
					kill(k.v[i].pid, SIGTERM);
		/* Campaigns whose time comes meanwhile join in. */
		if (!wa_stopping && wa_now_ms() - scan >= DUE_SCAN_MS) {
			spawn_due(&k, argv, nopt);
			scan = wa_now_ms();
		}
		if (k.alive > 0)
			wa_sleep_ms(1000);
	}
	free(k.v);
	return k.worst;
}
