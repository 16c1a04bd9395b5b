#!/bin/sh
# bench/send.sh [REQUESTS [SECONDS]]: wa-send against wa-fake-api, twice.
#
# 1. No latency: wa-send -j 64 over REQUESTS requests (default 50,000),
#    beside wrk POSTing the same body over 64 connections for 5 s, and
#    curl --parallel-max 64 POSTing it REQUESTS times, to the same server,
#    three rounds taking turns. Prints the median requests/s of each and
#    the ratios; over plain HTTP/1.1, then over HTTPS (nginx in front,
#    tests/tls.sh; wrk over HTTP/1.1, curl and wa-send over HTTP/2).
# 2. 250 ms latency: requests fed at 1,000 lines/s by wa-throttle -r 1000
#    for SECONDS (default 12) into wa-send with its default -j (300). Prints the rate achieved, calls in
#    flight (most, and average by Little's law), CPU per message and the
#    share of one core, and max RSS; over plain HTTP/1.1, then over HTTPS
#    (nginx in front, tests/tls.sh) with HTTP/2, then with HTTP/1.1 only.
REQUESTS=${1:-50000}
SECONDS_AT_RATE=${2:-12}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
for p in wrk jq; do
	command -v "$p" >/dev/null || bail "no $p: run make deps"
done

# requests N: N send requests, each to its own recipient.
requests() {
	awk -v n="$1" 'BEGIN { for (i = 1; i <= n; i++)
		printf "{\"id\":%d,\"campaign_id\":1,\"attempt\":1,\"phone_number_id\":\"106540352242922\",\"to\":\"+1555%07d\",\"template\":{\"name\":\"reminder\",\"language\":\"en_US\",\"params\":[\"Ana\",\"12 Dec\"]}}\n", i, i }'
}
# metric NAME: a value from wa-send's --metrics file.
metric() {
	awk -v n="$1" '{ k = $1; sub(/\{.*/, "", k) } k == n { print $2 }' "$T/metrics"
}

WA_TOKEN=bench-token-$$
export WA_TOKEN

# shellcheck source=tests/tls.sh
. "$TOP/tests/tls.sh"

# 1. No latency, over plain HTTP/1.1 and then over HTTPS (nginx before
# the same fake; wrk speaks HTTP/1.1 only, curl and wa-send HTTP/2).
fake_start --rate 0 --pair-ms 0 --threads 2
requests 1 | wa-send --dry-run | jq -c .dry_run.body >"$T/body"
cat >"$T/post.lua" <<EOF
wrk.method = "POST"
wrk.body = io.open("$T/body"):read("l")
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("WA_TOKEN")
EOF
requests "$REQUESTS" >"$T/in"
for how in "plain HTTP/1.1" HTTPS; do
[ "$how" = HTTPS ] && tls_front 'keepalive_requests 10000000;'
# curl --parallel: the same libcurl, no NDJSON; options in a file.
{
	echo 'header = "Content-Type: application/json"'
	echo "header = \"Authorization: Bearer $WA_TOKEN\""
	echo "data = \"@$T/body\""
	[ "$how" = HTTPS ] && echo "cacert = \"$WA_CA_FILE\""
	printf 'parallel\nparallel-max = 64\nno-progress-meter\n'
	awk -v u="$WA_API_BASE/106540352242922/messages" -v n="$REQUESTS" \
	    'BEGIN { for (i = 0; i < n; i++) printf "url = \"%s\"\n", u }'
} >"$T/curl.cfg"
rm -f "$T/r_curl" "$T/r_wrk" "$T/r_send"
# Three rounds each, taking turns, so that a busy moment on the machine
# hurts all; the medians are printed.
for round in 1 2 3; do
	s=$(now)
	curl -K "$T/curl.cfg" >/dev/null || bail "curl --parallel failed"
	echo "$REQUESTS $(secs "$s")" | awk '{ printf "%.0f\n", $1 / $2 }' \
	    >>"$T/r_curl"
	wrk -t 2 -c 64 -d 5s -s "$T/post.lua" \
	    "$WA_API_BASE/106540352242922/messages" >"$T/wrk" 2>&1 ||
	    bail "wrk failed: $(cat "$T/wrk")"
	awk '/^Requests\/sec:/ { printf "%.0f\n", $2 }' "$T/wrk" >>"$T/r_wrk"
	s=$(now)
	# A pipe, as in the pipeline (a file would be read another way).
	# shellcheck disable=SC2002
	cat "$T/in" | /usr/bin/time -f '%U %S %M' -o "$T/time.$round" \
	    wa-send -j 64 >"$T/out"
	t=$(secs "$s")
	sent=$(jq -r .result.outcome "$T/out" | grep -c '^sent$')
	[ "$sent" = "$REQUESTS" ] || bail "sent $sent of $REQUESTS"
	echo "$REQUESTS $t $round" | awk '{ printf "%.0f %s %s\n", $1 / $2, $2, $3 }' \
	    >>"$T/r_send"
done
r_wrk=$(sort -n "$T/r_wrk" | sed -n 2p)
r_curl=$(sort -n "$T/r_curl" | sed -n 2p)
read -r r_send t round <<EOF
$(sort -n "$T/r_send" | sed -n 2p)
EOF
read -r u sy rss <"$T/time.$round"
echo "no latency, $how: $REQUESTS requests, 64 at once," \
    "wa-fake-api --threads 2; load $(cut -d' ' -f1 /proc/loadavg)"
echo "  wrk -t 2 -c 64 (5 s)    $r_wrk req/s  (median of $(tr '\n' ' ' <"$T/r_wrk"| sed 's/ $//'))"
echo "  curl --parallel-max 64  $r_curl req/s  (median of $(tr '\n' ' ' <"$T/r_curl"| sed 's/ $//'))"
echo "  wa-send -j 64           $r_send req/s  (median of $(cut -d' ' -f1 "$T/r_send" | tr '\n' ' ' | sed 's/ $//'))"
echo "                          that run: $t s, CPU $u user + $sy sys s = $(echo "$u $sy $REQUESTS" | awk '{ printf "%.1f", 1e6 * ($1 + $2) / $3 }') us/msg, max RSS $rss KiB"
echo "  ratio                   $(pct "$r_send" "$r_wrk") of wrk, $(pct "$r_send" "$r_curl") of curl --parallel"
done
kill "$TLS_PID"
wait "$TLS_PID"
fake_stop

# 2. 1,000 msg/s at 250 ms: plain HTTP/1.1, then over HTTPS with HTTP/2
# and with HTTP/1.1 only (nginx before the fake, tests/tls.sh).
fake_start --rate 0 --pair-ms 0 --latency-ms 250 --threads 2
n=$((SECONDS_AT_RATE * 1000))
requests "$n" >"$T/in"
plain_base=$WA_API_BASE
for how in "plain HTTP/1.1" "HTTPS, HTTP/2" "HTTPS, HTTP/1.1"; do
case $how in
plain*)	WA_API_BASE=$plain_base ;;
*2)	tls_front 'keepalive_requests 10000000;' ;;
*)	kill "$TLS_PID"; wait "$TLS_PID"
	TLS_LISTEN=ssl tls_front 'keepalive_requests 10000000;' ;;
esac
s=$(now)
wa-throttle -r 1000 <"$T/in" | /usr/bin/time -f '%U %S %M' -o "$T/time" \
    wa-send --metrics "$T/metrics" >"$T/out"
t=$(secs "$s")
sent=$(jq -r .result.outcome "$T/out" | grep -c '^sent$')
[ "$sent" = "$n" ] || bail "sent $sent of $n"
read -r u sy rss <"$T/time"
echo "250 ms latency, $how: $n requests fed at 1,000 lines/s" \
    "(wa-throttle -r 1000); load $(cut -d' ' -f1 /proc/loadavg)"
echo "  achieved                $(rate "$n" "$t") msg/s over $t s"
echo "  latency                 $(echo "$(metric wa_send_latency_seconds_sum) $n" | awk '{ printf "%.0f", 1000 * $1 / $2 }') ms mean"
echo "  in flight               max $(metric wa_send_in_flight_max), mean $(echo "$(metric wa_send_latency_seconds_sum) $t" | awk '{ printf "%.0f", $1 / $2 }')"
echo "  CPU                     $u user + $sy sys s = $(echo "$u $sy $n" | awk '{ printf "%.1f", 1e6 * ($1 + $2) / $3 }') us/msg, $(echo "$u $sy $t" | awk '{ printf "%.1f%%", 100 * ($1 + $2) / $3 }') of a core"
echo "  max RSS                 $rss KiB"
done
fake_stop
