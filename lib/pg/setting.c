/*
 * setting.c: wa-campaign set, and create's settings. Changes a draft or
 * paused campaign's template, language, maximum attempts, on_unknown
 * policy, circuit breaker (the --breaker wa-campaign run gives wa-send;
 * "default" clears it), expiry, send window, time zone (the three
 * cleared by "none"), weight and priority, so that a halted campaign can
 * be fixed and resumed without SQL. A running campaign is refused: its
 * pipeline has read some settings already, so pause it first.
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

#include "core/buf.h"
#include "core/err.h"
#include "pg/setting.h"

/*
 * Each setting: its name in messages, the assignment ($%1$d: its
 * parameter), how its value reads (%1$s: old or c), and the word that
 * clears it, if any.
 */
static const struct col {
	const char	*name, *set, *show, *clear;
} cols[WA_SET_N] = {
	{ "template", "template_name = $%1$d",
	    "%1$s.template_name", NULL },
	{ "language", "template_lang = $%1$d",
	    "%1$s.template_lang", NULL },
	{ "max attempts", "max_attempts = $%1$d::integer",
	    "%1$s.max_attempts::text", NULL },
	{ "on_unknown", "on_unknown = $%1$d",
	    "%1$s.on_unknown", NULL },
	{ "breaker", "breaker = $%1$d::integer",
	    "coalesce(%1$s.breaker::text, 'default')", "default" },
	{ "expires at", "expires_at = $%1$d::timestamptz",
	    "coalesce(to_char(%1$s.expires_at AT TIME ZONE 'UTC',"
	    " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), 'none')", "none" },
	{ "window", "window_from = split_part($%1$d, '-', 1)::time,"
	    " window_to = split_part($%1$d, '-', 2)::time",
	    "coalesce(to_char(%1$s.window_from, 'HH24:MI') || '-' ||"
	    " to_char(%1$s.window_to, 'HH24:MI'), 'none')", "none" },
	{ "time zone", "tz = $%1$d", "coalesce(%1$s.tz, 'none')",
	    "none" },
	{ "weight", "weight = $%1$d::integer", "%1$s.weight::text",
	    NULL },
	{ "priority", "priority = $%1$d", "%1$s.priority", NULL },
};

/* Whether s is n to max bytes of the characters in set. */
static int
made_of(const char *s, size_t n, size_t max, const char *set)
{
	size_t len = strlen(s);

	return len >= n && len <= max && strspn(s, set) == len;
}

/* Whether Postgres takes s in sql ($1) without a data error. */
static int
pg_takes(PGconn *conn, const char *sql, const char *s)
{
	PGresult *res = PQexecParams(conn, sql, 1, NULL, &s, NULL, NULL, 0);
	const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	int ok = PQresultStatus(res) == PGRES_TUPLES_OK;

	if (!ok && (state == NULL || strncmp(state, "22", 2) != 0)) {
		wa_pg_warn(conn, res, "check");
		exit(EX_UNAVAILABLE);
	}
	PQclear(res);
	return ok;
}

/* Whether s is HH:MM-HH:MM, two different times of day. */
static int
is_window(const char *s)
{
	int h1, m1, h2, m2, n = 0;

	return strlen(s) == 11 && sscanf(s, "%2d:%2d-%2d:%2d%n", &h1, &m1,
	    &h2, &m2, &n) == 4 && n == 11 && h1 >= 0 && h1 < 24 && m1 >= 0 &&
	    m1 < 60 && h2 >= 0 && h2 < 24 && m2 >= 0 && m2 < 60 &&
	    (h1 != h2 || m1 != m2) && s[2] == ':' && s[8] == ':';
}

static int
cleared(const struct wa_setting *s, int i)
{
	return cols[i].clear != NULL && s->v[i] != NULL &&
	    strcmp(s->v[i], cols[i].clear) == 0;
}

void
wa_setting_check(PGconn *conn, const struct wa_setting *s)
{
	const char *const *v = s->v;

	if (v[WA_SET_TEMPLATE] != NULL && !made_of(v[WA_SET_TEMPLATE], 1, 512,
	    "abcdefghijklmnopqrstuvwxyz0123456789_"))
		wa_die(EX_USAGE, "a template's name is lower-case letters, "
		    "digits and '_' (as in WhatsApp Manager), not '%s'",
		    v[WA_SET_TEMPLATE]);
	if (v[WA_SET_LANGUAGE] != NULL && !made_of(v[WA_SET_LANGUAGE], 2, 15,
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"))
		wa_die(EX_USAGE, "a template's language is a code such as en "
		    "or en_US, not '%s'", v[WA_SET_LANGUAGE]);
	if (v[WA_SET_MAX_ATTEMPTS] != NULL)
		wa_num(v[WA_SET_MAX_ATTEMPTS], 1, 1000, "max attempts");
	if (v[WA_SET_ON_UNKNOWN] != NULL &&
	    strcmp(v[WA_SET_ON_UNKNOWN], "resend") != 0 &&
	    strcmp(v[WA_SET_ON_UNKNOWN], "fail") != 0)
		wa_die(EX_USAGE, "--on-unknown is resend or fail, not '%s'",
		    v[WA_SET_ON_UNKNOWN]);
	if (v[WA_SET_BREAKER] != NULL && !cleared(s, WA_SET_BREAKER))
		wa_num(v[WA_SET_BREAKER], 1, 1000000, "breaker");
	if (v[WA_SET_EXPIRES_AT] != NULL && !cleared(s, WA_SET_EXPIRES_AT) &&
	    !pg_takes(conn, "SELECT $1::timestamptz", v[WA_SET_EXPIRES_AT]))
		wa_die(EX_USAGE, "--expires-at is a time such as "
		    "2026-12-24T18:00:00+01:00 (or none), not '%s'",
		    v[WA_SET_EXPIRES_AT]);
	if (v[WA_SET_WINDOW] != NULL && !cleared(s, WA_SET_WINDOW) &&
	    !is_window(v[WA_SET_WINDOW]))
		wa_die(EX_USAGE, "--window is HH:MM-HH:MM in the recipient's "
		    "local time, such as 09:00-20:00 (or none), not '%s'",
		    v[WA_SET_WINDOW]);
	if (v[WA_SET_TZ] != NULL && !cleared(s, WA_SET_TZ) &&
	    ((strchr(v[WA_SET_TZ], '/') == NULL && strcmp(v[WA_SET_TZ],
	    "UTC") != 0) || !pg_takes(conn, "SELECT now() AT TIME ZONE $1",
	    v[WA_SET_TZ])))
		wa_die(EX_USAGE, "--tz is a time zone such as Europe/Rome "
		    "(tzdata's names, or UTC; or none), not '%s'",
		    v[WA_SET_TZ]);
	if (v[WA_SET_WEIGHT] != NULL)
		wa_num(v[WA_SET_WEIGHT], 1, 1000, "weight");
	if (v[WA_SET_PRIORITY] != NULL &&
	    strcmp(v[WA_SET_PRIORITY], "normal") != 0 &&
	    strcmp(v[WA_SET_PRIORITY], "urgent") != 0)
		wa_die(EX_USAGE, "--priority is normal or urgent, not '%s'",
		    v[WA_SET_PRIORITY]);
}

int
wa_setting_any(const struct wa_setting *s)
{
	int i;

	for (i = 0; i < WA_SET_N; i++)
		if (s->v[i] != NULL)
			return 1;
	return 0;
}

/* The statement for the settings given; p[] their parameters. */
static int
statement(struct wa_buf *sql, const struct wa_setting *s,
    const char **p, int *show)
{
	int i, n = 1, k = 0;

	p[0] = s->id;
	wa_buf_puts(sql, "WITH old AS (SELECT * FROM campaigns WHERE id = $1"
	    " FOR UPDATE) UPDATE campaigns c SET updated_at = now()");
	for (i = 0; i < WA_SET_N; i++)
		if (s->v[i] != NULL) {
			p[n++] = cleared(s, i) ? NULL : s->v[i];
			wa_buf_puts(sql, ", ");
			wa_buf_printf(sql, cols[i].set, n);
			show[k++] = i;
		}
	wa_buf_puts(sql, " FROM old WHERE c.id = old.id"
	    " AND old.state IN ('draft', 'paused') RETURNING 1");
	for (i = 0; i < k; i++) {
		wa_buf_puts(sql, ", ");
		wa_buf_printf(sql, cols[show[i]].show, "old");
		wa_buf_puts(sql, ", ");
		wa_buf_printf(sql, cols[show[i]].show, "c");
	}
	return n;
}

int
wa_setting(PGconn *conn, const struct wa_setting *s, int quiet)
{
	struct wa_buf sql = { 0 };
	const char *p[WA_SET_N + 1];
	int show[WA_SET_N], i, n, k;
	char state[16] = "";
	PGresult *res;

	if (!wa_setting_any(s))
		wa_die(EX_USAGE, "set needs one or more of --template, "
		    "--language, --max-attempts, --on-unknown, --breaker, "
		    "--expires-at, --window, --tz, --weight, --priority");
	wa_setting_check(conn, s);
	n = statement(&sql, s, p, show);
	res = wa_pg_must(conn, sql.s, n, p);
	wa_buf_free(&sql);
	if (PQntuples(res) == 1) {
		for (k = 0; k < n - 1; k++) {
			i = 1 + 2 * k;
			if (!quiet && strcmp(PQgetvalue(res, 0, i),
			    PQgetvalue(res, 0, i + 1)) != 0)
				wa_warn("campaign %s: %s %s -> %s", s->id,
				    cols[show[k]].name, PQgetvalue(res, 0, i),
				    PQgetvalue(res, 0, i + 1));
		}
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
