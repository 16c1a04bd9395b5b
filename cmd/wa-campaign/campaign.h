/*
 * campaign.h: what wa-campaign's commands share. main.c reads the
 * options every command draws from (struct opts) and the command table;
 * each other file is one command or one small family of them, with its
 * SQL and its output: create.c (create, set), import.c, moves.c (start,
 * pause, resume, cancel), status.c (status, list), watch.c (watch, and
 * the line of progress run draws), report.c and html.c (report),
 * export.c, requeue.c, limit.c, suppress.c, phonelist.c (the
 * files of numbers requeue and suppress read), migrate.c, check.c
 * (check, and the check start and run make first), run.c with round.c,
 * dryrun.c and runlock.c (run.h: what they share), rates.c (rates load,
 * rates show: the rate card), estimate.c, replies.c (replies, inbound
 * prune: the messages people sent back).
 */
#ifndef WA_CAMPAIGN_H
#define WA_CAMPAIGN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#include "core/buf.h"
#include "pg/pg.h"

/* The options the commands share, by getopt's value for each. */
enum { NAME = 1, NUMBER, TEMPLATE, LANG, MAXATT, UNKNOWN, CC, REJECT,
    REASON, JSON, STATUS, CODE, FORMAT, CLASS, PHONES, BREAKER, DRY,
    EXPIRES, WINDOW, TZ, WEIGHT, PRIORITY, PERIOD, CATEGORY, WABA, NOCHECK,
    AT, DAYS, PORTFOLIO, FETCH, NOPT };
#define O(x) (1u << (x))

/* SQL: a timestamptz x as RFC 3339 in UTC, to the second. */
#define ISO(x) "to_char(" x " AT TIME ZONE 'UTC', " \
    "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"

/*
 * A command's view of its command line: the options given (val, and
 * given's bits), the operands after the command's name (args, NULL
 * ended); a command that reads its own options (run, watch) gets the
 * whole argv, its name at argv[optind] once it has parsed them.
 */
struct opts {
	const char	*name;		/* the command's */
	const char	*val[NOPT];
	unsigned	 given;
	char		**args;
	const char	*conninfo;	/* -d */
	int		 argc;
	char		**argv;
};

/* The connection to -d's database (or libpq's defaults), made once. */
PGconn *campaign_db(const struct opts *o);
/* Exits 64 unless s is a phone number id: the number's id, digits. */
void campaign_number_id(const char *s);
/* "usage: wa-campaign [-d conninfo] " and the command's usage; exits. */
void campaign_usage(const char *cmd, FILE *f, int status);

/* The commands (main.c's table): each returns its exit status. */
int cmd_create(struct opts *o);
int cmd_set(struct opts *o);
int cmd_import(struct opts *o);
int cmd_move(struct opts *o);		/* start, pause, resume, cancel */
int cmd_status(struct opts *o);
int cmd_list(struct opts *o);
int cmd_watch(struct opts *o);
int cmd_report(struct opts *o);
int cmd_export(struct opts *o);
int cmd_requeue(struct opts *o);
int cmd_limit(struct opts *o);

/*
 * The field of a phone number that holds its portfolio's messaging limit
 * in the Graph API version in use (messaging_limit_tier up to v23.0), and
 * the people a day a value of it allows (sql/schema.sql's
 * messaging_tier): -1 unlimited, 0 unknown (limit.c).
 */
const char *campaign_limit_field(void);
long long campaign_tier(PGconn *conn, struct json_object *limit);
int cmd_suppress(struct opts *o);
int cmd_migrate(struct opts *o);
int cmd_run(struct opts *o);
int cmd_rates(struct opts *o);		/* rates load, rates show */
int cmd_estimate(struct opts *o);
int cmd_check(struct opts *o);
int cmd_replies(struct opts *o);
int cmd_inbound(struct opts *o);		/* inbound prune */

/*
 * SQL: the replies of campaign c (an alias in the query) as a JSON
 * object: messages attributed to it (count), the people they came from
 * (people: rows answered), the people messaged (rows sent, delivered
 * or read) and rate, people / messaged (NULL when none was messaged).
 */
#define REPLIES_JSON \
    "(SELECT json_build_object('count', a.n, 'people', a.p," \
    "  'messaged', b.m, 'rate', CASE WHEN b.m > 0" \
    "  THEN round(a.p::numeric / b.m, 4) END," \
    "  'answers', v.n, 'answers_billable', v.billed, 'optouts', (" \
    "  SELECT count(DISTINCT s.phone) FROM suppressions s" \
    "  WHERE s.added_at >= c.created_at" \
    "   AND s.scope IN (c.phone_number_id, '*') AND EXISTS (SELECT 1" \
    "   FROM campaign_phones p JOIN campaign_recipients r" \
    "    ON r.id = p.recipient_id WHERE p.campaign_id = c.id" \
    "   AND p.phone = s.phone AND r.attempt > 0)))" \
    " FROM (SELECT count(*) AS n, count(DISTINCT recipient_id) AS p" \
    "  FROM inbound_messages WHERE campaign_id = c.id) a," \
    " (SELECT count(*) AS m FROM campaign_recipients" \
    "  WHERE campaign_id = c.id" \
    "   AND status IN ('sent', 'delivered', 'read')) b," \
    " (SELECT count(*) AS n, count(*) FILTER (WHERE k.billed) AS billed" \
    "  FROM conversation_messages m LEFT JOIN pricing_kinds k" \
    "  ON k.code = m.pricing WHERE m.campaign_id = c.id" \
    "   AND m.status <> 'failed') v)"

/*
 * check.c: whether campaign id can go, asked of the Graph API: its
 * verdict written on f (json: as one JSON object); 0 when it can, 65
 * when it cannot; exits 69 when the API or Postgres fails, 78 without a
 * token or a WABA id. check_child runs wa-campaign check id (the one
 * in dir, else in PATH) as a child, its verdict on stderr, so that the
 * token it reads stays in the environment of the caller's stages;
 * returns its exit status (128 + the signal that killed it).
 */
int campaign_check(PGconn *conn, const char *id, FILE *f, int json);
int check_child(const char *dir, const char *id);

/*
 * moves.c: the state of campaign id (valid until the next call), its
 * row locked FOR UPDATE in the caller's transaction with lock; exits 64
 * when there is none.
 */
const char *campaign_state(PGconn *conn, const char *id, int lock);

/* watch.c: a duration for people: "42 s", "12 min", "3 h 5 min". */
void campaign_span(char *buf, size_t size, long long seconds);

/*
 * runlock.c: one run per campaign. runlock_take holds campaign id for
 * this process: 0, or -1 after saying who holds it (host, pid, since
 * when); runlock_beat keeps it (call it often: it writes every 10 s at
 * most): -1 once another run took it over; runlock_free lets it go.
 */
int runlock_take(struct wa_pg *db, const char *id);
int runlock_beat(struct wa_pg *db);
void runlock_free(struct wa_pg *db);

/*
 * import.c: sets a completed campaign that has pending rows running
 * again, as rows imported or requeued need; returns 1 if it did.
 */
int campaign_reopen(PGconn *conn, const char *id);

/*
 * phonelist.c: reads path ("-": stdin): one number per line, or a CSV
 * with a "phone" column (an export), or NDJSON with "phone"; cc: the
 * country code of national numbers, or NULL. A bad line is reported
 * with its number and copied to reject (if not NULL); the others go
 * into a as an array literal. Returns how many went in, *bad how many
 * were rejected; exits 66 when path cannot be opened, 74 when reading
 * fails, 75 on a signal (what: what is then not done, as "nothing
 * requeued").
 */
unsigned long phone_list(const char *path, const char *cc,
    const char *reject, const char *what, struct wa_buf *a,
    unsigned long *bad);

/*
 * status.c: where a campaign stands, as one JSON object built by one
 * statement (every figure from one snapshot); NULL when there is none.
 */
struct json_object *status_report(PGconn *conn, const char *id);

/* html.c: the report page, from report.c's figures. */
void html_report(FILE *f, struct json_object *figures);

/*
 * watch.c: where a campaign stands for run and watch, read in one
 * statement (a snapshot), and the one line of progress drawn from
 * successive snapshots.
 */
struct snap {
	char		 state[16];	/* draft, running, paused, ... */
	char		 reason[256];	/* state_reason, or "" */
	long long	 total;		/* rows */
	long long	 done;		/* settled: phase 2 */
	long long	 failed;
	long long	 pending;	/* of which due now: due */
	long long	 due;
	long long	 sending;
	long long	 unknown;
	long long	 next_ms;	/* to the next retry not due, or -1 */
	long long	 unknown_age;	/* ms since the oldest unknown, or
					   -1 */
	long long	 sending_age;	/* ms since the oldest claim, or -1 */
	long long	 suppressed;	/* settled, never sent: opted out */
	long long	 expired;	/* settled, never sent: too late */
	long long	 start_ms;	/* scheduled: ms to its start (0 when
					   due); else -1 */
	int64_t		 at;		/* when taken (wa_now_ms) */
	int64_t		 wall;		/* the same, wall clock (unix ms) */
};

/*
 * Fills s for campaign id; -1 when there is no such campaign. With wait,
 * waits for Postgres up to its timeout (then exits 69); without, -2 at
 * once while it is down.
 */
int snap_take(struct wa_pg *db, const char *id, struct snap *s, int wait);

#define METER_N 16

/* Successive snapshots: the rate now (the last ~10 s) and on average. */
struct meter {
	int64_t		 t0;
	long long	 done0;
	int		 n, head;
	struct {
		int64_t		 at;
		long long	 done;
	}		 ring[METER_N];
};

void meter_init(struct meter *m, const struct snap *s);
/*
 * Adds s to m and writes the line into buf: "campaign 42: 1200/3000
 * (40.0%), 65/s now, 61/s average, ETA 28 s; 3 retries pending, the
 * next at 2026-...Z".
 */
void meter_line(struct meter *m, const char *id, const struct snap *s,
    char *buf, size_t size);

#endif
