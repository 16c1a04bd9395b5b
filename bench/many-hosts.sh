#!/bin/sh
# bench/many-hosts.sh [HOSTS...]: pipelines on several hosts, one
# campaign, one number. For each count of hosts (default 1 2 4), that
# many wa-claim | wa-throttle --cluster | wa-send | wa-record pipelines,
# each with a WA_STATE_DIR of its own, send ROWS recipients (default
# 6000) at RATE/s (default 500, burst 10) against wa-fake-api. Prints the
# combined rate the API saw past the first burst, its ratio to RATE, the
# rows each host sent, rows claimed twice (must be 0) and recipients the
# API accepted twice (must be 0). Postgres with its default durability.
ROWS=${ROWS:-6000}
RATE=${RATE:-500}
BURST=10
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

host() {
	mkdir -p "$T/host-$1"
	WA_STATE_DIR=$T/host-$1 wa-claim -c "$c" 2>>"$T/err" |
	    WA_STATE_DIR=$T/host-$1 wa-throttle --cluster -r "$RATE" \
	    -b "$BURST" 2>>"$T/err" |
	    wa-send -j 32 2>>"$T/err" |
	    wa-record >"$T/out.$1" 2>>"$T/err"
}

printf '%-5s %8s %8s %7s %-24s %8s %8s\n' hosts rows rate ratio \
    per_host claimed2 twice
[ $# -gt 0 ] || set -- 1 2 4
for n in "$@"; do
	pg_start
	fake_start --rate 0
	c=$(campaign "$ROWS")
	pids=
	i=0
	while [ "$i" -lt "$n" ]; do
		i=$((i + 1))
		host "$i" &
		pids="$pids $!"
	done
	# shellcheck disable=SC2086
	wait $pids
	rate=$(apirate "$FAKE_LOG" "$BURST" 1)
	per=$(for f in "$T"/out.*; do wc -l <"$f"; done | paste -sd/ -)
	dup=$(cat "$T"/out.* | jq -r .id | sort | uniq -d | wc -l)
	twice=$(accepted_twice "$FAKE_LOG")
	printf '%-5s %8s %8s %7s %-24s %8s %8s\n' "$n" "$ROWS" "$rate" \
	    "$(awk -v r="$rate" -v R="$RATE" 'BEGIN { printf "%.4f", r / R }')" \
	    "$per" "$dup" "$twice"
	kill "$FAKE_PID"; wait "$FAKE_PID"
	pgtmp_stop
	rm -rf "$T/pg" "$T"/out.* "$FAKE_LOG"
done
