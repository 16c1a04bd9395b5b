#!/bin/sh
# The conversation a campaign starts, answered through the same pipeline:
# a person answers a campaign's message; wa-inbound streams it with the
# end of its customer-service window; a handler (jq here) writes a
# "message" line (a text, not a template); wa-throttle, wa-send and
# wa-record take it as they take a campaign's; it is kept in
# conversation_messages (not in campaign rows), attributed to the
# campaign, moved by its status webhooks and priced (Meta bills service
# messages since 1 October 2026). A message outside the window is
# refused before the call, with its line number, kept in --reject; the
# other lines go. wa-fake-api answers 131047 to a message for someone
# who never wrote, as Meta does. Pages followed: the Cloud API's
# send-messages reference (a text message: type, text.body, context
# .message_id), its error codes (131047, re-engagement: more than 24
# hours since the person's last message) and "Pricing for non-template
# messages" (category service, billable, from 1 October 2026):
# ../shared/research/cloud-api.md §2-§3, cloud-api-2026.md §1.2.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"
pg_start
PN=106540352242922
WA_APP_SECRET=s3cret-$$
export WA_APP_SECRET
mkdir "$T/recv"
bg perl "$TOP/tests/hookrecv.pl" "$T/recv.port" "$T/recv"
wait_for 30 test -s "$T/recv.port" || bail "no receiver"
# (No pair limit: the answer follows the campaign's message at once.)
fake_start --rate 0 --pair-ms 0 --read-rate 1 --webhook-delay-ms 5 \
    --webhook-url "http://127.0.0.1:$(cat "$T/recv.port")/"

# bodies: every webhook body received so far, one a line, once each.
bodies() {
	for f in "$T"/recv/*.body; do
		[ -e "$f.seen" ] && continue
		tr -d '\n' <"$f"
		echo
		: >"$f.seen"
	done
}
# changes FIELD: how many changes of that kind were received.
seen() {
	cat "$T"/recv/*.body 2>/dev/null | jq -c ".entry[].changes[].value |
	    $1" 2>/dev/null | wc -l
}

# A campaign messages +15550000001; the person writes back.
c=$(campaign 1)
wa-claim -c "$c" --once 2>/dev/null | wa-send 2>/dev/null |
    wa-record >/dev/null 2>&1
is "$(curl -s -o /dev/null -w '%{http_code}' -d '{"from":"+15550000001","text":"Hello? What is this about?"}' \
    -H "Authorization: Bearer $WA_TOKEN" "$WA_API_BASE/$PN/inbound")" 200 \
    "the person writes (the fake's inbound webhook)"
written() {
	test "$(seen '.messages[]?')" -ge 1
}
ok "the message reaches the webhook" wait_for 30 written
bodies | wa-status-ingest 2>/dev/null
wa-inbound >"$T/inbound"
is "$(jq -r '[.text, .campaign_id] | @tsv' "$T/inbound")" \
    "$(printf 'Hello? What is this about?\t%s' "$c")" \
    "wa-inbound streams it, attributed to the campaign"

# The handler answers; two more lines: a closed window, no window.
jq -c '{phone_number_id, to: .phone, reply_to: .wamid, window_closes_at,
    message: {type: "text", text: {body: "It is the vaccination reminder."}}}' \
    "$T/inbound" >"$T/replies"
echo '{"phone_number_id":"'$PN'","to":"+15550000002","window_closes_at":"2026-01-01T00:00:00Z","message":{"type":"text","text":{"body":"late"}}}' \
    >>"$T/replies"
echo '{"phone_number_id":"'$PN'","to":"+15550000003","message":{"type":"text","text":{"body":"no window"}}}' \
    >>"$T/replies"
echo '{"phone_number_id":"'$PN'","to":"+15550000004","window_closes_at":"2099-01-01T00:00:00Z","message":{"type":"poll","poll":{}}}' \
    >>"$T/replies"
echo '{"phone_number_id":"'$PN'","to":"+15550000006","window_closes_at":"2099-01-01T00:00:00Z","template":{"name":"reminder","language":"en_US"},"message":{"type":"text","text":{"body":"both"}}}' \
    >>"$T/replies"
wa-throttle -r 100 <"$T/replies" 2>/dev/null |
    wa-send --reject "$T/rejected" 2>"$T/send.err" >"$T/results"
is "$?" 65 "wa-send: 65, lines refused"
like "$(cat "$T/send.err")" ":2: the customer-service window with \\+15550000002 closed at 2026-01-01T00:00:00Z: Meta would refuse the message \\(131047\\); only a template may go" \
    "a closed window is refused before the call, by line number"
like "$(cat "$T/send.err")" ":3: .*needs its \"window_closes_at\"" \
    "a message without its window is refused"
like "$(cat "$T/send.err")" ":4: message.type is not one of" \
    "a type Meta has not is refused"
like "$(cat "$T/send.err")" ":5: a message of a conversation has no template" \
    "a line with both a template and a message is refused"
is "$(wc -l <"$T/rejected" | tr -d ' ')" 4 "the four are kept in --reject"
is "$(jq -r .to "$FAKE_LOG" | grep -c '^+1555000000[2346]$')" 0 \
    "... never sent: the API saw none of them"
is "$(jq -r .result.outcome "$T/results")" sent "the answer goes"
wa-record <"$T/results" >/dev/null 2>"$T/record.err"
is "$?" 0 "wa-record takes its result"
row() {
	sql "select $1 from conversation_messages where phone = '+15550000001'"
}
is "$(row "status || ' ' || type || ' ' || (reply_to = '$(jq -r .wamid "$T/inbound")')::text || ' ' || campaign_id")" \
    "sent text true $c" \
    "kept in conversation_messages: sent, the message it answers, the campaign"
is "$(sql "select count(*) from campaign_recipients where campaign_id = $c")" 1 \
    "... not in the campaign's rows"
wa-record <"$T/results" >/dev/null 2>&1
is "$(sql "select count(*) from conversation_messages")" 1 \
    "its result recorded again adds nothing (a replay after a kill)"

# Its statuses, priced as service.
answered() {
	test "$(seen '.statuses[]? | select(.pricing.category == "service")')" -ge 1
}
ok "the fake's statuses for it carry service pricing" wait_for 30 answered
read_seen() {
	test "$(seen '.statuses[]? | select(.status == "read")')" -ge 2
}
ok "... and it is read" wait_for 30 read_seen
bodies | wa-status-ingest 2>/dev/null
is "$(row status)" read "its status webhooks move it"
is "$(sql "select count(*) from unmatched_statuses")" 0 \
    "none of its statuses is left unmatched"
is "$(wa-campaign status --json "$c" | jq -c '.replies |
    [.count, .answers, .answers_billable]')" "[1,1,1]" \
    "status: one reply, answered by one message, billed"
like "$(wa-campaign status "$c")" "answered with 1 messages, 1 billed" \
    "... and in text"

# Someone who never wrote: the line says the window is open; Meta (the
# fake) refuses it, 131047; kept as failed.
echo '{"phone_number_id":"'$PN'","to":"+15550000009","window_closes_at":"2099-01-01T00:00:00Z","message":{"type":"text","text":{"body":"hi"}}}' |
    wa-send 2>/dev/null >"$T/r9"
is "$(jq -c '[.result.outcome, .result.error.code]' "$T/r9")" \
    '["failed",131047]' "the API refuses a message out of any window: 131047"
wa-record <"$T/r9" >/dev/null 2>&1
is "$(sql "select status, error_code, error_class from conversation_messages
    where phone = '+15550000009'")" "failed|131047|permanent" \
    "... kept failed, with its error"

# A status that beats the result to Postgres is kept, then taken.
curl -s -o /dev/null -d '{"from":"+15550000005","text":"Hi"}' \
    -H "Authorization: Bearer $WA_TOKEN" "$WA_API_BASE/$PN/inbound"
wrote5() {
	test "$(seen '.messages[]? | select(.from == "15550000005")')" -ge 1
}
ok "another person writes" wait_for 30 wrote5
bodies | wa-status-ingest 2>/dev/null
wa-inbound --cursor second | jq -c 'select(.phone == "+15550000005") |
    {phone_number_id, to: .phone, window_closes_at,
    message: {type: "text", text: {body: "Hello"}}}' |
    wa-send 2>/dev/null >"$T/r5"
w5=$(jq -r .result.wamid "$T/r5")
delivered5() {
	test "$(seen ".statuses[]? | select(.id == \"$w5\" and .status == \"read\")")" -ge 1
}
ok "its statuses come" wait_for 30 delivered5
bodies | wa-status-ingest 2>/dev/null
is "$(sql "select count(*) from unmatched_statuses where wamid = '$w5'")" 1 \
    "before its result is recorded, its status waits"
wa-record <"$T/r5" >/dev/null 2>&1
is "$(sql "select status from conversation_messages where wamid = '$w5'")|$(sql "select count(*) from unmatched_statuses")" \
    "read|0" "recorded, it takes the status that waited"
fake_stop
done_testing
