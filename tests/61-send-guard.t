#!/bin/sh
# wa-send: what one answer does to the sends after it. A halt stops a
# campaign's API calls; the circuit breaker halts a run of one permanent
# error; throughput errors cut the number's shared rate, then pause its
# bucket for every process, growing while they go on and not for a burst
# from one moment.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"

# req ID TO NUMBER [CAMPAIGN]: a request; no campaign_id when CAMPAIGN is -.
req() {
	c=${4:-1}
	[ "$c" = - ] && c= || c="\"campaign_id\":$c,"
	printf '{"id":%s,%s"attempt":1,"phone_number_id":"%s","to":"%s",' \
	    "$1" "$c" "$3" "$2"
	printf '"template":{"name":"reminder","language":"en_US"}}\n'
}

# calls TO-PATTERN: how many requests to matching numbers reached the API.
calls() {
	jq -r .to "$FAKE_LOG" | grep -c -- "$1"
}

fake_start --rate 0 --pair-ms 0 --script 01=132001 --script 02=131026 \
    --script 03=130429 --script 04=131057 --script 05=slow:1100

# A halt: one fatal answer, then no more calls for that campaign.
{
	req 1 +15550000100 100 10
	req 2 +15550000201 100 10
	for i in 3 4 5 6; do req "$i" "+1555000030$i" 100 10; done
	req 7 +15550000700 100 11
} >"$T/in"
wa-send -j 1 <"$T/in" >"$T/out" 2>"$T/err"
is $? 79 'a halt exits 79'
is "$(jq -r .result.outcome "$T/out" | tr '\n' ' ')" \
    'sent halt halt halt halt halt sent ' 'after the halt, its campaign halts'
is "$(calls '^+155500003')" 0 'the fake saw no call after the halt'
like "$(jq -r 'select(.id == 4) | .result.error.title' "$T/out")" \
    'not sent: campaign 10 halted: error 132001' 'halted lines say why'
is "$(jq -r 'select(.id == 4) | .result.error.code' "$T/out")" 132001 \
    '... with the code that halted'
is "$(calls '^+15550000700$')" 1 'another campaign still sends'

# Sending makes no bucket (only a pause does), so wa-throttle can still
# make it at its own rate.
req 8 +15550000800 100 12 | wa-throttle -r 500 >/dev/null 2>"$T/err"
is "$(cat "$T/err")" '' 'wa-throttle -r makes the bucket after wa-send ran'

# The circuit breaker: three failures in a row with one code halt.
for i in 1 2 3 4 5 6; do req "$((20 + i))" "+155500010${i}02" 101 20; done \
    >"$T/in"
wa-send -j 1 --breaker 3 <"$T/in" >"$T/out" 2>"$T/err"
is $? 79 'a breaker trip exits 79'
is "$(jq -r .result.outcome "$T/out" | tr '\n' ' ')" \
    'failed failed halt halt halt halt ' 'the third failure in a row halts'
is "$(calls '^+155500010.02$')" 3 'the fake saw three calls'
like "$(jq -r 'select(.id == 23) | .result.error.title' "$T/out")" \
    'circuit breaker: 3 sends in a row failed with error 131026' \
    '... and the line says why'

# A success ends the run; without campaign_id the campaign is the number
# and template.
{
	req 31 +15550001102 102 -
	req 32 +15550001202 102 -
	req 33 +15550001300 102 -
	req 34 +15550001402 102 -
	req 35 +15550001502 102 -
	req 36 +15550001602 103 -
} >"$T/in"
wa-send -j 1 --breaker 3 <"$T/in" >"$T/out" 2>"$T/err"
is $? 0 'no halt when a success breaks the run'
is "$(jq -r .result.outcome "$T/out" | tr '\n' ' ')" \
    'failed failed sent failed failed failed ' \
    '... and another number is another campaign'

# Throughput: a first 130429 cuts the number's rate; one for a request
# sent once the cut has settled (1 s on: the slow success between) pauses
# the shared bucket, so another wa-send (a separate process) holds its
# request until the pause is over.
{
	req 41 +15550004103 104
	req 45 +15550004505 104
	req 46 +15550004603 104
} | wa-send -j 1 >"$T/out" 2>"$T/err"
like "$(cat "$T/err")" 'number 104: throughput limit \(error 130429\): rate cut to 63/s' \
    'the first 130429 cuts the rate (70/s by 10%)'
is "$(grep -c 'pausing its bucket 1000 ms' "$T/err")" 1 \
    'one after the cut settled pauses the bucket'
req 42 +15550004200 104 | wa-send >"$T/out2" 2>"$T/err2"
is "$(jq -r .result.outcome "$T/out" | tr '\n' ' ')$(jq -r .result.outcome "$T/out2")" \
    'retry sent retry sent' '130429 is retried; the next request is sent'
t1=$(jq -r 'select(.to == "+15550004603") | .t' "$FAKE_LOG")
t2=$(jq -r 'select(.to == "+15550004200") | .t' "$FAKE_LOG")
ok "another process waited out the 1 s pause ($((t2 - t1)) ms)" \
    test "$((t2 - t1))" -ge 1000
# ... and so does wa-throttle, another program: its line passes no sooner
# than 1 s after Meta's 130429 (the log's time, stamped before the answer;
# 10 ms for clocks read in whole ms).
{
	req 43 +15550004303 105
	req 47 +15550004705 105
	req 48 +15550004803 105
} | wa-send -j 1 >/dev/null 2>&1
req 44 +15550004400 105 | wa-throttle >"$T/out"
e=$(date +%s%3N)
t43=$(jq -r 'select(.to == "+15550004803") | .t' "$FAKE_LOG")
ok "wa-throttle holds the number back too ($((e - t43)) ms after the 130429)" \
    test $((e - t43)) -ge 990
is "$(jq -r .id "$T/out")" 44 '... then passes the line'

# Growing: each 130429 for a request sent after the last pause doubles it;
# a success after the pause halves it.
{
	req 51 +15550005103 106
	req 54 +15550005405 106
	req 52 +15550005203 106
	req 55 +15550005503 106
	req 53 +15550005300 106
} >"$T/in"
s=$(date +%s)
wa-send -j 1 --metrics "$T/metrics" <"$T/in" >"$T/out" 2>"$T/err"
e=$(date +%s)
like "$(cat "$T/err")" 'pausing its bucket 1000 ms' 'the first pause: 1 s'
like "$(cat "$T/err")" 'pausing its bucket 2000 ms' 'the next one: 2 s'
ok 'the held requests waited out both pauses' test $((e - s)) -ge 3
is "$(jq -r .result.outcome "$T/out" | tr '\n' ' ')" 'retry sent retry retry sent ' \
    'held requests are sent after the pause'
like "$(unlabel "$T/metrics")" 'wa_send_pause_seconds 1$' \
    'the success halved the pause'

# A burst from one moment is one error: five 130429s in flight together
# (once the campaign's canary came back) cut the rate once, and do not
# pause.
{
	req 60 +15550006000 107
	for i in 1 2 3 4 5; do req "$((60 + i))" "+155500060${i}03" 107; done
} >"$T/in"
wa-send -j 6 --metrics "$T/m" <"$T/in" >"$T/out" 2>"$T/err"
is "$(grep -c 'rate cut' "$T/err")" 1 'a burst cuts the rate once'
is "$(grep -c 'pausing its bucket' "$T/err")" 0 '... and does not pause'
like "$(unlabel "$T/m")" 'wa_send_in_flight_max 5$' '... the five were out together'

# 131057 pauses the number for a minute: a request after it is held, and
# answered retry, unsent, when wa-send is told to stop.
req 71 +15550007104 108 | wa-send >"$T/out" 2>"$T/err"
mkfifo "$T/fifo"
(req 72 +15550007200 108; wait_for 30 test -e "$T/stop") >"$T/fifo" &
wa-send --metrics "$T/m" <"$T/fifo" >"$T/out" 2>"$T/err" &
pid=$!
t_pids="$t_pids $pid"
held() {
	kill -USR2 "$pid"
	unlabel "$T/m" | grep -q '^wa_send_held 1$'
}
wait_for 30 catches "$pid" USR2
ok 'the request after it is held' wait_for 30 held
kill -TERM "$pid"
touch "$T/stop"
wait "$pid"
is $? 0 'SIGTERM: exits 0'
is "$(jq -r '[.result.outcome, .result.class, .result.error.title] |
    join(": ")' "$T/out")" \
    'retry: unsent: not sent: stopped while number 108 was paused' \
    'a request held by a pause is answered retry (unsent) on SIGTERM'
is "$(calls '^+15550007200$')" 0 '... and never sent'

done_testing
