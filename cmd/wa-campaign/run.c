/*
 * run.c: wa-campaign run, a campaign to its end, as an operator would
 * run it by hand.
 *
 * Reads campaigns and campaign_recipients (Postgres) between rounds. A
 * round is the pipeline wa-claim --once | wa-throttle | wa-send |
 * wa-record, each stage a child in a process group of its own, started
 * from the directory wa-campaign itself was run from, its exit status
 * checked; wa-claim --once ends the round when nothing is due, so rows
 * whose retry is not due yet wait in the table, not in a process. Between
 * rounds wa-reconcile settles unknown and stale rows, and run sleeps
 * until the table says something is due: the next retry, or an unknown
 * or stale row's --unknown-after or --stale-after. Stage options come by
 * name (-r, -b, -j, --timeout-ms, --outage-after, --pg-timeout,
 * --stale-after, --unknown-after) or verbatim (--claim-opt and the
 * like); -d goes to the stages as DATABASE_URL, never in their argv.
 * wa-throttle gets the campaign's weight and priority (--weight, and
 * --urgent), read from its row at each round, so that campaigns on one
 * number share its rate as their rows say; wa-send its circuit breaker
 * (set --breaker), unless --send-opt gives one.
 *
 * A stop (SIGINT, SIGTERM) goes on to the stages, which drain; run waits
 * for them and exits 75; a second stop is passed on too, and run then
 * dies by it. Every stage gets SIGINT if run itself dies (kill -9), so
 * they drain then too.
 *
 * On a terminal, one live line of progress (watch.c) and the
 * stages' messages relayed above it; elsewhere a line of progress after
 * each round. With --dry-run, writes on stdout the request each pending
 * row would get (wa-send --dry-run's form: the URL and the body), read
 * in a read-only transaction: no row changes.
 *
 * One run per campaign (runlock.c): a second one says who runs it and
 * exits 80. With --until-idle, run exits as soon as only long waits are
 * left (more than a minute: retries, the messaging limit, an urgent
 * campaign, rows for wa-reconcile), saying what waits and until when:
 * for cron.
 *
 * Exits (wapipe(7)) 0 when the campaign is completed; 79 when a person
 * must act: it halted, or it is not started; 75 when it may go on later:
 * paused, stopped by a signal, or (--until-idle) waiting; 77 when it is
 * cancelled; 80 when another run holds it; 69 when Postgres or the API
 * stays down; 76 when rows are left that neither the pipeline nor
 * wa-reconcile can settle within --settle-max; 78 at once without an
 * API token (WA_TOKEN_FILE or WA_TOKEN), as wa-send would; a stage's own
 * status when it fails otherwise (the most downstream one's: 65, 74,
 * 78...), 70 when one is killed; 64 on a usage error; with --dry-run 0,
 * or 65 when a row would be refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/sig.h"
#include "records/claim.h"
#include "records/json.h"
#include "records/request.h"
#include "api/base.h"
#include "pg/blocked.h"
#include "pg/pg.h"
#include "campaign.h"

#define EX_UNSETTLED 76	/* rows left that nothing settles in time */
#define IDLE_MS 60000	/* a wait longer than this ends --until-idle */

enum { CLAIM, THROTTLE, SEND, RECORD, RECONCILE, NSTAGE };

static const char *const names[NSTAGE] = { "wa-claim", "wa-throttle",
    "wa-send", "wa-record", "wa-reconcile" };

/* A stage's argv: its program, then what run adds. */
struct args {
	char	**v;
	int	  n;
};

static struct {
	const char	*id;
	const char	*conninfo;
	long long	 pg_timeout;
	long long	 stale, unknown;	/* wa-reconcile's thresholds */
	long long	 settle_max;
	int		 dry;
	int		 idle;		/* --until-idle */
	struct args	 extra[NSTAGE];	/* --claim-opt ... --reconcile-opt */
} opt = { .pg_timeout = WA_PG_TIMEOUT, .stale = 600, .unknown = 600,
    .settle_max = 3600 };

static char dir[PATH_MAX];	/* where wa-campaign is: the stages too */
static int tty;			/* stderr a terminal: the live line */
static int relay[2] = { -1, -1 };	/* the stages' stderr, on a tty */
static int shown;		/* the live line is on the screen */
static struct meter meter;
static struct wa_pg *db;
static char rbuf[8192];
static size_t rlen;
static char weight[16] = "1";	/* the campaign's, at this round */
static char breaker[16];	/* its breaker, or "": wa-send's default */
static int urgent;
static int lost;		/* another run took the campaign over */

static void
add(struct args *a, const char *s)
{
	a->v = wa_realloc(a->v, (a->n + 2) * sizeof *a->v);
	a->v[a->n++] = wa_strdup(s);
	a->v[a->n] = NULL;
}

static void
addn(struct args *a, const char *name, long long v)
{
	char s[32];

	add(a, name);
	snprintf(s, sizeof s, "%lld", v);
	add(a, s);
}

static void
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

	if (*dir)
		snprintf(path, sizeof path, "%s/%s", dir, names[k]);
	else
		snprintf(path, sizeof path, "%s", names[k]);
	add(a, path);
	if (k == CLAIM || k == RECONCILE) {
		add(a, "-c");
		add(a, opt.id);
	}
	if (k == CLAIM) {
		add(a, "--once");
		add(a, "-q");	/* run says what it waits for, once */
	}
	if (k == CLAIM || k == RECORD || k == RECONCILE)
		addn(a, "--pg-timeout", opt.pg_timeout);
	if (k == THROTTLE) {
		add(a, "--weight");
		add(a, weight);
		if (urgent)
			add(a, "--urgent");
	}
	if (k == SEND && *breaker) {
		add(a, "--breaker");
		add(a, breaker);
	}
	if (k == RECONCILE) {
		addn(a, "--stale-after", opt.stale);
		addn(a, "--unknown-after", opt.unknown);
	}
	for (i = 0; i < opt.extra[k].n; i++)
		add(a, opt.extra[k].v[i]);
}

static void
onchld(int sig)
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
static void
unshow(void)
{
	if (shown)
		fputs("\r\033[K", stderr);
	shown = 0;
}

/* Draws the live line (a terminal) or writes it as a message. */
static void
progress(int live)
{
	struct snap s;
	char line[512];

	if (live && !tty)
		return;
	if (snap_take(db, opt.id, &s, 0) != 0)
		return;
	meter_line(&meter, opt.id, &s, line, sizeof line);
	if (tty) {
		fprintf(stderr, "\r\033[K%s", line);
		shown = 1;
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

	while ((n = read(relay[0], rbuf + rlen, sizeof rbuf - rlen)) > 0) {
		rlen += n;
		nl = memrchr(rbuf, '\n', rlen);
		if (nl == NULL && rlen < sizeof rbuf)
			continue;
		k = nl != NULL ? (size_t)(nl - rbuf) + 1 : rlen;
		unshow();
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
	struct pollfd pfd = { relay[0], POLLIN, 0 };
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
		if (tty)
			relay_read();
		if (left == 0)
			break;
		while (fwd < wa_stopping) {
			kill(-pg, SIGINT);
			fwd++;
		}
		if (tty && wa_now_ms() - drawn >= 1000) {
			progress(1);
			drawn = wa_now_ms();
		}
		if (runlock_beat(db) < 0)
			lost = 1;
		wa_wait(&pfd, tty, tty ? 1000 : 5000);
	}
}

/* After a stop: 75, or death by the second signal. */
static int
stopped(void)
{
	unshow();
	if (wa_stopping > 1)
		wa_signal_exit();
	wa_warn("stopped: campaign %s is not completed; wa-campaign run %s "
	    "goes on from where it is", opt.id, opt.id);
	return EX_TEMPFAIL;
}

/* Runs wa-reconcile (its report on stderr); 0 or its failure. */
static int
reconcile(void)
{
	pid_t pg = 0, pid;
	int st = 0;

	pid = spawn(RECONCILE, -1, tty ? relay[1] : STDERR_FILENO,
	    tty ? relay[1] : -1, &pg);
	await(&pid, &st, 1, pg);
	if (wa_stopping)
		return stopped();
	if (st != 0) {
		unshow();
		wa_warn("wa-reconcile exited %d", st);
		return st == EX_UNAVAILABLE ? st : st > 127 ? EX_SOFTWARE : st;
	}
	return 0;
}

/* The campaign's weight, priority and breaker, as its row says now. */
static void
share(void)
{
	const char *p[] = { opt.id };
	PGresult *res;

	res = wa_pg_need(db, NULL, "SELECT weight, priority = 'urgent',"
	    " coalesce(breaker::text, '') FROM campaigns WHERE id = $1", 1, p);
	if (PQntuples(res) == 1) {
		snprintf(weight, sizeof weight, "%s", PQgetvalue(res, 0, 0));
		urgent = *PQgetvalue(res, 0, 1) == 't';
		snprintf(breaker, sizeof breaker, "%s",
		    PQgetvalue(res, 0, 2));
	}
	PQclear(res);
}

/*
 * One pipeline to the end: -1 to go on, or run's exit status. The
 * verdict: a stop; a halt (wa-send 79); Postgres or the API down (any
 * 69); cancelled (wa-claim 77); any other failure, as the stage had it.
 */
static int
pipeline(void)
{
	int p[3][2], st[4] = { 0 }, null, err = tty ? relay[1] : -1, i;
	pid_t pids[4], pg = 0;
	struct snap s;

	share();
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
	if (wa_stopping)
		return stopped();
	unshow();
	if (st[SEND] == WA_EX_HALTED) {
		if (snap_take(db, opt.id, &s, 1) == 0 && *s.reason)
			wa_warn("campaign %s halted: %s; fix the cause, then "
			    "wa-campaign resume %s", opt.id, s.reason, opt.id);
		else
			wa_warn("campaign %s halted (wa-send says why above)",
			    opt.id);
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
	if (!tty)
		progress(0);
	return -1;
}

/* Sleeps ms, drawing the live line; -1 if a stop cut it short. */
static int
nap(int64_t ms)
{
	int64_t end = wa_now_ms() + ms, now;

	while ((now = wa_now_ms()) < end && !wa_stopping && !lost) {
		progress(1);
		if (runlock_beat(db) < 0)
			lost = 1;
		wa_sleep_ms(end - now > (tty ? 1000 : 5000) ? (tty ? 1000 :
		    5000) : end - now);
	}
	return wa_stopping || lost ? -1 : 0;
}

static long long
min_ms(long long a, long long b)
{
	return a < 0 ? b : b < 0 || a < b ? a : b;
}

/* A nap cut short: by a stop, or by another run taking over. */
static int
cut(void)
{
	unshow();
	return lost ? WA_EX_BUSY : stopped();
}

/*
 * Due rows a round left where they were: what holds them back (the
 * number's messaging limit, an urgent campaign; else another claimer's
 * locks), said once (*said: what was); naps until it may have passed.
 * -1 to go on, or run's exit status: 75 with --until-idle when the wait
 * is long.
 */
static int
held_back(int idle, enum wa_blocked *said)
{
	char why[512];
	long long ms, wait;
	enum wa_blocked b = wa_blocked(db, opt.id, &ms, why, sizeof why);

	wait = b == WA_BLOCKED_LIMIT ? ms + 100 : b == WA_BLOCKED_URGENT ?
	    5000 : idle < 6 ? 100LL << idle : 5000;
	if (b != WA_BLOCKED_NOT && opt.idle && (b == WA_BLOCKED_URGENT ||
	    ms > IDLE_MS)) {
		unshow();
		wa_warn("campaign %s %s: run it again then", opt.id, why);
		return EX_TEMPFAIL;
	}
	if (b != WA_BLOCKED_NOT && b != *said) {
		unshow();
		wa_warn("campaign %s %s", opt.id, why);
	}
	*said = b;
	return nap(wait) < 0 ? cut() : -1;
}

/* --until-idle, and nothing is due for wait ms: says what waits; 75. */
static int
idle_exit(const struct snap *s, long long wait)
{
	char when[40];

	unshow();
	wa_warn("campaign %s: nothing to do before %s (in %lld s): %lld "
	    "rows pending (retries or a send window), %lld unknown, %lld "
	    "sending (wa-reconcile settles those); run it again then",
	    opt.id, wa_rfc3339(when, sizeof when, wa_unix_ms() + wait),
	    (wait + 999) / 1000, s->pending, s->unknown, s->sending);
	return EX_TEMPFAIL;
}

/* The campaign left running: says how it ended; run's exit status. */
static int
ended(const struct snap *s)
{
	char nosend[128] = "";
	long long never;

	unshow();
	if (strcmp(s->state, "completed") == 0) {
		never = s->suppressed + s->expired;
		if (never > 0)
			snprintf(nosend, sizeof nosend, ", %lld never sent "
			    "(%lld suppressed, %lld expired)", never,
			    s->suppressed, s->expired);
		wa_warn("campaign %s is completed: %lld rows, %lld sent, %lld "
		    "failed%s; wa-campaign status %s for the report", opt.id,
		    s->total, s->done - s->failed - never, s->failed, nosend,
		    opt.id);
		return 0;
	}
	if (strcmp(s->state, "cancelled") == 0) {
		wa_warn("campaign %s is cancelled%s%s: nothing more is sent",
		    opt.id, *s->reason ? ": " : "", s->reason);
		return EX_NOPERM;
	}
	if (strcmp(s->state, "draft") == 0) {
		wa_warn("campaign %s is not started: wa-campaign start %s",
		    opt.id, opt.id);
		return WA_EX_HALTED;
	}
	if (strncmp(s->reason, "halt:", 5) == 0) {
		wa_warn("campaign %s is %s: %s; fix the cause, then "
		    "wa-campaign resume %s", opt.id, s->state, s->reason,
		    opt.id);
		return WA_EX_HALTED;
	}
	wa_warn("campaign %s is %s%s%s", opt.id, s->state,
	    *s->reason ? ": " : "", s->reason);
	return EX_TEMPFAIL;
}

/* The rounds, until the campaign ends or cannot go on. */
static int
loop(void)
{
	struct snap s;
	long long wait, stuck = -1, done = -1, due = -1;
	enum wa_blocked said = WA_BLOCKED_NOT;
	int r, idle = 0;

	for (;;) {
		if (wa_stopping || lost)
			return cut();
		if (snap_take(db, opt.id, &s, 1) != 0)
			wa_die(EX_USAGE, "campaign %s is gone: it was deleted",
			    opt.id);
		if (strcmp(s.state, "running") != 0)
			break;
		if (s.due > 0) {
			/* A round that moved nothing: what holds it back? */
			idle = s.done == done && s.due == due ? idle + 1 : 0;
			done = s.done;
			due = s.due;
			if (idle > 0 && (r = held_back(idle, &said)) >= 0)
				return r;
			if ((r = pipeline()) >= 0)
				return r;
			stuck = -1;
			continue;
		}
		if ((r = reconcile()) != 0)
			return r;
		if (snap_take(db, opt.id, &s, 1) != 0 ||
		    strcmp(s.state, "running") != 0 || s.due > 0)
			continue;
		/* Nothing due: until the table says something will be. */
		wait = s.next_ms;
		if (s.unknown > 0)
			wait = min_ms(wait, opt.unknown * 1000 -
			    s.unknown_age);
		if (s.sending > 0)
			wait = min_ms(wait, opt.stale * 1000 - s.sending_age);
		if (wait < 0)
			wait = 0;
		wait += 100;	/* past the threshold, not on it */
		if (opt.idle && wait > IDLE_MS)
			return idle_exit(&s, wait);
		if (s.pending == 0 && s.unknown + s.sending > 0) {
			if (stuck < 0)
				stuck = s.at;
			if (s.at + wait - stuck > opt.settle_max * 1000) {
				unshow();
				wa_warn("campaign %s: %lld rows unknown and "
				    "%lld sending that nothing settles within "
				    "--settle-max (%lld s): a status webhook "
				    "or wa-reconcile will", opt.id, s.unknown,
				    s.sending, opt.settle_max);
				return EX_UNSETTLED;
			}
		}
		if (nap(wait) < 0)
			return cut();
	}
	return ended(&s);
}

/*
 * The request each pending row would get, through the builder wa-claim
 * uses (its next attempt) and the check and form wa-send --dry-run uses,
 * from a cursor in a read-only transaction.
 */
static int
dry_run(void)
{
	const char *p[] = { opt.id };
	struct json_tokener *tok = wa_json_tokener();
	struct wa_request rq = { 0 };
	struct wa_buf head = { 0 }, line = { 0 };
	struct json_object *o;
	char *base = wa_api_base();
	const char *why;
	char err[256];
	PGresult *res;
	long long bad = 0;
	int i, n;

	res = wa_pg_need(db, NULL, WA_CLAIM_HEAD_SQL, 1, p);
	if (PQntuples(res) != 1)
		wa_die(EX_USAGE, "no campaign %s", opt.id);
	wa_claim_head(&head, opt.id, PQgetvalue(res, 0, 0),
	    PQgetvalue(res, 0, 1), PQgetvalue(res, 0, 2));
	PQclear(res);
	PQclear(wa_pg_need(db, NULL, "BEGIN READ ONLY", 0, NULL));
	PQclear(wa_pg_need(db, NULL, "DECLARE wa_dry NO SCROLL CURSOR FOR"
	    " SELECT id, attempt + 1, phone, template_params"
	    " FROM campaign_recipients WHERE campaign_id = $1"
	    " AND status = 'pending' ORDER BY next_attempt_at, id", 1, p));
	do {
		res = wa_pg_need(db, NULL, "FETCH 1000 FROM wa_dry", 0, NULL);
		n = PQntuples(res);
		for (i = 0; i < n && !wa_stopping; i++) {
			line.len = 0;
			wa_claim_line(&line, &head, PQgetvalue(res, i, 0),
			    PQgetvalue(res, i, 1), PQgetvalue(res, i, 2),
			    PQgetvalue(res, i, 3), PQgetlength(res, i, 3));
			o = wa_json_parse(tok, line.s, line.len - 1,
			    WA_JSON_RECORD, WA_JSON_DEPTH, err, sizeof err);
			why = o == NULL ? err : wa_request_prepare(&rq, o,
			    line.s, line.len - 1, base);
			if (why != NULL) {
				wa_warn("row %s (%s): %s", PQgetvalue(res, i,
				    0), PQgetvalue(res, i, 2), why);
				bad++;
			} else {
				wa_request_dry(o, &rq);
				wa_out_json(o);
			}
			json_object_put(o);
		}
		PQclear(res);
		wa_wait(NULL, 0, 0);
	} while (n > 0 && !wa_stopping);
	PQclear(wa_pg_need(db, NULL, "ROLLBACK", 0, NULL));
	wa_request_free(&rq);
	free(base);
	wa_buf_free(&head);
	wa_buf_free(&line);
	json_tokener_free(tok);
	if (fflush(stdout) == EOF || ferror(stdout))
		wa_die(EX_IOERR, "write to stdout:");
	if (wa_stopping)
		return stopped();
	return bad > 0 ? EX_DATAERR : 0;
}

/*
 * wa-send's token, looked for before the first round: a missing one is
 * 78 at once, not a stage's failure after a sleep until retries are due.
 */
static void
token(void)
{
	const char *file = getenv("WA_TOKEN_FILE"), *tok = getenv("WA_TOKEN");

	if (file != NULL && *file != '\0') {
		if (access(file, R_OK) < 0)
			wa_die(EX_CONFIG, "WA_TOKEN_FILE: %s:", file);
	} else if (tok == NULL || *tok == '\0')
		wa_die(EX_CONFIG, "no API token: set WA_TOKEN_FILE or "
		    "WA_TOKEN");
}

int
cmd_run(struct opts *o)
{
	enum { O_STALE = 256, O_UNKNOWN, O_SETTLE, O_PGT, O_TIMEOUT,
	    O_OUTAGE, O_IDLE, O_OPT };
	static const struct option longs[] = {
		{ "burst", required_argument, NULL, 'b' },
		{ "concurrency", required_argument, NULL, 'j' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ "outage-after", required_argument, NULL, O_OUTAGE },
		{ "pg-timeout", required_argument, NULL, O_PGT },
		{ "rate", required_argument, NULL, 'r' },
		{ "settle-max", required_argument, NULL, O_SETTLE },
		{ "stale-after", required_argument, NULL, O_STALE },
		{ "timeout-ms", required_argument, NULL, O_TIMEOUT },
		{ "unknown-after", required_argument, NULL, O_UNKNOWN },
		{ "until-idle", no_argument, NULL, O_IDLE },
		{ "claim-opt", required_argument, NULL, O_OPT + CLAIM },
		{ "throttle-opt", required_argument, NULL, O_OPT + THROTTLE },
		{ "send-opt", required_argument, NULL, O_OPT + SEND },
		{ "record-opt", required_argument, NULL, O_OPT + RECORD },
		{ "reconcile-opt", required_argument, NULL,
		    O_OPT + RECONCILE },
		{ NULL, 0, NULL, 0 }
	};
	struct snap s;
	ssize_t n;
	char *slash;
	int c, ret;

	opt.conninfo = o->conninfo;
	optind = 1;
	while ((c = getopt_long(o->argc, o->argv, "b:d:hj:nr:", longs, NULL))
	    != -1)
		switch (c) {
		case 'b':
			wa_num(optarg, 1, 1000000, "burst");
			add(&opt.extra[THROTTLE], "-b");
			add(&opt.extra[THROTTLE], optarg);
			break;
		case 'd':
			opt.conninfo = optarg;
			break;
		case 'h':
			campaign_usage("run", stdout, 0);
			break;
		case 'j':
			wa_num(optarg, 1, 100000, "concurrency");
			add(&opt.extra[SEND], "-j");
			add(&opt.extra[SEND], optarg);
			break;
		case 'n':
			opt.dry = 1;
			break;
		case 'r':
			wa_fnum(optarg, 0.001, 1000000, "rate");
			add(&opt.extra[THROTTLE], "-r");
			add(&opt.extra[THROTTLE], optarg);
			break;
		case O_OUTAGE:
		case O_TIMEOUT:
			add(&opt.extra[SEND], c == O_OUTAGE ?
			    "--outage-after" : "--timeout-ms");
			add(&opt.extra[SEND], optarg);
			break;
		case O_PGT:
			opt.pg_timeout = wa_num(optarg, 0, 86400 * 7,
			    "pg-timeout");
			break;
		case O_IDLE:
			opt.idle = 1;
			break;
		case O_SETTLE:
			opt.settle_max = wa_num(optarg, 0, 86400 * 365,
			    "settle-max");
			break;
		case O_STALE:
			opt.stale = wa_num(optarg, 0, INT_MAX, "stale-after");
			break;
		case O_UNKNOWN:
			opt.unknown = wa_num(optarg, 0, INT_MAX,
			    "unknown-after");
			break;
		default:
			if (c >= O_OPT && c < O_OPT + NSTAGE) {
				add(&opt.extra[c - O_OPT], optarg);
				break;
			}
			campaign_usage("run", stderr, EX_USAGE);
		}
	/* argv[optind] is "run" (the command), then the id. */
	if (o->argc - optind != 2 || strcmp(o->argv[optind], "run") != 0)
		campaign_usage("run", stderr, EX_USAGE);
	opt.id = o->argv[optind + 1];
	wa_num(opt.id, 1, LLONG_MAX, "campaign id");

	/* The stages are wa-campaign's siblings (else found in PATH). */
	if ((n = readlink("/proc/self/exe", dir, sizeof dir - 1)) > 0) {
		dir[n] = '\0';
		if ((slash = strrchr(dir, '/')) != NULL)
			*slash = '\0';
	} else
		*dir = '\0';
	/* Passwords in a conninfo stay out of every argv. */
	if (opt.conninfo != NULL && setenv("DATABASE_URL", opt.conninfo, 1))
		wa_die(EX_OSERR, "setenv:");
	wa_signals();
	wa_signal(SIGCHLD, onchld);
	db = wa_pg_open(opt.conninfo, opt.pg_timeout);
	wa_pg_patience(db, 1);
	if (opt.dry)
		ret = dry_run();
	else {
		token();
		tty = isatty(STDERR_FILENO);
		if (tty) {
			/* Stages talk to us through a pipe: no times. */
			if (getenv("WA_LOG_TIME") == NULL)
				setenv("WA_LOG_TIME", "0", 1);
			if (pipe2(relay, O_CLOEXEC) < 0)
				wa_die(EX_OSERR, "pipe:");
			fcntl(relay[0], F_SETFL, O_NONBLOCK);
		}
		if (snap_take(db, opt.id, &s, 1) != 0)
			wa_die(EX_USAGE, "no campaign %s", opt.id);
		meter_init(&meter, &s);
		ret = runlock_take(db, opt.id) < 0 ? WA_EX_BUSY : loop();
		runlock_free(db);
	}
	wa_pg_close(db);
	for (c = 0; c < NSTAGE; c++)
		args_free(&opt.extra[c]);
	return ret;
}
