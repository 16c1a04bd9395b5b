#!/bin/sh
# A batch whose answer is lost is applied again and changes nothing. The
# fault (tests/pgdrop.pl): a statement reaches Postgres and commits, then
# its answer and its connection are lost, as when the primary dies after
# its commit reached the standby. The program sees a connection lost
# without an answer, reconnects (lib/pg's policy) and runs the batch
# again. For wa-record (a) and wa-status-ingest (b): the rows after the
# replay are the rows the lost commit left, to the byte, and the rows a
# run without the fault leaves; the proxy's log shows the one drop. For
# wa-claim (c): the lost claim's rows go out once, by their token, and a
# pipeline whose claim lost its answer completes by itself.
#
# Each case runs in its own copy of one prepared database (CREATE
# DATABASE ... TEMPLATE): "base" without the fault, "lost" with it, so
# ids, claims and attempts are the same in both.
. "$(dirname "$0")/lib.sh"
pg_start

# copy NAME: a database NAME, a copy of postgres as it is now.
copy() {
	psql -X -q -d template1 -c "create database $1 template postgres"
}

# indb DB SQL: SQL's rows, in database DB.
indb() {
	psql -X -q -At -v ON_ERROR_STOP=1 -d "dbname=$1" -c "$2"
}

# state DB [exact]: every row of every table a batch of wa-record or
# wa-status-ingest may write, a line per column ("TABLE KEY COLUMN
# VALUE"), sorted: a diff names what changed. With "exact", every column
# but spool_checkpoints.updated_at, the time of the checkpoint's last
# write, which a batch applied again writes again (nothing reads it).
# Without, a time (now() differs from run to run) only says whether it
# is set.
state() {
	for t in campaigns:id campaign_recipients:id \
	    recipient_errors:recipient_id,attempt,code \
	    campaign_events:campaign_id,state \
	    unmatched_statuses:wamid,status spool_checkpoints:spool \
	    suppressions:scope,phone; do
		key="concat_ws('/', ${t#*:})"
		t=${t%%:*}
		if [ "${2:-}" = exact ]; then
			keep="not (k = 'updated_at' and '$t' =
			    'spool_checkpoints')"
			val=v
		else
			keep=true
			val="case when k in (select column_name from
			    information_schema.columns where table_name = '$t'
			    and data_type like 'timestamp%') then
			    to_jsonb(v <> 'null') else v end"
		fi
		indb "$1" "select '$t ' || $key || ' ' || k || ' ' || $val
		    from $t x, jsonb_each(to_jsonb(x)) e(k, v) where $keep
		    order by 1"
	done
}

# same FILE1 FILE2 DESCRIPTION: the files are equal; else the first
# lines of their diff are noted.
same() {
	if cmp -s "$1" "$2"; then
		ok "$3" true
	else
		ok "$3" false
		diff -u "$1" "$2" | head -30 | sed 's/^/  /' |
		    while IFS= read -r l; do note "$l"; done
	fi
}

# The fault itself, on a statement that is not idempotent: it commits,
# its answer is lost, and a client that runs it again counts twice. So a
# drop is a commit that happened (the cases below would pass with a drop
# before the commit, but prove nothing), and the comparisons below can
# see a batch applied twice.
pgdrop_start 'tally_bump'
sql "create table tally (n int); insert into tally values (0)"
for _ in 1 2 3; do
	psql -X -q -d "$PGDROP" -c "update tally set n = n + 1 /* tally_bump */" \
	    2>/dev/null && break
done
is "$(pgdrop_drops)" 1 'the proxy dropped one answer'
is "$(sql 'select n from tally')" 2 \
    'the dropped statement had committed: run again, it counted twice'
sql "drop table tally"

# (a) wa-record. Twelve rows claimed (attempt 1), then one batch of every
# outcome: sent (wamid), failed and retry (errors to recipient_errors),
# outage and unsent (no attempt: attempt back to 0; the outage counted by
# the campaign), unknown, halt (the campaign paused: an event), later.
c=$(campaign 12)
wa-claim -c "$c" -n 100 --once >/dev/null 2>&1
is "$(sql "select count(*) from campaign_recipients where campaign_id = $c
    and status = 'sending' and attempt = 1")" 12 'twelve rows claimed'
first=$(sql "select min(id) from campaign_recipients where campaign_id = $c")
# result K OUTCOME [EXTRA-JSON]: the result of row first+K.
result() {
	printf '{"id":%s,"attempt":1,"campaign_id":%s,"to":"+1555","result":{"outcome":"%s"%s}}\n' \
	    $((first + $1)) "$c" "$2" "${3:+,$3}"
}
{
	for k in 0 1 2 3; do
		result $k sent "\"wamid\":\"wamid.rec$k\",\"http_status\":200"
	done
	result 4 failed '"error":{"code":131026,"title":"Message undeliverable"}'
	result 5 retry '"class":"transient","error":{"code":131000,"title":"Something went wrong"}'
	result 6 retry '"class":"outage","error":{"title":"connect: Connection refused"}'
	result 7 retry '"class":"unsent","error":{"title":"not sent: stopping"}'
	result 8 unknown
	result 9 halt '"error":{"code":190,"title":"Access token has expired"}'
	result 10 sent '"wamid":"wamid.rec10"'
	result 11 retry '"class":"later","error":{"code":131049,"title":"healthy ecosystem"}'
} >"$T/results"
copy rec_base
copy rec_lost
copy rec_pooled

wa-record -d "dbname=rec_base" <"$T/results" >"$T/base.out" 2>"$T/base.err"
is "$?" 0 'without the fault: wa-record exits 0'

# With it: the batch (prepared: Bind names wa_record_apply) commits, its
# answer is held back while the committed rows are looked at, then lost.
pgdrop_arm 'wa_record_apply'
pgdrop_hold
# (Not bg: an asynchronous command's stdin would be /dev/null.)
wa-record -d "$PGDROP dbname=rec_lost" <"$T/results" >"$T/lost.out" \
    2>"$T/lost.err" &
rec=$!
t_pids="$t_pids $rec"
ok 'the batch committed, its answer held' pgdrop_held 2
state rec_lost exact >"$T/committed"
pgdrop_release
wait "$rec"
is "$?" 0 'with the fault: wa-record exits 0'
note "wa-record said: $(tr '\n' '|' <"$T/lost.err")"
is "$(pgdrop_drops)" 2 'the answer was dropped (one drop more)'
like "$(cat "$T/lost.err")" 'postgres unavailable' \
    'wa-record saw the connection lost'
is "$(grep -c 'not applied' "$T/lost.err")" 0 \
    'and does not call the lines the lost commit applied stale'
# What the replay did: anything it moved (a status, an attempt, a time, a
# counter, an error or an event added) differs from the lost commit's.
# This caught the replay ending the outage its own batch began
# (outage_ended_at and updated_at set: fixed in lib/pg/results.c, with
# tests/12's "a batch applied twice"); it catches too a fence opened to
# pending rows (the retry lines applied again: attempts given back
# twice, errors twice).
state rec_lost exact >"$T/replayed"
same "$T/committed" "$T/replayed" \
    'applied again, the batch changed nothing: every row as the lost commit left it'
# And what both did is what the batch does once without the fault (a
# time compared only as set or not: this too saw the outage ended).
state rec_base >"$T/base"
state rec_lost >"$T/lost"
same "$T/base" "$T/lost" 'the rows end as without the fault'
cmp -s "$T/results" "$T/lost.out"
is "$?" 0 'every result echoed once, after its commit'
# The same, spelt out.
is "$(indb rec_lost "select string_agg(status || ':' || attempt, ' ' order by id)
    from campaign_recipients where campaign_id = $c")" \
    'sent:1 sent:1 sent:1 sent:1 failed:1 pending:1 pending:0 pending:0 unknown:1 pending:0 sent:1 pending:1' \
    'statuses and attempts: each result applied once'
is "$(indb rec_lost "select count(*) || ' ' || count(distinct (recipient_id,
    attempt)) from recipient_errors")" '4 4' \
    'one error per failed attempt (failed, retry, halt, later), none twice'
is "$(indb rec_lost "select outage_results || ' ' || state from campaigns
    where id = $c")" '1 paused' 'the outage counted once; the halt paused'
is "$(indb rec_lost "select count(*) from campaign_events
    where campaign_id = $c and state = 'paused'")" 1 'one pause event'

# The same unprepared (WA_PG_POOLING=transaction: each run sends its SQL,
# which the trigger matches), without the hold.
pgdrop_arm 'wa_record_apply|AS r\(id, attempt, outcome'
WA_PG_POOLING=transaction wa-record -d "$PGDROP dbname=rec_pooled" \
    <"$T/results" >"$T/pooled.out" 2>"$T/pooled.err"
is "$?" 0 'unprepared, with the fault: wa-record exits 0'
is "$(pgdrop_drops)" 3 'its answer was dropped'
state rec_pooled >"$T/pooled"
same "$T/base" "$T/pooled" 'unprepared: the rows end as without the fault'

# (b) wa-status-ingest --follow, from a spool: two batches of five
# bodies (-n 5), the second dropped. It raises rows by wamid and by
# recipient id (one still sending, without wamid: it takes the
# status's), fails one (its error to recipient_errors), keeps a status
# whose wamid no row has (unmatched_statuses), opts a sender out
# (suppressions) and moves the spool's checkpoint.
c=$(campaign 8)
first=$(sql "select min(id) from campaign_recipients where campaign_id = $c")
sql "update campaign_recipients set status = 'sent', attempt = 1,
    wamid = 'wamid.st' || (id - $first) where campaign_id = $c;
    update campaign_recipients set status = 'sending', wamid = null
    where id = $first + 7" >/dev/null
# body K STATUS [EXTRA]: a webhook body with row first+K's status, to
# its number (the test's numbering: +1555 and K + 1 in seven digits).
body() {
	printf '{"object":"whatsapp_business_account","entry":[{"id":"1",'
	printf '"changes":[{"value":{"statuses":[{"id":"wamid.st%s",' "$1"
	printf '"recipient_id":"1555%07d",' $(($1 + 1))
	printf '"status":"%s","timestamp":"%s"%s}]},"field":"messages"}]}]}\n' \
	    "$2" $((1750000000 + $1)) "${3:-}"
}
# by K: row first+K's biz_opaque_callback_data.
by() {
	printf ',"biz_opaque_callback_data":"wapipe:%s:1"' $((first + $1))
}
S=$T/spool
mkdir "$S"
{
	body 0 delivered
	body 1 delivered
	body 2 delivered "$(by 2)"
	body 3 read
	body 4 delivered
	# The second batch, dropped.
	body 0 read
	body 5 failed "$(by 5),\"errors\":[{\"code\":131026,\"title\":\"Message undeliverable\"}]"
	body 7 delivered "$(by 7)"
	body 99 delivered
	printf '%s\n' '{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"value":{"metadata":{"phone_number_id":"106540352242922"},"contacts":[{"wa_id":"15550000006"}],"messages":[{"from":"15550000006","id":"wamid.in1","timestamp":"1750000100","type":"text","text":{"body":"STOP"}}]},"field":"messages"}]}]}'
} >"$S/0000000000000001.ndjson"
end="1:$(wc -c <"$S/0000000000000001.ndjson" | tr -d ' ')"
copy st_base
copy st_lost

follow() {
	wa-status-ingest --follow "$S" --once -n 5 --flush-ms 60000 "$@"
}
follow -d "dbname=st_base" 2>"$T/st_base.err"
is "$?" 0 'without the fault: wa-status-ingest exits 0'

# With it: the second batch (Bind names wa_status_apply) commits, its
# answer is held, then lost; wa-status-ingest sends it again on a new
# session (taking the spool's lock again: the old session's has gone
# with it, as with the old primary).
pgdrop_arm 'wa_status_apply' 2
pgdrop_hold
bg follow -d "$PGDROP dbname=st_lost" 2>"$T/st_lost.err"
st=$!
ok 'the second batch committed, its answer held' pgdrop_held 4
state st_lost exact >"$T/committed"
pgdrop_release
wait "$st"
is "$?" 0 'with the fault: wa-status-ingest exits 0'
note "wa-status-ingest said: $(tr '\n' '|' <"$T/st_lost.err")"
is "$(pgdrop_drops)" 4 'the answer was dropped (one drop more)'
# Caught, when tried: a status applied at equal rank (>= for >: the
# failure's error twice in recipient_errors), a kept status or an opt-out
# written again on conflict (received_at, added_at moved).
state st_lost exact >"$T/replayed"
same "$T/committed" "$T/replayed" \
    'applied again, the batch changed nothing: every row as the lost commit left it'
state st_base >"$T/base"
state st_lost >"$T/lost"
same "$T/base" "$T/lost" 'the rows end as without the fault'
# Spelt out.
is "$(indb st_lost "select string_agg(status || coalesce(':' || wamid, ''),
    ' ' order by id) from campaign_recipients where campaign_id = $c")" \
    'read:wamid.st0 delivered:wamid.st1 delivered:wamid.st2 read:wamid.st3 delivered:wamid.st4 failed:wamid.st5 sent:wamid.st6 delivered:wamid.st7' \
    'statuses: each applied once, the sending row with its wamid'
is "$(indb st_lost "select count(*) from recipient_errors")" 1 \
    'the failure recorded once'
is "$(indb st_lost "select wamid || ' ' || status from unmatched_statuses")" \
    'wamid.st99 delivered' 'the unmatched status kept once'
is "$(indb st_lost "select count(*) from suppressions
    where phone = '+15550000006'")" 1 'the opt-out added once'
is "$(indb st_lost "select segment || ':' || byte_offset
    from spool_checkpoints")" "$end" 'the checkpoint at the end of the spool'

# (c) wa-claim. Its second claim commits and its answer is lost: run
# again (lib/pg), it finds the lost claim's rows by their token and
# emits them with the rows of the second run; each row once, none left
# sending, each attempt counted once.
c=$(campaign 12)
pgdrop_arm 'wa_claim|wapipe_claim\(' 2
wa-claim -d "$PGDROP" -c "$c" -n 4 --once >"$T/claimed" 2>"$T/claim.err"
is "$?" 75 'with the fault: wa-claim --once exits 75 (rows are sending)'
is "$(pgdrop_drops)" 5 'the claim'"'"'s answer was dropped (one drop more)'
like "$(cat "$T/claim.err")" \
    "a claim's answer was lost with the server: its 4 rows, found by their token, go out now" \
    'wa-claim says so'
is "$(jq -r .id "$T/claimed" | sort | uniq | wc -l | tr -d ' ')" 12 \
    'every row is emitted'
is "$(wc -l <"$T/claimed" | tr -d ' ')" 12 '... each once'
is "$(sql "select string_agg(distinct status || ':' || attempt, ' ')
    from campaign_recipients where campaign_id = $c")" 'sending:1' \
    'every row sending, its attempt counted once'

# The whole pipeline, its claims through the fault: the campaign
# completes by itself, with no wa-reconcile, nobody messaged twice, one
# POST a message.
. "$(dirname "$0")/fake.sh"
fake_start --rate 0 --latency-ms 2
c=$(campaign 300)
pgdrop_arm 'wa_claim|wapipe_claim\(' 3
bg sh -c "wa-claim -d '$PGDROP' -c $c -n 50 2>'$T/claim2.err' |
    wa-throttle -r 1000 | wa-send 2>'$T/send.err' |
    wa-record >/dev/null 2>'$T/record.err'"
pipeline=$!
# (Were the lost claim's rows left sending, wa-claim would wait for them
# for ever: the bound turns that into a failure.)
completed() {
	test "$(sql "select state from campaigns where id = $c")" = completed
}
ok 'with a claim'"'"'s answer lost, the pipeline completes by itself' \
    wait_for 120 completed
completed || pkill -TERM -P "$pipeline"
wait "$pipeline"
is "$?" 0 '... and exits 0'
is "$(pgdrop_drops)" 6 '... one drop more'
like "$(cat "$T/claim2.err")" "a claim's answer was lost" '... said'
is "$(sql "select count(*) from campaign_recipients where campaign_id = $c
    and status = 'sent'")" 300 'every row is sent: 0 unknown, 0 lost'
is "$(jq -r 'select(.wamid != null) | .to' "$FAKE_LOG" | sort | uniq -d |
    wc -l | tr -d ' ')" 0 'nobody was messaged twice'
is "$(jq -s length "$FAKE_LOG")" 300 'one POST a message'
fake_stop

pgdrop_stop
done_testing
