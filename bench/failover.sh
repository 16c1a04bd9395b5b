#!/bin/sh
# bench/failover.sh [TRIALS] [ROWS]: what a failover to an asynchronous
# standby costs. Each trial runs wa-claim | wa-throttle | wa-send |
# wa-record over ROWS recipients (default 3000) against wa-fake-api, on a
# primary with a streaming standby (Postgres's default durability,
# replication asynchronous unless SYNC=1), kills the primary once a third
# is sent, promotes the standby, lets the pipeline finish, runs
# wa-reconcile and the pipeline again. Prints, per trial, the standby's
# lag when the primary died (PARTITION=SECS first cuts the standby off
# for that long: its WAL receiver stopped, as by a network fault), the
# rows whose claim or result the failover
# lost (found sending with a result or request the API saw), and the
# recipients the API accepted twice.
TRIALS=${1:-3}
ROWS=${2:-3000}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

pipeline() {
	{
		wa-claim -d "$PG_BOTH" -c "$1" 2>>"$T/claim.err"
	} | wa-throttle -r 2000 | wa-send -j 64 --timeout-ms 1500 \
	    2>>"$T/send.err" |
	    wa-record -d "$PG_BOTH" -n 50 --flush-ms 20 --backoff-base 100 \
	    --backoff-cap 400 >/dev/null 2>>"$T/record.err"
}

printf '%-6s %-5s %-9s %12s %10s %12s\n' trial sync partition lag_bytes \
    lost twice
i=0
while [ "$i" -lt "$TRIALS" ]; do
	i=$((i + 1))
	pg_start
	if [ "${SYNC:-0}" = 1 ]; then pg_standby sync; else pg_standby; fi
	fake_start --rate 0 --latency-ms 5
	c=$(campaign "$ROWS")
	pipeline "$c" &
	run=$!
	third() {
		test "$(sql "select count(*) from campaign_recipients
		    where campaign_id = $c and status = 'sent'")" \
		    -ge $((ROWS / 3))
	}
	wait_for 300 third || bail "nothing sent"
	rx=$(pgrep -P "$(head -1 "$T/pg2/data/postmaster.pid")" -f walreceiver)
	if [ -n "${PARTITION:-}" ] && [ -n "$rx" ]; then
		kill -STOP "$rx"
		sleep "$PARTITION"
	fi
	lag=$(sql "select pg_current_wal_lsn() - flush_lsn
	    from pg_stat_replication")
	pgtmp_stop
	[ -n "${PARTITION:-}" ] && [ -n "$rx" ] && kill -KILL "$rx"
	pg_failover
	# Let the pipeline run dry, then stop it and settle what is left.
	quiet() {
		n1=$(jq -s length "$FAKE_LOG")
		sleep 3
		test "$(jq -s length "$FAKE_LOG")" = "$n1"
	}
	wait_for 300 quiet
	pkill -TERM -P "$run" -x wa-claim
	wait "$run"
	lost=$(sql "select count(*) from campaign_recipients
	    where campaign_id = $c and status = 'sending'")
	wa-reconcile -d "$PG_BOTH" -c "$c" --stale-after 0 \
	    --unknown-after 0 >/dev/null
	pipeline "$c"
	twice=$(accepted_twice "$FAKE_LOG")
	printf '%-6s %-5s %-9s %12s %10s %12s\n' "$i" "${SYNC:-0}" \
	    "${PARTITION:-0}" "$lag" "$lost" "$twice"
	kill "$FAKE_PID"
	wait "$FAKE_PID" 2>/dev/null
	pg_stop
	pgtmp_stop_standby
	rm -rf "$T/pg" "$T/pg2" "$T/state" "$T"/*.err
done
