#!/bin/sh
# The chaos test, short form: bench/chaos.sh (read its top comment) with
# a few hundred rows and a handful of each fault: kill -9 of random
# stages, Ctrl-Cs, a Postgres restart, an API outage (ended by what the
# fake answered, not by a clock). Every row settled, none sending, every
# wamid the fake's, nobody messaged twice but for calls in flight at a
# kill -9 of wa-send or wa-record, and those within their bound. The seed
# is printed: SEED=N prove tests/83-chaos.t replays the faults. The rate
# is low enough (30/s: some 16 s of sending) that the last faults, at up
# to 70% of the rows, still find a pipeline to strike on a loaded
# machine or under the sanitizers.
ROWS=${ROWS:-500} KILLS=${KILLS:-8} INTS=${INTS:-3} RESTARTS=${RESTARTS:-2} \
    OUTAGE=${OUTAGE:-0} RATE=${RATE:-30} T_TIMEOUT=${T_TIMEOUT:-900} \
    exec sh "$(dirname "$0")/../bench/chaos.sh"
