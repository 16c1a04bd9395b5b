#!/bin/sh
# Ctrl-C to a whole pipeline, wa-claim | wa-throttle | wa-send | wa-record,
# mid-campaign: every stage drains and exits, no row is left sending (the
# rows claimed but not sent go back to pending), and running the pipeline
# again sends every recipient exactly once. Needs wa-claim and wa-record
# to drain too (issue 12: wa-claim puts back what it claimed and did not
# write, wa-record commits every result it reads, and both put outcome
# retry with class unsent or outage back to pending).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"
pg_start

# $T/pipeline CAMPAIGN: the four stages, each one's exit status in
# $T/NAME.rc.
cat >"$T/pipeline" <<EOF
{ wa-claim -c "\$1" 2>>"$T/claim.err"; echo \$? >"$T/claim.rc"; } |
{ wa-throttle -r 200 2>>"$T/throttle.err"; echo \$? >"$T/throttle.rc"; } |
{ wa-send --timeout-ms 3000 2>>"$T/send.err"; echo \$? >"$T/send.rc"; } |
{ wa-record --backoff-base 100 --backoff-cap 400 >/dev/null \
    2>>"$T/record.err"; echo \$? >"$T/record.rc"; }
EOF
rcs() {
	echo "$(cat "$T/claim.rc") $(cat "$T/throttle.rc")" \
	    "$(cat "$T/send.rc") $(cat "$T/record.rc")"
}
rows() {
	sql "select count(*) from campaign_recipients where campaign_id = $c
	    and status = '$1'"
}

fake_start --rate 0 --latency-ms 300 --jitter-ms 200
c=$(campaign 2000)
# Its own process group, as a shell with job control gives a pipeline:
# Ctrl-C is SIGINT to that group.
setsid sh "$T/pipeline" "$c" &
group=$!
t_pids="$t_pids $group"
some_sent() {
	test "$(rows sent)" -ge 300
}
ok 'the pipeline sends' wait_for 120 some_sent
s=$(date +%s%N)
kill -INT "-$group"
wait "$group"
e=$(date +%s%N)
note "gone $(((e - s) / 1000000)) ms after Ctrl-C (--timeout-ms 3000)"
note "exit statuses: $(rcs); rows: $(rows sent) sent, $(rows pending) pending"
is "$(cat "$T/throttle.rc") $(cat "$T/send.rc") $(cat "$T/record.rc")" \
    '0 0 0' 'wa-throttle, wa-send and wa-record drain and exit 0'
is "$(rows sending)" 0 'no row is left sending'
is "$(rows unknown)" 0 '... nor unknown'
ok 'work is left for the next run' test "$(rows pending)" -gt 0
note "stderr: $(cat "$T"/*.err | sort | uniq -c | head -20)"

# Run again: every recipient sent, nobody twice. Rows left sending (the
# failure above) would keep wa-claim waiting: wa-reconcile settles them
# first, as an operator would (on_unknown resend: the duplicates the
# issue counted).
[ "$(rows sending)" = 0 ] ||
    wa-reconcile -c "$c" --stale-after 0 --unknown-after 0 >/dev/null
sh "$T/pipeline" "$c"
is "$(rows sent)" 2000 'the next run sends everyone'
twice=$(jq -r 'select(.wamid != null) | .to' "$FAKE_LOG" | sort | uniq -d |
    wc -l)
is "$twice" 0 'nobody got the message twice'

done_testing
