/*
 * status.c: wa-campaign status and list: where a campaign stands, and
 * every campaign. One statement builds the whole status as JSON, so the
 * counts, the errors and the rate all come from one snapshot; status
 * prints it (--json) or lays the same object out for people.
 *
 * "accepted" counts the rows the API took (sent, delivered or read, or
 * failed later with a wamid). "rate" is accepted divided by the seconds
 * between the earliest and the latest claimed_at of the campaign's rows
 * (claimed_at is a row's latest claim, so pauses count as sending time);
 * "rate_last_minute" is the rows accepted among those claimed in the
 * last 60 seconds, divided by 60. "errors" are the rows' current errors
 * (their last attempt's); "error_history" every attempt's errors
 * (recipient_errors), so a row sent at its second try still shows what
 * its first met; both most common first, then latest, then by code.
 * "outage" is the campaign's last outage of the API (null if none): rows
 * it put back are pending, not failed. "next_retry_at" is when the first
 * pending row waiting for its retry is due (null when none waits),
 * "next_retry_in" the seconds until then. "limit" is the number's
 * messaging limit, the people messaged within its period and the places
 * left (null when unlimited); expires_at, window, tz, weight and priority
 * the campaign's rules of the road, and "without_zone" the rows that
 * have no zone of their own (their country has several), for which the
 * campaign's tz stands. "deployment" is the database's tag, in every
 * send's callback data (wapipe:TAG:ID:ATTEMPT). "graph_api" is not the
 * campaign's but this
 * environment's: the Graph API version a run started here speaks (of
 * WA_API_BASE, WA_API_VERSION or the default), the last day Meta serves
 * it, and wa-send's warning when that is within 90 days or past.
 * "billable" counts the messages delivered (or read) whose pricing, as
 * their status webhooks gave it, says Meta charges them, by category;
 * "free" those it says it does not, by pricing type; "spend" (null
 * without a rate card) is what the billable ones cost at the card loaded
 * in the market of each one's country, with those it has no price for
 * ("unpriced"). "meta_events" are the last five things Meta's webhooks
 * said of the campaign's template, its account and its limit since it
 * was made (account_events: a template paused, a category changed, a
 * new limit). The list, as text or as one JSON object per campaign,
 * counts each campaign's rows.
 *
 * Reads campaigns, campaign_recipients, recipient_errors, the messaging
 * limits, account_events, recipient_countries, the pricing tables and
 * the rate card (Postgres); writes on stdout. Returns 0; exits 64 when
 * there is no such campaign, 69 when Postgres fails, 78 on a bad
 * WA_API_BASE or WA_API_VERSION.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/err.h"
#include "records/json.h"
#include "api/base.h"
#include "api/version.h"
#include "campaign.h"


/* A campaign's own fields, as status and list show them. */
#define CAMPAIGN \
    "  'id', c.id, 'name', c.name," \
    "  'state', c.state, 'state_reason', c.state_reason," \
    "  'phone_number_id', c.phone_number_id, 'template', c.template_name," \
    "  'language', c.template_lang, 'max_attempts', c.max_attempts," \
    "  'on_unknown', c.on_unknown, 'breaker', c.breaker," \
    "  'created_at', " ISO("c.created_at") "," \
    "  'start_at', " ISO("c.start_at") "," \
    "  'started_at', " ISO("c.started_at") "," \
    "  'finished_at', " ISO("c.finished_at")

/*
 * One pass over the rows: a group per status (set 7 in the GROUPING()
 * bits), per attempt (11), per error (12), and all of them (15). Then
 * the rows delivered or read that have a pricing, by pricing and by
 * country (p0), priced (p) in the market of their country and at the
 * rate of their pricing's category (ps).
 */
static const char *report_sql =
    "WITH g AS (SELECT GROUPING(status, attempt, error_code, error_title)"
    "   AS set, status, attempt, error_code, error_title, count(*) AS n,"
    "   count(*) FILTER (WHERE status = 'pending'"
    "    AND next_attempt_at > now()) AS later,"
    "   min(next_attempt_at) FILTER (WHERE status = 'pending'"
    "    AND next_attempt_at > now()) AS next_retry,"
    "   max(coalesce(status_at, claimed_at)) AS last,"
    "   count(*) FILTER (WHERE acc) AS accepted,"
    "   count(*) FILTER (WHERE acc AND claimed_at > now() -"
    "    interval '1 minute') AS recent,"
    "   min(claimed_at) AS first_claim, max(claimed_at) AS last_claim,"
    "   count(*) FILTER (WHERE tz IS NULL) AS nozone"
    "  FROM (SELECT *, status IN ('sent', 'delivered', 'read')"
    "   OR wamid IS NOT NULL AS acc FROM campaign_recipients"
    "   WHERE campaign_id = $1) r"
    "  GROUP BY GROUPING SETS ((status), (attempt),"
    "   (error_code, error_title), ())),"
    " p0 AS (SELECT rc.country, r.pricing, count(*) AS n"
    "   FROM campaign_recipients r"
    "   LEFT JOIN recipient_countries rc ON rc.recipient_id = r.id"
    "   WHERE r.campaign_id = $1 AND r.phase = 2"
    "   AND r.status IN ('delivered', 'read') AND r.pricing IS NOT NULL"
    "   GROUP BY 1, 2),"
    " p AS (SELECT pricing_market(p0.country) AS market, k.category,"
    "   k.type, k.billed, k.rate, p0.n FROM p0 JOIN pricing_kinds k"
    "   ON k.code = p0.pricing),"
    " ps AS (SELECT p.*, r.price FROM p LEFT JOIN rates r"
    "   ON r.market = p.market AND r.category = p.rate WHERE p.billed)"
    " SELECT json_build_object(" CAMPAIGN ","
    "  'expires_at', " ISO("c.expires_at") ","
    "  'window', to_char(c.window_from, 'HH24:MI') || '-' ||"
    "   to_char(c.window_to, 'HH24:MI'), 'tz', c.tz,"
    "  'without_zone', t.nozone,"
    "  'weight', c.weight, 'priority', c.priority,"
    "  'limit', (SELECT json_build_object('max_people', l.max_people,"
    "   'period_s', l.period_s, 'used', u.used,"
    "   'left', greatest(l.max_people - u.used, 0),"
    "   'portfolio', l.portfolio)"
    "   FROM messaging_limits l,"
    "   LATERAL limit_used(l.portfolio, l.period_s, now()) u"
    "   WHERE l.portfolio = portfolio_of(c.phone_number_id)"
    "   AND l.max_people IS NOT NULL),"
    "  'total', t.n,"
    "  'counts', (SELECT json_object_agg(k.k, coalesce(g.n, 0)"
    "   ORDER BY k.o) FROM unnest('{pending,sending,unknown,sent,"
    "   delivered,read,failed,suppressed,expired}'::text[])"
    "   WITH ORDINALITY k(k, o)"
    "   LEFT JOIN g ON g.set = 7 AND g.status = k.k),"
    "  'pending_later', t.later,"
    "  'next_retry_at', " ISO("t.next_retry") ","
    "  'next_retry_in', ceil(extract(epoch FROM t.next_retry - now())),"
    "  'attempts', (SELECT coalesce(json_object_agg(attempt, n"
    "   ORDER BY attempt), '{}') FROM g WHERE set = 11),"
    "  'errors', (SELECT coalesce(json_agg(json_build_object('code',"
    "   error_code, 'title', error_title, 'count', n,"
    "   'last_at', " ISO("last") ") ORDER BY n DESC, last DESC,"
    "   error_code), '[]')"
    "   FROM (SELECT * FROM g WHERE set = 12 AND error_code IS NOT NULL"
    "   ORDER BY n DESC, last DESC NULLS LAST, error_code LIMIT 5) y),"
    "  'error_history', (SELECT coalesce(json_agg(json_build_object("
    "   'code', code, 'class', class, 'title', title, 'count', n,"
    "   'last_at', " ISO("last") ") ORDER BY n DESC, last DESC, code),"
    "   '[]') FROM (SELECT e.code, e.class, e.title, count(*) AS n,"
    "    max(e.at) AS last FROM recipient_errors e"
    "    JOIN campaign_recipients r ON r.id = e.recipient_id"
    "    WHERE r.campaign_id = $1 GROUP BY 1, 2, 3"
    "    ORDER BY n DESC, last DESC, code, class LIMIT 5) y),"
    "  'outage', CASE WHEN c.outage_started_at IS NOT NULL THEN"
    "   json_build_object('started_at', " ISO("c.outage_started_at") ","
    "   'last_at', " ISO("c.outage_seen_at") ","
    "   'ended_at', " ISO("c.outage_ended_at") ","
    "   'ongoing', c.outage_ended_at IS NULL,"
    "   'reason', c.outage_reason, 'results', c.outage_results,"
    "   'pending', (SELECT count(*) FROM campaign_recipients"
    "    WHERE campaign_id = $1 AND phase = 0 AND status = 'pending'"
    "    AND error_class = 'outage')) END,"
    "  'accepted', t.accepted,"
    "  'first_claim_at', " ISO("t.first_claim") ","
    "  'last_claim_at', " ISO("t.last_claim") ","
    "  'claim_seconds',"
    "   extract(epoch FROM t.last_claim - t.first_claim)::numeric,"
    "  'rate', CASE WHEN t.last_claim > t.first_claim THEN"
    "   round(t.accepted / extract(epoch FROM t.last_claim -"
    "   t.first_claim)::numeric, 1) END,"
    "  'rate_last_minute', round(t.recent / 60.0, 1),"
    "  'billable', (SELECT coalesce(json_object_agg(k, n ORDER BY k), '{}')"
    "   FROM (SELECT coalesce(category, 'other') AS k, sum(n) AS n FROM p"
    "   WHERE billed GROUP BY 1) x),"
    "  'free', (SELECT coalesce(json_object_agg(k, n ORDER BY k), '{}')"
    "   FROM (SELECT coalesce(type, 'other') AS k, sum(n) AS n FROM p"
    "   WHERE NOT billed GROUP BY 1) x),"
    "  'spend', CASE WHEN EXISTS (SELECT 1 FROM rate_card) THEN"
    "   (SELECT json_build_object('total', coalesce(sum(n * price), 0),"
    "   'currency', (SELECT currency FROM rate_card),"
    "   'unpriced', coalesce(sum(n) FILTER (WHERE price IS NULL), 0),"
    "   'by_category', (SELECT coalesce(json_object_agg(k, v ORDER BY k),"
    "    '{}') FROM (SELECT coalesce(category, 'other') AS k,"
    "    coalesce(sum(n * price), 0) AS v FROM ps GROUP BY 1) y))"
    "   FROM ps) END,"
    "  'replies', " REPLIES_JSON ","
    "  'meta_events', (SELECT coalesce(json_agg(json_build_object("
    "   'at', " ISO("e.at") ", 'field', e.field, 'event', e.event)"
    "   ORDER BY e.at, e.id), '[]') FROM (SELECT * FROM account_events e"
    "   WHERE e.received_at >= c.created_at AND (e.template_name IS NULL"
    "   OR e.template_name = c.template_name"
    "   AND e.template_lang = c.template_lang) AND (c.waba_id IS NULL"
    "   OR e.waba_id IS NULL OR e.waba_id = c.waba_id)"
    "   ORDER BY e.at DESC, e.id DESC LIMIT 5) e),"
    "  'deployment', (SELECT tag FROM wapipe_deployment))"
    " FROM campaigns c JOIN g t ON t.set = 15 WHERE c.id = $1";

/* Every campaign with its counts, as one JSON object each. */
static const char *list_sql =
    "SELECT json_build_object(" CAMPAIGN ","
    "  'recipients', count(r.id),"
    "  'to_send', count(r.id) FILTER (WHERE"
    "   r.status IN ('pending', 'sending', 'unknown')),"
    "  'sent', count(r.id) FILTER (WHERE"
    "   r.status IN ('sent', 'delivered', 'read')),"
    "  'failed', count(r.id) FILTER (WHERE r.status = 'failed'),"
    "  'pending_later', count(r.id) FILTER (WHERE r.status = 'pending'"
    "   AND r.next_attempt_at > now()),"
    "  'next_retry_at', " ISO("min(r.next_attempt_at) FILTER (WHERE"
    "   r.status = 'pending' AND r.next_attempt_at > now())") ")"
    " FROM campaigns c LEFT JOIN campaign_recipients r"
    "  ON r.campaign_id = c.id GROUP BY c.id ORDER BY c.id";

/* A string, or JSON's null for NULL. */
static struct json_object *
string_or_null(const char *s)
{
	return s != NULL ? json_object_new_string(s) : NULL;
}

/*
 * The Graph API version a run started here speaks: version, from
 * ("WA_API_BASE", "WA_API_VERSION" or "default"), until (null when no end
 * is known) and wa-send's warning (null when none).
 */
static struct json_object *
graph_api(void)
{
	struct json_object *g = json_object_new_object();
	const char *from, *v = wa_api_version(&from);
	char msg[512];

	json_object_object_add(g, "version", json_object_new_string(v));
	json_object_object_add(g, "from", json_object_new_string(from));
	json_object_object_add(g, "until",
	    string_or_null(wa_api_version_until(v)));
	json_object_object_add(g, "warning", string_or_null(
	    wa_api_version_warning(v, from, time(NULL), msg, sizeof msg) ?
	    msg : NULL));
	return g;
}

/* The report of campaign id, or NULL when there is none. */
struct json_object *
status_report(PGconn *conn, const char *id)
{
	const char *p[] = { id };
	PGresult *res = wa_pg_exec(conn, report_sql, 1, p);
	struct json_object *o = NULL;

	if (res == NULL)
		exit(EX_UNAVAILABLE);
	if (PQntuples(res) == 1 &&
	    (o = json_tokener_parse(PQgetvalue(res, 0, 0))) == NULL)
		wa_die(EX_SOFTWARE, "the report is not JSON");
	PQclear(res);
	if (o != NULL)
		json_object_object_add(o, "graph_api", graph_api());
	return o;
}

static const char *
str(struct json_object *o, const char *key)
{
	const char *s = wa_json_str(o, key);

	return s != NULL ? s : "-";
}

static long long
num(struct json_object *o, const char *key)
{
	return json_object_get_int64(wa_json_get(o, key));
}

/* An error's code, or "-" for one without (libcurl's, a timeout). */
static const char *
code(struct json_object *e)
{
	struct json_object *c = wa_json_get(e, "code");

	return c != NULL ? json_object_get_string(c) : "-";
}

/* Seconds as "1h 2m 3s". */
static void
span(FILE *f, double secs)
{
	long long s = secs + 0.5;

	if (s >= 3600)
		fprintf(f, "%lldh ", s / 3600);
	if (s >= 60)
		fprintf(f, "%lldm ", s / 60 % 60);
	fprintf(f, "%llds", s % 60);
}

/* "n (k n, k n)": the sum of the counts of object c, then each. */
static void
counts(FILE *f, struct json_object *c)
{
	long long sum = 0;
	int first = 1;

	json_object_object_foreach(c, k0, v0) {
		(void)k0;
		sum += json_object_get_int64(v0);
	}
	fprintf(f, "%lld", sum);
	json_object_object_foreach(c, k, v) {
		fprintf(f, "%s%s %s", first ? " (" : ", ", k,
		    json_object_get_string(v));
		first = 0;
	}
	if (!first)
		fputc(')', f);
}

/* The line of what the messages delivered cost. */
static void
pricing(FILE *f, struct json_object *o)
{
	struct json_object *s = wa_json_get(o, "spend");

	fprintf(f, "pricing   billed ");
	counts(f, wa_json_get(o, "billable"));
	fprintf(f, ", free ");
	counts(f, wa_json_get(o, "free"));
	if (s == NULL) {
		fprintf(f, "; spend: no rate card loaded\n");
		return;
	}
	fprintf(f, "; spend %s %s", json_object_get_string(wa_json_get(s,
	    "total")), str(s, "currency"));
	if (num(s, "unpriced") > 0)
		fprintf(f, " (%lld billed without a price on the card)",
		    num(s, "unpriced"));
	fputc('\n', f);
}

/* The last things Meta said of its template, account and limit. */
static void
meta_events(FILE *f, struct json_object *a)
{
	struct json_object *e;
	size_t i;

	for (i = 0; i < json_object_array_length(a); i++) {
		e = json_object_array_get_idx(a, i);
		fprintf(f, "%s %s %s %s\n", i == 0 ? "meta     " : "         ",
		    str(e, "at"), str(e, "field"), wa_json_str(e, "event") ?
		    str(e, "event") : "-");
	}
}

/* The replies: count, people who replied of those messaged, the rate. */
static void
replies(FILE *f, struct json_object *r)
{
	fprintf(f, "replies   %lld from %lld of %lld people messaged", num(r,
	    "count"), num(r, "people"), num(r, "messaged"));
	if (num(r, "messaged") > 0)
		fprintf(f, " (%.1f%%)", 100.0 * num(r, "people") /
		    num(r, "messaged"));
	if (num(r, "answers") > 0)
		fprintf(f, "; answered with %lld messages, %lld billed",
		    num(r, "answers"), num(r, "answers_billable"));
	if (num(r, "optouts") > 0)
		fprintf(f, "; %lld opted out", num(r, "optouts"));
	fputc('\n', f);
}

static void
print(FILE *f, struct json_object *o)
{
	struct json_object *v, *rate = wa_json_get(o, "rate");
	long long total = num(o, "total"), n;
	size_t i;

	fprintf(f, "campaign %lld \"%s\": %s\n", num(o, "id"), str(o, "name"),
	    str(o, "state"));
	if (wa_json_str(o, "state_reason") != NULL)
		fprintf(f, "  reason: %s\n", str(o, "state_reason"));
	fprintf(f, "  template %s (%s) from number %s\n", str(o, "template"),
	    str(o, "language"), str(o, "phone_number_id"));
	fprintf(f, "  deployment %s: callback data wapipe:%s:ID:ATTEMPT\n",
	    str(o, "deployment"), str(o, "deployment"));
	v = wa_json_get(o, "graph_api");
	fprintf(f, "  Graph API %s (%s%s), ", str(v, "version"),
	    strcmp(str(v, "from"), "default") == 0 ? "wapipe's " : "from ",
	    str(v, "from"));
	if (wa_json_str(v, "until") != NULL)
		fprintf(f, "served until %s\n", str(v, "until"));
	else
		fprintf(f, "no end date known\n");
	if (wa_json_str(v, "warning") != NULL)
		fprintf(f, "  warning: %s\n", str(v, "warning"));
	fprintf(f, "  at most %lld attempts; a send of unknown fate: %s; "
	    "circuit breaker: %s\n", num(o, "max_attempts"),
	    str(o, "on_unknown"), wa_json_get(o, "breaker") != NULL ?
	    json_object_get_string(wa_json_get(o, "breaker")) : "default");
	fprintf(f, "  created %s, ", str(o, "created_at"));
	if (wa_json_str(o, "start_at") != NULL)
		fprintf(f, "to start at %s, ", str(o, "start_at"));
	fprintf(f, "started %s, finished %s\n", str(o, "started_at"),
	    str(o, "finished_at"));
	fprintf(f, "  expires %s; window %s", wa_json_str(o, "expires_at") ?
	    str(o, "expires_at") : "never", wa_json_str(o, "window") ?
	    str(o, "window") : "any time");
	if (wa_json_str(o, "window") != NULL)
		fprintf(f, " (the recipient's time; else %s, for %lld rows "
		    "whose country has several zones)", wa_json_str(o, "tz") ?
		    str(o, "tz") : "UTC", num(o, "without_zone"));
	fprintf(f, "; weight %lld, priority %s\n", num(o, "weight"),
	    str(o, "priority"));
	if ((v = wa_json_get(o, "limit")) != NULL) {
		/* A number alone is its own portfolio, named by its id. */
		if (strcmp(str(v, "portfolio"), str(o, "phone_number_id")))
			fprintf(f, "  messaging limit of portfolio %s:",
			    str(v, "portfolio"));
		else
			fprintf(f, "  messaging limit of the number:");
		fprintf(f, " %lld people per "
		    "%lld %s; %lld used, %lld left\n", num(v, "max_people"),
		    num(v, "period_s") % 3600 ? num(v, "period_s") :
		    num(v, "period_s") / 3600, num(v, "period_s") % 3600 ?
		    "s" : "h", num(v, "used"), num(v, "left"));
	}
	fprintf(f, "recipients %lld\n", total);
	json_object_object_foreach(wa_json_get(o, "counts"), k, c) {
		n = json_object_get_int64(c);
		fprintf(f, "  %-10s %10lld %6.1f%%", k, n,
		    total ? 100.0 * n / total : 0.0);
		if (strcmp(k, "pending") == 0 && num(o, "pending_later") > 0) {
			fprintf(f, "  (%lld waiting to retry, the next at %s, "
			    "in ", num(o, "pending_later"),
			    str(o, "next_retry_at"));
			span(f, num(o, "next_retry_in"));
			fputc(')', f);
		}
		fputc('\n', f);
	}
	fprintf(f, "attempts  %s", total ? "" : " -");
	json_object_object_foreach(wa_json_get(o, "attempts"), a, an)
		fprintf(f, " %s: %lld", a,
		    (long long)json_object_get_int64(an));
	fprintf(f, "\nerrors, most common first:%s\n",
	    json_object_array_length(wa_json_get(o, "errors")) ? "" : " none");
	for (i = 0; i < json_object_array_length(wa_json_get(o, "errors"));
	    i++) {
		v = json_object_array_get_idx(wa_json_get(o, "errors"), i);
		fprintf(f, "  %-7s %10lld  %s (last %s)\n", code(v),
		    num(v, "count"), str(v, "title"), str(v, "last_at"));
	}
	fprintf(f, "every attempt's errors:%s\n",
	    json_object_array_length(wa_json_get(o, "error_history")) ? "" :
	    " none");
	for (i = 0; i < json_object_array_length(wa_json_get(o,
	    "error_history")); i++) {
		v = json_object_array_get_idx(wa_json_get(o, "error_history"),
		    i);
		fprintf(f, "  %-7s %10lld  %s (%s, last %s)\n", code(v),
		    num(v, "count"), str(v, "title"), str(v, "class"),
		    str(v, "last_at"));
	}
	if ((v = wa_json_get(o, "outage")) != NULL &&
	    json_object_get_boolean(wa_json_get(v, "ongoing")))
		fprintf(f, "outage    the API unreachable since %s (last %s): "
		    "%s; %lld results put back, %lld rows wait (not "
		    "failed)\n", str(v, "started_at"), str(v, "last_at"),
		    str(v, "reason"), num(v, "results"), num(v, "pending"));
	else if (v != NULL)
		fprintf(f, "outage    last: the API unreachable from %s to %s: "
		    "%s; %lld results put back in all\n",
		    str(v, "started_at"), str(v, "ended_at"), str(v, "reason"),
		    num(v, "results"));
	meta_events(f, wa_json_get(o, "meta_events"));
	replies(f, wa_json_get(o, "replies"));
	fprintf(f, "rate      ");
	if (rate != NULL) {
		fprintf(f, "%s/s: %lld accepted in ",
		    json_object_get_string(rate), num(o, "accepted"));
		span(f, json_object_get_double(wa_json_get(o,
		    "claim_seconds")));
		fprintf(f, " from the first claim to the last");
	} else
		fprintf(f, "- (%lld accepted)", num(o, "accepted"));
	fprintf(f, "; %s/s in the last minute\n",
	    json_object_get_string(wa_json_get(o, "rate_last_minute")));
	pricing(f, o);
}

/* wa-campaign list: a line per campaign, or (--json) its object. */
int
cmd_list(struct opts *o)
{
	PGresult *res = wa_pg_exec(campaign_db(o), list_sql, 0, NULL);
	struct json_object *c;
	int i;

	if (res == NULL)
		exit(EX_UNAVAILABLE);
	if (!(o->given & O(JSON)))
		printf("%6s  %-9s %10s %10s %10s %10s  %s\n", "ID", "STATE",
		    "RECIPIENTS", "TO SEND", "SENT", "FAILED", "NAME");
	for (i = 0; i < PQntuples(res); i++) {
		if (o->given & O(JSON)) {
			printf("%s\n", PQgetvalue(res, i, 0));
			continue;
		}
		if ((c = json_tokener_parse(PQgetvalue(res, i, 0))) == NULL)
			wa_die(EX_SOFTWARE, "a campaign's list is not JSON");
		printf("%6lld  %-9s %10lld %10lld %10lld %10lld  %s",
		    num(c, "id"), str(c, "state"), num(c, "recipients"),
		    num(c, "to_send"), num(c, "sent"), num(c, "failed"),
		    str(c, "name"));
		if (strcmp(str(c, "state"), "scheduled") == 0)
			printf(" (starts at %s)", str(c, "start_at"));
		printf("\n");
		json_object_put(c);
	}
	PQclear(res);
	return 0;
}

/* wa-campaign status: the report, as text or (--json) JSON. */
int
cmd_status(struct opts *o)
{
	struct json_object *r = status_report(campaign_db(o), o->args[0]);

	if (r == NULL)
		wa_die(EX_USAGE, "no campaign %s", o->args[0]);
	if (o->given & O(JSON))
		wa_out_json(r);
	else
		print(stdout, r);
	json_object_put(r);
	return 0;
}
