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
