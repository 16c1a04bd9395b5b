#!/bin/sh
# People Meta names by their business-scoped user id alone (the BSUID
# page: from_user_id, user_preferences[].user_id, no from, no wa_id).
# Statuses carry recipient_user_id: wa-status-ingest keeps which number
# the id is (user_ids), so a STOP from the id suppresses that number; a
# STOP from an id not yet seen is kept under the id and moves to the
# number when a status first names both; a later campaign then ends the
# row suppressed. A resume by the id lifts only its user_preferences
# stop. Bodies applied twice (a restart) change nothing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"

pg_start
PN=106540352242922
WA_APP_SECRET=s3cret-$$
export WA_APP_SECRET
mkdir "$T/recv"
bg perl "$TOP/tests/hookrecv.pl" "$T/recv.port" "$T/recv"
wait_for 30 test -s "$T/recv.port" || bail "no receiver"

# The fake: the person at ...0001 writes STOP by their BSUID alone.
fake_start --rate 0 --script 0001=bsuid:STOP \
    --webhook-url "http://127.0.0.1:$(cat "$T/recv.port")/" \
    --webhook-delay-ms 5 --read-rate 0
c=$(campaign 0)
sql "insert into campaign_recipients (campaign_id, phone, template_params)
    values ($c, '+15550000001', '[\"a\"]'), ($c, '+15550000002',
    '[\"b\"]')" >/dev/null
wa-claim -c "$c" --once 2>/dev/null | wa-send 2>/dev/null |
    wa-record >/dev/null 2>&1
bodies() {
	for f in "$T"/recv/*.body; do
		tr -d '\n' <"$f"
		echo
	done
}
stop_seen() {
	bodies | jq -e 'select(.entry[].changes[].value.messages[]?
	    .from_user_id)' >/dev/null
}
delivered() {
	test "$(bodies | jq -c '.entry[].changes[].value.statuses[]? |
	    select(.status == "delivered")' | wc -l)" -ge 2
}
ok "the fake sends the BSUID-only STOP" wait_for 30 stop_seen
ok "... and both deliveries" wait_for 30 delivered
is "$(bodies | jq -r '.entry[].changes[].value.statuses[]? |
    select(.status == "delivered" and .recipient_id == "15550000001") |
    .recipient_user_id' | head -1)" \
    "$(bodies | jq -r '.entry[].changes[].value.messages[]? |
    .from_user_id')" "the statuses name the person by the STOP's id"
bodies | wa-status-ingest 2>"$T/ingest.err"
is "$?" 0 "wa-status-ingest applies the bodies"
is "$(sql "select phone, reason from suppressions order by phone")" \
    '+15550000001|inbound "STOP"' \
    "the STOP by the id suppresses the number it was sent to, only it"
is "$(sql "select count(*) from user_ids")" 2 \
    "both people's ids are known (from the statuses)"
is "$(sql "select count(*) from inbound_messages where bsuid is not null
    and phone is null and recipient_id is not null")" 1 \
    "the STOP is kept, attributed to the row through the id"
bodies | wa-status-ingest 2>/dev/null
is "$(sql "select count(*) from suppressions")|$(sql "select count(*)
    from user_ids")|$(sql "select count(*) from inbound_messages")" "1|2|1" \
    "the bodies applied again add nothing"
fake_stop

# By hand, in the other order: the STOP before any status names the id.
c2=$(campaign 0)
r=$(sql "insert into campaign_recipients (campaign_id, phone,
    template_params, status, attempt, wamid) values ($c2, '+15550000009',
    '[\"x\"]', 'sent', 1, 'wamid.b9') returning id" | head -1)
meta='"metadata":{"display_phone_number":"15550783881","phone_number_id":"'$PN'"}'
text() {
	printf '{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{"messaging_product":"whatsapp",%s,"contacts":[{"profile":{"name":"Bo"},"user_id":"US.777"}],"messages":[{"from_user_id":"US.777","id":"%s","timestamp":"1764921900","type":"text","text":{"body":"%s"}}]}}]}]}\n' \
	    "$meta" "$1" "$2"
}
prefs() {
	printf '{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"user_preferences","value":{"messaging_product":"whatsapp",%s,"user_preferences":[{"user_id":"US.777","detail":"d","category":"marketing_messages","value":"%s","timestamp":%s}]}}]}]}\n' \
	    "$meta" "$1" "$2"
}
status() {
	printf '{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{"messaging_product":"whatsapp",%s,"statuses":[{"id":"wamid.b9","status":"%s","timestamp":"1764922000","recipient_id":"15550000009","recipient_user_id":"US.777","biz_opaque_callback_data":"wapipe:%s:1"}]}}]}]}\n' \
	    "$meta" "$1" "$r"
}
text wamid.in1 STOP | wa-status-ingest 2>/dev/null
is "$(sql "select scope || ' ' || phone from suppressions
    where phone not like '+%'")" "$PN US.777" \
    "a STOP from an id never seen is kept under the id"
status delivered | wa-status-ingest 2>/dev/null
is "$(sql "select phone from suppressions where scope = '$PN'
    and reason = 'inbound \"STOP\"' order by phone" | tr '\n' ' ')" \
    "+15550000001 +15550000009 " \
    "the first status naming the id moves it to the number"
is "$(sql "select count(*) from suppressions where phone = 'US.777'")" 0 \
    "... and none is left under the id"

# A later campaign on the number: the row ends suppressed, never sent.
c3=$(campaign 0)
sql "insert into campaign_recipients (campaign_id, phone, template_params)
    values ($c3, '+15550000009', '[\"y\"]'), ($c3, '+15550000010',
    '[\"z\"]')" >/dev/null
is "$(wa-claim -c "$c3" --once 2>/dev/null | jq -r .to)" "+15550000010" \
    "the next campaign claims only the one who did not stop"
is "$(sql "select status from campaign_recipients where campaign_id = $c3
    and phone = '+15550000009'")" suppressed "... the other ends suppressed"

# user_preferences by the id alone: a stop, then a resume that lifts it
# and leaves the keyword's.
sql "delete from suppressions" >/dev/null
prefs stop 1764923000 | wa-status-ingest 2>/dev/null
is "$(sql "select phone || ' ' || reason from suppressions")" \
    "+15550000009 user_preferences stop" \
    "a user_preferences stop by the id suppresses the number"
prefs resume 1764923100 | wa-status-ingest 2>/dev/null
is "$(sql "select count(*) from suppressions")" 0 \
    "a resume by the id lifts it"
text wamid.in2 STOP | wa-status-ingest 2>/dev/null
prefs resume 1764923200 | wa-status-ingest 2>/dev/null
is "$(sql "select reason from suppressions where phone = '+15550000009'")" \
    'inbound "STOP"' "a resume leaves a keyword's suppression"

# A user id of the wrong shape names nobody.
printf '{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{"messaging_product":"whatsapp",%s,"messages":[{"from_user_id":"us 1; drop","id":"wamid.in3","timestamp":"1764921900","type":"text","text":{"body":"STOP"}}]}}]}]}\n' \
    "$meta" | wa-status-ingest 2>/dev/null
is "$(sql "select count(*) from suppressions where phone like 'us%'")" 0 \
    "an id that is no BSUID suppresses nothing"
is "$(sql "select count(*) from inbound_messages where wamid = 'wamid.in3'
    and bsuid is null")" 1 "... the message is still kept"
done_testing
