#!/bin/sh
# Inbound messages kept (issue 25): wa-status-ingest stores every message
# of a "messages" webhook in inbound_messages, once (Meta redelivers),
# attributed to the campaign row it answers; wa-campaign replies lists
# a campaign's, inbound prune drops old ones; kill -9 loses nothing and
# duplicates nothing. The payloads follow the shapes of Meta's examples,
# developers.facebook.com/docs/whatsapp/cloud-api/webhooks/payload-examples
# (text, reaction, image, sticker, unknown, location, contacts, quick
# reply button, list and button replies, flows' nfm_reply), with BSUID
# fields from the business-scoped user id page (from_user_id, user_id).
. "$(dirname "$0")/lib.sh"

pg_start
PN=106540352242922
NOW=$(date +%s)
cid=$(campaign 5)
cid2=$(campaign 2)
# Campaign 1: rows 1-3 sent an hour ago (wamid.out.N), 4 sent two days
# ago, 5 never sent. Campaign 2's rows (+15550000001, 2) were sent three
# hours ago, so for a reply without context campaign 1 is the latest.
sql "update campaign_recipients set status = 'delivered', attempt = 1,
    wamid = 'wamid.out.' || id, claimed_at = now() - interval '1 hour',
    status_at = now() - interval '59 minutes'
    where campaign_id = $cid and id in (1, 2, 3);
    update campaign_recipients set status = 'read', attempt = 1,
    wamid = 'wamid.out.4', claimed_at = now() - interval '2 days',
    status_at = now() - interval '47 hours' where id = 4;
    update campaign_recipients set status = 'sent', attempt = 1,
    wamid = 'wamid.out2.' || id, claimed_at = now() - interval '3 hours',
    status_at = now() - interval '3 hours' where campaign_id = $cid2" \
    >/dev/null

# msg FROM ID TYPE JSON-REST: one message object of value.messages[].
msg() {
	printf '{"from":"%s","id":"wamid.in.%s","timestamp":"%s","type":"%s"%s}' \
	    "$1" "$2" "${TS:-$NOW}" "$3" "${4:+,$4}"
}

# body MESSAGE...: a webhook body holding these messages, with a contact
# for the first sender, and STATUSES (a variable) beside them.
body() {
	printf '{"object":"whatsapp_business_account","entry":[{"id":"1022",'
	printf '"changes":[{"value":{"messaging_product":"whatsapp",'
	printf '"metadata":{"display_phone_number":"15550783881",'
	printf '"phone_number_id":"%s"},' "$PN"
	printf '"contacts":[{"profile":{"name":"Ana"},"wa_id":"15550000001",'
	printf '"user_id":"US.13491208655302741918"}],'
	[ -n "${STATUSES:-}" ] && printf '"statuses":[%s],' "$STATUSES"
	printf '"messages":[%s' "$1"
	shift
	for m in "$@"; do
		printf ',%s' "$m"
	done
	printf ']},"field":"messages"}]}]}\n'
}

ingest() {
	wa-status-ingest "$@" 2>>"$T/err"
}

# col ID COLUMNS: the columns of inbound message wamid.in.ID, "|" apart.
col() {
	sql "select concat_ws('|', $2) from inbound_messages
	    where wamid = 'wamid.in.$1'"
}

n_in() {
	sql "select count(*) from inbound_messages"
}

# (a) Every type, in one body.
body "$(msg 15550000001 t1 text '"text":{"body":"Hello, is it on sale?"}')" \
    "$(msg 15550000002 b1 button \
    '"context":{"from":"15550783881","id":"wamid.out.2"},"button":{"text":"Yes please","payload":"YES_PAYLOAD"}')" \
    "$(msg 15550000003 i1 interactive \
    '"interactive":{"type":"button_reply","button_reply":{"id":"btn-1","title":"Book"}}')" \
    "$(msg 15550000009 i2 interactive \
    '"interactive":{"type":"list_reply","list_reply":{"id":"row-2","title":"Tuesday","description":"9-12"}}')" \
    "$(msg 15550000009 i3 interactive \
    '"interactive":{"type":"nfm_reply","nfm_reply":{"response_json":"{\"flow_token\":\"t\"}","body":"Sent","name":"flow"}}')" \
    "$(msg 15550000009 m1 image \
    '"image":{"caption":"my receipt","mime_type":"image/jpeg","sha256":"x","id":"media-123"}')" \
    "$(msg 15550000009 m2 sticker \
    '"sticker":{"mime_type":"image/webp","sha256":"x","id":"media-456","animated":false}')" \
    "$(msg 15550000009 m3 document \
    '"document":{"filename":"cv.pdf","mime_type":"application/pdf","id":"media-789"}')" \
    "$(msg 15550000009 l1 location \
    '"location":{"latitude":38.9,"longitude":-77.03,"name":"Office","address":"1 Main St"}')" \
    "$(msg 15550000009 c1 contacts \
    '"contacts":[{"name":{"formatted_name":"Bo Li","first_name":"Bo"},"phones":[{"phone":"+1 555 0100"}]}]')" \
    "$(msg 15550000003 r1 reaction \
    '"reaction":{"message_id":"wamid.out.3","emoji":"👍"}')" \
    "$(msg 15550000009 u1 unsupported \
    '"errors":[{"code":131051,"title":"Message type unknown"}]')" \
    >"$T/a.ndjson"
ingest <"$T/a.ndjson"
is "$(n_in)" 12 'every message of the body is stored'
is "$(col t1 "type, phone, wa_id, bsuid, phone_number_id, body,
    extract(epoch from sent_at)::bigint")" \
    "text|+15550000001|15550000001|US.13491208655302741918|$PN|Hello, is it on sale?|$NOW" \
    'text: sender as E.164, wa_id and BSUID of its contact, number, body, time'
is "$(col b1 "type, body, payload, context_wamid")" \
    'button|Yes please|YES_PAYLOAD|wamid.out.2' 'quick-reply button: text, payload, context'
is "$(col i1 "type, body, payload")" 'interactive|Book|btn-1' 'button_reply'
is "$(col i2 "type, body, payload")" 'interactive|Tuesday|row-2' 'list_reply'
is "$(col i3 "type, body, payload")" 'interactive|Sent|{"flow_token":"t"}' \
    'nfm_reply: body and response_json'
is "$(col m1 "type, media_id, body")" 'image|media-123|my receipt' \
    'image: media id and caption'
is "$(col m2 "type, media_id, coalesce(body, '-')")" 'sticker|media-456|-' \
    'sticker: media id'
is "$(col m3 "type, media_id, body")" 'document|media-789|cv.pdf' \
    'document: media id, file name for want of a caption'
is "$(col l1 "type, body, payload")" 'location|Office|38.9,-77.03' \
    'location: name and coordinates'
is "$(col c1 "type, body")" 'contacts|Bo Li' 'contacts: the first name'
is "$(col r1 "type, body, context_wamid")" 'reaction|👍|wamid.out.3' \
    'reaction: emoji, the message reacted to as context'
is "$(col u1 "type, raw->'errors'->0->>'code'")" 'unsupported|131051' \
    'unknown type: stored with its raw JSON'
is "$(col t1 "raw->>'id', raw->'text'->>'body'")" \
    'wamid.in.t1|Hello, is it on sale?' 'raw JSON kept for known types too'

# (b) Attribution.
is "$(col b1 "campaign_id, recipient_id")" "$cid|2" \
    'a reply with context.id links to the row of that wamid'
is "$(col r1 "campaign_id, recipient_id")" "$cid|3" \
    'a reaction links to the row it reacts to'
is "$(col t1 "campaign_id, recipient_id")" "$cid|1" \
    'no context, phone messaged within 24 h: linked to its latest row'
is "$(col i2 "coalesce(campaign_id::text, '-'), coalesce(recipient_id::text, '-')")" \
    '-|-' 'an unknown phone links to nothing'

# (c) Redelivery of the same body inserts nothing.
ingest <"$T/a.ndjson"
ingest <"$T/a.ndjson"
is "$(n_in)" 12 'the same body read twice more: nothing inserted'

# (d) Odd shapes beside a status, in one batch: a message without id,
# one without type or sender, one that is not an object, a type never
# seen; a text from a phone messaged two days ago (outside 24 h).
STATUSES='{"id":"wamid.out.1","status":"read","timestamp":"'$NOW'","recipient_id":"15550000001"}' \
    body '{"from":"15550000007","timestamp":"'$NOW'","type":"text","text":{"body":"no id"}}' \
    '{"id":"wamid.in.x1","timestamp":"'$NOW'"}' '"just a string"' \
    "$(msg 15550000007 x2 order '"order":{"catalog_id":"1","product_items":[{"quantity":2}]}')" \
    "$(msg 15550000004 x3 text '"text":{"body":"late answer"}')" \
    "$(msg 15550000007 x4 text '"text":{"body":"nul \u0000 here"}')" \
    >"$T/d.ndjson"
ingest <"$T/d.ndjson"
is "$?" 0 'a body of odd messages is no error'
is "$(sql "select status from campaign_recipients where id = 1")" read \
    'the status of the same batch is applied'
is "$(col x1 "type, coalesce(phone, '-'), raw::text")" \
    "unknown|-|{\"id\": \"wamid.in.x1\", \"timestamp\": \"$NOW\"}" \
    'no type, no sender: stored as unknown with its raw JSON'
is "$(col x2 "type, raw->'order'->>'catalog_id'")" 'order|1' \
    'a type not known here: stored with its raw JSON'
is "$(sql "select count(*) from inbound_messages where wamid like 'nowamid:%'
    and raw->'text'->>'body' = 'no id'")" 1 \
    'a message without id is stored, keyed by its JSON'
is "$(col x3 "coalesce(campaign_id::text, '-')")" '-' \
    'a phone last messaged 47 hours ago links to nothing'
is "$(col x4 "body, raw->'text'->>'body'")" "nul |nul � here" \
    'a \u0000 is cut from the column and U+FFFD in raw (jsonb takes no NUL)'
is "$(n_in)" 17 'five of six stored (a string is no message)'
is "$(col x3 "coalesce(wa_id, '-'), coalesce(bsuid, '-')")" '-|-' \
    "another sender's contact lends it no wa_id or BSUID"
ingest <"$T/d.ndjson"
is "$(n_in)" 17 'again: nothing more, not even the one without id'

# A sender known by BSUID alone (no from, no wa_id: since February 2026).
body '{"from_user_id":"US.13491208655302741918","id":"wamid.in.z1","timestamp":"'$NOW'","type":"text","text":{"body":"by username"}}' |
    sed 's/"wa_id":"15550000001",//' | ingest
is "$(col z1 "coalesce(phone, '-'), coalesce(wa_id, '-'), bsuid, body,
    coalesce(campaign_id::text, '-')")" \
    "-|-|US.13491208655302741918|by username|$cid" \
    'a BSUID-only sender: no phone, its BSUID, linked through the BSUID t1 came with'
sql "delete from inbound_messages where wamid = 'wamid.in.z1'" >/dev/null

# (e) replies: campaign 1's, as NDJSON.
wa-campaign replies --json "$cid" >"$T/replies" 2>"$T/replies.err"
is "$?" 0 'replies exits 0'
is "$(jq -c . "$T/replies" | wc -l | tr -d ' ')" 5 \
    'one line per reply (b1, i1, r1, t1, x1: i1 and r1 both from row 3, x1 by its contact'"'"'s BSUID)'
is "$(jq -r .wamid "$T/replies" | sort | tr '\n' ' ')" \
    'wamid.in.b1 wamid.in.i1 wamid.in.r1 wamid.in.t1 wamid.in.x1 ' \
    'the replies of campaign 1'
is "$(jq -r 'select(.wamid == "wamid.in.t1") | [.phone, .wa_id, .type,
    .text, .recipient_id] | join("|")' "$T/replies")" \
    '+15550000001|15550000001|text|Hello, is it on sale?|1' \
    'phone, wa_id, type, text, recipient id'
is "$(jq -r 'select(.wamid == "wamid.in.t1") | (.window_closes_at |
    fromdateiso8601) - (.sent_at | fromdateiso8601)' "$T/replies")" 86400 \
    'window_closes_at is the message time plus 24 h'
is "$(wa-campaign replies "$cid2" | wc -l | tr -d ' ')" 0 \
    'campaign 2 has none (its rows are older than campaign 1s)'
wa-campaign replies "$cid" >"$T/replies.txt"
is "$(wc -l <"$T/replies.txt" | tr -d ' ')" 5 'without --json: a line per reply'
like "$(grep -F 'Hello' "$T/replies.txt")" \
    '^[0-9T:-]+Z +\+15550000001 +text +Hello, is it on sale\? \(row 1, window closes [0-9T:-]+Z\)$' \
    '... for people: time, phone, type, text, row, the window'
exits 64 'replies of no such campaign: 64' \
    sh -c "wa-campaign replies 999999 2>/dev/null"
wa-campaign status --json "$cid" >"$T/status.json"
is "$(jq -r '.replies | [.count, .people, .rate] | map(tostring) | join("|")' \
    "$T/status.json")" '5|3|0.75' \
    'status --json: replies, people who replied, rate over the 4 messaged'
like "$(wa-campaign status "$cid")" 'replies +5 from 3 of 4 people messaged \(75\.0%\)' \
    'status says it in words'

# (f) prune: only rows older than the retention.
sql "update inbound_messages set received_at = now() - interval '40 days'
    where wamid in ('wamid.in.t1', 'wamid.in.b1');
    update inbound_messages set received_at = now() - interval '10 days'
    where wamid = 'wamid.in.r1'" >/dev/null
is "$(wa-campaign inbound prune 2>&1)" \
    'inbound prune: 2 messages received more than 30 days ago deleted' \
    'prune: the default retention, 30 days'
is "$(n_in)" 15 'two rows gone'
is "$(col r1 type)" reaction 'the 10-day-old one is kept'
exits 64 'prune --days 0: 64' \
    sh -c "wa-campaign inbound prune --days 0 2>/dev/null"
exits 64 'inbound with another word: 64' \
    sh -c "wa-campaign inbound list 2>/dev/null"
sql "update inbound_retention set days = 5" >/dev/null
is "$(wa-campaign inbound prune --days 20 2>&1)" \
    'inbound prune: 0 messages received more than 20 days ago deleted' \
    '--days overrides the setting'
is "$(wa-campaign inbound prune 2>&1)" \
    'inbound prune: 1 messages received more than 5 days ago deleted' \
    'the setting is read from inbound_retention'
is "$(n_in)" 14 'the 10-day-old one is gone now'

# (g) kill -9 mid-run. 30 bodies of 10 messages, batches of 100: bodies
# 1-10, 11-20, 21-30. A transaction inserting a wamid of body 16 holds
# the second batch's statement on its unique index.
K=$T/crash
mkdir "$K"
for k in $(seq 1 30); do
	set --
	for j in $(seq 1 10); do
		set -- "$@" "$(msg 15551000$(printf %03d "$k") "k.$k.$j" text \
		    '"text":{"body":"hi"}')"
	done
	body "$@"
done >"$K/0000000000000001.ndjson"
first10=$(head -10 "$K/0000000000000001.ndjson" | wc -c | tr -d ' ')
PGAPPNAME=locker psql -Atq -c "begin" -c "insert into inbound_messages
    (wamid, type, sent_at, raw) values ('wamid.in.k.16.5', 'text', now(),
    '{}')" -c "select pg_sleep(300)" >/dev/null 2>&1 &
t_pids="$t_pids $!"
wait_for 30 sh -c "test \$(psql -Atc \"select count(*) from pg_stat_activity
    where application_name = 'locker' and query like '%pg_sleep%'\") = 1"
bg wa-status-ingest --follow "$K" -n 100 --flush-ms 60000 2>>"$T/err"
in=$!
ok 'the second batch waits on the locker' \
    wait_for 30 sh -c "test \$(psql -Atc \"select count(*) from
    pg_stat_activity where application_name = 'wa-status-ingest' and
    wait_event_type = 'Lock'\") = 1"
is "$(sql "select byte_offset from spool_checkpoints where spool = '$K'")" \
    "$first10" 'the first batch is committed'
kill -9 "$in"
wait "$in" 2>/dev/null
# The server notices a dead client only when it writes to it: end the
# orphaned statement first, then the locker (else the statement, freed,
# could commit before it ends).
sql "select pg_terminate_backend(pid) from pg_stat_activity
    where application_name = 'wa-status-ingest'" >/dev/null
wait_for 30 sh -c "test \$(psql -Atc \"select count(*) from pg_stat_activity
    where application_name = 'wa-status-ingest'\") = 0"
sql "select pg_terminate_backend(pid) from pg_stat_activity
    where application_name = 'locker'" >/dev/null
is "$(sql "select count(*) from inbound_messages where wamid like 'wamid.in.k.%'")" \
    100 'after kill -9: the first batch alone'
wa-status-ingest --follow "$K" --once -n 100 2>>"$T/err"
is "$?" 0 'the rerun exits 0'
is "$(sql "select count(*) || '|' || count(distinct wamid) from
    inbound_messages where wamid like 'wamid.in.k.%'")" '300|300' \
    'all 300 messages, each once: nothing lost, nothing twice'

# (h) A message Postgres refuses (a constraint added for the test) is
# inserted alone, reported with its line, and spoils nothing: the status
# and the other message of its batch are applied.
sql "alter table inbound_messages add constraint no_poison
    check (body is distinct from 'poison')" >/dev/null
{ printf '\n'; STATUSES='{"id":"wamid.out.2","status":"read","timestamp":"'$NOW'","recipient_id":"15550000002"}' \
    body "$(msg 15550000009 p1 text '"text":{"body":"poison"}')" \
    "$(msg 15550000009 p2 text '"text":{"body":"fine"}')"; } >"$T/p.ndjson"
wa-status-ingest <"$T/p.ndjson" 2>"$T/p.err"
is "$?" 65 'a message refused: exit 65'
like "$(cat "$T/p.err")" '<stdin>:2: postgres refused .*no_poison' \
    'reported with its line'
is "$(col p2 body)$(col p1 body)" fine 'the other message is stored'
is "$(sql "select status from campaign_recipients where id = 2")" read \
    "the batch's status is applied"
sql "alter table inbound_messages drop constraint no_poison" >/dev/null

# (i) A reply without context finds its phone's rows through an index,
# however many rows are settled: 3,000 more, whose statistics were taken
# while they were pending (as at a campaign's start), and the plan a
# long-lived wa-status-ingest keeps (its statement is prepared: a
# generic plan). The rows Postgres read of campaign_recipients (its
# statistics: every index's tuples and the sequential scans'), before and
# after; a session's are counted when it ends, before it leaves
# pg_stat_activity, so each count waits for the other sessions to be
# gone. The query before this one read all 3,007 for each reply (in
# bench/e2e.sh peak, Postgres 333-350 us a message against 127-153).
big=$(campaign 3000)
sql "alter table campaign_recipients set (autovacuum_enabled = off);
    analyze campaign_recipients;
    update campaign_recipients set status = 'delivered', attempt = 1,
    wamid = 'wamid.big.' || id, claimed_at = now() - interval '1 hour',
    status_at = now() - interval '59 minutes' where campaign_id = $big" \
    >/dev/null
alone() {
	[ "$(sql "select count(*) from pg_stat_activity where
	    backend_type = 'client backend' and pid <> pg_backend_pid()")" = 0 ]
}
rows_read() {
	wait_for 30 alone
	sql "select (select coalesce(sum(idx_tup_read), 0)
	    from pg_stat_user_indexes where relname = 'campaign_recipients') +
	    (select seq_tup_read from pg_stat_user_tables
	    where relname = 'campaign_recipients')"
}
before=$(rows_read)
body "$(msg 15550000002 z2 text '"text":{"body":"again"}')" >"$T/z.ndjson"
PGOPTIONS="-c plan_cache_mode=force_generic_plan" \
    wa-status-ingest <"$T/z.ndjson" 2>>"$T/err"
read_n=$(($(rows_read) - before))
ok "one reply read $read_n rows of the recipients' 3,007, not every settled one" \
    test "$read_n" -lt 100
is "$(col z2 "campaign_id, recipient_id")" "$cid|2" \
    'and is linked to the row of its phone with the latest status'

# (j) A reply's context finds the message it answers among its sender's
# rows (no index on the wamid: sql/schema.sql, version 10), however old
# and whichever campaign: not the latest row, and not only within 24 h.
o2=$(sql "select id from campaign_recipients where campaign_id = $cid2
    and phone = '+15550000002'")
body "$(msg 15550000002 j1 text '"text":{"body":"yes"},"context":{"from":"15550783881","id":"wamid.out2.'"$o2"'"}')" \
    "$(msg 15550000004 j2 text '"text":{"body":"late yes"},"context":{"from":"15550783881","id":"wamid.out.4"}')" |
    ingest
is "$(col j1 "campaign_id, recipient_id")" "$cid2|$o2" \
    "a reply's context: the row it answers, not its person's latest"
is "$(col j2 "campaign_id, recipient_id")" "$cid|4" \
    "... sent two days before, past the 24 h a reply without context has"

done_testing
