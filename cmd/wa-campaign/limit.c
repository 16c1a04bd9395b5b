/*
 * limit.c: wa-campaign limit. A business portfolio's messaging limit
 * (how many different people its numbers may message outside a
 * customer-service window in a rolling period, Meta's tiers) is one row
 * of messaging_limits, applied by every claim (wapipe_claim); the
 * people it has messaged within the period are limit_contacts, counted
 * by slice of time in limit_usage. A portfolio is a named group of
 * phone-number ids (portfolio_numbers: --portfolio puts numbers in
 * one); a number in none is a portfolio of its own, named by its id.
 * --fetch reads a number's limit from the Graph API (GET
 * /<PHONE_NUMBER_ID>?fields=whatsapp_business_manager_messaging_limit,
 * messaging_limit_tier up to v23.0: one call a number) and sets its
 * portfolio's.
 *
 * Reads and writes portfolio_numbers, messaging_limits, limit_contacts
 * and limit_usage (Postgres). Writes the limits on stdout. Returns 0;
 * exits 64 on a bad value, 65 when Meta gives a number no limit, 69 when
 * the API or Postgres cannot answer, 78 without a token.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/base.h"
#include "api/graph.h"
#include "core/err.h"
#include "records/json.h"
#include "campaign.h"

/* Each limit, its numbers, used and left, and when a place frees. */
static const char *limits_sql =
    "SELECT l.portfolio, (SELECT string_agg(n.phone_number_id, ', '"
    "  ORDER BY n.phone_number_id) FROM portfolio_numbers n"
    "  WHERE n.portfolio = l.portfolio),"
    "  coalesce(l.max_people::text, 'unlimited'),"
    "  l.period_s, u.used, coalesce(greatest(l.max_people - u.used, 0)"
    "  ::text, 'unlimited'), coalesce(to_char(u.frees_at AT TIME ZONE"
    "  'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), '')"
    " FROM messaging_limits l,"
    "  LATERAL limit_used(l.portfolio, l.period_s, now()) u"
    " WHERE $1::text IS NULL OR l.portfolio = portfolio_of($1) ORDER BY 1";

/* Sets the limit of key's portfolio (sql/schema.sql). */
static const char *set_sql =
    "SELECT messaging_limit_set(portfolio_of($1), $2::integer,"
    " $3::integer)";

static const char *join_sql = "SELECT portfolio_join($1, $2)";

const char *
campaign_limit_field(void)
{
	return atoi(wa_api_version(NULL) + 1) >= 24 ?
	    "whatsapp_business_manager_messaging_limit" :
	    "messaging_limit_tier";
}

long long
campaign_tier(PGconn *conn, struct json_object *limit)
{
	const char *v = json_object_get_string(limit);
	PGresult *res;
	long long n;

	if (!json_object_is_type(limit, json_type_string) &&
	    !json_object_is_type(limit, json_type_int))
		return 0;
	res = wa_pg_must(conn, "SELECT messaging_tier($1)", 1, &v);
	n = atoll(PQgetvalue(res, 0, 0));
	PQclear(res);
	return n;
}

/* A portfolio's name, or a number's id. */
static void
key(const char *s)
{
	size_t n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789_.-");

	if (n == 0 || n > 64 || s[n] != '\0')
		wa_die(EX_USAGE, "a portfolio is named by 1 to 64 letters, "
		    "digits, '_', '.' or '-' (a number by its id), not '%s'",
		    s);
}

static void
say_period(long s)
{
	if (s % 3600 == 0)
		printf("%ld h", s / 3600);
	else
		printf("%ld s", s);
}

/* Prints every limit (k NULL), or k's portfolio's. */
static void
show(PGconn *conn, const char *k)
{
	PGresult *res = wa_pg_must(conn, limits_sql, 1, &k);
	int r;

	if (PQntuples(res) == 0 && k != NULL)
		printf("%s: unlimited\n", k);
	for (r = 0; r < PQntuples(res); r++) {
		printf("%s", PQgetvalue(res, r, 0));
		if (!PQgetisnull(res, r, 1))
			printf(" (numbers %s)", PQgetvalue(res, r, 1));
		printf(": ");
		if (strcmp(PQgetvalue(res, r, 2), "unlimited") == 0) {
			printf("unlimited\n");
			continue;
		}
		printf("%s people per ", PQgetvalue(res, r, 2));
		say_period(atol(PQgetvalue(res, r, 3)));
		printf("; %s used, %s left", PQgetvalue(res, r, 4),
		    PQgetvalue(res, r, 5));
		if (*PQgetvalue(res, r, 6))
			printf("; the next place frees at %s",
			    PQgetvalue(res, r, 6));
		printf("\n");
	}
	PQclear(res);
}

/* Sets k's portfolio's limit to value (a tier) and period, or kept. */
static void
set(PGconn *conn, const char *k, const char *value, const char *period)
{
	static const char *const tiers[] = { "250", "2000", "10000",
	    "100000", "unlimited" };
	const char *p[3] = { k, NULL, period };
	size_t i;

	for (i = 0; i < sizeof tiers / sizeof *tiers; i++)
		if (strcmp(value, tiers[i]) == 0)
			break;
	if (i == sizeof tiers / sizeof *tiers)
		wa_die(EX_USAGE, "a messaging limit is 250, 2000, 10000, "
		    "100000 or unlimited (Meta's tiers since October 2025), "
		    "not '%s'", value);
	p[1] = strcmp(value, "unlimited") == 0 ? NULL : value;
	PQclear(wa_pg_must(conn, set_sql, 3, p));
}

/* Sets each number's portfolio's limit to what the Graph API says. */
static void
fetch(PGconn *conn, char **numbers)
{
	const char *field = campaign_limit_field(), *args[] = { "fields",
	    field, NULL }, *p[3] = { NULL, NULL, NULL };
	struct json_object *ans;
	char why[512], n[24];
	long long tier;

	for (; *numbers != NULL; numbers++) {
		campaign_number_id(*numbers);
		if (wa_graph_get(*numbers, args, &ans, why, sizeof why) < 0)
			wa_die(EX_UNAVAILABLE, "limit --fetch %s: %s; no limit "
			    "changed", *numbers, why);
		tier = campaign_tier(conn, wa_json_get(ans, field));
		if (tier == 0) {
			wa_warn("limit --fetch %s: the Graph API gives no "
			    "messaging limit (%s: %s); no limit changed",
			    *numbers, field, wa_json_get(ans, field) ?
			    json_object_get_string(wa_json_get(ans, field)) :
			    "absent");
			json_object_put(ans);
			exit(EX_DATAERR);
		}
		printf("%s: the Graph API says %s\n", *numbers,
		    json_object_get_string(wa_json_get(ans, field)));
		json_object_put(ans);
		snprintf(n, sizeof n, "%lld", tier);
		p[0] = *numbers;
		p[1] = tier < 0 ? NULL : n;
		PQclear(wa_pg_must(conn, set_sql, 3, p));
		show(conn, *numbers);
	}
}

int
cmd_limit(struct opts *o)
{
	PGconn *conn = campaign_db(o);
	char **a = o->args;
	const char *p[2];

	if (o->given & O(PERIOD) && (a[0] == NULL || a[1] == NULL ||
	    o->given & (O(FETCH) | O(PORTFOLIO))))
		wa_die(EX_USAGE, "--period goes with a limit");
	if (o->given & O(PERIOD))
		wa_num(o->val[PERIOD], 1, 86400 * 30, "period");
	if (o->given & (O(FETCH) | O(PORTFOLIO))) {
		if (a[0] == NULL || (o->given & O(FETCH) &&
		    o->given & O(PORTFOLIO)))
			campaign_usage("limit", stderr, EX_USAGE);
		if (o->given & O(FETCH)) {
			fetch(conn, a);
			return 0;
		}
		/* Each join is whole, and again is nothing: after a
		   failure, the same command finishes it. */
		key(o->val[PORTFOLIO]);
		for (p[0] = o->val[PORTFOLIO]; *a != NULL; a++)
			campaign_number_id(*a);
		for (a = o->args; *a != NULL; a++) {
			p[1] = *a;
			PQclear(wa_pg_must(conn, join_sql, 2, p));
		}
		show(conn, o->val[PORTFOLIO]);
		return 0;
	}
	if (a[0] != NULL && a[1] != NULL && a[2] != NULL)
		campaign_usage("limit", stderr, EX_USAGE);
	if (a[0] != NULL)
		key(a[0]);
	if (a[0] != NULL && a[1] != NULL)
		set(conn, a[0], a[1], o->val[PERIOD]);
	show(conn, a[0]);
	return 0;
}
