#!/bin/sh
# wa-throttle --show, and --set-rate saying what it changed: buckets an
# operator can see, and a mistyped number that makes none. Then the
# default state directory: one per host, whatever the session.
. "$(dirname "$0")/lib.sh"

# A host's buckets: made by a pipeline, changed, shown.
echo '{"phone_number_id":"111"}' | wa-throttle -r 40 >/dev/null
wa-throttle --show >"$T/show" 2>"$T/err"
is $? 0 '--show exits 0'
like "$(head -1 "$T/show")" '^number +rate/s +own/s +burst +paused_until +reserve +drawing +where$' \
    'a header line'
like "$(grep '^111 ' "$T/show")" "^111 +40 +40 +4 +- +- +- +$WA_STATE_DIR/bucket-111\$" \
    'the bucket: rate, own rate, burst, no pause, no reserve, nobody drawing, its file'

wa-throttle --number 111 --set-rate 30 -b 2 2>"$T/err"
is $? 0 '--set-rate on an existing bucket exits 0'
like "$(cat "$T/err")" "number 111: this host's bucket's rate 40/s -> 30/s, burst 4 -> 2" \
    '... and says what it changed'
wa-throttle --number 111 --pause 60000 2>"$T/err"
like "$(cat "$T/err")" "number 111: this host's bucket paused 60000 ms, until 20[0-9-]+T[0-9:]+Z" \
    '--pause says until when'
wa-throttle --show --number 111 >"$T/show"
like "$(tail -1 "$T/show")" '^111 +30 +30 +2 +20[0-9-]+T[0-9:]+Z ' \
    '--show --number: the new rate, burst and the pause'

# A mistyped number: no bucket made without --create.
wa-throttle --number 112 --set-rate 30 2>"$T/err"
is $? 64 '--set-rate on a number without a bucket exits 64'
like "$(cat "$T/err")" 'number 112 has no bucket on this host: check the number, or add --create' \
    '... and says why'
ok '... and makes none' test ! -e "$WA_STATE_DIR/bucket-112"
wa-throttle --number 112 --set-rate 30 --create 2>"$T/err"
is $? 0 '--create makes it'
like "$(cat "$T/err")" "number 112: this host's bucket made at 30/s, burst 3" \
    '... and says so'
wa-throttle --show --number 113 >/dev/null 2>"$T/err"
is $? 69 '--show of a number without a bucket exits 69'
like "$(cat "$T/err")" "number 113 has no bucket on this host" '... saying so'

# Usage errors that say what is missing.
wa-throttle --set-rate 30 2>"$T/err"
is $? 64 '--set-rate without --number exits 64'
like "$(head -1 "$T/err")" '--set-rate needs --number ID' '... and says what is missing'
wa-throttle --create --number 112 2>"$T/err"
is $? 64 '--create alone exits 64'

# The default directory: /run/wapipe when it may be written or made, else
# /tmp/wapipe-UID; never XDG_RUNTIME_DIR, which cron does not have.
if [ -e /run/wapipe ]; then
	skip '/run/wapipe exists here: the root case is not checked'
elif [ "$(id -u)" = 0 ]; then
	env -u WA_STATE_DIR XDG_RUNTIME_DIR=$T/xdg wa-throttle --show \
	    >/dev/null 2>"$T/err"
	is "$(cat "$T/err")" 'wa-throttle: no bucket in /run/wapipe' \
	    'as root: /run/wapipe, whatever XDG_RUNTIME_DIR says'
else
	skip 'not root'
fi
if [ "$(id -u)" = 0 ] && command -v runuser >/dev/null &&
    [ ! -e /run/wapipe ] &&
    runuser -u nobody -- test -x "$WA_BIN/wa-throttle"; then
	uid=$(id -u nobody)
	runuser -u nobody -- env -u WA_STATE_DIR XDG_RUNTIME_DIR=$T/xdg \
	    "$WA_BIN/wa-throttle" --show >/dev/null 2>"$T/err"
	is "$(cat "$T/err")" "wa-throttle: no bucket in /tmp/wapipe-$uid" \
	    'a user who may not write /run: /tmp/wapipe-UID'
else
	skip 'needs root, runuser, no /run/wapipe and programs nobody may run'
fi

# The cluster: rows shown, --create needed, -r that is not the row's said.
pg_start
echo '{"phone_number_id":"211"}' | wa-throttle --cluster -r 50 >/dev/null
wa-throttle --cluster --show >"$T/show"
like "$(grep '^211 ' "$T/show")" '^211 +50 +50 +5 +- +- +- +cluster$' \
    '--cluster --show: the row, where: cluster'
wa-throttle --cluster --number 212 --set-rate 20 2>"$T/err"
is $? 64 '--cluster --set-rate on a number without a row exits 64'
like "$(cat "$T/err")" 'number 212 has no bucket on the cluster' '... saying why'
is "$(sql "select count(*) from throttle_buckets where phone_number_id = '212'")" 0 \
    '... and makes no row'
wa-throttle --cluster --number 211 --set-rate 20 2>"$T/err"
like "$(cat "$T/err")" "number 211: the cluster's bucket's rate 50/s -> 20/s, burst 5 -> 2" \
    '--cluster --set-rate says what it changed'
echo '{"phone_number_id":"211"}' | wa-throttle --cluster -r 70 >/dev/null 2>"$T/err"
like "$(cat "$T/err")" "211: the cluster's bucket runs at 20/s, burst 2, which this process keeps" \
    '--cluster -r says it keeps the row'"'"'s rate'

done_testing
