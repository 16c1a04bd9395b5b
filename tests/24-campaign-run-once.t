#!/bin/sh
# wa-campaign run, one per campaign and fit for cron. A second run of a
# running campaign says who runs it (host, pid, since when) and exits
# 80 while the first goes on; once the first is killed (kill -9) the
# next takes over at once on the same host, and a holder on a host that
# fell silent (no beat for 90 s) is taken over too; the lock is a row,
# and works through pgbouncer in transaction pooling. --until-idle exits
# 75 as soon as only long waits are left (retries, the messaging limit),
# saying what waits and until when; without it a wait at the limit is
# said once for all the rounds, and by run, not by each round's
# wa-claim. The raw pipeline under bash -o pipefail: 79, 69.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"
. "$(dirname "$0")/run.sh"
pg_start

holder() {
	sql "select pid from campaign_runs where campaign_id = $c"
}
held_by() {
	test "$(holder)" = "$1"
}
# slow_run: campaign $c run in the background at 50/s, in $run, once its
# stages run and it holds the campaign.
slow_run() {
	bucket 50
	bg wa-campaign run "$c" 2>"$T/first.err"
	run=$!
	wait_for 30 kids "$run" && wait_for 30 held_by "$run"
}
# killed: $run killed with kill -9, its stages drained.
killed() {
	kill -9 "$run"
	wait "$run"
	wait_for 60 no_stages
	bucket 1000
}

fake_start --rate 0 --latency-ms 30

# A second run while the first runs: 80, naming the first; the first
# goes on. Killed, it leaves the campaign to the next run at once.
c=$(campaign 1000)
ok "the first run holds the campaign" slow_run
wa-campaign run "$c" 2>"$T/err"
is "$?" 80 "a second run of the campaign: 80"
like "$(cat "$T/err")" "campaign $c is run by wa-campaign run on $(hostname), pid $run, since [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z" \
    "it says who runs it: host, pid, since when"
ok "the first goes on" wait_for 120 sent_at_least 50
ok "... still holding it" held_by "$run"
killed
exits 0 "after kill -9 of the first, the next run takes over and ends" \
    wa-campaign run "$c" 2>"$T/err"
like "$(cat "$T/err")" "its last run \(pid $run\) died; this one takes over" \
    "it says so"
is "$(count sent)" 1000 "every row is sent"
is "$(twice)" 0 "nobody was messaged twice"
is "$(holder)" "" "the run let the campaign go when it ended"

# A holder on another host: refused while it beats, taken over once it
# has been silent past 90 s.
c=$(campaign 3)
sql "insert into campaign_runs (campaign_id, host, boot_id, pid, pid_start)
    values ($c, 'elsewhere', 'b', 4242, 1)" >/dev/null
wa-campaign run "$c" 2>"$T/err"
is "$?" 80 "held on another host, beating: 80"
like "$(cat "$T/err")" "run on elsewhere, pid 4242, since .* \(last seen 0 s ago\)" \
    "it names that host"
sql "update campaign_runs set beat_at = now() - interval '91 s'
    where campaign_id = $c" >/dev/null
exits 0 "silent for 91 s: taken over, and run to its end" \
    wa-campaign run "$c"
is "$(count sent)" 3 "its rows are sent"

# Through pgbouncer in transaction pooling, the lock holds the same.
if bouncer_start; then
	c=$(campaign 1000)
	ok "a first run holds the campaign" slow_run
	wa-campaign -d "$BOUNCER" run "$c" 2>"$T/err"
	is "$?" 80 "through pgbouncer, a second run: 80"
	like "$(cat "$T/err")" "is run by wa-campaign run on .*, pid $run" \
	    "... naming the first"
	killed
	wa-campaign pause "$c"
	wa-campaign -d "$BOUNCER" run "$c" 2>"$T/err"
	is "$?" 75 "through pgbouncer, the next takes over (then finds it paused: 75)"
	like "$(cat "$T/err")" "its last run \(pid $run\) died; this one takes over" \
	    "it says so"
	is "$(holder)" "" "and lets the campaign go through pgbouncer too"
	bouncer_stop
else
	skip "no pgbouncer (make deps installs it)" 6
fi

# --until-idle: rows that wait an hour for a retry end the run at once.
c=$(campaign 3)
sql "update campaign_recipients set next_attempt_at = now() + interval '1 h'
    where campaign_id = $c" >/dev/null
wa-campaign run --until-idle "$c" 2>"$T/err"
is "$?" 75 "--until-idle with retries an hour away: 75"
like "$(cat "$T/err")" "campaign $c: nothing to do before [0-9]{4}-[0-9-]{5}T[0-9:.]+Z \(in 3[56][0-9]{2} s\): 3 rows pending" \
    "it says what waits and until when"
is "$(holder)" "" "it let the campaign go"

# --until-idle at the messaging limit: what can go goes, then 75.
c=$(campaign 260)
sql "update campaigns set phone_number_id = '106540352242999'
    where id = $c" >/dev/null
sql "insert into messaging_limits (portfolio, max_people)
    values ('106540352242999', 250)" >/dev/null
wa-campaign run --until-idle -r 1000 "$c" 2>"$T/err"
is "$?" 75 "--until-idle at the messaging limit: 75"
is "$(count sent)" 250 "the 250 the limit allows are sent"
like "$(cat "$T/err")" "campaign $c its number has messaged its limit of 250 people in 86400 s; the next place frees at [0-9T:.-]+Z \(in [0-9]+ s\): run it again then" \
    "it says why and until when"

# Without --until-idle, the wait at the limit is said once, by run.
c=$(campaign 255)
sql "update campaigns set phone_number_id = '106540352242998'
    where id = $c" >/dev/null
sql "insert into messaging_limits (portfolio, max_people, period_s)
    values ('106540352242998', 250, 3)" >/dev/null
exits 0 "a limit of 250 people in 3 s: run waits and ends" \
    wa-campaign run -r 1000 "$c" 2>"$T/err"
is "$(count sent)" 255 "every row is sent"
is "$(grep -c 'messaged its limit' "$T/err")" 1 "the wait is said once"
is "$(grep -c '^wa-claim: ' "$T/err")" 0 "... by run, not by each round's wa-claim"
fake_stop

# The raw pipeline under bash -o pipefail says what wa-campaign run
# would: 79 after a halt, 69 after an outage; under sh, wa-record's 0.
fake_start --rate 0 --latency-ms 5 --templates other
c=$(campaign 5)
pipeline="wa-claim -c $c | wa-throttle -r 1000 | wa-send |
    wa-record >/dev/null"
bash -o pipefail -c "$pipeline" 2>/dev/null
is "$?" 79 "a halt, under bash -o pipefail: 79"
fake_stop
fake_start --rate 0 --latency-ms 5 --outage-file "$T/down"
: >"$T/down"
c=$(campaign 5)
pipeline="wa-claim -c $c | wa-throttle -r 1000 |
    wa-send --outage-after 1 | wa-record >/dev/null"
bash -o pipefail -c "$pipeline" 2>/dev/null
is "$?" 69 "an outage, under bash -o pipefail: 69"
sh -c "$pipeline" 2>/dev/null
is "$?" 0 "under sh, the last stage's 0: why README says pipefail"
rm -f "$T/down"
fake_stop
done_testing
