#!/bin/sh
# A real highly available Postgres: Debian's etcd (one member) and two
# Postgres nodes managed by Debian's Patroni, on localhost, in
# synchronous mode. Whole campaigns run through wa-campaign run with
# webhooks (wa-webhook, wa-status-ingest), every program given both
# nodes and target_session_attrs=read-write (libpq's PG* variables).
# Mid-campaign the leader's postmaster is killed (kill -9: Patroni starts
# it again in place); in a second campaign the leader's Patroni is
# stopped (it steps down cleanly, the other node takes over); in a third
# the leader's host dies (Patroni and Postgres killed at once) while the
# standby is behind, and the standby takes over when the leader's key
# expires. Each campaign completes by itself: every row sent once, none
# left sending or unknown, nobody messaged twice, and every status the
# webhooks brought applied. Run by make check-ha (WA_HA=1), which
# installs Patroni and etcd; skipped by the plain suite and where they
# cannot be installed. WA_HA_ASYNC=1 runs it with an asynchronous standby:
# the third case then fails, and its notes say what was lost (wapipe(7)).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"
. "$(dirname "$0")/run.sh"
[ "${WA_HA:-}" = 1 ] || skip_all "run by make check-ha (WA_HA=1)"
command -v patroni >/dev/null && command -v etcd >/dev/null ||
    skip_all "no patroni or etcd (make check-ha installs them)"
command -v curl >/dev/null || skip_all "no curl"
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$pgbin/postgres" ] || skip_all "no Postgres (make deps)"

# Ports of this run's own: etcd's two, then each node's REST API and
# Postgres, 8 from $base, below the kernel's ephemeral ports (32768 up,
# which port-0 listeners and outgoing connections take). Tests run side
# by side: the pid says where to start looking, and a slot with a port
# in use (ss, where there is one) is passed over.
slot_used() {
	command -v ss >/dev/null &&
	    ss -Htan "sport >= :$1 and sport <= :$(($1 + 7))" | grep -q .
}
slot=$(($$ % 1500)) tries=0
while base=$((20000 + slot * 8)) && slot_used "$base"; do
	slot=$(((slot + 1) % 1500)) tries=$((tries + 1))
	[ "$tries" -lt 1500 ] || bail "no 8 free ports from 20000 to 32000"
done
EC=$base EP=$((base + 1))
run_as() {
	if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
for d in etcd n1 n2; do
	mkdir -p "$T/$d"
	[ "$(id -u)" = 0 ] && chown postgres "$T/$d"
done

# Stopped at exit, even when the test fails: the Patroni daemons first
# (each stops its Postgres), then whatever is left of them, then etcd.
ha_stop() {
	pkill -TERM -f "patroni $T/n" 2>/dev/null
	for d in n1 n2; do
		[ -s "$T/$d/data/postmaster.pid" ] && run_as "$pgbin/pg_ctl" \
		    -D "$T/$d/data" -m immediate stop >/dev/null 2>&1
	done
	pkill -KILL -f "patroni $T/n" 2>/dev/null
	pkill -TERM -f "etcd --name wapipe --data-dir $T/etcd" 2>/dev/null
}
t_atexit=ha_stop

bg run_as etcd --name wapipe --data-dir "$T/etcd/data" --enable-v2=true \
    --listen-client-urls "http://127.0.0.1:$EC" \
    --advertise-client-urls "http://127.0.0.1:$EC" \
    --listen-peer-urls "http://127.0.0.1:$EP" \
    --initial-advertise-peer-urls "http://127.0.0.1:$EP" \
    --initial-cluster "wapipe=http://127.0.0.1:$EP" >"$T/etcd.log" 2>&1
etcd_up() {
	curl -sf "http://127.0.0.1:$EC/health" | grep -q '"health":"true"'
}
wait_for 60 etcd_up || bail "etcd did not start: $(tail -3 "$T/etcd.log")"

# node N: node N's Patroni configuration, then its daemon started.
# Synchronous mode: a commit returns once the other node has it, so a
# failover loses no acknowledged commit (see wapipe(7)). loop_wait 1 s
# and ttl 10 s: a leader that stops answering is replaced within ~10 s.
# WA_HA_ASYNC=1 runs it all with an asynchronous standby instead, to see
# what that loses (wapipe(7); not in make check-ha: its checks fail).
sync=true
[ "${WA_HA_ASYNC:-}" = 1 ] && sync=false
node() {
	api=$((base + 2 + $1)) port=$((base + 4 + $1))
	cat >"$T/n$1.yml" <<-EOF
	scope: wapipe-$$
	name: n$1
	restapi:
	  listen: 127.0.0.1:$api
	  connect_address: 127.0.0.1:$api
	etcd:
	  host: 127.0.0.1:$EC
	bootstrap:
	  dcs:
	    ttl: 10
	    loop_wait: 1
	    retry_timeout: 4
	    maximum_lag_on_failover: 1048576
	    synchronous_mode: $sync
	    postgresql:
	      use_pg_rewind: true
	      parameters:
	        synchronous_commit: "on"
	        wal_log_hints: "on"
	        max_connections: 100
	  initdb:
	  - encoding: UTF8
	  - auth: trust
	  pg_hba:
	  - local all all trust
	  - host all all 127.0.0.1/32 trust
	  - host replication all 127.0.0.1/32 trust
	postgresql:
	  listen: 127.0.0.1:$port
	  connect_address: 127.0.0.1:$port
	  data_dir: $T/n$1/data
	  bin_dir: $pgbin
	  pgpass: $T/n$1/pgpass
	  authentication:
	    superuser:
	      username: postgres
	    replication:
	      username: postgres
	  parameters:
	    unix_socket_directories: $T/n$1
	    fsync: "off"
	    full_page_writes: "off"
	EOF
	[ "$(id -u)" = 0 ] && chown postgres "$T/n$1.yml"
	patroni_start "$1"
}
# Without the programs' PG* variables: Postgres would take PGPORT's two
# ports for its own. From the node's own directory: the replica's
# bootstrap failed where the user postgres could not enter the test's
# working directory (a checkout in a root-only mktemp -d, as CI's).
patroni_start() {
	cd "$T/n$1" || return 1
	bg run_as env -u PGHOST -u PGPORT -u PGUSER -u PGDATABASE \
	    -u PGTARGETSESSIONATTRS -u PGCONNECT_TIMEOUT \
	    patroni "$T/n$1.yml" >>"$T/n$1.log" 2>&1
	cd "$TOP" || return 1
}
node 1
node 2
P1=$((base + 5)) P2=$((base + 6))

# Every program finds the leader through libpq's own variables.
PGHOST=127.0.0.1,127.0.0.1 PGPORT=$P1,$P2 PGUSER=postgres
PGDATABASE=postgres PGTARGETSESSIONATTRS=read-write PGCONNECT_TIMEOUT=2
export PGHOST PGPORT PGUSER PGDATABASE PGTARGETSESSIONATTRS \
    PGCONNECT_TIMEOUT

# role N: what node N's Patroni says it is (leader, replica, ...).
role() {
	curl -sf "http://127.0.0.1:$((base + 2 + $1))/patroni" |
	    jq -r .role 2>/dev/null
}
leader() {
	for n in 1 2; do
		[ "$(role "$n")" = master ] || [ "$(role "$n")" = primary ] ||
		    [ "$(role "$n")" = leader ] || continue
		echo "$n"
		return 0
	done
	return 1
}
has_leader() {
	leader >/dev/null
}
# in_sync: the leader streams to the other node (synchronously, but for
# WA_HA_ASYNC=1).
in_sync() {
	test "$(sql "select count(*) from pg_stat_replication where
	    sync_state = '$([ "$sync" = true ] && echo sync || echo async)'
	    and state = 'streaming'" 2>/dev/null)" = 1
}
ok "Patroni bootstraps a leader" wait_for 120 has_leader
ok "... and the other node follows it" wait_for 120 in_sync
psql -X -q -v ON_ERROR_STOP=1 -f "$TOP/sql/schema.sql" >/dev/null ||
    bail "schema did not load"

export WA_APP_SECRET=ha-secret
bg wa-webhook --listen 127.0.0.1:0 --port-file "$T/hook.port" \
    --spool "$T/spool" 2>"$T/webhook.err"
wait_for 30 test -s "$T/hook.port" || bail "wa-webhook did not start"
bg wa-status-ingest --follow "$T/spool" 2>"$T/ingest.err"
fake_start --rate 0 --latency-ms 5 --read-rate 0.3 \
    --webhook-url "http://127.0.0.1:$(cat "$T/hook.port")/"

# settled: every row of $c sent and every status of the webhooks applied
# (the fake delivers every message it accepts).
settled() {
	test "$(sql "select count(*) from campaign_recipients
	    where campaign_id = $c and status not in ('delivered', 'read')" \
	    2>/dev/null)" = 0
}

# accepted N: at least N rows of $c sent (and maybe delivered since).
accepted() {
	test "$(sql "select count(*) from campaign_recipients
	    where campaign_id = $c and wamid is not null")" -ge "$1"
}

# campaign_through FAULT: a campaign of 800 run at 100/s, FAULT done to
# the leader once 150 are sent; the run must complete by itself. The
# notes say which node leads after, and how long the stages waited.
campaign_through() {
	c=$(campaign 0)
	recipients "$c" $((c * 10000 + 1)) $((c * 10000 + 800))
	bg wa-campaign run "$c" --pg-timeout 120 2>"$T/run$c.err"
	run=$!
	ok "$1: a campaign is under way" wait_for 120 accepted 150
	was=$(leader)
	ok "$1 (node $was, the leader)" "$1" "$was"
	note "$1 on node $was after $(jq -s length "$FAKE_LOG") requests"
	wait "$run"
	is "$?" 0 "$1: the campaign completes by itself (run exits 0)"
	ok "$1: a leader is back" wait_for 60 has_leader
	note "$1: node $(leader) leads"
	is "$(count sending)$(count unknown)$(count pending)" 000 \
	    "$1: no row is left sending, unknown or pending"
	wait_for 120 settled
	ok "$1: every status the webhooks brought is applied" settled
	settled || note "$1: rows $(sql "select string_agg(status || ' ' || n, ', ')
	    from (select status, count(*) n from campaign_recipients
	    where campaign_id = $c group by 1 order by 1) s"), statuses" \
	    "kept unmatched $(sql "select count(*) from unmatched_statuses")"
	is "$(twice)" 0 "$1: nobody was messaged twice"
	note "$1: $(grep -ho 'postgres is back after [0-9.]* s' \
	    "$T/run$c.err" | sort -t' ' -k5 -n | tail -1)"
	is "$(sql "select count(*) from campaign_recipients where
	    campaign_id = $c and wamid is not null")" 800 \
	    "$1: every row has its wamid"
}

# The leader's postmaster killed: Patroni restarts it or fails over.
kill_postmaster() {
	kill -9 "$(head -1 "$T/n$1/data/postmaster.pid")"
}
# The leader's Patroni stopped: it stops its Postgres and hands over.
# (A function, not sh -c, waits: sh -c's command line would match too.)
stop_patroni() {
	pkill -TERM -f "patroni $T/n$1.yml" && wait_for 60 patroni_gone "$1"
}
patroni_gone() {
	! pgrep -f "patroni $T/n$1.yml" >/dev/null
}
# The leader's host dies while the other node is behind: the walsender
# that feeds it is stopped until the leader has commits it lacks (in
# synchronous mode, a commit then waits for it and nothing more is
# acknowledged), then Patroni and Postgres are killed at once, as a
# machine that loses power. The other node takes over once the leader's
# key expires (ttl).
host_dies() {
	ws=$(sql "select pid from pg_stat_replication")
	[ -n "$ws" ] && kill -STOP "$ws" && wait_for 60 behind "$1" || return 1
	note "host_dies: $(sql "select count(*) from pg_stat_activity
	    where wait_event = 'SyncRep'") commits wait for the standby,"\
	    "$(ahead "$1") rows sent are not on it"
	pm=$(head -1 "$T/n$1/data/postmaster.pid")
	pkill -KILL -f "patroni $T/n$1.yml"
	kill -KILL "$pm" $(pgrep -P "$pm") 2>/dev/null	# some end first
	return 0
}
# ahead N: how many rows with a wamid node N has that the other lacks.
ahead() {
	echo $(($(on "$1" "$wamids") - $(on $((3 - $1)) "$wamids")))
}
wamids="select count(*) from campaign_recipients where wamid is not null"
on() {
	psql -X -q -At -d "host=127.0.0.1 port=$((base + 4 + $1))
	    target_session_attrs=any" -c "$2"
}
behind() {
	test "$(sql "select count(*) from pg_stat_activity
	    where wait_event = 'SyncRep'")" -ge 1 || test "$(ahead "$1")" -ge 50
}

bucket 100
campaign_through kill_postmaster
ok "both nodes are back in sync" wait_for 120 in_sync
campaign_through stop_patroni
stopped=$was
is "$(leader)" "$((3 - stopped))" "the other node leads"
patroni_start "$stopped"
ok "the stopped node follows again" wait_for 120 in_sync
campaign_through host_dies
is "$(leader)" "$stopped" "the node that was stopped leads"
like "$(cat "$T"/run*.err)" "postgres is back" "the stages said they waited"
fake_stop
done_testing
