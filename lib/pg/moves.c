/*
 * moves.c: a campaign's life as the operator drives it. create inserts a
 * draft; start, pause, resume and cancel move it between states, each
 * from the states it allows, in one UPDATE that checks the state, so two
 * operators at once cannot both move it.
 *
 * Reads and writes campaigns (Postgres). create writes the new id on
 * stdout. Returns 0; exits 64 on a bad value or an unknown campaign, 65
 * when the campaign's state does not allow the move (saying why), 69
 * when Postgres fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "pg/moves.h"

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
wa_campaign_state(PGconn *conn, const char *id)
{
	static char s[16];
	PGresult *res = wa_pg_must(conn,
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

int
wa_campaign_is_move(const char *cmd)
{
	return find(cmd) != NULL;
}

int
wa_campaign_move(PGconn *conn, const char *cmd, const char *id,
    const char *reason)
{
	const struct move *m = find(cmd);
	const char *p[] = { id, m->to, reason ? reason : m->reason, m->from };
	PGresult *res = wa_pg_must(conn, move_sql, 4, p);
	int done = strcmp(PQcmdTuples(res), "1") == 0;

	PQclear(res);
	if (!done)
		wa_die(EX_DATAERR, "campaign %s is %s: %s", id,
		    wa_campaign_state(conn, id), m->rule);
	return 0;
}

int
wa_campaign_create(PGconn *conn, const char *name, const char *number,
    struct wa_setting *s)
{
	const char *p[] = { name, number, s->v[WA_SET_TEMPLATE],
	    s->v[WA_SET_LANGUAGE] ? s->v[WA_SET_LANGUAGE] : "en_US",
	    s->v[WA_SET_MAX_ATTEMPTS] ? s->v[WA_SET_MAX_ATTEMPTS] : "10",
	    s->v[WA_SET_ON_UNKNOWN] ? s->v[WA_SET_ON_UNKNOWN] : "resend" };
	PGresult *res;

	if (p[0] == NULL || p[1] == NULL || p[2] == NULL)
		wa_die(EX_USAGE, "create needs --name, --phone-number-id and "
		    "--template");
	if (*p[1] == '\0' || p[1][strspn(p[1], "0123456789")] != '\0')
		wa_die(EX_USAGE, "the phone number id is the number's id in "
		    "the Cloud API (digits), not '%s'", p[1]);
	wa_setting_check(conn, s);
	/* The rest of the settings, in the same transaction. */
	PQclear(wa_pg_must(conn, "BEGIN", 0, NULL));
	res = wa_pg_must(conn, "INSERT INTO campaigns (name, phone_number_id,"
	    " template_name, template_lang, max_attempts, on_unknown)"
	    " VALUES ($1, $2, $3, $4, $5, $6) RETURNING id", 6, p);
	s->id = PQgetvalue(res, 0, 0);
	s->v[WA_SET_TEMPLATE] = s->v[WA_SET_LANGUAGE] = NULL;
	s->v[WA_SET_MAX_ATTEMPTS] = s->v[WA_SET_ON_UNKNOWN] = NULL;
	if (wa_setting_any(s))
		wa_setting(conn, s, 1);
	PQclear(wa_pg_must(conn, "COMMIT", 0, NULL));
	printf("%s\n", s->id);
	PQclear(res);
	return 0;
}
