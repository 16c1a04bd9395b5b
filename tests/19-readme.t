#!/bin/sh
# README.md walked as a new user would: its indented blocks are taken from
# README itself, not typed again here, and run in README's order, in one
# shell session that keeps their variables and exports, on a Postgres with
# no schema until README's own `wa-campaign migrate`, against wa-fake-api.
# Every command must exit 0, and what README says of it must hold. Blocks
# that cannot run here (root, systemd, other servers) are skipped with the
# reason; every option README gives a program, in a block or in the text,
# must be in that program's --help. When README changes, so does this.
# Minutes, not lib.sh's 15, before a hang is called one.
T_TIMEOUT=${T_TIMEOUT:-300}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"
README=$TOP/README.md
B=$T/blocks	# the blocks, each split into commands
R=$T/root	# README's /etc/wapipe, /var/spool/wapipe ... are under it
H=$T/home	# where the reader types
mkdir -p "$B" "$H" "$R/etc/wapipe" "$R/var/spool/wapipe" \
    "$R/var/log/wapipe" "$R/var/lib/wapipe"

# --- README's blocks --------------------------------------------------

# Each block (lines indented 4 spaces after a blank line) to $B/N, less
# the indent; $B/list has "N LINE SECTION" for each.
awk -v dir="$B" '
	/^## / { sec = substr($0, 4) }
	/^    / && (inb || prev == "") {
		if (!inb) {
			n++
			print n, NR, sec > (dir "/list")
		}
		inb = 1
		for (; blank > 0; blank--)
			print "" > (dir "/" n)
		print substr($0, 5) > (dir "/" n)
		prev = $0
		next
	}
	/^$/ && inb { blank++; prev = $0; next }
	{ inb = 0; blank = 0; prev = $0 }
' "$README"
ok "README has blocks to walk" test -s "$B/list"

# split N: block N's commands, one a file ($B/N.1 ...), a line ending in
# \, | or && joined to the next; prints how many.
split_block() {
	awk -v f="$B/$1" '
		{ cmd = cmd $0 "\n"; s = $0 }
		{ sub(/[[:space:]]+#[^\047"]*$/, "", s) }
		s ~ /(\\|\||&&)$/ { next }
		cmd ~ /[^[:space:]]/ { printf "%s", cmd > (f "." ++n) }
		{ cmd = "" }
		END { print n + 0 }
	' "$B/$1"
}

# uncomment TEXT: TEXT without a trailing comment.
uncomment() {
	printf '%s\n' "$1" | sed -E 's/[[:space:]]+#[^'\''"]*$//'
}

# --- options README gives -----------------------------------------------

# segments: from command text on stdin, each wa- program's segment (the
# program and its words up to a separator, or a line's end but after a
# backslash), one a line.
segments() {
	perl -0pe 's/\\\n/ /g; s/\n/ ; /g; s/\$\(/ /g; s/[|;&#()]/ $& /g' |
	    awk '{
		seg = ""
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^[|;&#()]$/ || $i == "or:") {
				if (seg != "") print seg
				seg = ""
			} else if ($i ~ /^wa-[a-z-]+$/) {
				if (seg != "") print seg
				seg = $i
			} else if (seg != "")
				seg = seg " " $i
		}
		if (seg != "") print seg
	}'
}

# usage PROG [COMMAND]: PROG's --help; for wa-campaign, the usage lines
# of COMMAND, the rules where it takes them ("[rules]"), and the global
# ones.
usage() {
	[ -f "$T/help.$1" ] || "$1" --help >"$T/help.$1" 2>&1
	if [ "$1" != wa-campaign ] || [ -z "${2:-}" ]; then
		cat "$T/help.$1"
		return
	fi
	awk -v c="$2" '
		/^usage:|^       wa-campaign/ { print; next }
		/^  [a-z]/ { on = ($1 == c); rules = 0 }
		/^    rules:/ { rules = 1 }
		rules { r = r $0 "\n"; next }
		on { print; if (/\[rules\]/) want = 1 }
		END { if (want) printf "%s", r }
	' "$T/help.$1"
}

# check_segment "PROG WORD...": the problems of one segment, one a line:
# a program that does not exist, a wa-campaign command it lacks, an option
# its usage does not name.
check_segment() {
	# shellcheck disable=SC2086	# the words, as the shell splits them
	set -- $1
	cs_p=$1
	shift
	if ! [ -x "$WA_BIN/$cs_p" ]; then
		echo "$cs_p: no such program"
		return
	fi
	cs_c=""
	if [ "$cs_p" = wa-campaign ]; then
		for w in "$@"; do
			case $w in -*|\[*) continue ;; esac
			cs_c=$w
			break
		done
		if [ -n "$cs_c" ] && [ "$cs_c" != ... ] &&
		    ! usage "$cs_p" | grep -qE "^  $cs_c( |$)"; then
			echo "wa-campaign: no command $cs_c"
			return
		fi
	fi
	[ "$cs_c" = ... ] && cs_c=""
	usage "$cs_p" "$cs_c" >"$T/usage.c"
	for w in "$@"; do
		w=${w#\[}
		w=${w%%=*}
		w=${w%]}
		case $w in
		--[a-z]*|-[a-zA-Z]) ;;
		*) continue ;;
		esac
		grep -qE -- "(^|[^[:alnum:]-])$w([^[:alnum:]-]|$)" \
		    "$T/usage.c" || echo "$cs_p${cs_c:+ $cs_c}: no option $w"
	done
}

# Every wa- command in a block (its comments too: "or: wa-claim ..."),
# without its leading cron time fields or sudo.
for b in $(cut -d' ' -f1 "$B/list"); do
	sed -E 's/^([^ ]+ +){5}(wa-)/\2/' "$B/$b" | segments |
	    sed "s|^|$b |"
done >"$T/segs"
out=$(while read -r b seg; do
	check_segment "$seg" | sed "s|^|README:$(sed -n "${b}p" "$B/list" |
	    cut -d' ' -f2): |"
done <"$T/segs")
is "$out" "" "every program, command and option in README's blocks exists"
ok "...and there were some to check ($(wc -l <"$T/segs") commands)" \
    test "$(wc -l <"$T/segs")" -ge 20

# The same of the text's code spans that start with a program: `wa-webhook
# --max-body`, `wa-claim --once -c ID | wa-throttle ...`.
perl -0777 -ne 'while (/`([^`]+)`/g) { my $s = $1; $s =~ s/\s+/ /g;
	print "$s\n" if $s =~ /^wa-[a-z-]+( |$)/ }' "$README" |
    segments >"$T/spans"
out=$(while read -r seg; do
	check_segment "$seg" | sed 's/^/README text: /'
done <"$T/spans")
is "$out" "" "every program, command and option in README's text exists"

# An option the text names alone (`--reject FILE`, `-d CONNINFO`) is some
# program's.
for p in $(programs); do
	usage "$p"
done >"$T/help.all"
out=$(perl -0777 -ne 'while (/`([^`]+)`/g) {
	my $s = $1; $s =~ s/\s+/ /g; print "$s\n" if $s =~ /^-/ }' "$README" |
    sed -nE 's/^(--[a-z][a-z0-9-]*|-[a-zA-Z])([ =].*)?$/\1/p' |
    sort -u | while read -r w; do
	grep -qE -- "(^|[^[:alnum:]-])$w([^[:alnum:]-]|$)" "$T/help.all" ||
	    echo "$w"
done)
is "$out" "" "every option README's text names alone is some program's"

# --- what the reader has ------------------------------------------------

# A Postgres with nothing in it: README's first command makes the schema.
pgtmp_start "$T/pg" -c fsync=off -c full_page_writes=off \
    -c synchronous_commit=off 2>"$T/pg.err" 7>&- ||
    bail "no Postgres: $(cat "$T/pg.err")"
# The API: the fake, taking the token README's /etc/wapipe/token holds,
# failing the numbers ending in 0000 as README's rehearsal has it, and
# without the pair limit (a message to one person per 6 s): the test's
# campaigns message the same people seconds apart, a reader's would not.
WA_TOKEN=readme-token-$$
printf '%s\n' "$WA_TOKEN" >"$R/etc/wapipe/token"
echo app-secret-$$ >"$R/etc/wapipe/app-secret"
echo verify-token-$$ >"$R/etc/wapipe/verify-token"
chmod 600 "$R/etc/wapipe/"*
fake_start --latency-ms 5 --pair-ms 0 --script 0000=131026
# recipients.csv in the form README gives ("phone,name,date: the other
# columns are the template's parameters; quoted fields, "" escapes"):
# Italian mobiles, one of them README's suppress example, one ending in
# 0000; stop.csv for README's suppress import.
cat >"$H/recipients.csv" <<'EOF'
phone,name,date
+393331234501,Anna,3 December
+393331234502,"Rossi, Bruno",4 December
+393331234503,"Carla ""Cia"" Verdi",5 December
+393331234504,Dario,6 December
+393331234505,Elena,7 December
+393331234506,Fabio,8 December
+393331234567,Gina,9 December
+393331230000,Ugo,10 December
EOF
printf 'phone\n+393339876543\n' >"$H/stop.csv"

# The session: one shell, in its own process group, that sources each
# command file named on $T/cmd and answers its status on $T/rc, as a
# terminal keeps a reader's variables, exports and background jobs.
mkfifo "$T/cmd" "$T/rc"
bg env -u WA_TOKEN setsid sh -c '
	cd "$3" || exit 1
	exec 3<"$1" 4>"$2" </dev/null
	while IFS= read -r f <&3; do
		. "$f"
		echo "$?" >&4
	done' session "$T/cmd" "$T/rc" "$H" >"$T/session.out" 2>&1 7>&-
sess=$!
exec 8>"$T/cmd" 9<"$T/rc"
# At exit, what is still running of the session's process group: SIGTERM,
# then SIGKILL to what is left after 10 s. (kill(1): dash's takes no
# process group.)
readme_cleanup() {
	exec 8>&-
	t_mine "$sess" || return 0
	env kill -TERM -- "-$sess" 2>/dev/null || return 0
	wait_for 10 group_gone || env kill -KILL -- "-$sess" 2>/dev/null
}
group_gone() {
	! pgrep -g "$sess" >/dev/null
}
trap 'readme_cleanup; t_cleanup' EXIT

# s_run FILE: the session sources FILE; its status.
s_run() {
	t_mine "$sess" && kill -0 "$sess" || bail "the README session died"
	echo "$1" >&8
	read -r s_rc <&9 || bail "the README session died"
	return "$s_rc"
}

# s_eval CODE: runs CODE (the test's own) in the session; its output in
# $T/s.out.
s_eval() {
	printf '{ %s\n} 3<&- 4>&- </dev/null >"%s" 2>&1\n' "$1" "$T/s.out" \
	    >"$T/s.sh"
	s_run "$T/s.sh"
}

# setup WHAT CODE: a step of the test's own before a block, said in TAP.
setup() {
	s_eval "$2"
	is "$?" 0 "(setup) $1"
	[ "$s_rc" = 0 ] || sed 's/^/#   /' "$T/s.out" | tail -5 >&7
}

# val NAME: the session's variable NAME.
val() {
	s_eval "printf '%s' \"\$$1\"" && cat "$T/s.out"
}

# skip_here WORDS...: a skip of the block at README's $line.
skip_here() {
	skip "README:$line: $*"
}

# state ID: campaign ID's state.
state() {
	sql "select state from campaigns where id = $1"
}

# rewrite: a command as the test runs it. README's /etc/wapipe and
# /var/.../wapipe are under $R; ID is the reader's "$id"; a server's
# --listen 127.0.0.1:PORT takes a free port, written to $T/port.PORT, and
# later mentions of PORT become it (port 1, where nothing listens, while
# no block listens on PORT).
rewrite() {
	rw_dirs='(etc|var/spool|var/log|var/lib|run)'
	rw_ip='127\.0\.0\.1'
	rw_free="--listen 127.0.0.1:0 --port-file $T/port."
	rw=$(printf '%s\n' "$1" | sed -E \
	    -e "s#(^|[^[:alnum:]_./-])/$rw_dirs/wapipe#\\1$R/\\2/wapipe#g" \
	    -e 's/(^|[^[:alnum:]_])ID($|[^[:alnum:]_])/\1"$id"\2/g' \
	    -e "s#--listen $rw_ip:([1-9][0-9]*)#$rw_free\\1#g")
	for port in $(printf '%s\n' "$rw" | grep -oE "$rw_ip:[1-9][0-9]*" |
	    cut -d: -f2 | sort -u); do
		real=$(cat "$T/port.$port" 2>/dev/null || echo 1)
		rw=$(printf '%s\n' "$rw" |
		    sed -E "s#$rw_ip:$port([^0-9]|\$)#127.0.0.1:$real\\1#g")
	done
	printf '%s\n' "$rw"
}

# --- the walk -----------------------------------------------------------

servers=""	# "PID:NAME" of README's servers, stopped at the end
run_err=""	# the stderr of the last wa-campaign run
copied=""	# the section running on a copy of the buckets

# run_cmd N K: block N's command K, rewritten, in the session; 0 or its
# status. A command ending in & stays in the background: a server (one
# with --listen) until the end, once it listens; any other until the end
# of its block (its status then counts). A server README runs in the
# foreground (--listen, --follow) runs as a service manager would: in
# the background, until the end of its block.
run_cmd() {
	rc_c=$(cat "$B/$1.$2")
	rc_t=$(uncomment "$rc_c")
	rc_w=$(rewrite "$rc_c")
	rc_bg=""
	case $rc_t in
	*'&') rc_bg=job ;;
	*--listen*|*--follow*) rc_bg=daemon rc_w="$(rewrite "$rc_t") &" ;;
	esac
	case $rc_bg$rc_t in job*--listen*) rc_bg=server ;; esac
	printf '{ %s\n} 3<&- 4>&- >"%s" 2>"%s"\n' "$rc_w" "$B/$1.$2.out" \
	    "$B/$1.$2.err" >"$B/$1.$2.sh"
	s_run "$B/$1.$2.sh" || return "$s_rc"
	[ -z "$rc_bg" ] && return 0
	rc_pid=$(val '!')
	rc_name=$(printf '%s\n' "$rc_t" | grep -oE 'wa-[a-z-]+' | head -1)
	case $rc_bg in
	job) rb_jobs="$rb_jobs $rc_pid" ;;
	daemon) rb_daemons="$rb_daemons $rc_pid:$rc_name" ;;
	server) servers="$servers $rc_pid:$rc_name" ;;
	esac
	rc_port=$(printf '%s\n' "$rc_t" |
	    sed -n 's/.*--listen 127\.0\.0\.1:\([0-9]*\).*/\1/p')
	if [ -n "$rc_port" ]; then
		wait_for 30 listening "$rc_pid" "$T/port.$rc_port" \
		    "$B/$1.$2.err" || return 1
	elif [ "$rc_bg" = daemon ]; then
		wait_for 30 catches "$rc_pid" TERM || return 1
	fi
	return 0
}

# listening PID FILE ERR: the server has written its port to FILE (fails
# fast if it is gone, its stderr in ERR).
listening() {
	kill -0 "$1" 2>/dev/null || bail "a README server exited: $(cat "$3")"
	test -s "$2"
}

# stop PID:NAME...: SIGTERM to each, and a test that it exits 0; 0 if
# every one does.
stop() {
	st_rc=0
	for st in "$@"; do
		s_eval "kill -TERM ${st%%:*}; wait ${st%%:*}"
		is "$s_rc" 0 "${st#*:}, started by README, stops cleanly"
		[ "$s_rc" = 0 ] || st_rc=1
	done
	return "$st_rc"
}

# run_block N: block N's commands in order (one with "..." is elided,
# not run), then its background jobs waited for and its servers stopped:
# one test, with what failed.
run_block() {
	rb_n=$(split_block "$1")
	rb_fail="" rb_ran=0
	rb_jobs="" rb_daemons=""
	for k in $(seq 1 "$rb_n"); do
		rb_t=$(uncomment "$(cat "$B/$1.$k")")
		case $rb_t in
		*...*)
			skip_here "'$(echo "$rb_t" | head -1 | cut -d' ' -f1-2) ...'" \
			    "elides its words (its options checked above)"
			continue ;;
		esac
		before_cmd "$rb_t"
		rb_ran=$((rb_ran + 1))
		run_cmd "$1" "$k"
		rb_rc=$?
		if [ "$rb_rc" != 0 ]; then
			rb_fail="$rb_fail
$(head -1 "$B/$1.$k"): exit $rb_rc
$(tail -5 "$B/$1.$k.err" 2>/dev/null)"
			continue
		fi
		after_cmd "$rb_t" "$B/$1.$k.out" "$B/$1.$k.err"
	done
	for j in $rb_jobs; do
		s_eval "wait $j" || rb_fail="$rb_fail
a background job: exit $s_rc"
	done
	# shellcheck disable=SC2086
	if [ -n "$rb_daemons" ] && ! stop $rb_daemons; then
		rb_fail="$rb_fail
a server did not stop cleanly"
	fi
	is "$rb_fail" "" "README:$line ($section): its $rb_ran command(s) exit 0"
}

# Campaigns 42 and 43, README's examples: the test's own, made as the
# reader made theirs (created, imported, started), with those ids.
made_42=""
make_42_43() {
	[ -n "$made_42" ] && return
	made_42=1
	sql "select setval(pg_get_serial_sequence('campaigns', 'id'), 41)" \
	    >/dev/null
	for c in 42 43; do
		setup "campaign $c, README's example, created and started" "
		    c=\$(wa-campaign create --name example-$c \
		    --phone-number-id 106540352242922 \
		    --template flu_reminder) &&
		    [ \"\$c\" = $c ] &&
		    wa-campaign import $c recipients.csv 2>/dev/null &&
		    wa-campaign start $c"
	done
}

# before_block TEXT: what the test makes true before a block, of what its
# text supposes of README's example campaigns 42 and 43, or of "$id".
before_block() {
	if printf '%s\n' "$1" | grep -qE '(^|[^0-9@])4[23]([^0-9]|$)'; then
		make_42_43
	fi
	case $1 in
	*'wa-campaign set '*' 42'*)
		setup "42 paused: the block sets a paused campaign's rules" \
		    "wa-campaign pause 42" ;;
	*'wa-campaign export --status failed 42'*)
		setup "42 run to its end: the block exports its failures" \
		    "wa-campaign resume 42 && wa-campaign run 42 2>/dev/null"
		is "$(sql "select status from campaign_recipients
		    where campaign_id = 42 and phone = '+393331234567'")" \
		    suppressed "a number suppressed after the import: not sent"
		;;
	esac
	case $1 in
	*'wa-claim -c 42 '*'&'*)
		# The block's pipelines end (the test waits for them): their
		# campaigns have nothing due.
		for c in 42 43; do
			[ "$(state $c)" = running ] || continue
			setup "$c paused: the block's pipeline on it ends" \
			    "wa-campaign pause $c"
		done ;;
	*'wa-claim -c 42 '*)
		[ "$(state 42)" = paused ] &&
		    setup "42 resumed: the block's pipeline runs it" \
		    "wa-campaign resume 42" ;;
	esac
	case $1 in
	*'wa-throttle --pause '*)
		# It holds the number a minute on the host: the section runs
		# on a host of its own, the buckets a copy of the first's.
		setup "the section's buckets: a copy of the host's" \
		    "cp -a \"\$WA_STATE_DIR\" $T/state-copy &&
		    export WA_STATE_DIR=$T/state-copy"
		copied=$section ;;
	esac
	case $1 in
	*'wa-fake-api'*)
		case $1 in *'wa-claim -c "$id"'*)
			setup "\$id a campaign to rehearse: made and started" \
			    'id=$(wa-campaign create --name rehearsal \
			    --phone-number-id 106540352242922 \
			    --template flu_reminder) &&
			    wa-campaign import "$id" recipients.csv \
			    2>/dev/null &&
			    wa-campaign start "$id"' ;;
		esac ;;
	esac
}

# before_cmd TEXT: what the test notes before a command.
before_cmd() {
	case $1 in
	*'wa-campaign run --dry-run "$id"'*)
		cid=$(val id)
		pending=$(sql "select count(*) from campaign_recipients
		    where campaign_id = $cid and status = 'pending'") ;;
	esac
}

# after_cmd TEXT OUT ERR: what README says of a command, checked.
after_cmd() {
	case $1 in
	'id=$(wa-campaign create '*)
		like "$(val id)" '^[0-9]+$' "create prints only the new id"
		is "$(cat "$3")" "" "...and nothing on stderr" ;;
	*'wa-campaign run --dry-run "$id" > '*)
		f=$H/$(echo "$1" | sed 's/.*> *//')
		is "$(wc -l <"$f" | tr -d ' ')" "$pending" \
		    "run --dry-run: the request of each pending row"
		is "$(sql "select count(*) from campaign_recipients
		    where campaign_id = $cid and status = 'pending'")" \
		    "$pending" "run --dry-run: no row changes" ;;
	'wa-campaign run '*'"$id"')
		is "$(state "$(val id)")" completed "run: the campaign's end"
		run_err=$3 ;;
	'wa-campaign status "$id"')
		like "$(cat "$2")" completed "status says it is completed" ;;
	'wa-campaign export --status failed 42 > '*)
		like "$(head -1 "$H/failed.csv")" '^phone,' "export: the header"
		like "$(sed 1d "$H/failed.csv")" '^\+393331230000,failed,' \
		    "export --status failed: the failed row" ;;
	"awk -F, "*)
		is "$(sed 1d "$H/retry.csv" | cut -d, -f1,5)" \
		    "+393331230000,131026" \
		    "awk's \$5 is export's error code: the row it means" ;;
	'wa-campaign requeue -n '*)
		is "$(head -1 "$2")" 1 "requeue -n prints the count"
		is "$(sql "select status from campaign_recipients
		    where campaign_id = 42 and phone = '+393331230000'")" \
		    failed "requeue -n changes nothing" ;;
	'wa-campaign requeue --phones '*)
		is "$(sql "select status from campaign_recipients
		    where campaign_id = 42 and phone = '+393331230000'")" \
		    pending "requeue puts the row back to pending" ;;
	'wa-throttle --show')
		like "$(cat "$2")" '^106540352242922 +950(\.0+)? ' \
		    "--show: the rate --set-rate set" ;;
	*'wa-send -j 1 | jq -c .result')
		is "$(jq -r .outcome "$2")" sent "wa-send: the result, sent" ;;
	"jq -s 'group_by(.outcome)"*)
		is "$(jq -c '[.error >= 1, .sent >= 1]' "$2")" '[true,true]' \
		    "the fake's log: sends, and the error --script 0000= gives"
		;;
	'wa-claim -c 42 | wa-throttle --cluster '*)
		is "$(state 42)" completed "the pipeline ran 42 to its end" ;;
	'wa-campaign report "$id" > '*|'wa-campaign report ID > '*)
		ok "report: an HTML file with SVG charts, no script" sh -c \
		    "grep -q '<svg' '$H/report.html' &&
		    ! grep -qi '<script' '$H/report.html'" ;;
	esac
}

# kind N: what block N is, by its text.
kind() {
	k_first=$(head -1 "$B/$1")
	if [ -z "$section" ]; then
		echo overview
	elif echo "$k_first" | grep -qE '^make '; then
		echo make
	elif echo "$k_first" | grep -qE '^([0-9*/,-]+ +){5}[^ ]'; then
		echo cron
	elif echo "$k_first" | grep -qE '^campaign [0-9]+: '; then
		echo progress
	elif echo "$k_first" | grep -qE '^(ALTER|SELECT|SET|CREATE) '; then
		echo sql
	elif echo "$k_first" | grep -qE '^\[[A-Za-z]+\]$'; then
		echo dropin
	elif echo "$k_first" | grep -qE '^[a-z][a-z/-]*/ '; then
		echo layout
	elif grep -qE '^(sudo|systemctl) ' "$B/$1"; then
		echo service
	elif grep -qE '^export DATABASE_URL=' "$B/$1"; then
		echo conninfo
	elif grep -q '\[-' "$B/$1"; then
		echo synopsis
	else
		echo shell
	fi
}

exec 6<"$B/list"
while read -r b line section <&6; do
	case $(kind "$b") in
	overview)
		skip_here "the overview, before README makes a database;" \
		    "its pipeline runs below" ;;
	make)
		# Not run; each target exists. (Not the make running the
		# suite's jobserver and flags: a make of its own.)
		for t in $(sed -n 's/^make \([a-z-]*\).*/\1/p' "$B/$b"); do
			exits 0 "README:$line: make $t: a target (make -n)" \
			    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
			    make -s -n -C "$TOP" "$t" >/dev/null 2>&1
		done
		skip_here "make demo: a minute, and make deps may run" \
		    "apt-get; tests/95-package.t runs the demo"
		skip_here "make check: the whole suite, this test in it" ;;
	cron)
		# A crontab line: its command, once; README's campaign 42 there
		# is one of the line's own, so that 42 stays as the text has it.
		sed -E 's/^([^ ]+ +){5}//' "$B/$b" >"$B/$b.1"
		if grep -qE '(^|[^0-9])42([^0-9]|$)' "$B/$b.1"; then
			setup "a campaign of the cron line's own, started" "
			    c=\$(wa-campaign create --name cron-line \
			    --phone-number-id 106540352242922 \
			    --template flu_reminder) &&
			    wa-campaign import \$c recipients.csv 2>/dev/null &&
			    wa-campaign start \$c"
			cron_c=$(sql "select max(id) from campaigns
			    where name = 'cron-line'")
			sed -i -E "s/(^|[^0-9])42([^0-9]|\$)/\1$cron_c\2/g" \
			    "$B/$b.1"
		fi
		run_cmd "$b" 1
		is "$?" 0 "README:$line ($section): the cron line's command"
		log=$(sed -n 's/.*>> *\([^ ]*\).*/\1/p' "$B/$b.1")
		ok "...and appends to its log" test -f "$(rewrite "$log")" ;;
	progress)
		# A progress line: the shape of those the last run wrote off a
		# terminal (watch's too), to the rates (then ETA, done or the
		# retries).
		want=$(head -1 "$B/$b" | sed -E 's/(average, ).*/\1/;
		    s/[().]/\\&/g; s/[0-9]+/[0-9]+/g')
		like "$(cat "${run_err:-/dev/null}")" "(^|: )$want" \
		    "README:$line: the progress line has the shape run writes"
		;;
	sql)
		if grep -q synchronous_standby_names "$B/$b"; then
			skip_here "a synchronous standby's settings: with no" \
			    "standby every commit would wait" \
			    "(tests/82-failover.t has one)"
		else
			psql -X -q -v ON_ERROR_STOP=1 -f "$B/$b" >/dev/null
			is "$?" 0 "README:$line ($section): the SQL runs"
		fi ;;
	dropin)
		skip_here "a systemd drop-in (tests/99-service.t runs the" \
		    "units)" ;;
	layout)
		# Every folder and file the layout names, where it says.
		out=$(awk '{
			match($0, /^ */)
			if ($1 ~ /\/$/) {
				if (RLENGTH == 0)
					top = $1
				dir = RLENGTH == 0 ? $1 : top $1
				print dir
			}
			for (i = 1; i <= NF; i++) {
				w = $i
				gsub(/[(),;:`]/, "", w)
				if (w ~ /^[A-Za-z0-9_-]+\.(c|h|cc|sh|sql|md)$/)
					print dir w
			}
		}' "$B/$b" | while read -r f; do
			[ -e "$TOP/$f" ] || echo "$f"
		done)
		is "$out" "" "README:$line: its folders and files exist"
		;;
	service)
		skip_here "needs root, systemd and the system's Postgres" \
		    "(tests/99-service.t)"
		out=$(sed -n 's/^systemctl \(enable --now\|start\) //p' \
		    "$B/$b" | sed 's/ *#.*//' | tr ' ' '\n' |
		    sed -E 's/@[0-9]+$/@/; /\./!s/$/.service/' |
		    while read -r u; do
			[ -f "$TOP/contrib/systemd/$u" ] || echo "$u"
		done)
		is "$out" "" "README:$line: its units are in contrib/systemd"
		;;
	conninfo)
		if grep -q WA_PG_POOLING "$B/$b"; then
			skip_here "points every later command at a pgbouncer" \
			    "(tests/85-pgbouncer.t runs one)"
		else
			skip_here "points every later command at servers db1" \
			    "and db2 (a standby: tests/82-failover.t has one)"
		fi ;;
	synopsis)
		note "README:$line: a synopsis, its options checked above" ;;
	shell)
		if [ -n "$copied" ] && [ "$section" != "$copied" ]; then
			setup "back to the host's buckets" \
			    "export WA_STATE_DIR=$T/state"
			copied=""
		fi
		before_block "$(cat "$B/$b")"
		run_block "$b" ;;
	esac
done

# shellcheck disable=SC2086
[ -n "$servers" ] && stop $servers
exec 8>&-
wait "$sess"
is "$?" 0 "the session ends"
done_testing
