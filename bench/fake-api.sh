#!/bin/sh
# bench/fake-api.sh: requests per second of wa-fake-api, measured by wrk
# with a valid template send (bench/fake-api.lua): with no latency, then
# at --latency-ms 250 with 300 connections (wa-send keeps ~250 in flight
# at 1,000 msg/s, so the fake must hold 300 at once without a thread
# each: 300 / 0.25 s = 1,200 req/s at best). Prints wrk's figures and the
# fake's max RSS. Usage: bench/fake-api.sh [SECONDS]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${WA_BIN:-$top/bin}
secs=${1:-5}
tmp=$(mktemp -d /tmp/wapipe-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
WA_TOKEN=bench-token
export WA_TOKEN

# run LABEL WRK-OPTIONS -- FAKE-OPTIONS: one measurement.
run() {
	label=$1
	wrkopts=$2
	shift 3
	rm -f "$tmp/port"
	/usr/bin/time -f %M -o "$tmp/rss" "$bin/wa-fake-api" \
	    --listen 127.0.0.1:0 --port-file "$tmp/port" --rate 0 \
	    --pair-ms 0 "$@" 2>"$tmp/err" &
	pid=$!
	n=0
	until [ -s "$tmp/port" ]; do
		n=$((n + 1))
		[ "$n" -lt 100 ] || { cat "$tmp/err" >&2; exit 1; }
		sleep 0.05
	done
	echo "== $label: wa-fake-api $*; wrk $wrkopts -d${secs}s"
	# shellcheck disable=SC2086
	wrk $wrkopts -d"${secs}s" --latency -s "$top/bench/fake-api.lua" \
	    "http://127.0.0.1:$(cat "$tmp/port")" |
	    grep -E 'Requests/sec|Latency  |50%|99%|Non-2xx|Socket errors|requests in'
	# $pid is time(1)'s; the fake is its child.
	kill -TERM "$(pgrep -P "$pid")"
	wait "$pid" || true
	echo "max RSS of wa-fake-api: $(cat "$tmp/rss") KiB"
}

run 'no latency, 1 thread' '-t2 -c50' -- --threads 1
run 'no latency, 2 threads' '-t2 -c50' -- --threads 2
run 'no latency, with --log' '-t2 -c50' -- --log "$tmp/log"
run 'latency 250 ms, 300 connections' '-t2 -c300' -- --latency-ms 250
run 'latency 250+-50 ms, 300 connections, --log' '-t2 -c300' -- \
    --latency-ms 250 --jitter-ms 50 --log "$tmp/log2"
