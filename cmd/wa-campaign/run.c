/*
 * run.c: wa-campaign run, a campaign to its end, as an operator would
 * run it by hand (a round is round.c's; --dry-run is dryrun.c's).
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
 * A running campaign is checked first, as wa-campaign check checks it
 * (check.c: the template, the number, every row's parameters), unless
 * --no-check: one that fails it is left as it is, nothing sent, and run
 * exits with the check's status (65: it cannot go; 69: the API could
 * not tell; 78: no WABA id).
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
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "core/sig.h"
#include "pg/blocked.h"
#include "run.h"

#define EX_UNSETTLED 76	/* rows left that nothing settles in time */

struct run run = { .pg_timeout = WA_PG_TIMEOUT, .stale = 600,
    .unknown = 600, .settle_max = 3600, .relay = { -1, -1 } };

/* Sleeps ms, drawing the live line; -1 if a stop cut it short. */
int
run_nap(int64_t ms)
{
	int64_t end = wa_now_ms() + ms, now, step = run.tty ? 1000 : 5000;

	while ((now = wa_now_ms()) < end && !wa_stopping && !run.lost) {
		live_draw(1);
		if (runlock_beat(run.db) < 0)
			run.lost = 1;
		wa_sleep_ms(end - now > step ? step : end - now);
	}
	return wa_stopping || run.lost ? -1 : 0;
}

static long long
min_ms(long long a, long long b)
{
	return a < 0 ? b : b < 0 || a < b ? a : b;
}

/* A nap cut short: by a stop, or by another run taking over. */
int
run_cut(void)
{
	live_clear();
	return run.lost ? WA_EX_BUSY : run_stopped();
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
	enum wa_blocked b = wa_blocked(run.db, run.id, &ms, why, sizeof why);

	/* A minute at most: the limit may be raised meanwhile. */
	wait = b == WA_BLOCKED_LIMIT ? min_ms(ms + 100, RUN_IDLE_MS) :
	    b == WA_BLOCKED_URGENT ? 5000 : idle < 6 ? 100LL << idle : 5000;
	if (b != WA_BLOCKED_NOT && run.idle && (b == WA_BLOCKED_URGENT ||
	    ms > RUN_IDLE_MS)) {
		live_clear();
		wa_warn("campaign %s %s: run it again then", run.id, why);
		return EX_TEMPFAIL;
	}
	if (b != WA_BLOCKED_NOT && b != *said) {
		live_clear();
		wa_warn("campaign %s %s", run.id, why);
	}
	*said = b;
	return run_nap(wait) < 0 ? run_cut() : -1;
}

/* --until-idle, and nothing is due for wait ms: says what waits; 75. */
static int
idle_exit(const struct snap *s, long long wait)
{
	char when[40];

	live_clear();
	wa_warn("campaign %s: nothing to do before %s (in %lld s): %lld "
	    "rows pending (retries or a send window), %lld unknown, %lld "
	    "sending (wa-reconcile settles those); run it again then",
	    run.id, wa_rfc3339(when, sizeof when, wa_unix_ms() + wait),
	    (wait + 999) / 1000, s->pending, s->unknown, s->sending);
	return EX_TEMPFAIL;
}

/* The campaign left running: says how it ended; run's exit status. */
static int
ended(const struct snap *s)
{
	char nosend[128] = "";
	long long never;

	live_clear();
	if (strcmp(s->state, "completed") == 0) {
		never = s->suppressed + s->expired;
		if (never > 0)
			snprintf(nosend, sizeof nosend, ", %lld never sent "
			    "(%lld suppressed, %lld expired)", never,
			    s->suppressed, s->expired);
		wa_warn("campaign %s is completed: %lld rows, %lld sent, %lld "
		    "failed%s; wa-campaign status %s for the report", run.id,
		    s->total, s->done - s->failed - never, s->failed, nosend,
		    run.id);
		return 0;
	}
	if (strcmp(s->state, "cancelled") == 0) {
		wa_warn("campaign %s is cancelled%s%s: nothing more is sent",
		    run.id, *s->reason ? ": " : "", s->reason);
		return EX_NOPERM;
	}
	if (strcmp(s->state, "draft") == 0) {
		wa_warn("campaign %s is not started: wa-campaign start %s",
		    run.id, run.id);
		return WA_EX_HALTED;
	}
	if (strncmp(s->reason, "halt:", 5) == 0) {
		wa_warn("campaign %s is %s: %s; fix the cause, then "
		    "wa-campaign resume %s", run.id, s->state, s->reason,
		    run.id);
		return WA_EX_HALTED;
	}
	wa_warn("campaign %s is %s%s%s", run.id, s->state,
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
		if (wa_stopping || run.lost)
			return run_cut();
		if (snap_take(run.db, run.id, &s, 1) != 0)
			wa_die(EX_USAGE, "campaign %s is gone: it was deleted",
			    run.id);
		if (strcmp(s.state, "running") != 0)
			break;
		if (s.due > 0) {
			/* A round that moved nothing: what holds it back? */
			idle = s.done == done && s.due == due ? idle + 1 : 0;
			done = s.done;
			due = s.due;
			if (idle > 0 && (r = held_back(idle, &said)) >= 0)
				return r;
			if ((r = round_run()) >= 0)
				return r;
			stuck = -1;
			continue;
		}
		if ((r = round_reconcile()) != 0)
			return r;
		if (snap_take(run.db, run.id, &s, 1) != 0 ||
		    strcmp(s.state, "running") != 0 || s.due > 0)
			continue;
		/* Nothing due: until the table says something will be. */
		wait = s.next_ms;
		if (s.unknown > 0)
			wait = min_ms(wait, run.unknown * 1000 -
			    s.unknown_age);
		if (s.sending > 0)
			wait = min_ms(wait, run.stale * 1000 - s.sending_age);
		if (wait < 0)
			wait = 0;
		wait += 100;	/* past the threshold, not on it */
		if (run.idle && wait > RUN_IDLE_MS)
			return idle_exit(&s, wait);
		if (s.pending == 0 && s.unknown + s.sending > 0) {
			if (stuck < 0)
				stuck = s.at;
			if (s.at + wait - stuck > run.settle_max * 1000) {
				live_clear();
				wa_warn("campaign %s: %lld rows unknown and "
				    "%lld sending that nothing settles within "
				    "--settle-max (%lld s): a status webhook "
				    "or wa-reconcile will", run.id, s.unknown,
				    s.sending, run.settle_max);
				return EX_UNSETTLED;
			}
		}
		if (run_nap(wait) < 0)
			return run_cut();
	}
	return ended(&s);
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
	    O_OUTAGE, O_IDLE, O_NOCHECK, O_DUE, O_OPT };
	static const struct option longs[] = {
		{ "burst", required_argument, NULL, 'b' },
		{ "concurrency", required_argument, NULL, 'j' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "due", no_argument, NULL, O_DUE },
		{ "help", no_argument, NULL, 'h' },
		{ "no-check", no_argument, NULL, O_NOCHECK },
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
	int c, ret, nocheck = 0, due = 0;

	run.conninfo = o->conninfo;
	optind = 1;
	while ((c = getopt_long(o->argc, o->argv, "b:d:hj:nr:", longs, NULL))
	    != -1)
		switch (c) {
		case 'b':
			wa_num(optarg, 1, 1000000, "burst");
			args_add(&run.extra[THROTTLE], "-b");
			args_add(&run.extra[THROTTLE], optarg);
			break;
		case 'd':
			run.conninfo = optarg;
			break;
		case 'h':
			campaign_usage("run", stdout, 0);
			break;
		case 'j':
			wa_num(optarg, 1, 100000, "concurrency");
			args_add(&run.extra[SEND], "-j");
			args_add(&run.extra[SEND], optarg);
			break;
		case 'n':
			run.dry = 1;
			break;
		case 'r':
			wa_fnum(optarg, 0.001, 1000000, "rate");
			args_add(&run.extra[THROTTLE], "-r");
			args_add(&run.extra[THROTTLE], optarg);
			break;
		case O_OUTAGE:
		case O_TIMEOUT:
			args_add(&run.extra[SEND], c == O_OUTAGE ?
			    "--outage-after" : "--timeout-ms");
			args_add(&run.extra[SEND], optarg);
			break;
		case O_PGT:
			run.pg_timeout = wa_num(optarg, 0, 86400 * 7,
			    "pg-timeout");
			break;
		case O_IDLE:
			run.idle = 1;
			break;
		case O_NOCHECK:
			nocheck = 1;
			break;
		case O_DUE:
			due = 1;
			break;
		case O_SETTLE:
			run.settle_max = wa_num(optarg, 0, 86400 * 365,
			    "settle-max");
			break;
		case O_STALE:
			run.stale = wa_num(optarg, 0, INT_MAX, "stale-after");
			break;
		case O_UNKNOWN:
			run.unknown = wa_num(optarg, 0, INT_MAX,
			    "unknown-after");
			break;
		default:
			if (c >= O_OPT && c < O_OPT + NSTAGE) {
				args_add(&run.extra[c - O_OPT], optarg);
				break;
			}
			campaign_usage("run", stderr, EX_USAGE);
		}
	/* argv[optind] is "run" (the command), then the id (none with
	 * --due). */
	if (o->argc - optind != 2 - due ||
	    strcmp(o->argv[optind], "run") != 0)
		campaign_usage("run", stderr, EX_USAGE);
	run.id = o->argv[optind + 1];
	if (!due)
		wa_num(run.id, 1, LLONG_MAX, "campaign id");

	/* The stages are wa-campaign's siblings (else found in PATH). */
	if ((n = readlink("/proc/self/exe", run.dir, sizeof run.dir - 1)) > 0) {
		run.dir[n] = '\0';
		if ((slash = strrchr(run.dir, '/')) != NULL)
			*slash = '\0';
	} else
		*run.dir = '\0';
	/* Passwords in a conninfo stay out of every argv. */
	if (run.conninfo != NULL && setenv("DATABASE_URL", run.conninfo, 1))
		wa_die(EX_OSERR, "setenv:");
	wa_signals();
	wa_signal(SIGCHLD, round_onchld);
	run.db = wa_pg_open(run.conninfo, run.pg_timeout);
	wa_pg_patience(run.db, 1);
	if (due)
		ret = run_due(o->argv, optind);
	else if (run.dry)
		ret = run_dry();
	else {
		token();
		run.tty = isatty(STDERR_FILENO);
		if (run.tty) {
			/* Stages talk to us through a pipe: no times. */
			if (getenv("WA_LOG_TIME") == NULL)
				setenv("WA_LOG_TIME", "0", 1);
			if (pipe2(run.relay, O_CLOEXEC) < 0)
				wa_die(EX_OSERR, "pipe:");
			fcntl(run.relay[0], F_SETFL, O_NONBLOCK);
		}
		if (snap_take(run.db, run.id, &s, 1) != 0)
			wa_die(EX_USAGE, "no campaign %s", run.id);
		meter_init(&run.meter, &s);
		/* A running campaign is checked first (check.c), by a child
		 * that keeps the token out of this environment. */
		if (runlock_take(run.db, run.id) < 0)
			ret = WA_EX_BUSY;
		else if (strcmp(s.state, "scheduled") == 0)
			ret = (ret = run_scheduled(nocheck)) >= 0 ? ret :
			    loop();
		else if (!nocheck && strcmp(s.state, "running") == 0 &&
		    (ret = check_child(run.dir, run.id)) != 0)
			ret = wa_stopping ? run_stopped() : ret;
		else
			ret = loop();
		runlock_free(run.db);
	}
	wa_pg_close(run.db);
	for (c = 0; c < NSTAGE; c++)
		args_free(&run.extra[c]);
	return ret;
}
