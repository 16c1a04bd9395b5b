/*
 * suppress.c: wa-campaign suppress. The suppressions are the people no
 * campaign may message, per number or for every number of the business
 * ('*'), applied by every claim (wapipe_claim).
 *
 * Reads and writes suppressions (Postgres); suppress import reads a file
 * of numbers (phonelist.c).
 * Writes the list, or the count of numbers added or removed on stdout.
 * Returns 0, or 65 when import rejected lines; exits 64 on a bad value,
 * 66, 69, 74 and 75 as the file and Postgres say.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "records/json.h"
#include "records/phone.h"
#include "campaign.h"

struct suppress {
	const char	*verb;		/* add, remove, list or import */
	const char	*scope;		/* a phone_number_id, or NULL: all */
	const char	*reason;	/* NULL: "by hand" */
	const char	*cc;		/* --country-code digits, or NULL */
	const char	*reject;	/* import: where bad lines go */
	int		 json;		/* list: NDJSON */
	char		**args;		/* numbers, or import's file */
	int		 nargs;
};

static const char *add_sql =
    "WITH a AS (INSERT INTO suppressions (scope, phone, reason)"
    "  SELECT $1, p, $3 FROM unnest($2::text[]) p"
    "  ON CONFLICT DO NOTHING RETURNING 1)"
    " SELECT count(*) FROM a";

static const char *remove_sql =
    "WITH d AS (DELETE FROM suppressions WHERE scope = $1"
    "  AND phone = ANY($2::text[]) RETURNING 1)"
    " SELECT count(*) FROM d";

static const char *list_sql =
    "SELECT CASE scope WHEN '*' THEN 'business' ELSE scope END, phone,"
    "  reason, to_char(added_at AT TIME ZONE 'UTC',"
    "  'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
    " FROM suppressions WHERE $1::text IS NULL OR scope = $1"
    " ORDER BY scope, phone";

/* Writes the list a row at a time: it may hold millions. */
static void
list(PGconn *conn, const struct suppress *s, const char *scope)
{
	static const char *const keys[] = { "scope", "phone", "reason",
	    "added_at" };
	const char *p[] = { s->scope != NULL ? scope : NULL };
	struct wa_buf line = { 0 };
	PGresult *res;
	int i, k;

	if (!PQsendQueryParams(conn, list_sql, 1, NULL, p, NULL, NULL, 0) ||
	    !PQsetSingleRowMode(conn))
		wa_die(EX_UNAVAILABLE, "postgres: %s", PQerrorMessage(conn));
	while ((res = PQgetResult(conn)) != NULL) {
		if (PQresultStatus(res) != PGRES_SINGLE_TUPLE &&
		    PQresultStatus(res) != PGRES_TUPLES_OK) {
			wa_pg_warn(conn, res, "list");
			exit(EX_UNAVAILABLE);
		}
		for (i = 0; i < PQntuples(res) && s->json; i++) {
			line.len = 0;
			wa_buf_puts(&line, "{");
			for (k = 0; k < 4; k++) {
				wa_buf_printf(&line, "%s\"%s\":", k ? "," : "",
				    keys[k]);
				wa_buf_json_string(&line, PQgetvalue(res, i, k),
				    PQgetlength(res, i, k));
			}
			wa_buf_puts(&line, "}\n");
			fwrite(line.s, 1, line.len, stdout);
		}
		for (i = 0; i < PQntuples(res) && !s->json; i++)
			printf("%s\t%s\t%s\t%s\n", PQgetvalue(res, i, 0),
			    PQgetvalue(res, i, 1), PQgetvalue(res, i, 3),
			    PQgetvalue(res, i, 2));
		PQclear(res);
	}
	wa_buf_free(&line);
}

static int
suppress(PGconn *conn, const struct suppress *s)
{
	const char *scope = s->scope != NULL ? s->scope : "*";
	const char *p[3] = { scope, NULL, s->reason ? s->reason : "by hand" };
	char e164[WA_PHONE_MAX];
	struct wa_buf a = { 0 };
	unsigned long bad = 0;
	const char *err;
	PGresult *res;
	int i, add = strcmp(s->verb, "add") == 0;

	if (s->scope != NULL)
		campaign_number_id(s->scope);
	if (strcmp(s->verb, "list") == 0) {
		if (s->nargs != 0)
			wa_die(EX_USAGE, "suppress list takes no numbers");
		list(conn, s, scope);
		return 0;
	}
	if (strcmp(s->verb, "import") == 0) {
		if (s->nargs != 1)
			wa_die(EX_USAGE, "suppress import takes one file "
			    "(- for stdin)");
		phone_list(s->args[0], s->cc, s->reject,
		    "nothing suppressed", &a, &bad);
		add = 1;
	} else if (add || strcmp(s->verb, "remove") == 0) {
		if (s->nargs == 0)
			wa_die(EX_USAGE, "suppress %s takes one or more "
			    "numbers", s->verb);
		wa_pg_array_start(&a);
		for (i = 0; i < s->nargs; i++) {
			if ((err = wa_phone_e164(s->args[i],
			    strlen(s->args[i]), s->cc, e164)) != NULL)
				wa_die(EX_USAGE, "'%s': %s", s->args[i], err);
			wa_pg_array_str(&a, e164);
		}
		wa_pg_array_end(&a);
	} else
		wa_die(EX_USAGE, "suppress is add, remove, list or import, "
		    "not '%s'", s->verb);
	p[1] = a.s;
	res = wa_pg_must(conn, add ? add_sql : remove_sql, add ? 3 : 2, p);
	printf("%s\n", PQgetvalue(res, 0, 0));
	PQclear(res);
	wa_buf_free(&a);
	return bad > 0 ? EX_DATAERR : 0;
}

int
cmd_suppress(struct opts *o)
{
	struct suppress s = { o->args[0], o->val[NUMBER], o->val[REASON],
	    o->val[CC], o->val[REJECT], (o->given & O(JSON)) != 0,
	    o->args + 1, 0 };

	while (s.args[s.nargs] != NULL)
		s.nargs++;
	if (o->val[REJECT] != NULL && strcmp(s.verb, "import") != 0)
		wa_die(EX_USAGE, "--reject goes with suppress import");
	return suppress(campaign_db(o), &s);
}
