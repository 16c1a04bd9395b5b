#!/bin/sh
# bench/chaos.sh: one campaign sent through every fault at once, and what
# must still hold after. The defaults are the long form (figures in
# bench/RESULTS.md); tests/83-chaos.t runs the short form in make check.
#
# ROWS recipients (default 20000) go to wa-fake-api, which loses the
# answer for numbers ending 07 and 57 after taking the message, refuses
# 5% of sends (131000 4%, 131026 1%), drops 0.5% of connections unread,
# and sends status webhooks, some twice and some reads before their
# delivered, into wa-webhook and wa-status-ingest --follow (restarted
# whenever they die, as a service manager would). The pipeline
# wa-claim | wa-throttle | wa-send | wa-record is run by an operator's
# loop: run it; wa-reconcile; wait for the webhooks of what the fake took
# (standing in for --unknown-after); wa-reconcile again; until the
# campaign is completed and every fault has struck (a campaign done
# first gets 100 more recipients, as late ones would join). Meanwhile
# KILLS kill -9 of a random stage (any of the four, wa-webhook,
# wa-status-ingest), INTS Ctrl-Cs (SIGINT to the
# pipeline's process group), RESTARTS Postgres restarts and one API
# outage of OUTAGE seconds (the fake's --outage-file; it also lasts until
# the fake has answered 6 requests 503) strike one after another, each
# once the fake has accepted a random number of messages: progress, never
# a clock, chooses the moment.
#
# Checked (TAP on standard output): every row settled, none sending; every
# wamid recorded is one the fake gave; every message the fake took is
# recorded; only a kill -9 of wa-send or wa-record leaves a message the
# fake took sending; a recipient given two messages is one of those,
# and there are at most (J + BATCH) per such kill (calls in flight plus a
# batch of results not committed); every stage exits with a code its page
# gives. SEED (printed) replays the faults: which, in what order, at what
# progress. J (32) is wa-send -j, BATCH (50) wa-record -n, RATE (300) the
# messages a second wa-throttle lets through.
ROWS=${ROWS:-20000}
KILLS=${KILLS:-50}
INTS=${INTS:-10}
RESTARTS=${RESTARTS:-3}
OUTAGE=${OUTAGE:-30}
RATE=${RATE:-300}
J=${J:-32}
BATCH=${BATCH:-50}
SEED=${SEED:-$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')}
T_TIMEOUT=${T_TIMEOUT:-7200}
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../tests/lib.sh"
# shellcheck source=tests/fake.sh
. "$(dirname "$0")/../tests/fake.sh"

note "chaos: SEED=$SEED ROWS=$ROWS KILLS=$KILLS INTS=$INTS" \
    "RESTARTS=$RESTARTS OUTAGE=$OUTAGE (the same SEED replays the faults)"
t0=$(date +%s)
PG_OPTIONS="-c synchronous_commit=on"
pg_start
E=$T/err
mkdir -p "$E" "$T/svc" "$T/runs"
WA_APP_SECRET=chaos-secret-$$
export WA_APP_SECRET

# A failed run must not leave its processes behind.
chaos_cleanup() {
	touch "$T/done" "$T/svc/stop"
	for f in "$T"/svc/*.pid; do
		[ -e "$f" ] && kill -TERM "$(cat "$f")" 2>/dev/null
	done
	[ -n "${group:-}" ] && env kill -s KILL -- "-$group" 2>/dev/null
	[ -n "${monkey:-}" ] && kill "$monkey" 2>/dev/null
	t_cleanup
}
trap chaos_cleanup EXIT

# live NAME FILE: the process whose pid FILE holds runs program NAME (past
# its wrapper's exec, not a zombie); its pid in $pid.
live() {
	pid=$(cat "$2" 2>/dev/null) && [ -n "$pid" ] &&
	    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$(printf %.15s "$1")" ] &&
	    [ "$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null)" != Z ]
}

# m_wait SECONDS COMMAND...: wait_for, that also gives up once the
# campaign is done.
m_wait() {
	m_end=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ -e "$T/done" ] && return 1
		[ "$(date +%s)" -gt "$m_end" ] && return 1
		sleep 0.05
	done
}

# accepted: messages the fake has accepted so far, answered or not.
accepted() {
	grep -c '"wamid":"wamid' "$FAKE_LOG"
}
# downs: requests the fake answered from its --outage-file.
downs() {
	grep -c '"outcome":"down"' "$FAKE_LOG"
}
# callbacks: "id:attempt" of every send the fake accepted, sorted.
callbacks() {
	jq -r 'select(.wamid != null) | .callback // empty' "$FAKE_LOG" |
	    awk -F: '{ print $(NF - 1) ":" $NF }' | sort -u
}
# sqlw STATEMENT: sql, waiting for Postgres if a restart is under way.
sqlw() {
	wait_for 600 sql_to "$1" "$T/sqlw" || bail "no Postgres for: $1"
	cat "$T/sqlw"
}
sql_to() {
	sql "$1" >"$2" 2>/dev/null
}
rows() {
	sqlw "select count(*) from campaign_recipients where campaign_id = $c
	    and status = '$1'"
}
completed() {
	[ "$(sql "select state from campaigns where id = $c" 2>/dev/null)" = \
	    completed ]
}

# svc NAME COMMAND...: runs COMMAND again whenever it ends, as a service
# manager would, until $T/svc/stop exists; its pid in $T/svc/NAME.pid,
# each exit status a line "NAME STATUS" in $T/svc/rc.
svc() {
	s_name=$1
	shift
	while [ ! -e "$T/svc/stop" ]; do
		"$@" 2>>"$E/$s_name" &
		echo $! >"$T/svc/$s_name.pid"
		wait $!
		echo "$s_name $?" >>"$T/svc/rc"
		# A service manager's restart delay, not a synchronisation.
		[ -e "$T/svc/stop" ] || sleep 0.1
	done
}
# wa-webhook keeps the port it was first given, so that the fake finds it
# again after a kill.
bg svc webhook sh -c 'p=0; [ -s "$1" ] && p=$(cat "$1")
exec wa-webhook --listen "127.0.0.1:$p" --port-file "$1" --spool "$2"' \
    sh "$T/hook.port" "$T/spool" 2>>"$E/svc"
wait_for 30 test -s "$T/hook.port" || bail "wa-webhook did not start"
bg svc ingest wa-status-ingest --follow "$T/spool" 2>>"$E/svc"

fake_start --rate 0 --latency-ms 20 --jitter-ms 15 --seed "$SEED" \
    --script 07=lost --script 57=lost \
    --error-rate 131000:0.04 --error-rate 131026:0.01 --drop-rate 0.005 \
    --outage-file "$T/outage" \
    --webhook-url "http://127.0.0.1:$(cat "$T/hook.port")/" \
    --webhook-delay-ms 30 --webhook-retry-ms 100 \
    --dup-rate 0.1 --reorder-rate 0.2 --fail-rate 0.02 --read-rate 0.5
c=$(campaign "$ROWS")

# The pipeline, in a process group of its own as a shell's job is: each
# stage's pid in RUNDIR/NAME.pid, its exit status a line "NAME STATUS"
# in RUNDIR/rc, its stderr in $E/NAME.
cat >"$T/pipe.sh" <<EOF
st() {
	n=\$1
	shift
	sh -c 'echo \$\$ >"\$0"; exec "\$@"' "\$R/\$n.pid" "\$@" 2>>"$E/\$n"
	echo "\$n \$?" >>"\$R/rc"
}
R=\$2
st claim wa-claim -c "\$1" |
    st throttle wa-throttle -r $RATE -b 10 |
    st send wa-send -j $J --timeout-ms 5000 |
    st record wa-record -n $BATCH --backoff-base 100 --backoff-cap 400 \
    >/dev/null
EOF

# The faults, in a random order, each at a random count of messages
# accepted: one line "COUNT KIND STAGE".
awk -v seed="$SEED" -v k="$KILLS" -v i="$INTS" -v r="$RESTARTS" \
    -v rows="$ROWS" 'BEGIN {
	srand(seed)
	split("claim throttle send record webhook ingest", stage, " ")
	for (j = 0; j < k; j++)
		f[n++] = "kill " stage[int(rand() * 6) + 1]
	for (j = 0; j < i; j++)
		f[n++] = "int -"
	for (j = 0; j < r; j++)
		f[n++] = "pg -"
	f[n++] = "outage -"
	for (j = n - 1; j > 0; j--) {
		m = int(rand() * (j + 1))
		x = f[j]; f[j] = f[m]; f[m] = x
	}
	for (j = 0; j < n; j++)
		at[j] = int(rows * (0.03 + 0.67 * rand()))
	for (j = 1; j < n; j++)
		for (m = j; m > 0 && at[m - 1] > at[m]; m--) {
			x = at[m]; at[m] = at[m - 1]; at[m - 1] = x
		}
	for (j = 0; j < n; j++)
		print at[j], f[j]
}' >"$T/schedule"

# The current run's directory (runs/N), or nothing between runs.
current() {
	d=$(readlink "$T/run") && run=${d#runs/}
}
# stage_live STAGE: STAGE of the current run (or the service) is up.
stage_live() {
	case $1 in
	webhook) live wa-webhook "$T/svc/webhook.pid" ;;
	ingest) live wa-status-ingest "$T/svc/ingest.pid" ;;
	*) current && live "wa-$1" "$T/$d/$1.pid" ;;
	esac
}
# all_catch: every stage of the current run is up and catches SIGINT.
all_catch() {
	current || return 1
	for s in claim throttle send record; do
		live "wa-$s" "$T/$d/$s.pid" && catches "$pid" INT || return 1
	done
	group=$(cat "$T/$d/group")
}
# strike STAGE: kill -9 to STAGE, once it is up.
strike() {
	stage_live "$1" && kill -9 "$pid" 2>/dev/null
}
# interrupt: Ctrl-C to the current run, once every stage catches it.
interrupt() {
	all_catch && kill -INT "-$group" 2>/dev/null
}
waits() {
	cat "$E"/* | grep -c 'waiting up to'
}
more_waits() {
	[ "$(waits)" -gt "$1" ]
}
progress() {
	[ "$(accepted)" -ge "$1" ]
}
outage_over() {
	[ $(($(date +%s) - $1)) -ge "$OUTAGE" ] && [ "$(downs)" -ge $(($2 + 6)) ]
}
# fault KIND STAGE: strikes; a line "RUN KIND STAGE ACCEPTED" in
# $T/faults once it has.
fault() {
	run=-
	case $1 in
	kill)
		m_wait 3600 strike "$2" || return 1
		current
		;;
	int)
		m_wait 3600 interrupt || return 1
		;;
	pg)
		current
		n0=$(waits)
		pg_stop
		m_wait 60 more_waits "$n0"
		pg_resume
		;;
	outage)
		current
		echo 503 >"$T/outage.new" && mv "$T/outage.new" "$T/outage"
		s=$(date +%s)
		n0=$(downs)
		m_wait $((OUTAGE + 600)) outage_over "$s" "$n0"
		rm -f "$T/outage"
		echo "$(($(date +%s) - s)) $(($(downs) - n0))" >"$T/outage.took"
		;;
	esac
	echo "$run $1 $2 $(accepted)" >>"$T/faults"
}
monkey() {
	last=0
	while read -r at kind what; do
		# Behind (a long fault let the campaign run on): strike now,
		# not at a count the campaign may never reach.
		[ "$at" -gt "$last" ] || at=$last
		m_wait 3600 progress "$at" || break
		fault "$kind" "$what" || break
		last=$(accepted)
	done <"$T/schedule"
	touch "$T/monkey.done"
}
: >"$T/faults"
: >"$T/waves"
monkey &
monkey=$!

# gone RUNDIR: no stage of that run is left.
gone() {
	for s in claim throttle send record; do
		live "wa-$s" "$1/$s.pid" && return 1
	done
	return 0
}
# webhooks_in: no row is unknown whose send the fake accepted ($T/acc):
# its status webhooks have been applied.
webhooks_in() {
	sql "select id || ':' || attempt from campaign_recipients
	    where campaign_id = $c and status = 'unknown'" >"$T/unk" \
	    2>/dev/null || return 1
	[ -z "$(sort "$T/unk" | comm -12 - "$T/acc")" ]
}

# finished: the campaign is completed and every fault has struck. Where
# faults are left (a loaded machine ran the campaign faster than they
# could strike), 100 more people join it, as late recipients would, so
# that the faults find a pipeline to strike.
finished() {
	completed || return 1
	[ -e "$T/monkey.done" ] && return 0
	w=$(sqlw "select count(*) from campaign_recipients
	    where campaign_id = $c")
	wait_for 600 recipients "$c" $((w + 1)) $((w + 100)) ||
	    bail "no Postgres to add recipients"
	sqlw "update campaigns set state = 'running', finished_at = null
	    where id = $c" >/dev/null
	echo "$w" >>"$T/waves"
	return 1
}

# The operator: run the pipeline; wa-reconcile; again until completed.
# After each run, runs/N/sending holds the rows it left sending and
# runs/N/lost those of them whose send the fake had accepted.
n=0
: >"$T/hook.timeouts"
while [ "$n" -lt $((KILLS + INTS + RESTARTS + 100)) ]; do
	n=$((n + 1))
	mkdir "$T/runs/$n"
	setsid sh "$T/pipe.sh" "$c" "$T/runs/$n" 2>>"$E/pipe" &
	group=$!
	echo "$group" >"$T/runs/$n/group"
	ln -s "runs/$n" "$T/run"
	wait "$group"
	rm -f "$T/run"
	wait_for 120 gone "$T/runs/$n" || note "run $n: a stage would not end"
	group=
	sqlw "select id || ':' || attempt from campaign_recipients
	    where campaign_id = $c and status = 'sending'" |
	    sort >"$T/runs/$n/sending"
	callbacks >"$T/acc"
	comm -12 "$T/acc" "$T/runs/$n/sending" >"$T/runs/$n/lost"
	wa-reconcile -c "$c" --stale-after 0 --unknown-after 86400 \
	    >>"$T/reconcile.out" 2>>"$E/reconcile"
	finished && break
	wait_for 600 webhooks_in || echo "$n" >>"$T/hook.timeouts"
	wa-reconcile -c "$c" --stale-after 0 --unknown-after 0 \
	    >>"$T/reconcile.out" 2>>"$E/reconcile"
	finished && break
done
touch "$T/done"
wait "$monkey"
took=$(($(date +%s) - t0))

# What the faults did. For each run, runs/N/sending holds the calls it
# left in flight (rows sending at its end) and runs/N/lost those of them
# the fake had accepted (and whose webhook had not come yet: only these
# may be sent again); a run with a kill -9 of wa-send or wa-record ("sr")
# may leave some, no other may.
count() {
	awk -v k="$1" -v s="${2:-}" '$2 == k && (s == "" || $3 == s)' \
	    "$T/faults" | wc -l | tr -d ' '
}
is "$(count kill) $(count int) $(count pg) $(count outage)" \
    "$KILLS $INTS $RESTARTS 1" \
    "every fault struck: kill -9, Ctrl-C, Postgres restart, outage"
awk '$2 == "kill" && ($3 == "send" || $3 == "record") { print $1 }' \
    "$T/faults" | sort -u >"$T/sr.runs"
: >"$T/inflight"
: >"$T/otherlost"
: >"$T/perkill"
for rd in "$T"/runs/*; do
	r=${rd##*/}
	if grep -qx "$r" "$T/sr.runs"; then
		cat "$rd/lost" >>"$T/inflight"
		echo "$(wc -l <"$rd/sending")/$(wc -l <"$rd/lost")" >>"$T/perkill"
	else
		sed "s/^/run $r: /" "$rd/lost" >>"$T/otherlost"
	fi
done

# The invariants.
is "$(sql "select state from campaigns where id = $c")" completed \
    "the campaign is completed after $n runs"
is "$(sql "select count(*) from campaign_recipients where campaign_id = $c
    and status_rank(status) = 0")" 0 "every row is settled"
is "$(rows sending)" 0 "no row is left sending"
is "$(sql "select count(*) from campaign_recipients where campaign_id = $c
    and status in ('sent', 'delivered', 'read', 'failed')")" \
    "$(sql "select count(*) from campaign_recipients where campaign_id = $c")" \
    "every recipient is accounted for"
is "$(sql "select count(*) from campaign_recipients where campaign_id = $c
    and status = 'failed' and (error_code is null
    or error_class in ('outage', 'unsent'))")" 0 \
    "a row failed only for an error the fake gave it, never for a stop"
jq -r 'select(.wamid != null) | .wamid' "$FAKE_LOG" | sort -u \
    >"$T/fake.wamids"
sql "select wamid from campaign_recipients where campaign_id = $c
    and wamid is not null" | sort >"$T/db.wamids"
is "$(comm -13 "$T/fake.wamids" "$T/db.wamids" | head -5)" "" \
    "every wamid recorded is one the fake gave"
# The row id: the callback data's field before the attempt (wapipe:TAG:
# ID:ATTEMPT, or wapipe:ID:ATTEMPT).
jq -r 'select(.wamid != null) | .callback' "$FAKE_LOG" |
    awk -F: '{ print $(NF - 1) }' | sort -u >"$T/fake.ids"
sql "select id from campaign_recipients where campaign_id = $c
    and wamid is not null" | sort >"$T/db.ids"
is "$(comm -23 "$T/fake.ids" "$T/db.ids" | head -5)" "" \
    "every recipient the fake accepted has a wamid recorded"
is "$(sql "select count(*) from campaign_recipients where campaign_id = $c
    and status in ('sent', 'delivered', 'read') and wamid is null")" 0 \
    "every row sent, delivered or read has its wamid"
what="only a kill -9 of wa-send or wa-record"
is "$(head -5 "$T/otherlost")" "" "$what left a message the fake took sending"

# Recipients the fake accepted twice, by row id, and the bound.
jq -r 'select(.wamid != null) | .to' "$FAKE_LOG" | sort | uniq -d \
    >"$T/twice"
dups=$(wc -l <"$T/twice" | tr -d ' ')
jq -r 'select(.wamid != null) | [.to, .callback] | @tsv' "$FAKE_LOG" |
    sort | join -t "$(printf '\t')" "$T/twice" - | cut -f2 |
    awk -F: '{ print $(NF - 1) }' | sort -u >"$T/twice.ids"
sed 's/:.*//' "$T/inflight" | sort -u >"$T/inflight.ids"
srkills=$(($(count kill send) + $(count kill record)))
bound=$((srkills * (J + BATCH)))
flight=$(wc -l <"$T/inflight.ids" | tr -d ' ')
what="a call in flight at a kill -9 of wa-send or wa-record"
is "$(comm -23 "$T/twice.ids" "$T/inflight.ids" | head -5)" "" \
    "a recipient messaged twice had $what"
what="$srkills kills of wa-send or wa-record x (-j $J + -n $BATCH)"
ok "duplicates ($dups) <= $what = $bound" test "$dups" -le "$bound"

is "$(cat "$T/hook.timeouts")" "" \
    "the webhooks of every message the fake took came in"
is "$(ls "$WA_STATE_DIR/results" 2>/dev/null | wc -l | tr -d ' ')" 0 \
    "no result is left on disk"

# Every stage's exit: 0, or what its page gives for what happened to it
# (137: the kill -9; 74: its neighbour's kill -9; 75: wa-claim stopped or
# leaving unknown rows, wa-record stopped by a second Ctrl-C (two Ctrl-C
# faults may strike one run), its results kept on disk; 130: wa-throttle
# and wa-send killed by the second of those Ctrl-Cs, as their pages say
# they die by it; 69: wa-send ending while the outage lasts).
cat "$T"/runs/*/rc | sort | uniq -c | awk '{ print $2 " " $3 " x" $1 }' \
    >"$T/rcs"
ok_rc='^(claim (0|74|75|137)|throttle (0|74|130|137)|'
ok_rc="$ok_rc"'send (0|69|74|130|137)|'
ok_rc="$ok_rc"'record (0|75|137)) '
is "$(grep -Ev "$ok_rc" "$T/rcs")" "" \
    "every stage's exit status is one its page gives"
is "$(grep -l -e 'Sanitizer' -e 'runtime error' "$E"/* 2>/dev/null)" "" \
    "no sanitizer report"

touch "$T/svc/stop"
for s in webhook ingest; do
	kill -TERM "$(cat "$T/svc/$s.pid")"
done
svc_ended() {
	[ "$(grep -Ec '^(webhook|ingest) ' "$T/svc/rc")" -ge \
	    $(($(count kill webhook) + $(count kill ingest) + 2)) ]
}
wait_for 60 svc_ended
# (wa-status-ingest 75: started again before Postgres saw its killed
# predecessor go, it found the spool still followed.)
is "$(awk '$2 != 0 && $2 != 137 && !($1 == "ingest" && $2 == 75)' \
    "$T/svc/rc")" "" "wa-webhook and wa-status-ingest exit 0 (137: killed)"
fake_stop >/dev/null

note "exit statuses: $(tr '\n' ' ' <"$T/rcs")"
note "$(cat "$E"/* | sed 's/[0-9][0-9]*/N/g' | sort | uniq -c | sort -rn |
    head -25)"
read -r osecs odowns <"$T/outage.took"
note "rows $ROWS (100 more at: $(tr '\n' ' ' <"$T/waves")), $n runs;" \
    "kill -9: $(count kill) (claim $(count kill claim)," \
    "throttle $(count kill throttle), send $(count kill send)," \
    "record $(count kill record), webhook $(count kill webhook)," \
    "ingest $(count kill ingest)); Ctrl-C $(count int);" \
    "Postgres restarts $(count pg); outage ${osecs} s" \
    "($odowns requests answered 503)"
note "statuses: $(sql "select status || ' ' || n from (select status,
    count(*) n from campaign_recipients where campaign_id = $c
    group by 1) s order by 1" | tr '\n' ' ')"
note "failed: $(sql "select coalesce(error_code::text, '-') || ' ' || n
    from (select error_code, count(*) n from campaign_recipients
    where campaign_id = $c and status = 'failed' group by 1) s
    order by 1" | tr '\n' ' ')"
note "runs with a kill -9 of wa-send or wa-record: rows left sending /" \
    "of them accepted by the fake: $(tr '\n' ' ' <"$T/perkill")"
note "duplicates $dups; bound $bound; accepted and left sending at those" \
    "kills $flight; time ${took} s; SEED=$SEED"
done_testing
