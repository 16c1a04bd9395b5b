#!/bin/sh
# bench/claim-record.sh [ROWS]: wa-claim and wa-record over a campaign of
# ROWS recipients (default 1,000,000), each beside the raw statement doing
# the same work from psql, in the same run, on a throwaway cluster with
# Postgres's default durability (fsync and synchronous_commit on).
# Prints rows/s and max RSS.
ROWS=${1:-1000000}
BATCH=500
export PG_DURABLE=1
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../tests/lib.sh"
pg_start

# Two campaigns alike: one for the raw statements, one for wapipe.
raw=$(campaign "$ROWS")
ours=$(campaign "$ROWS")
sql "vacuum analyze" >/dev/null

# secs START: seconds since START (date +%s.%N).
secs() {
	echo "$(date +%s.%N) $1" | awk '{ printf "%.2f", $1 - $2 }'
}
rate() {
	echo "$1 $2" | awk '{ printf "%.0f", $1 / $2 }'
}

# The claim, as a user would run it from psql, batch after batch.
n=$(((ROWS + BATCH - 1) / BATCH))
awk -v c="$raw" -v n="$n" -v b="$BATCH" 'BEGIN { for (i = 0; i < n; i++)
	printf "UPDATE campaign_recipients r SET status = '\''sending'\'', attempt = r.attempt + 1, claimed_at = now() FROM campaigns c WHERE r.id = ANY(ARRAY(SELECT id FROM campaign_recipients WHERE campaign_id = %d AND status = '\''pending'\'' AND next_attempt_at <= now() ORDER BY next_attempt_at LIMIT %d FOR UPDATE SKIP LOCKED)) AND c.id = r.campaign_id AND c.state = '\''running'\'' RETURNING r.id, r.attempt, r.phone, r.template_params;\n", c, b }' \
    >"$T/claim.sql"
s=$(date +%s.%N)
psql -X -q -At -f "$T/claim.sql" >/dev/null
t_raw=$(secs "$s")
s=$(date +%s.%N)
/usr/bin/time -f %M -o "$T/rss" wa-claim -c "$ours" -n "$BATCH" --once \
    >/dev/null
t_ours=$(secs "$s")
claimed=$(sql "select count(*) from campaign_recipients
    where status = 'sending'")
[ "$claimed" = $((2 * ROWS)) ] || bail "claimed $claimed, not $((2 * ROWS))"
echo "claim  $ROWS rows, batch $BATCH"
echo "  psql (raw statement)  $t_raw s  $(rate "$ROWS" "$t_raw") rows/s"
echo "  wa-claim              $t_ours s  $(rate "$ROWS" "$t_ours") rows/s  max RSS $(cat "$T/rss") KiB"
echo "  ratio                 $(echo "$t_raw $t_ours" | awk '{ printf "%.0f%%", 100 * $1 / $2 }')"

# Record: every row sent, from a stream of results / from psql arrays.
# Statistics first, as autovacuum would have them after a million
# updates: stale ones send the raw statement through the whole
# partial index of unsettled rows.
sql "analyze campaign_recipients"
sql "select id from campaign_recipients where campaign_id = $ours
    order by id" | awk '{ printf "{\"id\":%d,\"attempt\":1,\"result\":{\"outcome\":\"sent\",\"wamid\":\"wamid.b%d\",\"http_status\":200,\"latency_ms\":200}}\n", $1, $1 }' \
    >"$T/results"
sql "select id from campaign_recipients where campaign_id = $raw
    order by id" | awk -v b="$BATCH" '
	function flush() {
		printf "UPDATE campaign_recipients c SET status = '\''sent'\'', wamid = u.wamid, status_at = now() FROM unnest('\''{%s}'\''::bigint[], '\''{%s}'\''::text[]) u(id, wamid) WHERE c.id = u.id AND c.status = '\''sending'\'';\n", ids, wamids
		ids = wamids = ""; k = 0
	}
	{ ids = ids (k ? "," : "") $1; wamids = wamids (k ? "," : "") "wamid.a" $1; if (++k == b) flush() }
	END { if (k) flush() }' >"$T/record.sql"
s=$(date +%s.%N)
psql -X -q -At -f "$T/record.sql" >/dev/null
t_raw=$(secs "$s")
s=$(date +%s.%N)
/usr/bin/time -f %M -o "$T/rss" wa-record -n "$BATCH" <"$T/results" \
    >/dev/null
t_ours=$(secs "$s")
sent=$(sql "select count(*) from campaign_recipients where status = 'sent'")
[ "$sent" = $((2 * ROWS)) ] || bail "recorded $sent, not $((2 * ROWS))"
echo "record $ROWS results, batch $BATCH"
echo "  psql (raw statement)  $t_raw s  $(rate "$ROWS" "$t_raw") rows/s"
echo "  wa-record             $t_ours s  $(rate "$ROWS" "$t_ours") rows/s  max RSS $(cat "$T/rss") KiB"
echo "  ratio                 $(echo "$t_raw $t_ours" | awk '{ printf "%.0f%%", 100 * $1 / $2 }')"
