#!/bin/sh
# wa-reconcile: stale sending rows, unknown rows under both policies,
# fencing against a live pipeline, completion, dry run.
. "$(dirname "$0")/lib.sh"
pg_start

row() {
	sql "select status || ' ' || attempt from campaign_recipients
	    where id = $1"
}

c=$(campaign 4)
wa-claim -c "$c" --once >"$T/claimed" 2>/dev/null
first=$(sql "select min(id) from campaign_recipients where campaign_id = $c")
# Rows 1-2 were claimed long ago (their pipeline died); 3-4 just now.
sql "update campaign_recipients set claimed_at = now() - interval '1 hour'
    where id in ($first, $first + 1)"

wa-reconcile -n >"$T/out"
is "$(cat "$T/out")" "campaign $c: would move 2 rows from sending (claimed over 600 s ago) to unknown" \
    "a dry run says what it would do"
is "$(row "$first")" "sending 1" "and changes nothing"

# The report is for a cron log: each line starts with its time, as the
# messages on stderr do, off a terminal or with WA_LOG_TIME=1.
stamp='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z '
WA_LOG_TIME=1 wa-reconcile -n >"$T/out"
like "$(cat "$T/out")" "${stamp}campaign $c: would move 2 rows from sending" \
    "WA_LOG_TIME=1: a report line starts with the RFC 3339 time"
env -u WA_LOG_TIME wa-reconcile -n >"$T/out"
like "$(cat "$T/out")" "${stamp}campaign $c: would move 2 rows from sending" \
    "and so it does by default into a file"

wa-reconcile >"$T/out"
is "$?" 0 "exits 0"
like "$(cat "$T/out")" "moved 2 rows from sending" "says what it moved"
is "$(row "$first") / $(row $((first + 2)))" "unknown 1 / sending 1" \
    "stale sending rows become unknown; rows a live pipeline holds do not"

# The dead pipeline's late results are fenced off.
printf '{"id":%s,"attempt":1,"result":{"outcome":"failed","error":{"code":131026}}}\n' \
    "$first" | wa-record >/dev/null 2>&1
is "$(row "$first")" "unknown 1" "a late result for a reconciled row is not applied"

# Unknown rows wait --unknown-after for a webhook, then the policy.
wa-reconcile >"$T/out"
is "$(row "$first")" "unknown 1" "a fresh unknown row is left for its webhook"
sql "update campaign_recipients set status_at = now() - interval '1 hour'
    where id = $first"
wa-reconcile --unknown-after 60 >"$T/out"
is "$(cat "$T/out")" "campaign $c: moved 1 unknown rows to pending (on_unknown resend)" \
    "on_unknown resend: says so"
is "$(row "$first")" "pending 1" "the row goes back to pending, attempt kept"
wa-claim -c "$c" --once >"$T/again" 2>/dev/null
is "$(jq -c '[.id, .attempt]' "$T/again")" "[$first,2]" \
    "and is claimed again with the next attempt"

sql "update campaigns set on_unknown = 'fail' where id = $c;
    update campaign_recipients set status = 'unknown',
    status_at = now() - interval '1 hour' where id = $first + 1"
wa-reconcile --unknown-after 60 >"$T/out"
like "$(cat "$T/out")" "1 unknown rows to failed \(on_unknown fail\)" \
    "on_unknown fail: says so"
is "$(row $((first + 1)))" "failed 1" "the row fails"
like "$(sql "select error_title from campaign_recipients
    where id = $first + 1")" "fate unknown" "with the reason"

# A row locked by a pipeline writing it right now is skipped.
sql "update campaign_recipients set status = 'unknown',
    status_at = now() - interval '1 hour' where id = $first + 2"
PGAPPNAME=locker psql -X -q -c "begin" -c "select 1 from campaign_recipients
    where id = $first + 2 for update" -c "select pg_sleep(300)" \
    >/dev/null 2>&1 &
locker=$!
t_pids="$t_pids $locker"
wait_for 30 pg_waiting locker PgSleep
wa-reconcile --unknown-after 60 >"$T/out"
is "$(row $((first + 2)))" "unknown 1" "a row locked by a writer is not touched"
sql "select pg_terminate_backend(pid) from pg_stat_activity
    where application_name = 'locker'" >/dev/null
wait "$locker"
wa-reconcile --unknown-after 60 >"$T/out"
is "$(row $((first + 2)))" "failed 1" "and is settled on the next run"

# Completion: running, nothing pending, sending or unknown.
sql "update campaign_recipients set status = 'sent' where campaign_id = $c
    and status in ('pending', 'sending', 'unknown')"
wa-reconcile -c "$c" >"$T/out"
is "$(cat "$T/out")" "campaign $c: completed" "a finished campaign is completed"
is "$(sql "select state from campaigns where id = $c")" completed \
    "in the table too"
wa-reconcile -c "$c" >"$T/out"
is "$(cat "$T/out")" "" "a second run has nothing to do"

# A cancelled campaign's rows are settled too: stale sending rows become
# unknown, unknown ones fail (nothing more is sent), pending ones stay.
c=$(campaign 3)
wa-claim -c "$c" --once >/dev/null 2>&1
sql "update campaign_recipients set claimed_at = now() - interval '1 hour'
    where campaign_id = $c;
    update campaign_recipients set status = 'pending' where id =
    (select max(id) from campaign_recipients where campaign_id = $c);
    update campaigns set state = 'cancelled' where id = $c"
wa-reconcile >"$T/out"
is "$(sql "select string_agg(status, ',' order by id) from
    campaign_recipients where campaign_id = $c")" "unknown,unknown,pending" \
    "a cancelled campaign's stale sending rows become unknown"
wa-reconcile --unknown-after 0 >"$T/out"
like "$(cat "$T/out")" "moved 2 unknown rows to failed \(the campaign is cancelled\)" \
    "then fail, saying why"
is "$(sql "select string_agg(status, ',' order by id) from
    campaign_recipients where campaign_id = $c")" "failed,failed,pending" \
    "and nothing is left sending or unknown"
is "$(sql "select state from campaigns where id = $c")" cancelled \
    "the campaign stays cancelled"
exits 64 "a bad --stale-after" wa-reconcile --stale-after x 2>/dev/null
exits 0 "--help" wa-reconcile --help >/dev/null

done_testing
