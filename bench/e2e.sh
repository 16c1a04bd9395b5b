#!/bin/sh
# bench/e2e.sh [SCENARIO...]: the whole pipeline, wa-claim | wa-throttle |
# wa-send | wa-record, against wa-fake-api on a throwaway Postgres with
# its default durability (PG_DURABLE=1: fsync, full_page_writes,
# synchronous_commit on). Scenarios (default: flat one many):
#
#   flat   one pipeline flat out over ROWS recipients (default 200,000),
#          fake API without latency or limit, no webhooks; then wa-send
#          alone (same options) on a file of the same requests, claimed
#          from a twin campaign: the ceiling, in the same run.
#   one    one number at RATE msg/s (default 1000) for SECS seconds
#          (default 20), 250 ms latency, status webhooks (sent, delivered,
#          60% read) through wa-webhook and wa-status-ingest --follow.
#   peak   as one, with REPLY_RATE (default 0.05) of the people
#          answering after their message's last status (wa-fake-api
#          --reply-rate): the inbound messages stored by the same
#          wa-status-ingest and streamed by wa-inbound --follow, beside
#          the status lag (run "one peak" to compare in one run).
#   many   as one, with N numbers (a pipeline and campaign each, one fake,
#          one wa-webhook, one wa-status-ingest), N = 2, 4, 6, ... (or
#          NS="4 8"), raised until the combined rate falls below 95% of
#          N x RATE.
#
# TLS=1 runs every scenario over HTTPS and HTTP/2, as Meta serves the
# API: nginx with a throwaway certificate in front of the fake
# (tests/tls.sh), one worker; its CPU is printed apart (Meta's side, like
# the fake's), with the connections wa-send opened and the most calls
# one carried. nginx retires no connection here (keepalive_requests
# 10000000): tests/64-send-tls.t sends through GOAWAYs and resets.
#
# EXTRA_SQL='...' applies a schema variant first, PG_OPTIONS='-c ...'
# Postgres settings, CLAIM_OPTS='-n 500 ...' more options of wa-claim;
# WALDUMP=1 prints what the WAL is made of (pg_waldump --stats=record).
# For each run it prints msg/s (wall clock: it depends on what else the
# machine runs), CPU microseconds per message for every process, the
# Postgres backends included (postmaster's own, its live children's and
# its reaped children's utime+stime from /proc), WAL bytes per message
# (pg_current_wal_lsn before and after, statuses included when they
# come), and the max RSS of each filter.
ROWS=${ROWS:-200000}
RATE=${RATE:-1000}
SECS=${SECS:-20}
if [ -n "${PROFILE:-}" ]; then
	PG_OPTIONS="${PG_OPTIONS:-} -c shared_preload_libraries=pg_stat_statements"
	PG_OPTIONS="$PG_OPTIONS -c pg_stat_statements.track_planning=on"
	export PG_OPTIONS
fi
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || bail "no jq: run make deps"
if [ -n "${TLS:-}" ]; then
	# shellcheck source=tests/tls.sh
	. "$TOP/tests/tls.sh"
fi
WA_TOKEN=bench-token-$$
WA_APP_SECRET=bench-secret
export WA_TOKEN WA_APP_SECRET

# front: with TLS set, nginx in front of the fake just started, and its
# CPU so far (ng0); front_end: its CPU since (ngt), then it is stopped.
front() {
	[ -n "${TLS:-}" ] || return 0
	tls_front 'keepalive_requests 10000000;'
	ng0=$(ticks "$TLS_PID")
}
front_end() {
	[ -n "${TLS:-}" ] || return 0
	ngt=$(($(ticks "$TLS_PID") - ng0))
	ngc=$(tls_conns) ngs=$(tls_streams) ngp=$(tls_protocols | tr '\n' ' ')
	kill "$TLS_PID"
	wait "$TLS_PID"
	: >"$TLS_LOG"
}

# pgsnap FILE: the cluster's CPU by kind of process, in clock ticks
# (bench/lib.sh's pgprocs): each of the processes that live as long as
# the cluster by name, and "backends": every other (clients' backends,
# autovacuum and parallel workers, wal senders), live or ended, with the
# postmaster's own, in one sum, since one live at a snapshot may have
# ended by the next (counted apart, its CPU before the first would count
# as spent between them).
pgsnap() {
	pgprocs | while read -r k t; do
		case $k in
		checkpointer|background_writer|walwriter|archiver*|\
		autovacuum_launcher|logical_replication_launcher|\
		startup*|walreceiver*) ;;
		*) k=backends ;;
		esac
		echo "$k $t"
	done >"$1"
	if [ -n "${WALDUMP:-}" ]; then
		sql "select relname, n_tup_ins, n_tup_upd, n_tup_hot_upd,
		    n_tup_del from pg_stat_user_tables" | tr '|' ' ' >"$1.rows"
	fi
}
# pgsum FILE: the whole of a pgsnap, in clock ticks.
pgsum() {
	awk '{ t += $2 } END { print t }' "$1"
}
# pgdiff N: what each kind of process spent per message between the
# snapshots $T/pg.0 and $T/pg.1.
pgdiff() {
	awk -v n="$1" -v hz="$HZ" 'FNR == NR { a[$1] += $2; next }
	    { b[$1] += $2 }
	    END { for (k in b) if (b[k] - a[k] > 0)
	    printf "    %-28s %6.1f us/msg\n", k, 1e6 * (b[k] - a[k]) / hz / n }' \
	    "$T/pg.0" "$T/pg.1" | sort -k2 -n -r
}
# rowdiff N: with WALDUMP=1, the rows each table took per message
# between the snapshots (inserted, updated, of which heap-only, deleted),
# as the statistics had them (a live session's may lag a second).
rowdiff() {
	awk -v n="$1" 'FNR == NR { for (i = 2; i <= 5; i++) a[$1, i] = $i
	    next }
	    { d = 0; for (i = 2; i <= 5; i++) { v[i] = $i - a[$1, i]; d += v[i] }
	    if (d > 0.001 * n) printf "    %-24s ins %5.2f  upd %5.2f" \
	    " (hot %5.2f)  del %5.2f a message\n", $1, v[2] / n, v[3] / n,
	    v[4] / n, v[5] / n }' "$T/pg.0.rows" "$T/pg.1.rows"
}
# timed NAME CMD...: CMD under /usr/bin/time into $T/time.NAME (user, sys,
# max RSS); summed over runs with the same NAME by report.
timed() {
	n=$1
	shift
	/usr/bin/time -a -f '%U %S %M' -o "$T/time.$n" "$@"
}
# report N: the CPU per message of each timed program and of Postgres
# (pg0/pg1 ticks), the fake (fk0/fk1), the webhook side (wh, in), WAL
# (w0/w1), then the max RSS of each filter.
report() {
	for f in "$T"/time.*; do
		[ -e "$f" ] || continue
		awk -v n="$1" -v p="${f##*.}" '
		    { u += $1; s += $2; if ($3 > m) m = $3 }
		    END { printf "  %-17s %7.1f us/msg  max RSS %6d KiB\n",
		    p, 1e6 * (u + s) / n, m }' "$f"
	done
	echo "  postgres (all)    $(us $((pg1 - pg0)) "$1") us/msg, of which:"
	pgdiff "$1"
	echo "  wa-fake-api       $(us $((fk1 - fk0)) "$1") us/msg"
	[ -n "${TLS:-}" ] && echo "  nginx (TLS, h2)   $(us "$ngt" "$1") us/msg;" \
	    "${ngp}$ngc connection(s), at most $ngs calls on one"
	[ -n "${wh:-}" ] && echo "  wa-webhook        $(us "$wht" "$1") us/msg  max RSS $(awk '/VmHWM/ { print $2 }' "$T/wh.status") KiB"
	[ -n "${in:-}" ] && echo "  wa-status-ingest  $(us "$int" "$1") us/msg  max RSS $(awk '/VmHWM/ { print $2 }' "$T/in.status") KiB"
	echo "  WAL               $(rate "$(wal_bytes "$w0" "$w1")" "$1") bytes/msg"
	if [ -n "${WALDUMP:-}" ]; then
		walstats "$w0" "$w1" "$1"
		rowdiff "$1"
	fi
	[ -n "${PROFILE:-}" ] && profile "$1"
	rm -f "$T"/time.*
}
# profile N: with PROFILE=1 (pg_stat_statements loaded), the statements
# by total time: time (of which planning) and WAL per message.
profile() {
	sql "select round((total_exec_time + total_plan_time)::numeric * 1000
	    / $1, 1) || ' us/msg (plan ' || round(total_plan_time::numeric *
	    1000 / $1, 1) || ') ' || round(wal_bytes / $1) || ' WAL B/msg '
	    || calls || ' calls ' || rows || ' rows: ' ||
	    left(regexp_replace(query, '\s+', ' ', 'g'), 60)
	    from pg_stat_statements
	    order by total_exec_time + total_plan_time desc
	    limit 6" | sed 's/^/    /'
}
# pipeline CAMPAIGN RATE: the four stages, timed; RATE 0 = no throttle
# limit (wa-throttle still in the pipe).
pipeline() {
	if [ "$2" = 0 ]; then r=1000000; else r=$2; fi
	# shellcheck disable=SC2086	# CLAIM_OPTS: words, split on purpose
	timed wa-claim wa-claim ${CLAIM_OPTS:-} -c "$1" 2>>"$T/err" |
	    timed wa-throttle wa-throttle -r "$r" -b 10 2>>"$T/err" |
	    timed wa-send wa-send 2>>"$T/err" |
	    timed wa-record wa-record >/dev/null 2>>"$T/err"
}
# campaign_for N NUMBER: a running campaign of N recipients for NUMBER.
campaign_for() {
	c=$(campaign "$1")
	sql "update campaigns set phone_number_id = '$2' where id = $c" \
	    >/dev/null
	echo "$c"
}

flat() {
	pg_up
	fake_start --rate 0 --pair-ms 0 --threads 2
	front
	c=$(campaign "$ROWS")
	twin=$(campaign "$ROWS")
	sql "vacuum analyze" >/dev/null
	sql "checkpoint" >/dev/null
	wa-claim -c "$twin" --once >"$T/requests" 2>>"$T/err"
	[ -n "${PROFILE:-}" ] && sql "create extension if not exists
	    pg_stat_statements; select pg_stat_statements_reset()" >/dev/null
	pgsnap "$T/pg.0"
	w0=$(lsn) pg0=$(pgsum "$T/pg.0") fk0=$(ticks "$FAKE_PID")
	s=$(now)
	pipeline "$c" 0
	t=$(secs "$s")
	pgsnap "$T/pg.1"
	w1=$(lsn) pg1=$(pgsum "$T/pg.1") fk1=$(ticks "$FAKE_PID")
	front_end
	front
	n=$(sql "select count(*) from campaign_recipients
	    where campaign_id = $c and status = 'sent'")
	[ "$n" = "$ROWS" ] || bail "sent $n of $ROWS: $(tail -3 "$T/err")"
	p=$(rate "$ROWS" "$t")
	echo "flat: $ROWS rows, fake API without latency, no webhooks;" \
	    "$(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
	echo "  pipeline          $p msg/s ($t s; wall clock, machine shared)"
	report "$ROWS"
	# The ceiling: wa-send alone on the same requests, from a pipe.
	s=$(now)
	# shellcheck disable=SC2002
	cat "$T/requests" | timed wa-send-alone wa-send >"$T/out" 2>>"$T/err"
	t=$(secs "$s")
	a=$(rate "$ROWS" "$t")
	echo "  wa-send alone     $a msg/s ($t s; wall clock); pipeline" \
	    "$(pct "$p" "$a") of it"
	awk -v n="$ROWS" '{ printf "  wa-send alone     %7.1f us/msg  max RSS %6d KiB\n", 1e6 * ($1 + $2) / n, $3 }' "$T/time.wa-send-alone"
	front_end
	[ -n "${TLS:-}" ] && echo "  nginx (TLS, h2)   $(us "$ngt" "$ROWS") us/msg" \
	    "for wa-send alone; ${ngp}$ngc connection(s), at most $ngs on one"
	rm -f "$T"/time.*
	kill "$FAKE_PID"; wait "$FAKE_PID"
	pgtmp_stop
	rm -rf "$T/pg" "$T/requests" "$T/out" "$FAKE_LOG"
}

# webhooks N: N pipelines at RATE each, SECS seconds' worth of rows each,
# with status webhooks; prints the rate held and the costs.
webhooks() {
	pg_up
	rm -rf "$T/spool" "$T/hook.port"
	bg wa-webhook --listen 127.0.0.1:0 --port-file "$T/hook.port" \
	    --spool "$T/spool" 2>>"$T/err"
	wh=$!
	wait_for 30 test -s "$T/hook.port" || bail "wa-webhook did not start"
	bg wa-status-ingest --follow "$T/spool" 2>>"$T/err"
	in=$!
	replies=${2:-0}
	rm -f "$T/inbound"
	bg wa-inbound --follow --cursor bench --poll-ms 200 \
	    >"$T/inbound" 2>>"$T/err"
	ib=$!
	fake_start --rate 0 --pair-ms 0 --threads 2 --latency-ms 250 \
	    --webhook-url "http://127.0.0.1:$(cat "$T/hook.port")/" \
	    --webhook-delay-ms 200 --webhook-batch 100 --read-rate 0.6 \
	    --reply-rate "$replies"
	front
	per=$((RATE * SECS))
	cs=
	i=0
	while [ "$i" -lt "$1" ]; do
		i=$((i + 1))
		cs="$cs $(campaign_for "$per" "10654035224292$i")"
	done
	sql "vacuum analyze" >/dev/null
	sql "checkpoint" >/dev/null
	[ -n "${PROFILE:-}" ] && sql "create extension if not exists
	    pg_stat_statements; select pg_stat_statements_reset()" >/dev/null
	total=$((per * $1))
	pgsnap "$T/pg.0"
	w0=$(lsn) pg0=$(pgsum "$T/pg.0") fk0=$(ticks "$FAKE_PID")
	wh0=$(ticks "$wh") in0=$(ticks "$in")
	s=$(now)
	pids=
	for c in $cs; do
		pipeline "$c" "$RATE" &
		pids="$pids $!"
	done
	# shellcheck disable=SC2086
	wait $pids
	t=$(secs "$s")
	sent=$(now)
	# Settled: no row left at sent, and as many rows read as the spool
	# holds distinct reads.
	# shellcheck disable=SC2317
	settled() {
		[ "$(sql "select count(*) from campaign_recipients
		    where status in ('pending', 'sending', 'sent')")" = 0 ] &&
		[ "$(sql "select count(*) from campaign_recipients
		    where status = 'read'")" = "$(cat "$T"/spool/* |
		    grep -o '"id":"[^"]*","status":"read"' | sort -u |
		    wc -l)" ] &&
		[ "$(sql "select count(*) from inbound_messages")" = \
		    "$(inbound_sent)" ] &&
		[ "$(jq -r .wamid "$T/inbound" | sort -u | wc -l)" = \
		    "$(inbound_sent)" ]
	}
	# shellcheck disable=SC2317
	inbound_sent() {
		cat "$T"/spool/* |
		    grep -o '"messages":\[{"from":"[0-9]*","id":"[^"]*"' |
		    sort -u | wc -l
	}
	wait_for 300 settled || bail "statuses not applied: $(tail -3 "$T/err")"
	lag=$(secs "$sent")
	pgsnap "$T/pg.1"
	w1=$(lsn) pg1=$(pgsum "$T/pg.1") fk1=$(ticks "$FAKE_PID")
	wht=$(($(ticks "$wh") - wh0)) int=$(($(ticks "$in") - in0))
	front_end
	cp "/proc/$wh/status" "$T/wh.status"
	cp "/proc/$in/status" "$T/in.status"
	r=$(apirate "$FAKE_LOG" $((10 * $1)))
	held=$(echo "$r $1 $RATE" | awk '{ printf "%.1f", 100 * $1 / ($2 * $3) }')
	st=$(sql "select string_agg(status || ' ' || n, ', ' order by status)
	    from (select status, count(*) n from campaign_recipients
	    group by 1) s")
	echo "$1 number(s) at $RATE msg/s, 250 ms latency, webhooks" \
	    "(sent, delivered, 60% read); $total rows;" \
	    "load $(cut -d' ' -f1 /proc/loadavg)"
	echo "  API saw           $r msg/s = $held% of $(($1 * RATE))" \
	    "(wall clock, machine shared; pipelines took $t s)"
	echo "  statuses applied  $lag s after the last send ($st)"
	sql "select '  unknown: ' || count(*) || ' ' || coalesce(error_title,
	    '(no title)') from campaign_recipients where status = 'unknown'
	    group by error_title order by 1"
	[ "$replies" = 0 ] || echo "  inbound           $(inbound_sent) replies" \
	    "($replies of the people), all stored and streamed" \
	    "(wa-inbound --follow) by then"
	report "$total"
	kill "$FAKE_PID"; wait "$FAKE_PID"
	kill "$in" "$wh" "$ib"; wait "$in" "$wh" "$ib" 2>/dev/null
	wh='' in=''
	pgtmp_stop
	rm -rf "$T/pg" "$T/spool" "$FAKE_LOG"
	HELD=$held
}

[ $# -gt 0 ] || set -- flat one many
for s in "$@"; do
	case $s in
	flat)	flat ;;
	one)	webhooks 1 ;;
	peak)	webhooks 1 "${REPLY_RATE:-0.05}" ;;
	many)	for n in ${NS:-2 4 6 8 10 12}; do
			webhooks "$n"
			awk -v h="$HELD" 'BEGIN { exit !(h < 95) }' && break
		done ;;
	*)	bail "unknown scenario $s" ;;
	esac
done
exit 0
