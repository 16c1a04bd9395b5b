/*
 * moves.c: wa-campaign start, pause, resume and cancel: a campaign's
 * life as the operator drives it, each move from the states it allows,
 * in one UPDATE that checks the state, so two operators at once cannot
 * both move it. And the state of a campaign, as other commands read it.
 *
 * start checks the campaign first (check.c), unless --no-check: it asks
 * the Graph API for the template and the number, and a campaign that
 * fails it stays a draft.
 *
 * Reads and writes campaigns (Postgres). Returns 0; exits 64 on an
 * unknown campaign, 65
 * when the campaign's state does not allow the move (saying why) or
 * start's check refuses it, 69 when Postgres fails or the check cannot
 * reach the API, 78 when the check has no token or no WABA id.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "campaign.h"

/* From where to where each move goes, and the rule when it cannot. */
static const struct move {
	const char	*cmd, *from, *to, *rule, *reason;
} moves[] = {
	{ "start", "{draft}", "running", "only a draft can be started",
	    NULL },
	{ "pause", "{running}", "paused", "only a running one can be paused",
	    "paused by the operator" },
	{ "resume", "{paused}", "running", "only a paused one can be resumed",
	    NULL },
	{ "cancel", "{draft,running,paused}", "cancelled",
	    "a completed or cancelled one stays so",
	    "cancelled by the operator" },
};

static const char *move_sql =
    "UPDATE campaigns SET state = $2, state_reason = $3, updated_at = now(),"
    " started_at = CASE WHEN $2 = 'running' THEN coalesce(started_at,"
    "  now()) ELSE started_at END,"
    " finished_at = CASE WHEN $2 = 'cancelled' THEN now()"
    "  ELSE finished_at END"
    " WHERE id = $1 AND state = ANY ($4::text[])";

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

/* The move o->name, of campaign o->args[0]. */
int
cmd_move(struct opts *o)
{
	const struct move *m = find(o->name);
	const char *id = o->args[0], *reason = o->val[REASON];
	const char *p[] = { id, m->to, reason ? reason : m->reason, m->from };
	PGconn *conn = campaign_db(o);
	PGresult *res;
	int done, st;

	/* Start: a draft, and its check first (check.c); its verdict on
	 * stderr, nothing moved if it fails. */
	if (strcmp(m->cmd, "start") == 0 && !(o->given & O(NOCHECK))) {
		if (strcmp(campaign_state(conn, id, 0), "draft") != 0)
			wa_die(EX_DATAERR, "campaign %s is %s: %s", id,
			    campaign_state(conn, id, 0), m->rule);
		if ((st = campaign_check(conn, id, stderr, 0)) != 0)
			wa_die(st, "campaign %s is not started: it failed its "
			    "check (wa-campaign start --no-check %s starts it "
			    "all the same)", id, id);
	}
	res = wa_pg_must(conn, move_sql, 4, p);
	done = strcmp(PQcmdTuples(res), "1") == 0;
	PQclear(res);
	if (!done)
		wa_die(EX_DATAERR, "campaign %s is %s: %s", id,
		    campaign_state(conn, id, 0), m->rule);
	return 0;
}
