/*
 * rates.c: wa-campaign rates load and rates show. load reads a rate card
 * in the layout of Meta's download (records/ratecard.h), checks every
 * market against wapipe's (the markets of sql/schema.sql's
 * pricing_markets, and Other), and puts it in place of the card loaded
 * before, all or nothing: every fault is found before the transaction
 * that replaces the card, and is said by file:line. show prints the card
 * loaded.
 *
 * Reads the file (or stdin for "-") and rate_card, rates and
 * pricing_markets; writes rate_card and rates (Postgres); the card on
 * stdout (show), what was loaded on stderr (load). Returns 0; exits 64
 * on a bad verb, 65 when the card is refused (nothing replaced), 66 when
 * the file cannot be opened, 69 when Postgres fails, 74 when reading
 * fails.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "records/json.h"
#include "records/ratecard.h"
#include "campaign.h"

/* The markets a card may name, in the spelling wapipe keeps. */
static const char *markets_sql =
    "SELECT market FROM pricing_markets UNION"
    " SELECT fallback FROM pricing_markets WHERE fallback IS NOT NULL"
    " UNION SELECT 'Other'";

static const char *insert_sql =
    "INSERT INTO rates (market, category, price)"
    " SELECT * FROM unnest($1::text[], $2::text[], $3::numeric[])";

static const char *card_sql =
    "INSERT INTO rate_card (currency, title, file) VALUES ($1, $2, $3)";

/* The card and its prices, as one JSON object. */
static const char *show_sql =
    "SELECT json_build_object('currency', c.currency, 'title', c.title,"
    "  'file', c.file, 'loaded_at', " ISO("c.loaded_at") ","
    "  'markets', (SELECT json_agg(json_build_object('market', m.market,"
    "   'marketing', m.p[1], 'utility', m.p[2], 'authentication', m.p[3],"
    "   'authentication-international', m.p[4], 'service', m.p[5])"
    "   ORDER BY m.market = 'Other', m.market)"
    "   FROM (SELECT market, array_agg(price ORDER BY array_position("
    "    '{marketing,utility,authentication,authentication-international,"
    "    service}'::text[], category)) AS p FROM rates GROUP BY market) m))"
    " FROM rate_card c";

/* The whole of path ("-": stdin) in b; exits 66, 74, or 65 when big. */
static void
slurp(const char *path, const char *name, struct wa_buf *b)
{
	int fd = STDIN_FILENO;
	ssize_t got;

	if (strcmp(path, "-") != 0 &&
	    (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		wa_die(EX_NOINPUT, "open %s:", path);
	for (;;) {
		wa_buf_grow(b, 65536);
		if ((got = read(fd, b->s + b->len, 65536)) == 0)
			break;
		if (got < 0)
			wa_die(EX_IOERR, "read %s:", name);
		b->len += got;
		if (b->len > WA_RATECARD_MAX)
			wa_die(EX_DATAERR, "%s: more than %d bytes: not a rate "
			    "card; nothing loaded", name, WA_RATECARD_MAX);
	}
	if (fd != STDIN_FILENO)
		close(fd);
}

/*
 * Each market of rc in wapipe's spelling: the known market equal to it
 * without regard to case; exits 65 naming the first that is none.
 */
static void
check_markets(PGconn *conn, struct wa_ratecard *rc, const char *name)
{
	PGresult *res = wa_pg_must(conn, markets_sql, 0, NULL);
	size_t i;
	int k;

	for (i = 0; i < rc->n; i++) {
		for (k = 0; k < PQntuples(res); k++)
			if (strcasecmp(rc->rows[i].market,
			    PQgetvalue(res, k, 0)) == 0)
				break;
		if (k == PQntuples(res))
			wa_die(EX_DATAERR, "%s:%lu: no market \"%s\" in "
			    "wapipe's map of countries to markets (sql/"
			    "schema.sql, pricing_markets); nothing loaded",
			    name, rc->rows[i].line, rc->rows[i].market);
		free(rc->rows[i].market);
		rc->rows[i].market = wa_strdup(PQgetvalue(res, k, 0));
	}
	PQclear(res);
}

static int
load(PGconn *conn, const char *path)
{
	const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
	struct wa_buf b = { 0 }, a[3] = { { 0 } };
	struct wa_ratecard rc;
	const char *p[3];
	unsigned long line;
	char why[512];
	size_t i, k;
	int other = 0;

	slurp(path, name, &b);
	if (wa_ratecard_parse(b.s, b.len, &rc, why, sizeof why, &line) < 0)
		wa_die(EX_DATAERR, "%s:%lu: %s; nothing loaded", name, line,
		    why);
	wa_buf_free(&b);
	check_markets(conn, &rc, name);
	for (i = 0; i < 3; i++)
		wa_pg_array_start(&a[i]);
	for (i = 0; i < rc.n; i++) {
		other |= strcmp(rc.rows[i].market, "Other") == 0;
		for (k = 0; k < WA_RATE_CATS; k++) {
			wa_pg_array_str(&a[0], rc.rows[i].market);
			wa_pg_array_str(&a[1], wa_rate_cats[k]);
			wa_pg_array_str(&a[2], rc.rows[i].price[k]);
		}
	}
	for (i = 0; i < 3; i++)
		wa_pg_array_end(&a[i]);
	if (rc.ignored != NULL)
		wa_warn("%s:%lu: columns not read: %s", name, rc.header,
		    rc.ignored);
	if (!other)
		wa_warn("%s: no row for Other: numbers of a country no market "
		    "lists will have no price", name);
	PQclear(wa_pg_must(conn, "BEGIN", 0, NULL));
	PQclear(wa_pg_must(conn, "LOCK TABLE rate_card, rates IN EXCLUSIVE "
	    "MODE", 0, NULL));
	PQclear(wa_pg_must(conn, "DELETE FROM rates", 0, NULL));
	PQclear(wa_pg_must(conn, "DELETE FROM rate_card", 0, NULL));
	for (i = 0; i < 3; i++)
		p[i] = a[i].s;
	PQclear(wa_pg_must(conn, insert_sql, 3, p));
	p[0] = rc.currency;
	p[1] = rc.title;
	p[2] = name;
	PQclear(wa_pg_must(conn, card_sql, 3, p));
	PQclear(wa_pg_must(conn, "COMMIT", 0, NULL));
	wa_warn("%s: %zu markets in %s loaded%s%s%s", name, rc.n, rc.currency,
	    rc.title ? " (\"" : "", rc.title ? rc.title : "",
	    rc.title ? "\")" : "");
	for (i = 0; i < 3; i++)
		wa_buf_free(&a[i]);
	wa_ratecard_free(&rc);
	return 0;
}

/* A price as the card has it, or n/a. */
static const char *
price(struct json_object *m, const char *cat)
{
	struct json_object *v = wa_json_get(m, cat);

	return v != NULL ? json_object_get_string(v) : "n/a";
}

static int
show(PGconn *conn, int json)
{
	PGresult *res = wa_pg_must(conn, show_sql, 0, NULL);
	struct json_object *o, *m;
	size_t i, k;

	if (PQntuples(res) == 0) {
		PQclear(res);
		if (json)
			printf("null\n");
		else
			printf("no rate card loaded (wa-campaign rates load "
			    "file)\n");
		return 0;
	}
	if (json) {
		printf("%s\n", PQgetvalue(res, 0, 0));
		PQclear(res);
		return 0;
	}
	if ((o = json_tokener_parse(PQgetvalue(res, 0, 0))) == NULL)
		wa_die(EX_SOFTWARE, "the rate card is not JSON");
	PQclear(res);
	printf("rate card in %s, from %s, loaded %s\n",
	    wa_json_str(o, "currency"), wa_json_str(o, "file"),
	    wa_json_str(o, "loaded_at"));
	if (wa_json_str(o, "title") != NULL)
		printf("  %s\n", wa_json_str(o, "title"));
	printf("%-34s %10s %10s %10s %10s %10s\n", "MARKET", "MARKETING",
	    "UTILITY", "AUTH", "AUTH-INTL", "SERVICE");
	for (i = 0; i < json_object_array_length(wa_json_get(o, "markets"));
	    i++) {
		m = json_object_array_get_idx(wa_json_get(o, "markets"), i);
		printf("%-34s", wa_json_str(m, "market"));
		for (k = 0; k < WA_RATE_CATS; k++)
			printf(" %10s", price(m, wa_rate_cats[k]));
		printf("\n");
	}
	json_object_put(o);
	return 0;
}

int
cmd_rates(struct opts *o)
{
	const char *verb = o->args[0];

	if (strcmp(verb, "load") == 0) {
		if (o->args[1] == NULL || o->args[2] != NULL)
			wa_die(EX_USAGE, "rates load takes one file (- for "
			    "stdin)");
		if (o->given & O(JSON))
			wa_die(EX_USAGE, "rates load takes no --json");
		return load(campaign_db(o), o->args[1]);
	}
	if (strcmp(verb, "show") == 0) {
		if (o->args[1] != NULL)
			wa_die(EX_USAGE, "rates show takes no operand");
		return show(campaign_db(o), (o->given & O(JSON)) != 0);
	}
	wa_die(EX_USAGE, "rates is load or show, not '%s'", verb);
}
