#!/bin/sh
# Stopping is draining, wa-send's half: on the first SIGINT or SIGTERM no
# new call; the calls in flight end and are written; every request held
# or still read is answered retry, class unsent, at once; exit at the end
# of input. A second signal cuts the calls in flight short (unknown) and
# kills it. With real signals to a real process group, as Ctrl-C sends
# them: wa-throttle | wa-send, from a file of requests.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"

# req ID [NUMBER]: a request to +1555<ID>.
req() {
	printf '{"id":%s,"campaign_id":1,"attempt":1,"phone_number_id":"%s",' \
	    "$1" "${2:-9001}"
	printf '"to":"+1555%07d","template":{"name":"reminder",' "$1"
	printf '"language":"en_US"}}\n'
}

# once FILE: every request of $T/in has exactly one result in FILE.
once() {
	[ "$(jq -r .id "$1" | sort -n | tr '\n' ' ')" = \
	    "$(jq -r .id "$T/in" | sort -n | tr '\n' ' ')" ]
}

# seen N: the fake has logged N calls or more.
seen() {
	test "$(wc -l <"$FAKE_LOG")" -ge "$1"
}

# Ctrl-C to the group of wa-throttle | wa-send, 4 calls in flight (each
# answered after a second), 60 requests at 5/s (12 s: far from all
# passed when the first calls are answered, however slow the machine):
# the calls in flight are sent and written, the rest answered unsent,
# each request once.
fake_start --rate 0 --pair-ms 0 --latency-ms 1000
for i in $(seq 1 60); do req "$i"; done >"$T/in"
setsid sh -c '
	{ wa-throttle -r 5 -b 1 <"$1/in" 2>"$1/throttle.err"
	  echo $? >"$1/throttle.rc"; } |
	wa-send -j 4 --timeout-ms 5000 >"$1/out" 2>"$1/send.err"
	echo $? >"$1/send.rc"' sh "$T" &
group=$!
t_pids="$t_pids $group"
ok 'four calls in flight' wait_for 60 seen 4
kill -INT "-$group"
wait "$group"
is "$(cat "$T/throttle.rc") $(cat "$T/send.rc")" '0 0' \
    'Ctrl-C: wa-throttle and wa-send exit 0'
ok 'every request has exactly one result' once "$T/out"
sent=$(wc -l <"$FAKE_LOG")
is "$(jq -r 'select(.result.outcome == "sent") | .id' "$T/out" | sort -n)" \
    "$(jq -r .callback "$FAKE_LOG" | cut -d: -f2 | sort -n)" \
    "the $sent calls made were completed and written as sent"
is "$(jq -r 'select(.result.outcome != "sent") |
    [.result.outcome, .result.class, .result.error.title] | join(" ")' \
    "$T/out" | sort | uniq -c | tr -s ' ')" \
    " $((60 - sent)) retry unsent not sent: wa-send was stopping" \
    "the other $((60 - sent)) were answered retry, unsent, without a call"
like "$(cat "$T/throttle.err")" 'without a token' \
    'wa-throttle passed what was left without tokens'

# The calls in flight end within --timeout-ms: a call that never gets an
# answer ends as unknown after it; the others are answered meanwhile.
fake_start --rate 0 --pair-ms 0 --script 0000301=hang
for i in $(seq 301 310); do req "$i"; done >"$T/in"
mkfifo "$T/fifo"
(cat "$T/in"; wait_for 60 test -e "$T/eof") >"$T/fifo" &
wa-send -j 1 --timeout-ms 1500 <"$T/fifo" >"$T/out" 2>"$T/err" &
pid=$!
t_pids="$t_pids $pid"
wait_for 60 seen 1
kill -TERM "$pid"
unsent() {
	test "$(grep -c '"class":"unsent"' "$T/out")" -ge "$1"
}
ok 'SIGTERM: the lines still coming are answered at once' \
    wait_for 60 unsent 9
touch "$T/eof"
wait "$pid"
is $? 0 '... and it exits 0 at the end of input'
ok 'every request has exactly one result' once "$T/out"
is "$(jq -r 'select(.id == 301) | [.result.outcome, .result.error.curl] |
    join(" ")' "$T/out")" 'unknown 28' \
    'the call in flight ended at --timeout-ms: unknown'
is "$(wc -l <"$FAKE_LOG")" 1 'no other call was made'

# An input that does not end (a stage before was not stopped): it waits 2
# s after its last call, then exits, leaving the rest in the pipe.
rm -f "$T/fifo" "$T/eof"
mkfifo "$T/fifo"
(req 311; wait_for 60 test -e "$T/eof") >"$T/fifo" &
wa-send <"$T/fifo" >"$T/out" 2>"$T/err" &
pid=$!
t_pids="$t_pids $pid"
wait_for 60 seen 2
kill -TERM "$pid"
wait "$pid"
is $? 0 'an input that does not end: exit 0 after the drain'
like "$(cat "$T/err")" 'had not ended 2 s after the last call' '... saying so'
touch "$T/eof"

# A second signal: the calls in flight (hanging) are cut short, answered
# unknown, the others unsent; then wa-send dies by the signal. (1000 goes
# first, alone, the campaign's canary: then three calls go at once.)
fake_start --rate 0 --pair-ms 0 --script 7=hang
for i in 1000 1007 1017 1027 1004 1005 1006; do req "$i"; done >"$T/in"
rm -f "$T/fifo" "$T/eof"
mkfifo "$T/fifo"
(cat "$T/in"; wait_for 60 test -e "$T/eof") >"$T/fifo" &
wa-send -j 3 --timeout-ms 600000 <"$T/fifo" >"$T/out" 2>"$T/err" &
pid=$!
t_pids="$t_pids $pid"
ok 'three calls hang after the canary' wait_for 60 seen 4
kill -INT "$pid"
ok 'the first SIGINT: the rest is answered unsent' wait_for 60 unsent 3
kill -INT "$pid"
wait "$pid"
is $? 130 'the second SIGINT: it dies by it'
touch "$T/eof"
ok 'every request has exactly one result' once "$T/out"
is "$(jq -r 'select(.result.outcome == "unknown") | .id' "$T/out" | sort |
    tr '\n' ' ')" '1007 1017 1027 ' 'the calls cut short are unknown'
like "$(jq -r 'select(.id == 1007) | .result.error.title' "$T/out")" \
    'stopped at once with the call in flight' '... saying why'
like "$(cat "$T/err")" 'stopped at once: 3 calls cut short' \
    'and it says so on stderr'

# Its reader gone while it waits for input with nothing to write: it
# ends (74) rather than waits for ever. Its input stays open (fd 3).
mkfifo "$T/idle"
{ wa-send 2>"$T/err"; echo $? >"$T/rc"; } <"$T/idle" | true &
exec 3>"$T/idle"
ended() { test -s "$T/rc"; }
ok 'its reader gone, idle wa-send ends by itself' wait_for 60 ended
exec 3>&-
is "$(cat "$T/rc")" 74 '... with 74'
like "$(cat "$T/err")" 'write to stdout: the reader has gone' '... saying why'

done_testing
