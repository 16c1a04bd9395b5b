#!/bin/sh
# bench/report.sh [ROWS]: wa-campaign report on a campaign of ROWS
# recipients (default 1,000,000) in every status: 70% read, 12%
# delivered, 5% sent, 5% failed, 3% unknown, 5% pending (a fifth of them
# waiting for a retry), claimed over three hours, delivered 1 to 600 s
# after the claim, read up to 2 h after; one error in the history of a
# row in ten.
#
# In the same run and on the same warm cache: (a) the report's two
# aggregate statements alone, prepared and executed by psql in one
# read-only snapshot, output thrown away (taken from the very strings
# wa-campaign runs, by a small program compiled from its sources, with the
# same work_mem); then (b)
# wa-campaign report --json and (c) the HTML page. ROUNDS rounds (default
# 3), each arm once a round; prints seconds, the median, and the max RSS
# of wa-campaign. Postgres is a throwaway cluster with its default
# durability.
ROWS=${1:-1000000}
ROUNDS=${ROUNDS:-3}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
[ -f "$TOP/build/libwa.a" ] || bail "build first: make"
pg_start

# The statements, from the sources wa-campaign is built from.
cat >"$T/sqlof.c" <<'C'
#include "../cmd/wa-campaign/status.c"
#include "../cmd/wa-campaign/report.c"
int
main(void)
{
	printf("PREPARE status AS %s;\nPREPARE figures AS %s;\n",
	    report_sql, figures_sql);
	(void)list_sql;
	return 0;
}
C
# shellcheck disable=SC2046
# (Only the statements are wanted: the commands that use them, and what
# they call in the rest of wa-campaign, are dropped by --gc-sections.)
cc -std=c11 -D_GNU_SOURCE -I"$TOP/lib" -ffunction-sections \
    -Wl,--gc-sections -o "$T/sqlof" "$T/sqlof.c" \
    "$TOP/build/libwa.a" $(pkg-config --cflags --libs json-c libpq) ||
    bail "cannot build the statement printer"
"$T/sqlof" >"$T/prepare.sql"

s=$(date +%s)
c=$(campaign "$ROWS")
sql "update campaign_recipients r set status = v.status,
    attempt = v.attempt, claimed_at = v.claimed,
    wamid = CASE WHEN v.status IN ('sent', 'delivered', 'read')
     THEN 'wamid.' || r.id END,
    status_at = CASE v.status
     WHEN 'delivered' THEN v.claimed + (1 + r.id % 600) * interval '1 s'
     WHEN 'read' THEN v.claimed + (1 + r.id % 7200) * interval '1 s'
     WHEN 'pending' THEN NULL ELSE v.claimed END,
    next_attempt_at = CASE WHEN v.status = 'pending' AND r.id % 5 = 0
     THEN now() + (r.id % 86400) * interval '1 s' ELSE now() END,
    error_code = CASE WHEN v.status = 'failed' THEN 131026 END,
    error_title = CASE WHEN v.status = 'failed'
     THEN 'Message undeliverable' END
    from (select id, CASE WHEN p < 70 THEN 'read' WHEN p < 82
     THEN 'delivered' WHEN p < 87 THEN 'sent' WHEN p < 92 THEN 'failed'
     WHEN p < 95 THEN 'unknown' ELSE 'pending' END AS status,
     1 + (id % 7 = 0)::int AS attempt,
     now() - interval '4 hours' + (id % 10800) * interval '1 s' AS claimed
     from (select id, (id * 7919) % 100 AS p from campaign_recipients
     where campaign_id = $c) x) v
    where r.id = v.id" >/dev/null
sql "insert into recipient_errors (recipient_id, attempt, code, class,
    title, at) select id, 1, (array[131026, 131056, 131000, 130429])
    [1 + id % 4], (array['permanent', 'pair_rate', 'transient',
    'throughput'])[1 + id % 4], 'error ' || id % 4, now()
    from campaign_recipients where campaign_id = $c and id % 10 = 0" \
    >/dev/null
sql "update campaign_recipients set status = 'pending', attempt = 0,
    claimed_at = NULL where campaign_id = $c and status = 'pending'
    and next_attempt_at <= now()" >/dev/null
sql "vacuum analyze" >/dev/null
echo "campaign $c: $ROWS rows made in $(($(date +%s) - s)) s;" \
    "$(nproc) cores; PostgreSQL $(sql 'show server_version')"

psql_arm() {
	{
		cat "$T/prepare.sql"
		echo "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;"
		echo "SET LOCAL work_mem = '1GB';"
		echo "EXECUTE status('$c');"
		echo "EXECUTE figures('$c');"
		echo "COMMIT;"
	} | psql -X -q -v ON_ERROR_STOP=1 >/dev/null || bail "psql failed"
}
# Warm the cache the same way for every arm.
psql_arm
wa-campaign report --json "$c" >/dev/null
for round in $(seq "$ROUNDS"); do
	s=$(now)
	psql_arm
	a=$(secs "$s")
	echo "$a" >>"$T/a"
	s=$(now)
	/usr/bin/time -f %M -o "$T/rss-json" wa-campaign report --json "$c" \
	    >"$T/report.json"
	b=$(secs "$s")
	echo "$b" >>"$T/b"
	s=$(now)
	/usr/bin/time -f %M -o "$T/rss-html" wa-campaign report "$c" \
	    >"$T/report.html"
	h=$(secs "$s")
	echo "$h" >>"$T/h"
	echo "  round $round: (a) psql, the statements alone $a s;" \
	    "(b) report --json $b s, max RSS $(cat "$T/rss-json") KiB;" \
	    "(c) HTML $h s, max RSS $(cat "$T/rss-html") KiB," \
	    "$(wc -c <"$T/report.html") bytes"
done
n=$(jq .total "$T/report.json")
[ "$n" = "$ROWS" ] || bail "the report counts $n rows, not $ROWS"
echo "  median: (a) $(median "$T/a") s, (b) $(median "$T/b") s," \
    "(c) $(median "$T/h") s; funnel $(jq -c .funnel "$T/report.json")"
