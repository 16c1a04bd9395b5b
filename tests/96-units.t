#!/bin/sh
# The systemd units, sysusers.d and tmpfiles.d of contrib/systemd:
# systemd-analyze verify passes on every unit, silently, with ExecStart
# pointing at the programs under test (as make install points it at
# BINDIR); each ExecStart, with the options wapipe.conf suggests, is
# accepted by its program and documented in its page; secrets come only
# as credentials; a campaign stops by SIGINT with time to drain; the user
# and directories are made as the units expect. Needs no systemd running.
. "$(dirname "$0")/lib.sh"

command -v systemd-analyze >/dev/null ||
    skip_all "no systemd-analyze (Debian package systemd)"

C=$TOP/contrib/systemd
CONF=$C/wapipe.conf
units=$(cd "$C" && ls ./*.service ./*.timer | sed 's|^\./||')
mkdir -p "$T/units" "$T/man/man1" "$T/man/man7" "$T/lib" "$T/spool" \
    "$T/run"
cp "$TOP"/man/*.1 "$T/man/man1"
cp "$TOP"/man/*.7 "$T/man/man7"
for u in $units; do
	sed "s|/usr/bin/|$WA_BIN/|g" "$C/$u" >"$T/units/$u"
done

# key UNIT NAME: the values of NAME= in UNIT, one a line.
key() {
	sed -n "s/^$2=//p" "$C/$1"
}

# verify UNIT: systemd-analyze verify's complaints (none: empty).
verify() {
	(cd "$T/units" && MANPATH=$T/man systemd-analyze verify "$1" 2>&1)
}

is "$(echo "$units" | tr '\n' ' ')" "wa-reconcile.service \
wa-reconcile.timer wa-status-ingest.service wa-webhook.service \
wapipe-campaign@.service wapipe-due.service wapipe-due.timer " "the units"
for u in $units; do
	out=$(verify "$u")
	is "$?:$out" "0:" "$u: systemd-analyze verify says nothing"
done
# The check can fail: an unknown key, a bad signal, a missing program.
sed 's/^KillSignal=SIGINT/KillSignal=SIGNOPE/' "$T/units/wapipe-campaign@.service" \
    >"$T/units/bad1.service"
like "$(verify bad1.service)" "SIGNOPE" "verify: a bad signal is reported"
sed 's|bin/wa-webhook|bin/wa-nope|' "$T/units/wa-webhook.service" \
    >"$T/units/bad2.service"
like "$(verify bad2.service)" "wa-nope is not executable" \
    "verify: a missing program is reported"
rm "$T/units"/bad*.service

# conf NAME: what wapipe.conf sets NAME to, or suggests in a comment.
conf() {
	sed -n "s/^#*$1=//p" "$CONF" | tail -1
}

# The command a unit runs, its variables filled in as wapipe.conf and the
# unit would (the suggested options included), %i as 42, and the
# directories moved into $T so that nothing outside is touched.
expand() {
	line=$(key "$1" ExecStart)
	for v in $(printf '%s\n' "$line" | grep -o '\${*[A-Z_]*}*' |
	    tr -d '${}'); do
		val=$(key "$1" Environment | sed -n "s/^$v=//p")
		[ -n "$(conf "$v")" ] && val=$(conf "$v")
		line=$(printf '%s\n' "$line" |
		    sed -e "s|\${$v}|$val|" -e "s|\$$v\b|$val|")
	done
	printf '%s\n' "$line" | sed -e 's/%i/42/g' \
	    -e "s|/var/lib/wapipe|$T/lib|g" -e "s|/var/spool/wapipe|$T/spool|g" \
	    -e "s|/run/wapipe|$T/run|g"
}

for u in $units; do
	case $u in *.timer) continue ;; esac
	cmd=$(expand "$u")
	prog=$(basename "${cmd%% *}")
	is "$(programs | grep -cx "$prog")" 1 "$u: runs $prog, one of ours"
	is "${cmd%% *}" "/usr/bin/$prog" "$u: from /usr/bin (BINDIR)"
	# Each option, its value as written, gets past the program's parser
	# (--help last: every option before it is taken and checked).
	# shellcheck disable=SC2086
	"$prog" ${cmd#* } --help >"$T/help" 2>"$T/err"
	is "$?:$(head -c 6 "$T/help")" "0:usage:" "$u: $prog takes: ${cmd#* }"
	[ -s "$T/err" ] && note "$(cat "$T/err")"
	for o in ${cmd#* }; do
		case $o in -*) ;; *) continue ;; esac
		f=$(printf '%s' "$o" | sed 's/^--/\\\\-/; s/^-\([a-z]\)$/\1/')
		ok "$u: $prog $o is in $prog(1)" \
		    grep -Eq "^\.It Fl (.*Fl )?$f( |$)" "$TOP/man/$prog.1"
	done
done

like "$(wa-campaign --help 2>&1)" '^ +run ' \
    "wa-campaign has the run the campaign unit uses"

# loaded UNIT NAME: whether UNIT loads credential NAME from /etc/wapipe.
loaded() {
	key "$1" LoadCredential | grep -q "^$2:/etc/wapipe/"
}

# Secrets: never in an Environment= line, nor in wapipe.conf; each
# *_FILE points into the credentials directory, at a credential loaded.
for u in $units; do
	env=$(key "$u" Environment)
	out=$(printf '%s\n' "$env" |
	    grep -E '^(WA_TOKEN|WA_APP_SECRET|WA_VERIFY_TOKEN|PGPASSWORD)=')
	is "$out" "" "$u: no secret in its environment"
	for f in $(printf '%s\n' "$env" | sed -n 's/^WA_[A-Z_]*_FILE=//p'); do
		like "$f" '^%d/' "$u: $f is a credential"
		ok "$u: ${f#%d/} is loaded from /etc/wapipe" \
		    loaded "$u" "${f#%d/}"
	done
done
is "$(grep -E '^[^#]*(TOKEN|SECRET|PASSWORD)' "$CONF")" "" \
    "wapipe.conf sets no secret"
like "$(key wa-webhook.service LoadCredential)" "^app-secret:" \
    "wa-webhook gets the app secret"
like "$(key wapipe-campaign@.service LoadCredential)" "^token:" \
    "a campaign gets the API token"
like "$(key wapipe-due.service LoadCredential)" "^token:" \
    "so do the campaigns whose time has come"

# A campaign stops as Ctrl-C stops a pipeline, with time to drain.
U=wapipe-campaign@.service
is "$(key $U KillSignal)" SIGINT "$U: SIGINT stops it"
is "$(key $U KillMode)" mixed \
    "$U: to wa-campaign run, which passes it on to every stage once"
stop=$(key $U TimeoutStopSec | tr -d s)
sendto=$(grep -A1 'Fl \\-timeout-ms' "$TOP/man/wa-send.1" |
    sed -n 's/.*(default \([0-9]*\)).*/\1/p')
ok "$U: TimeoutStopSec ($stop s) > wa-send's --timeout-ms ($sendto ms)" \
    test "$((stop * 1000))" -gt "$((sendto * 2))"
# Restart policies follow wapipe(7)'s exit table: the codes marked "no"
# are the ones no unit restarts after, and every service restarts after
# the others.
nos=$(sed -n 's/^\.It .* Ta \([0-9, ]*\) Ta no$/\1/p' "$TOP/man/wapipe.7" |
    tr ', ' '\n\n' | grep -v '^0\?$' | sort -n | tr '\n' ' ')
like "$nos" '^64 65 66 77 78 79 80 $' "wapipe(7)'s table says which codes stop"
for u in $units; do
	case $u in *.timer) continue ;; esac
	[ "$(key "$u" Type)" = oneshot ] && continue	# its timer reruns it
	is "$(key "$u" Restart):$(key "$u" RestartPreventExitStatus |
	    tr ' ' '\n' | sort -n | tr '\n' ' ')" "on-failure:$nos" \
	    "$u: restarts as wapipe(7)'s exit table says"
done
like "$(key $U EnvironmentFile)" '^-/etc/wapipe/campaign-%i.conf' \
    "$U: a campaign's own settings, if any"

# Every service: the wapipe user, sandboxed, writing only where tmpfiles
# makes directories for it; the settings file.
for u in $units; do
	case $u in *.timer) continue ;; esac
	is "$(key "$u" User):$(key "$u" Group)" wapipe:wapipe "$u: as wapipe"
	is "$(key "$u" NoNewPrivileges):$(key "$u" ProtectSystem):$(key "$u" \
	    PrivateTmp):$(key "$u" CapabilityBoundingSet)" "yes:strict:yes:" \
	    "$u: NoNewPrivileges, ProtectSystem=strict, PrivateTmp, no caps"
	like "$(key "$u" EnvironmentFile)" '^/etc/wapipe/wapipe.conf$' \
	    "$u: reads /etc/wapipe/wapipe.conf"
	for d in $(key "$u" ReadWritePaths); do
		ok "$u: writes $d, which tmpfiles.d makes for wapipe" \
		    grep -Eq "^d $d 0[0-7]+ wapipe wapipe " "$C/tmpfiles.conf"
	done
done
is "$(key wa-reconcile.timer OnCalendar)" '*:0/5' "the timer: every 5 min"
systemd-analyze calendar --iterations=2 "$(key wa-reconcile.timer \
    OnCalendar)" 2>&1 | grep -o '[0-9]*-[0-9]*-[0-9]* [0-9:]*' >"$T/cal"
a=$(date -d "$(sed -n 1p "$T/cal")" +%s)
b=$(date -d "$(sed -n 2p "$T/cal")" +%s)
is "$((b - a))" 300 "systemd reads the timer's calendar: 5 min apart"
systemd-analyze calendar --iterations=2 "$(key wapipe-due.timer \
    OnCalendar)" 2>&1 | grep -o '[0-9]*-[0-9]*-[0-9]* [0-9:]*' >"$T/cal"
a=$(date -d "$(sed -n 1p "$T/cal")" +%s)
b=$(date -d "$(sed -n 2p "$T/cal")" +%s)
is "$((b - a))" 60 "the due campaigns' timer: every minute"
# wapipe-due stops as a campaign does (SIGINT to run --due alone), and
# counts a stop or a wait (75) and a campaign run elsewhere (80) as done.
U=wapipe-due.service
is "$(key $U KillSignal):$(key $U KillMode)" SIGINT:mixed \
    "$U: SIGINT to wa-campaign run --due, which passes it on once"
is "$(key $U SuccessExitStatus)" "75 80" "$U: 75 and 80 are not failures"

# sysusers.d and tmpfiles.d, applied to a root of our own.
R=$T/root
mkdir -p "$R/usr/lib/sysusers.d" "$R/usr/lib/tmpfiles.d" "$R/etc"
cp "$C/sysusers.conf" "$R/usr/lib/sysusers.d/wapipe.conf"
cp "$C/tmpfiles.conf" "$R/usr/lib/tmpfiles.d/wapipe.conf"
exits 0 "systemd-sysusers makes the user" \
    systemd-sysusers --root="$R" wapipe.conf 2>/dev/null
like "$(cat "$R/etc/passwd")" '^wapipe:x:[0-9]+:[0-9]+:[^:]*:/var/lib/wapipe:' \
    "wapipe: a system user, its home /var/lib/wapipe"
exits 0 "systemd-tmpfiles makes the directories" \
    systemd-tmpfiles --root="$R" --create wapipe.conf
uid=$(cut -d: -f3 "$R/etc/passwd")
for d in /run/wapipe /var/spool/wapipe /var/lib/wapipe /var/lib/wapipe/results; do
	is "$(stat -c '%u %a' "$R$d" 2>&1)" "$uid 750" "$d: wapipe's, 0750"
done

done_testing
