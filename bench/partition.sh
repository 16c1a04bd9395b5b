#!/bin/sh
# bench/partition.sh [CAMPAIGNS [ROWS]]: campaign_recipients as one table
# and partitioned by campaign (LIST, one partition per campaign), side by
# side in one cluster (the partitioned one in schema part, found first by
# PGOPTIONS=-csearch_path=part,public; everything else shared). CAMPAIGNS
# campaigns (default 50) of ROWS rows (default 20,000) in each layout,
# settled but the last; then, for the last campaign of each layout:
# wa-claim --once -n 500, wa-record of a sent result per row, and
# wa-status-ingest of delivered and read statuses, each timed with its
# Postgres CPU and WAL; then a finished campaign archived, by DELETE from
# the table and by DETACH PARTITION + DROP TABLE. Postgres with its
# default durability (PG_DURABLE=1).
#
# The partitioned table cannot have what the statements rely on: a
# primary key on id alone or a unique index on wamid (a unique index on a
# partitioned table must hold the partition key), hence no foreign key
# from recipient_errors either; here id and wamid get plain indexes, so
# what is measured is the cost, not the guarantees.
CAMPAIGNS=${1:-50}
ROWS=${2:-20000}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
pg_start

# measure LABEL N CMD...: wall time, Postgres CPU per row and WAL per row
# of CMD over N rows.
measure() {
	l=$1 n=$2
	shift 2
	pg_mark
	"$@"
	pg_took
	echo "$n $e $((p1 - p0)) $w $HZ" | awk -v l="$l" '{
	    printf "  %-32s %8.3f s  postgres %7.1f us/row  WAL %6.0f" \
	    " bytes/row\n", l, $2, 1e6 * $3 / $5 / $1, $4 / $1 }' >&7
}

sql "create schema part;
    create table part.campaign_recipients (like public.campaign_recipients
    including defaults including generated including constraints)
    partition by list (campaign_id);
    create index on part.campaign_recipients (id);
    create unique index on part.campaign_recipients (campaign_id, phone);
    create index on part.campaign_recipients (wamid)
    where wamid is not null;
    create index on part.campaign_recipients (campaign_id, next_attempt_at)
    where phase = 0;
    create index on part.campaign_recipients (campaign_id, claimed_at)
    where phase = 1" >/dev/null

# fill SCHEMA: CAMPAIGNS campaigns in SCHEMA, all but the last settled.
fill() {
	i=0
	while [ "$i" -lt "$CAMPAIGNS" ]; do
		i=$((i + 1))
		c=$(sql "insert into campaigns (name, phone_number_id,
		    template_name, state) values ('$1 $i', '106540352242922',
		    'reminder', 'running') returning id" | head -1)
		[ "$1" = part ] && sql "create table part.cr_$c partition of
		    part.campaign_recipients for values in ($c)
		    with (fillfactor = 70)" >/dev/null
		if [ "$i" -lt "$CAMPAIGNS" ]; then st='read'; else st='pending'; fi
		sql "insert into $1.campaign_recipients (campaign_id, phone,
		    template_params, status, attempt, wamid)
		    select $c, '+1555' || lpad(g::text, 7, '0'),
		    jsonb_build_array('p' || g), '$st',
		    case when '$st' = 'read' then 1 else 0 end,
		    case when '$st' = 'read' then 'wamid.$c.' || g end
		    from generate_series(1, $ROWS) g" >/dev/null
	done
	echo "$c"
}
flat_last=$(fill public)
part_last=$(fill part)
first_flat=$(sql "select min(id) from campaigns")
first_part=$(sql "select min(id) from campaigns where name like 'part%'")
sql "vacuum analyze" >/dev/null
echo "partition: $CAMPAIGNS campaigns x $ROWS rows in each layout;" \
    "$(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"

# run SCHEMA CAMPAIGN: claim, record, statuses of CAMPAIGN.
run() {
	PGOPTIONS="-csearch_path=$1,public"
	export PGOPTIONS
	measure "$1: claim (-n 500)" "$ROWS" \
	    sh -c "wa-claim -c $2 --once -n 500 >'$T/req' 2>>'$T/err'"
	sent_results "$T/req" wamid.x >"$T/res"
	measure "$1: record (-n 500)" "$ROWS" \
	    sh -c "wa-record -n 500 <'$T/res' >/dev/null"
	rm -rf "$T/spool.$1"
	mkdir "$T/spool.$1"
	jq -r '.id' "$T/req" | awk '{ print $1, "delivered"; print $1, "read" }' |
	    spool_statuses wamid.x 1 wrap >"$T/spool.$1/0000000000000001.ndjson"
	measure "$1: statuses (2/row, -n 1000)" "$ROWS" \
	    wa-status-ingest --follow "$T/spool.$1" --once -n 1000
	n=$(sql "select count(*) from campaign_recipients where
	    campaign_id = $2 and status = 'read'")
	[ "$n" = "$ROWS" ] || bail "$1: read $n of $ROWS: $(tail -3 "$T/err")"
	unset PGOPTIONS
}
run public "$flat_last"
run part "$part_last"

# Archiving a finished campaign.
measure "public: DELETE one campaign" "$ROWS" sql "delete from
    public.campaign_recipients where campaign_id = $first_flat" >/dev/null
measure "part: DETACH + DROP partition" "$ROWS" sql "alter table
    part.campaign_recipients detach partition part.cr_$first_part;
    drop table part.cr_$first_part" >/dev/null
