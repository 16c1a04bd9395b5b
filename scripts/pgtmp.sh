# shellcheck shell=sh
# pgtmp.sh: sourced by the tests, benchmarks and the demo. A throwaway
# Postgres cluster on a unix socket in a directory of the caller's, run as
# the postgres user when we are root (Postgres refuses root).
#
#   . scripts/pgtmp.sh
#   pgtmp_start "$dir" [-c setting=value ...]   # sets PGHOST, PGDATA, ...
#   pgtmp_stop; pgtmp_resume                   # Postgres down, then back

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
	    -N >"$pgtmp_dir/initdb.log" 2>&1; then
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
