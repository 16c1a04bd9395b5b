#!/bin/sh
# bench/import.sh [ROWS] [RUNS]: wa-campaign import of a ROWS-row CSV
# (phone + 2 params; default 1,000,000) beside the raw statement a user
# would otherwise run (psql \copy straight into campaign_recipients, with
# its indexes, from the same rows with a campaign_id column), RUNS times
# each (default 3), on a throwaway cluster with Postgres's default
# durability (fsync, synchronous_commit and full_page_writes on). Then
# the same file again into the same campaign (every row a duplicate), and
# max RSS on a file a tenth the size, to show memory does not grow.
ROWS=${1:-1000000}
RUNS=${2:-3}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
pg_start

new_campaign() {
	wa-campaign create --name bench --phone-number-id 106540352242922 \
	    --template reminder
}

# The same rows twice: as an operator's CSV, and with campaign_id and
# the JSON parameters for a raw \copy (campaign id 1 is rewritten below).
gen() {
	awk -v n="$1" -v raw="$2" 'BEGIN {
		print raw ? "campaign_id,phone,template_params" : "phone,name,date"
		for (i = 1; i <= n; i++)
			if (raw)
				printf "@,+4915%09d,\"[\"\"Name %d\"\", \"\"2026-12-%02d\"\"]\"\n", i, i, i % 28 + 1
			else
				printf "+49 15%09d,Name %d,2026-12-%02d\n", i, i, i % 28 + 1
	}'
}
gen "$ROWS" 0 >"$T/rows.csv"
gen "$ROWS" 1 >"$T/raw.csv"
gen $((ROWS / 10)) 0 >"$T/small.csv"
note "files: $(du -h "$T/rows.csv" | cut -f1) CSV, $(du -h "$T/raw.csv" | cut -f1) raw"

: >"$T/ours"
: >"$T/raw"
i=0
while [ "$i" -lt "$RUNS" ]; do
	i=$((i + 1))
	sql "truncate campaign_recipients, campaign_phones cascade; checkpoint"
	c=$(new_campaign)
	s=$(now)
	/usr/bin/time -f %M -o "$T/rss" wa-campaign import "$c" "$T/rows.csv" \
	    2>"$T/err" || bail "import failed: $(cat "$T/err")"
	t=$(secs "$s")
	echo "$t" >>"$T/ours"
	note "run $i wa-campaign import  $t s  max RSS $(cat "$T/rss") KiB"
	rss=$(cat "$T/rss")

	sql "truncate campaign_recipients, campaign_phones cascade; checkpoint"
	c=$(new_campaign)
	sed "s/^@/$c/" "$T/raw.csv" >"$T/raw-c.csv"
	s=$(now)
	psql -X -q -v ON_ERROR_STOP=1 -c "\\copy campaign_recipients
	    (campaign_id, phone, template_params) from '$T/raw-c.csv'
	    with (format csv, header)" || bail "raw copy failed"
	t=$(secs "$s")
	echo "$t" >>"$T/raw"
	note "run $i psql \\copy          $t s"
done
n=$(sql "select count(*) from campaign_recipients")
[ "$n" = "$ROWS" ] || bail "loaded $n rows, not $ROWS"

# Every row again: all duplicates, nothing inserted.
c=$(sql "select max(id) from campaigns")
s=$(now)
wa-campaign import "$c" "$T/rows.csv" 2>"$T/err"
t_dup=$(secs "$s")
grep -q "0 imported, $ROWS skipped" "$T/err" ||
    bail "the second import did not skip every row: $(cat "$T/err")"

/usr/bin/time -f %M -o "$T/rss-small" wa-campaign import "$(new_campaign)" \
    "$T/small.csv" 2>/dev/null

t_ours=$(median "$T/ours")
t_raw=$(median "$T/raw")
echo "import $ROWS rows (phone + 2 params), median of $RUNS runs"
printf "  psql \\\\copy (raw, no checks)   %s s  %s rows/s\n" "$t_raw" "$(rate "$ROWS" "$t_raw")"
echo "  wa-campaign import            $t_ours s  $(rate "$ROWS" "$t_ours") rows/s  max RSS $rss KiB"
echo "  ratio                         $(pct "$t_raw" "$t_ours")"
echo "  same file again (all dups)    $t_dup s  $(rate "$ROWS" "$t_dup") rows/s"
echo "  max RSS, $((ROWS / 10)) rows         $(cat "$T/rss-small") KiB"
