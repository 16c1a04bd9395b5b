#!/bin/sh
# wa-throttle --cluster --set-rate, --set-reserve, --pause with Postgres
# away: they wait for it with the program's patience (--pg-timeout), as
# the filter does, then exit 69 saying what was not changed.
. "$(dirname "$0")/lib.sh"
pg_start

n=106540352242922
wa-throttle --cluster --set-rate 5 --number $n --create 2>/dev/null
is "$?" 0 "a bucket in the cluster"
rate() {
	sql "select rate from throttle_buckets where phone_number_id = '$n'"
}

# The change meets a read-only server (a standby, as in a failover): it
# waits, and is made once the standby is promoted.
pg_standby
for mode in "--set-rate 9" "--set-reserve 10" "--pause 60000"; do
	: >"$T/err"
	# shellcheck disable=SC2086
	bg sh -c 'exec wa-throttle --cluster -d "host=$0/pg2" $1 --number $2 \
	    2>"$0/err"' "$T" "$mode" "$n"
	pid=$!
	ok "$mode on a standby: waits for a primary" wait_for 30 grep -q \
	    'postgres unavailable .*waiting up to 300 s' "$T/err"
	[ "$mode" = "--pause 60000" ] && break
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
done
pg_failover
wait "$pid"
is "$?" 0 "the standby promoted, the change is made: exits 0"
like "$(cat "$T/err")" "bucket paused 60000 ms" "and says so"
ok "the pause is in the row" test "$(sql "select paused_until > now()
    from throttle_buckets where phone_number_id = '$n'")" = t

# Postgres down for good: each gives up past --pg-timeout, exits 69, and
# says what it did not change.
pg_stop
for mode in "--set-rate 9" "--set-reserve 10" "--pause 1000"; do
	# shellcheck disable=SC2086
	wa-throttle --cluster --pg-timeout 1 $mode --number $n 2>"$T/err"
	is "$?" 69 "$mode with Postgres down: exits 69 past --pg-timeout"
	like "$(cat "$T/err")" "giving up" "... having waited"
	like "$(cat "$T/err")" \
	    "number $n: nothing changed: postgres could not be reached within --pg-timeout \\(1 s\\)" \
	    "... and says nothing was changed"
done
wa-throttle --cluster --pg-timeout 1 --show >/dev/null 2>"$T/err"
is "$?" 69 "--show with Postgres down: exits 69"
like "$(cat "$T/err")" "no bucket shown: postgres could not be reached" \
    "... saying why"
pg_resume

done_testing
