#!/bin/sh
# Every parser is fuzzed (fuzz/*.c, make fuzz); here every harness runs
# once over each file of its corpus, fuzz/corpus/NAME, without fuzzing
# (-runs=0): the seeds and every input a finding left there replay on
# each make check. A harness checks properties, not only crashes (what a
# parser takes re-emits as valid UTF-8 JSON, a request wa-send takes
# gives a body the API parses, a result wa-record takes is one Postgres
# takes), so a corpus file that breaks one fails here. Needs clang with
# libFuzzer (libclang-rt-N-dev); skipped without it.
. "$(dirname "$0")/lib.sh"

command -v clang >/dev/null 2>&1 || skip_all "no clang: the fuzz harnesses are not built"
# The test runs inside make check: the harnesses are built by a make of
# their own, which must not inherit the outer one's jobs or variables.
unset MAKEFLAGS MFLAGS MAKELEVEL
O=${WA_FUZZ_O:-$TOP/build-fuzz}
if ! make -s -C "$TOP" fuzz-build FUZZ_O="$O" >"$T/build" 2>&1; then
	if grep -q 'cannot link -fsanitize=fuzzer' "$T/build"; then
		skip_all "clang cannot link libFuzzer (libclang-rt-N-dev missing)"
	fi
	sed 's/^/# /' "$T/build" | tail -30
	bail "make fuzz-build failed"
fi

n=0
for src in "$TOP"/fuzz/*.c; do
	f=$(basename "$src" .c)
	ok "fuzz/corpus/$f exists and is not empty" \
	    test -n "$(ls "$TOP/fuzz/corpus/$f" 2>/dev/null)"
	"$O/fuzz/$f" -runs=0 "$TOP/fuzz/corpus/$f/" >"$T/$f.log" 2>&1
	st=$?
	is "$st" 0 "$f: every file of fuzz/corpus/$f replays without a fault"
	[ "$st" = 0 ] || grep -E 'property violated|ERROR:|runtime error' \
	    "$T/$f.log" | head -5 | sed 's/^/# /' >&7
	# It read them all: libFuzzer counts what it found.
	files=$(ls "$TOP/fuzz/corpus/$f" | wc -l)
	like "$(grep 'files found in' "$T/$f.log")" \
	    "INFO: +$files files found" "$f: all $files corpus files ran"
	n=$((n + 1))
done
ok "a harness for every parser (12 at least): $n" test "$n" -ge 12

# The regression cases: each input a finding left, replayed on its own,
# with what it once broke (the fix is in the commit that added it).
regress() {
	ok "fuzz/corpus/$1/$2 is there" test -f "$TOP/fuzz/corpus/$1/$2"
	"$O/fuzz/$1" -runs=1 "$TOP/fuzz/corpus/$1/$2" >"$T/r.log" 2>&1
	is "$?" 0 "$1 $2: $3"
}

# The harnesses can fail: one that cannot set up aborts, and the status
# says so.
TMPDIR=$T/none "$O/fuzz/input" -runs=0 "$TOP/fuzz/corpus/input/" \
    >"$T/fail.log" 2>&1
ok "a harness that aborts exits non-zero" test "$?" -ne 0
done_testing
