#!/bin/sh
# wa-send: an answer lost after the API took the message. libcurl would
# send such a request again on a new connection; wa-send refuses the
# rewind: one POST per message, the send unknown, never retry, so nobody
# gets the message twice. Counted per recipient in the fake's request
# log, alone and through the whole pipeline (wa-fake-api --script
# 41=lost, no webhooks).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"

# req ID SUFFIX: a request to +1555000<SUFFIX>.
req() {
	printf '{"id":%s,"campaign_id":1,"attempt":1,"phone_number_id":"9001",' \
	    "$1"
	printf '"to":"+1555000%s","template":{"name":"reminder",' "$2"
	printf '"language":"en_US"}}\n'
}

# accepted LOG: the most messages accepted (given a wamid, answered or
# not) for one recipient.
accepted() {
	jq -r 'select(.wamid != null) | .to' "$1" | sort | uniq -c |
	    sort -rn | awk 'NR == 1 { print $1 } END { if (NR == 0) print 0 }'
}

# Alone, one call at a time on a kept-alive connection: each lost answer
# would make libcurl send the request again (which the pair rate limit
# would refuse: 131056); it is not let.
fake_start --rate 0 --script 41=lost
{
	req 1 0001
	req 2 0041
	req 3 0002
	req 4 0141
	req 5 0003
	req 6 0241
} >"$T/in"
wa-send -j 1 <"$T/in" >"$T/out" 2>"$T/err"
is $? 0 'lost answers: exit 0'
is "$(jq -r '[.id, .result.outcome, .result.class] | join(" ")' "$T/out" |
    tr '\n' ',')" \
    '1 sent sent,2 unknown ambiguous,3 sent sent,4 unknown ambiguous,5 sent sent,6 unknown ambiguous,' \
    'a lost answer is unknown, never retry'
is "$(jq -r 'select(.to == "+15550000041") | [.outcome, .code] |
    map(. // "-") | join(" ")' "$FAKE_LOG" | tr '\n' ',')" \
    'drop -,' 'one POST: libcurl was not let send it again'
like "$(jq -r 'select(.id == 2) | .result.error.title' "$T/out")" \
    'closed unanswered, and a message is never sent twice' \
    '... and the result says so'
is "$(jq -r 'select(.id == 2) | .result.error.code // "none"' "$T/out")" \
    none "... without the refusal's code, which was not this send's fate"
is "$(accepted "$FAKE_LOG")" 1 'no recipient accepted twice'
is "$(jq -s length "$FAKE_LOG")" 6 'six messages, six POSTs'

# Many at once: the same.
for i in $(seq 10 49); do req "$i" "1${i}1"; done >"$T/in"
wa-send -j 8 <"$T/in" >"$T/out" 2>"$T/err"
is "$(jq -r 'select(.to | endswith("41")) | .result.outcome' "$T/out" |
    sort -u)" unknown 'eight at once: every lost answer is unknown'
is "$(jq -r 'select(.to | endswith("41") | not) | .result.outcome' \
    "$T/out" | sort -u)" sent '... the others sent'
is "$(accepted "$FAKE_LOG")" 1 '... and no recipient accepted twice'
is "$(jq -s length "$FAKE_LOG")" 46 '... 40 messages more, 40 POSTs more'

# The whole pipeline, until nothing is left to claim: the rows whose
# answer was lost end unknown after one send (before, they were retried
# until max_attempts, each retry accepted again).
pg_start
fake_start --rate 0 --latency-ms 5 --script 41=lost
c=$(campaign 300)
sql "update campaigns set on_unknown = 'fail' where id = $c"
wa-claim -c "$c" 2>"$T/claim.err" | wa-throttle -r 500 |
    wa-send --timeout-ms 2000 2>"$T/send.err" |
    wa-record --backoff-base 100 --backoff-cap 400 >/dev/null \
    2>"$T/record.err"
n=$(accepted "$FAKE_LOG")
note "accepted messages per recipient, at most: $n"
is "$n" 1 'the pipeline: no recipient accepted twice'
is "$(sql "select status || ' ' || attempt || ' ' || count(*)
    from campaign_recipients where campaign_id = $c and phone like '%41'
    group by status, attempt")" 'unknown 1 3' 'the three lost rows are unknown after one attempt'
is "$(sql "select count(*) from campaign_recipients where campaign_id = $c
    and status = 'sent'")" 297 'the others are sent'

done_testing
