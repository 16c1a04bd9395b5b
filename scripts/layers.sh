#!/bin/sh
# layers.sh O BIN "NAME..." (make check-layers): which programs link
# each lib/ object, from the symbols of the objects in O/lib and of the
# programs in BIN (an archive member is linked whole, so one of its
# global symbols in a program says it is there). Prints the objects that
# one program alone links; fails unless each is a NAME (layer/file, as
# the Makefile's ONE_PROGRAM lists them with their reasons), and when a
# NAME is no longer linked by one program only.
set -eu
O=$1 BIN=$2 allowed=" $3 "
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
for p in "$BIN"/*; do
	nm --defined-only "$p" | awk '{ print $3 }' | sort -u >"$t/${p##*/}"
done
bad=0 seen=" "
for f in lib/*/*.c lib/*/*.cc; do
	name=${f#lib/}
	name=${name%.*}
	o=$O/lib/$name.o
	sym=$(nm -g --defined-only "$o" | awk '$2 ~ /^[TDBR]$/ { print $3; exit }')
	[ -n "$sym" ] || continue
	users=""
	for p in "$t"/*; do
		grep -qxF "$sym" "$p" && users="$users ${p##*/}"
	done
	set -- $users
	[ $# -gt 1 ] && continue
	seen="$seen$name "
	case $allowed in
	*" $name "*) echo "check-layers: $name: only${users:- no program}" ;;
	*) echo "check-layers: $name is linked by${users:- no program} alone:" \
	    "move it to that program's folder, or name it with its reason in" \
	    "the Makefile's ONE_PROGRAM" >&2
		bad=1 ;;
	esac
done
for name in $allowed; do
	case $seen in
	*" $name "*) ;;
	*) echo "check-layers: $name is in ONE_PROGRAM but is shared now:" \
	    "take it off the list" >&2
		bad=1 ;;
	esac
done
exit $bad
