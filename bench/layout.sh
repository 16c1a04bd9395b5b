#!/bin/sh
# bench/layout.sh [DIR]: what lib/ holds, in a built tree (make first;
# DIR defaults to this checkout): its files and lines, the lines of the
# files whose object one program alone links (or none), from the
# programs' symbols in bin/ as scripts/layers.sh reads them, and the
# includes that point up a layer (core to anything but core; records to
# api, pg or spool; pg to spool). Writes the four figures on stdout.
set -eu
cd "${1:-$(dirname "$0")/..}"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
for p in bin/*; do
	nm --defined-only "$p" | awk '{ print $3 }' | sort -u >"$t/${p##*/}"
done
files=0 lines=0 one=0
for f in lib/*/*.c lib/*/*.cc; do
	[ -f "$f" ] || continue
	n=${f#lib/}
	n=${n%.*}
	l=$(wc -l <"$f")
	[ -f "lib/$n.h" ] && l=$((l + $(wc -l <"lib/$n.h")))
	lines=$((lines + l))
	sym=$(nm -g --defined-only "build/lib/$n.o" |
	    awk '$2 ~ /^[TDBR]$/ { print $3; exit }')
	users=0
	for p in "$t"/*; do
		grep -qxF "$sym" "$p" && users=$((users + 1))
	done
	[ "$users" -le 1 ] && one=$((one + l))
done
files=$(ls lib/*/*.c lib/*/*.cc lib/*/*.h | wc -l)
up=$( { grep -Hn '^#include "' lib/core/*.[ch] | grep -v '"core/' || :
	grep -Hn '^#include "\(api\|pg\|spool\|run\|fake\)/' \
	    lib/records/* || :
	grep -Hn '^#include "spool/' lib/pg/* || :
	grep -Hn '^#include "api/bucket.h"' lib/pg/* |
	    grep -v 'lib/pg/lease.c' || :
    } | wc -l)
echo "lib/: $files files, $lines lines"
echo "lines in files one program alone links: $one ($((100 * one / lines))%)"
echo "includes that point up a layer: $up"
