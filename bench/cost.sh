#!/bin/sh
# bench/cost.sh [ROWS]: what each message costs Postgres, stage by stage,
# without the API: wa-claim --once over ROWS recipients (default 100,000),
# wa-record of a sent result for each, then wa-status-ingest --follow
# --once over their statuses (sent, delivered, and read for 60%, 100 per
# webhook body, as Meta sends them). For each stage: WAL bytes per message
# (pg_current_wal_lsn), the CPU of every Postgres process per message
# (utime+stime from /proc: robust to other load), the stage's own CPU, and
# with WALDUMP=1 the pg_waldump --stats=record of the stage's WAL. A
# throwaway cluster with the default durability (PG_DURABLE=1), a
# CHECKPOINT before each stage, so that each starts with the same full
# page images to write. SETTLED=N first adds N settled (read) rows in
# another campaign: the growth measurement. CLAIM_N: the claim's batch;
# CLAIM_OPTS: more options for wa-claim (e.g. --tag 0). PRICING=1: the
# sent and delivered statuses carry a pricing object, as Meta's do.
# USER_IDS=1: every status carries a recipient_user_id (bench/lib.sh).
ROWS=${1:-100000}
SETTLED=${SETTLED:-0}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
# EXTRA_SQL: a schema variant to measure, applied after sql/schema.sql.
pg_up

# stage NAME CMD...: runs CMD (stdin/stdout as given), prints its costs.
stage() {
	n=$1
	shift
	pg_mark
	/usr/bin/time -f '%U %S %M' -o "$T/time" "$@"
	pg_took
	tail -1 "$T/time" >"$T/time1"
	read -r u sy rss <"$T/time1"
	echo "$n $ROWS $w $((p1 - p0)) $u $sy $rss $e $HZ" | awk '{
	    printf "  %-8s WAL %5.0f bytes/msg  postgres %5.1f us/msg  " \
	    "program %5.1f us/msg  max RSS %6d KiB  %6.2f s (wall)\n",
	    $1, $3 / $2, 1e6 * $4 / $9 / $2, 1e6 * ($5 + $6) / $2, $7, $8 }' >&7
	if [ -n "${WALDUMP:-}" ]; then
		walstats "$l0" "$l1" "$ROWS" >&7
	fi
}

# The settled rows are written settled, in one statement (no update
# after: its dead versions would be vacuumed below anyway).
t0=$(date +%s)
if [ "$SETTLED" -gt 0 ]; then
	old=$(sql "insert into campaigns (name, phone_number_id,
	    template_name, state) values ('old', '106540352242922',
	    'reminder', 'completed') returning id" | head -1)
	sql "insert into campaign_recipients (campaign_id, phone,
	    template_params, status, attempt, wamid, claimed_at, status_at)
	    select $old, '+1666' || lpad(g::text, 9, '0'),
	    jsonb_build_array('p' || g), 'read', 1, 'wamid.old' || g, now(),
	    now() from generate_series(1, $SETTLED) g" >/dev/null
fi
c=$(campaign "$ROWS")
l=$(date +%s)
sql "vacuum analyze" >/dev/null
e=$(date +%s)
echo "cost: loaded in $((l - t0)) s, vacuumed in $((e - l)) s; table" \
    "$(sql "select pg_size_pretty(pg_table_size('campaign_recipients'))")," \
    "indexes" \
    "$(sql "select pg_size_pretty(pg_indexes_size('campaign_recipients'))")"
echo "cost: $ROWS messages, $SETTLED settled rows beside; $(nproc) cores," \
    "load $(cut -d' ' -f1 /proc/loadavg)"
# shellcheck disable=SC2086
# (CLAIM_OPTS: words, split on purpose.)
stage claim wa-claim -c "$c" --once -n "${CLAIM_N:-500}" ${CLAIM_OPTS:-} \
    >"$T/requests"
sent_results "$T/requests" >"$T/results"
stage record wa-record -n 500 <"$T/results" >/dev/null
# sent, delivered, and read for 60%: bodies of 100 statuses each.
mkdir "$T/spool"
awk -v ts=1750000000 '{ id = $0; sub(/.*"id":/, "", id); sub(/,.*/, "", id)
	print id, "sent"; print id, "delivered"
	if (id % 5 < 3) print id, "read" }' "$T/requests" |
    spool_statuses wamid.HBgL 102290129340398 \
    >"$T/spool/0000000000000001.ndjson"
stage status wa-status-ingest --follow "$T/spool" --once -n 1000
n=$(sql "select count(*) from campaign_recipients where campaign_id = $c
    and status = 'read'")
[ "$n" = $((ROWS * 3 / 5)) ] || bail "read $n, not $((ROWS * 3 / 5))"
if [ -n "${EXPLAIN:-}" ]; then
	sql "update campaign_recipients set status = 'pending'
	    where campaign_id = $c and id % 100 = 0" >/dev/null
	psql -X -c "explain (analyze, buffers, wal) $(claim_update "$c" 500)"
fi
sql "select n_tup_upd, n_tup_hot_upd from pg_stat_user_tables
    where relname = 'campaign_recipients'" |
    awk -F'|' '{ printf "  campaign_recipients: %d updates, %d HOT (%.0f%%)\n",
    $1, $2, 100 * $2 / $1 }'
