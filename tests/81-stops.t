#!/bin/sh
# The whole pipeline under the everyday stops: Ctrl-C (SIGINT to its
# process group) mid-campaign, a second SIGINT, and a Postgres restart
# mid-campaign. Nothing is lost, nobody is messaged twice, no row is left
# sending, and the run after completes the campaign. And a stage killed
# (kill -9) while the stages before it wait with nothing to write: the
# pipeline still ends.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"
PG_OPTIONS="-c synchronous_commit=on"
pg_start

# A pipeline in a process group of its own (as a shell's job is), each
# stage's exit status in $T/rc.
cat >"$T/pipe.sh" <<'PIPE'
T=$2
{ wa-claim -c "$1" 2>>"$T/claim.err"; echo "claim $?" >>"$T/rc"; } |
{ wa-throttle -r 100; echo "throttle $?" >>"$T/rc"; } |
{ wa-send --timeout-ms 1500 2>>"$T/send.err"; echo "send $?" >>"$T/rc"; } |
{ wa-record -n 20 --backoff-base 100 --backoff-cap 400 >>"$T/recorded" \
    2>>"$T/record.err"; echo "record $?" >>"$T/rc"; }
PIPE
start() {
	: >"$T/rc"
	setsid sh "$T/pipe.sh" "$1" "$T" &
	group=$!
}
# A failed test must not leave the group running. (Before the first
# start there is none: "-0" would be this test's own group, prove's.)
trap '[ -n "${group:-}" ] && env kill -s KILL -- "-$group" 2>/dev/null
    t_cleanup' EXIT
sent_at_least() {
	test "$(sql "select count(*) from campaign_recipients
	    where campaign_id = $c and status = 'sent'")" -ge "$1"
}
twice() {
	jq -r 'select(.wamid != null) | .to' "$FAKE_LOG" | sort | uniq -d |
	    wc -l | tr -d ' '
}
sending() {
	sql "select count(*) from campaign_recipients where campaign_id = $c
	    and status = 'sending'"
}

# Ctrl-C mid-campaign.
fake_start --rate 0 --latency-ms 30
c=$(campaign 1000)
start "$c"
ok "the campaign is under way" wait_for 120 sent_at_least 200
env kill -s INT -- "-$group"
wait "$group"
note "$(tr '\n' ' ' <"$T/rc")"
is "$(grep claim "$T/rc")" "claim 75" "wa-claim stops: 75, not completed"
is "$(grep -E 'throttle|send' "$T/rc" | sort | tr '\n' ' ')" \
    "send 0 throttle 0 " "wa-throttle and wa-send drain: 0"
is "$(grep record "$T/rc")" "record 0" "wa-record applies all it reads: 0"
is "$(sending)" 0 "no row is left sending"
is "$(twice)" 0 "nobody was messaged twice"
is "$(jq -s '[.[] | select(.wamid != null)] | length' "$FAKE_LOG")" \
    "$(sql "select count(*) from campaign_recipients where campaign_id = $c
    and wamid is not null")" "every accepted message is recorded"
start "$c"
wait "$group"
is "$(grep claim "$T/rc")" "claim 0" "run again, the campaign completes"
ok "every recipient is sent" sent_at_least 1000
is "$(twice)" 0 "and nobody got two messages"

# Postgres restarts mid-campaign: every stage waits and goes on.
fake_start --rate 0 --latency-ms 30
c=$(campaign 1000)
: >"$T/claim.err"
: >"$T/record.err"
start "$c"
ok "a second campaign is under way" wait_for 120 sent_at_least 200
pg_stop
both_wait() {
	grep -q "waiting up to" "$T/record.err" &&
	    grep -q "waiting up to" "$T/claim.err"
}
ok "Postgres stopped: wa-claim and wa-record say they wait" \
    wait_for 60 both_wait
pg_resume
wait "$group"
note "$(tr '\n' ' ' <"$T/rc")"
is "$(grep -c "postgres is back" "$T/record.err")" 1 \
    "wa-record says once that Postgres is back"
is "$(grep claim "$T/rc") $(grep record "$T/rc")" "claim 0 record 0" \
    "the pipeline completes the campaign"
ok "every recipient is sent" sent_at_least 1000
is "$(twice)" 0 "nobody got two messages"
is "$(ls "$WA_STATE_DIR/results" 2>/dev/null | wc -l | tr -d ' ')" 0 \
    "nothing is left on disk"

# wa-send killed while its calls hang, with nothing left to claim: wa-claim
# only waits for the rows in flight and wa-throttle for input; neither
# writes, yet both must learn that their reader has gone, or the
# pipeline never ends.
cat >"$T/pipe-hang.sh" <<'PIPE'
T=$2
{ wa-claim -c "$1" 2>>"$T/claim.err"; echo "claim $?" >>"$T/rc"; } |
{ wa-throttle -r 100 2>>"$T/throttle.err"; echo "throttle $?" >>"$T/rc"; } |
{ sh -c 'echo $$ >"$1/send.pid"; exec wa-send --timeout-ms 3600000' sh "$T"
    echo "send $?" >>"$T/rc"; } |
{ wa-record >/dev/null 2>>"$T/record.err"; echo "record $?" >>"$T/rc"; }
PIPE
fake_start --rate 0 --script 1=hang --script 2=hang --script 3=hang
c=$(campaign 3)
: >"$T/rc"
: >"$T/claim.err"
setsid sh "$T/pipe-hang.sh" "$c" "$T" &
group=$!
# The first call (wa-send's canary) hangs; the others wait behind it.
hanging() {
	test -s "$FAKE_LOG" && test "$(sending)" -eq 3
}
ok "wa-send holds calls the API never answers" wait_for 120 hanging
kill -KILL "$(cat "$T/send.pid")"
ended() {
	test "$(wc -l <"$T/rc")" -eq 4
}
ok "wa-send killed: the pipeline ends by itself" wait_for 120 ended
note "$(tr '\n' ' ' <"$T/rc")"
is "$(grep -E 'claim|throttle' "$T/rc" | sort | tr '\n' ' ')" \
    "claim 74 throttle 74 " "wa-claim and wa-throttle: 74, their reader gone"
like "$(cat "$T/throttle.err")" "the reader has gone" \
    "wa-throttle says why, though it had nothing to write"
is "$(grep record "$T/rc")" "record 0" "wa-record ends at the end of input: 0"
is "$(sending)" 3 "the three rows held stay sending, for wa-reconcile"
wa-reconcile --stale-after 0 >/dev/null 2>&1
is "$(sql "select count(*) from campaign_recipients where campaign_id = $c
    and status = 'unknown'")" 3 "wa-reconcile settles them: none is lost"

done_testing
