#!/bin/sh
# wa-campaign run: a campaign to its end through the four stages, with
# each way it can end: completed (0), halted (79, the reason said),
# Postgres down past --pg-timeout (69), the API down past --outage-after
# (69), rows nothing settles in time (76), cancelled (77), stopped by
# SIGINT (75, drained, the rerun completes), run itself killed -9 (the
# stages drain, the rerun completes). --dry-run shows every request and
# changes no row. wa-campaign watch, and the time on each message when
# stderr is not a terminal. Nobody is ever messaged twice.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"
. "$(dirname "$0")/run.sh"
PG_OPTIONS="-c synchronous_commit=on"
pg_start

checksum() {
	sql "select md5(string_agg(r::text, ',' order by id))
	    from campaign_recipients r"
}

# Completed: every row sent, a retry waited for and rerun, exit 0; the
# messages carry their time (stderr is a file here). 131056 (pair rate)
# puts its row off at least 6 s: the round ends before it is due.
fake_start --rate 0 --latency-ms 5 --script 0007=once:131056
c=$(campaign 50)
exits 0 "a campaign runs to its end: 0" env -u WA_LOG_TIME \
    wa-campaign run "$c" -r 1000 --record-opt=--backoff-base=300 \
    2>"$T/err"
is "$(count sent)" 50 "every row is sent"
is "$(sql "select attempt from campaign_recipients
    where campaign_id = $c and phone like '%0007'")" 2 \
    "the row that failed once was retried: a second round"
is "$(sql "select state from campaigns where id = $c")" completed \
    "the campaign is completed"
is "$(twice)" 0 "nobody was messaged twice"
like "$(cat "$T/err")" \
    "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z wa-campaign: campaign $c: 50/50 \(100\.0%\)" \
    "progress lines say done/total and percent, after an RFC 3339 time"
like "$(cat "$T/err")" "wa-campaign: campaign $c is completed: 50 rows, 50 sent, 0 failed" \
    "the end says so"
like "$(cat "$T/err")" "wa-campaign: campaign $c: 49/50 .*1 retry pending, the next at [0-9T:.-]+Z" \
    "a round that leaves a retry says when it is due"
like "$(cat "$T/err")" "^[0-9T:.-]+Z campaign $c: completed" \
    "the stages' lines carry the time too (wa-reconcile's report)"
exits 0 "run again: completed already, 0" wa-campaign run "$c"
wa-campaign watch "$c" >"$T/watch" 2>&1
is "$?" 0 "watch exits 0 on a completed campaign"
like "$(cat "$T/watch")" "^campaign $c: 50/50 \(100\.0%\), [0-9]+/s now, [0-9]+/s average, done" \
    "watch prints the line"
# The rows left all wait for a retry a day away: the ETA is theirs, not
# "0 s" from the last rate.
sql "update campaign_recipients set status = 'pending',
    next_attempt_at = now() + interval '1 day'
    where campaign_id = $c and phone like '%0009'" >/dev/null
sql "update campaigns set state = 'running' where id = $c" >/dev/null
bg wa-campaign watch "$c" >"$T/watch2" 2>&1
watching=$!
ok "watch prints its first line" wait_for 30 test -s "$T/watch2"
kill "$watching"
like "$(head -1 "$T/watch2")" "^campaign $c: 49/50 \(98\.0%\), .*ETA: the retries' time; 1 retry pending, the next at" \
    "a row that waits a day: the ETA says so"
fake_stop

# --dry-run: the request of every row, nothing changed, even for a draft.
fake_start --rate 0 --latency-ms 5
c=$(campaign 30)
sql "update campaigns set state = 'draft' where id = $c"
sql "update campaign_recipients set status = 'sent', attempt = 1
    where campaign_id = $c and phone like '%1'" >/dev/null
before=$(checksum)
exits 0 "--dry-run of a draft: 0" wa-campaign run --dry-run "$c" \
    >"$T/dry" 2>"$T/dry.err"
is "$(checksum)" "$before" "no row changed (the table's checksum)"
is "$(wc -l <"$T/dry" | tr -d ' ')" 27 "one request per row still to send"
is "$(jq -r '.dry_run.url' "$T/dry" | sort -u)" \
    "$WA_API_BASE/106540352242922/messages" "each with the URL it would POST"
is "$(jq -r 'select(.attempt == 1 and .dry_run.body.template.name ==
    "reminder") | .to' "$T/dry" | sort -u | wc -l | tr -d ' ')" 27 \
    "the body and the attempt the claim would give"
is "$(jq -s length "$FAKE_LOG")" 0 "no call was made"
exits 79 "run of the draft itself: 79, a person must start it" \
    wa-campaign run "$c"
sql "update campaigns set state = 'running' where id = $c"

# Cancelled: 77 at once.
sql "update campaigns set state = 'cancelled' where id = $c"
exits 77 "a cancelled campaign: 77" wa-campaign run "$c"
fake_stop

# Halted: a missing template stops the campaign; 79 with the reason, and
# again 79 while it stays paused by the halt. (Without --no-check, run's
# check refuses it before any send: tests/28-campaign-check.t.)
fake_start --rate 0 --latency-ms 5 --templates other
c=$(campaign 50)
wa-campaign run --no-check "$c" 2>"$T/err"
is "$?" 79 "a missing template halts the campaign: 79"
like "$(cat "$T/err")" "wa-campaign: campaign $c (halted|is paused): .*132001.*wa-campaign resume $c" \
    "the reason is on stderr, and what to do"
exits 79 "run again before anyone acts: 79 still" wa-campaign run "$c"
wa-campaign resume "$c" && wa-campaign pause --reason "by hand" "$c"
exits 75 "paused by a person instead: 75, run it again later" \
    wa-campaign run "$c"
is "$(count sending)" 0 "no row is left sending"
fake_stop

# No token: 78 at once, saying so, before any stage runs or any sleep.
fake_start --rate 0 --latency-ms 5
c=$(campaign 3)
env -u WA_TOKEN -u WA_TOKEN_FILE wa-campaign run "$c" 2>"$T/err"
is "$?" 78 "run without a token: 78"
like "$(cat "$T/err")" "no API token" "says so"
is "$(count pending)" 3 "no row was claimed"
WA_TOKEN_FILE=$T/no-such-file wa-campaign run "$c" 2>"$T/err"
is "$?" 78 "a token file that cannot be read: 78"
fake_stop

# Rows never sent, suppressed or expired, are counted as such at the end,
# not as sent.
fake_start --rate 0 --latency-ms 5
c=$(campaign 4)
sql "update campaign_recipients set expires_at = now() - interval '1 h'
    where campaign_id = $c and phone like '%1'"
sql "insert into suppressions (scope, phone, reason) select '*', phone,
    'test' from campaign_recipients where campaign_id = $c
    and phone like '%2'"
exits 0 "a campaign with an expired and a suppressed row completes"     wa-campaign run "$c" 2>"$T/err"
like "$(cat "$T/err")" "campaign $c is completed: 4 rows, 2 sent, 0 failed, 2 never sent \(1 suppressed, 1 expired\);" \
    "the end counts them apart from the sent"
is "$(jq -s 'map(select(.method == "POST")) | length' "$FAKE_LOG")" 2 \
    "two sends were made"
sql "delete from suppressions" >/dev/null
fake_stop

# The campaign's breaker (set --breaker) reaches wa-send: 10 sends in a
# row failing alike halt it, not wa-send's default 50.
fake_start --rate 0 --latency-ms 5 --error-rate 131026:1
c=$(campaign 100)
wa-campaign pause "$c" && wa-campaign set --breaker 10 "$c" 2>/dev/null &&
    wa-campaign resume "$c"
wa-campaign run -j 1 "$c" 2>"$T/err"
is "$?" 79 "a breaker of 10 halts the campaign: 79"
n=$(jq -s 'map(select(.method == "POST")) | length' "$FAKE_LOG")
ok "after 10 calls or so, not 50 ($n)" test "$n" -ge 10 -a "$n" -le 12
is "$(count sending)" 0 "no row is left sending"
fake_stop

# Rows nothing settles in time: 76.
fake_start --rate 0 --latency-ms 5
c=$(campaign 5)
sql "update campaign_recipients set status = 'unknown', attempt = 1,
    claimed_at = now(), status_at = now()
    where campaign_id = $c and phone like '%1'"
wa-campaign run "$c" --unknown-after 3600 --settle-max 1 2>"$T/err"
is "$?" 76 "an unknown row nothing settles within --settle-max: 76"
like "$(cat "$T/err")" "campaign $c: 1 rows unknown and 0 sending" \
    "it says how many"
is "$(count sent)" 4 "the others were sent"
exits 0 "with the row settled (--unknown-after 0), the rerun ends: 0" \
    wa-campaign run "$c" --unknown-after 0
is "$(count sent)" 5 "the unknown row was resent (on_unknown resend)"
fake_stop

# SIGINT mid-run: the stages drain; 75; the rerun completes.
fake_start --rate 0 --latency-ms 30
c=$(campaign 1000)
bucket 50
bg wa-campaign run "$c" 2>"$T/err"
run=$!
ok "its four stages run" wait_for 30 kids "$run"
# The token is wa-send's alone: no other stage gets it in its
# environment (wa-send wipes its own copy once read).
out=$(for p in $kids; do
	[ "$(cat "/proc/$p/comm")" = wa-send ] && continue
	tr '\0' '\n' <"/proc/$p/environ" | grep -q '^WA_TOKEN=' &&
	    cat "/proc/$p/comm"
done)
is "$out" "" "no stage but wa-send is given WA_TOKEN"
ok "the run is under way" wait_for 120 sent_at_least 50
wait_for 30 catches "$run" INT
kill -INT "$run"
wait "$run"
is "$?" 75 "SIGINT: 75"
like "$(cat "$T/err")" "stopped: campaign $c is not completed" "it says so"
is "$(count sending)" 0 "the stages drained: no row is left sending"
ok "no stage is left" no_stages
bucket 1000
exits 0 "the rerun completes: 0" wa-campaign run "$c"
is "$(count sent)" 1000 "every row is sent"
is "$(twice)" 0 "nobody was messaged twice"
fake_stop

# kill -9 of run itself: its stages drain all the same.
fake_start --rate 0 --latency-ms 30
c=$(campaign 1000)
bucket 50
bg wa-campaign run "$c" 2>"$T/err"
run=$!
ok "its four stages run" wait_for 30 kids "$run"
ok "another run is under way" wait_for 120 sent_at_least 50
kill -9 "$run"
wait "$run"
ok "its stages end by themselves" wait_for 60 no_stages
is "$(count sending)" 0 "they drained: no row is left sending"
bucket 1000
exits 0 "the rerun completes: 0" wa-campaign run "$c"
is "$(count sent)" 1000 "every row is sent"
is "$(twice)" 0 "nobody was messaged twice"
fake_stop

# The API down past --outage-after, mid-campaign: 69. The rows still in
# the pipes when wa-send gave up were claimed and never sent: the round
# puts them back to pending at once (its wa-claim's tag), so none is
# left sending, none waits for wa-reconcile, none is unknown or failed.
fake_start --rate 0 --latency-ms 5 --outage-file "$T/down"
c=$(campaign 1000)
bucket 200
bg wa-campaign run "$c" --outage-after 1 2>"$T/err"
run=$!
ok "a run is under way" wait_for 120 sent_at_least 100
: >"$T/down"
wait "$run"
is "$?" 69 "the API down past --outage-after: 69"
like "$(cat "$T/err")" "wa-send: the API is down" "it names the stage"
like "$(cat "$T/err")" "put back [0-9]+ rows claimed and never sent" \
    "the rows left in the pipes are put back, saying so"
is "$(count sending)" 0 "no row is left sending"
is "$(count unknown)$(count failed)" 00 "none is unknown or failed"
# A row with an attempt counted was POSTed (answered 503): the fake saw it.
sql "select phone from campaign_recipients where campaign_id = $c
    and status = 'pending' and attempt > 0" | sort >"$T/counted"
jq -r 'select(.method == "POST") | .to' "$FAKE_LOG" | sort -u >"$T/posted"
is "$(comm -23 "$T/counted" "$T/posted" | wc -l | tr -d ' ')" 0 \
    "a row put back does not count an attempt"
rm -f "$T/down"
bucket 1000
exits 0 "with the API back, the rerun completes" wa-campaign run "$c"
is "$(count sent)" 1000 "every row is sent"
is "$(twice)" 0 "nobody was messaged twice"
fake_stop

# Postgres down past --pg-timeout: 69.
fake_start --rate 0 --latency-ms 30
c=$(campaign 1000)
bucket 50
bg wa-campaign run "$c" --pg-timeout 2 2>"$T/err"
run=$!
ok "its four stages run" wait_for 30 kids "$run"
ok "a run is under way" wait_for 120 sent_at_least 50
pg_stop
wait "$run"
is "$?" 69 "Postgres down past --pg-timeout: 69"
like "$(cat "$T/err")" "Postgres is down" "it says so"
ok "no stage is left" no_stages
pg_resume
# The rows claimed when Postgres went are settled by the results
# wa-record kept on disk, then by reconcile: no wait for stale rows here.
bucket 1000
exits 0 "with Postgres back, the rerun completes" wa-campaign run "$c" \
    --stale-after 0 --unknown-after 0
is "$(count sent)" 1000 "every row is sent"
is "$(twice)" 0 "nobody was messaged twice"
fake_stop

# wa-claim waiting for a retry says so once, and until when.
c=$(campaign 3)
sql "update campaign_recipients set next_attempt_at = now() + interval '1 hour'
    where campaign_id = $c" >/dev/null
bg wa-claim -c "$c" >/dev/null 2>"$T/claim.err"
claim=$!
ok "wa-claim says it waits" wait_for 30 grep -q waiting "$T/claim.err"
like "$(cat "$T/claim.err")" "^wa-claim: campaign $c: waiting for retries \\(or a send window\\); the next is due at [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z \(in 3[56][0-9]{2} s\)$" \
    "with the time of the next retry"
wait_for 30 catches "$claim" INT
kill -INT "$claim"
wait "$claim"
is "$?" 75 "stopped, it exits 75"
is "$(grep -c waiting "$T/claim.err")" 1 "it said so once"

exits 64 "run without an id: 64" wa-campaign run 2>/dev/null
exits 64 "run of no campaign: 64" wa-campaign run 999999 2>/dev/null
done_testing
