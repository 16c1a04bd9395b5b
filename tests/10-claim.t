#!/bin/sh
# wa-claim: the requests it emits, exit codes, concurrent claimers, the
# bound a stalled reader puts on rows left in sending, rows put back when
# it stops or its reader goes, polling that a signal stops, a campaign
# deleted under it.
. "$(dirname "$0")/lib.sh"
pg_start

c=$(campaign 5)
wa-claim -c "$c" --once >"$T/out" 2>"$T/err"
is "$?" 75 "--once exits 75 once nothing is ready: the campaign is not done"
is "$(wc -l <"$T/out" | tr -d ' ')" 5 "one request per row"
tag=$(sql "select tag from wapipe_deployment")
like "$tag" '^[0-9a-z]{8}$' "the database has a deployment tag"
is "$(jq -c 'select(.id == 1)' "$T/out")" \
    '{"id":1,"attempt":1,"campaign_id":'"$c"',"deployment":"'"$tag"'","phone_number_id":"106540352242922","template":{"name":"reminder","language":"en_US","params":["p1"]},"to":"+15550000001"}' \
    "a request carries the campaign's number, template, the deployment tag and the row's params"
is "$(sql "select string_agg(distinct status || ':' || attempt, ',')
    from campaign_recipients where claimed_at is not null")" "sending:1" \
    "claimed rows are sending, attempt 1, with claimed_at"
like "$(cat "$T/err")" "nothing ready now; rows are still being sent" \
    "and says why"

# Rows not due yet are left alone; an object in template_params is merged.
sql "update campaign_recipients set status = 'pending',
    next_attempt_at = now() + interval '1 hour' where id <= 4;
    update campaign_recipients set status = 'pending',
    template_params = '{\"components\":[{\"type\":\"body\"}]}' where id = 5"
wa-claim -c "$c" --once >"$T/out" 2>"$T/err"
is "$?" 75 "--once exits 75 while retries are pending"
like "$(cat "$T/err")" "rows wait for a retry" "and says so"
is "$(jq -c '[.id, .attempt, .template.components, .template.params]' \
    "$T/out")" '[5,2,[{"type":"body"}],null]' \
    "only due rows are claimed; components are passed verbatim"

# Completion: nothing pending or sending marks the campaign completed.
sql "update campaign_recipients set status = 'sent'"
exits 0 "a finished campaign" wa-claim -c "$c"
is "$(sql "select state from campaigns where id = $c")" completed \
    "the campaign is marked completed"

c=$(campaign 3)
sql "update campaign_recipients set status = 'unknown' where campaign_id = $c"
wa-claim -c "$c" 2>"$T/err"
is "$?" 75 "only unknown rows left: nothing to claim, exit 75"
like "$(cat "$T/err")" "3 rows unknown" "says how many rows await wa-reconcile"
is "$(sql "select state from campaigns where id = $c")" running \
    "a campaign with unknown rows is not completed"

c=$(campaign 3)
sql "update campaigns set state = 'paused', state_reason = 'by operator'
    where id = $c"
wa-claim -c "$c" >"$T/out" 2>"$T/err"
is "$?" 75 "a paused campaign exits 75"
like "$(cat "$T/err")" "campaign $c is paused: by operator" "and says why"
is "$(wc -c <"$T/out" | tr -d ' ')" 0 "and emits nothing"
sql "update campaigns set state = 'draft' where id = $c"
exits 75 "a campaign not started" wa-claim -c "$c" 2>/dev/null
sql "update campaigns set state = 'cancelled', state_reason = 'by operator'
    where id = $c"
wa-claim -c "$c" >"$T/out" 2>"$T/err"
is "$?" 77 "a cancelled campaign exits 77: never run it again"
like "$(cat "$T/err")" "campaign $c is cancelled: by operator" "and says so"
exits 64 "an unknown campaign" wa-claim -c 999999 2>/dev/null
exits 64 "no -c" wa-claim 2>/dev/null
exits 64 "a bad batch size" wa-claim -c "$c" -n 0 2>/dev/null
exits 0 "--help" wa-claim --help >/dev/null

# Four claimers at once never emit the same row.
c=$(campaign 3000)
pids=
for i in 1 2 3 4; do
	wa-claim -c "$c" --once -n 37 >"$T/claim$i" 2>/dev/null &
	pids="$pids $!"
done
# shellcheck disable=SC2086
wait $pids
cat "$T"/claim? | jq -r .id | sort >"$T/ids"
is "$(wc -l <"$T/ids" | tr -d ' ')" 3000 "four claimers emit every row"
is "$(uniq -d "$T/ids" | wc -l | tr -d ' ')" 0 "and no row twice"
is "$(sql "select count(*) from campaign_recipients where campaign_id = $c
    and status = 'sending' and attempt = 1")" 3000 \
    "each row claimed exactly once"

# A reader that stops reading bounds the rows claimed: the pipe fills.
c=$(campaign 20000)
mkfifo "$T/fifo"
# A pipe of 16 KiB: 81 lines of the first claim (wa-claim guesses 200
# bytes a line) leave less than a page free whatever a line's length
# (165 to 200 bytes here), so the pipe is full, not waiting for room.
wa-claim -c "$c" -n 100 --pipe-size 16384 >"$T/fifo" 2>/dev/null &
claimer=$!
exec 3<"$T/fifo"
sending() {
	sql "select count(*) from campaign_recipients where campaign_id = $c
	    and status = 'sending'"
}
some() {
	test "$(sending)" -gt 0
}
ok "wa-claim claims some rows" wait_for 60 some
# Full: a writer could not write now. wa-claim claims only once its pipe
# has room, and marks rows sending before it writes them, so from here on
# the count stays put until the reader reads.
pipe_full() {
	perl -e 'open(my $f, ">", $ARGV[0]) or exit 2; my $w = "";
	    vec($w, fileno($f), 1) = 1; exit(select(undef, $w, undef, 0))' \
	    "$T/fifo"
}
ok "the pipe fills" wait_for 60 pipe_full
n=$(sending)
ok "a stalled reader leaves few rows sending ($n of 20000)" test "$n" -le 300
# More than half the pipe: wa-claim waits for room for a fair batch.
head -100 <&3 >/dev/null
more() {
	test "$(sending)" -gt "$n"
}
ok "reading more lets more be claimed" wait_for 60 more
kill -TERM "$claimer"
wait "$claimer"
is "$?" 75 "SIGTERM stops wa-claim, exit 75: not completed"
exec 3<&-

# The pipe grows with its reader's pace (250 ms of it, up to 1 MiB), so a
# fast reader gets large claims: 20,000 rows in claims of half a 32 KiB
# pipe (81 rows) would take 247 statements.
c=$(campaign 20000)
wa-claim -c "$c" --once --metrics "$T/fast" 2>/dev/null | cat >/dev/null
n=$(awk '/^wa_claim_statements_total/ { n = $2 } END { print n + 0 }' \
    "$T/fast")
ok "a fast reader gets large claims ($n statements for 20000 rows)" \
    test "$n" -gt 0 -a "$n" -lt 100
# A slow reader (100 lines a second at most) keeps the pipe as it was.
c=$(campaign 2000)
size=$(wa-claim -c "$c" 2>/dev/null | perl -e 'use Time::HiRes "sleep";
    while (<STDIN>) { sleep 0.01; last if $. >= 300 }
    print fcntl(STDIN, 1032, 0)')
is "$size" 32768 "a slow reader keeps the pipe at 32 KiB"

# Rows only sending (the tail of every run): wa-claim polls, stoppable.
c=$(campaign 3)
wa-claim -c "$c" --once >/dev/null 2>&1
wa-claim -c "$c" --poll-ms 200 --metrics "$T/m" >/dev/null 2>"$T/err" &
claimer=$!
polled() {
	test "$(cat "$T/m" 2>/dev/null | awk '/^wa_claim_statements_total/ {
	    n = $2 } END { print n + 0 }')" -ge 2
}
ok "with only sending rows it polls" wait_for 60 polled
kill -TERM "$claimer"
wait "$claimer"
is "$?" 75 "and SIGTERM stops it (exit 75)"

# The campaign deleted under a polling wa-claim: exit 64, a message.
# (Deleted once it has polled: before, it would find no campaign.)
rm -f "$T/m"
wa-claim -c "$c" --poll-ms 50 --metrics "$T/m" >/dev/null 2>"$T/err" &
claimer=$!
wait_for 60 polled
sql "delete from campaigns where id = $c"
wait "$claimer"
is "$?" 64 "a campaign deleted under wa-claim: exit 64"
like "$(cat "$T/err")" "campaign $c is gone" "saying so"

# Stopped with rows claimed but not written: they go back, uncounted.
# Lines of 3 kB each overflow the 4 kB pipe within the first batch.
c=$(campaign 20)
sql "update campaign_recipients set template_params =
    jsonb_build_array(repeat('x', 3000)) where campaign_id = $c"
rm -f "$T/fifo"
mkfifo "$T/fifo"
wa-claim -c "$c" -n 20 >"$T/fifo" 2>"$T/err" &
claimer=$!
exec 3<"$T/fifo"
claimed() {
	test "$(sql "select count(*) from campaign_recipients
	    where campaign_id = $c and status = 'sending'")" -gt 0
}
ok "wa-claim claims a batch" wait_for 60 claimed
kill -TERM "$claimer"
wait "$claimer"
is "$?" 75 "SIGTERM mid-batch: exit 75"
n=$(cat <&3 | wc -l | tr -d ' ')
exec 3<&-
is "$(sql "select count(*) from campaign_recipients where campaign_id = $c
    and status = 'sending'")" "$n" "only the $n rows written stay sending"
is "$(sql "select count(*) from campaign_recipients where campaign_id = $c
    and status = 'pending' and attempt = 0")" "$((20 - n))" \
    "the rest are back to pending, attempt not counted"
like "$(cat "$T/err")" "put back $((20 - n)) rows claimed but not written" \
    "and it says so"

# The reader gone mid-batch (EPIPE): the rows never written go back.
c=$(campaign 20)
sql "update campaign_recipients set template_params =
    jsonb_build_array(repeat('x', 3000)) where campaign_id = $c"
{
	wa-claim -c "$c" -n 20 2>"$T/err"
	echo $? >"$T/rc"
} | head -1 >"$T/out"
is "$(cat "$T/rc")" 74 "the reader gone: exit 74"
written=$(sql "select count(*) from campaign_recipients where campaign_id = $c
    and status = 'sending'")
ok "some rows were written ($written)" test "$written" -ge 1
is "$(sql "select count(*) from campaign_recipients where campaign_id = $c
    and status = 'pending' and attempt = 0")" "$((20 - written))" \
    "every row not written is back to pending"

# A claim locks no row before its update: a pending row another writer
# changes meanwhile keeps that writer's change. The writer (suppressing
# row 2) holds its lock until a third session lets it commit; the claim
# waits on the row, then leaves it suppressed.
c=$(campaign 3)
r2=$(sql "select min(id) + 1 from campaign_recipients where campaign_id = $c")
PGAPPNAME=gate psql -X -q -c "select pg_advisory_lock(4242)" \
    -c "select pg_sleep(300)" >/dev/null 2>&1 &
gate=$!
t_pids="$t_pids $gate"
wait_for 30 pg_waiting gate PgSleep
PGAPPNAME=writer psql -X -q -c "begin" -c "update campaign_recipients
    set status = 'suppressed' where id = $r2" \
    -c "select pg_advisory_lock(4242)" -c "commit" >/dev/null 2>&1 &
writer=$!
t_pids="$t_pids $writer"
wait_for 30 pg_waiting writer advisory
PGAPPNAME=claim wa-claim -c "$c" --once >"$T/out" 2>/dev/null &
claimer=$!
ok "the claim waits on the row the writer holds" \
    wait_for 30 pg_waiting claim transactionid
sql "select pg_terminate_backend(pid) from pg_stat_activity
    where application_name = 'gate'" >/dev/null
wait "$writer"
wait "$claimer"
is "$(jq -r .id "$T/out" | tr '\n' ' ')" "$((r2 - 1)) $((r2 + 1)) " \
    "the claim emits the other two rows"
is "$(sql "select status || ':' || attempt from campaign_recipients
    where id = $r2")" "suppressed:0" "the changed row keeps its change"

# The claim changes no indexed column (version 8): its rows stay in
# phase 0, each version on its page (heap-only: no index entry written),
# and its claim is listed with the ids it took and where it stopped.
c=$(campaign 10)
first=$(sql "select min(id) from campaign_recipients where campaign_id = $c")
sql "vacuum campaign_recipients" >/dev/null
hot() {
	sql "select n_tup_hot_upd from pg_stat_user_tables
	    where relname = 'campaign_recipients'"
}
h0=$(hot)
psql -X -q -c "select count(*) from wapipe_claim($c, 4, 41)" \
    -c "select pg_stat_force_next_flush()" >/dev/null
is "$(($(hot) - h0))" 4 "a claim's updates are heap-only, one per row"
is "$(sql "select string_agg(distinct phase::text, ',') from
    campaign_recipients where campaign_id = $c and status = 'sending'")" 0 \
    "... its rows stay in phase 0"
is "$(sql "select token, ids = array[$first, $first + 1, $first + 2,
    $first + 3]::bigint[], last_id = $first + 3 from campaign_claims
    where campaign_id = $c")" "41|t|t" \
    "... and its claim is listed: its token, its rows, where it stopped"

# The next claim starts where the last one stopped, and takes the rows
# put back behind it once the rows after it run out: none is left out.
sql "update campaign_recipients set status = 'pending',
    attempt = attempt - 1 where id in ($first, $first + 1)" >/dev/null
is "$(sql "select string_agg((id - $first)::text, ' ' order by id)
    from wapipe_claim($c, 3, 42)")" "4 5 6" \
    "a claim starts after the last claim's rows"
is "$(sql "select string_agg((id - $first)::text, ' ' order by id)
    from wapipe_claim($c, 10, 43)")" "0 1 7 8 9" \
    "... then the rows put back behind it, once those after it run out"

# A claim whose rows are all settled is let go: by the next claim of
# its campaign once it is some seconds old, by wa-reconcile, and when
# the campaign completes; one with a row in flight stays.
sql "update campaign_recipients set status = 'sent' where campaign_id = $c
    and id - $first between 4 and 6;
    update campaign_claims set claimed_at = claimed_at - interval '1 hour'
    where campaign_id = $c" >/dev/null
sql "select count(*) from wapipe_claim($c, 1, 44)" >/dev/null
is "$(sql "select string_agg(token::text, ' ' order by token)
    from campaign_claims where campaign_id = $c")" "41 43" \
    "a claim lets go of its campaign's older claims with no row in flight"
sql "update campaign_recipients set status = 'failed' where campaign_id = $c
    and id - $first between 0 and 3" >/dev/null
wa-reconcile -c "$c" >/dev/null
is "$(sql "select string_agg(token::text, ' ' order by token)
    from campaign_claims where campaign_id = $c")" "43" \
    "wa-reconcile lets go of those with no row in flight"
sql "update campaign_recipients set status = 'sent' where campaign_id = $c
    and status = 'sending'" >/dev/null
wa-reconcile -c "$c" >"$T/out"
is "$(cat "$T/out") $(sql "select count(*) from campaign_claims
    where campaign_id = $c")" "campaign $c: completed 0" \
    "a campaign completed keeps no claim"

done_testing
