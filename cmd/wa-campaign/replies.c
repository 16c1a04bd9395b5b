/*
 * replies.c: what people sent back (inbound_messages, which
 * wa-status-ingest fills): wa-campaign replies, a campaign's replies in
 * the order they were sent, and wa-campaign inbound prune, the
 * retention of inbound_messages applied.
 *
 * replies reads inbound_messages and campaigns; writes on stdout one
 * line per message: with --json an NDJSON object (wamid, phone, wa_id,
 * bsuid, type, text, payload, media_id, context, sent_at, received_at,
 * recipient_id, window_closes_at: sent_at + 24 h, the end of the
 * customer-service window the message opened), else a line for people.
 * inbound prune deletes the messages received more than --days N days
 * ago (default: inbound_retention's days, 30 unless changed) and says
 * how many on stdout. Both return 0; exit 64 on an unknown campaign or
 * a bad --days, 69 when Postgres fails.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "records/json.h"
#include "campaign.h"

static const char *replies_sql =
    "SELECT json_build_object('wamid', i.wamid, 'phone', i.phone,"
    "  'wa_id', i.wa_id, 'bsuid', i.bsuid, 'type', i.type,"
    "  'text', i.body, 'payload', i.payload, 'media_id', i.media_id,"
    "  'context', i.context_wamid,"
    "  'sent_at', " ISO("i.sent_at") ","
    "  'received_at', " ISO("i.received_at") ","
    "  'recipient_id', i.recipient_id,"
    "  'window_closes_at', " ISO("(i.sent_at + interval '24 hours')") ")"
    " FROM inbound_messages i WHERE i.campaign_id = $1"
    " ORDER BY i.sent_at, i.id";

static const char *prune_sql =
    "WITH d AS (DELETE FROM inbound_messages WHERE received_at <"
    "  now() - make_interval(days => coalesce($1::integer,"
    "  (SELECT days FROM inbound_retention), 30)) RETURNING 1)"
    " SELECT count(*), coalesce($1::integer,"
    "  (SELECT days FROM inbound_retention), 30) FROM d";

static const char *
str(struct json_object *o, const char *key)
{
	const char *s = wa_json_str(o, key);

	return s != NULL ? s : "-";
}

/* wa-campaign replies [--json] id */
int
cmd_replies(struct opts *o)
{
	const char *p[] = { o->args[0] };
	struct json_object *r;
	PGresult *res;
	int i;

	res = wa_pg_exec(campaign_db(o), "SELECT 1 FROM campaigns"
	    " WHERE id = $1", 1, p);
	if (res == NULL)
		exit(EX_UNAVAILABLE);
	if (PQntuples(res) == 0)
		wa_die(EX_USAGE, "no campaign %s", o->args[0]);
	PQclear(res);
	if ((res = wa_pg_exec(campaign_db(o), replies_sql, 1, p)) == NULL)
		exit(EX_UNAVAILABLE);
	for (i = 0; i < PQntuples(res); i++) {
		if (o->given & O(JSON)) {
			printf("%s\n", PQgetvalue(res, i, 0));
			continue;
		}
		if ((r = json_tokener_parse(PQgetvalue(res, i, 0))) == NULL)
			wa_die(EX_SOFTWARE, "a reply is not JSON");
		printf("%s  %-16s %-11s %s (row %s, window closes %s)\n",
		    str(r, "sent_at"), str(r, "phone"), str(r, "type"),
		    wa_json_str(r, "text") ? str(r, "text") : str(r,
		    "payload"), json_object_get_string(wa_json_get(r,
		    "recipient_id")), str(r, "window_closes_at"));
		json_object_put(r);
	}
	PQclear(res);
	return 0;
}

/* wa-campaign inbound prune [--days n] */
int
cmd_inbound(struct opts *o)
{
	const char *p[1] = { NULL };
	PGresult *res;

	if (strcmp(o->args[0], "prune") != 0 || o->args[1] != NULL) {
		wa_warn("inbound: no subcommand '%s'", o->args[0]);
		campaign_usage(o->name, stderr, EX_USAGE);
	}
	if (o->given & O(DAYS)) {
		wa_num(o->val[DAYS], 1, 100000, "days");
		p[0] = o->val[DAYS];
	}
	if ((res = wa_pg_exec(campaign_db(o), prune_sql, 1, p)) == NULL)
		exit(EX_UNAVAILABLE);
	printf("inbound prune: %s messages received more than %s "
	    "days ago deleted\n", PQgetvalue(res, 0, 0),
	    PQgetvalue(res, 0, 1));
	PQclear(res);
	return 0;
}
