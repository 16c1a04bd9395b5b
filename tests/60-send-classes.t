#!/bin/sh
# wa-send: every error class of DESIGN.md's table against wa-fake-api, the
# "nothing sent" and "may have arrived" transport failures, and answers
# that are not the API's JSON.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"

# req ID SUFFIX: a request to +1555000<SUFFIX>, each on its own number and
# campaign so that pauses and halts of one leave the others alone.
req() {
	printf '{"id":%s,"campaign_id":%s,"attempt":2,"phone_number_id":"%s",' \
	    "$1" "$1" "$((7000 + $1))"
	printf '"to":"+1555000%s","template":{"name":"reminder",' "$2"
	printf '"language":"en_US","params":["Ana","%s"]},"mine":"kept"}\n' "$1"
}

# field ID JQ: a field of the result line of request ID.
field() {
	jq -r --argjson id "$1" "select(.id == \$id) | $2" "$T/out"
}

# expect ID OUTCOME CLASS CODE HTTP: checks one result line.
expect() {
	is "$(field "$1" '[.result.outcome, .result.class,
	    (.result.error.code // "-"), (.result.http_status // "-")] |
	    join(" ")')" "$2 $3 $4 $5" "request $1 ($6): $2, $3, code $4, HTTP $5"
}

fake_start --rate 0 --pair-ms 0 --templates reminder \
    --script 1002=130429 --script 1003=80007 --script 1004=131057 \
    --script 1005=131048 --script 1006=131056 --script 1007=131049 \
    --script 1008=131000 --script 1009=http:503 --script 1010=131026 \
    --script 1011=http:404 --script 1012=132001 --script 1013=190 \
    --script 1014=hang --script 1015=drop --script 1016=garbage \
    --script 1017=http:429 --script 1018=slow:300 --script 1019=133010 \
    --script 1020=http:500

for i in $(seq 1 20); do
	req "$i" "$((1000 + i))"
done >"$T/in"
# The timeout: only the call that hangs may reach it, however busy the
# machine.
wa-send -j 20 --timeout-ms 5000 <"$T/in" >"$T/out" 2>"$T/err"
is $? 79 'a run with campaign-fatal answers exits 79'
is "$(wc -l <"$T/out")" 20 'one result line per request'
is "$(jq -s 'map(.id) | sort | join(",")' "$T/out")" \
    "\"$(seq -s, 1 20)\"" 'every request answered once'

expect 1 sent sent - 200 'accepted'
like "$(field 1 .result.wamid)" '^wamid\.' 'the wamid of an accepted message'
like "$(field 1 .result.latency_ms)" '^[0-9]+$' 'latency in ms'
is "$(field 1 '.mine')" kept 'fields it does not know pass through'
expect 2 retry throughput 130429 400 'throughput limit'
expect 3 retry throughput 80007 400 'account rate limit'
expect 4 retry unavailable 131057 500 'maintenance'
expect 5 retry unavailable 131048 400 'spam rate limit'
expect 6 retry pair_rate 131056 400 'pair rate limit'
expect 7 retry later 131049 400 'per-user marketing cap'
expect 8 retry transient 131000 500 'unknown error'
expect 9 retry transient - 503 'HTTP 503 with a body that is not the API JSON'
expect 10 failed permanent 131026 400 'undeliverable'
like "$(field 10 .result.error.title)" '.' 'a failure carries its title'
expect 11 failed permanent - 404 'HTTP 404 with a body that is not the API JSON'
like "$(field 11 .result.error.title)" '404' '... and says so'
expect 12 halt fatal 132001 404 'template missing'
expect 13 halt fatal 190 401 'token expired'
expect 14 unknown ambiguous - - 'no answer within the timeout'
is "$(field 14 .result.error.curl)" 28 '... is a curl timeout'
expect 15 unknown ambiguous - - 'connection closed after the request'
expect 16 unknown ambiguous - 200 '200 with a body that is not JSON'
expect 17 retry throughput - 429 'HTTP 429 without a code'
expect 18 sent sent - 200 'a slow answer'
ok 'a slow answer takes its time' test "$(field 18 .result.latency_ms)" -ge 300
expect 19 halt fatal 133010 400 'number not registered'
expect 20 retry transient - 500 'HTTP 500 with a body that is not the API JSON'

like "$(cat "$T/err")" 'SPAM RATE LIMIT' '131048 is a loud warning'
like "$(cat "$T/err")" 'number 7004: unavailable.*60 s' '131057 pauses 60 s'
like "$(cat "$T/err")" 'campaign 12 halted: error 132001' 'a halt is logged'

# What reached the API.
is "$(jq -r 'select(.to == "+15550001001") | [.phone_number_id, .callback,
    .template, .outcome] | join(" ")' "$FAKE_LOG")" \
    '7001 wapipe:1:2 reminder sent' 'the number, callback data and template'
is "$(jq -s length "$FAKE_LOG")" 20 'one call per request, no resend'

# Phone numbers: written by hand with spaces, sent in E.164.
printf '%s\n' '{"phone_number_id":"7100","to":"+1 555 (000) 10-99","template":{"name":"reminder","language":"en_US"}}' |
    wa-send >"$T/out" 2>"$T/err"
is "$(jq -r .result.outcome "$T/out")" sent 'a hand-written request without id is sent'
is "$(jq -r 'select(.phone_number_id == "7100") | [.to, .callback] |
    map(. // "none") | join(" ")' "$FAKE_LOG")" '+15550001099 none' \
    '... to E.164, with no callback data'

# A result line fed back in (a retry by hand) gets a new result, not two.
req 29 1029 | sed 's/}$/,"result":{"outcome":"retry"}}/' | wa-send >"$T/out"
is "$(grep -o '"result"' "$T/out" | wc -l)" 1 'an old result is replaced'
is "$(jq -r '[.result.outcome, .mine] | join(" ")' "$T/out")" 'sent kept' \
    '... by the new one, other fields kept'

# A connection that served a request, then closed without an answer:
# unknown. (libcurl sends such a request once more on a new connection,
# so the fake logs it twice: tests/64-send-lost.t.)
{
	req 30 1030
	req 31 1015
} | sed 's/"phone_number_id":"[0-9]*"/"phone_number_id":"7030"/' |
    wa-send -j 1 >"$T/out" 2>"$T/err"
is "$(jq -r .result.outcome "$T/out" | tr '\n' ' ')" 'sent unknown ' \
    'a drop on a kept-alive connection is unknown'

# Nothing can be sent: connection refused. Port 1 is never ours. An
# outage, not the recipients' failure: retry, class outage, exit 69.
WA_STATE_DIR=$T/state2 WA_API_BASE=http://127.0.0.1:1/$GRAPH_VERSION wa-send <"$T/in" >"$T/out" 2>"$T/err"
is $? 69 'connection refused: exit 69 (the API is unavailable)'
is "$(jq -r .result.outcome "$T/out" | sort -u)" retry 'connection refused: retry'
is "$(jq -r .result.class "$T/out" | sort -u)" outage '... class outage'
like "$(jq -r .result.error.title "$T/out" | head -1)" 'nothing was sent' \
    '... saying nothing was sent'
like "$(cat "$T/err")" 'the API cannot be reached' '... and once on stderr'

# Nor when the TLS handshake fails (https to the fake's plain HTTP port)
# or the host does not resolve (.invalid never does).
req 40 1040 | WA_STATE_DIR=$T/state2 \
    WA_API_BASE=https://127.0.0.1:$FAKE_PORT/$GRAPH_VERSION wa-send >"$T/out" 2>"$T/err"
is "$(jq -r '[.result.outcome, .result.class, .result.error.curl] |
    join(" ")' "$T/out")" 'retry outage 35' 'TLS handshake failed: an outage'
req 41 1041 | WA_STATE_DIR=$T/state2 WA_API_BASE=http://wapipe.invalid/$GRAPH_VERSION \
    wa-send --connect-timeout-ms 2000 >"$T/out" 2>"$T/err"
is "$(jq -r '[.result.outcome, .result.class] | join(" ")' "$T/out")" \
    'retry outage' 'host not found: an outage'
like "$(jq -r .result.error.title "$T/out")" 'nothing was sent' \
    '... nothing was sent'
is "$(jq -s 'map(select(.to == "+15550001040" or .to == "+15550001041")) |
    length' "$FAKE_LOG")" 0 'the fake saw none of them'

done_testing
