#!/bin/sh
# wa-claim: the requests it emits, exit codes, concurrent claimers, and
# the bound a stalled reader puts on rows left in sending.
. "$(dirname "$0")/lib.sh"
pg_start

c=$(campaign 5)
wa-claim -c "$c" --once >"$T/out" 2>"$T/err"
is "$?" 0 "--once exits 0 once nothing is ready"
is "$(wc -l <"$T/out" | tr -d ' ')" 5 "one request per row"
is "$(jq -c 'select(.id == 1)' "$T/out")" \
    '{"id":1,"attempt":1,"campaign_id":'"$c"',"phone_number_id":"106540352242922","template":{"name":"reminder","language":"en_US","params":["p1"]},"to":"+15550000001"}' \
    "a request carries the campaign's number, template and the row's params"
is "$(sql "select string_agg(distinct status || ':' || attempt, ',')
    from campaign_recipients where claimed_at is not null")" "sending:1" \
    "claimed rows are sending, attempt 1, with claimed_at"
is "$(cat "$T/err")" "" "nothing on stderr"

# Rows not due yet are left alone; an object in template_params is merged.
sql "update campaign_recipients set status = 'pending',
    next_attempt_at = now() + interval '1 hour' where id <= 4;
    update campaign_recipients set status = 'pending',
    template_params = '{\"components\":[{\"type\":\"body\"}]}' where id = 5"
wa-claim -c "$c" --once >"$T/out"
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
is "$?" 0 "only unknown rows left: nothing to claim, exit 0"
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
exits 64 "an unknown campaign" wa-claim -c 999999 2>/dev/null
exits 64 "no -c" wa-claim 2>/dev/null
exits 64 "a bad batch size" wa-claim -c "$c" -n 0 2>/dev/null
exits 0 "--help" wa-claim --help >/dev/null

# Four claimers at once never emit the same row.
c=$(campaign 3000)
pids=
for i in 1 2 3 4; do
	wa-claim -c "$c" --once -n 37 >"$T/claim$i" &
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
wa-claim -c "$c" -n 100 >"$T/fifo" 2>/dev/null &
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
head -50 <&3 >/dev/null
more() {
	test "$(sending)" -gt "$n"
}
ok "reading more lets more be claimed" wait_for 60 more
kill -TERM "$claimer"
exec 3<&-
wait "$claimer"
ok "SIGTERM stops wa-claim" test "$?" -lt 128

done_testing
