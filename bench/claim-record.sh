#!/bin/sh
# bench/claim-record.sh [ROWS]: wa-claim and wa-record over ROWS recipients
# (default 1,000,000), each beside the raw statement doing the same work
# from psql, in the same run: three rounds of ROWS/3 each, taking turns
# (raw first, then wapipe first, then raw first), so that neither side
# always gets the cooler cache or the quieter minute. A throwaway cluster
# with Postgres's default durability (fsync, synchronous_commit on).
# Prints rows/s and the largest max RSS of the wapipe programs.
ROWS=${1:-1000000}
BATCH=500
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
pg_start

PER=$((ROWS / 3))
raw1=$(campaign $PER) ours1=$(campaign $PER)
raw2=$(campaign $PER) ours2=$(campaign $PER)
raw3=$(campaign $PER) ours3=$(campaign $PER)
sql "vacuum analyze" >/dev/null

# add TOTAL START: TOTAL plus the seconds since START.
add() {
	echo "$1 $2 $(now)" | awk '{ printf "%.3f", $1 + $3 - $2 }'
}
rss() {
	[ "$(cat "$T/rss")" -gt "$rss" ] && rss=$(cat "$T/rss")
}
report() {
	echo "  psql (raw statement)  $1 s  $(rate $((PER * 3)) "$1") rows/s"
	echo "  $3  $2 s  $(rate $((PER * 3)) "$2") rows/s  max RSS $rss KiB"
	echo "  ratio                 $(pct "$1" "$2")"
}

# The claim, as a user would run it from psql, batch after batch.
claim_sql() {
	awk -v c="$1" -v n=$(((PER + BATCH - 1) / BATCH + 1)) -v b="$BATCH" '
	BEGIN { for (i = 0; i < n; i++)
	printf "UPDATE campaign_recipients r SET status = '\''sending'\'', attempt = r.attempt + 1, claimed_at = now() FROM campaigns c WHERE r.id = ANY(ARRAY(SELECT id FROM campaign_recipients WHERE campaign_id = %d AND status = '\''pending'\'' AND next_attempt_at <= now() ORDER BY next_attempt_at LIMIT %d FOR UPDATE SKIP LOCKED)) AND c.id = r.campaign_id AND c.state = '\''running'\'' RETURNING r.id, r.attempt, r.phone, r.template_params;\n", c, b }'
}
raw_claim() {
	claim_sql "$1" >"$T/claim.sql"
	s=$(now)
	psql -X -q -At -f "$T/claim.sql" >/dev/null
	t_raw=$(add "$t_raw" "$s")
}
our_claim() {
	s=$(now)
	/usr/bin/time -f %M -o "$T/rss" wa-claim -c "$1" -n "$BATCH" --once \
	    >/dev/null
	t_ours=$(add "$t_ours" "$s")
	rss
}

t_raw=0 t_ours=0 rss=0
raw_claim "$raw1"; our_claim "$ours1"
our_claim "$ours2"; raw_claim "$raw2"
raw_claim "$raw3"; our_claim "$ours3"
n=$(sql "select count(*) from campaign_recipients where status = 'sending'")
[ "$n" = $((PER * 6)) ] || bail "claimed $n, not $((PER * 6))"
echo "claim  $((PER * 3)) rows each way, batch $BATCH"
report "$t_raw" "$t_ours" "wa-claim            "

# Record: every row sent, from a stream of results or from psql arrays.
# Statistics first, as autovacuum would have them after so many updates:
# stale ones send the raw statement through the whole partial index of
# unsettled rows.
sql "analyze campaign_recipients"
ids() {
	sql "select id from campaign_recipients where campaign_id = $1
	    order by id"
}
raw_record() {
	ids "$1" | awk -v b="$BATCH" '
	function flush() {
		printf "UPDATE campaign_recipients c SET status = '\''sent'\'', wamid = u.wamid, status_at = now() FROM unnest('\''{%s}'\''::bigint[], '\''{%s}'\''::text[]) u(id, wamid) WHERE c.id = u.id AND c.status = '\''sending'\'';\n", ids, wamids
		ids = wamids = ""; k = 0
	}
	{ ids = ids (k ? "," : "") $1; wamids = wamids (k ? "," : "") "wamid.a" $1; if (++k == b) flush() }
	END { if (k) flush() }' >"$T/record.sql"
	s=$(now)
	psql -X -q -At -f "$T/record.sql" >/dev/null
	t_raw=$(add "$t_raw" "$s")
}
our_record() {
	ids "$1" | awk '{ printf "{\"id\":%d,\"attempt\":1,\"result\":{\"outcome\":\"sent\",\"wamid\":\"wamid.b%d\",\"http_status\":200,\"latency_ms\":200}}\n", $1, $1 }' \
	    >"$T/results"
	s=$(now)
	/usr/bin/time -f %M -o "$T/rss" wa-record -n "$BATCH" <"$T/results" \
	    >/dev/null
	t_ours=$(add "$t_ours" "$s")
	rss
}

t_raw=0 t_ours=0 rss=0
raw_record "$raw1"; our_record "$ours1"
our_record "$ours2"; raw_record "$raw2"
raw_record "$raw3"; our_record "$ours3"
n=$(sql "select count(*) from campaign_recipients where status = 'sent'")
[ "$n" = $((PER * 6)) ] || bail "recorded $n, not $((PER * 6))"
echo "record $((PER * 3)) results each way, batch $BATCH"
report "$t_raw" "$t_ours" "wa-record           "
