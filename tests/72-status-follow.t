#!/bin/sh
# wa-status-ingest --follow: wa-webhook's spool end to end, the checkpoint
# committed with each batch, segments, one follower per spool, and kill -9
# mid-batch: nothing applied twice, nothing lost.
. "$(dirname "$0")/lib.sh"

export WA_APP_SECRET=app-secret-2 WA_VERIFY_TOKEN=v
pg_start
cid=$(campaign 340)
sql "update campaign_recipients set status = 'sent', attempt = 1,
    wamid = 'wamid.' || id" >/dev/null

# body STATUS FIRST-ID COUNT [EXTRA-STATUS]: COUNT statuses of rows FIRST..
body() {
	printf '{"object":"whatsapp_business_account","entry":[{"id":"1",'
	printf '"changes":[{"value":{"statuses":['
	i=$2
	while [ "$i" -lt $(($2 + $3)) ]; do
		[ "$i" -gt "$2" ] && printf ','
		printf '{"id":"wamid.%s","status":"%s","timestamp":"%s",' \
		    "$i" "$1" $((1750000000 + i))
		printf '"recipient_id":"1555%07d",' "$i"
		printf '"biz_opaque_callback_data":"wapipe:%s:1"}' "$i"
		i=$((i + 1))
	done
	[ -n "${4:-}" ] && printf ',%s' "$4"
	printf ']},"field":"messages"}]}]}\n'
}

status_of() {
	sql "select string_agg(distinct status, ',') from campaign_recipients
	    where id between $1 and $2"
}

metric() {
	unlabel "$2" | grep "^$1 " | awk '{ print $2 }'
}

checkpoint() {
	sql "select segment || ':' || byte_offset from spool_checkpoints
	    where spool = '$1'"
}

S=$T/spool
start_webhook() {
	rm -f "$T/port"
	bg wa-webhook -s "$S" --listen 127.0.0.1:0 --port-file "$T/port"
	wh=$!
	wait_for 30 test -s "$T/port" || bail "wa-webhook did not start"
	port=$(cat "$T/port")
}

post() {
	curl -s -o /dev/null -w '%{http_code}' -H "X-Hub-Signature-256: $(
	    printf %s "$1" | openssl dgst -sha256 -hmac "$WA_APP_SECRET" |
	    sed 's/^.*= */sha256=/')" --data-binary "$1" \
	    "http://127.0.0.1:$port/"
}

follow() {
	wa-status-ingest --follow "$@" 2>>"$T/err"
}

# End to end: signed POSTs, the spool, the rows.
start_webhook
codes=""
for i in 1 2 3 4; do
	codes="$codes$(post "$(body delivered "$i" 1)")"
done
codes="$codes$(post "$(body delivered 5 1 | jq .)")"
is "$codes" 200200200200200 'five bodies acknowledged (one pretty-printed)'
follow "$S" --once --metrics "$T/m1"
is "$(status_of 1 5)" delivered 'applied from the spool'
seg=$(ls "$S" | grep ndjson)
is "$(checkpoint "$S")" "$(echo "${seg%.ndjson}" | sed "s/^0*//"):$(wc -c <"$S/$seg" | tr -d ' ')" \
    'the checkpoint is the end of the segment'
follow "$S" --once --metrics "$T/m2"
is "$(metric wa_status_ingest_bodies_total "$T/m2")" 0 \
    'a second run reads nothing again'
post "$(body read 6 1)" >/dev/null
follow "$S" --once --metrics "$T/m3"
is "$(metric wa_status_ingest_bodies_total "$T/m3")" 1 \
    'a third run reads only the new body'
is "$(status_of 6 6)" read 'and applies it'

# A restart of the webhook starts a new segment; --prune removes the
# segments before the checkpoint's.
kill "$wh"
wait "$wh"
start_webhook
post "$(body read 7 1)" >/dev/null
follow "$S" --once --prune
is "$(status_of 7 7)" read 'the next segment is followed'
is "$(ls "$S" | grep -c ndjson)" 1 '--prune removed the finished segment'

# One follower per spool; a live follower applies bodies as they come.
bg wa-status-ingest --follow "$S" --metrics "$T/m4"
fo=$!
wait_for 30 sh -c "test \$(psql -Atc \"select count(*) from pg_locks
    where locktype = 'advisory'\") = 1"
exits 75 'a second follower of the same spool is refused' \
    wa-status-ingest --follow "$S" --once 2>"$T/second.err"
like "$(cat "$T/second.err")" "another wa-status-ingest follows" '... saying why'

post "$(body read 8 1)" >/dev/null
ok 'the live follower applies a new body' \
    wait_for 30 sh -c "test \"\$(psql -Atc 'select status from
    campaign_recipients where id = 8')\" = read"
# A status that outran its wamid is applied once wa-record writes it.
sql "update campaign_recipients set wamid = null, status = 'sending'
    where id = 9" >/dev/null
post "$(body delivered 9 1 | sed 's/,"biz_opaque_callback_data":"wapipe:9:1"//')" \
    >/dev/null
ok 'the follower keeps a status whose wamid is unknown' \
    wait_for 30 sh -c "test \"\$(psql -Atc 'select count(*) from
    unmatched_statuses')\" = 1"
sql "update campaign_recipients set wamid = 'wamid.9' where id = 9"
ok 'and applies it soon after the wamid is recorded' \
    wait_for 30 sh -c "test \"\$(psql -Atc 'select status from
    campaign_recipients where id = 9')\" = delivered"
kill "$fo"
exits 0 'SIGTERM: the follower exits 0' wait "$fo"
kill "$wh"
wait "$wh"

# kill -9 mid-batch. 30 bodies of 11 statuses (10 rows read, 1 unknown
# wamid kept), batches of 100 statuses: bodies 1-10, 11-20, 21-30. A
# lock on row 161 (body 16) holds the second batch's statement.
K=$T/crash
mkdir "$K"
for k in $(seq 0 29); do
	body read $((11 + 10 * k)) 10 \
	    "{\"id\":\"wamid.ghost$k\",\"status\":\"sent\",\"timestamp\":\"1\"}"
done >"$K/0000000000000001.ndjson"
first10=$(head -10 "$K/0000000000000001.ndjson" | wc -c | tr -d ' ')
PGAPPNAME=locker psql -Atq -c "begin" -c "select 1 from campaign_recipients
    where id = 161 for update" -c "select pg_sleep(300)" >/dev/null 2>&1 &
t_pids="$t_pids $!"
wait_for 30 sh -c "test \$(psql -Atc \"select count(*) from pg_stat_activity
    where application_name = 'locker' and query like '%pg_sleep%'\") = 1"
bg wa-status-ingest --follow "$K" -n 100 --flush-ms 60000
in=$!
ok 'the second batch waits on the lock' \
    wait_for 30 sh -c "test \$(psql -Atc \"select count(*) from
    pg_stat_activity where application_name = 'wa-status-ingest' and
    wait_event_type = 'Lock'\") = 1"
is "$(checkpoint "$K")" "1:$first10" 'the first batch is committed'
is "$(status_of 11 110)" read 'its rows are read'
kill -9 "$in"
wait "$in" 2>/dev/null
# The server notices a dead client only when it writes to it: end the
# orphaned statement, as a lost connection would.
sql "select pg_terminate_backend(pid) from pg_stat_activity
    where application_name = 'wa-status-ingest'" >/dev/null
wait_for 30 sh -c "test \$(psql -Atc \"select count(*) from pg_stat_activity
    where application_name = 'wa-status-ingest'\") = 0"
sql "select pg_terminate_backend(pid) from pg_stat_activity
    where application_name = 'locker'" >/dev/null
is "$(checkpoint "$K")" "1:$first10" 'after kill -9 the checkpoint is unmoved'
is "$(status_of 111 310)" sent 'and nothing of the killed batch applied'
is "$(sql 'select count(*) from unmatched_statuses')" 10 \
    'only the first batch kept its unknown statuses'
follow "$K" --once --metrics "$T/m5"
is "$(metric wa_status_ingest_bodies_total "$T/m5")" 20 \
    'the restart reads the 20 bodies after the checkpoint, not 30'
is "$(status_of 11 310)" read 'all 300 rows are read: nothing lost'
is "$(sql 'select count(*) from unmatched_statuses')" 30 \
    'each unknown status kept once'
is "$(checkpoint "$K")" "1:$(wc -c <"$K/0000000000000001.ndjson" |
    tr -d ' ')" 'the checkpoint is at the end'

# kill -9 with a batch read but not yet applied: it is read again.
body delivered 311 10 >"$K/0000000000000002.ndjson"
body delivered 321 10 >>"$K/0000000000000002.ndjson"
bg wa-status-ingest --follow "$K" -n 1000 --flush-ms 600000
in=$!
# Wait until its read position is the end of the segment.
seg2=$(readlink -f "$K/0000000000000002.ndjson")
read_all() {
	for fd in /proc/"$in"/fd/*; do
		[ "$(readlink "$fd")" = "$seg2" ] || continue
		pos=$(awk '/^pos:/ { print $2 }' \
		    "/proc/$in/fdinfo/${fd##*/}")
		[ "$pos" -eq "$(wc -c <"$seg2")" ] && return 0
	done
	return 1
}
ok 'the follower has read the new bodies' wait_for 30 read_all
kill -9 "$in"
wait "$in" 2>/dev/null
is "$(status_of 311 330)" sent 'killed before applying: nothing applied'
follow "$K" --once
is "$(status_of 311 330)" delivered 'the restart applies them'

# SIGTERM with a batch in hand: it is applied before the exit.
body read 311 10 >"$K/0000000000000003.ndjson"
bg wa-status-ingest --follow "$K" -n 1000 --flush-ms 600000
in=$!
seg2=$(readlink -f "$K/0000000000000003.ndjson")
ok 'the follower has read the next bodies' wait_for 30 read_all
kill "$in"
exits 0 'SIGTERM: exits 0' wait "$in"
is "$(status_of 311 320)" read 'the batch in hand was applied'

# A torn last line (a crash mid-write) is skipped once the next segment
# exists; a checkpoint past a segment's end (data lost with the page
# cache) goes on with the next segment.
D=$T/torn
mkdir "$D"
{ body read 331 1; body read 332 1 | head -c 50; } >"$D/0000000000000001.ndjson"
body read 333 1 >"$D/0000000000000002.ndjson"
follow "$D" --once
is "$(status_of 331 331)/$(status_of 332 332)/$(status_of 333 333)" \
    read/sent/read 'the torn line is skipped, the rest applied'
like "$(cat "$T/err")" '0000000000000001.ndjson: 50 bytes after the last line skipped' \
    'and reported'
sql "update spool_checkpoints set byte_offset = 99999 where spool = '$D'"
body read 334 1 >"$D/0000000000000003.ndjson"
follow "$D" --once
is "$(status_of 334 334)" read 'a checkpoint past the end: on to the next'
like "$(cat "$T/err")" 'is shorter .* than the checkpoint' 'reported'
# A line over 4 MiB between two bodies: rejected, and copied to --reject
# whole from its segment (here 9 MiB of random bytes, so a misplaced
# piece shows); the bodies around it are applied. --prune then removes
# the segment: the reject file is all that is left of the line.
L=$T/long
mkdir "$L"
head -c 9449881 /dev/urandom | tr '\n' x >"$T/long.line"
echo >>"$T/long.line"
{ body read 335 1; cat "$T/long.line"; body read 336 1; } \
    >"$L/0000000000000001.ndjson"
body read 337 1 >"$L/0000000000000002.ndjson"
exits 65 'a line over 4 MiB in the spool' \
    wa-status-ingest --follow "$L" --once --prune --reject "$T/long.rej" \
    2>"$T/long.err"
is "$(status_of 335 337)" read 'the bodies around it are applied'
ok 'it is in --reject whole, byte for byte' cmp -s "$T/long.line" "$T/long.rej"
like "$(cat "$T/long.err")" \
    '^wa-status-ingest: /.*/0000000000000001\.ndjson:2: line longer than 4194304 bytes$' \
    'it is reported with its segment and line number'
is "$(ls "$L" | grep ndjson)" 0000000000000002.ndjson \
    '--prune removed its segment'
exits 0 'a second run rejects nothing again' \
    wa-status-ingest --follow "$L" --once --reject "$T/long.rej"
ok 'and the reject copy is unchanged' cmp -s "$T/long.line" "$T/long.rej"

# A torn last line over 4 MiB: skipped as well, its whole size said.
D=$T/torn2
mkdir "$D"
{ body read 338 1; head -c 6000000 /dev/zero | tr '\0' a; } \
    >"$D/0000000000000001.ndjson"
body read 339 1 >"$D/0000000000000002.ndjson"
exits 0 'a torn line over 4 MiB is no rejected line' \
    wa-status-ingest --follow "$D" --once 2>"$T/torn2.err"
is "$(status_of 338 339)" read 'the bodies around it are applied'
like "$(cat "$T/torn2.err")" \
    '0000000000000001.ndjson: 6000000 bytes after the last line skipped' \
    'and its size is said'

# A line of exactly 4 MiB is taken; one byte more is not, as from stdin
# (tests/15-input-bytes.t).
E=$T/edge
mkdir "$E"
{
	printf '{"p":"'
	head -c $((4194304 - 8)) /dev/zero | tr '\0' a
	printf '"}\n'
	printf '{"p":"'
	head -c $((4194304 - 7)) /dev/zero | tr '\0' a
	printf '"}\n'
} >"$E/0000000000000001.ndjson"
exits 65 'a spool line of 4 MiB + 1 byte is rejected' \
    wa-status-ingest --follow "$E" --once --reject "$T/edge.rej" \
    2>"$T/edge.err"
is "$(wc -c <"$T/edge.rej" | tr -d ' ')" 4194306 \
    'only it: one of exactly 4 MiB is taken'
like "$(cat "$T/edge.err")" 'ndjson:2: line longer than 4194304 bytes' \
    'it is reported with its number'

exits 66 'a spool that does not exist' \
    wa-status-ingest --follow "$T/nope" --once 2>/dev/null

done_testing
