#!/bin/sh
# A status moves only its own row (issue "Meet the real Cloud API"): Meta
# sends every status to every app of the account, with the sender's
# callback data. Each database has a deployment tag, made once by the
# schema; wa-claim puts it in each request and wa-send in the callback
# data, wapipe:TAG:ID:ATTEMPT. A status of another deployment, of an
# older attempt, or naming a row that holds another wamid moves nothing
# and is not kept; the old form (wapipe:ID:ATTEMPT) still works. A whole
# pipeline against wa-fake-api --foreign-rate 1 (another deployment's
# status beside each of ours) applies ours and none of theirs.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"

pg_start
tag=$(sql "select tag from wapipe_deployment")
like "$tag" '^[0-9a-z]{8}$' "the schema made a deployment tag"
psql -X -q -v ON_ERROR_STOP=1 -f "$TOP/sql/schema.sql" >/dev/null 2>&1
is "$(sql "select tag from wapipe_deployment")" "$tag" \
    "... which a second migration keeps"

c=$(campaign 7)
first=$(sql "select min(id) from campaign_recipients where campaign_id = $c")
# Rows r1 to r7: claimed once (attempt 1), no wamid yet (the answer is on
# its way, or lost); r6 and r7 on their second attempt.
sql "update campaign_recipients set status = 'sending', attempt = 1
    where campaign_id = $c;
    update campaign_recipients set attempt = 2 where id >= $first + 5" \
    >/dev/null

# The request and the callback data.
wa-claim -c "$c" --once >/dev/null 2>&1
c2=$(campaign 1)
wa-claim -c "$c2" --once 2>/dev/null >"$T/req"
is "$(jq -r .deployment "$T/req")" "$tag" "wa-claim's request names the deployment"
wa-send --dry-run <"$T/req" >"$T/dry" 2>/dev/null
is "$(jq -r '.dry_run.body.biz_opaque_callback_data // .body.biz_opaque_callback_data' "$T/dry")" \
    "wapipe:$tag:$(jq -r .id "$T/req"):1" "wa-send's callback data: wapipe:TAG:ID:ATTEMPT"
printf '{"id":1,"attempt":1,"deployment":"NOPE","phone_number_id":"106540352242922","to":"+15550000001","template":{"name":"x","language":"en_US"}}\n' |
    wa-send --dry-run >/dev/null 2>"$T/err"
is "$?" 65 "a request whose deployment is no tag: refused (65)"
like "$(cat "$T/err")" '"deployment" is not a deployment tag' "... saying so"

# body WAMID CALLBACK: a delivered status with that callback data.
body() {
	printf '{"object":"whatsapp_business_account","entry":[{"id":"1",'
	printf '"changes":[{"value":{"messaging_product":"whatsapp",'
	printf '"metadata":{"display_phone_number":"15550783881",'
	printf '"phone_number_id":"106540352242922"},"statuses":[{"id":"%s",' "$1"
	printf '"status":"delivered","timestamp":"1764921600",'
	printf '"recipient_id":"15550000001",'
	printf '"biz_opaque_callback_data":"%s"}]},' "$2"
	printf '"field":"messages"}]}]}\n'
}
# failed WAMID CALLBACK: the same, a failure (131026).
failed() {
	body "$1" "$2" | sed 's/"status":"delivered"/"status":"failed","errors":[{"code":131026,"title":"Message undeliverable"}]/'
}
row() {
	sql "select status || ' ' || coalesce(wamid, '-')
	    from campaign_recipients where id = $1"
}
r() {
	echo $((first + $1 - 1))
}
{
	body wamid.ours "wapipe:$tag:$(r 1):1"
	body wamid.theirs "wapipe:0th3r:$(r 2):1"
	body wamid.older "wapipe:$tag:$(r 6):1"
	failed wamid.olderfail "wapipe:$tag:$(r 7):1"
	body wamid.oldform "wapipe:$(r 3):1"
	body wamid.notag "wapipe:$(r 4)"
} | wa-status-ingest 2>"$T/err"
is "$?" 0 "wa-status-ingest applies the batch"
is "$(row "$(r 1)")" "delivered wamid.ours" \
    "our tag, the row's attempt, no wamid yet: applied, the wamid taken"
is "$(row "$(r 2)")" "sending -" "another deployment's tag: the row untouched"
like "$(cat "$T/err")" "a status of another deployment .* skipped" \
    "... said once"
is "$(row "$(r 6)")" "delivered wamid.older" \
    "an older attempt's delivered: applied (that message reached them)"
is "$(row "$(r 7)")" "sending -" "an older attempt's failure: stale, untouched"
is "$(row "$(r 3)")" "delivered wamid.oldform" \
    "the old form (wapipe:ID:ATTEMPT), the attempt right: applied"
is "$(row "$(r 4)")" "delivered wamid.notag" "the oldest form (wapipe:ID): applied"
is "$(sql "select count(*) from unmatched_statuses
    where wamid in ('wamid.theirs', 'wamid.olderfail')")" 0 \
    "... and neither of the others is kept"
# Applied again (Meta re-delivers): nothing moves twice.
before=$(sql "select md5(string_agg(r::text, ',' order by id))
    from campaign_recipients r")
body wamid.ours "wapipe:$tag:$(r 1):1" | wa-status-ingest 2>/dev/null
is "$(sql "select md5(string_agg(r::text, ',' order by id))
    from campaign_recipients r")" "$before" "a redelivery changes nothing"

# A row with its wamid: a status of another wamid and our callback data
# is another's (staging sending with production's old form).
sql "update campaign_recipients set status = 'sent', wamid = 'wamid.five'
    where id = $(r 5)" >/dev/null
body wamid.impostor "wapipe:$(r 5):1" | wa-status-ingest 2>/dev/null
is "$(row "$(r 5)")" "sent wamid.five" "another wamid, our old form: untouched"
body wamid.five "wapipe:$(r 5):1" | wa-status-ingest 2>/dev/null
is "$(row "$(r 5)")" "delivered wamid.five" "its own wamid: applied"

# status shows the tag.
is "$(wa-campaign status --json "$c" | jq -r .deployment)" "$tag" \
    "wa-campaign status --json: the deployment"
like "$(wa-campaign status "$c")" "deployment $tag: callback data wapipe:$tag:ID:ATTEMPT" \
    "... and its text"

# A pipeline against wa-fake-api whose every message has another
# deployment's status beside its own: ours applied, theirs not.
WA_APP_SECRET=s3cret-$$
export WA_APP_SECRET
mkdir "$T/recv"
bg perl "$TOP/tests/hookrecv.pl" "$T/recv.port" "$T/recv"
wait_for 30 test -s "$T/recv.port" || bail "no receiver"
fake_start --rate 0 --webhook-url "http://127.0.0.1:$(cat "$T/recv.port")/" \
    --webhook-delay-ms 5 --read-rate 0 --foreign-rate 1
p=$(campaign 0)
recipients "$p" 100 149
wa-claim -c "$p" --once 2>/dev/null | wa-send 2>/dev/null |
    wa-record >/dev/null 2>&1
statuses() {
	cat "$T"/recv/*.body 2>/dev/null |
	    jq -c '.entry[].changes[].value.statuses[]?' | wc -l
}
hundred() {
	test "$(statuses)" -ge 150
}
ok "the fake sent ours (sent, delivered) and theirs (delivered)" \
    wait_for 60 hundred
for f in "$T"/recv/*.body; do
	tr -d '\n' <"$f"
	echo
done | wa-status-ingest 2>"$T/err"
is "$(sql "select status, count(*) from campaign_recipients
    where campaign_id = $p group by 1")" "delivered|50" \
    "every row delivered, by its own statuses"
is "$(sql "select count(*) from campaign_recipients r
    where campaign_id = $p and wamid in (select wamid from
    unmatched_statuses)")" 0 "no row took another's wamid"
is "$(sql "select count(*) from unmatched_statuses")" 0 \
    "and no status of theirs is kept"
like "$(cat "$T/err")" "a status of another deployment" \
    "theirs are counted as another deployment's"
fake_stop
done_testing
