/*
 * moves.c: wa-campaign start, pause, resume and cancel: a campaign's
 * life as the operator drives it, each move from the states it allows,
 * in one UPDATE that checks the state, so two operators at once cannot
 * both move it. And the state of a campaign, as other commands read it.
 *
 * start checks the campaign first (check.c), unless --no-check: it asks
 * the Graph API for the template and the number, and a campaign that
 * fails it stays a draft. start --at TIME schedules it instead: TIME is
 * RFC 3339, or a date and time of day ("2026-12-06 09:00"), or a time of
 * day alone (the next one), the last two in the campaign's time zone
 * (--tz, else UTC); it must be to come. The first claim from then on
 * starts it (sql/schema.sql's wapipe_claim), or wa-campaign run, which
 * waits for it. start without --at starts a scheduled one now; pause
 * and cancel take it too; resume before its time schedules it again.
 *
 * Reads and writes campaigns (Postgres); start --at writes when the
 * campaign starts on stdout. Returns 0; exits 64 on an unknown
 * campaign, 65 when the campaign's state does not allow the move
 * (saying why), start's check refuses it, or --at is not a time to come
 * (nothing changed), 69 when Postgres fails or the check cannot reach
 * the API, 78 when the check has no token or no WABA id.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "records/stamp.h"
#include "campaign.h"

/* From which states each move goes, what it sets, the rule it keeps. */
static const struct move {
	const char	*cmd, *from, *set, *rule, *reason;
} moves[] = {
	{ "start", "{draft,scheduled}", "state = 'running',"
	    " started_at = coalesce(started_at, now()),"
	    " start_at = least(start_at, now())",
	    "only a draft or a scheduled one can be started", NULL },
	{ "pause", "{running,scheduled}", "state = 'paused'",
	    "only a running or scheduled one can be paused",
	    "paused by the operator" },
	{ "resume", "{paused}", "state = CASE WHEN start_at > now()"
	    " THEN 'scheduled' ELSE 'running' END,"
	    " started_at = CASE WHEN start_at > now() THEN started_at"
	    " ELSE coalesce(started_at, now()) END",
	    "only a paused one can be resumed", NULL },
	{ "cancel", "{draft,scheduled,running,paused}",
	    "state = 'cancelled', finished_at = now()",
	    "a completed or cancelled one stays so",
	    "cancelled by the operator" },
};

/*
 * The time --at names (one of $2, an instant; $3, a date and time of day;
 * $4, a time of day: its next one), in the campaign's zone. With the
 * state, whether it is to come, and how to say it. One parameter each,
 * the others NULL: a cast of the wrong kind would fail even in a branch
 * not taken, when the planner folds it.
 */
static const char *when_sql =
    "SELECT c.state, w.at > now(), to_char(w.at AT TIME ZONE z,"
    " 'YYYY-MM-DD HH24:MI:SS'), z, " ISO("w.at") ","
    " extract(epoch FROM w.at - now())::bigint"
    " FROM campaigns c, LATERAL (SELECT coalesce(c.tz, 'UTC') AS z,"
    "  (now() AT TIME ZONE coalesce(c.tz, 'UTC'))::date AS d) q,"
    " LATERAL (SELECT coalesce($2::timestamptz,"
    "  $3::timestamp AT TIME ZONE z,"
    "  CASE WHEN (d + $4::time) AT TIME ZONE z > now()"
    "  THEN (d + $4::time) AT TIME ZONE z"
    "  ELSE (d + 1 + $4::time) AT TIME ZONE z END) AS at) w"
    " WHERE c.id = $1";

static const char *schedule_sql =
    "UPDATE campaigns SET state = 'scheduled', start_at = $2, updated_at"
    " = now(), state_reason = 'to start at ' || $3"
    " WHERE id = $1 AND state IN ('draft', 'scheduled') AND $2 > now()";

const char *
campaign_state(PGconn *conn, const char *id, int lock)
{
	static char s[16];
	PGresult *res = wa_pg_must(conn, lock ?
	    "SELECT state FROM campaigns WHERE id = $1 FOR UPDATE" :
	    "SELECT state FROM campaigns WHERE id = $1", 1, &id);

	*s = '\0';
	if (PQntuples(res) == 1)
		snprintf(s, sizeof s, "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	if (*s == '\0')
		wa_die(EX_USAGE, "no campaign %s", id);
	return s;
}

static const struct move *
find(const char *cmd)
{
	size_t i;

	for (i = 0; i < sizeof moves / sizeof *moves; i++)
		if (strcmp(moves[i].cmd, cmd) == 0)
			return &moves[i];
	return NULL;
}

/* start --at s: campaign id scheduled, said on stdout; 0. */
static int
schedule(PGconn *conn, const char *id, const char *s)
{
	char t[WA_STAMP_MAX], in[32], state[16], local[40], zone[64], at[40];
	enum wa_when kind;
	const char *why = wa_stamp_when(s, strlen(s), t, &kind);
	const char *p[4] = { id }, *q[3];
	PGresult *res;
	int found, later = 0, done;

	if (why != NULL)
		wa_die(EX_DATAERR, "--at '%s': %s", s, why);
	p[1 + kind] = t;
	/* Copied out and cleared before any exit: nothing left to leak. */
	res = wa_pg_must(conn, when_sql, 4, p);
	if ((found = PQntuples(res) == 1)) {
		snprintf(state, sizeof state, "%s", PQgetvalue(res, 0, 0));
		later = *PQgetvalue(res, 0, 1) == 't';
		snprintf(local, sizeof local, "%s", PQgetvalue(res, 0, 2));
		snprintf(zone, sizeof zone, "%s", PQgetvalue(res, 0, 3));
		snprintf(at, sizeof at, "%s", PQgetvalue(res, 0, 4));
		campaign_span(in, sizeof in, atoll(PQgetvalue(res, 0, 5)));
	}
	PQclear(res);
	if (!found)
		wa_die(EX_USAGE, "no campaign %s", id);
	if (strcmp(state, "draft") != 0 && strcmp(state, "scheduled") != 0)
		wa_die(EX_DATAERR, "campaign %s is %s: only a draft or a "
		    "scheduled one can be scheduled", id, state);
	if (!later)
		wa_die(EX_DATAERR, "--at %s is %s %s, not to come: nothing "
		    "changed", s, local, zone);
	q[0] = id;
	q[1] = q[2] = at;
	res = wa_pg_must(conn, schedule_sql, 3, q);
	done = strcmp(PQcmdTuples(res), "1") == 0;
	PQclear(res);
	if (!done)
		wa_die(EX_DATAERR, "campaign %s is %s: only a draft or a "
		    "scheduled one can be scheduled", id,
		    campaign_state(conn, id, 0));
	printf("campaign %s starts at %s %s (%s), in %s\n", id, local, zone,
	    at, in);
	return 0;
}

/* The move o->name, of campaign o->args[0]. */
int
cmd_move(struct opts *o)
{
	const struct move *m = find(o->name);
	const char *id = o->args[0], *reason = o->val[REASON], *state;
	const char *p[] = { id, reason ? reason : m->reason, m->from };
	PGconn *conn = campaign_db(o);
	PGresult *res;
	char sql[512];
	int done, st;

	/* Start: a draft or a scheduled one, and its check first
	 * (check.c); its verdict on stderr, nothing moved if it fails. */
	if (strcmp(m->cmd, "start") == 0 && !(o->given & O(NOCHECK))) {
		state = campaign_state(conn, id, 0);
		if (strcmp(state, "draft") != 0 &&
		    strcmp(state, "scheduled") != 0)
			wa_die(EX_DATAERR, "campaign %s is %s: %s", id, state,
			    m->rule);
		if ((st = campaign_check(conn, id, stderr, 0)) != 0)
			wa_die(st, "campaign %s is not started: it failed its "
			    "check (wa-campaign start --no-check %s starts it "
			    "all the same)", id, id);
	}
	if (o->given & O(AT))
		return schedule(conn, id, o->val[AT]);
	snprintf(sql, sizeof sql, "UPDATE campaigns SET %s, state_reason ="
	    " $2, updated_at = now() WHERE id = $1 AND state = ANY ($3)",
	    m->set);
	res = wa_pg_must(conn, sql, 3, p);
	done = strcmp(PQcmdTuples(res), "1") == 0;
	PQclear(res);
	if (!done)
		wa_die(EX_DATAERR, "campaign %s is %s: %s", id,
		    campaign_state(conn, id, 0), m->rule);
	return 0;
}
