#!/bin/sh
# wa-campaign requeue: by status, code, class (outage, timeout, http, and
# lib/api/class.c's), by a file of numbers (plain or an export's CSV, bad
# lines with their number, --reject), -n; the history keeps the errors;
# and requeued rows of a campaign whose pipeline runs are sent and
# recorded as any other (their result is not stale).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"
pg_start

c=$(campaign 12)
p() { printf '+1555%07d' "$1"; }
# Row n: status, attempt, current error (code, class, title), and for
# row 9 (put back by wa-reconcile, no current error) only a history.
sql "update campaign_recipients r set status = v.status,
    attempt = v.attempt, error_code = v.code, error_class = v.class,
    error_title = v.title, wamid = v.wamid, status_at = now(),
    next_attempt_at = now() + v.later * interval '1 second'
    from (values
	(1, 'failed', 1, 131026, 'permanent', 'Message undeliverable', 'w1', 0),
	(2, 'failed', 2, 131049, 'permanent', 'Marketing cap', null, 0),
	(3, 'unknown', 1, null, 'ambiguous',
	    'Timeout was reached (curl 28): the request may have arrived',
	    null, 0),
	(4, 'failed', 3, null, 'transient', 'HTTP 502 with a body that is not the API''s JSON',
	    null, 0),
	(5, 'pending', 1, null, 'outage',
	    'Could not connect to server (curl 7): nothing was sent', null,
	    600),
	(6, 'pending', 2, 131056, 'pair_rate', 'Pair rate limit', null, 600),
	(7, 'sent', 1, null, null, null, 'w7', 0),
	(8, 'sending', 1, null, null, null, null, 0),
	(9, 'pending', 1, null, null, null, null, 0),
	(10, 'failed', 1, null, 'ambiguous',
	    'fate unknown (no answer, no status); on_unknown is fail', null, 0))
	as v(n, status, attempt, code, class, title, wamid, later)
    where r.campaign_id = $c and r.phone = '+1555' || lpad(v.n::text, 7, '0')"
sql "insert into recipient_errors (recipient_id, attempt, code, class, title)
    select id, 1, 131026, 'permanent', 'Message undeliverable'
    from campaign_recipients where phone = '$(p 1)';
    insert into recipient_errors (recipient_id, attempt, code, class, title)
    select id, 1, null, 'ambiguous', 'Timeout was reached (curl 28): x'
    from campaign_recipients where phone = '$(p 9)'"
row() {
	sql "select status, attempt, coalesce(error_code::text, '-'),
	    coalesce(error_class, '-'), coalesce(wamid, '-'),
	    next_attempt_at <= now() from campaign_recipients
	    where campaign_id = $c and phone = '$(p "$1")'"
}
hist() {
	sql "select count(*) from recipient_errors e join campaign_recipients r
	    on r.id = e.recipient_id where r.phone = '$(p "$1")'"
}

# -n: the count, a sample, and nothing changes.
wa-campaign requeue -n "$c" >"$T/out" 2>"$T/err"
is "$?" 0 "-n exits 0"
is "$(head -1 "$T/out")" 4 "-n: the count first (the failed rows)"
is "$(sed -n 2p "$T/out")" \
    "$(p 1)	failed	1	131026	permanent	Message undeliverable" \
    "then a sample: phone, status, attempts, code, class, title"
is "$(wc -l <"$T/out" | tr -d ' ')" 5 "one line per row, up to 10"
like "$(cat "$T/err")" "dry run \(-n\): nothing requeued" "says it changed nothing"
is "$(row 1)" "failed|1|131026|permanent|w1|t" "the row is as it was"
is "$(wa-campaign requeue --dry-run --status failed,unknown "$c" 2>/dev/null |
    head -1)" \
    5 "--dry-run, and --status takes a list"

# --class: the current error's class, or the latest in the history.
is "$(wa-campaign requeue -n 2>/dev/null --class timeout --status unknown,pending "$c" |
    cut -f1 | tr '\n' ' ')" "2 $(p 3) $(p 9) " \
    "--class timeout: curl 28, current or (row 9) in the history"
is "$(wa-campaign requeue -n 2>/dev/null --class http "$c" | cut -f1 | tr '\n' ' ')" \
    "1 $(p 4) " "--class http: an HTTP status without an API error"
is "$(wa-campaign requeue -n 2>/dev/null --class ambiguous "$c" | cut -f1 |
    tr '\n' ' ')" "1 $(p 10) " "--class ambiguous (failed by on_unknown)"

# --class outage: such rows are pending (an outage never fails a row);
# they are due now, and an outage is no error for the history.
is "$(wa-campaign requeue --class outage "$c")" 1 \
    "--class outage: the pending rows an outage put back"
is "$(row 5)" "pending|1|-|-|-|t" "due now, error cleared, attempt kept"
is "$(hist 5)" 0 "an outage is not written to the history"
is "$(row 6)" "pending|2|131056|pair_rate|-|f" "other pending rows wait"

# --code; the current error goes to the history unless it is there.
is "$(wa-campaign requeue --code 131049 "$c")" 1 "--code 131049"
is "$(row 2)" "pending|2|-|-|-|t" "pending, due now, attempt kept"
is "$(sql "select e.attempt, code, class, title from recipient_errors e
    join campaign_recipients r on r.id = e.recipient_id
    where r.phone = '$(p 2)'")" "2|131049|permanent|Marketing cap" \
    "its error stays in the history"
is "$(wa-campaign requeue "$c")" 3 "the failed rows by default"
is "$(row 1)" "pending|1|-|-|-|t" "wamid and error cleared"
is "$(hist 1)" 1 "an error already in the history is not written twice"
is "$(hist 10)" 1 "one that was only current is kept there"
is "$(row 8)" "sending|1|-|-|-|t" "rows in the pipe are never touched"

# A late result of the attempt before a requeue (an unknown row put back
# and not claimed again) says it was sent: the row is settled, not sent
# twice. A result for another attempt is stale and changes nothing.
sql "update campaign_recipients set status = 'unknown', attempt = 4,
    error_class = 'ambiguous', error_title = 'Timeout (curl 28)'
    where campaign_id = $c and phone = '$(p 11)'" >/dev/null
p 11 >"$T/one"
is "$(wa-campaign requeue --status unknown --phones "$T/one" "$c")" 1 \
    "an unknown row, by its number"
id=$(sql "select id from campaign_recipients where phone = '$(p 11)'")
printf '{"id":%s,"attempt":3,"result":{"outcome":"sent","wamid":"old"}}\n' \
    "$id" | wa-record >/dev/null 2>"$T/err"
is "$(row 11)" "pending|4|-|-|-|t" "a result of another attempt: stale"
printf '{"id":%s,"attempt":4,"result":{"outcome":"sent","wamid":"late"}}\n' \
    "$id" | wa-record >/dev/null 2>"$T/err"
is "$(row 11)" "sent|4|-|-|late|t" "its own attempt's: sent, with the wamid"

# --phones: plain numbers (national with --country-code), a bad line
# with its number, --reject; numbers not in the campaign are named.
sql "update campaign_recipients set status = 'failed', error_code = 1
    where campaign_id = $c and phone in ('$(p 1)', '$(p 2)', '$(p 3)')"
printf '%s\n\n+1 555 000 0002\n+1555x\n5550000003\n+19990000000\n' \
    "$(p 1)" >"$T/phones"
wa-campaign requeue --phones "$T/phones" --country-code 1 \
    --reject "$T/rej" "$c" >"$T/out" 2>"$T/err"
is "$?" 65 "a rejected line: exit 65"
is "$(cat "$T/out")" 3 "the good numbers are requeued"
like "$(cat "$T/err")" "$T/phones:4: a character other than digits" \
    "the bad line, with its number"
is "$(cat "$T/rej")" "+1555x" "--reject: the line is kept there"
like "$(cat "$T/err")" \
    "$T/phones: 1 numbers are not recipients of campaign $c \(\+19990000000\)" \
    "a number not in the campaign is named"
printf '5550000001\n' >"$T/national"
exits 65 "a national number without --country-code" wa-campaign requeue \
    --phones "$T/national" "$c" 2>"$T/err" >/dev/null
like "$(cat "$T/err")" "$T/national:1: " "says which line"

# --phones from an export: its phone column.
sql "update campaign_recipients set status = 'failed', error_code = 2
    where campaign_id = $c and phone in ('$(p 1)', '$(p 4)', '$(p 6)')"
wa-campaign export --status failed "$c" >"$T/failed.csv"
wa-campaign export --status failed --format ndjson "$c" >"$T/failed.ndjson"
is "$(wa-campaign requeue -n --phones "$T/failed.ndjson" "$c" 2>/dev/null |
    head -1)" \
    3 "an export in NDJSON"
is "$(wa-campaign requeue --phones "$T/failed.csv" "$c")" 3 \
    "an export's CSV: its phone column"
is "$(row 6)" "pending|2|-|-|-|t" "requeued"
printf 'name,tel\nx,+15550000001\n' >"$T/nophone.csv"
exits 65 "a CSV without a phone column" wa-campaign requeue \
    --phones "$T/nophone.csv" "$c" 2>"$T/err"
like "$(cat "$T/err")" "nophone.csv:1: " "says so, with the line"

exits 64 "a bad --class" wa-campaign requeue --class nonsense "$c" \
    2>"$T/err"
like "$(cat "$T/err")" "--class is outage, timeout, http" "says which"
exits 64 "a bad --status in the list" wa-campaign requeue \
    --status failed,sent "$c" 2>/dev/null
exits 64 "--reject without --phones" wa-campaign requeue --reject x "$c" \
    2>/dev/null
exits 66 "a --phones file that is not there" wa-campaign requeue \
    --phones "$T/nothing" "$c" 2>/dev/null
exits 64 "an unknown campaign" wa-campaign requeue 999999 2>/dev/null

# Requeue while the campaign's pipeline runs: 200 rows failed before it
# started are put back in the middle; they are claimed at attempt 2,
# sent once each, recorded sent, and their first error stays.
cat >"$T/pipeline" <<EOP
{ wa-claim -c "\$1" 2>>"$T/claim.err"; echo \$? >"$T/claim.rc"; } |
{ wa-throttle -r 200 2>>"$T/throttle.err"; echo \$? >"$T/throttle.rc"; } |
{ wa-send --timeout-ms 5000 2>>"$T/send.err"; echo \$? >"$T/send.rc"; } |
{ wa-record >/dev/null 2>>"$T/record.err"; echo \$? >"$T/record.rc"; }
EOP
fake_start --rate 0 --latency-ms 20
r=$(campaign 3000)
sql "update campaign_recipients set status = 'failed', attempt = 1,
    error_code = 131026, error_class = 'permanent',
    error_title = 'Message undeliverable'
    where campaign_id = $r and phone <= '+15550000200'" >/dev/null
count() {
	sql "select count(*) from campaign_recipients where campaign_id = $r
	    and status = '$1'"
}
sh "$T/pipeline" "$r" &
pipe=$!
t_pids="$t_pids $pipe"
some_sent() {
	test "$(count sent)" -ge 300
}
ok "the pipeline sends" wait_for 120 some_sent
is "$(wa-campaign requeue --code 131026 "$r")" 200 \
    "requeue while it runs: 200 rows"
ok "... before it ended ($(count sent) sent)" test "$(count pending)" -gt 200
wait "$pipe"
is "$(cat "$T/claim.rc" "$T/throttle.rc" "$T/send.rc" "$T/record.rc" |
    tr '\n' ' ')" "0 0 0 0 " "every stage exits 0"
is "$(sql "select status, attempt, count(*), count(wamid) from
    campaign_recipients where campaign_id = $r group by 1, 2 order by 2")" \
    "sent|1|2800|2800
sent|2|200|200" "all sent; the requeued rows at attempt 2, with a wamid"
is "$(sql "select count(*) from recipient_errors e join campaign_recipients c
    on c.id = e.recipient_id where c.campaign_id = $r and e.attempt = 1
    and e.code = 131026")" 200 "their first attempt's error stays"
is "$(jq -r .to "$FAKE_LOG" | sort | uniq -d | wc -l | tr -d ' ')" 0 \
    "no number was sent twice"
is "$(jq -s length "$FAKE_LOG")" 3000 "one call per recipient"
ok "no result was stale" sh -c "! grep -q 'not applied' '$T/record.err'"
is "$(sql "select state from campaigns where id = $r")" completed \
    "the campaign completed"

done_testing
