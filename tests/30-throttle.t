#!/bin/sh
# wa-throttle on one host: lines pass unchanged, one token each, from one
# bucket per number shared by every process; pauses and rates set live.
# Only lower bounds on time: N lines at rate R, burst B take at least
# (N - B) / R seconds.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/throttle.sh"
# fresh: a new state directory, as on a host where no bucket exists yet.
fresh() {
	t_state=$((${t_state:-0} + 1))
	export WA_STATE_DIR="$T/state$t_state"
}

# Bytes: odd spacing, escapes, UTF-8, unknown fields all pass as they are.
cat >"$T/odd" <<'EOF'
{"id":1,"phone_number_id":"106540352242922","to":"+15550000001"}
{ "phone_number_id" : "106540352242922" , "x" : [1, 2.50, {"y":null}] }
{"phone_number_id":"106540352242922","name":"Zo\u00eb \"Z\" \\ é ✓","t":	1}
{"phone_number_id":106540352242922,"to":"+15550000004"}
EOF
wa-throttle -r 1000 <"$T/odd" >"$T/out" 2>"$T/err"
is "$?" 0 'passes lines (exit status)'
ok 'output equals input byte for byte' cmp -s "$T/odd" "$T/out"
gen 300 | sed 's/}$/,"pad":"   "}/' >"$T/many"
wa-throttle -r 100000 -b 1000 --number x1 <"$T/many" >"$T/out"
ok '300 lines, byte for byte, with --number' cmp -s "$T/many" "$T/out"
printf 'not json at all\n{"a":\n' | wa-throttle --number x2 >"$T/out"
is "$(cat "$T/out")" "$(printf 'not json at all\n{"a":')" \
    '--number passes any line unparsed'

# The rate: 60 lines at 40/s, burst 4, take at least 1.4 s.
gen 60 >"$T/in60"
fresh
t0=$(now)
wa-throttle -r 40 -b 4 <"$T/in60" >"$T/out"
t1=$(now)
ok "60 lines at 40/s, burst 4: >= 1.4 s (took $(took "$t0" "$t1"))" \
    at_least "$t0" "$t1" 1.4
ok 'and all of them' cmp -s "$T/in60" "$T/out"

# Two pipelines on one number share its bucket: 80 lines, >= 1.9 s.
fresh
gen 40 >"$T/in40"
t0=$(now)
wa-throttle -r 40 -b 4 <"$T/in40" >"$T/outa" &
pa=$!
wa-throttle -r 40 -b 4 <"$T/in40" >"$T/outb" &
pb=$!
wait "$pa" "$pb"
t1=$(now)
ok "two processes, 2 x 40 lines at 40/s: >= 1.9 s (took $(took "$t0" "$t1"))" \
    at_least "$t0" "$t1" 1.9
is "$(cat "$T/outa" "$T/outb" | wc -l)" 80 'both passed all their lines'

# One more pipeline started mid-way must not refill the bucket. A new
# bucket starts empty, so 100 lines take at least 99/40 s; a refill would
# give the second process its burst of 20 at once, 0.5 s less.
fresh
# (Emptied first: the count below must not see the last run's lines.)
: >"$T/outa"
t0=$(now)
wa-throttle -r 40 -b 20 <"$T/in60" >"$T/outa" &
pa=$!
ok "the first process passes 30 lines" wait_for 30 count "$T/outa" 30
wa-throttle -r 40 -b 20 <"$T/in40" >"$T/outb" 2>"$T/err"
wait "$pa"
t1=$(now)
ok "100 lines at 40/s from an empty bucket, second process mid-way: >= 2.475 s (took $(took "$t0" "$t1"))" \
    at_least "$t0" "$t1" 2.475

# A pause: nothing before its end, nothing accumulated during it. 21
# lines at 40/s with burst 20 after an 800 ms pause: >= 0.8 + 20/40 s.
fresh
gen 21 >"$T/in21"
wa-throttle -r 40 -b 20 --number "$NUM" </dev/null
t0=$(now)
exits 0 'pause, command form' wa-throttle --pause 800 --number "$NUM"
wa-throttle <"$T/in21" >"$T/out"
t1=$(now)
ok "21 lines after an 800 ms pause: >= 1.3 s (took $(took "$t0" "$t1"))" \
    at_least "$t0" "$t1" 1.3
is "$(wc -l <"$T/out")" 21 'all passed after the pause'

# Across a pause while running: 40 lines at 40/s, burst 4, paused 1 s
# mid-way: >= 1 + 36/40 s.
fresh
: >"$T/out"
t0=$(now)
wa-throttle -r 40 -b 4 --metrics "$T/metrics" <"$T/in40" >"$T/out" &
pa=$!
ok "10 lines pass before the pause" wait_for 30 count "$T/out" 10
wa-throttle --pause 1000 --number "$NUM"
wait "$pa"
t1=$(now)
ok "40 lines with a 1 s pause mid-way: >= 1.9 s (took $(took "$t0" "$t1"))" \
    at_least "$t0" "$t1" 1.9
m=$(unlabel "$T/metrics")
like "$m" "^wa_throttle_lines_total\\{number=\"$NUM\"\\} 40$" 'metrics: lines'
like "$m" "^wa_throttle_pauses_total\\{number=\"$NUM\"\\} 1$" 'metrics: pauses'
waited=$(printf '%s\n' "$m" | awk '/^wa_throttle_wait_seconds_total/ { print $2 }')
ok "metrics: seconds waited, the pause included ($waited)" \
    awk -v w="${waited:-0}" 'BEGIN { exit !(w >= 1) }'
like "$m" "^wa_throttle_rate\\{number=\"$NUM\"\\} 40$" 'metrics: rate'

# The rate changed live reaches every process: two at 100/s, then 20/s.
fresh
gen 30 >"$T/in30"
: >"$T/outa"
wa-throttle -r 100 -b 1 <"$T/in30" >"$T/outa" 2>"$T/erra" &
pa=$!
wa-throttle -r 100 -b 1 <"$T/in30" >"$T/outb" &
pb=$!
ok "8 lines pass at 100/s" wait_for 30 count "$T/outa" 8
wa-throttle --set-rate 20 -b 1 --number "$NUM"
t0=$(now)
done0=$(cat "$T/outa" "$T/outb" | wc -l)
kill -USR1 "$pa"
wait "$pa" "$pb"
t1=$(now)
left=$((60 - done0))
ok "rate set to 20/s with $left lines left: >= $(((left - 2) / 20)) s (took $(took "$t0" "$t1"))" \
    at_least "$t0" "$t1" "$(awk -v l="$left" 'BEGIN { print (l - 2) / 20 }')"
like "$(cat "$T/erra")" "^wa-throttle: $NUM: [0-9]+ lines passed, [0-9.]+ s waiting, 0 pauses, rate 20/s, burst 1$" \
    'SIGUSR1 prints the counters and the rate in force'

# An existing bucket keeps its rate; -r says so.
wa-throttle -r 500 </dev/null 2>/dev/null
gen 1 | wa-throttle -r 500 >/dev/null 2>"$T/err"
like "$(cat "$T/err")" 'runs at 20/s, burst 1: -r and -b only make a new bucket' \
    '-r on an existing bucket warns and leaves it'

# A wait lasts a few ms past its token, so that at 1,000/s, burst 10,
# a wake-up passes several lines (one a line before): counted as the
# times it gave up the CPU, which a loaded machine only makes fewer.
gen 300 >"$T/in300"
fresh
t0=$(now)
/usr/bin/time -o "$T/ctx" -f %w wa-throttle -r 1000 -b 10 <"$T/in300" \
    >"$T/out"
t1=$(now)
n=$(tail -1 "$T/ctx")
ok "300 lines at 1,000/s, burst 10: fewer than 100 waits ($n)" \
    test "$n" -lt 100
ok "... still >= 0.29 s (took $(took "$t0" "$t1"))" at_least "$t0" "$t1" 0.29
ok '... and all of them, in order' cmp -s "$T/in300" "$T/out"

# The process holds one line: the rest stay in its input pipe. Stopped,
# it takes no more tokens: the line it holds and the others go on at once
# (wa-send, stopping too, answers them unsent), paused or not, until the
# end of input.
fresh
mkfifo "$T/fifo"
exec 3<>"$T/fifo"
gen 10 >&3
wa-throttle --pause 3600000 --create --number "$NUM"
wa-throttle --metrics "$T/m" <"$T/fifo" >"$T/out" 2>"$T/err" 3>&- &
pa=$!
cpu() { awk '{ print $14 + $15 }' "/proc/$pa/stat"; }
wakes() { awk '/^voluntary_ctxt_switches/ { print $2 }' "/proc/$pa/status"; }
held() {
	kill -USR2 "$pa"
	unlabel "$T/m" | grep -q "^wa_throttle_pauses_total{number=\"$NUM\"} 1$"
}
wait_for 30 catches "$pa" USR2
ok 'the paused number holds its first line' wait_for 30 held
# It looks at the bucket every 100 ms or so (a rate set live is seen
# soon); each look must be cheap.
c0=$(cpu)
w0=$(wakes)
woke() { [ "$(wakes)" -ge $((w0 + 10)) ]; }
wait_for 60 woke
c1=$(cpu)
ok "waiting costs no CPU ($((c1 - c0)) ticks in $(($(wakes) - w0)) wake-ups)" \
    test $((c1 - c0)) -le 5
is "$(wc -c <"$T/out")" 0 'a paused number passes nothing'
wait_for 30 catches "$pa" TERM
kill "$pa"
ok 'on SIGTERM the lines go on, the hour-long pause notwithstanding' \
    wait_for 600 count "$T/out" 10
is "$(cat "$T/out")" "$(gen 10)" '... all ten, in order'
exec 3>&-
exits 0 'then exits 0 at the end of input' wait "$pa"
like "$(cat "$T/err")" 'stopping: the lines left go on without a token' \
    'says so'

# The input does not end (a stage before it was not stopped): it waits 2
# s for the end, then leaves the rest in the pipe.
fresh
wa-throttle --pause 3600000 --create --number "$NUM"
mkfifo "$T/fifo2"
exec 3<>"$T/fifo2"
gen 3 >&3
wa-throttle <"$T/fifo2" >"$T/out" 2>"$T/err" 3>&- &
pa=$!
wait_for 30 catches "$pa" TERM
kill "$pa"
exits 0 'an input that does not end: exits 0 after the drain' wait "$pa"
like "$(cat "$T/err")" 'had not ended 2 s after the stop' '... saying so'
is "$(cat "$T/out")" "$(gen 3)" '... having passed on what came'
exec 3>&-

# Bad lines: reported with their number, rejected, exit 65.
fresh
printf '%s\n' '{"id":1}' "$(gen 1)" 'oops' '{"phone_number_id":"a b"}' |
    wa-throttle --reject "$T/rej" >"$T/out" 2>"$T/err"
is "$?" 65 'lines without a number: exit 65'
is "$(cat "$T/out")" "$(gen 1)" 'only the good line passes'
like "$(cat "$T/err")" '^wa-throttle: <stdin>:1: no phone_number_id$' \
    'the line number is reported'
like "$(cat "$T/err")" '^wa-throttle: <stdin>:3: ' 'a line that is not JSON'
like "$(cat "$T/err")" "^wa-throttle: <stdin>:4: phone_number_id 'a b' is not" \
    'an id that is not one'
is "$(cat "$T/rej")" "$(printf '%s\n' '{"id":1}' oops \
    '{"phone_number_id":"a b"}')" 'written to --reject'

# Usage.
for r in 0 -5 abc 1e99 ''; do
	exits 64 "rate '$r' is a usage error" wa-throttle -r "$r" </dev/null \
	    2>/dev/null
done
exits 64 '--set-rate 0' wa-throttle --set-rate 0 --number "$NUM" 2>/dev/null
exits 64 '--pause needs --number' wa-throttle --pause 10 2>/dev/null
# A mistyped number: the pause would hold nothing, so it is refused
# unless --create says to make the bucket.
wa-throttle --pause 60000 --number 999000111 2>"$T/err"
is "$?" 64 "--pause of a number with no bucket: 64"
like "$(cat "$T/err")" "number 999000111 has no bucket on this host" \
    "... and says so"
ok "... and makes none" test ! -e "$WA_STATE_DIR/bucket-999000111"
exits 0 "--pause --create makes it paused" \
    wa-throttle --pause 60000 --create --number 999000111 2>/dev/null
like "$(wa-throttle --show --number 999000111 | tail -1)" \
    '^999000111 .* 20[0-9-]+T[0-9:]+Z ' "... paused"
exits 64 'a bad --number' wa-throttle --number 'a/b' </dev/null 2>/dev/null
ok '--help' sh -c 'wa-throttle --help | grep -q "^usage: wa-throttle"'
like "$(wa-throttle --version)" '^wa-throttle \(wapipe\) ' '--version'
done_testing
