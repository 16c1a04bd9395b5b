#!/bin/sh
# Adaptive rate: against an API limited to 30 messages/s with the throttle
# at 70/s, wa-send's cuts of the shared rate (on 130429) and its steps
# back up settle the pipeline just under the limit. Measured on the
# fake's request log (its timestamps, once the first 20 s are past), not
# on a clock of ours: the accepted per second within 10% of 30, under 5%
# of the calls refused.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"

fake_start --rate 30 --pair-ms 0 --latency-ms 20
awk 'BEGIN { for (i = 1; i <= 1600; i++)
    printf "{\"id\":%d,\"campaign_id\":1,\"attempt\":1,\"phone_number_id\":" \
    "\"100\",\"to\":\"+1555%07d\",\"template\":{\"name\":\"reminder\"," \
    "\"language\":\"en_US\"}}\n", i, i }' >"$T/in"
wa-throttle -r 70 <"$T/in" 2>"$T/terr" |
    wa-send -j 50 --metrics "$T/m" >"$T/out" 2>"$T/err"
is $? 0 'the pipeline ends, every request answered'
is "$(wc -l <"$T/out" | tr -d ' ')" 1600 '... one result each'

# The settled part: calls 20 s or more after the first one.
jq -r '[.t, .outcome] | @tsv' "$FAKE_LOG" | sort -n | awk '
    NR == 1 { s = $1 }
    $1 - s >= 20000 { n++; a += $2 == "sent"; f = f ? f : $1; l = $1 }
    END { printf "%d %d %d\n", n, a, l - f }' >"$T/settled"
read -r n a ms <"$T/settled"
note "settled: $n calls, $a accepted over $ms ms"
ok "it got to a settled part ($n calls over $ms ms)" test "$n" -ge 300
refused=$(awk -v n="$n" -v a="$a" 'BEGIN { printf "%.2f", 100 * (n - a) / n }')
rate=$(awk -v a="$a" -v ms="$ms" 'BEGIN { printf "%.2f", a * 1000 / ms }')
ok "under 5% of the settled calls refused ($refused%)" \
    awk -v r="$refused" 'BEGIN { exit !(r < 5) }'
ok "accepted within 10% of 30/s ($rate/s)" \
    awk -v r="$rate" 'BEGIN { exit !(r >= 27 && r <= 33) }'

# Each change of the rate is a line and a metric.
cuts=$(grep -c 'rate cut to' "$T/err")
ups=$(grep -c 'rate back up to' "$T/err")
ok "the rate was cut ($cuts times) and climbed back ($ups steps)" \
    test "$cuts" -gt 0 -a "$ups" -gt 0
is "$(unlabel "$T/m" | sed -n 's/^wa_send_rate_cuts_total //p')" "$cuts" \
    'wa_send_rate_cuts_total counts the cuts'
is "$(unlabel "$T/m" | sed -n 's/^wa_send_rate_climbs_total //p')" "$ups" \
    'wa_send_rate_climbs_total counts the steps'
like "$(unlabel "$T/m")" 'wa_send_rate{number="100"} [0-9]' \
    'wa_send_rate shows the rate in force'

# Once nothing refuses (a limit of 1,000/s now), it climbs back, step by
# step, towards the configured rate and never past it.
fake_start --rate 1000 --pair-ms 0 --latency-ms 5
sed 's/"+1555/"+1556/' "$T/in" | head -300 | wa-throttle -r 70 2>/dev/null |
    wa-send -j 50 >/dev/null 2>"$T/err2"
sed -n 's/.*rate back up to \([0-9.]*\)\/s (its own: 70\/s)$/\1/p' "$T/err2" \
    >"$T/ups"
ok "with no more refusals it climbs ($(wc -l <"$T/ups") steps)" \
    test "$(wc -l <"$T/ups")" -ge 3
ok '... each step higher, none past 70/s' awk '
    $1 <= last || $1 > 70 { exit 1 } { last = $1 }' "$T/ups"
is "$(grep -c 'rate cut' "$T/err2")" 0 '... without a cut'

done_testing
