#!/bin/sh
# Postgres fails over mid-campaign: a primary and a synchronous streaming
# standby, the pipeline connected to both (target_session_attrs=
# read-write); the primary is killed while the campaign runs and the
# standby promoted. Every stage waits, reconnects to the new primary and
# goes on: the campaign completes, nothing lost, nobody messaged twice.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"
PG_OPTIONS="-c synchronous_commit=on"
pg_start
pg_standby sync

# pipeline CAMPAIGN: the four stages on both servers; exit statuses in
# $T/rc.
pipeline() {
	{
		wa-claim -d "$PG_BOTH" -c "$1" 2>>"$T/claim.err"
		echo "claim $?" >>"$T/rc"
	} | wa-throttle -r 200 | wa-send --timeout-ms 1500 2>>"$T/send.err" |
	    wa-record -d "$PG_BOTH" -n 20 --backoff-base 100 \
	    --backoff-cap 400 >>"$T/recorded" 2>>"$T/record.err"
	echo "record $?" >>"$T/rc"
}

fake_start --rate 0 --latency-ms 20
c=$(campaign 600)
is "$(psql -X -At -d "$PG_BOTH" -c 'select pg_is_in_recovery()')" f \
    "the conninfo finds the primary"
pipeline "$c" &
run=$!
some_sent() {
	test "$(sql "select count(*) from campaign_recipients
	    where campaign_id = $c and status = 'sent'")" -ge 150
}
ok "the campaign is under way" wait_for 120 some_sent
pg_failover
note "failover after $(jq -s length "$FAKE_LOG") requests"
is "$(sql 'select pg_is_in_recovery()')" f "the standby is promoted"

# A claim whose answer was lost with the old primary is found again on
# the new one by its token and its rows go out: none is left sending.
completed() {
	test "$(sql "select state from campaigns where id = $c")" = completed
}
ok "after the failover the pipeline completes by itself" \
    wait_for 300 completed
completed || pkill -TERM -P "$run"
wait "$run"
is "$(sql "select count(*) from campaign_recipients where campaign_id = $c
    and status <> 'sent'")" 0 "every row is sent, none left sending"
grep -q "postgres unavailable" "$T/record.err"
is "$?" 0 "wa-record said it waited"
grep -q "postgres is back" "$T/record.err"
is "$?" 0 "and that Postgres was back"
is "$(grep -c 'record 0' "$T/rc")" "$(grep -c record "$T/rc")" \
    "wa-record exits 0 every time"
is "$(tail -1 "$T/rc" | grep -c 'record 0')" 1 "the last run ends well"
is "$(grep 'claim' "$T/rc" | tail -1)" "claim 0" \
    "wa-claim exits 0: the campaign is completed"
is "$(sql "select state from campaigns where id = $c")" completed \
    "completed in the table"
is "$(sql "select count(*) from campaign_recipients where campaign_id = $c
    and status = 'sent'")" 600 "every recipient is sent"
is "$(jq -r 'select(.wamid != null) | .to' "$FAKE_LOG" | sort | uniq -d)" \
    "" "nobody got two messages"
jq -r 'select(.wamid != null) | .wamid' "$FAKE_LOG" | sort >"$T/fake"
sql "select wamid from campaign_recipients where campaign_id = $c
    order by 1" >"$T/db"
ok "the wamids recorded are those the API gave" cmp -s "$T/fake" "$T/db"
is "$(ls "$WA_STATE_DIR/results" 2>/dev/null | wc -l | tr -d ' ')" 0 \
    "nothing is left on disk"

done_testing
