#!/bin/sh
# Many hosts, one campaign, one number: two hosts' worth of pipelines
# (a WA_STATE_DIR each, wa-throttle --cluster) share the number's rate
# through Postgres and claim disjoint rows. Checked against what the fake
# API saw: nobody twice, everybody once, and never faster than the rate.
# (That they also reach the rate is a speed, measured by
# bench/many-hosts.sh on a quiet machine, not asserted here.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"
pg_start
fake_start --rate 0

RATE=100
BURST=5
N=1200
c=$(campaign "$N")

# host NAME: one host's pipeline, its state directory its own.
host() {
	mkdir -p "$T/host-$1"
	WA_STATE_DIR=$T/host-$1
	export WA_STATE_DIR
	{ wa-claim -c "$c" 2>>"$T/$1.err"; echo "claim $?" >>"$T/$1.rc"; } |
	{ wa-throttle --cluster -r "$RATE" -b "$BURST" 2>>"$T/$1.err"
	    echo "throttle $?" >>"$T/$1.rc"; } |
	{ wa-send 2>>"$T/$1.err"; echo "send $?" >>"$T/$1.rc"; } |
	{ wa-record >"$T/$1.out" 2>>"$T/$1.err"; echo "record $?" >>"$T/$1.rc"; }
}
host a &
pa=$!
host b &
pb=$!
wait "$pa" "$pb"
for h in a b; do
	is "$(sort "$T/$h.rc" | tr '\n' ' ')" \
	    "claim 0 record 0 send 0 throttle 0 " "host $h: every stage ends 0"
done

is "$(sql "select count(*) from campaign_recipients where campaign_id = $c
    and status = 'sent'")" "$N" "every recipient sent"
jq -r .id "$T/a.out" | sort >"$T/a.ids"
jq -r .id "$T/b.out" | sort >"$T/b.ids"
note "host a sent $(wc -l <"$T/a.ids"), host b $(wc -l <"$T/b.ids")"
is "$(comm -12 "$T/a.ids" "$T/b.ids" | wc -l)" 0 "claims are disjoint"
is "$(sort -u "$T/a.ids" "$T/b.ids" | wc -l)" "$N" \
    "and together they are the campaign"
is "$(jq -r 'select(.wamid != null) | .to' "$FAKE_LOG" | sort | uniq -d |
    wc -l)" 0 "the API accepted nobody twice"
ok "both hosts sent" test -s "$T/a.ids" -a -s "$T/b.ids"

# The combined rate at the API, past the first burst: at most the
# number's rate, within 1% (a lease's few tokens of slack over 12 s).
rate=$(jq -r .t "$FAKE_LOG" | sort -n | awk -v b="$BURST" '
    { t[NR] = $1 }
    END { printf "%.2f", (NR - 1 - b) * 1000 / (t[NR] - t[b + 1]) }')
note "combined rate at the API: $rate/s for $RATE/s"
ok "the combined rate stays within 1% of $RATE/s ($rate)" \
    awk -v r="$rate" -v R="$RATE" 'BEGIN { exit !(r <= R * 1.01) }'
done_testing
