#!/bin/sh
# A campaign that starts itself: wa-campaign start --at (RFC 3339, a date
# and time of day or a time of day alone in the campaign's zone) makes it
# scheduled; nothing claims its rows before then; list and status say
# when; pause, resume, cancel and start (now) work on it; a time past or
# unreadable is 65 and changes nothing. The first claim after its time
# starts it. wa-campaign run waits for it (a stop: 75, still scheduled;
# a Postgres restart meanwhile is waited out), checks it then (a refusal
# pauses it) and runs it. run --due runs every campaign whose time has
# come, each in a child, with the worst of their statuses; a stop and a
# kill -9 of it drain the children. Nobody is messaged twice. The time
# is never waited for: a test moves start_at instead.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"
. "$(dirname "$0")/run.sh"
PG_OPTIONS="-c synchronous_commit=on"
pg_start
fake_start --rate 0

# draft N FIRST: a draft campaign of N rows from the test's number FIRST,
# numbers no other campaign of the test has (nobody twice is then a fact
# about the fake's log); its id.
draft() {
	c=$(campaign 0)
	recipients "$c" "$2" "$(($2 + $1 - 1))"
	sql "update campaigns set state = 'draft' where id = $c"
	echo "$c"
}
state() {
	sql "select state from campaigns where id = $1"
}
# due_now C: campaign C's time has come (as if the clock had got there).
due_now() {
	sql "update campaigns set start_at = now() - interval '1 ms'
	    where id = $1"
}
pending() {
	sql "select count(*) from campaign_recipients
	    where campaign_id = $1 and status = 'pending'"
}
sent() {
	sql "select count(*) from campaign_recipients
	    where campaign_id = $1 and status = 'sent'"
}

# An instant, in RFC 3339: scheduled, said on stdout.
c=$(draft 10 1)
exits 0 "start --at an RFC 3339 time: 0" wa-campaign start --no-check \
    --at 2099-01-02T09:00:00+01:00 "$c" >"$T/out"
is "$(state "$c")" scheduled "the campaign is scheduled"
is "$(sql "select start_at at time zone 'UTC' from campaigns
    where id = $c")" "2099-01-02 08:00:00" "... for that instant"
like "$(cat "$T/out")" "^campaign $c starts at 2099-01-02 08:00:00 UTC \(2099-01-02T08:00:00Z\), in [0-9]+ d" \
    "... said with the zone and how long until then"
wa-claim -c "$c" --once >"$T/claimed" 2>/dev/null
is "$(wc -l <"$T/claimed" | tr -d ' ') $(pending "$c")" "0 10" \
    "nothing is claimed before its time"
wa-campaign list >"$T/list"
like "$(grep "^ *$c " "$T/list")" "scheduled .* \(starts at 2099-01-02T08:00:00Z\)" \
    "list shows it scheduled, and when"
wa-campaign status "$c" >"$T/status"
like "$(cat "$T/status")" "to start at 2099-01-02T08:00:00Z" "status says when"
is "$(wa-campaign status --json "$c" | jq -r '.state + " " + .start_at')" \
    "scheduled 2099-01-02T08:00:00Z" "status --json: state and start_at"

# Past, unreadable, not on the calendar: 65, nothing changed.
before=$(sql "select start_at from campaigns where id = $c")
exits 65 "a time past: 65" wa-campaign start --no-check \
    --at 2001-01-01T00:00:00Z "$c" 2>"$T/err"
like "$(cat "$T/err")" "--at 2001-01-01T00:00:00Z is 2001-01-01 00:00:00 UTC, not to come: nothing changed" \
    "... saying so"
exits 65 "a time unreadable: 65" wa-campaign start --no-check \
    --at tomorrow "$c" 2>"$T/err"
like "$(cat "$T/err")" "--at 'tomorrow': not a time to start at" \
    "... saying what it takes"
exits 65 "a date not on the calendar: 65" wa-campaign start --no-check \
    --at "2099-02-29 09:00" "$c" 2>/dev/null
exits 65 "an hour not on the clock: 65" wa-campaign start --no-check \
    --at 24:00 "$c" 2>/dev/null
is "$(state "$c") $(sql "select start_at from campaigns where id = $c")" \
    "scheduled $before" "... and the campaign is as it was"

# A wall-clock time is the campaign's zone's (--tz), a time of day alone
# its next one.
d=$(draft 3 100)
wa-campaign set --tz Europe/Rome "$d"
exits 0 "start --at a date and time of day" wa-campaign start --no-check \
    --at "2099-07-01 09:00" "$d" >"$T/out"
is "$(sql "select start_at at time zone 'UTC' from campaigns
    where id = $d")" "2099-07-01 07:00:00" \
    "... is the campaign's zone's (Rome, summer time: UTC+2)"
like "$(cat "$T/out")" "starts at 2099-07-01 09:00:00 Europe/Rome" \
    "... said in that zone"
exits 0 "start --at a time of day again: rescheduled" wa-campaign start \
    --no-check --at 09:00 "$d" >/dev/null
is "$(sql "select to_char(start_at at time zone 'Europe/Rome', 'HH24:MI'),
    start_at > now(), start_at <= now() + interval '1 day'
    from campaigns where id = $d")" "09:00|t|t" \
    "... the next 09:00 in Rome, within a day"

# pause, resume (before its time: scheduled again), cancel, start now.
exits 0 "pause a scheduled campaign" wa-campaign pause "$c"
is "$(state "$c")" paused "... paused"
exits 0 "resume it" wa-campaign resume "$c"
is "$(state "$c")" scheduled "... scheduled again: its time is to come"
exits 0 "cancel a scheduled campaign" wa-campaign cancel "$d"
is "$(state "$d")" cancelled "... cancelled"
exits 65 "a cancelled one cannot be scheduled" wa-campaign start \
    --no-check --at 2099-01-01T00:00:00Z "$d" 2>/dev/null
e=$(draft 5 200)
wa-campaign start --no-check --at 2099-01-01T00:00:00Z "$e" >/dev/null
exits 0 "start (now) a scheduled campaign" wa-campaign start --no-check "$e"
is "$(state "$e") $(sql "select start_at <= now() and started_at is not null
    from campaigns where id = $e")" "running t" "... running, from now"

# The first claim after its time starts it.
due_now "$c"
wa-claim -c "$c" --once >"$T/claimed" 2>/dev/null
is "$(wc -l <"$T/claimed" | tr -d ' ')" 10 "its time come, the claim claims"
is "$(state "$c")" running "... and the campaign is running"
is "$(sql "select reason from campaign_events where campaign_id = $c
    order by at desc limit 1")" "started at its scheduled time" \
    "... the event says why"
wa-throttle -r 1000 <"$T/claimed" | wa-send | wa-record >/dev/null 2>&1

# The raw pipeline: wa-claim waits for the time, then claims; --once
# says when and exits 75.
c=$(draft 8 800)
wa-campaign start --no-check --at 2099-01-01T00:00:00Z "$c" >/dev/null
exits 75 "wa-claim --once on a scheduled campaign: 75" wa-claim -c "$c" \
    --once 2>"$T/err"
like "$(cat "$T/err")" "campaign $c is scheduled: to start at 2099-01-01T00:00:00Z" \
    "... saying when"
(wa-claim -c "$c" 2>"$T/claim.err"; echo "$?" >"$T/claim.rc") |
    wa-throttle -r 1000 | wa-send 2>/dev/null | wa-record >/dev/null 2>&1 &
ok "wa-claim waits for the time, saying so" wait_for 30 grep -q \
    "campaign $c is scheduled: it starts at 2099-01-01T00:00:00Z; waiting" \
    "$T/claim.err"
is "$(pending "$c")" 8 "... claiming nothing"
due_now "$c"
ok "the time come, the pipeline runs it to its end" wait_for 60 test -s "$T/claim.rc"
is "$(cat "$T/claim.rc") $(sent "$c") $(state "$c")" "0 8 completed" \
    "... wa-claim exits 0, every row sent"

# run waits for the time; a Postgres restart meanwhile is waited out.
c=$(draft 20 300)
wa-campaign start --at 2099-01-01T00:00:00Z "$c" >/dev/null
bg wa-campaign run -r 1000 "$c" 2>"$T/run.err"
running=$!
ok "run says it waits" wait_for 30 grep -q "campaign $c is scheduled: it starts at 2099-01-01T00:00:00Z, in .*; waiting" "$T/run.err"
is "$(pending "$c") $(state "$c")" "20 scheduled" "... sending nothing"
pg_stop
pg_resume
due_now "$c"
wait "$running"
is "$?" 0 "the time come, run runs it to its end: 0"
is "$(sent "$c") $(state "$c")" "20 completed" "... every row sent"
like "$(cat "$T/run.err")" "campaign $c: its time has come; started" \
    "... saying when it started"

# On a terminal, the live line counts down.
c=$(draft 3 450)
wa-campaign start --no-check --at 2099-01-01T00:00:00Z "$c" >/dev/null
bg script -qfec "wa-campaign run --no-check $c" /dev/null >"$T/tty" 2>&1
tty=$!
ok "on a terminal, run counts down to the time" wait_for 30 grep -q \
    "campaign $c: 3 rows; starts at 2099-01-01T00:00:00.000Z, in [0-9]* d [0-9]* h \[scheduled\]" \
    "$T/tty"
kill -TERM "$tty"
wait "$tty"
sql "update campaigns set state = 'cancelled' where id = $c" >/dev/null

# A stop while waiting: 75, still scheduled, nothing sent.
c=$(draft 5 400)
wa-campaign start --no-check --at 2099-01-01T00:00:00Z "$c" >/dev/null
bg wa-campaign run --no-check "$c" 2>"$T/run.err"
running=$!
wait_for 30 grep -q "is scheduled" "$T/run.err"
kill -TERM "$running"
wait "$running"
is "$?" 75 "SIGTERM while it waits: 75"
is "$(state "$c") $(pending "$c")" "scheduled 5" "... still scheduled, nothing sent"
exits 75 "--until-idle, its time far: 75 at once" wa-campaign run \
    --no-check --until-idle "$c" 2>"$T/err"
like "$(cat "$T/err")" "campaign $c is scheduled: it starts at .*run it again then" \
    "... saying when"

# run --due: the campaigns whose time has come, each to its end; one not
# yet due left alone; one that fails its check paused: the worst status.
sql "update campaigns set state = 'cancelled' where state <> 'completed'" >/dev/null
exits 0 "run --due, none due: 0" wa-campaign run --due 2>"$T/err"
like "$(cat "$T/err")" "no campaign is due" "... saying so"
a=$(draft 30 500)
b=$(draft 30 600)
f=$(draft 30 700)
for x in "$a" "$b" "$f"; do
	wa-campaign start --no-check --at 2099-01-01T00:00:00Z "$x" >/dev/null
done
due_now "$a"
due_now "$b"
exits 0 "run --due: 0 when every due campaign completes" wa-campaign run \
    --due -r 1000 2>"$T/err"
is "$(sent "$a") $(state "$a") $(sent "$b") $(state "$b")" \
    "30 completed 30 completed" "... both due campaigns sent and completed"
is "$(pending "$f") $(state "$f")" "30 scheduled" "... the one not due left alone"
like "$(cat "$T/err")" "campaign $b is due: running it" "... saying which"
sql "update campaigns set template_name = 'remind' where id = $f" >/dev/null
due_now "$f"
exits 65 "run --due: a campaign refused by its check: 65" wa-campaign run \
    --due 2>"$T/err"
is "$(state "$f") $(pending "$f")" "paused 30" "... paused, nothing sent"
like "$(sql "select state_reason from campaigns where id = $f")" \
    "halt: it failed its check at its scheduled time" "... saying why"
is "$(twice)" 0 "nobody was messaged twice"

# A stop of run --due goes to its children, which drain; a kill -9 of it
# too. The next run --due finishes them.
bucket 5
g=$(draft 300 1000)
wa-campaign start --no-check --at 2099-01-01T00:00:00Z "$g" >/dev/null
due_now "$g"
exits 64 "run --due takes no id: 64" wa-campaign run --due "$g"
bg wa-campaign run --due --no-check 2>"$T/due.err"
due=$!
# more_sent N: campaign $g has more than N rows sent.
more_sent() {
	test "$(sent "$g")" -gt "$1"
}
ok "its child sends" wait_for 60 more_sent 0
kill -INT "$due"
wait "$due"
is "$?" 75 "SIGINT to run --due: 75 (its child stopped)"
is "$(sql "select count(*) from campaign_recipients where campaign_id = $g
    and status = 'sending'")" 0 "... no row left sending"
n=$(sent "$g")
h=$(draft 30 2000)
wa-campaign start --no-check --at 2099-01-01T00:00:00Z "$h" >/dev/null
bg wa-campaign run --due --no-check 2>"$T/due.err"
due=$!
ok "run --due again: its child sends" wait_for 60 more_sent "$n"
due_now "$h"
h_sent() {
	test "$(sent "$h")" -gt 0
}
ok "a campaign whose time comes meanwhile joins in" wait_for 60 h_sent ||
    note "$(cat "$T/due.err")"
is "$(state "$g")" running "... while the first still runs"
children=$(pgrep -P "$due" | tr '\n' ' ')
is "$(echo $children | wc -w | tr -d ' ')" 2 "... two children, a wa-campaign run each"
kill -KILL "$due"
wait "$due" 2>/dev/null
gone() {
	for p in $children; do
		kill -0 "$p" 2>/dev/null && return 1
	done
	return 0
}
ok "kill -9 of run --due: its children drain and end" wait_for 60 gone
is "$(sql "select count(*) from campaign_recipients where campaign_id
    in ($g, $h) and status = 'sending'")" 0 "... no row left sending"
bucket 1000
exits 0 "the next run --due completes it" wa-campaign run --due --no-check \
    2>/dev/null
is "$(sent "$g") $(state "$g") $(sent "$h") $(state "$h")" \
    "300 completed 30 completed" "... every row of both sent"
is "$(twice)" 0 "nobody was messaged twice"
fake_stop
done_testing
