#!/bin/sh
# The front door: make on a machine without the development packages
# says in one line which are missing and that make deps installs them,
# before any compiler runs; with them, the check passes. PKG_CONFIG and
# CXX stand in for a machine that lacks them.
. "$(dirname "$0")/lib.sh"

make -s -C "$TOP" O="$T/o" BIN="$T/bin" PKG_CONFIG=false \
    CXX=no-such-c++ >"$T/out" 2>"$T/err"
rc=$?
ok "make fails without them" test "$rc" -ne 0
like "$(grep -v '^make: \*\*\*' "$T/err")" \
    "^make: missing development packages: g\+\+ libjson-c-dev libpq-dev libcurl4-openssl-dev libmicrohttpd-dev libssl-dev libphonenumber-dev; 'make deps' installs them \(as root\)$" \
    "one line names every missing package and make deps"
is "$(grep -c . "$T/err")" 2 "and no compiler spoke (that line and make's)"
ok "nothing was compiled" sh -c "! find '$T/o' -name '*.o' | grep -q ."

exits 0 "with them, the check passes" \
    make -s -C "$TOP" O="$T/o2" BIN="$T/bin2" "$T/o2/build-deps"
ok "and leaves its mark: not run again in that tree" test -f "$T/o2/build-deps"

done_testing
