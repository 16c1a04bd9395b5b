/*
 * estimate.c: wa-campaign estimate: what a campaign's messages still to
 * send (pending, in the pipe, or of unknown fate) will cost, per market
 * and in all, at the rate card loaded (rates.c) and at the category of
 * the campaign's template: --category, else the campaign's
 * template_category, else the category its status webhooks have
 * reported. Each row is priced in the market of its country
 * (sql/schema.sql's pricing_market: the country's own market, or the
 * group it was in while the card has no row for it, or Other).
 *
 * A row imported before wapipe kept its number's country
 * (recipient_countries) gets it here first (libphonenumber's region,
 * records/numplan.h; ZZ for a number no plan has), a batch at a time;
 * nothing else is written.
 *
 * Meta charges a template message when it is delivered, so this is what
 * the campaign costs at most; volume tiers (utility and authentication
 * get cheaper past a volume in a month) and the authentication-
 * international rate (for businesses Meta finds eligible) are not
 * counted.
 *
 * Reads campaigns, campaign_recipients, recipient_countries,
 * pricing_markets, pricing_kinds, rate_card and rates; writes
 * recipient_countries (Postgres).
 * Writes the estimate on stdout, as text or (--json) one JSON object.
 * Returns 0; exits 64 when there is no such campaign, when its category
 * is not known or not one a card prices, 69 when Postgres fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "core/err.h"
#include "records/json.h"
#include "records/numplan.h"
#include "records/ratecard.h"
#include "campaign.h"

#define BATCH 10000

/* The category: the campaign's, else the one its webhooks said most. */
static const char *category_sql =
    "SELECT coalesce(lower(c.template_category), (SELECT k.rate"
    "  FROM campaign_recipients r JOIN pricing_kinds k ON k.code = r.pricing"
    "  WHERE r.campaign_id = c.id AND k.rate IS NOT NULL"
    "  GROUP BY k.rate ORDER BY count(*) DESC, k.rate LIMIT 1))"
    " FROM campaigns c WHERE c.id = $1";

/* Rows without a country, a batch at a time in id order. */
static const char *nocountry_sql =
    "SELECT r.id, r.phone FROM campaign_recipients r"
    " WHERE r.campaign_id = $1 AND r.id > $2 AND NOT EXISTS (SELECT 1"
    "  FROM recipient_countries rc WHERE rc.recipient_id = r.id)"
    " ORDER BY r.id LIMIT 10000";

static const char *setcountry_sql =
    "INSERT INTO recipient_countries (recipient_id, country)"
    " SELECT * FROM unnest($1::bigint[], $2::text[])"
    " ON CONFLICT DO NOTHING";

/*
 * Per market, the rows still to send, the price of one message of
 * category $2 there and their cost (NULL: no price); in all, the cost of
 * those priced (total: NULL without a card) and how many are not.
 */
static const char *estimate_sql =
    "WITH g AS (SELECT rc.country, count(*) AS n FROM campaign_recipients r"
    "   LEFT JOIN recipient_countries rc ON rc.recipient_id = r.id"
    "   WHERE r.campaign_id = $1 AND r.phase < 2 GROUP BY 1),"
    " m AS (SELECT pricing_market(country) AS market, sum(n)::bigint AS n"
    "   FROM g GROUP BY 1),"
    " c AS (SELECT m.market, m.n, r.price, m.n * r.price AS cost,"
    "   CASE WHEN NOT EXISTS (SELECT 1 FROM rate_card) THEN NULL"
    "   WHEN r.market IS NULL THEN 'not on the card'"
    "   WHEN r.price IS NULL THEN 'n/a' END AS why"
    "   FROM m LEFT JOIN rates r ON r.market = m.market"
    "   AND r.category = $2)"
    " SELECT json_build_object('campaign', $1::bigint, 'category', $2::text,"
    "  'currency', (SELECT currency FROM rate_card),"
    "  'rate_card', (SELECT json_build_object('title', title, 'file', file,"
    "   'loaded_at', " ISO("loaded_at") ") FROM rate_card),"
    "  'messages', (SELECT coalesce(sum(n), 0) FROM c),"
    "  'total', CASE WHEN EXISTS (SELECT 1 FROM rate_card)"
    "   THEN (SELECT coalesce(sum(cost), 0) FROM c) END,"
    "  'unpriced', (SELECT coalesce(sum(n), 0) FROM c WHERE cost IS NULL),"
    "  'markets', (SELECT coalesce(json_agg(json_build_object('market',"
    "   market, 'messages', n, 'rate', price, 'cost', cost, 'unpriced',"
    "   why) ORDER BY cost DESC NULLS LAST, n DESC, market), '[]')"
    "   FROM c))";

/*
 * Gives each row of campaign id without a country its number's; returns
 * how many.
 */
static unsigned long
countries(PGconn *conn, const char *id)
{
	struct wa_buf a[2] = { { 0 } };
	struct wa_numplan np;
	const char *p[2];
	unsigned long done = 0;
	char last[24] = "0", why[160];
	PGresult *res;
	int i, n;

	do {
		p[0] = id;
		p[1] = last;
		res = wa_pg_must(conn, nocountry_sql, 2, p);
		if ((n = PQntuples(res)) == 0) {
			PQclear(res);
			break;
		}
		wa_pg_array_start(&a[0]);
		wa_pg_array_start(&a[1]);
		for (i = 0; i < n; i++) {
			wa_pg_array_str(&a[0], PQgetvalue(res, i, 0));
			wa_pg_array_str(&a[1], wa_numplan_check(PQgetvalue(res,
			    i, 1), &np, 0, why, sizeof why) == 0 ?
			    np.region : "ZZ");
		}
		wa_pg_array_end(&a[0]);
		wa_pg_array_end(&a[1]);
		snprintf(last, sizeof last, "%s", PQgetvalue(res, n - 1, 0));
		PQclear(res);
		p[0] = a[0].s;
		p[1] = a[1].s;
		PQclear(wa_pg_must(conn, setcountry_sql, 2, p));
		done += n;
	} while (n == BATCH);
	wa_buf_free(&a[0]);
	wa_buf_free(&a[1]);
	return done;
}

/* The value at key as text (a number as Postgres wrote it), or "-". */
static const char *
str(struct json_object *o, const char *key)
{
	struct json_object *v = wa_json_get(o, key);

	return v != NULL ? json_object_get_string(v) : "-";
}

static void
print(struct json_object *o)
{
	struct json_object *ms = wa_json_get(o, "markets"), *m;
	struct json_object *card = wa_json_get(o, "rate_card");
	const char *cur = str(o, "currency");
	size_t i;

	printf("campaign %s: %s messages to send, %s", str(o, "campaign"),
	    str(o, "messages"), str(o, "category"));
	if (card != NULL)
		printf(", at the rate card in %s loaded %s (%s)\n", cur,
		    str(card, "loaded_at"), wa_json_str(card, "title") ?
		    str(card, "title") : str(card, "file"));
	else
		printf("; no rate card loaded (wa-campaign rates load "
		    "file): no prices\n");
	printf("  %-34s %10s %10s %14s\n", "MARKET", "MESSAGES", "RATE",
	    "COST");
	for (i = 0; i < json_object_array_length(ms); i++) {
		m = json_object_array_get_idx(ms, i);
		printf("  %-34s %10s ", str(m, "market"), str(m, "messages"));
		if (wa_json_get(m, "cost") != NULL)
			printf("%10s %14s\n", str(m, "rate"), str(m, "cost"));
		else
			printf("%10s %14s\n", "-", wa_json_str(m, "unpriced") ?
			    str(m, "unpriced") : "-");
	}
	if (card == NULL)
		return;
	printf("  %-34s %10s %10s %14s %s\n", "total", str(o, "messages"), "",
	    str(o, "total"), cur);
	if (json_object_get_int64(wa_json_get(o, "unpriced")) > 0)
		printf("  (%s messages have no price: not counted)\n",
		    str(o, "unpriced"));
	printf("Meta charges a message when it is delivered: at most this; "
	    "volume tiers not counted.\n");
}

int
cmd_estimate(struct opts *o)
{
	PGconn *conn = campaign_db(o);
	const char *id = o->args[0], *p[2], *cat = o->val[CATEGORY];
	struct json_object *r;
	unsigned long n;
	PGresult *res;
	int k;

	res = wa_pg_must(conn, category_sql, 1, &id);
	if (PQntuples(res) == 0)
		wa_die(EX_USAGE, "no campaign %s", id);
	if (cat == NULL && !PQgetisnull(res, 0, 0))
		cat = PQgetvalue(res, 0, 0);
	if (cat == NULL)
		wa_die(EX_USAGE, "campaign %s: the category of its template is "
		    "not known: say --category marketing, utility or "
		    "authentication", id);
	for (k = 0; k < WA_RATE_CATS; k++)
		if (strcasecmp(cat, wa_rate_cats[k]) == 0 || (k == 3 &&
		    strcasecmp(cat, "authentication_international") == 0))
			break;
	if (k == WA_RATE_CATS)
		wa_die(EX_USAGE, "a category is marketing, utility, "
		    "authentication, authentication-international or "
		    "service, not '%s'", cat);
	p[0] = id;
	p[1] = wa_rate_cats[k];
	if ((n = countries(conn, id)) > 0)
		wa_warn("campaign %s: %lu rows imported before wapipe kept "
		    "their country have it now", id, n);
	PQclear(res);
	res = wa_pg_must(conn, estimate_sql, 2, p);
	if ((r = json_tokener_parse(PQgetvalue(res, 0, 0))) == NULL)
		wa_die(EX_SOFTWARE, "the estimate is not JSON");
	PQclear(res);
	if (o->given & O(JSON))
		wa_out_json(r);
	else
		print(r);
	json_object_put(r);
	return 0;
}
