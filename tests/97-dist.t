#!/bin/sh
# make dist and the release number: the tarball holds exactly the files
# committed, under wapipe-VERSION/, and builds and passes tests on its
# own; every program says VERSION, which the Makefile alone defines and
# CHANGELOG's newest release names, and the Graph API version it speaks
# by default, GRAPH_API_VERSION, the Makefile's too; a new VERSION or
# GRAPH_API_VERSION rebuilds the programs.
. "$(dirname "$0")/lib.sh"

VERSION=$(sed -n 's/^VERSION = //p' "$TOP/Makefile")
like "$VERSION" '^[0-9]+\.[0-9]+\.[0-9]+$' "the Makefile says VERSION"
GRAPH=$(sed -n 's/^GRAPH_API_VERSION = //p' "$TOP/Makefile")
like "$GRAPH" '^v[0-9]+\.[0-9]+$' "the Makefile says GRAPH_API_VERSION"

# says PROG VERSION GRAPH: what PROG --version says.
says() {
	printf '%s (wapipe) %s\nGraph API %s by default' "$@"
}

# One place: no source defines the release or the default version.
out=$(grep -rnE 'define WA_(GRAPH_API_)?VERSION\b|graph\.facebook\.com/v' \
    "$TOP/cmd" "$TOP/lib")
is "$out" "" "no source file defines WA_VERSION or a Graph API version"
for p in $(programs); do
	is "$("$p" --version)" "$(says "$p" "$VERSION" "$GRAPH")" \
	    "$p --version"
done
is "$(sed -n 's/^## \([0-9][^ ]*\) .*/\1/p' "$TOP/CHANGELOG" | head -1)" \
    "$VERSION" "CHANGELOG's newest release is VERSION"
like "$(sed -n '/^## /p' "$TOP/CHANGELOG" | head -1)" '^## Unreleased$' \
    "CHANGELOG has an Unreleased section on top"

git -C "$TOP" rev-parse --git-dir >/dev/null 2>&1 || {
	note "not a git checkout (a tarball?): make dist needs git"
	done_testing
	exit
}
if ldd "$WA_BIN/wa-claim" 2>/dev/null | grep -q 'libasan'; then
	note "the tarball's build does not depend on WA_BIN: in the plain run"
	done_testing
	exit
fi

D=wapipe-$VERSION
make -s -C "$TOP" dist DIST="$T/$D.tar.gz" 2>"$T/dist.err"
is "$?" 0 "make dist"
ok "$D.tar.gz" test -s "$T/$D.tar.gz"
tar -tzf "$T/$D.tar.gz" | grep -v '/$' | sort >"$T/listed"
git -C "$TOP" ls-tree -r --name-only HEAD | sed "s|^|$D/|" | sort \
    >"$T/committed"
out=$(diff "$T/committed" "$T/listed")
is "$out" "" "it holds exactly the files committed, under $D/"

mkdir "$T/u"
tar -xzf "$T/$D.tar.gz" -C "$T/u"
U=$T/u/$D
make -s -j2 -C "$U" >"$T/build.out" 2>&1
is "$?" 0 "it builds on its own (make)"
[ -s "$T/build.out" ] && note "$(tail -5 "$T/build.out")"
for p in $(programs "$U"); do
	is "$("$U/bin/$p" --version 2>&1)" "$(says "$p" "$VERSION" "$GRAPH")" \
	    "the tarball's $p says $VERSION"
done
# Two tests from the tarball: its conventions, and a program against a
# Postgres of its own.
(cd "$U" && WA_BIN=$U/bin prove tests/90-docs.t tests/10-claim.t) \
    >"$T/prove.out" 2>&1
is "$?" 0 "its tests/90-docs.t and tests/10-claim.t pass"
grep -q 'Result: PASS' "$T/prove.out" || note "$(tail -20 "$T/prove.out")"

# A new VERSION, a new GRAPH_API_VERSION, reach every program without
# make clean.
make -s -j2 -C "$U" VERSION=9.8.7 >"$T/build.out" 2>&1
is "$?" 0 "make VERSION=9.8.7"
for p in wa-claim wa-send wa-webhook; do
	is "$("$U/bin/$p" --version 2>&1)" "$(says "$p" 9.8.7 "$GRAPH")" \
	    "$p says 9.8.7, rebuilt"
done
make -s -j2 -C "$U" VERSION=9.8.7 GRAPH_API_VERSION=v26.0 >"$T/build.out" 2>&1
is "$?" 0 "make GRAPH_API_VERSION=v26.0"
for p in wa-claim wa-send; do
	is "$("$U/bin/$p" --version 2>&1)" "$(says "$p" 9.8.7 v26.0)" \
	    "$p says v26.0, rebuilt"
done

done_testing
