#!/bin/sh
# wa-campaign: usage, create, and the moves between states with their
# exit codes (64 unknown campaign, 65 a move the state does not allow).
. "$(dirname "$0")/lib.sh"
pg_start

exits 0 "--help" wa-campaign --help >"$T/out"
like "$(cat "$T/out")" "requeue \[-n \| --dry-run\] " \
    "--help prints the usage on stdout"
exits 0 "--version" wa-campaign --version >/dev/null
exits 64 "no command" wa-campaign 2>"$T/err"
is "$(head -1 "$T/err")" "wa-campaign: no command" "says so, then the usage"
exits 64 "an unknown command" wa-campaign frobnicate 2>"$T/err"
is "$(head -1 "$T/err")" "wa-campaign: no command 'frobnicate'" "says which"
exits 64 "a missing id" wa-campaign start 2>"$T/err"
is "$(cat "$T/err")" "wa-campaign: start: the campaign id is missing
usage: wa-campaign [-d conninfo] start [--no-check] [--at time] id" \
    "says so, with that command's usage alone"
exits 64 "an operand too many" wa-campaign status 5 6 2>"$T/err"
is "$(head -1 "$T/err")" "wa-campaign: status: one operand too many: '6'" \
    "says which"
exits 64 "create with an operand" wa-campaign create --name a \
    --phone-number-id 1 --template t extra 2>"$T/err"
is "$(head -1 "$T/err")" "wa-campaign: create: one operand too many: 'extra'" \
    "says which"
exits 64 "an empty --name" wa-campaign create --name '' \
    --phone-number-id 1 --template t 2>"$T/err"
like "$(cat "$T/err")" "a campaign's name" "says what a name is"
exits 64 "an id that is not a number" wa-campaign start x1 2>/dev/null
exits 64 "an option of another command" wa-campaign start --json 1 \
    2>"$T/err"
like "$(cat "$T/err")" "start takes no --json" "and says which"

# create: prints only the id, so that scripts can capture it.
c=$(wa-campaign create --name "spring sale" --phone-number-id \
    106540352242922 --template reminder 2>"$T/err")
is "$?" 0 "create exits 0"
like "$c" '^[0-9]+$' "create prints only the new id"
is "$(cat "$T/err")" "" "and nothing on stderr"
is "$(sql "select name, phone_number_id, template_name, template_lang,
    state, max_attempts, on_unknown from campaigns where id = $c")" \
    "spring sale|106540352242922|reminder|en_US|draft|10|resend" \
    "a draft with the defaults: en_US, 10 attempts, resend"
c2=$(wa-campaign create --name b --phone-number-id 1 --template t \
    --language it --max-attempts 3 --on-unknown fail)
is "$(sql "select template_lang, max_attempts, on_unknown from campaigns
    where id = $c2")" "it|3|fail" "--language, --max-attempts, --on-unknown"
exits 64 "create without --template" wa-campaign create --name a \
    --phone-number-id 1 2>/dev/null
exits 64 "a bad --on-unknown" wa-campaign create --name a \
    --phone-number-id 1 --template t --on-unknown maybe 2>/dev/null
exits 64 "a phone number id that is not digits" wa-campaign create \
    --name a --phone-number-id +1555 --template t 2>/dev/null
exits 64 "--max-attempts 0" wa-campaign create --name a \
    --phone-number-id 1 --template t --max-attempts 0 2>/dev/null
is "$(sql "select count(*) from campaigns")" 2 "bad creates create nothing"
exits 69 "no Postgres" env PGHOST=/nonexistent wa-campaign create \
    --name a --phone-number-id 1 --template t 2>/dev/null

state() {
	sql "select state || '|' || coalesce(state_reason, '') from campaigns
	    where id = $1"
}

# The moves, legal and not.
exits 65 "pause a draft" wa-campaign pause "$c" 2>"$T/err"
like "$(cat "$T/err")" "campaign $c is draft: only a running or scheduled one can be paused" \
    "says why"
exits 0 "start a draft (no API here: --no-check)" wa-campaign start --no-check "$c"
is "$(state "$c")" "running|" "start: running"
ok "start sets started_at" test "$(sql "select started_at is not null
    from campaigns where id = $c")" = t
exits 65 "start a running campaign" wa-campaign start "$c" 2>"$T/err"
like "$(cat "$T/err")" "is running: only a draft or a scheduled one can be started" "says why"
exits 0 "pause a running campaign" wa-campaign pause "$c"
is "$(state "$c")" "paused|paused by the operator" "pause: paused, a reason"
exits 75 "wa-claim stops on the paused campaign" wa-claim -c "$c" \
    2>"$T/err"
like "$(cat "$T/err")" "paused: paused by the operator" \
    "and wa-claim says why"
exits 65 "pause a paused campaign" wa-campaign pause "$c" 2>/dev/null
exits 0 "resume" wa-campaign resume "$c"
is "$(state "$c")" "running|" "resume: running, reason cleared"
exits 65 "resume a running campaign" wa-campaign resume "$c" 2>/dev/null
exits 0 "pause --reason" wa-campaign pause --reason "template under review" \
    "$c"
is "$(state "$c")" "paused|template under review" "the reason is kept"
exits 0 "resume again" wa-campaign -d "dbname=postgres" resume "$c"
started=$(sql "select started_at from campaigns where id = $c")
exits 0 "cancel a running campaign" wa-campaign cancel --reason "wrong list" \
    "$c"
is "$(state "$c")" "cancelled|wrong list" "cancel: cancelled, with the reason"
is "$(sql "select started_at from campaigns where id = $c")" "$started" \
    "resume did not move started_at"
ok "cancel sets finished_at" test "$(sql "select finished_at is not null
    from campaigns where id = $c")" = t
exits 65 "cancel a cancelled campaign" wa-campaign cancel "$c" 2>/dev/null
exits 65 "start a cancelled campaign" wa-campaign start "$c" 2>/dev/null
exits 65 "resume a cancelled campaign" wa-campaign resume "$c" 2>/dev/null
exits 0 "cancel a draft" wa-campaign cancel "$c2"
is "$(state "$c2")" "cancelled|cancelled by the operator" "a default reason"

c3=$(wa-campaign create --name c --phone-number-id 1 --template t)
sql "update campaigns set state = 'completed' where id = $c3"
exits 65 "cancel a completed campaign" wa-campaign cancel "$c3" 2>"$T/err"
like "$(cat "$T/err")" "is completed: a completed or cancelled one stays so" \
    "says why"
is "$(state "$c3")" "completed|" "and it stays completed"

exits 64 "an unknown campaign" wa-campaign start 999999 2>"$T/err"
is "$(cat "$T/err")" "wa-campaign: no campaign 999999" "says so"
exits 64 "status of an unknown campaign" wa-campaign status 999999 \
    2>/dev/null

# list: one line per campaign.
wa-campaign list >"$T/out"
is "$(wc -l <"$T/out" | tr -d ' ')" 4 "list: a header and three campaigns"
like "$(grep "^ *$c " "$T/out")" "cancelled +0 +0 +0 +0 +spring sale" \
    "list: state, counts and name"

done_testing
