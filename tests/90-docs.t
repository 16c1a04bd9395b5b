#!/bin/sh
# The conventions every program keeps: a man page that lints clean,
# --help and --version, a mention in the README, a header comment, no
# stray style. Scripts pass shellcheck.
. "$(dirname "$0")/lib.sh"

for src in "$TOP"/cmd/*.c; do
	p=$(basename "$src" .c)
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
	ok "$p: opens with a comment saying what it does" \
	    sh -c "head -1 '$src' | grep -q '^/\*' &&
	    sed -n 2p '$src' | grep -q '^ \* $p: '"
done
out=$(mandoc -Tlint -W warning "$TOP/man/wapipe.7" 2>&1)
is "$out" "" "wapipe(7) lints clean"

out=$(grep -nE '[[:space:]]$' "$TOP"/cmd/*.c "$TOP"/lib/*/*.[ch] \
    "$TOP"/tests/*.t "$TOP"/tests/*.sh "$TOP"/scripts/*.sh "$TOP"/sql/*.sql \
    2>/dev/null)
is "$out" "" "no trailing whitespace"
out=$(grep -nE '^[^"]*//' "$TOP"/cmd/*.c "$TOP"/lib/*/*.[ch] | grep -v 'https\?://')
is "$out" "" "no // comments"
out=$(for f in "$TOP"/cmd/*.c "$TOP"/lib/*/*.[ch]; do
	expand "$f" | awk -v f="${f##*/}" 'length > 80 { print f ":" FNR }'
done)
is "$out" "" "C lines fit in 80 columns"
if command -v shellcheck >/dev/null; then
	out=$(shellcheck -x -S warning "$TOP"/scripts/*.sh "$TOP"/bench/*.sh 2>&1)
	is "$out" "" "scripts and benchmarks pass shellcheck"
fi

done_testing
