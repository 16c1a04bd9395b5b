/*
 * statusdb.c: applying statuses to campaign_recipients.
 *
 * A batch is one prepared statement, sent without waiting so that the
 * next batch is parsed while Postgres applies this one. It resolves each
 * status to its row (the recipient id, else the wamid), keeps one status
 * per row (the highest rank, then the earliest), updates the rows whose
 * rank it raises, in id order, puts what matched no row in
 * unmatched_statuses, and moves the spool checkpoint: all or nothing, as
 * one statement is one transaction. A row in sending or unknown that gets
 * any status leaves rank 0 through the same guard, which settles it.
 *
 * The same statement adds to suppressions the senders of the batch's
 * inbound texts whose word (records/status.h) is an opt-out keyword,
 * for the number they wrote to: ON CONFLICT DO NOTHING, so a body
 * applied again (a batch resent after Postgres went away) adds nobody
 * twice and keeps the first reason and time.
 *
 * It also inserts every inbound message of the batch into
 * inbound_messages (INBOUND_I below), ON CONFLICT (wamid) DO NOTHING: a
 * body applied again adds nothing. A batch refused for its data inserts
 * its messages one by one first, then goes again without them.
 *
 * Kept statuses are retried by a second statement, run only while some
 * may match: it moves those whose row has appeared onto it, through the
 * same update. A row that a status moves to sent, delivered or read has
 * no current error any more (an earlier attempt's stays in
 * recipient_errors); one that fails gets the status's error, and its
 * class from api/class.h's table, the one wa-send classes its answers
 * with (131049 is "later", as from a send): the apply statement is given
 * each failed status's class; the retry, the class of each code its
 * kept failures carry, looked up first.
 *
 * Postgres gone is waited for with pg/pg.h's policy (the spool's lock
 * taken again on the new session), then the program exits 69. A batch
 * Postgres refuses for its data is applied in halves until the status at
 * fault is alone; it is reported, and the checkpoint moves past it,
 * with the batch's opt-outs (their values are checked where they enter;
 * if Postgres refuses them still, they go one by one, and those it
 * refuses are reported too).
 *
 * The spool is only a name here, the checkpoint's key and the lock's:
 * once a batch is committed, the segment of its checkpoint goes to the
 * caller (committed), whose spool it is to prune.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/metrics.h"
#include "core/sig.h"
#include "records/status.h"
#include "api/class.h"
#include "pg/pg.h"
#include "pg/statusdb.h"

/*
 * The ids of the rows of the person whose number is phone ("+" and
 * digits, or their wa_id with a "+"): those of their number in any
 * campaign, and those whose answer gave that wa_id (an old Brazilian
 * account's, the ninth digit missing). How a wamid is found: among its
 * person's rows, a handful, not through an index on the wamid, which
 * would cost every result an entry (sql/schema.sql, version 10).
 */
#define ROWS_OF(phone) "(SELECT rp.recipient_id AS id" \
    " FROM campaign_phones rp WHERE rp.phone = " phone \
    " UNION ALL SELECT rw.id FROM campaign_recipients rw" \
    " WHERE rw.wa_id = substr(" phone ", 2))"

/*
 * The update both statements end with, from m0(id, wamid, status, at,
 * code, title, class, pricing). A row without a wamid takes the status's:
 * a send whose answer was lost, or whose result died with its wa-send or
 * wa-record, has no other way to get it. A failed row's class is the one
 * wa-send would give its error (api/class.h's table, in C: the
 * statements are given it). A status that carries a pricing code gives
 * it to its row, in the same update (two bytes more, no index). A
 * delivered or read that moves no row (it came after a higher one) gives
 * it to a row that has none yet, in an update of its own (pr), which the
 * rows the first one took are kept out of; a sent that moves no row (the
 * usual case: wa-record wrote sent first) gives nothing, or every message
 * would be written once more: Meta puts the pricing on one of delivered
 * and read as well, and a message is charged when delivered.
 */
#define UPDATE_M \
    " m AS (SELECT DISTINCT ON (id) id, wamid, status, at, code, title," \
    "   class, coalesce(pricing, max(pricing) OVER (PARTITION BY id))" \
    "   AS pricing FROM m0" \
    "  ORDER BY id, status_rank(status) DESC, at)," \
    " upd AS (UPDATE campaign_recipients r SET status = m.status," \
    "   wamid = coalesce(r.wamid, m.wamid)," \
    "   status_at = coalesce(m.at, now())," \
    "   error_code = CASE WHEN m.status = 'failed' THEN m.code END," \
    "   error_title = CASE WHEN m.status = 'failed' THEN m.title END," \
    "   error_class = CASE WHEN m.status = 'failed' THEN m.class END," \
    "   pricing = coalesce(m.pricing, r.pricing)" \
    "  FROM m WHERE r.id = m.id" \
    "   AND status_rank(m.status) > status_rank(r.status)" \
    "  RETURNING r.id, r.attempt, m.status, m.code, m.title, m.class," \
    "   extract(epoch FROM now() - m.at) AS lag)," \
    " hist AS (INSERT INTO recipient_errors (recipient_id, attempt, code," \
    "   class, title, at)" \
    "  SELECT id, attempt, code, class, title, now() FROM upd" \
    "  WHERE status = 'failed')," \
    " pr AS (UPDATE campaign_recipients r SET pricing = m.pricing FROM m" \
    "  WHERE r.id = m.id AND m.pricing IS NOT NULL AND r.pricing IS NULL" \
    "   AND m.status IN ('delivered', 'read')" \
    "   AND NOT EXISTS (SELECT 1 FROM upd WHERE upd.id = m.id))"

/*
 * The batch's inbound messages ($16, a JSON array of records/inbound.h's
 * objects) into inbound_messages, once each (ON CONFLICT: a body applied
 * again adds nothing), each with the row it answers: the one whose wamid
 * is its context (a reply, a reaction), else the latest sent, delivered
 * or read to the same phone, sent or updated within the 24 h before the
 * message (the window it would answer); the campaign's own number first.
 */
/*
 * The number of the person whose WhatsApp id is phone without its '+':
 * a row's whose answer gave that wa_id (an old Brazilian account's, the
 * ninth digit missing), else phone itself.
 */
#define PERSON(phone) "coalesce((SELECT c.phone FROM campaign_recipients c" \
    " WHERE c.wa_id = substr(" phone ", 2) LIMIT 1), " phone ")"

/*
 * The number a business-scoped user id was seen with: in user_ids, or
 * on a status of this batch (b, apply_sql's), not yet in it.
 */
#define KNOWN(uid) "coalesce((SELECT u.phone FROM user_ids u" \
    " WHERE u.user_id = " uid "), (SELECT b.phone FROM b" \
    " WHERE b.uid = " uid " AND b.id IS NOT NULL LIMIT 1))"

/*
 * The person who is phone (PERSON), or, when Meta named them by their
 * business-scoped user id alone, the number that id was seen with
 * (KNOWN), else the id itself: an opt-out kept under it moves to the
 * number when the two are first seen together (sql/schema.sql).
 */
#define WHO(phone, uid) "coalesce(" PERSON(phone) ", " KNOWN(uid) ", " \
    uid ")"

#define INBOUND_I \
    " i AS (SELECT coalesce(j.wamid, 'nowamid:' || md5(j.raw::text))" \
    "   AS key, j.*, coalesce(to_timestamp(j.ts), now()) AS at" \
    "  FROM jsonb_to_recordset($16::jsonb) AS j(wamid text, phone text," \
    "   wa_id text, bsuid text, pnid text, type text, body text," \
    "   payload text, media_id text, context text, ts bigint, raw jsonb," \
    "   field text, waba text))," \
    " ib AS (INSERT INTO inbound_messages (wamid, phone, wa_id, bsuid," \
    "   phone_number_id, type, body, payload, media_id, context_wamid," \
    "   sent_at, raw, campaign_id, recipient_id)" \
    "  SELECT DISTINCT ON (i.key) i.key, i.phone, i.wa_id, i.bsuid," \
    "   i.pnid, coalesce(i.type, 'unknown'), i.body, i.payload," \
    "   i.media_id, i.context, i.at, i.raw, r.campaign_id, r.id FROM i" \
    "  LEFT JOIN LATERAL (SELECT CASE WHEN c.wamid = i.context THEN 0" \
    "    ELSE 1 END AS o, g.phone_number_id IS NOT DISTINCT FROM i.pnid" \
    "    AS own, c.id, c.campaign_id," \
    "    greatest(c.status_at, c.claimed_at) AS t" \
    "    FROM " ROWS_OF("coalesce(i.phone, " KNOWN("i.bsuid") ")") " s" \
    "    JOIN campaign_recipients c ON c.id = s.id JOIN campaigns g" \
    "    ON g.id = c.campaign_id" \
    "    WHERE c.wamid = i.context OR c.phase = 2" \
    "     AND c.status IN ('sent', 'delivered', 'read')" \
    "     AND (c.status_at BETWEEN i.at - interval '24 hours' AND i.at" \
    "      + interval '1 second' OR c.claimed_at BETWEEN i.at" \
    "      - interval '24 hours' AND i.at + interval '1 second')" \
    "   ORDER BY o, own DESC, t DESC, id DESC LIMIT 1) r ON true" \
    "  WHERE i.type IS DISTINCT FROM 'user_preferences'" \
    "   AND i.field IS NULL" \
    "  ORDER BY i.key" \
    "  ON CONFLICT (wamid) DO NOTHING RETURNING 1)," \
    " um AS (INSERT INTO user_ids (user_id, phone)" \
    "  SELECT DISTINCT ON (i.bsuid) i.bsuid, " PERSON("i.phone") " FROM i" \
    "  WHERE i.bsuid IS NOT NULL AND i.phone IS NOT NULL ORDER BY i.bsuid" \
    "  ON CONFLICT DO NOTHING RETURNING 1)," \
    " pv AS (SELECT i.pnid, i.phone, i.bsuid, i.type, i.body, coalesce(" \
    "   i.raw #>> '{system,marketing}'," \
    "   i.raw #>> '{user_preferences,value}') AS v FROM i" \
    "  WHERE coalesce(i.phone, i.bsuid) IS NOT NULL AND i.pnid IS NOT NULL" \
    "   AND (i.type =" \
    "   'user_preferences' AND i.raw #>> '{user_preferences,category}' =" \
    "   'marketing_messages' OR i.type = 'system' AND i.raw #>>" \
    "   '{system,type}' = 'user_preference_changed'))," \
    " pref AS (INSERT INTO suppressions (scope, phone, reason)" \
    "  SELECT i.pnid, " WHO("i.phone", "i.bsuid") "," \
    "   i.type || ' \"' || left(i.body, 64) || '\"'" \
    "  FROM i WHERE coalesce(i.phone, i.bsuid) IS NOT NULL" \
    "   AND i.pnid IS NOT NULL" \
    "   AND i.type IN ('button', 'interactive') AND (lower(btrim(i.body))" \
    "   IN (SELECT lower(k.keyword) FROM optout_keywords k)" \
    "   OR lower(btrim(i.payload)) IN (SELECT lower(k.keyword)" \
    "   FROM optout_keywords k))" \
    "  UNION ALL SELECT pv.pnid, " WHO("pv.phone", "pv.bsuid") "," \
    "   CASE pv.type WHEN 'system'" \
    "   THEN 'system user_preference_changed stop'" \
    "   ELSE 'user_preferences stop' END FROM pv WHERE pv.v = 'stop'" \
    "  ON CONFLICT DO NOTHING RETURNING 1)," \
    " unpref AS (DELETE FROM suppressions s USING pv" \
    "  WHERE pv.v = 'resume' AND s.scope = pv.pnid" \
    "   AND s.phone = " WHO("pv.phone", "pv.bsuid") \
    "   AND (s.reason = 'user_preferences stop'" \
    "   OR s.reason = 'system user_preference_changed stop')" \
    "  RETURNING 1)," \
    EVENTS

/*
 * The batch's changes about the business (records/inbound.h's events,
 * among $16) into account_events, each once; those that stop a campaign
 * pause it, saying why in its state_reason: the campaign's template
 * (its name, and its language, which Meta writes en-US) paused,
 * disabled, deleted, archived or rejected, or its account disabled,
 * restricted from messaging first, in violation or gone (a campaign of
 * no WABA of its own is taken to be of any); the template back
 * (approved, reinstated, unarchived, unpaused) says it can resume. A
 * template's latest event of the batch counts. A new limit sets the
 * portfolios of the account's campaigns' numbers (messaging_tier: a
 * value that is none changes nothing). Meta's pages: the webhooks
 * reference of each field; cloud-api-2026.md §2.3, §4, §8.
 */
#define EVENTS \
    " ev AS (INSERT INTO account_events (key, waba_id, field, event," \
    "   template_name, template_lang, detail, at)" \
    "  SELECT DISTINCT ON (k) k, i.waba, i.field, coalesce(" \
    "   i.raw->>'event', i.raw->>'new_category'," \
    "   i.raw->>'max_daily_conversations_per_business')," \
    "   i.raw->>'message_template_name'," \
    "   replace(i.raw->>'message_template_language', '-', '_')," \
    "   i.raw, i.at FROM i, LATERAL (SELECT 'event:' || md5(i.field" \
    "   || ':' || coalesce(i.waba, '') || ':' || i.raw::text) AS k) k" \
    "  WHERE i.field IS NOT NULL ORDER BY k" \
    "  ON CONFLICT (key) DO NOTHING RETURNING *)," \
    " te AS (SELECT DISTINCT ON (e.waba_id, e.template_name," \
    "   e.template_lang) e.*, CASE WHEN e.event IN ('PAUSED', 'DISABLED'," \
    "   'PENDING_DELETION', 'DELETED', 'ARCHIVED', 'REJECTED')" \
    "   THEN 'stop' WHEN e.event IN ('APPROVED', 'REINSTATED'," \
    "   'UNARCHIVED') OR e.detail #>> '{other_info,title}' = 'UNPAUSE'" \
    "   THEN 'go' END AS act" \
    "  FROM ev e WHERE e.field = 'message_template_status_update'" \
    "   AND e.template_name IS NOT NULL" \
    "  ORDER BY e.waba_id, e.template_name, e.template_lang, e.at DESC," \
    "   e.id DESC)," \
    " tp AS (UPDATE campaigns c SET updated_at = now()," \
    "   state = CASE te.act WHEN 'stop' THEN 'paused' ELSE c.state END," \
    "   state_reason = CASE te.act WHEN 'stop' THEN 'Meta: template '" \
    "    || te.template_name || ' (' || c.template_lang || ') '" \
    "    || te.event || coalesce(' (' || nullif(te.detail->>'reason'," \
    "    'NONE') || ')', '') || coalesce(', ' || (te.detail #>>" \
    "    '{other_info,title}'), '')" \
    "    ELSE regexp_replace(c.state_reason, '; then .*$', '')" \
    "    || '; then ' || te.event || coalesce(' ' || (te.detail #>>" \
    "    '{other_info,title}'), '') || ': it can be resumed' END" \
    "  FROM te WHERE te.act IS NOT NULL" \
    "   AND c.template_name = te.template_name" \
    "   AND c.template_lang = te.template_lang" \
    "   AND (c.waba_id IS NULL OR c.waba_id = te.waba_id)" \
    "   AND (te.act = 'stop' AND c.state IN ('running', 'scheduled')" \
    "   OR te.act = 'go' AND c.state = 'paused'" \
    "   AND c.state_reason LIKE 'Meta: template %')" \
    "  RETURNING c.id, te.act)," \
    " ap AS (UPDATE campaigns c SET state = 'paused', updated_at = now()," \
    "   state_reason = 'Meta: account ' || coalesce(e.waba_id, '')" \
    "    || ' ' || e.event || coalesce(' ' || (e.detail #>>" \
    "    '{ban_info,waba_ban_state}'), '') || coalesce(' ' || (e.detail" \
    "    #>> '{violation_info,violation_type}'), '')" \
    "  FROM ev e WHERE e.field = 'account_update'" \
    "   AND (e.event IN ('ACCOUNT_VIOLATION', 'ACCOUNT_DELETED'," \
    "   'PARTNER_APP_UNINSTALLED', 'PARTNER_REMOVED')" \
    "   OR e.event = 'DISABLED_UPDATE' AND e.detail #>>" \
    "   '{ban_info,waba_ban_state}' IN ('DISABLE', 'SCHEDULE_FOR_DISABLE')" \
    "   OR e.event = 'ACCOUNT_RESTRICTION' AND jsonb_path_exists(" \
    "   e.detail, '$.restriction_info[*] ? (@.restriction_type ==" \
    "   \"RESTRICTED_BIZ_INITIATED_MESSAGING\")'))" \
    "   AND c.state IN ('running', 'scheduled')" \
    "   AND (c.waba_id IS NULL OR c.waba_id = e.waba_id)" \
    "  RETURNING c.id)," \
    " cap AS (SELECT DISTINCT ON (p.portfolio) p.portfolio," \
    "   messaging_tier(e.event) AS n" \
    "  FROM ev e, LATERAL (SELECT DISTINCT portfolio_of(c.phone_number_id)" \
    "   AS portfolio FROM campaigns c WHERE c.waba_id IS NULL" \
    "   OR c.waba_id = e.waba_id) p" \
    "  WHERE e.field = 'business_capability_update'" \
    "   AND messaging_tier(e.event) <> 0" \
    "  ORDER BY p.portfolio, e.at DESC, e.id DESC)," \
    " lim AS (SELECT messaging_limit_set(portfolio, nullif(n, -1), NULL)" \
    "  FROM cap)"

/*
 * A status moves only its own row: the row its callback data names
 * ($1: "id" or "id:attempt") if that row holds its wamid, or has none
 * yet and the attempt is the row's (OURS); else the row of its person
 * that holds its wamid. An older attempt's sent, delivered or read
 * counts too: that message reached the person (its row's next attempt
 * went out, or may, because its answer was lost), and settling the row
 * is what keeps them from a third; an older attempt's failure is stale
 * and moves nothing. A status that names a row which then is not its
 * own (the row holds another wamid, or the attempt is another's) is
 * another system's or an older attempt's: never applied, never kept,
 * counted as foreign. (A tag of another deployment is told apart by
 * records/status.c, before the batch.)
 */
#define OURS(att, status, c) \
    "(" c ".wamid IS NULL AND (" att " IS NULL OR " att " = " c ".attempt" \
    " OR (" att " < " c ".attempt AND " status " <> 'failed')))"

/* apply_sql's parameters, $1 to $18. */
#define NPARAMS 18

static const char *apply_sql =
    "WITH b0 AS (SELECT split_part(b.rx, ':', 1)::bigint AS rid,"
    "   nullif(split_part(b.rx, ':', 2), '')::integer AS att, b.wamid,"
    "   b.status, to_timestamp(b.ts) AS at, b.code, b.title, b.class,"
    "   b.pricing, b.uid, b.ph"
    "  FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[],"
    "   $5::integer[], $6::text[], $14::text[], $15::smallint[],"
    "   $17::text[], $18::text[])"
    "   AS b(rx, wamid, status, ts, code, title, class, pricing, uid,"
    "   ph)),"
    " b AS (SELECT CASE WHEN c.wamid = b0.wamid THEN c.id"
    "    WHEN w.id IS NOT NULL THEN w.id"
    "    WHEN " OURS("b0.att", "b0.status", "c")
    "    THEN c.id END AS id, CASE WHEN c.wamid = b0.wamid THEN c.phone"
    "    WHEN w.id IS NOT NULL THEN w.phone"
    "    WHEN " OURS("b0.att", "b0.status", "c")
    "    THEN c.phone END AS phone, b0.*,"
    "   c.wamid IS DISTINCT FROM b0.wamid"
    "    AND w.id IS NULL AND c.id IS NOT NULL"
    "    AND NOT " OURS("b0.att", "b0.status", "c") " AS alien"
    "  FROM b0 LEFT JOIN campaign_recipients c ON c.id = b0.rid"
    /* The wamid's row looked up only when the named row is not it and
     * may not take it (the usual status, its row named and holding it
     * or on its attempt without one yet, costs one probe), among the
     * rows of the person it went to: by the number Meta gives, else the
     * named row's, else the one their user id was seen with. */
    "  LEFT JOIN LATERAL (SELECT x.id, x.phone"
    "   FROM " ROWS_OF("coalesce(b0.ph, c.phone, (SELECT u.phone"
    "    FROM user_ids u WHERE u.user_id = b0.uid))") " s"
    "   JOIN campaign_recipients x ON x.id = s.id"
    "   WHERE x.wamid = b0.wamid AND c.wamid IS DISTINCT FROM b0.wamid"
    "    AND (c.id IS NULL OR NOT " OURS("b0.att", "b0.status", "c") ")"
    "   LIMIT 1) w ON true),"
    " m0 AS (SELECT id, wamid, status, at, code, title, class, pricing"
    "  FROM b WHERE id IS NOT NULL),"
    UPDATE_M ","
    /* A conversation's message (no row: wa-record keeps it by wamid)
     * moves as a row does; its statuses are never kept unmatched. */
    " cv AS (UPDATE conversation_messages v SET status = CASE WHEN"
    "   status_rank(b.status) > status_rank(v.status) THEN b.status"
    "   ELSE v.status END, status_at = CASE WHEN status_rank(b.status) >"
    "   status_rank(v.status) THEN coalesce(b.at, now())"
    "   ELSE v.status_at END,"
    "   error_code = CASE WHEN b.status = 'failed' THEN b.code"
    "    ELSE v.error_code END,"
    "   error_title = CASE WHEN b.status = 'failed' THEN b.title"
    "    ELSE v.error_title END,"
    "   error_class = CASE WHEN b.status = 'failed' THEN b.class"
    "    ELSE v.error_class END,"
    "   pricing = coalesce(v.pricing, b.pricing)"
    "  FROM b WHERE b.id IS NULL AND NOT b.alien AND v.wamid = b.wamid"
    "   AND (status_rank(b.status) > status_rank(v.status)"
    "   OR v.pricing IS NULL AND b.pricing IS NOT NULL)"
    "  RETURNING v.status),"
    " kept AS (INSERT INTO unmatched_statuses (wamid, status, recipient_id,"
    "   status_at, error_code, error_title, pricing, attempt, phone)"
    "  SELECT b.wamid, b.status, b.rid, b.at, b.code, b.title, b.pricing,"
    "   b.att, b.ph FROM b"
    "  WHERE b.id IS NULL AND NOT b.alien AND NOT EXISTS (SELECT 1"
    "   FROM conversation_messages v WHERE v.wamid = b.wamid)"
    "  ON CONFLICT DO NOTHING RETURNING 1),"
    " ck AS (INSERT INTO spool_checkpoints (spool, segment, byte_offset)"
    "  SELECT $7::text, $8::bigint, $9::bigint WHERE $7::text IS NOT NULL"
    "  ON CONFLICT (spool) DO UPDATE SET segment = excluded.segment,"
    "   byte_offset = excluded.byte_offset, updated_at = now()"
    "  RETURNING 1),"
    /* Who a status went to, by the id Meta knows them by (b holds
     * the row's number: no second look-up). */
    " ids AS (INSERT INTO user_ids (user_id, phone)"
    "  SELECT DISTINCT ON (b.uid) b.uid, b.phone FROM b"
    "  WHERE b.uid IS NOT NULL AND b.id IS NOT NULL ORDER BY b.uid"
    "  ON CONFLICT DO NOTHING RETURNING 1),"
    /* o.phone: "+" and digits, or a BSUID. */
    " opt AS (INSERT INTO suppressions (scope, phone, reason)"
    "  SELECT o.scope, " WHO("CASE WHEN o.phone LIKE '+%' THEN o.phone END",
    "CASE WHEN o.phone NOT LIKE '+%' THEN o.phone END") ","
    "   'inbound \"' || o.said || '\"'"
    "  FROM unnest($10::text[], $11::text[], $12::text[], $13::text[])"
    "   AS o(scope, phone, said, word)"
    "  WHERE o.word IN (SELECT lower(k.keyword) FROM optout_keywords k)"
    "  ON CONFLICT DO NOTHING RETURNING 1),"
    INBOUND_I
    " SELECT status, lag FROM upd"
    " UNION ALL SELECT 'kept', count(*) FROM kept"
    " UNION ALL SELECT 'conversation', count(*) FROM cv"
    " UNION ALL SELECT 'foreign', count(*) FILTER (WHERE alien) FROM b"
    " UNION ALL SELECT 'checkpoint', count(*) FROM ck"
    " UNION ALL SELECT 'optout', count(*) FROM opt"
    " UNION ALL SELECT 'inbound', count(*) FROM ib"
    " UNION ALL SELECT 'optout', count(*) FROM pref"
    " UNION ALL SELECT 'resumed', count(*) FROM unpref"
    " UNION ALL SELECT 'event', count(*) FROM ev"
    " UNION ALL SELECT 'limit', count(*) FROM lim"
    " UNION ALL SELECT CASE act WHEN 'stop' THEN 'paused' ELSE"
    "  'may resume' END, id FROM tp"
    " UNION ALL SELECT 'paused', id FROM ap";

/*
 * The error codes of the failed statuses kept in the last $1 seconds,
 * for their classes: the retry is given them ($2, $3).
 */
static const char *codes_sql =
    "SELECT DISTINCT error_code FROM unmatched_statuses"
    " WHERE status = 'failed'"
    "  AND received_at >= now() - make_interval(secs => $1)";

/*
 * $2, $3: error codes (one may be NULL) and their classes. A failed
 * status whose code is not among them (kept since they were looked up)
 * waits for the next retry.
 */
static const char *retry_sql =
    "WITH cls AS (SELECT * FROM unnest($2::integer[], $3::text[])"
    "   AS x(code, class)),"
    " old AS (SELECT u.wamid, u.status, coalesce((SELECT c.id"
    "   FROM " ROWS_OF("coalesce(u.phone, n.phone)") " s"
    "   JOIN campaign_recipients c ON c.id = s.id WHERE c.wamid = u.wamid"
    "   LIMIT 1),"
    "   CASE WHEN " OURS("u.attempt", "u.status", "n") " THEN n.id END)"
    "   AS id"
    "  FROM unmatched_statuses u"
    "  LEFT JOIN campaign_recipients n ON n.id = u.recipient_id"
    "  WHERE u.received_at >= now() - make_interval(secs => $1)),"
    " d AS (DELETE FROM unmatched_statuses u"
    "  USING old o, campaign_recipients c"
    "  WHERE u.wamid = o.wamid AND u.status = o.status AND c.id = o.id"
    "   AND (u.status <> 'failed' OR EXISTS (SELECT 1 FROM cls"
    "    WHERE cls.code IS NOT DISTINCT FROM u.error_code))"
    "  RETURNING c.id, u.wamid, u.status, u.status_at AS at,"
    "   u.error_code AS code,"
    "   u.error_title AS title, u.pricing),"
    " m0 AS (SELECT d.*, (SELECT cls.class FROM cls"
    "   WHERE d.status = 'failed' AND cls.code IS NOT DISTINCT FROM d.code)"
    "   AS class FROM d),"
    UPDATE_M
    " SELECT status, lag FROM upd"
    " UNION ALL SELECT 'matched', count(*) FROM m0";

static void
num(struct wa_buf *a, int has, int64_t v)
{
	char s[32];

	if (!has) {
		wa_pg_array_null(a);
		return;
	}
	snprintf(s, sizeof s, "%lld", (long long)v);
	wa_pg_array_add(a, s, strlen(s));
}

/*
 * Ten array literals in a[0..9]: recipient ids, wamids, statuses,
 * timestamps, error codes, error titles (NULL where absent), the classes
 * of failed statuses' errors (NULL for the others), the pricing codes
 * (NULL where a status has none), the recipients' user ids and their
 * numbers (NULL where Meta gave none).
 */
static void
arrays(const struct wa_status_batch *b, size_t lo, size_t hi,
    struct wa_buf *a)
{
	const struct wa_status *s;
	char rx[48];
	size_t k;
	int i;

	for (i = 0; i < 10; i++)
		wa_pg_array_start(&a[i]);
	for (k = lo; k < hi; k++) {
		s = &b->v[k];
		if (s->rid != 0 && s->attempt >= 0) {
			snprintf(rx, sizeof rx, "%lld:%lld",
			    (long long)s->rid, (long long)s->attempt);
			wa_pg_array_add(&a[0], rx, strlen(rx));
		} else
			num(&a[0], s->rid != 0, s->rid);
		wa_pg_array_add(&a[1], b->str.s + s->wamid, s->wamid_len);
		wa_pg_array_add(&a[2], wa_rank_names[s->rank],
		    strlen(wa_rank_names[s->rank]));
		num(&a[3], s->ts != 0, s->ts);
		num(&a[4], s->has_code, s->code);
		if (s->title_len > 0)
			wa_pg_array_add(&a[5], b->str.s + s->title,
			    s->title_len);
		else
			wa_pg_array_null(&a[5]);
		if (strcmp(wa_rank_names[s->rank], "failed") == 0)
			wa_pg_array_str(&a[6], wa_class_name(wa_class_of(
			    s->has_code ? s->code : -1, -1, 0)));
		else
			wa_pg_array_null(&a[6]);
		num(&a[7], s->pricing >= 0, s->pricing);
		if (s->uid_len > 0)
			wa_pg_array_add(&a[8], b->str.s + s->uid, s->uid_len);
		else
			wa_pg_array_null(&a[8]);
		if (s->phone_len > 0)
			wa_pg_array_add(&a[9], b->str.s + s->phone,
			    s->phone_len);
		else
			wa_pg_array_null(&a[9]);
	}
	for (i = 0; i < 10; i++)
		wa_pg_array_end(&a[i]);
}

/*
 * Four array literals in a[0..3]: the scope, phone, text and word of
 * the inbound texts lo to hi of b.
 */
static void
texts(const struct wa_status_batch *b, size_t lo, size_t hi,
    struct wa_buf *a)
{
	const struct wa_inbound *t;
	size_t k;
	int i;

	for (i = 0; i < 4; i++)
		wa_pg_array_start(&a[i]);
	for (k = lo; k < hi; k++) {
		t = &b->in[k];
		wa_pg_array_add(&a[0], b->str.s + t->scope, t->scope_len);
		wa_pg_array_add(&a[1], b->str.s + t->phone, t->phone_len);
		wa_pg_array_add(&a[2], b->str.s + t->said, t->said_len);
		wa_pg_array_add(&a[3], b->str.s + t->word, t->word_len);
	}
	for (i = 0; i < 4; i++)
		wa_pg_array_end(&a[i]);
}

/* Postgres stayed away past the timeout, or refused a statement. */
static void
gone(struct wa_status_sink *k)
{
	if (wa_pg_state(k->db) == WA_PG_REFUSED)
		wa_warn("postgres: %s", wa_pg_error(k->db));
	wa_die(EX_UNAVAILABLE, "statuses not applied stay where they are "
	    "(a spool's checkpoint has not moved past them)");
}

/*
 * A session ready for statement name (NULL: none), holding the spool's
 * lock when following one: taken again on every new session (not behind
 * a pooler in transaction pooling, where no session lock holds: there
 * the spool's reader lock alone keeps one reader). Exits 75 when another
 * process follows the spool, 69 when Postgres stays away.
 */
static PGconn *
ready(struct wa_status_sink *k, const char *name, const char *sql, int n)
{
	const char *p[] = { k->spool };
	PGresult *res;
	PGconn *conn;

	for (;;) {
		if ((conn = wa_pg_ready(k->db, name, sql, n)) == NULL)
			gone(k);
		if (k->spool == NULL || PQbackendPID(conn) == k->locked ||
		    wa_pg_unprepared(k->db))
			return conn;
		res = PQexecParams(conn, "SELECT pg_try_advisory_lock("
		    "hashtext('wa-status-ingest'), hashtext($1))", 1, NULL, p,
		    NULL, NULL, 0);
		if (PQresultStatus(res) == PGRES_TUPLES_OK) {
			if (*PQgetvalue(res, 0, 0) != 't') {
				/* Cleared first: no leak for LSan to report. */
				PQclear(res);
				wa_die(EX_TEMPFAIL, "another wa-status-ingest "
				    "follows %s", k->spool);
			}
			k->locked = PQbackendPID(conn);
			PQclear(res);
			return conn;
		}
		if (wa_pg_again(k->db, res) <= 0)
			gone(k);
		PQclear(res);
	}
}

/*
 * Runs sql until it succeeds, with the policy of pg/pg.h; NULL when
 * Postgres refused it for its data, else exits 69 when it cannot.
 */
static PGresult *
run(struct wa_status_sink *k, const char *sql, int n, const char *const *p)
{
	PGresult *res;
	int again;

	for (;;) {
		res = PQexecParams(ready(k, NULL, NULL, 0), sql, n, NULL, p,
		    NULL, NULL, 0);
		if (PQresultStatus(res) == PGRES_TUPLES_OK ||
		    PQresultStatus(res) == PGRES_COMMAND_OK) {
			wa_pg_ok(k->db);
			return res;
		}
		again = wa_pg_again(k->db, res);
		PQclear(res);
		if (again == 0 && wa_pg_data_error(k->db))
			return NULL;
		if (again <= 0)
			gone(k);
	}
}

void
wa_status_deployment(struct wa_status_sink *k)
{
	PGresult *res = run(k, "SELECT tag FROM wapipe_deployment", 0, NULL);

	if (res == NULL || PQntuples(res) != 1)
		wa_die(EX_UNAVAILABLE, "the database has no deployment tag: "
		    "its schema is older than these programs' (wa-campaign "
		    "migrate)");
	snprintf(k->b[0].tag, sizeof k->b[0].tag, "%s", PQgetvalue(res, 0, 0));
	memcpy(k->b[1].tag, k->b[0].tag, sizeof k->b[1].tag);
	PQclear(res);
}

/*
 * Takes the spool for this session (exits 75 when another process has
 * it) and returns where the last run stopped in *seg, *off (-1, 0: never).
 */
void
wa_status_checkpoint(struct wa_status_sink *k, long long *seg,
    long long *off)
{
	const char *p[] = { k->spool };
	PGresult *res;

	if ((res = run(k, "SELECT segment, byte_offset FROM"
	    " spool_checkpoints WHERE spool = $1", 1, p)) == NULL)
		gone(k);
	*seg = -1;
	*off = 0;
	if (PQntuples(res) == 1) {
		*seg = atoll(PQgetvalue(res, 0, 0));
		*off = atoll(PQgetvalue(res, 0, 1));
	}
	PQclear(res);
}

/* Sends the statement of b, prepared first on a new session. */
static void
submit(struct wa_status_sink *k, struct wa_status_batch *b)
{
	ready(k, "wa_status_apply", apply_sql, 0);
	wa_pg_send(k->db, "wa_status_apply", apply_sql, NPARAMS, b->p);
	b->t0 = wa_now_ns();
}

/* Sends the reduced batch b, with (seg, off) as spool's checkpoint. */
static void
send_batch(struct wa_status_sink *k, struct wa_status_batch *b,
    const char *spool, long long seg, long long off)
{
	int i;

	arrays(b, 0, b->n, b->arr);
	texts(b, 0, b->nin, b->arr + 10);
	for (i = 0; i < 6; i++)
		b->p[i] = b->arr[i].s;
	for (i = 0; i < 4; i++)
		b->p[9 + i] = b->arr[10 + i].s;
	b->p[13] = b->arr[6].s;
	b->p[14] = b->arr[7].s;
	b->p[16] = b->arr[8].s;
	b->p[17] = b->arr[9].s;
	if (b->msgs.len == 0)
		wa_buf_add(&b->msgs, "[", 1);
	wa_buf_add(&b->msgs, "]", 1);
	b->p[15] = b->msgs.s;
	snprintf(b->num[0], sizeof b->num[0], "%lld", seg);
	snprintf(b->num[1], sizeof b->num[1], "%lld", off);
	b->spool = spool;
	b->p[6] = spool;
	b->p[7] = b->num[0];
	b->p[8] = b->num[1];
	submit(k, b);
}

/* Adds the rows of res to *r; each applied status's lag to lag. */
static void
tally(PGresult *res, struct wa_status_result *r, struct wa_metric *lag)
{
	const char *what;
	int i, k;

	for (i = 0; i < PQntuples(res); i++) {
		what = PQgetvalue(res, i, 0);
		for (k = 0; k < 4 && strcmp(what, wa_st_names[k]) != 0; k++)
			;
		if (k < 4) {
			r->applied[k]++;
			if (!PQgetisnull(res, i, 1) && lag != NULL)
				wa_metric_observe(lag,
				    atof(PQgetvalue(res, i, 1)));
		} else if (strcmp(what, "kept") == 0)
			r->kept += atoll(PQgetvalue(res, i, 1));
		else if (strcmp(what, "foreign") == 0)
			r->foreign += atoll(PQgetvalue(res, i, 1));
		else if (strcmp(what, "matched") == 0)
			r->matched += atoll(PQgetvalue(res, i, 1));
		else if (strcmp(what, "optout") == 0)
			r->optouts += atoll(PQgetvalue(res, i, 1));
		else if (strcmp(what, "inbound") == 0)
			r->inbound += atoll(PQgetvalue(res, i, 1));
		else if (strcmp(what, "event") == 0)
			r->events += atoll(PQgetvalue(res, i, 1));
		else if (strcmp(what, "paused") == 0 ||
		    strcmp(what, "may resume") == 0)
			wa_warn("campaign %s %s, as Meta's webhook says "
			    "(wa-campaign status %s)", PQgetvalue(res, i, 1),
			    *what == 'p' ? "paused" : "may be resumed",
			    PQgetvalue(res, i, 1));
	}
}

static void apply_range(struct wa_status_sink *, struct wa_status_batch *,
    size_t, size_t);

/*
 * b[lo..hi) was refused for its data: applies its halves, or reports the
 * status when it is alone. Without the checkpoint: it moves at the end.
 */
static void
split(struct wa_status_sink *k, struct wa_status_batch *b, size_t lo,
    size_t hi)
{
	if (hi == lo)
		return;
	if (hi - lo > 1) {
		apply_range(k, b, lo, lo + (hi - lo) / 2);
		apply_range(k, b, lo + (hi - lo) / 2, hi);
		return;
	}
	if (k->refused != NULL)
		k->refused(b->v[lo].lineno, wa_pg_error(k->db));
}

static void
apply_range(struct wa_status_sink *k, struct wa_status_batch *b, size_t lo,
    size_t hi)
{
	struct wa_buf a[10] = { { 0 } };
	const char *p[NPARAMS];
	PGresult *res;
	int i;

	arrays(b, lo, hi, a);
	p[15] = "[]";
	p[16] = a[8].s;
	p[17] = a[9].s;
	for (i = 0; i < 6; i++)
		p[i] = a[i].s;
	p[6] = p[7] = p[8] = NULL;
	p[9] = p[10] = p[11] = p[12] = "{}";
	p[13] = a[6].s;
	p[14] = a[7].s;
	if ((res = run(k, apply_sql, NPARAMS, p)) == NULL)
		split(k, b, lo, hi);
	else {
		tally(res, &k->total, k->lag);
		PQclear(res);
	}
	for (i = 0; i < 10; i++)
		wa_buf_free(&a[i]);
}

/*
 * The opt-outs of b were refused with the checkpoint: applies them one
 * by one, reporting those refused.
 */
static void
optouts(struct wa_status_sink *k, struct wa_status_batch *b)
{
	struct wa_buf a[4] = { { 0 } };
	const char *p[NPARAMS] = { "{}", "{}", "{}", "{}", "{}", "{}", NULL,
	    NULL, NULL, NULL, NULL, NULL, NULL, "{}", "{}", "[]", "{}", "{}" };
	PGresult *res;
	size_t j;
	int i;

	for (j = 0; j < b->nin; j++) {
		texts(b, j, j + 1, a);
		for (i = 0; i < 4; i++)
			p[9 + i] = a[i].s;
		if ((res = run(k, apply_sql, NPARAMS, p)) == NULL) {
			if (k->refused != NULL)
				k->refused(b->in[j].lineno,
				    wa_pg_error(k->db));
		} else {
			tally(res, &k->total, k->lag);
			PQclear(res);
		}
	}
	for (i = 0; i < 4; i++)
		wa_buf_free(&a[i]);
}

/*
 * The batch b was refused for its data, its inbound messages with it:
 * inserts them one by one, without the checkpoint (the text between the
 * brackets is split at the objects' top level), reporting those
 * refused. Their bodies were
 * checked as they entered: this is for what Postgres alone refuses.
 */
/* The "line" of the one message of s, a JSON array's text; or 0. */
static unsigned long
line(const char *s)
{
	struct json_object *a = json_tokener_parse(s);
	unsigned long n = 0;

	/* Deeper than json-c's default depth: no line to tell. */
	if (json_object_is_type(a, json_type_array) &&
	    json_object_array_length(a) == 1)
		n = json_object_get_int64(json_object_object_get(
		    json_object_array_get_idx(a, 0), "line"));
	json_object_put(a);
	return n;
}

static void
messages(struct wa_status_sink *k, struct wa_status_batch *b)
{
	const char *p[NPARAMS] = { "{}", "{}", "{}", "{}", "{}", "{}", NULL,
	    NULL, NULL, "{}", "{}", "{}", "{}", "{}", "{}", NULL, "{}", "{}" };
	struct wa_buf one = { 0 };
	const char *s = b->msgs.s + 1;
	PGresult *res;
	size_t i, start = 0;
	int depth = 0, q = 0;

	for (i = 0; s[i] != '\0'; i++) {
		if (q) {
			if (s[i] == '\\')
				i++;
			else if (s[i] == '"')
				q = 0;
			continue;
		}
		if (s[i] == '"')
			q = 1;
		else if (s[i] == '{')
			depth++;
		else if (s[i] == '}' && --depth == 0) {
			one.len = 0;
			wa_buf_add(&one, "[", 1);
			wa_buf_add(&one, s + start, i + 1 - start);
			wa_buf_add(&one, "]", 1);
			p[15] = one.s;
			if ((res = run(k, apply_sql, NPARAMS, p)) == NULL) {
				if (k->refused != NULL)
					k->refused(line(one.s),
					    wa_pg_error(k->db));
			} else {
				tally(res, &k->total, k->lag);
				PQclear(res);
			}
			start = i + 2;
		}
	}
	wa_buf_free(&one);
}

/*
 * Waits for the statement of b; sends it again after a deadlock or a
 * lost connection, splits it when its data is refused, exits 69 when
 * Postgres stays away.
 */
static void
wait_batch(struct wa_status_sink *k, struct wa_status_batch *b)
{
	PGresult *res, *last = NULL;
	PGconn *conn;
	int again;

	for (;;) {
		conn = wa_pg_conn(k->db);
		while (conn != NULL && (res = PQgetResult(conn)) != NULL) {
			PQclear(last);
			last = res;
		}
		if (PQresultStatus(last) == PGRES_TUPLES_OK) {
			wa_pg_ok(k->db);
			break;
		}
		again = wa_pg_again(k->db, last);
		PQclear(last);
		last = NULL;
		if (again == 0 && wa_pg_data_error(k->db) &&
		    strcmp(b->p[15], "[]") != 0) {
			/* The messages first, one by one; then the
			   batch again without them. */
			messages(k, b);
			b->p[15] = "[]";
			submit(k, b);
			continue;
		}
		if (again == 0 && wa_pg_data_error(k->db)) {
			split(k, b, 0, b->n);
			/* Then the checkpoint, past the batch, and the
			   batch's opt-outs. */
			last = run(k, apply_sql, NPARAMS, (const char
			    *const[]){ "{}", "{}", "{}", "{}", "{}", "{}",
			    b->p[6], b->p[7], b->p[8], b->p[9], b->p[10],
			    b->p[11], b->p[12], "{}", "{}", b->p[15], "{}",
			    "{}" });
			if (last == NULL && b->nin > 0) {
				optouts(k, b);
				last = run(k, apply_sql, NPARAMS, (const char
				    *const[]){ "{}", "{}", "{}", "{}", "{}",
				    "{}", b->p[6], b->p[7], b->p[8], "{}",
				    "{}", "{}", "{}", "{}", "{}", "[]",
				    "{}", "{}" });
			}
			if (last == NULL)
				gone(k);
			break;
		}
		if (again <= 0)
			gone(k);
		submit(k, b);
	}
	tally(last, &k->total, k->lag);
	PQclear(last);
}

/*
 * Waits for the batch in flight, if any: then it is committed, and so is
 * its checkpoint, which committed is told (wa-status-ingest --prune
 * removes the segments before it).
 */
void
wa_status_collect(struct wa_status_sink *k)
{
	struct wa_status_batch *b = &k->b[!k->cur];
	long long kept = k->total.kept;

	if (!k->busy)
		return;
	k->busy = 0;
	wait_batch(k, b);
	if (k->secs != NULL)
		wa_metric_observe(k->secs, (wa_now_ns() - b->t0) / 1e9);
	if (k->total.kept > kept)
		k->kept_at = wa_now_ms();
	if (k->committed != NULL && b->spool != NULL)
		k->committed(atoll(b->num[0]));
	wa_status_clear(b);
}

/*
 * Reduces the batch being filled and sends it, with the spool position
 * (seg, off) that it completes (seg -1: none), after the batch before it
 * has been committed; while Postgres applies it, the next one fills.
 */
void
wa_status_flush(struct wa_status_sink *k, long long seg, long long off)
{
	struct wa_status_batch *b = &k->b[k->cur];

	wa_status_reduce(b);
	wa_status_collect(k);
	send_batch(k, b, seg >= 0 ? k->spool : NULL, seg, off);
	k->busy = 1;
	k->cur = !k->cur;
}

/*
 * Applies the kept statuses received within window seconds whose row has
 * appeared; the errors of failed ones are classed here first, by code.
 */
void
wa_status_retry(struct wa_status_sink *k, long long window)
{
	struct wa_buf a[2] = { { 0 } };
	const char *p[3];
	PGresult *res;
	char s[32];
	int i;

	wa_status_collect(k);
	snprintf(s, sizeof s, "%lld", window);
	p[0] = s;
	if ((res = run(k, codes_sql, 1, p)) == NULL)
		gone(k);
	wa_pg_array_start(&a[0]);
	wa_pg_array_start(&a[1]);
	for (i = 0; i < PQntuples(res); i++) {
		if (PQgetisnull(res, i, 0))
			wa_pg_array_null(&a[0]);
		else
			wa_pg_array_str(&a[0], PQgetvalue(res, i, 0));
		wa_pg_array_str(&a[1], wa_class_name(wa_class_of(
		    PQgetisnull(res, i, 0) ? -1 :
		    atoll(PQgetvalue(res, i, 0)), -1, 0)));
	}
	wa_pg_array_end(&a[0]);
	wa_pg_array_end(&a[1]);
	PQclear(res);
	p[1] = a[0].s;
	p[2] = a[1].s;
	if ((res = run(k, retry_sql, 3, p)) == NULL)
		gone(k);
	tally(res, &k->total, k->lag);
	PQclear(res);
	wa_buf_free(&a[0]);
	wa_buf_free(&a[1]);
}

/* Drops kept statuses older than ttl seconds; returns how many. */
long long
wa_status_expire(struct wa_status_sink *k, long long ttl)
{
	const char *p[1];
	PGresult *res;
	long long n;
	char s[32];

	snprintf(s, sizeof s, "%lld", ttl);
	p[0] = s;
	wa_status_collect(k);
	if ((res = run(k, "DELETE FROM unmatched_statuses"
	    " WHERE received_at < now() - make_interval(secs => $1)", 1,
	    p)) == NULL)
		gone(k);
	n = atoll(PQcmdTuples(res));
	PQclear(res);
	return n;
}
