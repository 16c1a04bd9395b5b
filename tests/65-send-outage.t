#!/bin/sh
# wa-send: an API that cannot be reached is an outage, not the
# recipients' failure. Refused connections and runs of 5xx are answered
# retry, class outage; the number pauses, longer each time, one request
# probing at a time; the outage ends with the first real answer. Past
# --outage-after wa-send gives up and exits 69. And the exit codes: a
# halt wins over an outage and a rejected line.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"

# req ID [NUMBER [CAMPAIGN]]: a request to +1555<ID>.
req() {
	printf '{"id":%s,"campaign_id":%s,"attempt":1,"phone_number_id":"%s",' \
	    "$1" "${3:-1}" "${2:-9001}"
	printf '"to":"+1555%07d","template":{"name":"reminder",' "$1"
	printf '"language":"en_US"}}\n'
}

# once FILE: every request of $T/in has exactly one result in FILE.
once() {
	[ "$(jq -r .id "$1" | sort -n | tr '\n' ' ')" = \
	    "$(jq -r .id "$T/in" | sort -n | tr '\n' ' ')" ]
}

# Refused connections that start and end: the server is stopped, then
# started again on the same port.
fake_start --rate 0 --pair-ms 0
fake_stop
for i in $(seq 1 30); do req "$i"; done >"$T/in"
wa-send -j 4 --metrics "$T/metrics" <"$T/in" >"$T/out" 2>"$T/err" &
pid=$!
t_pids="$t_pids $pid"
ok 'refused: says the API cannot be reached' \
    wait_for 60 grep -q 'the API cannot be reached' "$T/err"
fake_restart --rate 0 --pair-ms 0
wait "$pid"
is $? 0 'the outage ended: exit 0'
ok 'every request has one result' once "$T/out"
down=$(jq -r 'select(.result.class == "outage") | .id' "$T/out" | wc -l)
ok "the refused ones are retry, class outage ($down)" \
    test "$(jq -r 'select(.result.class == "outage") | .result.outcome' \
    "$T/out" | sort -u)" = retry
is "$(jq -r 'select(.result.class != "outage") | .result.outcome' \
    "$T/out" | sort -u)" sent '... the rest sent once it was back'
is "$(jq -r 'select(.outcome == "sent") | .to' "$FAKE_LOG" | sort -u |
    wc -l)" $((30 - down)) '... which the server saw'
like "$(cat "$T/err")" 'the API answers again' 'says when it is back'
like "$(unlabel "$T/metrics")" 'wa_send_outages_total 1$' 'metrics: one outage'
like "$(unlabel "$T/metrics")" 'wa_send_outage_seconds 0$' '... over'

# A run of 5xx (a load balancer before a service that is down), one call
# at a time: four are transient; the fifth makes an outage, and then the
# probes come 1 s, then 2 s, then 4 s apart until the service is back.
fake_start --rate 0 --pair-ms 0 --outage-file "$T/down"
echo 502 >"$T/down"
for i in $(seq 101 110); do req "$i"; done >"$T/in"
wa-send -j 1 <"$T/in" >"$T/out" 2>"$T/err" &
pid=$!
t_pids="$t_pids $pid"
downs() {
	test "$(grep -c '"outcome":"down"' "$FAKE_LOG")" -ge "$1"
}
ok 'seven calls meet the outage' wait_for 120 downs 7
rm "$T/down"
wait "$pid"
is $? 0 'the 5xx outage ended: exit 0'
ok 'every request has one result' once "$T/out"
is "$(jq -r '[.result.outcome, .result.class] | join(" ")' "$T/out" |
    uniq -c | awk '{ print $1, $2, $3 }' | tr '\n' ',')" \
    '4 retry transient,3 retry outage,3 sent sent,' \
    'four transient, then outage, then sent'
jq -r 'select(.outcome == "down") | .t' "$FAKE_LOG" >"$T/t"
gap() {
	echo $(($(sed -n "$2p" "$T/t") - $(sed -n "$1p" "$T/t")))
}
ok "the first pause: 1 s or more ($(gap 5 6) ms)" test "$(gap 5 6)" -ge 1000
ok "the next: twice as long ($(gap 6 7) ms)" test "$(gap 6 7)" -ge 2000
last=$(jq -r 'select(.outcome == "sent") | .t' "$FAKE_LOG" | head -1)
ok "and the next ($((last - $(sed -n 7p "$T/t"))) ms)" \
    test $((last - $(sed -n 7p "$T/t"))) -ge 4000

# The pause is the number's, in the shared bucket: another program
# sending from it waits too.
WA_API_BASE=http://127.0.0.1:1/$GRAPH_VERSION wa-send --outage-after 1000 \
    <"$T/in" >/dev/null 2>&1
s=$(date +%s%N)
req 120 | wa-throttle >"$T/out"
e=$(date +%s%N)
ok "wa-throttle waits out the outage's pause ($(((e - s) / 1000000)) ms)" \
    test $(((e - s) / 1000000)) -ge 500

# Past --outage-after: no more calls; the rest is answered retry, class
# outage, with the outage as the reason; exit 69.
for i in $(seq 201 220); do req "$i" 9002; done >"$T/in"
WA_API_BASE=http://127.0.0.1:1/$GRAPH_VERSION wa-send -j 4 --outage-after 2 \
    --metrics "$T/metrics" <"$T/in" >"$T/out" 2>"$T/err"
is $? 69 'unreachable past --outage-after: exit 69'
ok 'every request has one result' once "$T/out"
is "$(jq -r '[.result.outcome, .result.class] | join(" ")' "$T/out" |
    sort -u)" 'retry outage' '... retry, class outage'
like "$(jq -r .result.error.title "$T/out" | tail -1)" \
    '^not sent: the API has been unreachable for 2 s: .*curl 7' \
    '... the outage as the reason'
like "$(cat "$T/err")" 'giving up' 'says it gives up'
calls=$(unlabel "$T/metrics" |
    awk '/^wa_send_errors_total\{code="curl:7"\}/ { print $2 }')
ok "few calls while it was down ($calls for 20 requests)" \
    test "$calls" -lt 20

# Exit codes: a halt (75) wins over a rejected line (65) and over an
# outage (69); an outage wins over a rejected line.
fake_start --rate 0 --pair-ms 0 --script 0000301=132001 --script 31=http:503 \
    --script 61=131000

# 131000 ("something went wrong", HTTP 500) comes from an API that is up:
# six in a row stay transient, not an outage.
for i in 161 261 361 461 561 661; do req "$i" 9006 6; done |
    wa-send -j 1 >"$T/out" 2>"$T/err"
is "$(jq -r .result.class "$T/out" | sort | uniq -c | tr -s ' ')" \
    ' 6 transient' 'six 131000s in a row: transient, no outage'
{ req 301; echo 'not json'; req 302; } >"$T/in"
wa-send -j 1 <"$T/in" >"$T/out" 2>"$T/err"
is $? 79 'a halt and a rejected line: 79'
{ req 303 9003 3; echo 'not json'; } |
    WA_API_BASE=http://127.0.0.1:1/$GRAPH_VERSION wa-send >"$T/out" 2>"$T/err"
is $? 69 'an outage and a rejected line: 69'
{
	req 301 9004 4
	for i in 331 431 531 631 731; do req "$i" 9005 5; done
	echo 'not json'
} | wa-send -j 1 >"$T/out" 2>"$T/err"
is $? 79 'a halt, an outage (five 503s) and a rejected line: 79'
like "$(cat "$T/err")" 'the API cannot be reached' '... the outage was seen'

done_testing
