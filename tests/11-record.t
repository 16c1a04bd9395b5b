#!/bin/sh
# wa-record: outcomes applied in batches, fenced on (id, attempt) and
# status sending, rank-monotone, backoff and max attempts, halt, bad lines.
. "$(dirname "$0")/lib.sh"
pg_start

# result ID ATTEMPT OUTCOME [EXTRA-JSON]: one send result line.
result() {
	printf '{"id":%s,"attempt":%s,"campaign_id":%s,"to":"+1555","result":{"outcome":"%s"%s}}\n' \
	    "$1" "$2" "$c" "$3" "${4:+,$4}"
}
claim() {
	wa-claim -c "$c" --once >/dev/null 2>&1
}
row() {
	sql "select status || ' ' || attempt || ' ' || coalesce(wamid, '-')
	    || ' ' || coalesce(error_code::text, '-') from campaign_recipients
	    where id = $1"
}

c=$(campaign 6)
claim
{
	result 1 1 sent '"wamid":"wamid.A","http_status":200'
	result 2 1 failed '"error":{"code":131026,"title":"Message undeliverable"}'
	result 3 1 unknown
	result 4 1 retry '"error":{"code":131000,"title":"Something went wrong"}'
	result 5 1 sent '"wamid":"wamid.E"'
} >"$T/in"
wa-record <"$T/in" >"$T/out" 2>"$T/err"
is "$?" 0 "a clean stream exits 0"
cmp -s "$T/in" "$T/out"
is "$?" 0 "every line is echoed, unchanged, once committed"
is "$(cat "$T/err")" "" "nothing on stderr"
is "$(row 1)" "sent 1 wamid.A -" "sent stores the wamid"
is "$(row 2)" "failed 1 - 131026" "failed stores the code"
is "$(sql "select error_title from campaign_recipients where id = 2")" \
    "Message undeliverable" "and the title"
is "$(row 3)" "unknown 1 - -" "unknown waits for a webhook or wa-reconcile"
is "$(row 4)" "pending 1 - 131000" "retry goes back to pending"
# Delays are measured from status_at, set in the same statement: the
# checks hold however slow the machine.
ok "after a delay within the backoff (base 1 s, attempt 1: <= 2 s)" \
    test "$(sql "select next_attempt_at >= status_at and
    next_attempt_at <= status_at + interval '2 seconds'
    from campaign_recipients where id = 4")" = t

# Fencing: a stale attempt, or a row no longer sending, is not written.
sql "update campaign_recipients set status = 'delivered' where id = 5"
result 5 1 sent '"wamid":"wamid.E"' | wa-record >/dev/null 2>&1
is "$(row 5)" "delivered 1 wamid.E -" "a late sent never overwrites delivered"
sql "update campaign_recipients set status = 'read', wamid = null
    where id = 5"
result 5 1 sent '"wamid":"wamid.E2"' | wa-record >/dev/null 2>"$T/err"
is "$(row 5)" "read 1 wamid.E2 -" \
    "a row a webhook settled first still gets its wamid"
result 6 0 sent '"wamid":"wamid.F"' | wa-record >/dev/null 2>"$T/err"
is "$(row 6)" "sending 1 - -" "a result for an older attempt is fenced off"
like "$(cat "$T/err")" "1 results not applied: their rows had moved on" "and counted on stderr"
result 4 1 failed '"error":{"code":131026}' | wa-record >/dev/null 2>&1
is "$(row 4)" "pending 1 - 131000" "a row no longer sending is not written"

# An id no row has is not a row that moved on: each is counted apart,
# and those ids named.
{
	result 6 0 sent '"wamid":"wamid.F"'
	result 999999001 1 sent '"wamid":"wamid.X"'
	result 999999002 1 failed
} | wa-record >/dev/null 2>"$T/err"
like "$(cat "$T/err")" "1 results not applied: their rows had moved on" \
    "a fenced-off result is stale"
like "$(cat "$T/err")" "2 results name no row \\(ids 999999001 999999002\\)" \
    "results whose ids no row has are told apart, and named"
result 999999003 1 sent '"wamid":"wamid.Y"' | wa-record >/dev/null 2>"$T/err"
ok "and not called stale" sh -c "! grep -q 'moved on' '$T/err'"

# Backoff: full jitter within [0, min(cap, base * 2^attempt)].
c=$(campaign 200)
claim
sql "select id from campaign_recipients where campaign_id = $c" |
while read -r id; do
	result "$id" 1 retry '"error":{"code":131000}'
done >"$T/in"
wa-record --backoff-base 100000 --backoff-cap 150000 <"$T/in" >/dev/null
is "$(sql "select count(*) from campaign_recipients where campaign_id = $c
    and status = 'pending' and next_attempt_at >= status_at
    and next_attempt_at <= status_at + interval '150 s'")" 200 \
    "every delay is within [0, cap]"
ok "delays are jittered, not all alike" test "$(sql "select count(distinct
    date_trunc('second', next_attempt_at)) from campaign_recipients
    where campaign_id = $c")" -gt 50
ok "and they spread over the range" test "$(sql "select count(*) from
    campaign_recipients where campaign_id = $c and
    next_attempt_at > status_at + interval '100 s'")" -gt 0

c=$(campaign 3)
claim
first=$(sql "select min(id) from campaign_recipients where campaign_id = $c")
{
	result "$first" 1 retry '"error":{"code":131049},"http_status":400'
	result "$((first + 1))" 1 retry '"error":{"code":131056},"http_status":400'
} | wa-record >/dev/null
ok "131049: no sooner than 24 h" test "$(sql "select next_attempt_at >=
    status_at + interval '24 hours' from campaign_recipients
    where id = $first")" = t
ok "131056 (pair rate): no sooner than 6 s" test "$(sql "select
    next_attempt_at >= status_at + interval '6 seconds' from campaign_recipients
    where id = $((first + 1))")" = t

# Max attempts: the last retry fails the row, keeping its error.
sql "update campaigns set max_attempts = 2 where id = $c;
    update campaign_recipients set status = 'sending', attempt = 2
    where id = $((first + 2))"
result "$((first + 2))" 2 retry '"error":{"code":131000,"title":"t"}' |
    wa-record >/dev/null
is "$(row $((first + 2)))" "failed 2 - 131000" "after max_attempts a retry fails"

# Halt: the row goes back, uncounted, and the campaign pauses.
c=$(campaign 2)
claim
first=$(sql "select min(id) from campaign_recipients where campaign_id = $c")
{
	result "$first" 1 halt '"error":{"code":132001,"title":"Template name does not exist"}'
	result "$((first + 1))" 1 halt '"error":{"code":132001}'
} | wa-record >/dev/null
is "$(row "$first")" "pending 0 - 132001" "halt: row back to pending, attempt not counted"
is "$(sql "select state || ': ' || state_reason from campaigns where id = $c")" \
    "paused: halt: 132001 Template name does not exist" \
    "halt pauses the campaign with the reason"
exits 75 "wa-claim then stops for the paused campaign" \
    wa-claim --once -c "$c" 2>/dev/null

# Bad lines: reported with their numbers, rejected, the rest recorded.
c=$(campaign 2)
claim
first=$(sql "select min(id) from campaign_recipients where campaign_id = $c")
{
	echo 'not json'
	result "$first" 1 sent '"wamid":"wamid.G"'
	echo '{"attempt":1,"result":{"outcome":"sent"}}'
	echo
	echo '{"id":1,"attempt":1}'
	echo '{"id":1,"attempt":1,"result":{"outcome":"maybe"}}'
	result "$((first + 1))" 1 sent '"wamid":"wamid.H"'
} >"$T/in"
wa-record --reject "$T/rej" <"$T/in" >"$T/out" 2>"$T/err"
is "$?" 65 "rejected lines make the exit status 65"
is "$(grep -c '' "$T/err")" 4 "one message per bad line"
like "$(cat "$T/err")" '^wa-record: <stdin>:1: ' "messages carry the line number"
like "$(cat "$T/err")" '<stdin>:3: no integer "id"' "a missing id is named"
like "$(cat "$T/err")" '<stdin>:6: no "result"' "an unknown outcome is named"
is "$(sed -n 2p "$T/rej")" '{"attempt":1,"result":{"outcome":"sent"}}' \
    "bad lines go to --reject"
is "$(wc -l <"$T/out" | tr -d ' ')" 2 "good lines are echoed"
is "$(sql "select count(*) from campaign_recipients where campaign_id = $c
    and status = 'sent'")" 2 "and recorded"

# kill -9 mid-stream: every committed batch is whole. 40000 lines in
# batches of 3000 leave 1000 that only the end of input would commit, and
# the input never ends here: some lines are always left unrecorded.
c=$(campaign 40000)
claim
first=$(sql "select min(id) from campaign_recipients where campaign_id = $c")
awk -v f="$first" 'BEGIN { for (i = 0; i < 40000; i++)
	printf "{\"id\":%d,\"attempt\":1,\"result\":{\"outcome\":\"sent\",\"wamid\":\"wamid.k%d\"}}\n", f + i, i }' >"$T/in"
# Fed slowly (about 5 s in all), so the kill lands mid-stream.
{
	pv -qL 600k "$T/in"
	wait_for 60 test -e "$T/stop"
} | wa-record -n 3000 --flush-ms 600000 >"$T/out" 2>/dev/null &
rec=$!
sent() {
	test "$(sql "select count(*) from campaign_recipients
	    where campaign_id = $c and status = 'sent'")" -gt 0
}
wait_for 60 sent
kill -9 "$rec"
touch "$T/stop"
wait "$rec" 2>/dev/null
# A batch the kill caught in flight may still commit on the server: count
# once the killed session is gone from it.
gone() {
	test "$(sql "select count(*) from pg_stat_activity
	    where application_name = 'wa-record'")" = 0
}
wait_for 60 gone
n=$(sql "select count(*) from campaign_recipients where campaign_id = $c
    and status = 'sent'")
ok "some batches were committed before the kill ($n)" test "$n" -gt 0
ok "and some were not" test "$n" -lt 40000
is "$((n % 3000))" 0 "only whole batches were committed"
is "$(sql "select coalesce(max(id), $first - 1) - $first + 1 from
    campaign_recipients where campaign_id = $c and status = 'sent'")" "$n" \
    "and they are the first lines of the stream"
ok "no line was echoed before its batch committed" \
    test "$(wc -l <"$T/out")" -le "$n"
wa-record -n 3000 <"$T/in" >/dev/null 2>"$T/err"
is "$(sql "select count(*) from campaign_recipients where campaign_id = $c
    and status = 'sent'")" 40000 "replaying the stream completes the rest"

done_testing
