#!/bin/sh
# Every program through Debian's pgbouncer in transaction pooling, with
# fewer server sessions (2) than clients: three pipelines, a wa-campaign
# run, wa-reconcile and the webhooks (wa-webhook to a spool that
# wa-status-ingest follows) at once, with WA_PG_POOLING=transaction
# (nothing prepared, nothing left on a session); then wa-status-ingest
# following a spool, alone on it. Every row is sent once; no
# prepared statement "already exists" or "does not exist". A bad
# WA_PG_POOLING is a configuration error (78).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"
pg_start
bouncer_start 2 || skip_all "no pgbouncer (make deps installs it)"

count() {
	sql "select count(*) from campaign_recipients
	    where campaign_id = $1 and status = '$2'"
}
# sent CAMPAIGN: its rows sent, whatever the webhooks said since.
sent() {
	sql "select count(*) from campaign_recipients
	    where campaign_id = $1 and status in ('sent', 'delivered', 'read')"
}
twice() {
	jq -r 'select(.wamid != null) | .to' "$FAKE_LOG" | sort | uniq -d |
	    wc -l | tr -d ' '
}

export DATABASE_URL="$BOUNCER" WA_PG_POOLING=transaction
export WA_APP_SECRET=bouncer-secret
bg wa-webhook --listen 127.0.0.1:0 --port-file "$T/hook.port" \
    --spool "$T/hooks" 2>"$T/webhook.err"
wait_for 30 test -s "$T/hook.port" || bail "wa-webhook did not start"
bg wa-status-ingest --follow "$T/hooks" 2>"$T/ingest.err"
ingest=$!
fake_start --rate 0 --latency-ms 5 --read-rate 0.5 \
    --webhook-url "http://127.0.0.1:$(cat "$T/hook.port")/"
# Four campaigns, 300 people each, nobody in two.
for i in 1 2 3 4; do
	c=$(campaign 0)
	recipients "$c" $((i * 1000 + 1)) $((i * 1000 + 300))
	eval "c$i=$c"
done

pipe() {
	wa-claim -c "$1" 2>"$T/claim$1.err" | wa-throttle -r 1000 |
	    wa-send 2>"$T/send$1.err" | wa-record >/dev/null 2>"$T/record$1.err"
}
pipe "$c1" & p1=$!
pipe "$c2" & p2=$!
pipe "$c3" & p3=$!
wa-campaign run -r 1000 "$c4" 2>"$T/run.err" & p4=$!
wa-reconcile >/dev/null 2>"$T/reconcile.err"
is "$?" 0 "wa-reconcile through pgbouncer: 0"
wait "$p1"
is "$?" 0 "pipeline 1 (wa-record's status): 0"
wait "$p2"
wait "$p3"
wait "$p4"
is "$?" 0 "wa-campaign run through pgbouncer: 0"
for c in "$c1" "$c2" "$c3" "$c4"; do
	is "$(sent "$c")" 300 "campaign $c: every row is sent"
done
is "$(twice)" 0 "nobody was messaged twice"
delivered() {
	test "$(sql "select count(*) from campaign_recipients
	    where status in ('delivered', 'read')")" = 1200
}
ok "the webhooks' statuses are all applied through it" wait_for 120 delivered
kill "$ingest"
wait "$ingest"
is "$?" 0 "wa-status-ingest, following through it, stops cleanly"
is "$(cat "$T"/*.err | grep -c 'prepared statement')" 0 \
    "no prepared statement went astray"
is "$(sql "select count(*) from pg_locks where locktype = 'advisory'")" 0 \
    "no advisory lock is left on a server session"
exits 78 "a bad WA_PG_POOLING: 78" env WA_PG_POOLING=statement \
    wa-claim -c "$c1" 2>"$T/pool.err"
like "$(cat "$T/pool.err")" "WA_PG_POOLING must be session or transaction" \
    "... saying so"

# wa-status-ingest follows a spool through it: statuses applied, one
# follower per spool (its lock file: no session lock holds here).
S=$T/spool
mkdir -p "$S"
c5=$(campaign 5)
sql "update campaign_recipients set status = 'sent', attempt = 1
    where campaign_id = $c5" >/dev/null
ids=$(sql "select string_agg(id::text, ' ' order by id) from (select id
    from campaign_recipients where campaign_id = $c5 order by id) x")
{
	printf '{"object":"whatsapp_business_account","entry":[{"id":"1",'
	printf '"changes":[{"field":"messages","value":{"statuses":['
	sep=""
	for i in $ids; do
		printf '%s{"id":"wamid.x%s","status":"delivered",' "$sep" "$i"
		printf '"timestamp":"1750000000","recipient_id":"1",'
		printf '"biz_opaque_callback_data":"wapipe:%s:1"}' "$i"
		sep=,
	done
	printf ']}}]}]}\n'
} >"$S/0000000000000001.ndjson"
exits 0 "wa-status-ingest --follow through pgbouncer: 0" \
    wa-status-ingest --follow "$S" --once
is "$(count "$c5" delivered)" 5 "... its statuses applied"
bg wa-status-ingest --follow "$S"
follower=$!
# (Its lock file open: flock(1) would take the lock itself to look.)
ok "a follower holds the spool" wait_for 30 sh -c \
    "ls -l /proc/$follower/fd 2>/dev/null | grep -q reader.lock"
wa-status-ingest --follow "$S" --once 2>"$T/second.err"
is "$?" 75 "a second follower of the spool: 75"
like "$(cat "$T/second.err")" "another wa-status-ingest follows" \
    "... saying why"
kill "$follower"
wait "$follower"
is "$?" 0 "the follower stops cleanly"
unset DATABASE_URL WA_PG_POOLING
fake_stop
done_testing
