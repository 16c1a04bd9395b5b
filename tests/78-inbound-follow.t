#!/bin/sh
# wa-inbound: the stored inbound messages as NDJSON from a durable cursor.
# Caught up, it exits 0 and the cursor stays; a second cursor reads
# everything anew; --from starts at a time; --follow waits for more. A
# stop (75), a kill -9 and a Postgres restart lose nothing: every
# message comes out at least once. Its reader gone: 74.
. "$(dirname "$0")/lib.sh"

PG_OPTIONS="-c synchronous_commit=on"
pg_start

# messages FIRST LAST DAY: a webhook body per message, texts from
# +1555... FIRST to LAST, sent on 2026-12-DAY, into wa-status-ingest.
messages() {
	i=$1
	while [ "$i" -le "$2" ]; do
		printf '{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"value":{"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550783881","phone_number_id":"106540352242922"},"contacts":[{"profile":{"name":"P"},"wa_id":"1555%07d"}],"messages":[{"from":"1555%07d","id":"wamid.in%d","timestamp":"%s","type":"text","text":{"body":"hello %d"}}]},"field":"messages"}]}]}\n' \
		    "$i" "$i" "$i" "$(date -u -d "2026-12-$3 10:00:00" +%s)" "$i"
		i=$((i + 1))
	done | wa-status-ingest 2>/dev/null
}
ids() {
	jq -r .wamid "$@" | sed 's/wamid.in//' | sort -n | uniq | tr '\n' ' '
}

messages 1 30 01
wa-inbound >"$T/out1" 2>"$T/err"
is "$?" 0 "caught up: exit 0"
is "$(wc -l <"$T/out1" | tr -d ' ')" 30 "every message, one line each"
is "$(jq -c 'select(.wamid == "wamid.in7") | [.phone, .wa_id, .type, .text,
    .phone_number_id, .sent_at, .window_closes_at, .raw.text.body]' \
    "$T/out1")" \
    '["+15550000007","15550000007","text","hello 7","106540352242922","2026-12-01T10:00:00Z","2026-12-02T10:00:00Z","hello 7"]' \
    "a message's fields, its window closing 24 h after it"
is "$(jq -r .id "$T/out1" | sort -n -c && echo sorted)" sorted \
    "in the order they were stored"
wa-inbound >"$T/out2"
is "$(wc -l <"$T/out2" | tr -d ' ')" 0 "the cursor moved: nothing again"
messages 31 35 02
wa-inbound >"$T/out3"
is "$(ids "$T/out3")" "31 32 33 34 35 " "only what came since"
wa-inbound --cursor other -n 7 >"$T/out4"
is "$(wc -l <"$T/out4" | tr -d ' ')" 35 \
    "another cursor reads everything, 7 at a time"
wa-inbound --cursor third --from 2026-12-02T00:00:00Z >"$T/out5"
is "$(ids "$T/out5")" "31 32 33 34 35 " "--from: from that time on"
exits 64 "--from that is no time: 64" wa-inbound --from yesterday
exits 64 "an operand: 64" wa-inbound extra

# --follow: what comes in comes out; a stop is 75, the cursor saved.
bg wa-inbound --follow --cursor f --poll-ms 100 >"$T/f1" 2>/dev/null
follower=$!
lines() {
	test "$(cat "$@" | wc -l)" -ge "$n"
}
n=35
ok "--follow writes what is there" wait_for 30 lines "$T/f1"
messages 36 40 03
n=40
ok "... and what comes in" wait_for 30 lines "$T/f1"
kill -TERM "$follower"
wait "$follower"
is "$?" 75 "SIGTERM: 75"
messages 41 45 03
bg wa-inbound --follow --cursor f --poll-ms 100 >"$T/f2" 2>/dev/null
follower=$!
n=5
ok "restarted, it goes on from its cursor" wait_for 30 lines "$T/f2"
is "$(ids "$T/f2")" "41 42 43 44 45 " "... with what came meanwhile, nothing again"

# A Postgres restart is waited out; a kill -9 loses nothing.
pg_stop
pg_resume
messages 46 50 04
n=10
ok "after a Postgres restart it goes on" wait_for 60 lines "$T/f2"
kill -KILL "$follower"
wait "$follower" 2>/dev/null
messages 51 55 04
wa-inbound --cursor f >"$T/f3"
is "$(ids "$T/f1" "$T/f2" "$T/f3")" "$(seq 1 55 | tr '\n' ' ')" \
    "after a kill -9, every message came out at least once"

# Its output failing: 74, and the cursor stays before what was lost.
wa-inbound --cursor g 2>"$T/err" >/dev/full
is "$?" 74 "stdout full: 74"
like "$(cat "$T/err")" "write to stdout" "... saying so"
is "$(sql "select last_id from inbound_cursors where name = 'g'")" 0 \
    "... the cursor where it was"
done_testing
