# shellcheck shell=sh
# bench/lib.sh: sourced by the benchmarks that use tests/lib.sh (a
# throwaway Postgres, wa-fake-api): what they would otherwise each carry.
# Reads tests/lib.sh and tests/fake.sh (their temp dir $T, pg_start, sql,
# campaign, fake_start, bail, ...); writes nothing of its own. Postgres
# gets its default durability (PG_DURABLE=1); PG_OPTIONS, set before,
# adds settings.
#
#   # shellcheck source=bench/lib.sh
#   . "$(dirname "$0")/lib.sh"
#   pg_start

export PG_DURABLE=1
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../tests/lib.sh"
# shellcheck source=tests/fake.sh
. "$TOP/tests/fake.sh"

# pg_up: pg_start, then EXTRA_SQL (a schema variant to measure) applied
# after sql/schema.sql.
pg_up() {
	pg_start
	if [ -n "${EXTRA_SQL:-}" ]; then
		sql "$EXTRA_SQL" >/dev/null
	fi
}

# Time and rates, as the benchmarks print them.

# now: the time, in seconds and nanoseconds.
now() {
	date +%s.%N
}
# secs START: seconds since START (a now), to 1/100 s.
secs() {
	echo "$(now) $1" | awk '{ printf "%.2f\n", $1 - $2 }'
}
# rate A B: A / B, to a whole number (rows/s, bytes/row, ...).
rate() {
	echo "$1 $2" | awk '{ printf "%.0f", $1 / $2 }'
}
# pct A B: A as a whole percentage of B ("87%").
pct() {
	echo "$1 $2" | awk '{ printf "%.0f%%", 100 * $1 / $2 }'
}
# median [FILE]: the median of the numbers in FILE (or standard input),
# one a line.
median() {
	sort -n "$@" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
