# shellcheck shell=sh
# tests/throttle.sh: sourced after tests/lib.sh by the wa-throttle tests.
NUM=106540352242922

# gen N [ID]: N send requests for number ID.
gen() {
	awk -v n="$1" -v id="${2:-$NUM}" 'BEGIN { for (i = 1; i <= n; i++)
	    printf "{\"id\":%d,\"phone_number_id\":\"%s\",\"to\":\"+1555%07d\"}\n",
	    i, id, i }'
}
now() { date +%s.%N; }
# at_least A B C: passes when B - A >= C.
at_least() {
	awk -v a="$1" -v b="$2" -v c="$3" 'BEGIN { exit !(b - a >= c) }'
}
took() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
count() { [ "$(wc -l <"$1")" -ge "$2" ]; }
