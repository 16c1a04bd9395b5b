#!/bin/sh
# wa-fake-api: the Cloud API's answers, limits, scripted faults and log,
# driven with curl.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"

PNID=106540352242922

# body TO [TEMPLATE [CALLBACK]]: a template send, as wa-send makes it.
body() {
	printf '{"messaging_product":"whatsapp","recipient_type":"individual",'
	printf '"to":"%s","type":"template","template":{"name":"%s",' \
	    "$1" "${2:-reminder}"
	printf '"language":{"code":"en_US"},"components":[{"type":"body",'
	printf '"parameters":[{"type":"text","text":"Ana"}]}]},'
	printf '"biz_opaque_callback_data":"%s"}' "${3:-row-1}"
}

auth() {
	printf 'Authorization: Bearer %s\n' "$WA_TOKEN" >"$T/auth"
}

# post DATA [CURL-OPTION...]: POSTs DATA to the messages endpoint; prints
# the HTTP status, leaves the answer in $T/out; returns curl's status.
post() {
	t_data=$1
	shift
	printf '%s' "$t_data" >"$T/req"
	curl -s -o "$T/out" -w '%{http_code}' -H @"$T/auth" \
	    -H 'Content-Type: application/json' --data-binary @"$T/req" \
	    "$@" "$WA_API_BASE/$PNID/messages"
}

# many N PREFIX: N sends at once to +PREFIX0001 upwards; answers in
# $T/many/I, one HTTP status per line on stdout.
many() {
	rm -rf "$T/many"
	mkdir "$T/many"
	i=1
	while [ "$i" -le "$1" ]; do
		body "$(printf '+%s%04d' "$2" "$i")" >"$T/many/b$i"
		[ "$i" -gt 1 ] && printf 'next\n'
		printf 'url = "%s/%s/messages"\nheader = "@%s"\n' \
		    "$WA_API_BASE" "$PNID" "$T/auth"
		printf 'data-binary = "@%s"\noutput = "%s"\n' \
		    "$T/many/b$i" "$T/many/$i"
		printf 'write-out = "%%{http_code}\\n"\n'
		i=$((i + 1))
	done >"$T/many.cfg"
	curl -s --no-progress-meter --parallel --parallel-max 300 -K "$T/many.cfg"
}

code() {
	jq -r '.error.code' "$T/out"
}

fails() {
	! "$@" >/dev/null 2>&1
}

quiet() {
	"$@" >/dev/null
}

# --- start-up and usage ----------------------------------------------
exits 78 'no WA_TOKEN: refuses to start' \
    wa-fake-api --listen 127.0.0.1:0 2>"$T/err"
like "$(cat "$T/err")" 'WA_TOKEN' 'says which variable is missing'
exits 78 '--webhook-url without an app secret' env WA_TOKEN=x \
    wa-fake-api --listen 127.0.0.1:0 --webhook-url http://127.0.0.1:9/ \
    2>"$T/err"
like "$(cat "$T/err")" 'WA_APP_SECRET' 'names the app secret'
exits 64 'a bad --script is a usage error' env WA_TOKEN=x \
    wa-fake-api --script 12=frobnicate 2>/dev/null
exits 64 'a bad --rate is a usage error' env WA_TOKEN=x \
    wa-fake-api --rate -1 2>/dev/null
wa-fake-api --help >"$T/help"
is "$?" 0 '--help: exit 0'
like "$(cat "$T/help")" '--webhook-url' 'usage on stdout'

# --- token, success envelope, validation ------------------------------
printf 'file-token\n' >"$T/token"
WA_TOKEN_FILE=$T/token bg wa-fake-api --listen 127.0.0.1:0 \
    --port-file "$T/file.port" >"$T/file.out" 2>"$T/file.err"
pid=$!
wait_for 30 test -s "$T/file.port" || bail 'wa-fake-api did not start'
WA_API_BASE=http://127.0.0.1:$(cat "$T/file.port")/v21.0
is "$(cat "$T/file.err")" "wa-fake-api: listening on 127.0.0.1:$(cat \
    "$T/file.port")" 'one line on stderr'
is "$(wc -c <"$T/file.out")" 0 'nothing on stdout'
WA_TOKEN=file-token
auth
is "$(post "$(body +15550000001)")" 200 'the token of WA_TOKEN_FILE'
WA_TOKEN=file
auth
is "$(post "$(body +15550000002)")" 401 'a prefix of it is refused'
kill "$pid"
wait "$pid"
is "$?" 0 'SIGTERM: exits 0'

WA_TOKEN=secret-$$
fake_start --pair-ms 0
auth
printf 'Authorization: Bearer wrong\n' >"$T/auth"
is "$(post "$(body +15550000001)")" 401 'a wrong token: HTTP 401'
is "$(jq -c '[.error.code, .error.type]' "$T/out")" '[190,"OAuthException"]' \
    'code 190 in an OAuthException envelope'
like "$(jq -r .error.message "$T/out")" '^\(#190\) ' 'message "(#190) ..."'
auth
is "$(curl -s -o "$T/out" -w '%{http_code}' --data-binary "$(body +1555)" \
    "$WA_API_BASE/$PNID/messages")" 401 'no token at all: HTTP 401'
is "$(code)" 190 '... code 190'

is "$(post "$(body +15550000001 reminder row-7)")" 200 'a good send: HTTP 200'
is "$(jq -c '[.messaging_product, .contacts[0].input, .contacts[0].wa_id,
    .messages[0].message_status]' "$T/out")" \
    '["whatsapp","+15550000001","15550000001","accepted"]' \
    'success envelope: contacts and message_status'
like "$(jq -r '.messages[0].id' "$T/out")" '^wamid\.[A-Za-z0-9+/=]{20,}$' \
    'a wamid'
wamid1=$(jq -r '.messages[0].id' "$T/out")
# Meta's wamids (cloud-api.md: the send's answer, the status webhooks)
# are 58 to 62 characters for an 11-digit number: the base64 of a
# compact struct that holds the person's WhatsApp id and an 18-digit
# hexadecimal message id. WAL per message depends on their length.
is "${#wamid1}" 58 'a wamid as long as Meta'"'"'s for an 11-digit number'
is "$(printf '%s' "${wamid1#wamid.}" | base64 -d | tr -c '0-9A-F' ' ' |
    tr -s ' ' | sed 's/^ //; s/ $//')" \
    "15550000001 $(printf '%s' "${wamid1#wamid.}" | base64 -d |
    tail -c 19 | head -c 18)" \
    '... holding the wa_id and an 18-digit hexadecimal id'
like "$(printf '%s' "${wamid1#wamid.}" | base64 -d | tail -c 19 | head -c 18)" \
    '^[0-9A-F]{18}$' '... the id hexadecimal'
post "$(body +15550000002)" >/dev/null
wamid2=$(jq -r '.messages[0].id' "$T/out")
ok 'wamids differ within a run' test "$wamid1" != "$wamid2"

is "$(post "$(body +15550000003)
")" 200 'a body and a newline'
is "$(post "$(body +15550000004) x")" 400 'a body and more'
is "$(post 'not json')" 400 'a body that is not JSON: HTTP 400'
is "$(code)" 100 '... code 100'
is "$(post "$(body +15550000001 | jq -c 'del(.messaging_product)')")" 400 \
    'no messaging_product: HTTP 400'
is "$(code)" 100 '... code 100'
post "$(body +15550000001 | jq -c 'del(.to)')" >/dev/null
is "$(code)" 131008 'no to: 131008'
post "$(body +15550000001 | jq -c 'del(.template.language)')" >/dev/null
is "$(code)" 131008 'no language: 131008'
is "$(post "$(body 15550000001)")" 400 'to without +: HTTP 400'
is "$(code)" 131009 '... code 131009'
post "$(body '+1555-000')" >/dev/null
is "$(code)" 131009 'to with a hyphen: 131009'
post "$(body +15550000001 | jq -c '.type = "text"')" >/dev/null
is "$(code)" 131051 'type text: 131051'
post "$(body +15550000001 | jq -c '.biz_opaque_callback_data = ("x" * 513)')" \
    >/dev/null
is "$(code)" 131009 'a callback over 512 characters: 131009'
post "$(body +15550000001 | jq -c --arg t "$(head -c 70000 /dev/zero |
    tr '\0' a)" '.template.components[0].parameters[0].text = $t')" >/dev/null
is "$(code)" 100 'a body over 64 KiB: 100'
is "$(curl -s -o "$T/out" -w '%{http_code}' -H @"$T/auth" \
    --data-binary "$(body +15550000001)" "$WA_API_BASE/$PNID/media")" 400 \
    'another path: HTTP 400'
is "$(code)" 100 '... code 100'
fake_stop
like "$(cat "$FAKE_ERR")" '[0-9]+ requests: 3 sent' 'a summary on stderr'

fake_start
auth
post "$(body +15550000001)" >/dev/null
ok 'wamids differ across restarts' \
    test "$(jq -r '.messages[0].id' "$T/out")" != "$wamid1"

# --- the request log --------------------------------------------------
is "$(post "$(body +15550000001)")" 400 'pair limit: HTTP 400'
is "$(code)" 131056 'a second message to the same number: 131056'
is "$(post "$(body +15550000003)")" 200 'another number still goes'
is "$(jq -sc 'map(.outcome)' "$FAKE_LOG")" '["sent","error","sent"]' \
    'a log line per request'
is "$(jq -sc '.[0] | keys' "$FAKE_LOG")" \
    '["callback","code","delay_ms","http_status","method","outcome","phone_number_id","t","template","to","version","wamid"]' \
    'log fields'
is "$(jq -sc '.[1] | [.phone_number_id, .to, .callback, .template, .wamid,
    .code, .http_status]' "$FAKE_LOG")" \
    "[\"$PNID\",\"+15550000001\",\"row-1\",\"reminder\",null,131056,400]" \
    'the log of a refusal'
is "$(jq -sc --arg w "$(jq -r '.messages[0].id' "$T/out")" \
    '.[2] | [.wamid == $w, .code, .http_status, (.t | type)]' "$FAKE_LOG")" \
    '[true,null,200,"number"]' 'the log of a send: its wamid'
fake_stop

# --- pair limit over time ---------------------------------------------
# Times from the log (ms, stamped after each decision): the second send
# is refused if it came within 300 ms, and however slow the machine, a
# send once 300 ms have passed since the last accepted one goes.
fake_start --pair-ms 300
auth
post "$(body +15550000001)" >/dev/null
post "$(body +15550000001)" >/dev/null
gap=$(jq -s '.[1].t - .[0].t' "$FAKE_LOG")
ok "the same number again after $gap ms: refused (131056) within 300 ms" \
    test "$(code)" = 131056 -o "$gap" -ge 290
last=$(jq -s '[.[] | select(.outcome == "sent") | .t] | max' "$FAKE_LOG")
passed() { [ $(($(date +%s%3N) - last)) -ge 310 ]; }
wait_for 30 passed
is "$(post "$(body +15550000001)")" 200 'accepted again once 300 ms passed'
fake_stop

# --- throughput -------------------------------------------------------
# The bound is on the server's counting, checked in its log: in no 1 s
# window more than 5 accepted. Batches of 20 at once go until one sees
# 130429, which any server with the limit must give.
fake_start --rate 5 --pair-ms 0
auth
try=0
while [ "$try" -lt 5 ] && ! grep -q 130429 "$FAKE_LOG"; do
	many 20 "1666$try" >/dev/null
	try=$((try + 1))
done
ok 'above --rate 5: 130429' grep -q '"code":130429' "$FAKE_LOG"
is "$(jq -sc '[.[] | select(.code == 130429) | .http_status] | unique' \
    "$FAKE_LOG")" '[400]' '130429 comes with HTTP 400'
ok 'its envelope: "(#130429) Rate limit hit"' \
    grep -lq '"message":"(#130429) Rate limit hit"' "$T"/many/*
is "$(jq -s '[.[] | select(.outcome == "sent") | .t] | sort as $t |
    [range(0; $t | length) as $i | [$t[] | select(. >= $t[$i] and
    . <= $t[$i] + 990)] | length] | max' "$FAKE_LOG")" 5 \
    'at most 5 accepted in any 1 s window, and 5 in some'
fake_stop

fake_start --rate 0 --pair-ms 0
auth
is "$(many 30 1777 | sort -u)" 200 '--rate 0: no limit'
fake_stop

# --- templates --------------------------------------------------------
fake_start --templates reminder,welcome
auth
is "$(post "$(body +15550000001 welcome)")" 200 'a listed template goes'
is "$(post "$(body +15550000002 promo)")" 404 'an unknown one: HTTP 404'
is "$(code)" 132001 '... code 132001'
fake_stop

# --- scripts ----------------------------------------------------------
fake_start --pair-ms 0 --script 01=131026 --script 02=131049 \
    --script 03=131000 --script 04=132015 --script 05=190 --script 06=4242 \
    --script 11=hang --script 12=drop --script 13=garbage \
    --script 14=once:131000 --script 15=slow:300 --script 16=http:503 \
    --script 17=http:429 --script 18=lost --script 118=131048
auth
for c in 01:131026:400 02:131049:400 03:131000:500 04:132015:400 05:190:401 \
    06:4242:400; do
	n=${c%%:*}
	rest=${c#*:}
	is "$(post "$(body "+155500000$n")")" "${rest#*:}" \
	    "script $n=${rest%:*}: HTTP ${rest#*:}"
	is "$(code)" "${rest%:*}" "... code ${rest%:*}"
done
exits 28 'hang: no answer (curl times out)' \
    quiet post "$(body +15550000011)" --max-time 1
is "$(jq -sc '[.[] | select(.to == "+15550000011") | .outcome,
    .http_status]' "$FAKE_LOG")" '["hang",null]' 'hang is logged'
exits 52 'drop: closed without an answer' \
    quiet post "$(body +15550000012)"
is "$(post "$(body +15550000013)")" 200 'garbage: HTTP 200'
ok '... with a body that is not JSON' fails jq . "$T/out"
is "$(post "$(body +15550000014)")" 500 'once:131000: the first fails'
is "$(code)" 131000 '... with 131000'
is "$(post "$(body +15550000014)")" 200 'and the next succeeds'
is "$(post "$(body +15550000014)")" 200 'and the one after'
t=$(curl -s -o /dev/null -w '%{time_total}' -H @"$T/auth" \
    --data-binary "$(body +15550000015)" "$WA_API_BASE/$PNID/messages")
ok "slow:300: answered after 300 ms or more ($t s)" \
    awk -v t="$t" 'BEGIN { exit !(t >= 0.3) }'
is "$(post "$(body +15550000016)")" 503 'http:503'
ok '... with a body that is not JSON' fails jq . "$T/out"
is "$(post "$(body +15550000017)")" 429 'http:429'
exits 52 'lost: closed without an answer' \
    quiet post "$(body +15550000018)"
like "$(jq -sc '.[] | select(.to == "+15550000018") | [.outcome, .wamid]' \
    "$FAKE_LOG")" '^\["drop","wamid\..*"\]$' '... but accepted: a wamid'
post "$(body +15550000118)" >/dev/null
is "$(code)" 131048 'the longest matching suffix wins'
is "$(jq -s length "$FAKE_LOG")" 17 'every request logged once'
fake_stop

# --- random faults, repeatable with --seed ----------------------------
fake_start --error-rate 131000:1
auth
is "$(many 10 1888 | sort -u)" 500 '--error-rate 131000:1: all fail'
is "$(jq -sc 'map(.code) | unique' "$FAKE_LOG")" '[131000]' '... with 131000'
fake_stop
fake_start --drop-rate 1
auth
exits 52 '--drop-rate 1: dropped' quiet post "$(body +15550000001)"
fake_stop
for run in 1 2; do
	fake_start --seed 42 --error-rate 131016:0.3 --error-rate 2:0.2 \
	    --drop-rate 0.2 --pair-ms 0
	auth
	i=10
	while [ "$i" -lt 30 ]; do
		post "$(body "+155500000$i")" >/dev/null
		i=$((i + 1))
	done
	fake_stop
	jq -c '[.outcome, .code]' "$FAKE_LOG" >"$T/seed$run"
done
is "$(cat "$T/seed2")" "$(cat "$T/seed1")" '--seed: the same faults again'
is "$(jq -r 'if .[1] then .[1] else .[0] end' "$T/seed1" | sort -u |
    tr '\n' ' ')" '131016 2 drop sent ' 'errors, drops and sends all came up'

# --- latency: held without a thread each ------------------------------
fake_start --latency-ms 300 --jitter-ms 50 --rate 0 --pair-ms 0
auth
t=$(curl -s -o /dev/null -w '%{time_total}' -H @"$T/auth" \
    --data-binary "$(body +15550000001)" "$WA_API_BASE/$PNID/messages")
ok "--latency-ms 300 --jitter-ms 50: no answer before 250 ms ($t s)" \
    awk -v t="$t" 'BEGIN { exit !(t >= 0.25) }'
is "$(many 300 1999 | sort | uniq -c | awk '{ print $1, $2 }')" '300 200' \
    '300 held at once all answered'
is "$(jq -s '[.[] | select(.delay_ms < 250 or .delay_ms > 350)] | length' \
    "$FAKE_LOG")" 0 'delays within mean +- jitter'

# SIGTERM while a request is held: closed, clean exit.
curl -s -o /dev/null -H @"$T/auth" --data-binary "$(body +15550000002)" \
    "$WA_API_BASE/$PNID/messages" &
held=$!
wait_for 30 grep -q 15550000002 "$FAKE_LOG"
fake_stop
wait "$held"
is "$?" 52 'the held request is closed unanswered'

done_testing
