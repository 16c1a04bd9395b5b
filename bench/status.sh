#!/bin/sh
# bench/status.sh [ROWS]: the status path.
#
# 1. wa-status-ingest --follow over 2 x ROWS statuses (default ROWS
#    150,000: a delivered and a read for every row, the reads 5,000 rows
#    behind, 100 statuses per webhook body, batches of 1,000), beside, in
#    the same run and from the same state: (a) the same batches as plain
#    `UPDATE ... FROM unnest(...)` statements run by psql, (b) one UPDATE
#    per status from psql (a sample of NAIVE statuses, default 20,000;
#    the rate is extrapolated). ROUNDS rounds (default 3) of (a) then
#    ingest, each from the same reset state; the median ratio is printed.
# 2. wa-webhook under wrk: a 1-status body, signed once, posted by 64
#    and by 8 connections for DURATION seconds (default 10), the spool on
#    the disk with fsync on.
#
# Postgres is a throwaway cluster with the default durability (fsync,
# full_page_writes, synchronous_commit on). Prints statuses/s, requests/s,
# latency percentiles and max RSS.
ROWS=${1:-150000}
NAIVE=${NAIVE:-20000}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
BATCH=1000
PER_BODY=100
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
pg_start
campaign "$ROWS" >/dev/null
sql "update campaign_recipients set status = 'sent', attempt = 1,
    wamid = 'wamid.HBgL' || md5(id::text)" >/dev/null

reset() {
	sql "update campaign_recipients set status = 'sent', status_at = null
	    where status <> 'sent'; truncate unmatched_statuses,
	    spool_checkpoints" >/dev/null
	sql "vacuum analyze campaign_recipients" >/dev/null
	sql "checkpoint" >/dev/null
}

# The status stream: id status ts, delivered for row i then read for row
# i - 5000; the wamids as the table has them.
sql "select id, 'wamid.HBgL' || md5(id::text) from campaign_recipients
    order by id" | awk -F'|' -v lag=5000 '
	{ w[$1] = $2; n = $1
	  print $1, w[$1], "delivered", 1750000000 + $1
	  if ($1 > lag) print $1 - lag, w[$1 - lag], "read", 1750000100 + $1 }
	END { for (i = n - lag + 1; i <= n; i++) if (i > 0)
	  print i, w[i], "read", 1750000100 + i + lag }' >"$T/stream"
total=$(wc -l <"$T/stream")

# Webhook bodies, one per line, as wa-webhook spools them.
mkdir "$T/spool"
awk -v per="$PER_BODY" '
	function flush() { if (k) printf "%s]},\"field\":\"messages\"}]}]}\n", b; k = 0 }
	{ if (k == 0) b = "{\"object\":\"whatsapp_business_account\",\"entry\":[{\"id\":\"102290129340398\",\"changes\":[{\"value\":{\"messaging_product\":\"whatsapp\",\"metadata\":{\"display_phone_number\":\"15550783881\",\"phone_number_id\":\"106540352242922\"},\"statuses\":["
	  else b = b ","
	  b = b sprintf("{\"id\":\"%s\",\"status\":\"%s\",\"timestamp\":\"%d\",\"recipient_id\":\"1555%07d\",\"biz_opaque_callback_data\":\"wapipe:%d:1\",\"pricing\":{\"billable\":true,\"pricing_model\":\"PMP\",\"type\":\"regular\",\"category\":\"marketing\"}}", $2, $3, $4, $1, $1)
	  if (++k == per) flush() }
	END { flush() }' "$T/stream" >"$T/spool/0000000000000001.ndjson"

# (a) The same batches as plain UPDATEs: reduced per row (read beats
# delivered), sorted by id.
awk -v batch="$BATCH" '{ print int((NR - 1) / batch), $1, $3, $4 }' \
    "$T/stream" | sort -k1,1n -k2,2n -k3,3r | awk '
	function flush() {
		if (ids != "") printf "UPDATE campaign_recipients r SET status = u.status, status_at = to_timestamp(u.ts) FROM unnest('"'"'{%s}'"'"'::bigint[], '"'"'{%s}'"'"'::text[], '"'"'{%s}'"'"'::bigint[]) AS u(id, status, ts) WHERE r.id = u.id AND status_rank(u.status) > status_rank(r.status);\n", ids, sts, tss
		ids = sts = tss = ""
	}
	$1 != cur { flush(); cur = $1; last = "" }
	$2 == last { next }
	{ last = $2; sep = ids == "" ? "" : ","
	  ids = ids sep $2; sts = sts sep $3; tss = tss sep $4 }
	END { flush() }' >"$T/batched.sql"

# (b) One UPDATE per status.
head -n "$NAIVE" "$T/stream" | awk '{ printf "UPDATE campaign_recipients SET status = '"'"'%s'"'"', status_at = to_timestamp(%d) WHERE id = %d AND status_rank('"'"'%s'"'"') > status_rank(status);\n", $3, $4, $1, $3 }' >"$T/naive.sql"

echo "wa-status-ingest: $total statuses, $PER_BODY per body, batches of $BATCH; $(nproc) cores"
for round in $(seq "$ROUNDS"); do
	reset
	s=$(now)
	psql -X -q -f "$T/batched.sql" >/dev/null
	t=$(secs "$s")
	a=$(rate "$total" "$t")
	echo "  round $round (a) psql, batched UPDATE ... FROM unnest: $t s, $a statuses/s"
	reset
	s=$(now)
	/usr/bin/time -f %M -o "$T/rss" wa-status-ingest --follow "$T/spool" \
	    --once -n "$BATCH" --metrics "$T/ingest.prom"
	t=$(secs "$s")
	i=$(rate "$total" "$t")
	n=$(sql "select count(*) from campaign_recipients where status = 'read'")
	[ "$n" = "$ROWS" ] || bail "only $n rows read"
	echo "  round $round wa-status-ingest --follow: $t s, $i statuses/s ($(pct "$i" "$a") of (a)), max RSS $(cat "$T/rss") KiB"
	echo "$i $a" | awk '{ print $1 / $2 }' >>"$T/ratios"
	echo "$i" >>"$T/rates"
done
i=$(median "$T/rates")
echo "  median: wa-status-ingest $i statuses/s, $(median "$T/ratios" |
    awk '{ printf "%.0f%%", 100 * $1 }') of (a)"
reset
s=$(now)
psql -X -q -f "$T/naive.sql" >/dev/null
t=$(secs "$s")
b=$(rate "$NAIVE" "$t")
echo "  (b) psql, one UPDATE per status ($NAIVE of them): $t s, $b statuses/s; wa-status-ingest is $(echo "$i $b" | awk '{ printf "%.1f", $1 / $2 }')x (b)"

# wa-webhook under load.
export WA_APP_SECRET=bench-secret WA_VERIFY_TOKEN=bench
body='{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","changes":[{"value":{"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550783881","phone_number_id":"106540352242922"},"statuses":[{"id":"wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQUFERjg0NDEzNDdFODU3MUMxMAA=","status":"delivered","timestamp":"1750030073","recipient_id":"16505551234","biz_opaque_callback_data":"wapipe:123:1","pricing":{"billable":true,"pricing_model":"PMP","type":"regular","category":"marketing"}}]},"field":"messages"}]}]}'
printf %s "$body" >"$T/body.json"
SIG=$(openssl dgst -sha256 -hmac "$WA_APP_SECRET" "$T/body.json" |
    sed 's/^.*= */sha256=/')
BODY=$T/body.json
export SIG BODY
cat >"$T/post.lua" <<'EOF'
wrk.method = "POST"
local f = io.open(os.getenv("BODY"), "rb")
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-Hub-Signature-256"] = os.getenv("SIG")
EOF
for c in 64 8; do
	rm -rf "$T/wspool" "$T/port"
	/usr/bin/time -f %M -o "$T/wrss" wa-webhook -s "$T/wspool" \
	    --listen 127.0.0.1:0 --port-file "$T/port" \
	    --metrics "$T/webhook.prom" &
	wh=$!
	wait_for 10 test -s "$T/port" || bail "wa-webhook did not start"
	wrk -t2 -c"$c" -d"$DURATION"s --latency -s "$T/post.lua" \
	    "http://127.0.0.1:$(cat "$T/port")/" >"$T/wrk"
	kill "$(pgrep -P "$wh")" 2>/dev/null || kill "$wh"
	wait "$wh"
	reqs=$(awk '/requests in/ { print $1 }' "$T/wrk")
	stored=$(cat "$T/wspool"/*.ndjson | wc -l)
	syncs=$(awk '/^wa_webhook_fsyncs_total/ { print $2 }' "$T/webhook.prom")
	echo "wa-webhook, $c connections, ${DURATION}s: $(awk '/Requests\/sec/ { print $2 }' "$T/wrk") req/s," \
	    "latency p50 $(awk '$1 == "50%" { print $2 }' "$T/wrk")" \
	    "p90 $(awk '$1 == "90%" { print $2 }' "$T/wrk")" \
	    "p99 $(awk '$1 == "99%" { print $2 }' "$T/wrk")," \
	    "$reqs answered, $stored stored, $syncs fsyncs" \
	    "($(echo "$stored $syncs" | awk '{ printf "%.1f", $1 / $2 }') bodies each)," \
	    "max RSS $(cat "$T/wrss") KiB"
	grep -q 'Non-2xx' "$T/wrk" && grep 'Non-2xx' "$T/wrk"
done
exit 0
