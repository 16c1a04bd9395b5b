#!/bin/sh
# bench/claim-growth.sh [ROWS [STEPS]]: the claim statement inside one big
# campaign as it advances with no VACUUM in between (autovacuum off): a
# campaign of ROWS recipients (default 1,000,000); at each step (default
# "0 100000 300000 600000" rows already claimed and settled) the claim
# statement's EXPLAIN (ANALYZE, BUFFERS, WAL) for a batch of 500, run
# twice (the first run marks the dead index entries it meets; the second
# is the steady state), then once more after a VACUUM. The pending index
# keeps the entries of claimed rows until VACUUM removes them, and every
# claim walks past them: this is what the VACUUM settings must bound.
ROWS=${1:-1000000}
STEPS=${2:-0 100000 300000 600000}
PG_OPTIONS="-c autovacuum=off"
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
pg_start
c=$(campaign "$ROWS")
sql "vacuum analyze" >/dev/null
claim() {
	psql -X -At -c "explain (analyze, buffers, wal, costs off)
	    $(claim_update "$c" 500)" | awk -v l="$1" '
	    /Execution Time/ { t = $3 }
	    /Index Scan using campaign_recipients_pending/ { p = 1 }
	    p && /Buffers/ { b = $0; sub(/.*Buffers: /, "", b); p = 0 }
	    END { printf "    %-22s %8.1f ms  pending index scan: %s\n", l, t, b }'
	# Settle them, so that the next claim starts past them.
	sql "update campaign_recipients set status = 'read',
	    wamid = 'wamid.' || id where campaign_id = $c
	    and status = 'sending'" >/dev/null
}
echo "claim-growth: one campaign of $ROWS rows, autovacuum off;" \
    "load $(cut -d' ' -f1 /proc/loadavg)"
done_rows=0
for s in $STEPS; do
	if [ "$s" -gt "$done_rows" ]; then
		sql "update campaign_recipients set status = 'read', attempt = 1,
		    wamid = 'wamid.' || id where id in (select id from
		    campaign_recipients where campaign_id = $c
		    and status = 'pending' order by next_attempt_at, id
		    limit $((s - done_rows)))" >/dev/null
		done_rows=$s
	fi
	echo "  $s rows settled:"
	claim "first claim"
	claim "second claim"
	sql "vacuum campaign_recipients" >/dev/null
	claim "after VACUUM"
	done_rows=$((done_rows + 1500))
done
