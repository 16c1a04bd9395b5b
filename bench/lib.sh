# shellcheck shell=sh
# bench/lib.sh: sourced by the benchmarks that use tests/lib.sh (a
# throwaway Postgres, wa-fake-api): what they would otherwise each carry.
# Reads tests/lib.sh and tests/fake.sh (their temp dir $T, pg_start, sql,
# campaign, fake_start, bail, ...), /proc and the cluster's WAL position;
# writes nothing of its own. Postgres gets its default durability
# (PG_DURABLE=1); PG_OPTIONS, set before, adds settings.
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

# CPU, from /proc: robust to what else the machine runs.

# HZ: clock ticks a second, what ticks and pgticks count in.
# shellcheck disable=SC2034	# used by the scripts that source this
HZ=$(getconf CLK_TCK)
# ticks PID [all]: utime + stime of PID (and, with "all", of its reaped
# children), in clock ticks; 0 if PID is gone.
ticks() {
	awk -v all="${2:-}" '{ sub(/.*\) /, ""); t = $12 + $13
	    if (all != "") t += $14 + $15; print t }' "/proc/$1/stat" \
	    2>/dev/null || echo 0
}
# us TICKS N: clock ticks as microseconds for each of N (messages,
# statuses).
us() {
	echo "$1 $2 $HZ" | awk '{ printf "%.1f", 1e6 * $1 / $3 / $2 }'
}
# pgprocs: the cluster's processes and their CPU in clock ticks, a line
# each: "reaped" (the postmaster's own, with its reaped children's), then
# each live child's command line (without "postgres: ", spaces made _).
# Taken again while a child was reaped as it was taken: read after the
# postmaster's count and gone before its own, its CPU would be in
# neither (a backend whose client had just left made a second's CPU
# vanish from a snapshot).
pgprocs() {
	pm=$(head -1 "$PGDATA/postmaster.pid")
	while :; do
		before=$(pgrep -P "$pm")
		out=$(echo "reaped $(ticks "$pm" all)"
		    for p in $before; do
			k=$({ tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null |
			    sed 's/^postgres: //; s/ *$//' | tr ' ' _)
			echo "${k:-ended} $(ticks "$p")"
		    done)
		after=" $(echo $(pgrep -P "$pm")) "
		gone=
		for p in $before; do
			case $after in *" $p "*) ;; *) gone=1 ;; esac
		done
		[ -z "$gone" ] && break
	done
	echo "$out"
}
# pgticks: every process of the cluster, in clock ticks.
pgticks() {
	pgprocs | awk '{ t += $NF } END { print t }'
}

# WAL.

# lsn: the cluster's current WAL position (as 0/1A2B3C4).
lsn() {
	sql "select pg_current_wal_lsn()"
}
# wal_bytes FROM [TO]: bytes of WAL from position FROM to TO (default:
# the current position).
wal_bytes() {
	if [ $# -gt 1 ]; then w_to="'$2'"; else w_to="pg_current_wal_lsn()"; fi
	sql "select pg_wal_lsn_diff($w_to, '$1')"
}

# waldump FROM TO: pg_waldump --stats=record of the WAL between the two
# positions.
waldump() {
	pgtmp_as "$pgtmp_bin/pg_waldump" -p "$PGDATA/pg_wal" -s "$1" -e "$2" \
	    --stats=record 2>/dev/null
}
# walstats FROM TO N: the kinds of WAL record between the two positions
# that came more than once a thousand messages (of N), by their bytes
# (records and page images), largest first; the totals first.
walstats() {
	waldump "$1" "$2" | awk -v n="$3" '
	    /^first record/ { next }
	    /^(WAL statistics|Type|Total)/ { print "1e99 " $0; next }
	    $2 > 0.001 * n { print ($(NF - 1) == "(" ? $(NF - 2) : \
	    $(NF - 1)) " " $0 }' | sort -s -k1,1 -r -g | sed 's/^[^ ]* /    /'
}

# A step measured: what it took in wall time, Postgres CPU and WAL.

# pg_mark: a CHECKPOINT (so that each measurement starts with the same
# full page images to write), then its start: l0 (WAL position), p0
# (Postgres ticks) and s (the time).
# shellcheck disable=SC2034	# used by the scripts that source this
pg_mark() {
	sql "checkpoint" >/dev/null
	l0=$(lsn) p0=$(pgticks)
	s=$(now)
}
# pg_took: its end, after pg_mark: e (wall seconds), l1 (WAL position),
# p1 (Postgres ticks) and w (WAL bytes since l0).
# shellcheck disable=SC2034	# used by the scripts that source this
pg_took() {
	e=$(secs "$s")
	l1=$(lsn) p1=$(pgticks)
	w=$(wal_bytes "$l0" "$l1")
}

# What the benchmarks feed Postgres.

# claim_update CAMPAIGN LIMIT: the raw claim, the UPDATE wa-claim ran
# before wapipe_claim: up to LIMIT due pending rows of CAMPAIGN set
# sending, if it is running.
claim_update() {
	echo "UPDATE campaign_recipients r SET status = 'sending',
	    attempt = r.attempt + 1, claimed_at = now() FROM campaigns c
	    WHERE r.id = ANY(ARRAY(SELECT id FROM campaign_recipients
	    WHERE campaign_id = $1 AND phase = 0 AND status = 'pending'
	    AND next_attempt_at <= now() ORDER BY next_attempt_at
	    LIMIT $2 FOR UPDATE SKIP LOCKED)) AND c.id = r.campaign_id
	    AND c.state = 'running'"
}
# WAMID_AWK: awk's wamid(prefix, id), the wamid of the message to row
# id in these benchmarks: prefix and id reversed, padded with zeros to
# 58 characters, the length of Meta's for an 11-digit number
# (cloud-api.md; the WAL of a message depends on it), in no order (Meta's
# begin with the number), as the index takes them.
WAMID_AWK='function wamid(p, n,  i, r) { r = p
    for (i = length(n); i > 0; i--) r = r substr(n, i, 1)
    while (length(r) < 58) r = r "0"; return r }'
# sent_results FILE [WAMID]: for each send request in FILE (as wa-claim
# writes them), the result wa-send would write had the API accepted it:
# wamid(WAMID, id), WAMID by default wamid.HBgL.
sent_results() {
	jq -r '"\(.id) \(.attempt)"' "$1" | awk -v w="${2:-wamid.HBgL}" \
	    "$WAMID_AWK"' { printf "{\"id\":%s,\"attempt\":%s,\"result\":" \
	    "{\"outcome\":\"sent\",\"wamid\":\"%s\",\"http_status\":200," \
	    "\"latency_ms\":200}}\n", $1, $2, wamid(w, $1) }'
}
# spool_statuses WAMID ENTRY [wrap]: lines "ID STATUS" on standard input
# as webhook bodies, one a line as wa-webhook spools them, 100 statuses
# each: entry ENTRY; each status of message wamid(WAMID, ID), at
# 1750000000 + its line number, from +1555 and ID in seven digits (with
# "wrap", ID's last seven: ids past 9,999,999), callback wapipe:ID:1.
# With PRICING=1, a sent and a delivered status carry the pricing object
# Meta puts on them (marketing, billable, type regular). With
# USER_IDS=1, every status carries the person's recipient_user_id (a
# BSUID, US. and ID), as the BSUID page says Meta's do.
spool_statuses() {
	awk -v w="$1" -v entry="$2" -v wrap="${3:-}" \
	    -v pricing="${PRICING:-}" -v uids="${USER_IDS:-}" "$WAMID_AWK"'
	function flush() { if (k) printf "%s]},\"field\":\"messages\"}]}]}\n", b; k = 0 }
	{ if (k == 0) b = "{\"object\":\"whatsapp_business_account\",\"entry\":[{\"id\":\"" entry "\",\"changes\":[{\"value\":{\"messaging_product\":\"whatsapp\",\"metadata\":{\"display_phone_number\":\"15550783881\",\"phone_number_id\":\"106540352242922\"},\"statuses\":["
	  else b = b ","
	  b = b sprintf("{\"id\":\"%s\",\"status\":\"%s\",\"timestamp\":\"%d\",\"recipient_id\":\"1555%07d\",\"biz_opaque_callback_data\":\"wapipe:%d:1\"}", wamid(w, $1), $2, 1750000000 + NR, wrap == "" ? $1 : $1 % 10000000, $1)
	  if (pricing != "" && $2 != "read")
		b = substr(b, 1, length(b) - 1) ",\"pricing\":{\"billable\":true,\"pricing_model\":\"PMP\",\"category\":\"marketing\",\"type\":\"regular\"}}"
	  if (uids != "")
		b = substr(b, 1, length(b) - 1) ",\"recipient_user_id\":\"US.9" $1 "\"}"
	  if (++k == 100) flush() }
	END { flush() }'
}

# What wa-fake-api saw, from its request log (tests/fake.sh's FAKE_LOG).

# apirate LOG BURST [DECIMALS]: the messages a second the API saw past
# the first BURST, to DECIMALS places (default 0).
apirate() {
	jq -r .t "$1" | sort -n | awk -v b="$2" -v d="${3:-0}" '
	    { t[NR] = $1 }
	    END { printf("%." d "f", (NR - 1 - b) * 1000 / (t[NR] - t[b + 1])) }'
}
# accepted_twice LOG: how many recipients the API accepted more than one
# message for.
accepted_twice() {
	jq -r 'select(.wamid != null) | .to' "$1" | sort | uniq -d | wc -l
}
