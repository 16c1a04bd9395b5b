#!/bin/sh
# wa-throttle --cluster: one bucket per number shared by every host through
# Postgres. Two "hosts" are two state directories against one Postgres.
# Lower bounds only: with leases of L tokens, N lines at rate R, burst B
# take at least (N - B - L) / R seconds, whoever sends them.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/throttle.sh"
# $T/stamp: each line with the time it arrived in front.
cat >"$T/stamp" <<'EOF'
#!/usr/bin/perl -n
use Time::HiRes qw(time);
$| = 1;
printf "%.6f %s", time, $_;
EOF
chmod +x "$T/stamp"
# host NAME COMMAND...: runs COMMAND as on host NAME.
host() {
	t_h=$1
	shift
	WA_STATE_DIR="$T/host-$t_h" "$@"
}

pg_start

# drained: every token leased so far is due, so no host holds one for
# later and the bucket has had time to fill to its burst.
drained() {
	[ "$(sql "select bool_and(tat <= clock_timestamp())
	    from throttle_buckets")" = t ]
}

# Two hosts, one number: 2 x 40 lines at 40/s, burst 4, leases of 4.
gen 40 >"$T/in40"
t0=$(now)
host a wa-throttle --cluster -r 40 -b 4 <"$T/in40" >"$T/outa" &
pa=$!
host b wa-throttle --cluster -r 40 -b 4 <"$T/in40" >"$T/outb" &
pb=$!
wait "$pa"
is "$?" 0 'host a passed its lines (exit status)'
wait "$pb"
t1=$(now)
ok "two hosts, 80 lines at 40/s: >= 1.8 s (took $(took "$t0" "$t1"))" \
    at_least "$t0" "$t1" 1.8
ok 'output equals input on both' sh -c \
    "cmp -s '$T/in40' '$T/outa' && cmp -s '$T/in40' '$T/outb'"
is "$(sql "select rate, burst from throttle_buckets
    where phone_number_id = '$NUM'")" '40|4' 'the row was made with -r, -b'
leases=$(sql "select leases from throttle_buckets")
ok "leases in blocks: $leases updates for 80 lines" test "$leases" -le 40

# The rate set for the cluster applies to every host.
exits 0 '--set-rate --cluster' wa-throttle --cluster --set-rate 20 -b 2 \
    --number "$NUM"
is "$(sql "select rate, burst from throttle_buckets")" '20|2' 'row updated'
gen 22 >"$T/in22"
t0=$(now)
host a wa-throttle --cluster -r 500 <"$T/in22" >/dev/null
t1=$(now)
ok "22 lines at the cluster's 20/s: >= 0.9 s (took $(took "$t0" "$t1"))" \
    at_least "$t0" "$t1" 0.9

# A pause for the cluster: nothing before its end, no accumulation.
gen 5 >"$T/in5"
wait_for 30 drained
t0=$(now)
exits 0 '--pause --cluster' wa-throttle --cluster --pause 800 --number "$NUM"
host b wa-throttle --cluster <"$T/in5" >/dev/null
t1=$(now)
ok "5 lines after an 800 ms pause at 20/s: >= 1.0 s (took $(took "$t0" "$t1"))" \
    at_least "$t0" "$t1" 1.0

# A pause made on host a (as wa-send makes it, without --cluster) holds
# host b as well, through the row.
mkfifo "$T/fa" "$T/fb"
exec 3<>"$T/fa" 4<>"$T/fb"
# Emptied here: the counts below must not see the first test's lines.
: >"$T/outa"
: >"$T/outb"
# (No reader may hold a FIFO open for writing, or it never ends.)
bg sh -c 'exec 3>&- 4>&-; WA_STATE_DIR=$0/host-a wa-throttle --cluster \
    <"$0/fa" | "$0/stamp" >"$0/outa"' "$T"
pa=$!
bg sh -c 'exec 3>&- 4>&-; WA_STATE_DIR=$0/host-b wa-throttle --cluster \
    <"$0/fb" | "$0/stamp" >"$0/outb"' "$T"
pb=$!
gen 1 >&3
gen 1 >&4
wait_for 30 count "$T/outa" 1
wait_for 30 count "$T/outb" 1
# The lines just passed leased a token or two more: wait them out, so
# that host b must ask the row for its next one.
wait_for 30 drained
t0=$(now)
host a wa-throttle --pause 1500 --number "$NUM"
gen 1 >&3
paused() {
	[ "$(sql "select paused_until > clock_timestamp()
	    from throttle_buckets")" = t ]
}
wait_for 30 paused
ok 'the local pause reached the row' test $? = 0
gen 3 >&4
wait_for 30 count "$T/outb" 4
first=$(sed -n 2p "$T/outb" | cut -d' ' -f1)
ok "host b held by host a's pause: first line after $(took "$t0" "$first") s >= 1.5" \
    at_least "$t0" "$first" 1.5
exec 3>&- 4>&-
wait "$pa" "$pb"

# Postgres down: no line passes (fail closed); back: they pass.
exec 3<>"$T/fa"
: >"$T/out"
bg sh -c 'exec 3>&-; WA_STATE_DIR=$0/host-a wa-throttle --cluster \
    <"$0/fa" >"$0/out" 2>"$0/err"' "$T"
pa=$!
gen 1 >&3
wait_for 30 count "$T/out" 1
wait_for 30 drained
pg_stop
gen 3 >&3
ok 'Postgres down: says why' wait_for 30 grep -q \
    'postgres unavailable .*: waiting up to 300 s for it' "$T/err"
is "$(wc -l <"$T/out")" 1 '... and no line passes'
# (Not in a subshell: the cleanup must know the server is up again.)
pg_resume 3>&-
wait_for 30 count "$T/out" 4
is "$(wc -l <"$T/out")" 4 'Postgres back: the lines pass'
like "$(cat "$T/err")" 'postgres is back after' 'says so'
exec 3>&-
wait "$pa"
is "$?" 0 'exits 0 at the end of input'

# Never reachable: nothing passes, and the exit status says so. Stopped,
# it takes no tokens: the lines go on, for wa-send (stopping too) to
# answer unsent. (The files emptied first: the last test's would do for
# the grep.)
: >"$T/out"
: >"$T/err"
gen 2 | wa-throttle --cluster -d "host=$T/nowhere" >"$T/out" 2>"$T/err" &
pa=$!
wait_for 30 grep -q 'postgres unavailable' "$T/err"
is "$(wc -c <"$T/out")" 0 'Postgres never reachable: nothing passes'
wait_for 30 catches "$pa" TERM
kill "$pa"
wait "$pa"
is "$?" 69 'stopped while Postgres is unreachable: exit 69'
is "$(cat "$T/out")" "$(gen 2)" '... passing the lines on without tokens'

# Unreachable past --pg-timeout: it gives up by itself, exit 69.
gen 2 | wa-throttle --cluster -d "host=$T/nowhere" --pg-timeout 1 \
    >"$T/out" 2>"$T/err"
is "$?" 69 'Postgres away past --pg-timeout: exit 69'
like "$(cat "$T/err")" 'giving up' 'saying so'
done_testing
