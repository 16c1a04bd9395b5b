#!/bin/sh
# Opt-outs that come back from Meta: a person who answers an opt-out
# keyword (STOP, ARRÊT, ...: optout_keywords) and a send refused or
# failed with 131050 are suppressed for the number, through wa-webhook
# and wa-status-ingest; a later campaign on the number ends their rows
# 'suppressed' and never sends to them. Odd inbound messages spoil
# nothing; a STOP is applied once however often its body is read.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"
pg_start
PN=106540352242922

# pipeline CAMPAIGN: the four stages, to the end.
pipeline() {
	wa-claim -c "$1" 2>>"$T/claim.err" |
	    wa-throttle -r 500 2>>"$T/throttle.err" |
	    wa-send --timeout-ms 5000 2>>"$T/send.err" |
	    wa-record >/dev/null 2>>"$T/record.err"
}

# say FROM TEXT [NUMBER]: the person FROM writes TEXT to NUMBER (ours by
# default), through the fake's inbound webhook; prints the HTTP status.
say() {
	jq -cn --arg f "$1" --arg t "$2" '{from: $f, text: $t}' |
	    curl -s -o /dev/null -w '%{http_code}' --data-binary @- \
	    -H "Authorization: Bearer $WA_TOKEN" \
	    "http://127.0.0.1:$FAKE_PORT/v21.0/${3:-$PN}/inbound"
}

# raw JSON: a request to the inbound endpoint as it is.
raw() {
	printf %s "$1" | curl -s -o /dev/null -w '%{http_code}' \
	    --data-binary @- -H "Authorization: Bearer $WA_TOKEN" \
	    "http://127.0.0.1:$FAKE_PORT/v21.0/$PN/inbound"
}

suppressed() {
	test "$(sql "select count(*) from suppressions
	    where scope = '${2:-$PN}' and phone = '$1'")" = 1
}

n_suppressed() {
	sql "select count(*) from suppressions"
}

# sends PHONE: how many sends to PHONE the fake has seen (its log has
# the inbound messages too, with the sender as "to").
sends() {
	jq -r 'select(.outcome != "inbound") | .to' "$FAKE_LOG" |
	    grep -c -x -F -- "$1"
}

row() {
	sql "select status || ' ' || coalesce(error_code::text, '-')
	    from campaign_recipients where campaign_id = $1 and phone = '$2'"
}

metric() {
	unlabel "$T/m" | grep "^$1 " | awk '{ print $2 }'
}

export WA_APP_SECRET=optout-secret
bg wa-webhook --listen 127.0.0.1:0 --port-file "$T/hook.port" \
    --spool "$T/spool" 2>"$T/webhook.err"
wait_for 30 test -s "$T/hook.port" || bail "wa-webhook did not start"
bg wa-status-ingest --follow "$T/spool" --metrics "$T/m" 2>"$T/ingest.err"
ing=$!
# 03 is refused with 131050 at once; 08 is accepted, then fails with
# 131050 in its webhook; 07 answers STOP after its statuses.
fake_start --rate 0 --pair-ms 0 --latency-ms 5 \
    --webhook-url "http://127.0.0.1:$(cat "$T/hook.port")/" \
    --webhook-delay-ms 20 --webhook-linger-ms 10 --read-rate 0 \
    --script 0003=131050 --script 0008=fail:131050 \
    --script 0007=reply:STOP

# (a) People answer before any campaign.
is "$(say +15550000001 'Stop ')" 200 "the fake takes an inbound text"
is "$(say 15550000002 'ARRÊT')" 200 "... from digits without + too"
say +15550000005 'stop please' >/dev/null
say +15550000006 'STOP' 999000111 >/dev/null
say +15550000010 '  basta  ' >/dev/null
ok "'Stop ' opts its sender out of the number written to" \
    wait_for 60 suppressed +15550000001
ok "'ARRÊT' too (Unicode lower case)" wait_for 60 suppressed +15550000002
ok "'  basta  ' too" wait_for 60 suppressed +15550000010
ok "'STOP' to another number opts out of that number only" \
    wait_for 60 suppressed +15550000006 999000111
is "$(sql "select reason from suppressions where phone = '+15550000001'")" \
    'inbound "Stop"' "the reason says what was written"
is "$(sql "select count(*) from suppressions
    where phone in ('+15550000005', '+15550000006') and scope = '$PN'")" 0 \
    "'stop please' opts nobody out"

c1=$(campaign 10)
pipeline "$c1"
is "$(row "$c1" +15550000001)" "suppressed -" \
    "campaign 1: the row of one who said Stop ends suppressed"
is "$(row "$c1" +15550000002)" "suppressed -" "so does ARRÊT's"
is "$(row "$c1" +15550000010)" "suppressed -" "and basta's"
like "$(row "$c1" +15550000005)" "^(sent|delivered) -$" \
    "'stop please' is sent to"
like "$(row "$c1" +15550000006)" "^(sent|delivered) -$" \
    "one who opted out of another number is sent to"
is "$(sends +15550000001)$(sends +15550000002)$(sends +15550000010)" 000 \
    "Meta never received a send to the suppressed"

# (b) 131050 at once, and in a webhook; and 07's STOP after campaign 1.
is "$(row "$c1" +15550000003)" "failed 131050" \
    "a send refused with 131050 fails with its code"
ok "and its person is suppressed (the trigger)" \
    wait_for 10 suppressed +15550000003
ok "a 131050 in a failed webhook suppresses too" \
    wait_for 60 suppressed +15550000008
ok "the webhook's failure reaches the row" \
    wait_for 60 test "$(row "$c1" +15550000008)" = "failed 131050"
ok "the person who answered STOP to campaign 1 is suppressed" \
    wait_for 60 suppressed +15550000007
is "$(sql "select reason from suppressions where phone = '+15550000003'")" \
    "error 131050: opted out" "the reason says 131050"

c2=$(campaign 10)
pipeline "$c2"
is "$(sql "select string_agg(right(phone, 2), ' ' order by phone)
    from campaign_recipients where campaign_id = $c2
    and status = 'suppressed'")" "01 02 03 07 08 10" \
    "campaign 2: every person suppressed ends suppressed"
is "$(sql "select string_agg(right(phone, 2), ' ' order by phone)
    from campaign_recipients where campaign_id = $c2
    and status <> 'suppressed'")" "04 05 06 09" "the others are sent to"
is "$(sends +15550000003) $(sends +15550000007) $(sends +15550000008)" \
    "1 1 1" "campaign 2 sent nothing to those suppressed by campaign 1"
is "$(sends +15550000004)" 2 "the others got both campaigns"

# (c) Odd inbound messages: counted, skipped, spoiling nothing.
is "$(raw '{"message":{"type":"text","text":{"body":"STOP"}}}')" 200 \
    "the fake sends a message as given"
raw '{"message":{"from":"15550000009","type":"image","image":{"id":"1"}}}' \
    >/dev/null
raw '{"message":{"from":"15550000009","type":"text"}}' >/dev/null
raw '{"message":{"from":"1555000000x","type":"text","text":{"body":"STOP"}}}' \
    >/dev/null
raw '{"message":{"from":"15550000009","type":"text","text":{"body":5}}}' \
    >/dev/null
raw '{"message":{"from":"15550000009","type":"text","text":"STOP"}}' \
    >/dev/null
is "$(raw '{"message":[1]}')" 400 "a message that is not an object: 400"
is "$(raw '{"text":"STOP"}')" 400 "no sender: 400"
say +15550000011 STOP >/dev/null
ok "a STOP after odd messages is applied" \
    wait_for 60 suppressed +15550000011
ok "... the odd ones are counted as skipped" \
    metrics_now "$ing" "$T/m"
is "$(metric 'wa_status_ingest_skipped_total{kind="inbound_message"}')" 6 \
    "6 inbound messages skipped"
is "$(sql "select count(*) from suppressions where phone = '+15550000009'")" \
    0 "none of them opts anyone out"
ok "inbound texts are counted" \
    test "$(metric wa_status_ingest_inbound_texts_total)" -ge 7
is "$(metric wa_status_ingest_optouts_total)" 6 \
    "opt-outs by keyword are counted (01 02 06 07 10 11)"

# One body holding odd messages, a keyword and a status: all in one batch.
sql "insert into campaign_recipients (campaign_id, phone, template_params,
    status, attempt, wamid) values ($c2, '+15550000099', '[]', 'sent', 1,
    'wamid.c')" >/dev/null
msgs='{"from":"15550000012","type":"text","text":{"body":"Stop"}},'
msgs=$msgs'{"type":"text","text":{"body":"stop"}},'
msgs=$msgs'{"from":"15550000013","type":"sticker","sticker":{}},'
msgs=$msgs'{"from":"15550000014","type":"text","text":{"body":"stop\u0000"}},'
msgs=$msgs'{"from":"15550000015","type":"text","text":{"body":"'
msgs=$msgs$(printf 'x%.0s' $(seq 1 200))'"}}'
printf '%s\n' \
    '{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"value":{"metadata":{"phone_number_id":"'$PN'"},"messages":['"$msgs"'],"statuses":[{"id":"wamid.c","status":"delivered","timestamp":"1750000000","recipient_id":"15550000099"}]},"field":"messages"},{"value":{"messages":[{"from":"15550000016","type":"text","text":{"body":"stop"}}]},"field":"messages"}]}]}' \
    >"$T/odd"
wa-status-ingest <"$T/odd" 2>"$T/odd.err"
is "$?" 0 "a body with odd messages is no error (exit 0)"
ok "its keyword opts out" suppressed +15550000012
is "$(sql "select count(*) from suppressions where phone in
    ('+15550000014', '+15550000015', '+15550000016')")" 0 \
    "a text with a NUL, a long text, one with no phone_number_id: nobody"
is "$(row "$c2" +15550000099)" "delivered -" "the body's status is applied"

# Postgres refusing part of a batch loses none of the rest: a status it
# refuses, then an opt-out it refuses (constraints of the test's stand
# in for what it may refuse; every value is checked where it enters).
stop() {
	printf '{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"value":{"metadata":{"phone_number_id":"%s"},"messages":[{"from":"%s","type":"text","text":{"body":"STOP"}}]},"field":"messages"}]}]}\n' "$PN" "$1"
}
sql "insert into campaign_recipients (campaign_id, phone, template_params,
    status, attempt, wamid) values ($c2, '+15550000098', '[]', 'sent', 1,
    'wamid.r');
    alter table campaign_recipients add constraint not_r check
    (wamid is distinct from 'wamid.r' or status <> 'delivered');
    alter table suppressions add constraint not_19 check
    (phone <> '+15550000019')" >/dev/null
{
	stop 15550000018
	printf '%s\n' '{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"value":{"statuses":[{"id":"wamid.r","status":"delivered","timestamp":"1750000000","recipient_id":"15550000098"}]},"field":"messages"}]}]}'
	stop 15550000019
	stop 15550000020
} | wa-status-ingest 2>"$T/refused.err"
is "$?" 65 "a status and an opt-out Postgres refuses: exit 65"
like "$(cat "$T/refused.err")" "<stdin>:2: postgres refused .*not_r" \
    "the status is named by its line"
like "$(cat "$T/refused.err")" "<stdin>:3: postgres refused .*not_19" \
    "so is the opt-out"
ok "the batch's other opt-outs are applied" \
    test "$(sql "select count(*) from suppressions
    where phone in ('+15550000018', '+15550000020')")" = 2
sql "alter table campaign_recipients drop constraint not_r;
    alter table suppressions drop constraint not_19" >/dev/null

# (d) SIGTERM mid-way and a restart: each STOP applied once.
seq 100001 103000 | awk -v pn="$PN" '{
	printf "{\"object\":\"whatsapp_business_account\",\"entry\":[{\"id\":\"1\",\"changes\":[{\"value\":{\"metadata\":{\"phone_number_id\":\"%s\"},\"messages\":[{\"from\":\"1555%07d\",\"type\":\"text\",\"text\":{\"body\":\"STOP\"}}]},\"field\":\"messages\"}]}]}\n", pn, $1
}' >"$T/many"
before=$(n_suppressed)
mkfifo "$T/fifo"
# The first half, then the input stays open: the rest never comes.
{ head -1500 "$T/many"; until test -e "$T/go"; do sleep 0.05; done; } \
    >"$T/fifo" &
feeder=$!
t_pids="$t_pids $feeder"
wa-status-ingest -n 10 <"$T/fifo" 2>"$T/kill.err" &
half=$!
half_done() {
	test "$(n_suppressed)" = $((before + 1500))
}
ok "the first half is applied" wait_for 60 half_done
sql "select phone || ' ' || added_at from suppressions
    where phone like '+1555010%' order by phone" >"$T/first"
wait_for 30 catches "$half" TERM
kill -TERM "$half"
wait "$half"
is "$?" 0 "SIGTERM mid-way: exit 0"
touch "$T/go"
wait "$feeder" 2>/dev/null
wa-status-ingest -n 10 <"$T/many" 2>>"$T/kill.err"
is "$?" 0 "the restart reads every body again (exit 0)"
is "$(n_suppressed)" $((before + 3000)) "each STOP added its person once"
sql "select phone || ' ' || added_at from suppressions
    where phone like '+1555010%' order by phone" >"$T/again"
head -1500 "$T/again" >"$T/again1"
ok "those applied before the kill are untouched" \
    cmp -s "$T/first" "$T/again1"

# The follower stopped, a STOP spooled meanwhile, then the spool read again
# from its start: applied once.
kill -TERM "$ing"
wait "$ing"
is "$?" 0 "the follower stops on SIGTERM"
say +15550000017 STOP >/dev/null
spooled() {
	grep -q 15550000017 "$T"/spool/*
}
ok "a STOP is spooled while no one follows" wait_for 60 spooled
wa-status-ingest --follow "$T/spool" --once 2>>"$T/ingest.err"
is "$?" 0 "the follower run again catches up"
ok "the STOP spooled meanwhile is applied" suppressed +15550000017
n=$(n_suppressed)
sql "delete from spool_checkpoints" >/dev/null
wa-status-ingest --follow "$T/spool" --once 2>>"$T/ingest.err"
is "$(n_suppressed)" "$n" "the whole spool read again adds nobody"
is "$(sql "select count(*) from suppressions where phone = '+15550000001'")" \
    1 "and keeps one row per person"

fake_stop

# The fake's inbound messages need the webhooks; reply: needs a text.
exits 64 "--script reply: without a text is a usage error" \
    wa-fake-api --any-token --script 1=reply: 2>/dev/null
fake_start --rate 0
is "$(say +15550000001 STOP)" 400 "no --webhook-url: the inbound is refused"
is "$(jq -r 'select(.outcome == "error") | .code' "$FAKE_LOG")" 100 \
    "with code 100, in the log"
fake_stop
done_testing
