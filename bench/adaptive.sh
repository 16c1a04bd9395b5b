#!/bin/sh
# bench/adaptive.sh: the adaptive rate against an API limited below the
# throttle: wa-fake-api at --rate 30 (20 ms latency), wa-throttle -r 70,
# wa-send -j 50, N requests (default 2,400: about 85 s). Counts on the
# fake's request log: the first 20 s (the descent from 70/s), then the
# settled part: calls, refused fraction, accepted per second; and the
# cuts and steps wa-send logged.
#
#   sh bench/adaptive.sh [N]
set -eu
cd "$(dirname "$0")/.."
BIN=${WA_BIN:-$PWD/bin}
N=${1:-2400}
[ -x "$BIN/wa-send" ] || make >/dev/null
TMP=$(mktemp -d /tmp/wapipe-bench.XXXXXX)
trap 'kill "$fake" 2>/dev/null; rm -rf "$TMP"' EXIT INT TERM
export WA_STATE_DIR="$TMP/state" WA_TOKEN=bench-token
"$BIN/wa-fake-api" --listen 127.0.0.1:0 --port-file "$TMP/port" \
    --log "$TMP/log" --rate 30 --pair-ms 0 --latency-ms 20 2>"$TMP/ferr" &
fake=$!
while [ ! -s "$TMP/port" ]; do sleep 0.1; done
gv=$("$BIN/wa-send" --version | sed -n 's/^Graph API \(v[0-9.]*\) by default$/\1/p')
WA_API_BASE="http://127.0.0.1:$(cat "$TMP/port")/$gv"
export WA_API_BASE
unset WA_API_VERSION
awk -v n="$N" 'BEGIN { for (i = 1; i <= n; i++)
    printf "{\"id\":%d,\"campaign_id\":1,\"attempt\":1,\"phone_number_id\":" \
    "\"100\",\"to\":\"+1555%07d\",\"template\":{\"name\":\"reminder\"," \
    "\"language\":\"en_US\"}}\n", i, i }' |
    "$BIN/wa-throttle" -r 70 | "$BIN/wa-send" -j 50 >/dev/null 2>"$TMP/err"
jq -r '[.t, .outcome] | @tsv' "$TMP/log" | sort -n | awk '
    NR == 1 { s = $1 }
    $1 - s < 20000 { dn++; da += $2 == "sent" }
    $1 - s >= 20000 { n++; a += $2 == "sent"; f = f ? f : $1; l = $1 }
    END {
	printf "| first 20 s | %d calls | %.1f%% refused | %.2f accepted/s |\n",
	    dn, 100 * (dn - da) / dn, da / 20
	printf "| settled (%.0f s) | %d calls | %.2f%% refused | %.2f accepted/s |\n",
	    (l - f) / 1000, n, 100 * (n - a) / n, a * 1000 / (l - f)
    }'
echo "cuts: $(grep -c 'rate cut' "$TMP/err"), steps up: $(grep -c 'back up' "$TMP/err"), pauses: $(grep -c 'pausing its bucket' "$TMP/err")"
