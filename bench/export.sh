#!/bin/sh
# bench/export.sh [ROWS]: wa-campaign export of ROWS recipients (default
# 1,000,000: a third sent with a wamid, a third failed with an error, a
# third pending; two template parameters each), as CSV and as NDJSON, to
# /dev/null, beside the same SELECT through psql's \copy ... to stdout
# csv in the same run. ROUNDS rounds (default 3), median. Also the max
# RSS of each, and of wa-campaign on a tenth of the rows, to show that
# memory does not grow with the rows.
#
# Postgres is a throwaway cluster with the default durability (it only
# reads here). Prints rows/s and max RSS.
ROWS=${1:-1000000}
ROUNDS=${ROUNDS:-3}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
pg_start
c=$(campaign "$ROWS")
small=$(campaign $((ROWS / 10)))
for k in $c $small; do
	sql "update campaign_recipients set
	    template_params = jsonb_build_array('Name ' || id, '2026-12-0' ||
	     id % 9 + 1),
	    status = (array['sent', 'failed', 'pending'])[id % 3 + 1],
	    attempt = CASE WHEN id % 3 = 2 THEN 0 ELSE 1 + id % 2 END,
	    wamid = CASE WHEN id % 3 = 0 THEN 'wamid.HBgL' || md5(id::text) END,
	    error_code = CASE WHEN id % 3 = 1 THEN 131026 END,
	    error_class = CASE WHEN id % 3 = 1 THEN 'permanent' END,
	    error_title = CASE WHEN id % 3 = 1 THEN 'Message undeliverable' END,
	    status_at = CASE WHEN id % 3 <> 2 THEN now() END
	    where campaign_id = $k" >/dev/null
done
sql "vacuum analyze campaign_recipients" >/dev/null

# What export runs, for psql.
iso() {
	echo "to_char($1 at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
}
select="select phone, status, attempt as attempts, wamid, error_code,
    error_class, translate(error_title, E'\\r\\n', '  ') as error_title,
    case when error_code is not null or error_title is not null or
    error_class is not null then $(iso status_at) end as error_at,
    $(iso status_at) as status_at, template_params as params
    from campaign_recipients where campaign_id = $c order by phone"

# run NAME COMMAND...: one timed run to /dev/null; time and RSS to files.
run() {
	name=$1
	shift
	s=$(now)
	/usr/bin/time -f %M -o "$T/rss" "$@" >/dev/null || bail "$name failed"
	secs "$s" >>"$T/$name.t"
	cat "$T/rss" >>"$T/$name.rss"
}
note "PostgreSQL $(sql 'show server_version'), $ROWS rows, $ROUNDS rounds," \
    "load $(cut -d' ' -f1-3 /proc/loadavg)"
i=0
while [ "$i" -lt "$ROUNDS" ]; do
	run psql psql -X -q -c "\\copy ($select) to stdout with (format csv, header)"
	run csv wa-campaign export "$c"
	run ndjson wa-campaign export --format ndjson "$c"
	i=$((i + 1))
done
run small wa-campaign export "$small"
bytes=$(wa-campaign export "$c" | wc -c)
nbytes=$(wa-campaign export --format ndjson "$c" | wc -c)
psql -X -q -c "\\copy ($select) to stdout with (format csv, header)" \
    >"$T/psql.csv"
wa-campaign export "$c" | cmp -s - "$T/psql.csv" ||
    note "warning: psql's CSV differs from export's"
for n in "psql:psql \\copy csv" "csv:wa-campaign export" \
    "ndjson:wa-campaign export --format ndjson"; do
	f=${n%%:*}
	t=$(median "$T/$f.t")
	printf '%-40s %6s s  %7.0f rows/s  max RSS %s KiB (rounds: %s)\n' \
	    "${n#*:}" "$t" "$(echo "$ROWS $t" | awk '{ print $1 / $2 }')" \
	    "$(sort -n "$T/$f.rss" | tail -1)" "$(tr '\n' ' ' <"$T/$f.t")"
done
echo "output: CSV $bytes bytes, NDJSON $nbytes bytes"
echo "wa-campaign export csv of $((ROWS / 10)) rows: max RSS $(cat "$T/small.rss") KiB"
