#!/bin/sh
# wa-campaign report: --json holds every figure of status --json, and the
# report's own (funnel, series, latency, errors by code with what wapipe
# did, retries due, timeline), all from one snapshot; the HTML page
# stands alone (no script, nothing fetched) and escapes what it shows.
# The browser's view of the page is tests/22-report-browser.t's.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/report.sh"
pg_start
c=$(report_campaign)

wa-campaign report --json "$c" >"$T/json" 2>"$T/err"
is "$?" 0 "report --json exits 0"
is "$(cat "$T/err")" "" "nothing on stderr"
is "$(wc -l <"$T/json" | tr -d ' ')" 1 "one JSON object on one line"
wa-campaign status --json "$c" >"$T/status"
# rate_last_minute and next_retry_in count from now(): the figures that
# may move between the two runs (a second boundary between them).
is "$(jq -cS --slurpfile s "$T/status" 'with_entries(select(.key as $k |
    $s[0] | has($k))) | del(.rate_last_minute, .next_retry_in)' \
    "$T/json")" \
    "$(jq -cS 'del(.rate_last_minute, .next_retry_in)' "$T/status")" \
    "every figure of status --json, the same"
is "$(jq -c '[keys_unsorted[] | select(IN("funnel", "bucket_seconds",
    "series", "latency", "errors_by_code", "retries", "timeline"))]' \
    "$T/json")" \
    '["funnel","bucket_seconds","series","latency","errors_by_code","retries","timeline"]' \
    "the report's own figures, after the status's"
is "$(jq -c .funnel "$T/json")" \
    '{"claimed":11,"sent":5,"delivered":2,"read":1,"failed":3,"unknown":1,"pending":4,"suppressed":0,"expired":0}' \
    "funnel: claimed, sent (a wamid or sent and beyond), delivered (or read), read; failed, unknown, pending (or sending)"
is "$(jq -c '[([.series[].sent] | add), ([.series[].delivered] | add),
    ([.series[].read] | add), ([.series[].failed] | add)]' "$T/json")" \
    "[5,1,1,3]" \
    "series: every accepted row once, every delivered, read, failed row once"
is "$(jq .bucket_seconds "$T/json")" 60 "a short campaign: per minute"
is "$(jq -c '.latency | [.delivered.count, .delivered.p50, .read.count,
    .read.p99]' "$T/json")" '[1,3,1,60]' \
    "latency: from the claim to the current status"
is "$(jq -c '[.latency.delivered.histogram[] | select(.count > 0) |
    [.from, .to]]' "$T/json")" '[[2,5]]' "latency: in its bucket"
is "$(jq -c '[.errors_by_code[] | [.code, .class, .did, .attempts,
    .failed_rows]]' "$T/json")" \
    '[[131049,"later","retried",3,1],[131056,"pair_rate","retried",3,0],[131026,"permanent","failed",1,2],[131000,"transient","retried",1,0],[132015,"fatal","halted",1,0]]' \
    "errors by code: attempts met, rows failed with it now, what wapipe did"
is "$(jq -c '.retries | [.pending, [.due[] | .count]]' "$T/json")" \
    '[2,[0,1,1,0,0,0,0]]' "retries pending, by when they are due"
is "$(jq -c '[.timeline[] | [.state, .reason]]' "$T/json")" \
    '[["draft",null],["running",null],["paused","halt: 132015 template paused"],["running",null]]' \
    "timeline: each change of state with its reason"

# A campaign whose rows were all claimed in one minute long ago and
# read much later spans more than 480 minutes: wider buckets.
sql "update campaign_recipients set claimed_at = now() - interval '2 days',
    status_at = now() - interval '1 hour' where campaign_id = $c
    and status = 'read'" >/dev/null
is "$(wa-campaign report --json "$c" | jq .bucket_seconds)" 600 \
    "over two days: 10-minute buckets (at most 480)"

# The schema applied again adds no second trigger: one event per move.
psql -q -v ON_ERROR_STOP=1 -f "$TOP/sql/schema.sql" >/dev/null 2>&1
wa-campaign pause "$c"
is "$(sql "select count(*) from campaign_events where campaign_id = $c
    and state = 'paused'")" 2 "the schema applied twice: one event a move"
wa-campaign resume "$c"
wa-campaign report "$c" >"$T/page.html" 2>"$T/err"
is "$?" 0 "report exits 0"
is "$(cat "$T/err")" "" "nothing on stderr"
like "$(head -1 "$T/page.html")" '^<!DOCTYPE html>$' "an HTML page"
is "$(grep -Eoi '<script|<link|<img|<iframe|<object|src=|href=|url\(|@import|@font-face|https?:' \
    "$T/page.html" | sort -u | tr '\n' ' ')" "" \
    "it stands alone: no script, no link, nothing fetched"
is "$(grep -o '<svg id="chart-[a-z-]*"' "$T/page.html" | tr '\n' ' ')" \
    '<svg id="chart-funnel" <svg id="chart-series" <svg id="chart-latency-delivered" <svg id="chart-latency-read" <svg id="chart-attempts" <svg id="chart-retries" ' \
    "every chart, inline SVG"
like "$(cat "$T/page.html")" \
    '<h1>report &lt;test&gt; &amp; &#39;co&#39; <' "the name escaped"
like "$(cat "$T/page.html")" '<td class="n" id="n-claimed">11</td>' \
    "the funnel's counts"
like "$(cat "$T/page.html")" 'paused</b>: halt: 132015 template paused' \
    "the pause and its reason"

# Replies and opt-outs: a message back from one person messaged, who
# then opted out.
sql "insert into inbound_messages (wamid, phone, phone_number_id, type,
    body, sent_at, raw, campaign_id, recipient_id)
    select 'wamid.in.report', r.phone, c.phone_number_id, 'text', 'STOP',
    now(), '{}', c.id, r.id from campaign_recipients r
    join campaigns c on c.id = r.campaign_id
    where c.id = $c and r.attempt > 0 order by r.id limit 1;
    insert into suppressions (scope, phone, reason)
    select phone_number_id, i.phone, 'inbound \"STOP\"'
    from inbound_messages i where wamid = 'wamid.in.report'" >/dev/null
wa-campaign report "$c" >"$T/page2.html" 2>/dev/null
like "$(cat "$T/page2.html")" '<span id="n-replies">1</span> messages from <span id="n-repliers">1</span> of [0-9]+ people messaged' \
    "the replies and the people who replied"
like "$(cat "$T/page2.html")" '<span id="n-optouts">1</span> opted out' \
    "... and who opted out"
is "$(wa-campaign report --json "$c" | jq -c '[.replies.count,
    .replies.optouts]')" "[1,1]" "... as --json says"

# A campaign from before campaign_events: its own times instead.
sql "delete from campaign_events where campaign_id = $c" >/dev/null
is "$(wa-campaign report --json "$c" | jq -c '[.timeline[] | .state]')" \
    '["draft","running"]' "no events: created and started instead"

# A campaign without rows yet.
e=$(wa-campaign create --name empty --phone-number-id 1 --template t)
is "$(wa-campaign report --json "$e" | jq -c '[.total, .bucket_seconds,
    .series, .funnel.claimed, .latency.read.count, .latency.read.p50,
    .errors_by_code, .retries.pending, [.timeline[].state]]')" \
    '[0,60,[],0,0,null,[],0,["draft"]]' "an empty campaign: zeros, no series"
exits 0 "an empty campaign's page" sh -c "wa-campaign report $e >/dev/null"

exits 64 "an unknown campaign" wa-campaign report 999999 2>"$T/err"
like "$(cat "$T/err")" "no campaign 999999" "says so"
exits 64 "report takes no --reason" wa-campaign report --reason x "$c" \
    2>/dev/null
done_testing
