#!/bin/sh
# bench/scan.sh [BIG] [SMALL]: what a campaign's counts cost (status,
# watch, report and requeue read a campaign's rows by campaign_id)
# beside another campaign of BIG rows (default 2,000,000): the time of
# `SELECT status, count(*) ... WHERE campaign_id = $1 GROUP BY status`
# for a campaign of SMALL rows (default 1,000) and for the big one,
# each the best of three runs, as EXPLAIN ANALYZE gives it, and the
# index that served it. EXTRA_SQL adds an index to compare, e.g.
# "CREATE INDEX ON campaign_recipients (campaign_id, phone)".
BIG=${1:-2000000}
SMALL=${2:-1000}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
pg_up
sql "insert into campaigns (name, phone_number_id, template_name, state)
    select 'c' || g, '106540352242922', 'reminder', 'running'
    from generate_series(1, 2) g" >/dev/null
sql "insert into campaign_recipients (campaign_id, phone, status)
    select 1, '+1555' || lpad(g::text, 9, '0'), 'read'
    from generate_series(1, $BIG) g" >/dev/null
sql "insert into campaign_recipients (campaign_id, phone)
    select 2, '+1666' || lpad(g::text, 9, '0')
    from generate_series(1, $SMALL) g" >/dev/null
sql "vacuum analyze campaign_recipients" >/dev/null
for c in 2 1; do
	for _ in 1 2 3; do
		sql "explain analyze select status, count(*)
		    from campaign_recipients where campaign_id = $c
		    group by status"
	done >"$T/plan"
	echo "scan: campaign of $(sql "select count(*) from campaign_recipients
	    where campaign_id = $c") rows:" \
	    "$(awk '/Execution Time/ { print $3 }' "$T/plan" | sort -n |
	    head -1) ms, by $(grep -o -E 'Scan (on|using) [a-z_0-9]+' \
	    "$T/plan" | sort -u | cut -d' ' -f3 | tr '\n' ' ')"
done
