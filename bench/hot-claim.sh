#!/bin/sh
# bench/hot-claim.sh [ROWS]: the WAL of the claim and the record as they
# are (main's schema) beside a variant in which the claim is a heap-only
# update, in the same run, taking turns (main, variant, main, ...; RUNS,
# default 3, of each). Not a design in use: a measurement to choose the
# next one by (bench/RESULTS.md, issue 26).
#
# Why the claim is not heap-only today: it moves a row from phase 0 to
# phase 1, and both partial indexes (pending, unsettled) name phase, so
# every claim writes a new index entry in the primary key and in the
# unsettled index, and the version that does not fit its page moves
# (a lock record besides). The variant keeps the in-flight rows in
# phase 0 (phase 2 only once settled), has no unsettled index, and a
# fillfactor of 45 so that a page's rows each find room for a new
# version. What the variant breaks, and why it is not built: wa-claim's
# putback and exit checks, wa-reconcile and wa-campaign round find the
# in-flight rows through phase = 1 and the unsettled index; and each
# claim's index scan walks past the rows already in flight.
#
# Each run: a throwaway cluster (default durability), a campaign of ROWS,
# VACUUM ANALYZE; CHECKPOINT, wapipe_claim in batches of 500 (each its
# own transaction, as wa-claim runs it) until all are claimed; CHECKPOINT,
# wa-record -n 500 of a sent result for each. Prints WAL bytes a message
# for each stage, of which full page images (pg_waldump --stats), and the
# share of its updates that were heap-only.
ROWS=${1:-50000}
RUNS=${RUNS:-3}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
VARIANT="ALTER TABLE campaign_recipients DROP COLUMN phase CASCADE;
ALTER TABLE campaign_recipients ADD COLUMN phase smallint GENERATED ALWAYS
    AS (CASE status WHEN 'pending' THEN 0 WHEN 'sending' THEN 0
    WHEN 'unknown' THEN 0 ELSE 2 END) STORED;
CREATE INDEX campaign_recipients_pending ON campaign_recipients
    (campaign_id, next_attempt_at) WHERE phase = 0;
ALTER TABLE campaign_recipients SET (fillfactor = 45);"

# fpi: full page image bytes in the WAL between l0 and l1.
fpi() {
	waldump "$l0" "$l1" | awk '$1 == "Total" { print $5 }'
}
# hot: heap-only updates of campaign_recipients so far.
hot() {
	sql "select n_tup_hot_upd from pg_stat_user_tables
	    where relname = 'campaign_recipients'"
}

# one NAME: a run on a fresh cluster (pg_up applies EXTRA_SQL).
one() {
	pg_up
	c=$(campaign "$ROWS")
	sql "vacuum analyze" >/dev/null
	pg_mark
	i=0
	while [ $i -lt $(((ROWS + 499) / 500)) ]; do
		sql "select count(*) from wapipe_claim($c, 500, $i)" >/dev/null
		i=$((i + 1))
	done
	pg_took
	cw=$w cf=$(fpi) ch=$(hot)
	sql "select json_build_object('id', id, 'attempt', attempt)
	    from campaign_recipients where status = 'sending'" >"$T/requests"
	[ "$(wc -l <"$T/requests")" -eq "$ROWS" ] ||
	    bail "$1: $(wc -l <"$T/requests") of $ROWS claimed"
	sent_results "$T/requests" >"$T/results"
	pg_mark
	wa-record -n 500 <"$T/results" >/dev/null || bail "$1: wa-record failed"
	pg_took
	[ "$(sql "select count(*) from campaign_recipients
	    where status = 'sent'")" -eq "$ROWS" ] || bail "$1: not all recorded"
	echo "$1 $ROWS $cw $cf $w $(fpi) $ch $(hot)" | awk '{
	    printf "  %-7s claim %4.0f B/msg (FPI %3.0f, HOT %3.0f%%)  " \
	    "record %4.0f B/msg (FPI %3.0f, HOT %3.0f%%)  both %4.0f\n",
	    $1, $3 / $2, $4 / $2, 100 * $7 / $2, $5 / $2, $6 / $2,
	    100 * ($8 - $7) / $2, ($3 + $5) / $2 }'
	pg_stop
	rm -rf "$T/pg"
}

echo "hot-claim: $ROWS rows a run; $(nproc) cores, load" \
    "$(cut -d' ' -f1 /proc/loadavg)"
r=0
while [ $r -lt "$RUNS" ]; do
	EXTRA_SQL='' one main
	EXTRA_SQL=$VARIANT one variant
	r=$((r + 1))
done
echo "hot-claim: done; load $(cut -d' ' -f1 /proc/loadavg)"
