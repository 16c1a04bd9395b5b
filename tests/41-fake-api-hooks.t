#!/bin/sh
# wa-fake-api's status webhooks: Meta's envelope, signatures, batching,
# duplicates, reordering, failures, retries; the replies of --reply-rate. A small Perl receiver records
# what arrives.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"

PNID=106540352242922
WA_APP_SECRET=app-secret-$$
export WA_APP_SECRET

# recv_start [STATUS...]: a receiver answering STATUS... then 200;
# requests land in $RECV (n.head, n.body); URL in $HOOK.
recv_start() {
	r_n=$((${r_n:-0} + 1))
	RECV=$T/recv$r_n
	mkdir -p "$RECV"
	bg perl "$TOP/tests/hookrecv.pl" "$RECV.port" "$RECV" "$@"
	RECV_PID=$!
	wait_for 30 test -s "$RECV.port" || bail 'the receiver did not start'
	HOOK=http://127.0.0.1:$(cat "$RECV.port")/hook
}

# send N PREFIX: N sends to +PREFIX0001 upwards with callbacks cb-I;
# their wamids, one per line, in $T/wamids.
send() {
	i=1
	: >"$T/wamids"
	while [ "$i" -le "$1" ]; do
		to=$(printf '+%s%04d' "$2" "$i")
		printf '{"messaging_product":"whatsapp","to":"%s","type":"template","template":{"name":"reminder","language":{"code":"en_US"}},"biz_opaque_callback_data":"cb-%s"}' \
		    "$to" "$i" >"$T/req"
		curl -s -H "@$T/auth" --data-binary "@$T/req" \
		    "$WA_API_BASE/$PNID/messages" | jq -r '.messages[0].id' \
		    >>"$T/wamids"
		i=$((i + 1))
	done
}

# statuses: every status received, one JSON object per line, in order.
statuses() {
	ls "$RECV" | grep '\.body$' | sort -n | sed "s|^|$RECV/|" | xargs cat |
	    jq -c '.entry[].changes[].value.statuses[]'
}

count() {
	statuses | wc -l | tr -d ' '
}

has_statuses() {
	test "$(count)" -ge "$1"
}

# wait_statuses N: until N statuses arrived.
wait_statuses() {
	wait_for 30 has_statuses "$1"
}

auth() {
	printf 'Authorization: Bearer %s\n' "$WA_TOKEN" >"$T/auth"
}

# --- envelope, signature, batching ------------------------------------
recv_start
fake_start --webhook-url "$HOOK" --webhook-delay-ms 20 --webhook-batch 4 \
    --webhook-linger-ms 300 --read-rate 1 --webhook-log "$T/hooks.log"
auth
send 5 1555
ok 'five sends accepted' test "$(grep -c '^wamid\.' "$T/wamids")" = 5
wait_statuses 15
is "$(count)" 15 'sent, delivered and read for each'
fake_stop
like "$(cat "$FAKE_ERR")" 'webhooks: 15 statuses delivered, [0-9]+ POST attempts, 0 undelivered' \
    'stderr counts what was delivered'

ok 'every body: object, entry[].id, changes[].field, metadata' \
    sh -c 'for f in "$1"/*.body; do
	jq -e --arg p "$2" '\''.object == "whatsapp_business_account" and
	    (.entry | length) == 1 and (.entry[0].id | type) == "string" and
	    all(.entry[0].changes[]; .field == "messages" and
	    .value.messaging_product == "whatsapp" and
	    .value.metadata.phone_number_id == $p and
	    (.value.metadata.display_phone_number | type) == "string")'\'' \
	    "$f" >/dev/null || exit 1
    done' _ "$RECV" "$PNID"
is "$(statuses | jq -sc 'map(.status) | group_by(.) | map([.[0], length])')" \
    '[["delivered",5],["read",5],["sent",5]]' 'five of each status'
is "$(statuses | jq -r .id | sort -u)" "$(sort -u "$T/wamids")" \
    'the wamids the API answered'
is "$(statuses | jq -sc 'map(select((.timestamp | type) != "string" or
    (.timestamp | test("^[0-9]{10}$") | not))) | length')" 0 \
    'timestamps are strings of seconds'
is "$(statuses | jq -r '[.id, .recipient_id, .biz_opaque_callback_data] |
    @tsv' | sort -u | wc -l | tr -d ' ')" 5 \
    'one recipient_id and callback per wamid'
is "$(statuses | jq -r 'select(.recipient_id == "15550003") |
    .biz_opaque_callback_data' | sort -u)" cb-3 \
    'recipient_id without +, the callback echoed'
is "$(statuses | jq -c 'select(.status == "sent") | [(.conversation |
    type), .pricing.pricing_model]' | sort -u)" '["null","PMP"]' \
    "sent carries pricing, and at $GRAPH_VERSION no conversation (v24.0 on)"
is "$(statuses | jq -c 'select(.status == "read") | [.pricing, .errors]' |
    sort -u)" '[null,null]' 'read carries neither, nor errors'
ok 'at most 4 statuses per POST' sh -c 'for f in "$1"/*.body; do
	test "$(jq "[.entry[].changes[].value.statuses[]] | length" "$f")" \
	    -le 4 || exit 1; done' _ "$RECV"
ok 'and more than one in some' sh -c 'for f in "$1"/*.body; do
	test "$(jq "[.entry[].changes[].value.statuses[]] | length" "$f")" \
	    -gt 1 && exit 0; done; exit 1' _ "$RECV"
ok 'every POST signed: X-Hub-Signature-256 is the HMAC of the raw body' \
    sh -c 'for h in "$1"/*.head; do
	want=$(openssl dgst -sha256 -hmac "$2" -r <"${h%.head}.body" |
	    cut -d" " -f1)
	grep -qix "X-Hub-Signature-256: sha256=$want.\{0,1\}" "$h" || exit 1
    done' _ "$RECV" "$WA_APP_SECRET"
ok 'a wrong secret would not match' sh -c '
	want=$(openssl dgst -sha256 -hmac wrong -r <"$1/1.body" | cut -d" " -f1)
	! grep -qi "sha256=$want" "$1/1.head"' _ "$RECV"
is "$(jq -s 'map(.statuses) | add' "$T/hooks.log")" 15 \
    'the webhook log counts every status'
kill "$RECV_PID"

# --- the version's shapes ----------------------------------------------
# Sent at v23.0, a sent status carries conversation, as before v24.0; the
# request log says which version each send spoke.
recv_start
fake_start --webhook-url "$HOOK" --webhook-delay-ms 0 --read-rate 0 \
    --webhook-linger-ms 0
auth
base=$WA_API_BASE
WA_API_BASE=${base%/*}/v23.0
send 1 1559
WA_API_BASE=${base%/*}/x
send 1 1560
WA_API_BASE=$base
wait_statuses 4
is "$(statuses | jq -c 'select(.status == "sent") | [.recipient_id,
    (.conversation | type), .conversation.origin.type]' | sort |
    tr '\n' ' ')" \
    '["15590001","object","marketing"] ["15600001","null",null] ' \
    'v23.0: conversation on sent; a path without a version: none'
is "$(jq -c '[.to, .version]' "$FAKE_LOG" | tr '\n' ' ')" \
    '["+15590001","v23.0"] ["+15600001",null] ' 'the log says the version'
fake_stop
kill "$RECV_PID"

# --- retries ----------------------------------------------------------
recv_start 500 503
fake_start --webhook-url "$HOOK" --webhook-delay-ms 0 --webhook-batch 10 \
    --webhook-linger-ms 200 --read-rate 0 --webhook-retry-ms 100 \
    --webhook-log "$T/retry.log"
auth
send 1 1556
wait_statuses 6
ok 'answered 500, then 503: the same body sent again' \
    cmp -s "$RECV/1.body" "$RECV/2.body"
ok '... and again until 200' cmp -s "$RECV/1.body" "$RECV/3.body"
is "$(jq -c '[.post, .attempt, .http_status, .delivered]' "$T/retry.log" |
    head -3 | tr '\n' ' ')" \
    '[1,1,500,false] [1,2,503,false] [1,3,200,true] ' \
    'the webhook log shows the attempts'
is "$(statuses | jq -r .status | sort -u | tr '\n' ' ')" 'delivered sent ' \
    'nothing lost'
fake_stop
is "$(ls "$RECV" | grep -c body)" 3 'nothing sent again after the 200'
kill "$RECV_PID"

# A receiver that is down: retried until it comes up. Down is its port
# bound but not listening, so that no other program can take the port.
HOOKRECV_HOLD=1
export HOOKRECV_HOLD
recv_start
unset HOOKRECV_HOLD
fake_start --webhook-url "$HOOK" --webhook-delay-ms 0 --read-rate 0 \
    --webhook-retry-ms 100 --webhook-log "$T/down.log"
auth
send 1 1557
wait_for 30 grep -q '"delivered":false' "$T/down.log"
like "$(head -1 "$T/down.log")" '"http_status":null,"delivered":false,"error":' \
    'connection refused: logged, kept'
kill -USR1 "$RECV_PID"
wait_statuses 2
is "$(statuses | jq -r .status | sort | tr '\n' ' ')" 'delivered sent ' \
    'delivered once the receiver is up'
fake_stop
kill "$RECV_PID"

# SIGTERM with statuses undelivered: they are counted.
recv_start
kill "$RECV_PID"
fake_start --webhook-url "$HOOK" --webhook-delay-ms 0 --read-rate 0 \
    --webhook-log "$T/lost.log"
auth
send 3 1558
wait_for 30 grep -q '"delivered":false' "$T/lost.log"
fake_stop
like "$(cat "$FAKE_ERR")" 'webhooks: 0 statuses delivered, [0-9]+ POST attempts, 6 undelivered' \
    'stopping says how many are undelivered'

# --- duplicates, reordering, failures ---------------------------------
recv_start
fake_start --webhook-url "$HOOK" --webhook-delay-ms 30 --read-rate 1 \
    --dup-rate 1 --webhook-linger-ms 50
auth
send 3 1559
wait_statuses 18
is "$(statuses | jq -c '[.id, .status]' | sort | uniq -c |
    awk '{ print $1 }' | sort -u)" 2 '--dup-rate 1: every status twice'
fake_stop
kill "$RECV_PID"

recv_start
fake_start --webhook-url "$HOOK" --webhook-delay-ms 30 --read-rate 1 \
    --reorder-rate 1 --webhook-linger-ms 0 --webhook-inflight 1
auth
send 3 1560
wait_statuses 9
is "$(statuses | jq -r 'select(.status != "sent") | .id + " " + .status' |
    awk '!seen[$1]++ { print $2 }' | sort -u)" read \
    '--reorder-rate 1: read arrives before delivered'
is "$(statuses | jq -s 'group_by(.id) | map((map(select(.status == "read"))[0].timestamp | tonumber) >=
    (map(select(.status == "delivered"))[0].timestamp | tonumber)) | all')" \
    true '... though its timestamp is not earlier'
fake_stop
kill "$RECV_PID"

recv_start
fake_start --webhook-url "$HOOK" --webhook-delay-ms 10 --fail-rate 1 \
    --read-rate 1 --script 0004=fail:131050
auth
send 4 1561
wait_statuses 8
is "$(statuses | jq -r .status | sort | uniq -c | awk '{ print $1, $2 }' |
    tr '\n' ' ')" '4 failed 4 sent ' '--fail-rate 1: sent, then failed'
is "$(statuses | jq -r 'select(.status == "failed") | select(.recipient_id !=
    "15610004") | .errors[0].code' | sort -u | grep -cv '^13102[6]$\|^131049$')" \
    0 'failed with 131026 or 131049'
is "$(statuses | jq -c 'select(.recipient_id == "15610004" and .status ==
    "failed") | .errors[0] | [.code, (.title | type), (.message | type),
    (.error_data.details | type), (.href | type)]')" \
    '[131050,"string","string","string","string"]' \
    'fail:131050 scripts the code; the errors[] shape'
fake_stop
kill "$RECV_PID"

# --- replies (--reply-rate) -------------------------------------------
# messages: every inbound message received, one JSON object a line.
messages() {
	ls "$RECV" | grep '\.body$' | sort -n | sed "s|^|$RECV/|" | xargs cat |
	    jq -c '.entry[].changes[].value | select(.messages) |
	    .messages[] + {wa_id: .contacts[0].wa_id}' 2>/dev/null
}
has_messages() {
	test "$(messages | wc -l)" -ge "$1"
}
recv_start
fake_start --webhook-url "$HOOK" --webhook-delay-ms 10 --reply-rate 1 \
    --read-rate 0 --fail-rate 0 --seed 7
auth
send 20 1562
ok 'every person a message was delivered to answers' wait_for 30 has_messages 20
is "$(messages | jq -r 'select(.type == "button") | [.button.payload,
    .button.text, (.context.id | startswith("wamid.")),
    (.context.from | test("^[0-9]+$"))] | @tsv' | sort -u)" \
    "$(printf 'yes\tYes\ttrue\ttrue')" \
    'a button reply: payload and text, and a context naming the message'
is "$(messages | jq -r 'select(.type == "button") | .context.id' |
    grep -cvxF -f "$T/wamids")" 0 '... one the API answered'
is "$(messages | jq -r 'select(.type == "text") | [(.text.body | length > 0),
    has("context")] | @tsv' | sort -u)" "$(printf 'true\tfalse')" \
    'a text reply: a body, no context'
is "$(messages | jq -r '.type' | sort -u | tr '\n' ' ')" "button text " \
    'both kinds'
is "$(messages | jq -r 'select(.from != .wa_id or (.from |
    test("^1562[0-9]{4}$") | not) or (.id | startswith("wamid.") | not) or
    (.timestamp | test("^[0-9]{10}$") | not))' | wc -l | tr -d ' ')" 0 \
    'from and contacts[].wa_id: the person, digits; its own wamid and time'
is "$(messages | jq -r .id | sort | uniq -d | wc -l | tr -d ' ')" 0 \
    'each reply its own id'
fake_stop
kill "$RECV_PID"

# What a person does back, scripted by the end of the number: the "Stop
# promotions" quick reply, a user_preferences stop and resume (their own
# field), the older system message, a text from a user known only by a
# BSUID.
# changes: every change received, one JSON object a line.
changes() {
	ls "$RECV" | grep '\.body$' | sort -n | sed "s|^|$RECV/|" | xargs cat |
	    jq -c '.entry[].changes[]'
}
has_changes() {
	test "$(changes | jq -c 'select(.field != "messages" or
	    .value.messages)' | wc -l)" -ge "$1"
}
recv_start
fake_start --webhook-url "$HOOK" --webhook-delay-ms 10 --read-rate 0 \
    --script 0001=stop-button --script 0002=prefs:stop \
    --script 0003=prefs:resume --script 0004=system:stop \
    --script 0005=bsuid:STOP
auth
send 5 1564
ok 'five people act back' wait_for 30 has_changes 5
is "$(changes | jq -r 'select(.value.messages[0].from == "15640001") |
    .value.messages[0] | [.type, .button.text, .button.payload,
    .context.id] | @tsv')" \
    "$(printf 'button\tStop promotions\tStop promotions\t%s' \
    "$(sed -n 1p "$T/wamids")")" \
    'stop-button: a button reply, "Stop promotions", naming the message'
is "$(changes | jq -c 'select(.field == "user_preferences") |
    .value.user_preferences[0] | [.wa_id, .category, .value,
    (.timestamp | type), (.detail | type)]' | sort | tr '\n' ' ')" \
    '["15640002","marketing_messages","stop","number","string"] ["15640003","marketing_messages","resume","number","string"] ' \
    'prefs:stop and prefs:resume: user_preferences, an integer timestamp'
is "$(changes | jq -c 'select(.field == "user_preferences") |
    [.value.contacts[0].wa_id, .value.metadata.phone_number_id]' |
    sort | head -1)" "[\"15640002\",\"$PNID\"]" '... with contacts and metadata'
is "$(changes | jq -r 'select(.value.messages[0].from == "15640004") |
    .value.messages[0] | [.type, .system.type, .system.marketing] | @tsv')" \
    "$(printf 'system\tuser_preference_changed\tstop')" \
    'system:stop: the older system message'
is "$(changes | jq -r '.value.messages[0] | select(.from_user_id) |
    [has("from"), .type, .text.body, (.from_user_id | test("^US\\.[0-9]+$"))]
    | @tsv')" "$(printf 'false\ttext\tSTOP\ttrue')" \
    'bsuid:STOP: a text from from_user_id, no from'
is "$(changes | jq -r '.value | select(.messages[0].from_user_id) |
    .contacts[0] | [has("wa_id"), (.user_id | type)] | @tsv')" \
    "$(printf 'false\tstring')" '... contacts[] with user_id, no wa_id'
fake_stop
kill "$RECV_PID"

# --titleless: errors[] without title (Meta: titles are deprecated);
# --old-br-wa-ids: a Brazilian mobile's wa_id without its ninth digit,
# in the send's answer and the webhooks; --foreign-rate: another app's
# statuses, its own wamids, our callback data.
recv_start
fake_start --webhook-url "$HOOK" --webhook-delay-ms 10 --read-rate 0 \
    --titleless --old-br-wa-ids --foreign-rate 1 --script 0002=fail:131049
auth
to=+5511987650001
printf '{"messaging_product":"whatsapp","to":"%s","type":"template","template":{"name":"reminder","language":{"code":"en_US"}},"biz_opaque_callback_data":"wapipe:7:1"}' \
    "$to" >"$T/req"
curl -s -H "@$T/auth" --data-binary "@$T/req" "$WA_API_BASE/$PNID/messages" \
    >"$T/answer"
is "$(jq -r '.contacts[0] | [.input, .wa_id] | @tsv' "$T/answer")" \
    "$(printf '+5511987650001\t551187650001')" \
    'the answer: input as sent, wa_id without the ninth digit'
send 2 1565
# come: the statuses the checks below read are all in (the first seven
# to come need not hold them: a foreign status may beat the failed one).
come() {
	statuses | jq -se --arg own "$(jq -r '.messages[0].id' "$T/answer")" '
	    any(.[]; .status == "failed") and
	    any(.[]; .biz_opaque_callback_data == "wapipe:7:1" and .id == $own)
	    and any(.[]; .biz_opaque_callback_data == "wapipe:7:1" and
	    .id != $own and .status == "delivered")' >/dev/null
}
ok 'the statuses of the three sends have come' wait_for 30 come
is "$(statuses | jq -r 'select(.biz_opaque_callback_data == "wapipe:7:1") |
    .recipient_id' | sort -u)" 551187650001 '... and so in its statuses'
is "$(statuses | jq -r 'select(.status == "failed") | .errors[0] |
    [has("title"), .code, (.message | type)] | @tsv')" \
    "$(printf 'false\t131049\tstring')" '--titleless: errors[] without a title'
is "$(statuses | jq -r 'select(.biz_opaque_callback_data == "wapipe:7:1") |
    .id' | sort -u | wc -l | tr -d ' ')" 2 \
    '--foreign-rate 1: another wamid with our callback data'
is "$(statuses | jq -r 'select(.biz_opaque_callback_data == "wapipe:7:1"
    and .id != "'"$(jq -r '.messages[0].id' "$T/answer")"'") | .status')" \
    delivered "... delivered, as another app's message"
fake_stop
kill "$RECV_PID"

# A message not delivered is not answered.
recv_start
fake_start --webhook-url "$HOOK" --webhook-delay-ms 10 --reply-rate 1 \
    --fail-rate 1
auth
send 5 1563
wait_statuses 10
fake_stop
is "$(messages | wc -l | tr -d ' ')" 0 'a failed message gets no reply'
like "$(cat "$FAKE_ERR")" 'webhooks: 10 statuses delivered, [0-9]+ POST attempts, 0 undelivered' \
    '... nor one left queued at the stop'
kill "$RECV_PID"

done_testing
