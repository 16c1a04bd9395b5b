# tests/lib.sh: sourced by every test. TAP output for prove, a private temp
# dir removed at exit, and throwaway services: a Postgres cluster on a unix
# socket in that dir (run as the postgres user when we are root).
#
#   . "$(dirname "$0")/lib.sh"
#   pg_start
#   ok 'claims a row' test "$(psql -Atc 'select 1')" = 1
#   done_testing

set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
WA_BIN=${WA_BIN:-$TOP/bin}
PATH=$WA_BIN:$PATH
export PATH LC_ALL=C TOP
unset DATABASE_URL PGSERVICE PGPORT PGPASSWORD WA_TOKEN WA_TOKEN_FILE \
    WA_APP_SECRET WA_APP_SECRET_FILE WA_API_BASE WA_API_VERSION WA_WABA_ID

# TAP goes to fd 7, so that redirecting a checked command's output
# (exits 0 'help' wa-x --help >/dev/null) never swallows the verdict.
exec 7>&1
T=$(mktemp -d /tmp/wapipe-test.XXXXXX)
chmod 755 "$T"
export WA_STATE_DIR="$T/state" WA_RESULTS_DIR="$T/state/results"
# Messages compared as they are: no time at the start of each line (a
# test that wants it unsets this).
export WA_LOG_TIME=0
t_n=0
t_failed=0
t_pids=""

# t_mine PID: PID is a child of this shell, alive or not yet waited for.
# One that ended and was waited for may by now be another test's process
# (pids wrap at 32,768): it once killed a wa-fake-api in the next test.
t_mine() {
	{ read -r t_st <"/proc/$1/stat"; } 2>/dev/null || return 1
	# shellcheck disable=SC2086	# the fields after "(comm) "
	set -- ${t_st##*) }
	[ "$2" = $$ ]
}

# programs [TOP]: the name of every program, one a line: cmd/NAME.c, or
# a folder cmd/NAME/ with its main.c.
programs() {
	for p_f in "${1:-$TOP}"/cmd/*.c "${1:-$TOP}"/cmd/*/main.c; do
		case $p_f in
		*/main.c) p_f=${p_f%/main.c} ;;
		*) p_f=${p_f%.c} ;;
		esac
		echo "${p_f##*/}"
	done
}

t_cleanup() {
	pkill -P "$t_watchdog" 2>/dev/null	# its sleep: it then ends quietly
	for p in $t_pids; do
		t_mine "$p" && kill "$p" 2>/dev/null
	done
	for p in $t_pids; do
		wait "$p" 2>/dev/null
	done
	[ -s "$T/bouncer/pid" ] && bouncer_stop
	# A test's own services, stopped its own way (tests/86: Patroni).
	[ -n "${t_atexit:-}" ] && eval "$t_atexit"
	[ -n "${PGDATA:-}" ] && pg_stop
	pgtmp_stop_standby
	rm -rf "$T"
}
trap t_cleanup EXIT
# Cleaned up on these too: PIPE when prove has gone (a bail-out elsewhere).
trap 'exit 1' HUP INT PIPE TERM

# A hung test must not hang the suite: after T_TIMEOUT seconds (900) it is
# stopped and reported. A guard against deadlock, not a speed check.
(
	sleep "${T_TIMEOUT:-900}" &&
	    echo "Bail out! $0 still running after ${T_TIMEOUT:-900} s" >&7 &&
	    kill -TERM $$
) 2>/dev/null &
t_watchdog=$!

# ok DESCRIPTION COMMAND...: passes when COMMAND succeeds.
ok() {
	t_d=$1
	shift
	t_n=$((t_n + 1))
	if "$@"; then
		echo "ok $t_n - $t_d" >&7
	else
		echo "not ok $t_n - $t_d" >&7
		t_failed=$((t_failed + 1))
	fi
}

# is GOT EXPECTED DESCRIPTION: passes when the strings are equal.
is() {
	t_n=$((t_n + 1))
	if [ "$1" = "$2" ]; then
		echo "ok $t_n - $3" >&7
	else
		echo "not ok $t_n - $3" >&7
		printf '#   got:      %s\n#   expected: %s\n' "$1" "$2" |
		    head -40 >&7
		t_failed=$((t_failed + 1))
	fi
}

# like GOT PATTERN DESCRIPTION: passes when grep -E finds PATTERN in GOT.
like() {
	t_n=$((t_n + 1))
	if printf '%s\n' "$1" | grep -Eq -- "$2"; then
		echo "ok $t_n - $3" >&7
	else
		echo "not ok $t_n - $3" >&7
		printf '%s\n' "$1" | head -20 | sed 's/^/#   got: /' >&7
		printf '#   pattern: %s\n' "$2" >&7
		t_failed=$((t_failed + 1))
	fi
}

# exits STATUS DESCRIPTION COMMAND...: passes when COMMAND exits STATUS
# (a death by signal never passes unless STATUS says so).
exits() {
	t_want=$1
	t_d=$2
	shift 2
	"$@"
	is "$?" "$t_want" "$t_d (exit status)"
}

# skip REASON: a test that cannot run here, said as TAP's skip.
skip() {
	t_n=$((t_n + 1))
	echo "ok $t_n # skip $1" >&7
}

skip_all() {
	echo "1..0 # SKIP $1"
	exit 0
}

bail() {
	echo "Bail out! $1"
	exit 1
}

note() {
	printf '%s\n' "$*" | sed 's/^/# /' >&7
}

done_testing() {
	echo "1..$t_n" >&7
	[ "$t_failed" -eq 0 ]
}

# free_port: a TCP port on 127.0.0.1 nobody listens on now, for a server
# that cannot be given port 0 (it may be taken again before it starts).
free_port() {
	perl -MIO::Socket::INET -e 'print IO::Socket::INET->new(Listen => 1,
	    LocalAddr => "127.0.0.1:0")->sockport, "\n"'
}

# bg COMMAND...: runs COMMAND in the background, killed at exit; its pid
# is in $!.
bg() {
	"$@" &
	t_pids="$t_pids $!"
}

# pg_waiting APP EVENT: one session named APP (application_name) waits
# on EVENT (pg_stat_activity.wait_event: advisory, transactionid,
# PgSleep, ...).
pg_waiting() {
	[ "$(sql "select count(*) from pg_stat_activity where application_name
	    = '$1' and wait_event = '$2'")" = 1 ]
}

# wait_for SECONDS COMMAND...: retries COMMAND every 0.05 s until it
# succeeds; fails after SECONDS (a bound on waiting, not on speed).
wait_for() {
	t_end=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -gt "$t_end" ] && return 1
		sleep 0.05
	done
}

# catches PID SIGNAL: PID has its handler for SIGNAL (INT, TERM, USR1 or
# USR2). Before that the signal would end it, or be lost if it came while
# the shell was still starting it.
catches() {
	case $2 in
	INT) t_sig=2 ;;
	USR1) t_sig=10 ;;
	USR2) t_sig=12 ;;
	TERM) t_sig=15 ;;
	esac
	t_cgt=$(awk '/^SigCgt:/ { print $2 }' "/proc/$1/status" 2>/dev/null)
	[ -n "$t_cgt" ] && [ $((0x$t_cgt >> (t_sig - 1) & 1)) = 1 ]
}

# unlabel FILE: a --metrics FILE without the labels every series carries
# (program, wa_instance), for tests that look at one series.
unlabel() {
	sed -E 's/(program|wa_instance)="[^"]*",?//g; s/,\}/}/; s/\{\}//' "$1"
}

# metrics_now PID FILE: has PID write its --metrics FILE now (SIGUSR2)
# and waits until it is written.
metrics_now() {
	wait_for 30 catches "$1" USR2 || return 1
	rm -f "$2"
	kill -USR2 "$1"
	wait_for 30 test -s "$2"
}

# shellcheck source=scripts/pgtmp.sh
. "$TOP/scripts/pgtmp.sh"

# pg_start: a new cluster on a unix socket in $T/pg, schema loaded; sets
# PGHOST, PGUSER, PGDATABASE for the programs under test. Benchmarks
# source this file too, with PG_DURABLE=1 for Postgres's default settings.
pg_start() {
	# Tests trade durability for speed; benchmarks don't.
	t_fast="-c fsync=off -c full_page_writes=off -c synchronous_commit=off"
	[ -n "${PG_DURABLE:-}" ] && t_fast=""
	# shellcheck disable=SC2086
	# (Not on fd 7: a server holding prove's pipe would keep it waiting.)
	pgtmp_start "$T/pg" $t_fast ${PG_OPTIONS:-} 2>"$T/pg.err" 7>&- ||
	    bail "no Postgres: $(cat "$T/pg.err")"
	psql -q -v ON_ERROR_STOP=1 -f "$TOP/sql/schema.sql" >/dev/null ||
	    bail "schema did not load"
}

pg_stop() {
	pgtmp_stop
}

# pg_resume: starts again the cluster pg_stop stopped.
pg_resume() {
	pgtmp_resume 2>"$T/pg.err" 7>&- ||
	    bail "no Postgres: $(cat "$T/pg.err")"
}

# pg_standby [sync]: a streaming standby of the cluster in $T/pg2 (with
# "sync": the primary waits for it at each commit); PG_BOTH is then a
# conninfo naming both that finds whichever is read-write.
pg_standby() {
	pgtmp_standby "$T/pg2" 2>"$T/pg2.err" ||
	    bail "no standby: $(cat "$T/pg2.err")"
	[ "${1:-}" = sync ] && pgtmp_sync on
	PG_BOTH="host=$T/pg,$T/pg2 target_session_attrs=read-write"
	export PG_BOTH
}

# pg_failover: kills the primary and promotes the standby.
pg_failover() {
	pgtmp_failover 2>"$T/pg.err" || bail "no failover: $(cat "$T/pg.err")"
}

# bouncer_start [POOL]: Debian's pgbouncer in front of the cluster, in
# transaction pooling with POOL server sessions (default 1), listening on
# a socket in $T/bouncer only; BOUNCER is then its conninfo. Run as the
# cluster's user (pgbouncer refuses root). Fails when it is not there.
bouncer_start() {
	t_bin=$(command -v pgbouncer || echo /usr/sbin/pgbouncer)
	[ -x "$t_bin" ] || return 1
	mkdir -p "$T/bouncer"
	echo '"postgres" ""' >"$T/bouncer/users"
	cat >"$T/bouncer/ini" <<-EOF
	[databases]
	* = host=$PGHOST
	[pgbouncer]
	listen_addr =
	listen_port = 6432
	unix_socket_dir = $T/bouncer
	auth_type = trust
	auth_file = $T/bouncer/users
	pool_mode = transaction
	default_pool_size = ${1:-1}
	max_client_conn = 200
	pidfile = $T/bouncer/pid
	logfile = $T/bouncer/log
	EOF
	if [ "$(id -u)" = 0 ]; then
		chown -R postgres "$T/bouncer"
		runuser -u postgres -- "$t_bin" -d "$T/bouncer/ini"
	else
		"$t_bin" -d "$T/bouncer/ini"
	fi || return 1
	wait_for 30 test -S "$T/bouncer/.s.PGSQL.6432" || return 1
	BOUNCER="host=$T/bouncer port=6432 dbname=postgres user=postgres"
	export BOUNCER
}

bouncer_stop() {
	[ -s "$T/bouncer/pid" ] && kill "$(cat "$T/bouncer/pid")"
	rm -f "$T/bouncer/pid"
}

# sql STATEMENT: runs STATEMENT, prints the rows unaligned.
sql() {
	psql -X -q -At -v ON_ERROR_STOP=1 -c "$1"
}

# campaign [N]: a running campaign with N recipients (default 10),
# +15550000001 upwards; prints its id.
campaign() {
	sql "insert into campaigns (name, phone_number_id, template_name,
	    state) values ('test', '106540352242922', 'reminder', 'running')
	    returning id" | head -1 >"$T/cid"
	recipients "$(cat "$T/cid")" 1 "${1:-10}"
	cat "$T/cid"
}
# recipients CAMPAIGN FIRST LAST: rows FIRST to LAST of the test's
# numbering (+1555 and seven digits; parameter pN) added to CAMPAIGN.
recipients() {
	sql "insert into campaign_recipients (campaign_id, phone,
	    template_params) select $1, '+1555' || lpad(g::text, 7, '0'),
	    jsonb_build_array('p' || g) from generate_series($2, $3) g" \
	    >/dev/null
}

# pgdrop_start REGEX [NTH [COUNT]]: tests/pgdrop.pl in front of the
# cluster, on a socket in $T/pgdrop, armed: the answers of COUNT (1)
# statements, from the NTH (1) that matches REGEX, are lost after their
# commit, and their connection with them (a statement, a match: see
# pgdrop.pl; a prepared statement matches by its name, "wa_record_apply",
# an unprepared one, WA_PG_POOLING=transaction, by its SQL text). PGDROP
# is then its conninfo: host and port, the rest from PG* (append
# "dbname=..." for another database). Every other statement goes
# through untouched.
#   pgdrop_arm REGEX [NTH [COUNT]]  a new trigger, its matches counted anew
#   pgdrop_arm                      no more drops
#   pgdrop_drops                    prints how many drops are done
#   pgdrop_hold; pgdrop_held N      drops from now on wait, committed and
#   pgdrop_release                  unanswered, until released
#   pgdrop_stop
pgdrop_start() {
	mkdir -p "$T/pgdrop"
	: >"$T/pgdrop/log"
	pgdrop_arm "$@"
	for t_sock in "$PGHOST"/.s.PGSQL.*; do
		case $t_sock in *.lock) ;; *) break ;; esac
	done
	bg perl "$TOP/tests/pgdrop.pl" "$T/pgdrop" "$t_sock"
	t_pgdrop=$!
	wait_for 30 test -S "$T/pgdrop/${t_sock##*/}" || return 1
	PGDROP="host=$T/pgdrop port=${t_sock##*.}"
	export PGDROP
}

pgdrop_arm() {
	if [ $# = 0 ]; then
		rm -f "$T/pgdrop/arm"
		return
	fi
	echo "${2:-1} ${3:-1} $1" >"$T/pgdrop/arm.new"
	mv "$T/pgdrop/arm.new" "$T/pgdrop/arm"
}

pgdrop_drops() {
	grep -c '^drop ' "$T/pgdrop/log"
}

pgdrop_hold() {
	: >"$T/pgdrop/hold"
}

pgdrop_held() {
	wait_for 60 grep -q "^held $1 " "$T/pgdrop/log"
}

pgdrop_release() {
	rm -f "$T/pgdrop/hold"
}

pgdrop_stop() {
	t_mine "$t_pgdrop" && kill "$t_pgdrop" && wait "$t_pgdrop"
}
