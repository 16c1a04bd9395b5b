#!/bin/sh
# The send answer's contacts[].wa_id is kept with the row where it is
# not the number sent to (an old Brazilian account's wa_id lacks the
# ninth digit: wa-fake-api --old-br-wa-ids), and the person's messages
# carry it: a STOP from that wa_id suppresses the row's number, and
# their reply is attributed to the row. Rows whose wa_id is their number
# keep none (no byte written).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"

pg_start
WA_APP_SECRET=s3cret-$$
export WA_APP_SECRET
mkdir "$T/recv"
bg perl "$TOP/tests/hookrecv.pl" "$T/recv.port" "$T/recv"
wait_for 30 test -s "$T/recv.port" || bail "no receiver"
fake_start --rate 0 --old-br-wa-ids \
    --webhook-url "http://127.0.0.1:$(cat "$T/recv.port")/" \
    --webhook-delay-ms 5 --read-rate 0
c=$(campaign 0)
sql "insert into campaign_recipients (campaign_id, phone, template_params)
    values ($c, '+5511987650001', '[\"a\"]'), ($c, '+5521999990002',
    '[\"b\"]'), ($c, '+15550000003', '[\"c\"]')" >/dev/null
wa-claim -c "$c" --once 2>/dev/null | wa-send 2>/dev/null >"$T/results"
is "$(jq -r 'select(.to == "+5511987650001") | .result.wa_id' "$T/results")" \
    551187650001 "wa-send's result carries the answer's wa_id"
wa-record <"$T/results" >/dev/null 2>&1
is "$(sql "select phone || ' ' || coalesce(wa_id, '-') from
    campaign_recipients where campaign_id = $c order by id" | tr '\n' ',')" \
    "+5511987650001 551187650001,+5521999990002 552199990002,+15550000003 -," \
    "wa-record keeps the wa_id that is not the number; the others none"

# The person writes STOP from their wa_id.
curl -s -H "Authorization: Bearer $WA_TOKEN" \
    -d '{"from":"+551187650001","text":"STOP"}' \
    "$WA_API_BASE/106540352242922/inbound" >/dev/null
curl -s -H "Authorization: Bearer $WA_TOKEN" \
    -d '{"from":"+552199990002","text":"What is this?"}' \
    "$WA_API_BASE/106540352242922/inbound" >/dev/null
messages() {
	cat "$T"/recv/*.body 2>/dev/null |
	    jq -c '.entry[].changes[].value.messages[]?' | wc -l
}
two() {
	test "$(messages)" -ge 2
}
ok "the fake sends both messages" wait_for 30 two
for f in "$T"/recv/*.body; do
	tr -d '\n' <"$f"
	echo
done | wa-status-ingest 2>/dev/null
is "$(sql "select phone from suppressions")" "+5511987650001" \
    "STOP from the wa_id suppresses the row's number"
is "$(sql "select r.phone from inbound_messages i join campaign_recipients r
    on r.id = i.recipient_id where i.body = 'What is this?'")" \
    "+5521999990002" "a reply from the wa_id is the row's"
is "$(sql "select count(*) from campaign_recipients
    where campaign_id = $c and status = 'delivered'")" 3 \
    "the statuses (recipient_id the wa_id) moved nothing wrongly"
fake_stop
done_testing
