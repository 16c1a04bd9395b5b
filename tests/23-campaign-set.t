#!/bin/sh
# wa-campaign set: each setting of a draft or paused campaign, what it
# says, bad values, refused (65) while the campaign runs or after it
# ended; and list --json.
. "$(dirname "$0")/lib.sh"
pg_start

c=$(wa-campaign create --name "set test" --phone-number-id 1 \
    --template reminder)
settings() {
	sql "select template_name, template_lang, max_attempts, on_unknown,
	    coalesce(breaker::text, '-') from campaigns where id = $c"
}
is "$(settings)" "reminder|en_US|10|resend|-" "the defaults"
wa-campaign set --template reminder_v2 --language pt_BR --max-attempts 3 \
    --on-unknown fail --breaker 20 "$c" >"$T/out" 2>"$T/err"
is "$?" 0 "set on a draft exits 0"
is "$(settings)" "reminder_v2|pt_BR|3|fail|20" "every setting changed"
is "$(cat "$T/out")" "" "nothing on stdout"
is "$(cat "$T/err")" "wa-campaign: campaign $c: template reminder -> reminder_v2
wa-campaign: campaign $c: language en_US -> pt_BR
wa-campaign: campaign $c: max attempts 10 -> 3
wa-campaign: campaign $c: on_unknown resend -> fail
wa-campaign: campaign $c: breaker default -> 20" "one line per change"
wa-campaign set --language pt_BR "$c" 2>"$T/err"
is "$(cat "$T/err")" "" "a value that does not change says nothing"
is "$(wa-campaign status --json "$c" | jq -c '[.template, .language,
    .max_attempts, .on_unknown, .breaker]')" \
    '["reminder_v2","pt_BR",3,"fail",20]' "status shows them"

wa-campaign start --no-check "$c"
exits 65 "refused while it runs" wa-campaign set --template x "$c" \
    2>"$T/err"
like "$(cat "$T/err")" "campaign $c is running: pause it before changing it" \
    "says to pause it"
is "$(settings)" "reminder_v2|pt_BR|3|fail|20" "nothing changed"
wa-campaign pause --reason "halt: 132001 Template name does not exist" "$c"
exits 0 "a paused one (a halt) can be fixed" wa-campaign set \
    --template reminder_v3 --breaker default "$c" 2>/dev/null
is "$(settings)" "reminder_v3|pt_BR|3|fail|-" \
    "the template fixed, the breaker back to the default"
wa-campaign resume "$c"
is "$(sql "select state from campaigns where id = $c")" running \
    "and resumed"

for bad in "--template Bad-Name" "--template ''" "--language e" \
    "--language en-US" "--max-attempts 0" "--max-attempts 1001" \
    "--on-unknown maybe" "--breaker 0" "--breaker x"; do
	wa-campaign pause "$c" 2>/dev/null
	eval "exits 64 \"a bad value: $bad\" wa-campaign set $bad \"$c\"" \
	    2>"$T/err"
	ok "... says what is wrong ($(head -c 60 "$T/err"))" test -s "$T/err"
done
exits 64 "nothing to set" wa-campaign set "$c" 2>"$T/err"
like "$(cat "$T/err")" "set needs one or more of" "says what it takes"
exits 64 "set takes no --status" wa-campaign set --status x "$c" 2>/dev/null
exits 64 "an unknown campaign" wa-campaign set --max-attempts 2 999999 \
    2>"$T/err"
like "$(cat "$T/err")" "no campaign 999999" "says so"
wa-campaign cancel "$c"
exits 65 "refused once cancelled" wa-campaign set --max-attempts 2 "$c" \
    2>"$T/err"
like "$(cat "$T/err")" "is cancelled: only a draft or paused one" "says so"

# list --json: one object per campaign, with its counts and next retry.
d=$(campaign 4)
sql "update campaign_recipients set status = 'failed' where phone =
    '+15550000001' and campaign_id = $d;
    update campaign_recipients set status = 'sent' where phone =
    '+15550000002' and campaign_id = $d;
    update campaign_recipients set next_attempt_at = now() + interval '1 h'
    where phone = '+15550000003' and campaign_id = $d"
wa-campaign list --json >"$T/list" 2>"$T/err"
is "$?" 0 "list --json exits 0"
is "$(wc -l <"$T/list" | tr -d ' ')" 2 "one line per campaign"
is "$(jq -c '[.id, .state, .recipients, .to_send, .sent, .failed,
    .pending_later]' "$T/list" | tr '\n' ' ')" \
    "[$c,\"cancelled\",0,0,0,0,0] [$d,\"running\",4,2,1,1,1] " \
    "ids, states and counts"
is "$(jq -c 'keys_unsorted' "$T/list" | head -1)" \
    '["id","name","state","state_reason","phone_number_id","template","language","max_attempts","on_unknown","breaker","created_at","start_at","started_at","finished_at","recipients","to_send","sent","failed","pending_later","next_retry_at"]' \
    "the documented keys"
like "$(jq -r "select(.id == $d) | .next_retry_at" "$T/list")" \
    '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$' \
    "when the next retry is due"
like "$(wa-campaign list)" "^ +ID +STATE" "list without --json: the table"

done_testing
