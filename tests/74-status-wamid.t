#!/bin/sh
# A row settled by a status webhook gets the status's wamid when it has
# none. A send whose answer was lost (or whose result died with a killed
# wa-send or wa-record) is unknown, without a wamid; its webhook settles
# it, and is the only thing that will ever bring the wamid the API gave
# (found by tests/83-chaos.t: rows sent and delivered without a wamid).
# A wamid already recorded is kept. A status moves only its own row:
# the one its callback data names, on that attempt, holding its wamid
# or none yet (then it takes it: Meta gives each message its own wamid,
# so no other row is looked at, and none is kept from holding it too);
# else the one of its person that holds its wamid. A status whose
# callback data names a row holding another wamid is another system's
# (Meta sends every app of the account every status), and moves nothing.
. "$(dirname "$0")/lib.sh"

pg_start
cid=$(campaign 4)
first=$(sql "select min(id) from campaign_recipients where campaign_id = $cid")
r1=$first r2=$((first + 1)) r3=$((first + 2)) r4=$((first + 3))
# r1: unknown (its answer lost); r2: sent with its own wamid; r3:
# sending, no wamid; r4: sent, holding wamid.taken.
sql "update campaign_recipients set attempt = 1, status = 'unknown'
    where id = $r1;
    update campaign_recipients set attempt = 1, status = 'sent',
    wamid = 'wamid.own' where id = $r2;
    update campaign_recipients set attempt = 1, status = 'sending'
    where id = $r3;
    update campaign_recipients set attempt = 1, status = 'sent',
    wamid = 'wamid.taken' where id = $r4" >/dev/null

# body WAMID STATUS ROW [TO]: a webhook body with one status to the
# person whose number is TO (15550000001), naming ROW in its
# biz_opaque_callback_data as wa-send does.
body() {
	printf '{"object":"whatsapp_business_account","entry":[{"id":"1",'
	printf '"changes":[{"value":{"messaging_product":"whatsapp",'
	printf '"metadata":{"display_phone_number":"15550783881",'
	printf '"phone_number_id":"106540352242922"},"statuses":[{"id":"%s",' "$1"
	printf '"status":"%s","timestamp":"1750000000",' "$2"
	printf '"recipient_id":"%s",' "${4:-15550000001}"
	printf '"biz_opaque_callback_data":"wapipe:%s:1"}]},' "$3"
	printf '"field":"messages"}]}]}\n'
}
row() {
	sql "select status || ' ' || coalesce(wamid, '-')
	    from campaign_recipients where id = $1"
}

{
	body wamid.lost sent "$r1"
	body wamid.copy delivered "$r2"
	body wamid.taken delivered "$r3" \
	    "$(sql "select substr(phone, 2) from campaign_recipients
	    where id = $r4")"
} | wa-status-ingest 2>"$T/err"
is "$?" 0 "wa-status-ingest applies the batch"
is "$(row "$r1")" "sent wamid.lost" \
    "an unknown row settled by its webhook takes the webhook's wamid"
is "$(row "$r2")" "sent wamid.own" \
    "a status whose wamid is not the row's moves nothing: another's"
is "$(row "$r3") $(row "$r4")" "delivered wamid.taken sent wamid.taken" \
    "the row named, on its attempt without a wamid, is the status's: no other is looked at"

# Kept first (no such row yet), matched when the row appears: the same.
body wamid.later delivered 999999 | wa-status-ingest 2>>"$T/err"
sql "insert into campaign_recipients (id, campaign_id, phone, status,
    attempt) values (999999, $cid, '+15559999999', 'unknown', 1)" >/dev/null
wa-status-ingest </dev/null 2>>"$T/err"
is "$(row 999999)" "delivered wamid.later" \
    "a kept status gives its wamid to the row it matches later"
is "$(cat "$T/err")" "" "nothing to complain of"
is "$(sql "select count(*) from unmatched_statuses
    where wamid = 'wamid.copy'")" 0 "another's status is not kept either"

# No index on the wamid (sql/schema.sql, version 10): a status that
# names no row is looked for among its person's rows, in any campaign:
# by the number Meta gives (recipient_id), which may be the wa_id an
# answer gave (an old Brazilian account's, the ninth digit missing), or
# by the number their user id was seen with. One that names neither its
# row nor its person cannot be found: it is kept, and moves nothing.
c2=$(campaign 3)
q1=$(sql "select min(id) from campaign_recipients where campaign_id = $c2")
q2=$((q1 + 1)) q3=$((q1 + 2))
sql "update campaign_recipients set attempt = 1, status = 'sent',
    wamid = 'wamid.c2.' || (id - $q1 + 1) where campaign_id = $c2;
    update campaign_recipients set wa_id = '1555000002' where id = $q2;
    insert into user_ids (user_id, phone) values ('US.q3', '+15550000003')" \
    >/dev/null
# bare WAMID STATUS [FIELDS]: a body with one status without callback
# data, with FIELDS (",recipient_id":... and so on).
bare() {
	printf '{"object":"whatsapp_business_account","entry":[{"id":"1",'
	printf '"changes":[{"value":{"messaging_product":"whatsapp",'
	printf '"statuses":[{"id":"%s","status":"%s",' "$1" "$2"
	printf '"timestamp":"1750000000"%s}]},' "${3:-}"
	printf '"field":"messages"}]}]}\n'
}
kept() {
	sql "select count(*) from unmatched_statuses where wamid = '$1'"
}
{
	bare wamid.c2.1 delivered ',"recipient_id":"15550000001"'
	bare wamid.c2.2 read ',"recipient_id":"1555000002"'
	bare wamid.c2.3 delivered ',"recipient_user_id":"US.q3"'
} | wa-status-ingest 2>>"$T/err"
bare wamid.c2.1 read | wa-status-ingest 2>>"$T/err"
is "$(row "$q1")" "delivered wamid.c2.1" \
    "a status naming no row: found by its person's number, in another campaign"
is "$(row "$q2")" "read wamid.c2.2" "... by the wa_id an answer gave"
is "$(row "$q3")" "delivered wamid.c2.3" "... by the number of its user id"
is "$(kept wamid.c2.1)" 1 \
    "one naming neither row nor person is kept, moving nothing"
is "$(row "$r1") $(row "$r2")" "sent wamid.lost sent wamid.own" \
    "... and the rows of the first campaign are untouched"

# wa-record's result coming after the webhook: the same wamid is no
# stale result (the everyday race of a fast webhook); another is.
result() {
	printf '{"id":%s,"attempt":1,"campaign_id":%s,"to":"+1555",' "$1" "$cid"
	printf '"result":{"outcome":"sent","wamid":"%s"}}\n' "$2"
}
result "$r1" wamid.lost | wa-record >/dev/null 2>"$T/err"
is "$(row "$r1") $(cat "$T/err")" "sent wamid.lost " \
    "the same wamid from wa-record after the webhook: nothing to say"
result "$r2" wamid.copy | wa-record >/dev/null 2>"$T/err"
is "$(row "$r2")" "sent wamid.own" "another wamid does not replace it"
like "$(cat "$T/err")" "1 results not applied" "and is counted as stale"

done_testing
