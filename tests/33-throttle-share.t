#!/bin/sh
# wa-throttle's fair share: processes drawing from one number split its
# rate by --weight, one with nothing to send leaves its part to the others,
# an --urgent one holds the others back, and --reserve keeps part of the
# rate for live conversations; on a host and in a cluster. Rates are
# measured from the lines' own arrival stamps (a reader stamps each line
# as it comes out of the pipe), over windows the stamps themselves mark.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/throttle.sh"

# stamp: each line of input as the time it arrived, in seconds.
stamp() {
	perl -MTime::HiRes=time -ne '$| = 1; printf "%.6f\n", time'
}
# rate FILE FROM TO: lines per second among FILE's stamps from FROM to TO.
rate() {
	awk -v a="$2" -v b="$3" '$1 >= a && $1 <= b {
	    if (!n++) f = $1; l = $1 }
	    END { printf "%.2f", (n > 1 ? (n - 1) / (l - f) : 0) }' "$1"
}
# within GOT WANT OVER UNDER: GOT at most OVER% above WANT, UNDER% below.
# (A loaded machine passes lines late, never early: the ceiling is the
# throttle's promise, and the floor, looser, still tells one share from
# another.)
within() {
	awk -v g="$1" -v w="$2" -v o="$3" -v u="$4" \
	    'BEGIN { exit !(g <= w * (1 + o / 100) && g >= w * (1 - u / 100)) }'
}
# nth FILE N: the Nth stamp of FILE.
nth() { sed -n "${2}p" "$1"; }
count() { [ "$(wc -l <"$1")" -ge "$2" ]; }
# whole RATE: RATE is the whole 80/s, not a half of it: never over by
# more than 10%, and over 60/s. (Only the ceiling is the throttle's
# promise; a loaded machine may pass lines late, never early, so the
# floor only tells the whole rate from the 40/s of a part not given back.)
whole() {
	awk -v g="$1" 'BEGIN { exit !(g > 60 && g <= 88) }'
}
fresh() {
	t_state=$((${t_state:-0} + 1))
	export WA_STATE_DIR="$T/state$t_state"
}
# drawing [--cluster]: the weights drawing from NUM, in order.
drawing() {
	wa-throttle --show "$@" --number "$NUM" 2>/dev/null |
	    awk 'NR == 2 { print $(NF - 1) }' | tr + '\n' | sort | paste -sd+
}
# drawing_is WEIGHTS [--cluster]: those weights draw, say "1+3" or "3+u1".
drawing_is() { w=$1; shift; [ "$(drawing "$@")" = "$w" ]; }

# share TAG OPTIONS: two processes at 80/s, weights 1 and 3; a has 100
# lines, b 480. While both draw: 20/s and 60/s; once a is done, b alone
# at 80/s. A's stamps from its 10th (both are drawing) to its last mark
# the window; b's own, from 0.6 s after a's last (a counts no more).
share() {
	tag=$1
	shift
	gen 100 | wa-throttle "$@" -r 80 --weight 1 | stamp >"$T/a" &
	pa=$!
	gen 480 | wa-throttle "$@" -r 80 --weight 3 | stamp >"$T/b" &
	pb=$!
	ok "$tag: --show says who draws, by weight" wait_for 30 \
	    drawing_is 1+3 "$@"
	wait "$pa" "$pb"
	w0=$(nth "$T/a" 10)
	w1=$(nth "$T/a" 100)
	ra=$(rate "$T/a" "$w0" "$w1")
	rb=$(rate "$T/b" "$w0" "$w1")
	ok "$tag: weight 1 of 1+3 at 80/s: 20/s, +10% -20% ($ra)" \
	    within "$ra" 20 10 20
	ok "$tag: weight 3 of 1+3 at 80/s: 60/s, +10% -20% ($rb)" \
	    within "$rb" 60 10 20
	w2=$(awk -v a="$w1" 'BEGIN { printf "%.6f", a + 0.6 }')
	rb=$(rate "$T/b" "$w2" 9999999999)
	ok "$tag: once the other is done, the whole 80/s, not 40 ($rb)" \
	    whole "$rb"
	is "$(wc -l <"$T/b")" 480 "$tag: every line passed"
}

fresh
share host

# The reserve: 10% of 100/s kept back, 90/s for the pipelines.
fresh
gen 200 | wa-throttle -r 100 --reserve 10% | stamp >"$T/r"
r=$(rate "$T/r" "$(nth "$T/r" 2)" 9999999999)
ok "--reserve 10% at 100/s: 90/s, +2% -10% ($r)" within "$r" 90 2 10
like "$(wa-throttle --show --number "$NUM")" "^$NUM +100 +100 +10 +- +10% +- " \
    '--show: the reserve'
wa-throttle --number "$NUM" --set-reserve 0 2>"$T/err"
like "$(cat "$T/err")" "keeps 0% of its rate back, 10% before" \
    '--set-reserve changes it, saying so'
like "$(wa-throttle --show --number "$NUM")" "^$NUM +100 +100 +10 +- +- " \
    '... to none'

# SIGTERM to one of two sharing (weights 1 and 1, 80/s): it drains and
# exits 0, its part free at once; the other goes on at the whole rate.
fresh
mkfifo "$T/fa"
gen 1000 >"$T/in1000"
wa-throttle -r 80 <"$T/in1000" >"$T/fa" 2>"$T/erra" &
pa=$!
stamp <"$T/fa" >"$T/a" &
sa=$!
gen 250 | wa-throttle -r 80 | stamp >"$T/b" &
pb=$!
ok 'both draw' wait_for 30 drawing_is 1+1
ok 'the first passes 40 lines' wait_for 30 count "$T/a" 40
wait_for 30 catches "$pa" TERM
kill "$pa"
exits 0 'stopped, it exits 0' wait "$pa"
wait "$sa"
t=$(perl -MTime::HiRes=time -e 'printf "%.6f", time')
is "$(wc -l <"$T/a")" 1000 '... its lines passed on, for wa-send to answer'
ok 'its part is given back at once' drawing_is 1
wait "$pb"
w2=$(awk -v a="$t" 'BEGIN { printf "%.6f", a + 0.6 }')
rb=$(rate "$T/b" "$w2" 9999999999)
ok "the other goes on at the whole 80/s, not 40 ($rb)" whole "$rb"

# Killed outright, a process's part is the others' within half a second.
fresh
mkfifo "$T/fk"
wa-throttle -r 80 <"$T/in1000" >"$T/fk" &
pa=$!
stamp <"$T/fk" >"$T/a" &
sa=$!
gen 200 | wa-throttle -r 80 | stamp >"$T/b" &
pb=$!
ok 'both draw again' wait_for 30 drawing_is 1+1
ok 'the first passes 20 lines' wait_for 30 count "$T/a" 20
kill -9 "$pa"
wait "$sa"
t=$(perl -MTime::HiRes=time -e 'printf "%.6f", time')
ok 'killed, it counts no more' wait_for 30 drawing_is 1
wait "$pb"
w2=$(awk -v a="$t" 'BEGIN { printf "%.6f", a + 0.6 }')
rb=$(rate "$T/b" "$w2" 9999999999)
ok "the other goes on at the whole 80/s, not 40 ($rb)" whole "$rb"

# Urgent: while an urgent process draws, the other (weight 3) passes
# nothing; the urgent one has the whole rate.
fresh
gen 160 | wa-throttle -r 80 --urgent | stamp >"$T/a" &
pa=$!
ok 'the urgent one passes 5 lines' wait_for 30 count "$T/a" 5
gen 100 | wa-throttle -r 80 --weight 3 | stamp >"$T/b" &
pb=$!
ok '--show marks the urgent one' wait_for 30 drawing_is 3+u1
wait "$pa"
w0=$(nth "$T/a" 10)
w1=$(nth "$T/a" 160)
ra=$(rate "$T/a" "$w0" "$w1")
ok "the urgent one at the whole 80/s, not a share ($ra)" whole "$ra"
n=$(awk -v a="$w0" -v b="$w1" '$1 >= a && $1 <= b' "$T/b" | wc -l)
ok "the other passes nothing meanwhile ($n lines)" test "$n" -le 1
wait "$pb"
is "$(wc -l <"$T/b")" 100 '... and all its lines after'

# In a cluster: the same shares through Postgres, and the reserve.
pg_start
fresh
share cluster --cluster
is "$(sql "select count(*) from throttle_drawers")" 0 \
    'cluster: the drawers are gone with their processes'
wa-throttle --cluster --number "$NUM" --set-reserve 10% 2>"$T/err"
like "$(cat "$T/err")" "the cluster's bucket keeps 10% of its rate back" \
    'cluster: --set-reserve'
gen 200 | wa-throttle --cluster | stamp >"$T/r"
r=$(rate "$T/r" "$(nth "$T/r" 10)" 9999999999)
ok "cluster: --reserve 10% at 80/s: 72/s, +2% -10% ($r)" \
    within "$r" 72 2 10
like "$(wa-throttle --cluster --show --number "$NUM")" \
    "^$NUM +80 +80 +8 +- +10% +- +cluster" 'cluster: --show, the reserve'
is "$(sql "select reserve from throttle_buckets")" 0.1 'cluster: on the row'

# wa-campaign run gives wa-throttle its campaign's weight and priority.
. "$(dirname "$0")/fake.sh"
fake_start --rate 0
fresh
ca=$(campaign 80)
cb=$(campaign 80)
sql "update campaigns set weight = 3 where id = $cb"
bg wa-campaign run --no-check "$ca" -r 80 2>"$T/runa"
pa=$!
bg wa-campaign run --no-check "$cb" -r 80 2>"$T/runb"
pb=$!
ok "wa-campaign run: its throttles draw by the campaigns' weights" \
    wait_for 30 drawing_is 1+3
exits 0 '... the first completes' wait "$pa"
exits 0 '... and the second' wait "$pb"
cc=$(campaign 40)
sql "update campaigns set priority = 'urgent' where id = $cc"
bg wa-campaign run --no-check "$cc" -r 80 2>"$T/runc"
pc=$!
ok "... and an urgent campaign's throttle is urgent" wait_for 30 \
    drawing_is u1
exits 0 '... which completes' wait "$pc"
fake_stop

# Usage.
for w in 0 1001 x ''; do
	exits 64 "--weight '$w' is a usage error" wa-throttle --weight "$w" \
	    </dev/null 2>/dev/null
done
for r in 100 -1 x 10%% ''; do
	exits 64 "--reserve '$r' is a usage error" wa-throttle --reserve "$r" \
	    </dev/null 2>/dev/null
done
exits 64 '--set-reserve needs --number' wa-throttle --set-reserve 5 \
    2>/dev/null
fresh
exits 64 '--set-reserve on a number without a bucket' \
    wa-throttle --number 999 --set-reserve 5 2>/dev/null
ok '... makes none' test ! -e "$WA_STATE_DIR/bucket-999"
done_testing
