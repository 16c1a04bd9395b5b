/*
 * setting.c: wa-campaign set. Changes the template, its language, the
 * maximum attempts, the on_unknown policy and the circuit breaker (the
 * --breaker that wa-campaign run gives wa-send; "default" clears it) of
 * a campaign that is a draft or paused, so that a halted campaign can be
 * fixed and resumed without SQL. A running campaign is refused: its
 * pipeline has read the settings already, so pause it first.
 *
 * Reads and writes one row of campaigns (Postgres), in one statement that
 * locks it and checks its state. Writes one line per value changed on
 * stderr ("campaign 42: template reminder -> reminder_v2"), nothing on
 * stdout. Returns 0; exits 64 on a bad value or an unknown campaign, 65
 * when the campaign is running, completed or cancelled, 69 when Postgres
 * fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "pg/setting.h"

/* $2..$6: the new values or NULL (kept); $7: clear the breaker. */
static const char *set_sql =
    "WITH old AS (SELECT * FROM campaigns WHERE id = $1 FOR UPDATE)"
    " UPDATE campaigns c SET updated_at = now(),"
    "  template_name = coalesce($2, c.template_name),"
    "  template_lang = coalesce($3, c.template_lang),"
    "  max_attempts = coalesce($4::integer, c.max_attempts),"
    "  on_unknown = coalesce($5, c.on_unknown),"
    "  breaker = CASE WHEN $7 THEN NULL"
    "   ELSE coalesce($6::integer, c.breaker) END"
    " FROM old WHERE c.id = old.id AND old.state IN ('draft', 'paused')"
    " RETURNING old.template_name, c.template_name,"
    "  old.template_lang, c.template_lang,"
    "  old.max_attempts, c.max_attempts, old.on_unknown, c.on_unknown,"
    "  coalesce(old.breaker::text, 'default'),"
    "  coalesce(c.breaker::text, 'default')";

static const char *const names[] = { "template", "language",
    "max attempts", "on_unknown", "breaker" };

/* Whether s is n to max bytes of the characters in set. */
static int
made_of(const char *s, size_t n, size_t max, const char *set)
{
	size_t len = strlen(s);

	return len >= n && len <= max && strspn(s, set) == len;
}

static void
check(const struct wa_setting *s)
{
	if (s->template == NULL && s->language == NULL &&
	    s->max_attempts == NULL && s->on_unknown == NULL &&
	    s->breaker == NULL)
		wa_die(EX_USAGE, "set needs one or more of --template, "
		    "--language, --max-attempts, --on-unknown, --breaker");
	if (s->template != NULL && !made_of(s->template, 1, 512,
	    "abcdefghijklmnopqrstuvwxyz0123456789_"))
		wa_die(EX_USAGE, "a template's name is lower-case letters, "
		    "digits and '_' (as in WhatsApp Manager), not '%s'",
		    s->template);
	if (s->language != NULL && !made_of(s->language, 2, 15,
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"))
		wa_die(EX_USAGE, "a template's language is a code such as en "
		    "or en_US, not '%s'", s->language);
	if (s->max_attempts != NULL)
		wa_num(s->max_attempts, 1, 1000, "max attempts");
	if (s->on_unknown != NULL && strcmp(s->on_unknown, "resend") != 0 &&
	    strcmp(s->on_unknown, "fail") != 0)
		wa_die(EX_USAGE, "--on-unknown is resend or fail, not '%s'",
		    s->on_unknown);
	if (s->breaker != NULL && strcmp(s->breaker, "default") != 0)
		wa_num(s->breaker, 1, 1000000, "breaker");
}

int
wa_setting(PGconn *conn, const struct wa_setting *s)
{
	int clear = s->breaker != NULL && strcmp(s->breaker, "default") == 0;
	const char *p[] = { s->id, s->template, s->language, s->max_attempts,
	    s->on_unknown, clear ? NULL : s->breaker, clear ? "t" : "f" };
	char state[16] = "";
	PGresult *res;
	int i;

	check(s);
	res = wa_pg_must(conn, set_sql, 7, p);
	if (PQntuples(res) == 1) {
		for (i = 0; i < 5; i++)
			if (strcmp(PQgetvalue(res, 0, 2 * i),
			    PQgetvalue(res, 0, 2 * i + 1)) != 0)
				wa_warn("campaign %s: %s %s -> %s", s->id,
				    names[i], PQgetvalue(res, 0, 2 * i),
				    PQgetvalue(res, 0, 2 * i + 1));
		PQclear(res);
		return 0;
	}
	PQclear(res);
	res = wa_pg_must(conn, "SELECT state FROM campaigns WHERE id = $1",
	    1, p);
	if (PQntuples(res) == 1)
		snprintf(state, sizeof state, "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	if (*state == '\0')
		wa_die(EX_USAGE, "no campaign %s", s->id);
	if (strcmp(state, "running") == 0)
		wa_die(EX_DATAERR, "campaign %s is running: pause it before "
		    "changing it (wa-campaign pause %s)", s->id, s->id);
	wa_die(EX_DATAERR, "campaign %s is %s: only a draft or paused one "
	    "can be changed", s->id, state);
}
