#!/bin/sh
# The conventions every program keeps: a man page that lints clean,
# --help and --version, a mention in the README, a header comment, no
# stray style. Scripts pass shellcheck.
. "$(dirname "$0")/lib.sh"

# help_opts PROG: the options PROG --help names, one a line.
help_opts() {
	"$1" --help 2>&1 |
	    grep -oE '(^|[^[:alnum:]-])--?[[:alpha:]][[:alnum:]-]*' |
	    sed 's/^[^-]*//' | sort -u
}

# page_opts PAGE: the options PAGE names with Fl, one a line (as mdoc
# renders them: each argument of Fl up to the next macro is a flag).
page_opts() {
	awk '/^\./ {
		for (i = 1; i <= NF; i++) {
			if ($i != "Fl")
				continue
			for (i++; i <= NF && $i !~ /^([A-Z][a-z][a-z]?|[,|.;:()])$/;
			    i++) {
				f = $i
				gsub(/\\-/, "-", f)
				print "-" f
			}
			i--
		}
	}' "$1" | sort -u
}

# src_opts SRC: the options SRC's getopt_long takes, one a line.
src_opts() {
	{
		sed -n 's/.*{ "\([a-z][a-z0-9-]*\)", [a-z]*_argument.*/--\1/p' "$1"
		sed -n 's/.*getopt_long([^"]*"\([^"]*\)".*/\1/p' "$1" |
		    tr -d ':+' | fold -w1 | sed 's/^/-/'
	} | sort -u
}

# src_opts_all SRC...: src_opts of each SRC, together.
src_opts_all() {
	for f in "$@"; do
		src_opts "$f"
	done | sort -u
}

# codes FILE...: the exit codes FILE... use (sysexits' and wapipe's own,
# WA_EX_ in core/err.h), as numbers, one a line.
codes() {
	grep -ohE '\b(WA_)?EX_[A-Z]+\b' "$@" | sort -u >"$T/ex"
	{ echo '#include "core/err.h"'; cat "$T/ex"; } |
	    ${CC:-cc} -I"$TOP/lib" -E -P - |
	    grep -E '^[0-9]+$' | sort -un
}

# page_codes PAGE: the codes in PAGE's EXIT STATUS, one a line.
page_codes() {
	awk '/^\.Sh / { on = ($0 == ".Sh EXIT STATUS") }
	    on && /^\.It [0-9]+$/ { print $2 }' "$1" | sort -un
}

# reached SRC: SRC and the lib/ sources it reaches through the lib/
# headers it includes, and so on.
reached() {
	r_seen=" $1 "
	r_todo=$1
	while [ -n "$r_todo" ]; do
		r_next=""
		for r_f in $r_todo; do
			for r_h in $(sed -n 's/^#include "\([a-z]*\/[a-z]*\)\.h"$/\1/p' \
			    "$r_f"); do
				r_c=$TOP/lib/$r_h.c
				[ -f "$r_c" ] || continue
				case $r_seen in *" $r_c "*) continue ;; esac
				r_seen="$r_seen$r_c "
				r_next="$r_next $r_c"
			done
		done
		r_todo=$r_next
	done
	echo "$r_seen"
}

# A program is cmd/NAME.c, or a folder cmd/NAME/ whose main.c has main.
for p in $(programs); do
	if [ -d "$TOP/cmd/$p" ]; then
		src=$TOP/cmd/$p/main.c srcs=$(echo "$TOP/cmd/$p"/*.c)
	else
		src=$TOP/cmd/$p.c srcs=$src
	fi
	ok "$p: has a man page" test -f "$TOP/man/$p.1"
	out=$(mandoc -Tlint -W warning "$TOP/man/$p.1" 2>&1)
	is "$out" "" "$p: man page lints clean"
	"$p" --help >"$T/help" 2>"$T/err"
	is "$?" 0 "$p --help exits 0"
	like "$(cat "$T/help")" "^usage: $p" "$p --help prints its usage"
	like "$("$p" --version)" "^$p \(wapipe\) [0-9]" "$p --version"
	"$p" --no-such-option >/dev/null 2>"$T/err"
	is "$?" 64 "$p: a bad option exits 64"
	ok "$p: in the README" grep -q -- "$p" "$TOP/README.md"
	help_opts "$p" >"$T/help.opts"
	is "$(page_opts "$TOP/man/$p.1")" "$(cat "$T/help.opts")" \
	    "$p: --help and the page name the same options"
	# shellcheck disable=SC2086
	is "$(cat "$T/help.opts")" "$(src_opts_all $srcs)" \
	    "$p: --help names every option it takes, and no other"
	ok "$p: the page lists -h, --help and --version" sh -c \
	    "grep -q '^\.It Fl h , Fl \\\\-help\$' '$TOP/man/$p.1' &&
	    grep -q '^\.It Fl \\\\-version\$' '$TOP/man/$p.1'"
	# shellcheck disable=SC2046,SC2086
	codes $(for f in $srcs; do reached "$f"; done) >"$T/codes"
	page_codes "$TOP/man/$p.1" >"$T/page.codes"
	# Reached but never used: wa-webhook links the spool's reader (66)
	# and never calls it.
	[ "$p" = wa-webhook ] && sed -i '/^66$/d' "$T/codes"
	is "$(comm -23 "$T/codes" "$T/page.codes" | tr '\n' ' ')" "" \
	    "$p: its page's EXIT STATUS has every code it uses"
	ok "$p: opens with a comment saying what it does" \
	    sh -c "head -1 '$src' | grep -q '^/\*' &&
	    sed -n 2p '$src' | grep -q '^ \* $p: '"
done
out=$(mandoc -Tlint -W warning "$TOP/man/wapipe.7" 2>&1)
is "$out" "" "wapipe(7) lints clean"
codes "$TOP"/cmd/*.c "$TOP"/cmd/*/*.c "$TOP"/lib/*/*.c >"$T/codes"
page_codes "$TOP/man/wapipe.7" >"$T/page.codes"
is "$(comm -23 "$T/codes" "$T/page.codes" | tr '\n' ' ')" "" \
    "wapipe(7)'s exit table has every code a program uses"
out=$(for m in "$TOP"/man/*.[1-9]; do
	sed -n '1s/^\.Dd [A-Z][a-z]* [1-9][0-9]*, 20[0-9][0-9]$/ok/p
	    3s/^\.Os wapipe$/ok/p' "$m" | grep -c ok | grep -qx 2 ||
	    echo "${m##*/}"
done)
is "$out" "" "every page: .Dd Month D, YYYY then .Os wapipe"
# On a macro line an argument that starts with a quote ends at the next:
# .Ql "a":1 renders as `a :1'.
out=$(grep -nE '^\..*(^| )"[^" ]+":' "$TOP"/man/*.[1-9])
is "$out" "" "no JSON in a macro line split at its quotes"

# Every lib/ file opens with a comment naming it, then says what it does.
out=$(cd "$TOP/lib" && for f in */*.[ch]; do
	head -1 "$f" | grep -qx '/\*' &&
	    sed -n 2p "$f" | grep -qE "^ \* ($f|${f#*/}): " || echo "$f"
done)
is "$out" "" "every lib/ file opens with a comment naming it"
out=$(cd "$TOP/cmd" && for f in */*.[ch]; do
	[ "${f#*/}" = main.c ] && continue
	head -1 "$f" | grep -qx '/\*' &&
	    sed -n 2p "$f" | grep -qE "^ \* ${f#*/}: " || echo "$f"
done)
is "$out" "" "every file of a program's folder opens with a comment naming it"

out=$(grep -nE '[[:space:]]$' "$TOP"/cmd/*.c "$TOP"/cmd/*/*.[ch] \
    "$TOP"/lib/*/*.[ch] \
    "$TOP"/tests/*.t "$TOP"/tests/*.sh "$TOP"/scripts/*.sh "$TOP"/sql/*.sql \
    2>/dev/null)
is "$out" "" "no trailing whitespace"
out=$(grep -nE '^[^"]*//' "$TOP"/cmd/*.c "$TOP"/cmd/*/*.[ch] \
    "$TOP"/lib/*/*.[ch] | grep -v 'https\?://')
is "$out" "" "no // comments"
out=$(for f in "$TOP"/cmd/*.c "$TOP"/cmd/*/*.[ch] "$TOP"/lib/*/*.[ch]; do
	expand "$f" | awk -v f="${f##*/}" 'length > 80 { print f ":" FNR }'
done)
is "$out" "" "C lines fit in 80 columns"
if command -v shellcheck >/dev/null; then
	out=$(shellcheck -x -S warning "$TOP"/scripts/*.sh "$TOP"/bench/*.sh 2>&1)
	is "$out" "" "scripts and benchmarks pass shellcheck"
fi

done_testing
