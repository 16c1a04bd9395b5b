#!/bin/sh
# wa-send: backpressure (never more than -j in flight, nothing read ahead),
# SIGTERM, the token's secrecy, --dry-run, bad lines and usage.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"

# req ID SUFFIX: a request to +1555000<SUFFIX>.
req() {
	printf '{"id":%s,"campaign_id":1,"attempt":1,"phone_number_id":"9001",' \
	    "$1"
	printf '"to":"+1555000%s","template":{"name":"reminder",' "$2"
	printf '"language":"en_US","params":["x"]}}\n'
}

printf 'tok-%s-Zq8\n' "$$" >"$T/token"
tr -d '\n' <"$T/token" >"$T/token.pattern"
WA_TOKEN_FILE=$T/token
WA_TOKEN=$(cat "$T/token.pattern")
export WA_TOKEN_FILE WA_TOKEN
fake_start --rate 0 --pair-ms 0 --script 7=hang --script 8=slow:1500

# Backpressure from a file: with every call hanging, wa-send has read
# exactly -j lines (the file offset says so) and the fake has seen -j,
# after the campaign's canary (the first line, alone, answered at once).
{ req 0 00000; for i in $(seq 1 5); do req "$i" "000${i}7"; done; } >"$T/in"
wa-send -j 3 --timeout-ms 2000 --metrics "$T/metrics" <"$T/in" \
    >"$T/out" 2>"$T/err" &
pid=$!
t_pids="$t_pids $pid"
three=$(head -4 "$T/in" | wc -c)
offset() {
	awk '/^pos:/ { print $2 }' "/proc/$pid/fdinfo/0" 2>/dev/null
}
hanging() {
	test "$(jq -s length "$FAKE_LOG")" -ge "$1"
}
ok 'the canary and three calls reach the fake' wait_for 30 hanging 4
ps -eo args >"$T/ps"
# Lines are read in the loop that starts the calls, so the offset is final
# once they reach the fake, until a call ends (a timeout frees its slot):
# the metrics, written after the offset is read, say whether one had.
read=$(offset)
calls=$(jq -s length "$FAKE_LOG")
metrics_now "$pid" "$T/metrics"
ended=$(awk '/^wa_send_results_total/ { n += $2 } END { print n + 0 }' \
    "$T/metrics")
ok "only three lines were read after the canary ($read bytes, $ended calls ended)" \
    test "$read" = "$three" -o "$ended" -gt 1
ok "... and only three sent after the canary ($calls)" \
    test "$calls" = 4 -o "$ended" -gt 1
is "$(grep -cF -f "$T/token.pattern" "$T/ps")" 0 'the token is not in ps'
wait "$pid"
is $? 0 'timeouts are not errors: exit 0'
is "$(jq -r .result.outcome "$T/out" | sort | uniq -c | tr -s ' ')" \
    "$(printf ' 1 sent\n 5 unknown')" \
    'the canary sent, all five timed out after sending: unknown'
like "$(unlabel "$T/metrics")" 'wa_send_in_flight_max 3$' \
    'never more than three in flight'
like "$(unlabel "$T/metrics")" 'wa_send_results_total\{outcome="unknown"\} 5' \
    'metrics count outcomes'
like "$(unlabel "$T/metrics")" 'wa_send_errors_total\{code="curl:28"\} 5' \
    '... and errors by code'
like "$(unlabel "$T/metrics")" 'wa_send_latency_seconds_count 6' \
    '... and latencies'
for f in out err metrics "$(basename "$FAKE_LOG")" "$(basename "$FAKE_ERR")"
do
	is "$(grep -cF -f "$T/token.pattern" "$T/$f")" 0 "the token is not in $f"
done

# Backpressure from a pipe, and SIGTERM: after the canary, two slow calls
# in flight, then TERM; both finish and are written, and every other line
# is read and answered unsent, without a call, until the end of input.
{ req 10 00100; for i in $(seq 1 10); do req "$((10 + i))" "00${i}8"; done; } \
    >"$T/in"
n=$(jq -s length "$FAKE_LOG")
mkfifo "$T/fifo"
(cat "$T/in"; wait_for 30 test -e "$T/stop") >"$T/fifo" &
wa-send -j 2 <"$T/fifo" >"$T/out" 2>"$T/err" &
pid=$!
t_pids="$t_pids $pid"
wait_for 30 hanging $((n + 3))
wait_for 30 catches "$pid" TERM
kill -TERM "$pid"
unsent() {
	test "$(grep -c '"class":"unsent"' "$T/out")" -ge "$1"
}
ok 'after SIGTERM the lines still coming are answered' wait_for 30 unsent 8
touch "$T/stop"
wait "$pid"
is $? 0 'SIGTERM: exit 0 at the end of input'
is "$(jq -r 'select(.result.outcome == "sent") | .id' "$T/out" | sort |
    tr '\n' ' ')" '10 11 12 ' 'the calls in flight finish and are written'
is "$(jq -r 'select(.result.class == "unsent") | .id' "$T/out" | sort -n |
    tr '\n' ' ')" '13 14 15 16 17 18 19 20 ' \
    'the others are answered retry, class unsent'
is "$(jq -s length "$FAKE_LOG")" $((n + 3)) '... without a call'

# The token from WA_TOKEN is wiped from wa-send's environment.
unset WA_TOKEN_FILE
n=$(jq -s length "$FAKE_LOG")
req 30 00307 | wa-send --timeout-ms 1000 >"$T/out" 2>"$T/err" &
pid=$!
t_pids="$t_pids $pid"
wait_for 30 hanging $((n + 1))
is "$(tr '\0' '\n' <"/proc/$pid/environ" | grep -cF -f "$T/token.pattern")" 0 \
    'the token is not in /proc/PID/environ'
wait "$pid"

# No token: exit 78, and the message names the variables only.
req 31 0031 | env -u WA_TOKEN wa-send >"$T/out" 2>"$T/err"
is $? 78 'no token: exit 78'
like "$(cat "$T/err")" 'WA_TOKEN' '... saying where to put it'
printf 'bad token\n' >"$T/badtoken"
req 31 0031 | WA_TOKEN_FILE=$T/badtoken wa-send >"$T/out" 2>"$T/err"
is $? 78 'a token with a space: exit 78'
is "$(grep -c 'bad token' "$T/err")" 0 '... without printing it'

# A wrong token is Meta's 190: the campaign halts.
req 32 0032 | WA_TOKEN=wrong wa-send >"$T/out" 2>"$T/err"
is "$(jq -r '[.result.outcome, .result.error.code] | join(" ")' "$T/out")" \
    'halt 190' 'a wrong token halts (190)'

# --dry-run: the URL and body, and no call.
n=$(jq -s length "$FAKE_LOG")
req 33 0033 | env -u WA_TOKEN wa-send --dry-run >"$T/out" 2>"$T/err"
is $? 0 'dry run: exit 0, without a token'
is "$(jq -s length "$FAKE_LOG")" "$n" 'dry run: no call'
is "$(jq -r '.dry_run.url' "$T/out")" "$WA_API_BASE/9001/messages" \
    'dry run: the URL'
is "$(jq -c '.dry_run.body | [.to, .biz_opaque_callback_data,
    .template.language.code, .template.components[0].parameters[0].text]' \
    "$T/out")" '["+15550000033","wapipe:33:1","en_US","x"]' \
    'dry run: the body'

# Bad lines are rejected with their number, the others sent; exit 65.
{
	req 40 0040
	echo 'not json'
	echo '{"phone_number_id":"9001","template":{"name":"t","language":"en"}}'
	echo '{"phone_number_id":"9001","to":"+15550000041","template":{"language":"en"}}'
	echo '{"to":"+15550000042","template":{"name":"t","language":"en"}}'
	echo '{"phone_number_id":"9/../x","to":"+15550000043","template":{"name":"t","language":"en"}}'
	echo '{"phone_number_id":"9001","to":"15550000044","template":{"name":"t","language":"en"}}'
	echo '{"phone_number_id":"9001","to":"+15550000045","template":{"name":"t"}}'
	req 46 0046
} >"$T/in"
wa-send --reject "$T/rejects" <"$T/in" >"$T/out" 2>"$T/err"
is $? 65 'bad lines: exit 65'
is "$(jq -r .id "$T/out" | sort | tr '\n' ' ')" '40 46 ' 'good lines are sent'
is "$(wc -l <"$T/rejects")" 7 'bad lines go to --reject'
like "$(cat "$T/err")" '<stdin>:2: ' 'a rejection names its line'
like "$(cat "$T/err")" '<stdin>:3: no "to"' 'no to'
like "$(cat "$T/err")" '<stdin>:4: no template.name' 'no template name'
like "$(cat "$T/err")" '<stdin>:5: no phone_number_id' 'no phone_number_id'
like "$(cat "$T/err")" '<stdin>:6: phone_number_id is not' 'a path in the number'
like "$(cat "$T/err")" "<stdin>:7: .*E.164" 'no +'
like "$(cat "$T/err")" '<stdin>:8: no template.language' 'no language'

# Usage.
wa-send --insecure </dev/null >/dev/null 2>&1
is $? 64 'there is no --insecure'
wa-send -j 0 </dev/null >/dev/null 2>&1
is $? 64 '-j 0 is a usage error'
like "$(wa-send --help)" '^usage: wa-send' '--help'
WA_API_BASE=ftp://x wa-send </dev/null >/dev/null 2>&1
is $? 78 'WA_API_BASE must be http(s)'

done_testing
