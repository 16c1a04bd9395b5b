#!/bin/sh
# bench/rules.sh [ROWS]: what the rules of the road cost a claim. The
# claim as it was before them (the raw UPDATE, from psql) beside
# wapipe_claim (what wa-claim runs), batches of 500, taking turns in
# four rounds of ROWS/4 each, on a throwaway cluster with Postgres's
# default durability: first with no rule in force, then with 100,000
# people suppressed, then on a number with a messaging limit (of
# 100,000, the count of the people messaged made at every claim; its
# people forgotten after each round, so that none runs into it).
# Prints the seconds and rows/s of each side and the ratio.
ROWS=${1:-200000}
BATCH=500
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
pg_start

PER=$((ROWS / 4))
N=$(((PER + BATCH - 1) / BATCH))
# run FILE: seconds psql takes over FILE.
run() {
	s=$(now)
	psql -X -q -At -f "$1" >/dev/null || bail "psql failed on $1"
	echo "$s $(now)" | awk '{ printf "%.3f", $2 - $1 }'
}
# stmts NAME SQL: PREPAREs SQL and EXECUTEs it N times.
stmts() {
	echo "PREPARE $1 AS $2;"
	i=0
	while [ $i -lt $N ]; do
		echo "EXECUTE $1;"
		i=$((i + 1))
	done
}
# round CAMPAIGN_RAW CAMPAIGN_OURS: prints the two times.
round() {
	stmts r "$(claim_update "$1" "$BATCH")
	    RETURNING r.id, r.attempt, r.phone, r.template_params" >"$T/raw.sql"
	stmts f "SELECT * FROM wapipe_claim($2, $BATCH)" >"$T/ours.sql"
	echo "$(run "$T/raw.sql") $(run "$T/ours.sql")"
}
# case NAME NUMBER: four rounds on fresh campaigns of NUMBER.
case_() {
	raw=0 ours=0 k=0
	while [ $k -lt 4 ]; do
		a=$(campaign $PER)
		b=$(campaign $PER)
		sql "update campaigns set phone_number_id = '$2'
		    where id in ($a, $b)" >/dev/null
		sql "vacuum analyze campaign_recipients" >/dev/null
		t=$(round "$a" "$b")
		raw=$(echo "$raw ${t% *}" | awk '{ print $1 + $2 }')
		ours=$(echo "$ours ${t#* }" | awk '{ print $1 + $2 }')
		sql "update campaigns set state = 'completed'
		    where id in ($a, $b)" >/dev/null
		# Each round's people are new to the limit.
		sql "delete from limit_contacts" >/dev/null
		k=$((k + 1))
	done
	echo "$1: raw claim $raw s ($(rate "$ROWS" "$raw") rows/s)," \
	    "wapipe_claim $ours s ($(rate "$ROWS" "$ours") rows/s)," \
	    "$(pct "$raw" "$ours")"
}

case_ "no rule in force" 1001
sql "insert into suppressions (scope, phone, reason)
    select '*', '+1999' || lpad(g::text, 7, '0'), 'bench'
    from generate_series(1, 100000) g" >/dev/null
case_ "100,000 people suppressed" 1002
wa-campaign limit 1003 100000 >/dev/null
case_ "a messaging limit of 100,000" 1003
