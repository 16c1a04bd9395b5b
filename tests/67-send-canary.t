#!/bin/sh
# wa-send: a campaign's first call goes alone (the canary); the others
# wait until a message is accepted, so that a missing template, a bad
# token or a wrong phone-number id costs one call, not one per slot,
# however many slots (-j) there are; an answer that blames the recipient
# or the request does not open it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"

# reqs CAMPAIGN TEMPLATE N FROM: N requests of CAMPAIGN, ids from FROM.
reqs() {
	awk -v c="$1" -v t="$2" -v n="$3" -v f="$4" 'BEGIN {
	    for (i = f; i < f + n; i++)
		printf "{\"id\":%d,\"campaign_id\":%d,\"attempt\":1," \
		    "\"phone_number_id\":\"100\",\"to\":\"+1555%07d\"," \
		    "\"template\":{\"name\":\"%s\",\"language\":\"en_US\"}}\n",
		    i, c, i, t }'
}

fake_start --rate 0 --pair-ms 0 --latency-ms 250 --templates reminder

# A missing template, 300 slots, 250 ms latency: one call, then a halt.
reqs 1 nosuch 300 1 >"$T/in"
wa-send -j 300 --metrics "$T/m" <"$T/in" >"$T/out" 2>"$T/err"
is $? 79 'a missing template halts: exit 79'
is "$(jq -s length "$FAKE_LOG")" 1 'exactly one call reached the API'
is "$(jq -r .result.outcome "$T/out" | sort | uniq -c | tr -s ' ')" \
    ' 300 halt' 'every request is answered halt'
is "$(jq -r 'select(.id != 1) | .result.error.code' "$T/out" | sort -u)" \
    132001 '... with the code of the canary'
like "$(unlabel "$T/m")" 'wa_send_in_flight_max 1$' 'never more than one call out'

# A bad token: the same, one call.
: >"$FAKE_LOG"
reqs 2 reminder 300 1001 >"$T/in"
WA_TOKEN=wrong wa-send -j 300 <"$T/in" >"$T/out" 2>"$T/err"
is $? 79 'a bad token halts: exit 79'
is "$(jq -s length "$FAKE_LOG")" 1 'exactly one call with the bad token'
is "$(jq -r .code "$FAKE_LOG")" 190 '... answered 190'

# A good campaign opens after its canary: every request is sent, and more
# than one goes at once once the first answer is in; a halted campaign
# beside it stops at one call.
: >"$FAKE_LOG"
{ reqs 3 reminder 100 2001; reqs 4 nosuch 100 3001; } >"$T/in"
wa-send -j 100 --metrics "$T/m" <"$T/in" >"$T/out" 2>"$T/err"
is $? 79 'one campaign halted beside a good one: exit 79'
is "$(jq -r 'select(.campaign_id == 3) | .result.outcome' "$T/out" |
    sort | uniq -c | tr -s ' ')" ' 100 sent' 'the good campaign is all sent'
is "$(jq -r 'select(.template == "nosuch") | .to' "$FAKE_LOG" | wc -l)" 1 \
    'the missing template cost one call'
first=$(jq -s 'sort_by(.t) | .[0] | .t' "$FAKE_LOG")
second=$(jq -s '[.[] | select(.template == "reminder")] | sort_by(.t) |
    .[1] | .t' "$FAKE_LOG")
ok "the good campaign's second call waited for the first answer ($((second - first)) ms)" \
    test "$((second - first))" -ge 240
ok 'then it opened: many calls at once' \
    test "$(unlabel "$T/m" | sed -n 's/^wa_send_in_flight_max //p')" -gt 10

# Only an accepted message opens the canary. A first answer that blames
# the recipient (131026) or the request (100 without a subcode) leaves
# it closed: the next request goes alone too, and when its template is
# missing that costs one call more, not one per slot.
fake_start --rate 0 --pair-ms 0 --latency-ms 50 --templates reminder \
    --script 0005001=131026 --script 0006001=100
for c in 5:131026 6:100; do
	code=${c#*:} c=${c%:*}
	{ reqs "$c" reminder 1 "${c}001"; reqs "$c" nosuch 99 "${c}002"; } \
	    >"$T/in"
	wa-send -j 100 <"$T/in" >"$T/out" 2>"$T/err"
	is $? 79 "campaign $c: the template behind the first answer halts"
	is "$(jq -r 'select(.id == '"${c}001"') | [.result.outcome,
	    .result.class, .result.error.code] | join(" ")' "$T/out")" \
	    "failed permanent $code" "campaign $c: the first request failed ($code)"
	is "$(jq -s length "$FAKE_LOG")" 2 \
	    "campaign $c: that did not open the canary: two calls in all"
	is "$(jq -r .result.outcome "$T/out" | sort | uniq -c | tr -s ' ')" \
	    "$(printf ' 1 failed\n 99 halt')" "campaign $c: the rest halt"
	: >"$FAKE_LOG"
done

# A wrong phone-number id (Graph's 100 with error_subcode 33: no such
# object, or the token may not use it; the answer's shape as
# ../shared/research/cloud-api-2026.md section 3 gives it, from Graph's
# GraphMethodException, which wa-fake-api --numbers answers) says the sender is wrong, not
# the recipient: 400 rows at the default concurrency cost one call, fail
# no row, and pause the campaign with the reason.
pg_start
fake_start --rate 0 --pair-ms 0 --templates reminder --numbers 9001
c=$(campaign 400)
wa-claim -c "$c" 2>"$T/claim.err" |
    { wa-send 2>"$T/send.err"; echo $? >"$T/send.rc"; } |
    wa-record >/dev/null 2>"$T/record.err"
is "$(cat "$T/send.rc")" 79 'a wrong phone-number id halts wa-send: exit 79'
is "$(jq -s length "$FAKE_LOG")" 1 'exactly one call reached the API'
is "$(jq -r '[.phone_number_id, .code, .http_status] | join(" ")' \
    "$FAKE_LOG")" '106540352242922 100 400' '... answered 100, HTTP 400'
is "$(sql "select status || ' ' || attempt || ' ' || count(*)
    from campaign_recipients where campaign_id = $c
    group by status, attempt")" 'pending 0 400' \
    'no row failed: all 400 pending, no attempt counted'
like "$(sql "select state || ': ' || state_reason from campaigns
    where id = $c")" '^paused: halt: 100/33 ' \
    'the campaign is paused, the reason naming 100/33'
like "$(cat "$T/send.err")" 'halted: error 100/33: Unsupported post request' \
    'wa-send says why'

done_testing
