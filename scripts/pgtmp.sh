# shellcheck shell=sh
# pgtmp.sh: sourced by the tests, benchmarks and the demo. A throwaway
# Postgres cluster on a unix socket in a directory of the caller's, run as
# the postgres user when we are root (Postgres refuses root).
#
#   . scripts/pgtmp.sh
#   pgtmp_start "$dir" [-c setting=value ...]   # sets PGHOST, PGDATA, ...
#   pgtmp_stop; pgtmp_resume                   # Postgres down, then back
#   pgtmp_standby "$dir2"; pgtmp_sync on       # a synchronous standby
#   pgtmp_failover                             # kill the primary, promote

pgtmp_as() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

# pgtmp_start DIR [SERVER-OPTION...]: initdb in DIR/data, start with its
# socket in DIR; exports PGHOST, PGUSER, PGDATABASE and PGDATA. Returns 1
# with the reason on stderr.
pgtmp_start() {
	pgtmp_dir=$1
	shift
	pgtmp_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V |
	    tail -1)
	if [ ! -x "$pgtmp_bin/initdb" ]; then
		echo "pgtmp: no initdb: run make deps" >&2
		return 1
	fi
	mkdir -p "$pgtmp_dir"
	[ "$(id -u)" = 0 ] && chown postgres "$pgtmp_dir"
	PGDATA=$pgtmp_dir/data
	if ! pgtmp_as "$pgtmp_bin/initdb" -D "$PGDATA" -A trust -U postgres \
	    -E UTF8 -N >"$pgtmp_dir/initdb.log" 2>&1; then
		cat "$pgtmp_dir/initdb.log" >&2
		return 1
	fi
	pgtmp_opts="$*"
	pgtmp_resume
}

# pgtmp_resume: starts the cluster pgtmp_stop stopped, as it was.
pgtmp_resume() {
	PGDATA=$pgtmp_dir/data
	if ! pgtmp_as "$pgtmp_bin/pg_ctl" -D "$PGDATA" -l "$pgtmp_dir/log" \
	    -w -o "-k $pgtmp_dir -c listen_addresses= $pgtmp_opts" \
	    start >/dev/null; then
		cat "$pgtmp_dir/log" >&2
		return 1
	fi
	PGHOST=$pgtmp_dir
	PGUSER=postgres
	PGDATABASE=postgres
	export PGHOST PGUSER PGDATABASE PGDATA
}

pgtmp_stop() {
	[ -n "${PGDATA:-}" ] || return 0
	pgtmp_as "$pgtmp_bin/pg_ctl" -D "$PGDATA" -m immediate -w stop \
	    >/dev/null 2>&1
	PGDATA=
}

# pgtmp_standby DIR: a streaming standby of the cluster pgtmp_start made,
# from pg_basebackup, in DIR/data with its socket in DIR; started. Sets
# PGTMP_STANDBY (DIR). The primary's DIR and the standby's make a conninfo
# for both: "host=PRIMARY,STANDBY target_session_attrs=read-write".
pgtmp_standby() {
	pgtmp_sdir=$1
	mkdir -p "$pgtmp_sdir"
	[ "$(id -u)" = 0 ] && chown postgres "$pgtmp_sdir"
	if ! pgtmp_as "$pgtmp_bin/pg_basebackup" -h "$pgtmp_dir" -U postgres \
	    -D "$pgtmp_sdir/data" -R -X stream \
	    -d "application_name=standby" >"$pgtmp_sdir/basebackup.log" 2>&1
	then
		cat "$pgtmp_sdir/basebackup.log" >&2
		return 1
	fi
	if ! pgtmp_as "$pgtmp_bin/pg_ctl" -D "$pgtmp_sdir/data" \
	    -l "$pgtmp_sdir/log" -w -o "-k $pgtmp_sdir -c listen_addresses= \
	    $pgtmp_opts" start >/dev/null; then
		cat "$pgtmp_sdir/log" >&2
		return 1
	fi
	PGTMP_STANDBY=$pgtmp_sdir
	export PGTMP_STANDBY
}

# pgtmp_sync on|off: the primary waits for the standby at each commit, or
# not (asynchronous replication, Postgres's default).
pgtmp_sync() {
	if [ "$1" = on ]; then
		pgtmp_names="'standby'"
	else
		pgtmp_names="''"
	fi
	psql -X -q -h "$pgtmp_dir" -c "ALTER SYSTEM SET
	    synchronous_standby_names = $pgtmp_names" \
	    -c "SELECT pg_reload_conf()" >/dev/null
}

# pgtmp_failover: the primary dies (immediate stop, as a crash) and the
# standby is promoted; PGHOST and PGDATA then name the new primary.
pgtmp_failover() {
	pgtmp_stop
	pgtmp_as "$pgtmp_bin/pg_ctl" -D "$pgtmp_sdir/data" -w promote \
	    >/dev/null || return 1
	pgtmp_dir=$pgtmp_sdir
	PGDATA=$pgtmp_sdir/data
	PGHOST=$pgtmp_sdir
	PGTMP_STANDBY=
	export PGDATA PGHOST PGTMP_STANDBY
}

pgtmp_stop_standby() {
	[ -n "${PGTMP_STANDBY:-}" ] || return 0
	pgtmp_as "$pgtmp_bin/pg_ctl" -D "$PGTMP_STANDBY/data" -m immediate \
	    -w stop >/dev/null 2>&1
	PGTMP_STANDBY=
}
