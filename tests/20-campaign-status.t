#!/bin/sh
# wa-campaign status (text and --json) over rows set to every status, and
# the Graph API version a run started here would speak; requeue: which
# rows go back, what is cleared, what is kept (attempt, the fencing
# token), and that a row past max_attempts still gets one try.
. "$(dirname "$0")/lib.sh"
pg_start

c=$(wa-campaign create --name "status test" --phone-number-id 1 \
    --template reminder --max-attempts 3)
awk 'BEGIN { print "phone,name"; for (i = 1; i <= 12; i++)
    printf "+120155500%02d,n%d\n", i, i }' >"$T/rows.csv"
wa-campaign import "$c" "$T/rows.csv" 2>/dev/null
wa-campaign start --no-check "$c"

# Row n: status, attempt, wamid, error code and title, claimed and
# status_at as seconds before now (all in one statement: one now()).
sql "update campaign_recipients r set status = v.status,
    attempt = v.attempt, wamid = v.wamid, error_code = v.code,
    error_title = v.title,
    claimed_at = now() - v.claimed * interval '1 second',
    status_at = now() - v.at * interval '1 second',
    next_attempt_at = now() + v.later * interval '1 second'
    from (values
	(1, 'sent', 1, 'w1', null, null, 20, 19, 0),
	(2, 'sent', 1, 'w2', null, null, 15, 14, 0),
	(3, 'delivered', 1, 'w3', null, null, 12, 5, 0),
	(4, 'read', 2, 'w4', null, null, 10, 4, 0),
	(5, 'failed', 1, null, 131026, 'Message undeliverable', 12, 11, 0),
	(6, 'failed', 1, 'w6', 131026, 'Message undeliverable', 12, 3, 0),
	(7, 'failed', 3, null, 131049, 'Marketing cap', 11, 1, 0),
	(8, 'unknown', 1, null, null, null, 13, 2, 0),
	(9, 'sending', 2, null, null, null, 10, null, 0),
	(10, 'pending', 1, null, 131056, 'Pair rate', 14, 30, 3600))
	as v(n, status, attempt, wamid, code, title, claimed, at, later)
    where r.campaign_id = $c and r.phone = '+120155500' || lpad(v.n::text, 2, '0')"

wa-campaign status --json "$c" >"$T/json" 2>"$T/err"
is "$?" 0 "status --json exits 0"
is "$(cat "$T/err")" "" "nothing on stderr"
is "$(wc -l <"$T/json" | tr -d ' ')" 1 "one JSON object on one line"
is "$(jq -c 'keys_unsorted' "$T/json")" \
    '["id","name","state","state_reason","phone_number_id","template","language","max_attempts","on_unknown","breaker","created_at","start_at","started_at","finished_at","expires_at","window","tz","without_zone","weight","priority","limit","total","counts","pending_later","next_retry_at","next_retry_in","attempts","errors","error_history","outage","accepted","first_claim_at","last_claim_at","claim_seconds","rate","rate_last_minute","billable","free","spend","replies","meta_events","deployment","graph_api"]' \
    "the documented keys, in order"
is "$(jq -c '[.id, .name, .state, .state_reason, .total]' "$T/json")" \
    "[$c,\"status test\",\"running\",null,12]" "id, name, state, total"
is "$(jq -c .counts "$T/json")" \
    '{"pending":3,"sending":1,"unknown":1,"sent":2,"delivered":1,"read":1,"failed":3,"suppressed":0,"expired":0}' \
    "counts by status, every status present"
is "$(jq .pending_later "$T/json")" 1 "pending rows waiting for a retry"
is "$(jq -r .next_retry_at "$T/json")" "$(sql "select to_char(
    next_attempt_at at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')
    from campaign_recipients where campaign_id = $c
    and phone = '+12015550010'")" "when the next retry is due"
ok "... in at most an hour ($(jq .next_retry_in "$T/json") s)" \
    test "$(jq .next_retry_in "$T/json")" -gt 0 -a \
    "$(jq .next_retry_in "$T/json")" -le 3600
is "$(jq .breaker "$T/json")" null "no breaker set: null (wa-send's default)"
is "$(jq -c .attempts "$T/json")" '{"0":2,"1":7,"2":2,"3":1}' \
    "rows by attempt"
is "$(jq -c '[.errors[] | [.code, .title, .count]]' "$T/json")" \
    '[[131026,"Message undeliverable",2],[131049,"Marketing cap",1],[131056,"Pair rate",1]]' \
    "errors, most common first, then the latest"
like "$(jq -r '.errors[0].last_at' "$T/json")" \
    '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$' \
    "times in ISO 8601, UTC"
is "$(jq -c '[.accepted, .claim_seconds, .rate, .rate_last_minute]' \
    "$T/json")" '[5,10,0.5,0.1]' \
    "5 accepted (a wamid or sent and beyond) over 10 s of claims: 0.5/s"

wa-campaign status "$c" >"$T/text"
like "$(head -1 "$T/text")" "^campaign $c \"status test\": running$" \
    "text: the campaign and its state first"
like "$(cat "$T/text")" "failed +3 +25.0%" "text: counts and shares"
like "$(cat "$T/text")" \
    "pending +3 +25.0%  \(1 waiting to retry, the next at $(jq -r \
    .next_retry_at "$T/json"), in [0-9hms ]+\)" \
    "text: retries waiting, and when the next is due"
like "$(cat "$T/text")" "circuit breaker: default" "text: the breaker"
like "$(cat "$T/text")" "131026 +2  Message undeliverable \(last " \
    "text: the errors"
like "$(cat "$T/text")" "^rate +0.5/s: 5 accepted in 10s" "text: the rate"

# The Graph API version a run started here speaks (the default, as
# --version says), and when it ends; from WA_API_BASE or WA_API_VERSION
# when they say one, with wa-send's warning when its end is near.
GRAPH_VERSION=$(wa-campaign --version |
    sed -n 's/^Graph API \(v[0-9]*\.[0-9]*\) by default$/\1/p')
is "$(jq -c '.graph_api | [.version, .from, .warning]' "$T/json")" \
    "[\"$GRAPH_VERSION\",\"default\",null]" \
    "graph_api: the default, $GRAPH_VERSION, not near its end"
like "$(jq -r .graph_api.until "$T/json")" '^(20[0-9]{2}-[0-9]{2}-[0-9]{2}|null)$' \
    "graph_api: the last day Meta serves it (null: none announced)"
like "$(cat "$T/text")" \
    "^  Graph API $GRAPH_VERSION \(wapipe's default\), (served until $(jq -r \
    .graph_api.until "$T/json")|no end date known)$" \
    "text: the Graph API version"
WA_API_BASE=http://127.0.0.1:1/v21.0 wa-campaign status --json "$c" \
    >"$T/json21"
is "$(jq -c '.graph_api | [.version, .from, .until]' "$T/json21")" \
    '["v21.0","WA_API_BASE","2027-01-21"]' \
    "graph_api: WA_API_BASE's version, v21.0, and its end"
like "$(jq -r .graph_api.warning "$T/json21")" \
    '^Graph API v21.0 \(from WA_API_BASE\) (ends|ended) ' \
    "... and wa-send's warning, its end being near (or past)"
like "$(WA_API_BASE=http://127.0.0.1:1/v21.0 wa-campaign status "$c")" \
    "  warning: Graph API v21.0 \(from WA_API_BASE\) (ends|ended) " \
    "text: the warning"
is "$(WA_API_VERSION=v26.0 wa-campaign status --json "$c" |
    jq -c '.graph_api | [.version, .from, .until, .warning]')" \
    '["v26.0","WA_API_VERSION",null,null]' \
    "WA_API_VERSION=v26.0: no end known, no warning"
like "$(WA_API_VERSION=v26.0 wa-campaign status "$c")" \
    "  Graph API v26.0 \(from WA_API_VERSION\), no end date known" \
    "text: no end date known"
WA_API_VERSION=26 wa-campaign status "$c" >/dev/null 2>"$T/err"
is $? 78 "a malformed WA_API_VERSION: exit 78"
like "$(cat "$T/err")" "WA_API_VERSION must be" "... saying so"
wa-campaign pause --reason "halt: 132015 template paused" "$c"
like "$(wa-campaign status "$c")" "reason: halt: 132015 template paused" \
    "text: the reason of a paused campaign"
wa-campaign resume "$c"

row() {
	sql "select status, attempt, coalesce(error_code::text, '-'),
	    coalesce(wamid, '-'), next_attempt_at <= now()
	    from campaign_recipients
	    where campaign_id = $c and phone = '+120155500$1'"
}

# requeue: back to pending, errors and wamid cleared, attempt kept.
is "$(wa-campaign requeue --code 131049 "$c")" 1 \
    "requeue --code: only rows with that error; prints how many"
is "$(row 07)" "pending|3|-|-|t" \
    "the row is pending now, error cleared, attempt kept at 3"
is "$(row 05)" "failed|1|131026|-|t" "rows with another code stay"
is "$(wa-campaign requeue "$c")" 2 "requeue: the failed rows by default"
is "$(row 06)" "pending|1|-|-|t" "a failed row's old wamid goes too"
is "$(wa-campaign requeue --status unknown "$c")" 1 "--status unknown"
is "$(row 08)" "pending|1|-|-|t" "an unknown row is pending again"
is "$(wa-campaign requeue "$c")" 0 "nothing left to requeue: 0"
is "$(row 09)" "sending|2|-|-|t" "rows in the pipe are never touched"
exits 64 "--status sending" wa-campaign requeue --status sending "$c" \
    2>/dev/null
exits 64 "a bad --code" wa-campaign requeue --code x "$c" 2>/dev/null

# A row at max_attempts gets one more try: claimed at attempt 4, and a
# retry then fails it (wa-record's rule).
wa-claim -c "$c" --once >"$T/claim"
is "$(jq -c 'select(.to == "+12015550007") | .attempt' "$T/claim")" 4 \
    "the requeued row at max_attempts is claimed again, attempt 4"
jq -c 'select(.to == "+12015550007") | . + {"result": {"outcome": "retry",
    "error": {"code": 131000, "title": "later"}}}' "$T/claim" |
    wa-record >/dev/null
# (Its next_attempt_at, now plus a jittered backoff that may be ~0, is
# not looked at: a failed row is never claimed.)
is "$(row 07 | cut -d'|' -f1-4)" "failed|4|131000|-" \
    "and a retry after it fails the row"

# A completed campaign runs again when rows are requeued.
sql "update campaign_recipients set status = 'sent'
    where campaign_id = $c and status in ('pending', 'sending', 'unknown');
    update campaigns set state = 'completed', finished_at = now()
    where id = $c"
is "$(wa-campaign requeue "$c" 2>"$T/err")" 1 "requeue in a completed campaign"
like "$(cat "$T/err")" "was completed and runs again" "says so"
is "$(sql "select state, finished_at is null from campaigns
    where id = $c")" "running|t" "the campaign is running again"
wa-campaign cancel "$c"
exits 65 "requeue in a cancelled campaign" wa-campaign requeue "$c" \
    2>/dev/null
exits 64 "requeue in an unknown campaign" wa-campaign requeue 999999 \
    2>/dev/null

# An error without a code (libcurl's: the answer never came) prints as
# '-', not as whatever printf makes of a null string.
sql "insert into recipient_errors (recipient_id, attempt, code, class, title)
    select min(id), 1, null, 'ambiguous', 'Timeout was reached (curl 28)'
    from campaign_recipients where campaign_id = $c" >/dev/null
is "$(wa-campaign status "$c" | grep 'Timeout was reached' | awk '{ print $1 }')" \
    "-" "an error without a code: '-'"

done_testing
