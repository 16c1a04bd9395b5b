#!/bin/sh
# wa-record under faults: outage and unsent results (not attempts, never
# failures), errors kept per attempt, a batch Postgres refuses for one
# line, Postgres gone past --pg-timeout (results kept on disk, applied by
# the next run), kill -9 while waiting (wa-reconcile applies what it kept),
# a torn line on disk, and a Postgres restart mid-stream.
. "$(dirname "$0")/lib.sh"
# Postgres is stopped with -m immediate, a crash: commits must be on disk
# (in the page cache: fsync may stay off) when they are acknowledged.
PG_OPTIONS="-c synchronous_commit=on"
pg_start

# result ID ATTEMPT OUTCOME [EXTRA-JSON]: one send result line.
result() {
	printf '{"id":%s,"attempt":%s,"campaign_id":%s,"to":"+1555","result":{"outcome":"%s"%s}}\n' \
	    "$1" "$2" "$c" "$3" "${4:+,$4}"
}
claim() {
	wa-claim -c "$c" --once >/dev/null 2>&1
}
row() {
	sql "select status || ' ' || attempt || ' ' || coalesce(error_code::text,
	    '-') || ' ' || coalesce(error_class, '-') from campaign_recipients
	    where id = $1"
}
kept() {
	cat "$WA_STATE_DIR"/results/*.ndjson 2>/dev/null | grep -c ''
}

# Outage and unsent: back to pending, attempt not counted, never failed
# even at max_attempts; the campaign remembers the outage.
c=$(campaign 3)
sql "update campaigns set max_attempts = 1 where id = $c"
first=$(sql "select min(id) from campaign_recipients where campaign_id = $c")
claim
{
	result "$first" 1 retry '"class":"outage","error":{"title":"connect to graph.facebook.com: Connection refused"}'
	result $((first + 1)) 1 retry '"class":"unsent","error":{"title":"not sent: stopping"}'
	result $((first + 2)) 1 retry '"class":"transient","error":{"code":131000,"title":"Something went wrong"}'
} | wa-record --backoff-base 100000 --backoff-cap 100000 >/dev/null
is "$?" 0 "outage and unsent results are recorded"
is "$(row "$first")" "pending 0 - outage" \
    "outage: back to pending, the attempt not counted, not failed"
is "$(row $((first + 1)))" "pending 0 - unsent" "unsent: the same"
ok "outage: retried after a backoff" test "$(sql "select next_attempt_at >
    status_at from campaign_recipients where id = $first")" = t
ok "unsent: retried at once" test "$(sql "select next_attempt_at <=
    status_at from campaign_recipients where id = $first + 1")" = t
is "$(row $((first + 2)))" "failed 1 131000 transient" \
    "a real retry at max_attempts still fails the row"
is "$(sql "select count(*) from recipient_errors e join campaign_recipients r
    on r.id = e.recipient_id where r.campaign_id = $c")" 1 \
    "only the real attempt's error goes to the history"
is "$(sql "select outage_ended_at is null and outage_results = 1 and
    outage_reason like '%Connection refused' from campaigns
    where id = $c")" t "the campaign remembers the outage, ongoing"
wa-campaign status "$c" >"$T/status"
like "$(cat "$T/status")" "outage +the API unreachable since .*Connection refused; 1 results put back, 1 rows wait \(not failed\)" \
    "status shows the outage"
is "$(wa-campaign status --json "$c" | jq -c '.outage | [.ongoing, .results, .pending]')" \
    "[true,1,1]" "and --json"
exits 75 "wa-claim: a campaign with rows put back is not completed" \
    wa-claim -c "$c" --once -n 1 >"$T/claimed" 2>/dev/null
id=$(jq .id "$T/claimed")
result "$id" 1 sent '"class":"sent","wamid":"wamid.O1"' | wa-record >/dev/null
is "$(sql "select outage_ended_at is not null from campaigns
    where id = $c")" t "a result that reached the API ends the outage"
like "$(wa-campaign status "$c")" "outage +last: the API unreachable from .* to " \
    "status shows the last outage"

# A batch applied again (its answer lost: tests/87) is no news of the
# API: its sent line, on a row already sent, does not end the outage the
# batch itself began. (Before: outage_ended_at set by the second run.)
c=$(campaign 2)
first=$(sql "select min(id) from campaign_recipients where campaign_id = $c")
claim
{
	result "$first" 1 retry '"class":"outage","error":{"title":"connect: Connection refused"}'
	result $((first + 1)) 1 sent '"wamid":"wamid.O2"'
} >"$T/twice"
wa-record <"$T/twice" >/dev/null 2>&1
wa-record <"$T/twice" >/dev/null 2>&1
is "$(sql "select outage_ended_at is null and outage_results = 1 from campaigns
    where id = $c")" t "a batch applied twice: the outage it began goes on, counted once"

# Errors belong to their attempt: a row sent at its second try has no
# current error; the first try's error stays in the history.
c=$(campaign 1)
id=$(sql "select id from campaign_recipients where campaign_id = $c")
claim
result "$id" 1 retry '"error":{"code":131056,"title":"pair rate limit"}' |
    wa-record --backoff-base 1 --backoff-cap 1 >/dev/null
sql "update campaign_recipients set next_attempt_at = now() where id = $id"
claim
result "$id" 2 sent '"wamid":"wamid.H2"' | wa-record >/dev/null
is "$(row "$id")" "sent 2 - -" "sent at the second try: no current error"
is "$(sql "select attempt || ' ' || code from recipient_errors
    where recipient_id = $id")" "1 131056" "the first try's error is kept"
like "$(wa-campaign status "$c")" "every attempt's errors:
  131056 +1  pair rate limit" "status shows it"

# A batch Postgres refuses for one line: the rest is applied, that line
# rejected with its number. (Every value is checked where it enters, so
# a constraint of the test's stands in for what Postgres may refuse.)
c=$(campaign 6)
first=$(sql "select min(id) from campaign_recipients where campaign_id = $c")
claim
sql "alter table campaign_recipients add constraint not_d4 check
    (wamid is distinct from 'wamid.D4')" >/dev/null
for i in 0 1 2 3 4 5; do
	result $((first + i)) 1 sent "\"wamid\":\"wamid.D$i\""
done >"$T/in"
wa-record --reject "$T/rej" <"$T/in" >"$T/out" 2>"$T/err"
is "$?" 65 "a refused line makes the exit status 65"
like "$(cat "$T/err")" '<stdin>:5: postgres refused this result: .*not_d4' \
    "the line is named, with Postgres's reason"
is "$(cat "$T/rej")" "$(sed -n 5p "$T/in")" "and kept in --reject"
is "$(sql "select count(*) from campaign_recipients where campaign_id = $c
    and status = 'sent'")" 5 "every other line is applied"
is "$(grep -c '' "$T/out")" 5 "and echoed"
sql "alter table campaign_recipients drop constraint not_d4" >/dev/null

# Postgres gone past --pg-timeout: exit 69, every result kept on disk,
# applied by the next wa-record before its own input.
c=$(campaign 5)
first=$(sql "select min(id) from campaign_recipients where campaign_id = $c")
claim
for i in 0 1 2 3 4; do
	result $((first + i)) 1 sent "\"wamid\":\"wamid.P$i\""
done >"$T/in"
pg_stop
wa-record -n 2 --pg-timeout 1 <"$T/in" >"$T/out" 2>"$T/err"
is "$?" 69 "Postgres away past --pg-timeout: exit 69"
like "$(cat "$T/err")" "postgres unavailable .*waiting up to 1 s" \
    "says once that it waits"
like "$(cat "$T/err")" "5 results kept in $WA_STATE_DIR/results/" \
    "and where it kept the results"
is "$(kept)" 5 "every result read is on disk"
is "$(wc -c <"$T/out" | tr -d ' ')" 0 "nothing echoed: nothing committed"
pg_resume
wa-record </dev/null >/dev/null 2>"$T/err"
is "$?" 0 "the next wa-record exits 0"
like "$(cat "$T/err")" "applied 5 results kept on disk" "having applied them"
is "$(sql "select count(*) from campaign_recipients where campaign_id = $c
    and status = 'sent'")" 5 "all five are sent"
is "$(kept)" 0 "and the file is gone"

# kill -9 while waiting for Postgres: the batch is already on disk, and
# wa-reconcile applies it before it settles anything by guess.
c=$(campaign 3)
first=$(sql "select min(id) from campaign_recipients where campaign_id = $c")
claim
pg_stop
mkfifo "$T/fifo"
wa-record -n 3 <"$T/fifo" >/dev/null 2>"$T/err" &
rec=$!
exec 3>"$T/fifo"
for i in 0 1 2; do
	result $((first + i)) 1 sent "\"wamid\":\"wamid.K$i\""
done >&3
on_disk() {
	test "$(kept)" = 3
}
ok "waiting for Postgres, wa-record has the batch on disk" wait_for 60 on_disk
kill -9 "$rec"
wait "$rec" 2>/dev/null
exec 3>&-
pg_resume
sql "update campaign_recipients set claimed_at = now() - interval '1 hour'
    where campaign_id = $c"
wa-reconcile --stale-after 0 >"$T/out" 2>/dev/null
like "$(cat "$T/out")" "applied 3 results kept on disk" \
    "wa-reconcile applies what the killed wa-record kept"
is "$(sql "select string_agg(status || ' ' || wamid, ',' order by id) from
    campaign_recipients where campaign_id = $c")" \
    "sent wamid.K0,sent wamid.K1,sent wamid.K2" \
    "before moving stale rows: none becomes unknown"

# A line cut short on disk (a kill in the middle of a write) is skipped,
# with a word; the whole lines before it are applied.
c=$(campaign 2)
first=$(sql "select min(id) from campaign_recipients where campaign_id = $c")
claim
mkdir -p "$WA_STATE_DIR/results"
{
	result "$first" 1 sent '"wamid":"wamid.T0"'
	result $((first + 1)) 1 sent '"wamid":"wamid.T1"' | head -c 30
} >"$WA_STATE_DIR/results/0000000000001-1.ndjson"
wa-record </dev/null >/dev/null 2>"$T/err"
like "$(cat "$T/err")" "0000000000001-1.ndjson:2: a result cut short" \
    "a torn last line is named"
is "$(sql "select string_agg(status, ',' order by id) from
    campaign_recipients where campaign_id = $c")" "sent,sending" \
    "the whole line before it is applied"

# A Postgres restart mid-stream: wa-record waits, says so once, goes on;
# every result is applied.
c=$(campaign 3000)
first=$(sql "select min(id) from campaign_recipients where campaign_id = $c")
claim
awk -v f="$first" -v c="$c" 'BEGIN { for (i = 0; i < 3000; i++)
	printf "{\"id\":%d,\"attempt\":1,\"campaign_id\":%d,\"result\":{\"outcome\":\"sent\",\"wamid\":\"wamid.R%d\"}}\n", f + i, c, i }' \
    >"$T/in"
rm -f "$T/fifo"
mkfifo "$T/fifo"
wa-record -n 100 <"$T/fifo" >"$T/out" 2>"$T/err" &
rec=$!
exec 3>"$T/fifo"
head -1000 "$T/in" >&3
some() {
	test "$(grep -c '' "$T/out")" -ge 1000
}
ok "the first results are applied" wait_for 60 some
pg_stop
sed -n '1001,3000p' "$T/in" >&3 &
feeder=$!
waiting() {
	grep -q "waiting up to 300 s" "$T/err"
}
ok "Postgres stopped: wa-record says it waits" wait_for 60 waiting
(exec 3>&-; pg_resume)
wait "$feeder"
exec 3>&-
wait "$rec"
is "$?" 0 "after the restart it goes on and exits 0"
like "$(cat "$T/err")" "postgres is back after" "saying once it is back"
is "$(sql "select count(*) from campaign_recipients where campaign_id = $c
    and status = 'sent'")" 3000 "every result is applied"
is "$(kept)" 0 "nothing is left on disk"

done_testing
