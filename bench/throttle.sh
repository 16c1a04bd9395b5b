#!/bin/sh
# bench/throttle.sh: wa-throttle against `pv -qlL` (what an operator would
# otherwise reach for), side by side in one run, at 80, 1,000 and 10,000
# lines/s. Each run lasts 11 s: a reader stamps every line as it arrives,
# the first second is warm-up, the achieved rate is measured over the
# other 10. Prints a Markdown table: achieved rate and its error, the
# most lines released in any 1 s window (wa-throttle's burst is 100 ms
# worth, so rate + burst is 1.1 x rate), CPU time per line (user + system,
# /usr/bin/time) and max RSS.
#
#   sh bench/throttle.sh [SECONDS]
set -eu
cd "$(dirname "$0")/.."
BIN=${WA_BIN:-$PWD/bin}
DUR=${1:-11}
[ -x "$BIN/wa-throttle" ] || make >/dev/null
command -v pv >/dev/null || { echo "throttle.sh: no pv: make deps" >&2; exit 1; }

# The reader runs real-time where it may, so that its stamps are not late
# because it was not scheduled (late stamps bunch lines into a window).
RT=
chrt -f 1 true 2>/dev/null && RT="chrt -f 1"

TMP=$(mktemp -d /tmp/wapipe-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT INT TERM

# Send requests as wa-claim writes them, about 170 bytes each.
awk -v n=$((10000 * DUR * 12 / 10)) 'BEGIN { for (i = 1; i <= n; i++)
    printf "{\"id\":%d,\"campaign_id\":42,\"attempt\":1,\"phone_number_id\":" \
    "\"106540352242922\",\"to\":\"+1555%07d\",\"template\":{\"name\":" \
    "\"reminder\",\"language\":\"en_US\",\"params\":[\"Ana\",\"12 Dec\"]}}\n",
    i, i }' >"$TMP/in"

# The input comes through a pipe, as from wa-claim. The reader: stamps lines for DUR s, then prints
# "lines steady_rate max_lines_in_1s" and leaves (the writer gets EPIPE).
cat >"$TMP/reader.pl" <<'PERL'
use strict;
use Time::HiRes qw(time);
my $dur = shift;
my (@t, $start);
while (<STDIN>) {
	my $now = time;
	$start = $now unless defined $start;
	push @t, $now;
	last if $now - $start >= $dur;
}
my @s = grep { $_ >= $start + 1 } @t;
my $rate = @s > 1 ? (@s - 1) / ($s[-1] - $s[0]) : 0;
my ($max, $j) = (0, 0);
for my $i (0 .. $#t) {
	$j++ while $j < @t && $t[$j] < $t[$i] + 1;
	$max = $j - $i if $j - $i > $max;
}
printf "%d %.3f %d\n", scalar @t, $rate, $max;
PERL

# run NAME RATE COMMAND...: one row of the table.
run() {
	name=$1
	rate=$2
	shift 2
	export WA_STATE_DIR="$TMP/state.$name.$rate"
	# The writer dies of EPIPE when the reader leaves: that is the end.
	# shellcheck disable=SC2002 # a pipe on purpose, not a file
	cat "$TMP/in" 2>/dev/null | { /usr/bin/time -f '%U %S %M' \
	    -o "$TMP/time" "$@" 2>/dev/null || true; } |
	    $RT perl "$TMP/reader.pl" "$DUR" >"$TMP/read"
	read -r lines got max <"$TMP/read"
	tail -n 1 "$TMP/time" >"$TMP/cpu"
	read -r user sys rss <"$TMP/cpu"
	awk -v n="$name" -v r="$rate" -v l="$lines" -v g="$got" -v m="$max" \
	    -v u="$user" -v s="$sys" -v k="$rss" 'BEGIN {
		printf "| %s | %d | %.2f | %+.2f %% | %d | %d | %.2f | %d |\n",
		    n, r, g, (g - r) / r * 100, m, r + (r >= 10 ? r / 10 : 1),
		    (u + s) / l * 1e6, k }'
}

echo "| program | configured /s | achieved /s | error | max in 1 s | rate + burst | CPU µs/line | max RSS KiB |"
echo "|---|---|---|---|---|---|---|---|"
for rate in 80 1000 10000; do
	run wa-throttle "$rate" "$BIN/wa-throttle" -r "$rate"
	run "pv -qlL" "$rate" pv -qlL "$rate"
done
run "wa-throttle --number" 10000 "$BIN/wa-throttle" -r 10000 \
    --number 106540352242922
