#!/bin/sh
# What Meta says of the business while a campaign runs, by webhook
# (bodies shaped as the webhooks reference pages give them: fields
# message_template_status_update, template_category_update,
# account_update, business_capability_update), acts on it through
# wa-status-ingest: the campaign's template paused or disabled pauses
# the campaign with the reason (its language as Meta writes it, en-US,
# matching en_US), its return says it can resume; an account disabled
# or restricted pauses the account's campaigns; a new limit sets the
# portfolio's. Each change counts once however often Meta delivers it;
# what stops Postgres stops nothing for good. The pages each body follows
# (Meta's webhooks reference, developers.facebook.com/documentation/
# business-messaging/whatsapp/webhooks/reference/...):
# message_template_status_update (event, message_template_name,
# message_template_language "en-US", reason, other_info.title),
# template_category_update (previous_category, new_category),
# account_update (event DISABLED_UPDATE with ban_info.waba_ban_state;
# ACCOUNT_RESTRICTION with restriction_info[].restriction_type),
# business_capability_update (max_daily_conversations_per_business);
# facts and dates in ../shared/research/cloud-api-2026.md §2.3, §4, §8.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"
pg_start
W=102290129340398
N=106540352242922

# change FIELD VALUE: a webhook body of one change of the account W.
change() {
	printf '{"object":"whatsapp_business_account","entry":[{"id":"%s","time":1764921800,"changes":[{"value":%s,"field":"%s"}]}]}\n' \
	    "$W" "$2" "$1"
}
# template EVENT [TITLE] [NAME] [LANGUAGE]: a status update of a template.
template() {
	change message_template_status_update "$(printf '{"event":"%s","message_template_id":594425479261596,"message_template_name":"%s","message_template_language":"%s","reason":"NONE"%s}' \
	    "$1" "${3:-reminder}" "${4:-en-US}" \
	    "${2:+,\"other_info\":{\"title\":\"$2\",\"description\":\"d\"\}}")"
}
ingest() {
	wa-status-ingest 2>>"$T/ingest.err"
}
mk() {
	wa-campaign create --name "$1" --phone-number-id $N --template "$2" \
	    --language "$3" ${4:+--waba-id "$4"} | head -1
}
state() {
	sql "select state from campaigns where id = $1"
}
reason() {
	sql "select state_reason from campaigns where id = $1"
}

a=$(mk a reminder en_US)
b=$(mk b reminder pt_BR)
c=$(mk c other en_US)
d=$(mk d reminder en_US)
e=$(mk e reminder en_US 999999)
sql "insert into campaign_recipients (campaign_id, phone)
    select id, '+15550000001' from campaigns" >/dev/null
for x in $a $b $c $e; do
	wa-campaign start --no-check "$x" >/dev/null 2>&1
done

# (1) The template paused (the template-pacing page's first pause).
template PAUSED FIRST_PAUSE | ingest
is "$?" 0 "a template's status update is applied"
is "$(state "$a")" paused "the campaign of that template and language is paused"
is "$(reason "$a")" "Meta: template reminder (en_US) PAUSED, FIRST_PAUSE" \
    "... saying why"
like "$(cat "$T/ingest.err")" "campaign $a paused, as Meta's webhook says" \
    "wa-status-ingest says it"
is "$(state "$b")|$(state "$c")|$(state "$d")|$(state "$e")" \
    "running|running|draft|running" \
    "another language, another template, a draft, another account: untouched"
wa-claim -c "$a" --once >"$T/claimed" 2>/dev/null
is "$(wc -l <"$T/claimed" | tr -d ' ')" 0 "a paused campaign claims nothing"
template PAUSED FIRST_PAUSE | ingest
is "$(sql "select count(*) from account_events")" 1 \
    "the same change delivered again is kept once"

# (2) Back again: the pause says it can resume; the operator resumes.
template APPROVED UNPAUSE | ingest
is "$(state "$a")" paused "the template back: still paused (the operator decides)"
is "$(reason "$a")" \
    "Meta: template reminder (en_US) PAUSED, FIRST_PAUSE; then APPROVED UNPAUSE: it can be resumed" \
    "... saying it can be resumed"
wa-campaign resume "$a" >/dev/null 2>&1
is "$(state "$a")" running "resume goes on"

# (3) Disabled in a batch with its reinstatement before it: the latest
# counts (Meta's order is the timestamps': here, the body's).
template DISABLED | ingest
is "$(state "$a")" paused "disabled: paused"
template REINSTATED | ingest
like "$(reason "$a")" "; then REINSTATED: it can be resumed$" "reinstated: can resume"

# (4) A category change is kept and shown.
change template_category_update '{"message_template_id":594425479261596,"message_template_name":"reminder","message_template_language":"en_US","previous_category":"UTILITY","new_category":"MARKETING"}' |
    ingest
like "$(wa-campaign status "$a")" "template_category_update MARKETING" \
    "status shows the template's new category (the price changes)"
is "$(wa-campaign status --json "$a" | jq -r '.meta_events[-1].event')" \
    MARKETING "... and --json"

# (5) The account disabled: every running campaign of it is paused.
wa-campaign resume "$a" >/dev/null 2>&1
change account_update '{"phone_number":"15550783881","event":"DISABLED_UPDATE","ban_info":{"waba_ban_state":"DISABLE","waba_ban_date":"2026-12-05"}}' |
    ingest
is "$(state "$a")|$(state "$b")|$(state "$c")|$(state "$e")" \
    "paused|paused|paused|running" \
    "an account disabled pauses its campaigns (not another account's)"
is "$(reason "$c")" "Meta: account $W DISABLED_UPDATE DISABLE" "... saying why"
for x in $a $b $c; do
	wa-campaign resume "$x" >/dev/null 2>&1
done
change account_update '{"event":"ACCOUNT_RESTRICTION","restriction_info":[{"restriction_type":"RESTRICTED_ADD_PHONE_NUMBER_ACTION","expiration":"2026-12-06T00:00:00+0000"}]}' |
    ingest
is "$(state "$c")" running "a restriction that is not on messaging: nothing paused"
change account_update '{"event":"ACCOUNT_RESTRICTION","restriction_info":[{"restriction_type":"RESTRICTED_BIZ_INITIATED_MESSAGING","expiration":"2026-12-06T00:00:00+0000"}]}' |
    ingest
is "$(state "$c")" paused "one on business-initiated messaging: paused"

# (6) The limit: Meta's docs give it as an integer, a TIER_ string, or
# UNLIMITED; what is none of them changes nothing.
cap() {
	change business_capability_update "{\"max_daily_conversations_per_business\":$1,\"max_phone_numbers_per_business\":2}" |
	    ingest
	wa-campaign limit $N
}
like "$(cap 2000)" "^$N: 2000 people per 24 h" "an integer: the portfolio's limit"
like "$(cap '"TIER_10K"')" "^$N: 10000 people per 24 h" "a tier"
is "$(cap '"UNLIMITED"')" "$N: unlimited" "UNLIMITED"
cap 250 >/dev/null
like "$(cap '"TIER_NOT_SET"')" "^$N: 250 people" "a value that is no limit changes nothing"
like "$(cap -1)" "unlimited" "-1: unlimited"

# (7) Bad input: a value that is not an object, an event for nobody.
printf '{"object":"whatsapp_business_account","entry":[{"id":"%s","changes":[{"value":"paused","field":"message_template_status_update"}]}]}\n' "$W" |
    ingest
is "$?" 0 "a change whose value is no object is skipped, no error"
template PAUSED FIRST_PAUSE nosuch | ingest
is "$?" 0 "a template no campaign sends: kept, nothing paused"

# (8) Postgres away: the change waits for it, and is applied once.
wa-campaign resume "$a" >/dev/null 2>&1
is "$(state "$a")" running "(running again)"
# (The tests' Postgres commits asynchronously: flush before the stop.)
sql checkpoint >/dev/null
pg_stop
template PAUSED SECOND_PAUSE >"$T/body"
# (An asynchronous command's stdin is /dev/null but for its own.)
bg sh -c 'exec wa-status-ingest <"$1"' _ "$T/body" 2>"$T/wait.err"
waiter=$!
ok "wa-status-ingest waits for Postgres, saying so" wait_for 30 test -s "$T/wait.err"
pg_resume
wait "$waiter"
is "$?" 0 "... and applies the change once it is back"
is "$(state "$a")|$(sql "select count(*) from account_events
    where detail #>> '{other_info,title}' = 'SECOND_PAUSE'")" "paused|1" \
    "... once"

# (9) Rehearsed: wa-fake-api --pause-template-after pauses the template
# mid-campaign as Meta does: its webhook, then 132015 for every send.
sql "update campaigns set state = 'cancelled'" >/dev/null
WA_APP_SECRET=s3cret-$$
export WA_APP_SECRET
mkdir "$T/recv"
bg perl "$TOP/tests/hookrecv.pl" "$T/recv.port" "$T/recv"
wait_for 30 test -s "$T/recv.port" || bail "no receiver"
fake_start --rate 0 --pause-template-after 30 --waba-id $W \
    --webhook-url "http://127.0.0.1:$(cat "$T/recv.port")/" \
    --webhook-delay-ms 5 --read-rate 0
p=$(mk p reminder en_US)
q=$(mk q reminder en_US)
sql "insert into campaign_recipients (campaign_id, phone)
    select $p, '+1555' || lpad(g::text, 7, '0') from generate_series(1, 100) g;
    insert into campaign_recipients (campaign_id, phone)
    values ($q, '+15559990001')" >/dev/null
wa-campaign start --no-check "$p" >/dev/null 2>&1
wa-campaign start --no-check "$q" >/dev/null 2>&1
wa-claim -c "$p" --once -n 100 2>/dev/null | wa-send 2>"$T/send.err" |
    wa-record >/dev/null 2>&1
is "$(sql "select count(*) from campaign_recipients where campaign_id = $p
    and wamid is not null")" 30 "the fake accepts 30 sends, then pauses the template"
is "$(jq -c 'select(.code == 132015)' "$FAKE_LOG" | wc -l | tr -d ' ')" 70 \
    "the 70 sends after it are answered 132015"
is "$(sql "select count(*) from campaign_recipients where campaign_id = $p
    and status in ('pending', 'sent', 'delivered', 'read')")" 100 \
    "no row lost or failed for good by the pause"
paused_hook() {
	cat "$T"/recv/*.body 2>/dev/null |
	    grep -q '"field":"message_template_status_update"'
}
ok "the fake sends the template's PAUSED webhook" wait_for 30 paused_hook
is "$(cat "$T"/recv/*.body | jq -c '.entry[] | .id as $id | .changes[] |
    select(.field == "message_template_status_update") | [$id,
    .value.event, .value.message_template_language]')" \
    "[\"$W\",\"PAUSED\",\"en-US\"]" "... of the account, PAUSED, en-US"
for f in "$T"/recv/*.body; do
	tr -d '\n' <"$f"
	echo
done | ingest
is "$(state "$q")|$(reason "$q")" \
    "paused|Meta: template reminder (en_US) PAUSED, FIRST_PAUSE" \
    "the webhook pauses the template's other campaign before any send of it fails"
fake_stop
done_testing
