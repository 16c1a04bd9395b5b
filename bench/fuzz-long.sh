#!/bin/sh
# bench/fuzz-long.sh: the long fuzzing runs of bench/RESULTS.md. Runs the
# named harnesses of fuzz/ (all when none is named), JOBS at a time at
# nice 19, each from a copy of its checked-in seeds until it has used
# CPU_SECONDS of CPU (user and system, its children's included: a clock
# would measure the machine's load, not the fuzzing), then stops it with
# SIGINT, on which libFuzzer prints its final figures. Writes to OUT
# (default build-fuzz/long): NAME.log, libFuzzer's output; NAME/, the
# corpus it grew; crash/, what broke a property. Prints one table row a
# harness: executions, exec/s, cov, ft, corpus files, CPU s, and whether
# it found anything. AGAIN=1 goes on from the corpus a run left in OUT,
# its output in NAME.again.log.
#
#   make fuzz-build && CPU_SECONDS=1800 JOBS=2 sh bench/fuzz-long.sh
CPU_SECONDS=${CPU_SECONDS:-1800}
JOBS=${JOBS:-2}
OUT=${OUT:-build-fuzz/long}
BIN=${BIN:-build-fuzz/fuzz}
if [ $# -eq 0 ]; then
	for f in fuzz/*.c; do
		f=${f#fuzz/}
		set -- "$@" "${f%.c}"
	done
fi
mkdir -p "$OUT/crash"

# cpu PID: the CPU seconds PID and its waited-for children have used.
cpu() {
	awk -v t="$(getconf CLK_TCK)" '{
		sub(/^.*\) /, "")
		print int(($12 + $13 + $14 + $15) / t)
	}' "/proc/$1/stat" 2>/dev/null
}

# one NAME: a run of harness NAME; its table row on standard output.
one() {
	n=$1
	log=$OUT/$n${AGAIN:+.again}.log
	if [ -z "${AGAIN:-}" ]; then
		rm -rf "${OUT:?}/$n"
		mkdir -p "$OUT/$n"
		cp fuzz/corpus/"$n"/* "$OUT/$n/"
	fi
	nice -n 19 "$BIN/$n" -timeout=30 -print_final_stats=1 \
	    -dict=fuzz/json.dict -artifact_prefix="$OUT/crash/$n-" \
	    "$OUT/$n" >"$log" 2>&1 &
	p=$!
	used=0
	while kill -0 "$p" 2>/dev/null; do
		used=$(cpu "$p") || break
		[ "${used:-0}" -ge "$CPU_SECONDS" ] && kill -INT "$p"
		sleep 5
	done
	wait "$p"
	rc=$?
	awk -v n="$n" -v cpu="$used" -v rc="$rc" \
	    -v files="$(ls "$OUT/$n" | wc -l)" '
	/cov: / {
		for (i = 1; i < NF; i++) {
			if ($i == "cov:") cov = $(i + 1)
			if ($i == "ft:") ft = $(i + 1)
		}
	}
	/^stat::number_of_executed_units:/ { runs = $2 }
	/^stat::average_exec_per_sec:/ { rate = $2 }
	END {
		found = (rc == 0 || rc == 72 || rc == 130) ? "none" : \
		    "exit " rc ": see the log"
		printf "| %s | %d | %d | %s | %s | %d | %d | %s |\n",
		    n, runs, rate, cov, ft, files, cpu, found
	}' "$log"
}

if [ "$1" = --one ]; then
	one "$2"
	exit
fi
echo "| harness | executions | exec/s | cov | ft | corpus files |" \
    "CPU s | finding |"
echo "|---|--:|--:|--:|--:|--:|--:|---|"
printf '%s\n' "$@" | OUT=$OUT BIN=$BIN CPU_SECONDS=$CPU_SECONDS \
    AGAIN=${AGAIN:-} xargs -P "$JOBS" -n 1 sh "$0" --one
