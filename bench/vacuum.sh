#!/bin/sh
# bench/vacuum.sh [ROWS]: what a campaign leaves VACUUM. ROWS recipients
# (default 200,000) go through wa-claim --once -n 500, wa-record (sent)
# and wa-status-ingest (sent, delivered, 60% read) with autovacuum off, so
# that every dead version waits; then prints the dead tuples left (after
# Postgres's own page pruning), the table and index sizes, and one
# VACUUM's wall time, Postgres CPU and WAL. Scaled to a 14.7 M-row
# campaign in bench/RESULTS.md. Default durability (PG_DURABLE=1).
ROWS=${1:-200000}
PG_OPTIONS="-c autovacuum=off"
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
pg_start
c=$(campaign "$ROWS")
sql "vacuum analyze" >/dev/null
wa-claim -c "$c" --once -n 500 >"$T/requests" 2>/dev/null
sent_results "$T/requests" | wa-record -n 500 >/dev/null
mkdir "$T/spool"
jq -r .id "$T/requests" | awk '{ print $1, "sent"; print $1, "delivered"
	if ($1 % 5 < 3) print $1, "read" }' |
    spool_statuses wamid.HBgL 1 >"$T/spool/0000000000000001.ndjson"
wa-status-ingest --follow "$T/spool" --once -n 1000
sql "select pg_stat_force_next_flush()" >/dev/null 2>&1
sleep 1	# the statistics collector's last report (not a synchronisation)
echo "vacuum: $ROWS rows, after claim, record and statuses, autovacuum off;" \
    "load $(cut -d' ' -f1 /proc/loadavg)"
sql "select n_tup_upd, n_tup_hot_upd, n_dead_tup,
    pg_size_pretty(pg_table_size('campaign_recipients')),
    pg_size_pretty(pg_indexes_size('campaign_recipients'))
    from pg_stat_user_tables where relname = 'campaign_recipients'" |
    awk -F'|' -v n="$ROWS" '{ printf "  %d updates (%.2f/row), %d HOT;" \
    " %d dead tuples left (%.2f/row); table %s, indexes %s\n",
    $1, $1 / n, $2, $3, $3 / n, $4, $5 }'
pg_mark
sql "vacuum (verbose) campaign_recipients" 2>"$T/verbose" >/dev/null
e=$(secs "$s")
p1=$(pgticks)
w=$(wal_bytes "$l0")
echo "  VACUUM: $e s (wall), postgres $(echo "$p0 $p1 $HZ" |
    awk '{ printf "%.2f", ($2 - $1) / $3 }') s CPU, WAL $((w / 1024)) KiB" \
    "($(rate "$w" "$ROWS") bytes/row)"
grep -E 'tuples:|pages:|index scans|WAL usage|avg read' "$T/verbose" |
    sed 's/^INFO: *//; s/^/    /'
