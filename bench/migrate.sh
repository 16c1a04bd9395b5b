#!/bin/sh
# bench/migrate.sh [ROWS] [FROM]: how long wa-campaign migrate holds a
# database of an older schema (FROM, a commit, default 62cd323: version
# 8; df0d676 is version 7) with one campaign of ROWS recipients (default
# 1,000,000), every second one settled (read, with a wamid of Meta's
# length) and 500 in flight, vacuumed. Version 8 rewrites
# campaign_recipients once (its phase column made again); version 9
# updates each row (status_at and status made again at the end), then
# rewrites it, and makes the wamid index again: the time is what the
# upgrade holds the table. Prints the table's size before and after, the
# time, and the claims listed for the rows in flight. A throwaway
# cluster (tests/lib.sh's pgtmp_start, no schema).
ROWS=${1:-1000000}
FROM=${2:-62cd323}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
git -C "$TOP" show "$FROM:sql/schema.sql" >"$T/old.sql" ||
    bail "no git history to take the schema of $FROM from"
pgtmp_start "$T/pg" 7>&- 2>"$T/pg.err" || bail "no Postgres: $(cat "$T/pg.err")"
psql -X -q -v ON_ERROR_STOP=1 -f "$T/old.sql" >/dev/null 2>&1
c=$(campaign "$ROWS")
sql "update campaign_recipients set status = 'read',
    wamid = 'wamid.HBgL' || md5(id::text) || left(md5((-id)::text), 16)
    where id % 2 = 0" >/dev/null
sql "select count(*) from wapipe_claim($c, 500, 1)" >/dev/null
sql "vacuum analyze" >/dev/null
before=$(sql "select pg_size_pretty(pg_table_size('campaign_recipients'))")
s=$(now)
wa-campaign migrate >/dev/null 2>"$T/migrate.err" ||
    bail "migrate failed: $(tail -3 "$T/migrate.err")"
took=$(secs "$s")
echo "migrate: $ROWS rows ($before) from $FROM: $took s;" \
    "table $(sql "select pg_size_pretty(pg_table_size('campaign_recipients'))")" \
    "after; claims listed: $(sql "select count(*) || ' of ' ||
    coalesce(sum(cardinality(ids)), 0) || ' rows' from campaign_claims")"
pgtmp_stop
