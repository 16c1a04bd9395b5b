/*
 * create.c: wa-campaign create and set. create inserts a draft with its
 * settings and writes its id on stdout; set changes a draft or
 * paused campaign's template, language, maximum attempts, on_unknown
 * policy, circuit breaker (the --breaker wa-campaign run gives wa-send;
 * "default" clears it), expiry, send window, time zone (the three
 * cleared by "none"), weight, priority and the WhatsApp Business Account
 * its template is in (--waba-id, "none" clears it; create takes
 * WA_WABA_ID when it is not given), so that a halted campaign can
 * be fixed and resumed without SQL. A running campaign is refused: its
 * pipeline has read some settings already, so pause it first.
 *
 * Reads and writes one row of campaigns (Postgres), set in one statement
 * that locks it and checks its state. set writes one line per value
 * changed on stderr ("campaign 42: template reminder -> reminder_v2"),
 * nothing on stdout. Returns 0; exits 64 on a bad value or an unknown
 * campaign, 65
 * when the campaign is running, completed or cancelled, 69 when Postgres
 * fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "records/stamp.h"
#include "campaign.h"

/* The settings, each an option. */
enum { SET_TEMPLATE, SET_LANGUAGE, SET_MAX_ATTEMPTS, SET_ON_UNKNOWN,
    SET_BREAKER, SET_EXPIRES_AT, SET_WINDOW, SET_TZ, SET_WEIGHT,
    SET_PRIORITY, SET_WABA, SET_N };

/* Each value as given, or NULL: left as it is. */
struct setting {
	const char	*id;
	const char	*v[SET_N];
};

/*
 * Each setting: its option, its name in messages, the assignment ($%1$d: its
 * parameter), how its value reads (%1$s: old or c), and the word that
 * clears it, if any.
 */
static const struct col {
	int		 opt;
	const char	*name, *set, *show, *clear;
} cols[SET_N] = {
	{ TEMPLATE, "template", "template_name = $%1$d",
	    "%1$s.template_name", NULL },
	{ LANG, "language", "template_lang = $%1$d",
	    "%1$s.template_lang", NULL },
	{ MAXATT, "max attempts", "max_attempts = $%1$d::integer",
	    "%1$s.max_attempts::text", NULL },
	{ UNKNOWN, "on_unknown", "on_unknown = $%1$d",
	    "%1$s.on_unknown", NULL },
	{ BREAKER, "breaker", "breaker = $%1$d::integer",
	    "coalesce(%1$s.breaker::text, 'default')", "default" },
	{ EXPIRES, "expires at", "expires_at = $%1$d::timestamptz",
	    "coalesce(to_char(%1$s.expires_at AT TIME ZONE 'UTC',"
	    " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), 'none')", "none" },
	{ WINDOW, "window", "window_from = split_part($%1$d, '-', 1)::time,"
	    " window_to = split_part($%1$d, '-', 2)::time",
	    "coalesce(to_char(%1$s.window_from, 'HH24:MI') || '-' ||"
	    " to_char(%1$s.window_to, 'HH24:MI'), 'none')", "none" },
	{ TZ, "time zone", "tz = $%1$d", "coalesce(%1$s.tz, 'none')",
	    "none" },
	{ WEIGHT, "weight", "weight = $%1$d::integer", "%1$s.weight::text",
	    NULL },
	{ PRIORITY, "priority", "priority = $%1$d", "%1$s.priority", NULL },
	{ WABA, "WABA id", "waba_id = $%1$d", "coalesce(%1$s.waba_id, 'none')",
	    "none" },
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

/* Exits 64 unless s is an RFC 3339 time still to come. */
static void
expiry(PGconn *conn, const char *s)
{
	char t[WA_STAMP_MAX];
	const char *why = wa_stamp(s, strlen(s), t), *p = t;
	PGresult *res;
	int past;

	if (why != NULL)
		wa_die(EX_USAGE, "--expires-at is an RFC 3339 time such as "
		    "2026-12-24T18:00:00+01:00 (or none), not '%s': %s", s,
		    why);
	res = wa_pg_must(conn, "SELECT $1::timestamptz <= now()", 1, &p);
	past = *PQgetvalue(res, 0, 0) == 't';
	PQclear(res);
	if (past)
		wa_die(EX_USAGE, "--expires-at %s is past: nothing would be "
		    "sent", s);
}

static int
cleared(const struct setting *s, int i)
{
	return cols[i].clear != NULL && s->v[i] != NULL &&
	    strcmp(s->v[i], cols[i].clear) == 0;
}

/* Exits 64 on a value that is not one. */
static void
check(PGconn *conn, const struct setting *s)
{
	const char *const *v = s->v;

	if (v[SET_TEMPLATE] != NULL && !made_of(v[SET_TEMPLATE], 1, 512,
	    "abcdefghijklmnopqrstuvwxyz0123456789_"))
		wa_die(EX_USAGE, "a template's name is lower-case letters, "
		    "digits and '_' (as in WhatsApp Manager), not '%s'",
		    v[SET_TEMPLATE]);
	if (v[SET_LANGUAGE] != NULL && !made_of(v[SET_LANGUAGE], 2, 15,
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"))
		wa_die(EX_USAGE, "a template's language is a code such as en "
		    "or en_US, not '%s'", v[SET_LANGUAGE]);
	if (v[SET_MAX_ATTEMPTS] != NULL)
		wa_num(v[SET_MAX_ATTEMPTS], 1, 1000, "max attempts");
	if (v[SET_ON_UNKNOWN] != NULL &&
	    strcmp(v[SET_ON_UNKNOWN], "resend") != 0 &&
	    strcmp(v[SET_ON_UNKNOWN], "fail") != 0)
		wa_die(EX_USAGE, "--on-unknown is resend or fail, not '%s'",
		    v[SET_ON_UNKNOWN]);
	if (v[SET_BREAKER] != NULL && !cleared(s, SET_BREAKER))
		wa_num(v[SET_BREAKER], 1, 1000000, "breaker");
	if (v[SET_EXPIRES_AT] != NULL && !cleared(s, SET_EXPIRES_AT))
		expiry(conn, v[SET_EXPIRES_AT]);
	if (v[SET_WINDOW] != NULL && !cleared(s, SET_WINDOW) &&
	    !is_window(v[SET_WINDOW]))
		wa_die(EX_USAGE, "--window is HH:MM-HH:MM in the recipient's "
		    "local time, such as 09:00-20:00 (or none), not '%s'",
		    v[SET_WINDOW]);
	if (v[SET_TZ] != NULL && !cleared(s, SET_TZ) &&
	    ((strchr(v[SET_TZ], '/') == NULL && strcmp(v[SET_TZ],
	    "UTC") != 0) || !pg_takes(conn, "SELECT now() AT TIME ZONE $1",
	    v[SET_TZ])))
		wa_die(EX_USAGE, "--tz is a time zone such as Europe/Rome "
		    "(tzdata's names, or UTC; or none), not '%s'",
		    v[SET_TZ]);
	if (v[SET_WEIGHT] != NULL)
		wa_num(v[SET_WEIGHT], 1, 1000, "weight");
	if (v[SET_WABA] != NULL && !cleared(s, SET_WABA) &&
	    !made_of(v[SET_WABA], 1, 32, "0123456789"))
		wa_die(EX_USAGE, "a WhatsApp Business Account's id is its "
		    "digits (or none), not '%s'", v[SET_WABA]);
	if (v[SET_PRIORITY] != NULL &&
	    strcmp(v[SET_PRIORITY], "normal") != 0 &&
	    strcmp(v[SET_PRIORITY], "urgent") != 0)
		wa_die(EX_USAGE, "--priority is normal or urgent, not '%s'",
		    v[SET_PRIORITY]);
}

/* Whether any value is given. */
static int
any(const struct setting *s)
{
	int i;

	for (i = 0; i < SET_N; i++)
		if (s->v[i] != NULL)
			return 1;
	return 0;
}

/* The statement for the settings given; p[] their parameters. */
static int
statement(struct wa_buf *sql, const struct setting *s,
    const char **p, int *show)
{
	int i, n = 1, k = 0;

	p[0] = s->id;
	wa_buf_puts(sql, "WITH old AS (SELECT * FROM campaigns WHERE id = $1"
	    " FOR UPDATE) UPDATE campaigns c SET updated_at = now()");
	for (i = 0; i < SET_N; i++)
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

/*
 * Changes the campaign; quiet: say nothing of what changed (a campaign
 * just created).
 */
static int
change(PGconn *conn, const struct setting *s, int quiet)
{
	struct wa_buf sql = { 0 };
	const char *p[SET_N + 1];
	int show[SET_N], i, n, k;
	const char *state;
	PGresult *res;

	if (!any(s))
		wa_die(EX_USAGE, "set needs one or more of --template, "
		    "--language, --max-attempts, --on-unknown, --breaker, "
		    "--expires-at, --window, --tz, --weight, --priority, "
		    "--waba-id");
	check(conn, s);
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
	state = campaign_state(conn, s->id, 0);
	if (strcmp(state, "running") == 0)
		wa_die(EX_DATAERR, "campaign %s is running: pause it before "
		    "changing it (wa-campaign pause %s)", s->id, s->id);
	wa_die(EX_DATAERR, "campaign %s is %s: only a draft or paused one "
	    "can be changed", s->id, state);
}

static int
create(PGconn *conn, const char *name, const char *number,
    struct setting *s)
{
	const char *waba, *p[] = { name, number, s->v[SET_TEMPLATE],
	    s->v[SET_LANGUAGE] ? s->v[SET_LANGUAGE] : "en_US",
	    s->v[SET_MAX_ATTEMPTS] ? s->v[SET_MAX_ATTEMPTS] : "10",
	    s->v[SET_ON_UNKNOWN] ? s->v[SET_ON_UNKNOWN] : "resend" };
	PGresult *res;

	if (p[0] == NULL || p[1] == NULL || p[2] == NULL)
		wa_die(EX_USAGE, "create needs --name, --phone-number-id and "
		    "--template");
	if (name[strspn(name, " \t")] == '\0')
		wa_die(EX_USAGE, "a campaign's name cannot be blank");
	campaign_number_id(p[1]);
	check(conn, s);
	/* The rest of the settings, in the same transaction. */
	PQclear(wa_pg_must(conn, "BEGIN", 0, NULL));
	res = wa_pg_must(conn, "INSERT INTO campaigns (name, phone_number_id,"
	    " template_name, template_lang, max_attempts, on_unknown)"
	    " VALUES ($1, $2, $3, $4, $5, $6) RETURNING id", 6, p);
	s->id = PQgetvalue(res, 0, 0);
	s->v[SET_TEMPLATE] = s->v[SET_LANGUAGE] = NULL;
	s->v[SET_MAX_ATTEMPTS] = s->v[SET_ON_UNKNOWN] = NULL;
	/* The WABA of its template: --waba-id, else WA_WABA_ID, else none. */
	if (s->v[SET_WABA] == NULL && (waba = getenv("WA_WABA_ID")) != NULL &&
	    *waba != '\0')
		s->v[SET_WABA] = waba;
	if (any(s))
		change(conn, s, 1);
	PQclear(wa_pg_must(conn, "COMMIT", 0, NULL));
	printf("%s\n", s->id);
	PQclear(res);
	return 0;
}

/* The settings given as options, for campaign id. */
static struct setting
given(const struct opts *o, const char *id)
{
	struct setting st = { id, { NULL } };
	int i;

	for (i = 0; i < SET_N; i++)
		st.v[i] = o->val[cols[i].opt];
	return st;
}

int
cmd_create(struct opts *o)
{
	struct setting st = given(o, NULL);

	return create(campaign_db(o), o->val[NAME], o->val[NUMBER], &st);
}

int
cmd_set(struct opts *o)
{
	struct setting st = given(o, o->args[0]);

	return change(campaign_db(o), &st, 0);
}
