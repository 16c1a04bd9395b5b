#!/bin/sh
# wa-status-ingest from stdin: rank-monotone batches, out-of-order and
# duplicate statuses, statuses before their row's wamid, failures with
# their error, and Meta's oddities (counted and logged, never a crash).
. "$(dirname "$0")/lib.sh"

pg_start
cid=$(campaign 12)
# Rows 1-3, 6-8, 10-12 were sent (wamid.N); 4 and 5 are still sending (no
# wamid yet: the webhook outran wa-record); 9 was read already.
sql "update campaign_recipients set status = 'sent', attempt = 1,
    wamid = 'wamid.' || id where id not in (4, 5, 9);
    update campaign_recipients set status = 'sending', attempt = 1
    where id in (4, 5);
    update campaign_recipients set status = 'read', wamid = 'wamid.9'
    where id = 9" >/dev/null

# st WAMID STATUS TS [ROW [EXTRA [TO]]]: one status object, for the
# person of row TO (WAMID's number: the test's numbering, row N being
# +1555 and N in seven digits), naming ROW in its callback data.
st() {
	printf '{"id":"wamid.%s","status":"%s","timestamp":"%s",' "$1" "$2" "$3"
	printf '"recipient_id":"1555%07d"' "${6:-$1}"
	[ -n "${4:-}" ] &&
	    printf ',"biz_opaque_callback_data":"wapipe:%s:1"' "$4"
	printf '%s}' "${5:-}"
}

# body STATUS...: a webhook body holding these statuses.
body() {
	printf '{"object":"whatsapp_business_account","entry":[{"id":"102290'
	printf '129340398","changes":[{"value":{"messaging_product":"whatsapp",'
	printf '"metadata":{"display_phone_number":"15550783881",'
	printf '"phone_number_id":"106540352242922"},"statuses":['
	printf '%s' "$1"
	shift
	for s in "$@"; do
		printf ',%s' "$s"
	done
	printf ']},"field":"messages"}]}]}\n'
}

row() {
	sql "select status || '|' || coalesce(extract(epoch from status_at)::bigint::text, '')
	    || '|' || coalesce(error_code::text, '') || '|' ||
	    coalesce(error_title, '') from campaign_recipients where id = $1"
}

metric() {
	unlabel "$T/metrics" | grep "^$1 " | awk '{ print $2 }'
}

has() {
	unlabel "$T/metrics" | grep -q "$1"
}

ingest() {
	wa-status-ingest --metrics "$T/metrics" "$@" 2>>"$T/err"
}

exits 0 '--help' sh -c 'wa-status-ingest --help >/dev/null'
exits 64 '--once needs --follow' wa-status-ingest --once 2>/dev/null
exits 64 'a bad batch size' wa-status-ingest -n 0 2>/dev/null

# Out of order, one batch each: read, then delivered, then sent.
body "$(st 1 read 1750000030)" | ingest
body "$(st 1 delivered 1750000020)" | ingest
body "$(st 1 sent 1750000010)" | ingest
is "$(row 1)" 'read|1750000030||' 'out of order: read stays, with its time'

# Duplicates, in one body and across bodies.
{ body "$(st 2 delivered 1750000020)" "$(st 2 delivered 1750000020)"
  body "$(st 2 delivered 1750000021)"; } | ingest
is "$(row 2)" 'delivered|1750000020||' 'duplicates: applied once'
is "$(metric 'wa_status_ingest_applied_total{status="delivered"}')" 1 \
    'and counted once'

# Several statuses for one message in one batch: the highest wins.
{ body "$(st 3 sent 1750000010)" "$(st 3 read 1750000040)"
  body "$(st 3 delivered 1750000030)"; } | ingest
is "$(row 3)" 'read|1750000040||' 'one batch: sent, read, delivered -> read'
is "$(metric 'wa_status_ingest_applied_total{status="read"}')" 1 \
    'one UPDATE of the row, as read'
is "$(metric 'wa_status_ingest_applied_total{status="sent"}')" 0 \
    'sent and delivered reduced away'

# Before the wamid is known: by recipient id it matches at once.
body "$(st 44 delivered 1750000050 4)" | ingest
is "$(row 4)" 'delivered|1750000050||' \
    'a sending row without wamid, matched by biz_opaque_callback_data'
is "$(sql 'select wamid from campaign_recipients where id = 4')" wamid.44 \
    "its wamid is the status's (wa-record's may never come: tests/74)"

# By wamid alone (found among its person's rows) it waits in
# unmatched_statuses until the wamid appears.
body "$(st 55 delivered 1750000060 '' '' 5)" | ingest
is "$(row 5)" 'sending|||' 'a status for an unknown wamid: the row waits'
is "$(sql "select wamid, status, extract(epoch from status_at)::bigint
    from unmatched_statuses")" 'wamid.55|delivered|1750000060' \
    'and the status is kept'
is "$(metric wa_status_ingest_unmatched_kept_total)" 1 'counted as kept'
body "$(st 55 delivered 1750000060 '' '' 5)" | ingest
is "$(sql 'select count(*) from unmatched_statuses')" 1 \
    'a duplicate is kept once'
sql "update campaign_recipients set wamid = 'wamid.55' where id = 5"
ingest </dev/null
is "$(row 5)" 'delivered|1750000060||' 'applied once the wamid is recorded'
is "$(sql 'select count(*) from unmatched_statuses')" 0 \
    'and no longer kept'
is "$(metric wa_status_ingest_unmatched_matched_total)" 1 \
    'counted as matched later'

# Failed stores its error, classed as wa-send classes it (api/class.h's
# one table): 131049, Meta's own failed example (its shape follows the
# WhatsApp Cloud API's status webhook reference, "failed" example, as
# ../shared/research/cloud-api.md keeps it: "(b) failed"; the code's
# meaning and its 24 h from the error-codes page, ibid. section 3.3),
# is "later" (retry after
# 24 h), so that requeue --class later finds it; rank 2 is below
# delivered.
f=',"errors":[{"code":131049,"title":"This message was not delivered to maintain healthy ecosystem engagement.","message":"x","error_data":{"details":"y"},"href":"/documentation"}]'
body "$(st 6 failed 1751142888 6 "$f")" | ingest
is "$(row 6)" 'failed|1751142888|131049|This message was not delivered to maintain healthy ecosystem engagement.' \
    'failed: status, code and title'
is "$(sql 'select error_class from campaign_recipients where id = 6')" later \
    '131049 by webhook is class later, as from wa-send'
body "$(st 6 delivered 1751142999 6)" | ingest
is "$(row 6)" 'delivered|1751142999||' \
    'delivered after failed (another device) moves it up, with no error'
is "$(sql "select code || ' ' || class from recipient_errors
    where recipient_id = 6")" '131049 later' \
    'the failure stays in recipient_errors, with its class'
body "$(st 7 delivered 1751142000)" | ingest
body "$(st 7 failed 1751142100 '' "$f")" | ingest
is "$(row 7)" 'delivered|1751142000||' 'failed after delivered is ignored'
body "$(st 9 sent 1751142100)" | ingest
is "$(row 9)" 'read|||' 'a read row never goes back to sent'

# Meta's oddities, all in one run: a status without recipient_id, a
# numeric timestamp, played, deleted, warning, an unknown value, a status
# without id, value.errors, inbound messages, another field, another
# object, a foreign biz_opaque_callback_data, two entries and two changes
# in one body, invalid JSON.
nors='{"id":"wamid.8","status":"delivered","timestamp":1750000070,"biz_opaque_callback_data":"wapipe:8:1"}'
played='{"id":"wamid.10","status":"played","timestamp":1750000080.0,"recipient_id":"15550000010"}'
foreign=$(st 11 delivered 1750000090 '' ',"biz_opaque_callback_data":"some data"')
sysrr='{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"value":{"messaging_product":"whatsapp","metadata":{},"errors":[{"code":130429,"title":"Rate limit hit","message":"Rate limit hit","error_data":{"details":"Too many"},"href":"/x"}]},"field":"messages"}]}]}'
inbound='{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"value":{"contacts":[{"wa_id":"1555","user_id":"US.1"}],"messages":[{"from":"1555","id":"wamid.in","timestamp":"1","type":"text","text":{"body":"hi"}}]},"field":"messages"}]}]}'
tmpl='{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"value":{"display_phone_number":"15550783881","decision":"APPROVED","requested_verified_name":"Clinic"},"field":"phone_number_name_update"}]}]}'
multi='{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"value":{"statuses":[{"id":"wamid.12","status":"sent","timestamp":"1750000001","recipient_id":"15550000012"}]},"field":"messages"},{"value":{"statuses":[{"id":"wamid.12","status":"delivered","timestamp":"1750000002","recipient_id":"15550000012"}]},"field":"messages"}]},{"id":"2","changes":[{"value":{"statuses":[{"id":"wamid.12","status":"read","timestamp":"1750000003","recipient_id":"15550000012"}]},"field":"messages"}]}]}'
{
	body "$nors" "$played" "$foreign"
	body "$(st 2 deleted 1750000100)" "$(st 2 warning 1750000100)" \
	    "$(st 2 in_orbit 1750000100)" '{"status":"read"}'
	echo "$sysrr"
	echo "$inbound"
	echo "$tmpl"
	echo '{"object":"page","entry":[]}'
	echo "$multi"
	echo '{"object": "whatsapp_business_account", "entry": ['
	echo
	echo '[1, 2]'
} | ingest --reject "$T/rejected" -n 2
is "$?" 65 'bad lines make the exit status 65'
is "$(row 8)" 'delivered|1750000070||' 'no recipient_id, numeric timestamp'
is "$(row 10)" 'read|1750000080||' 'played counts as read'
is "$(row 11)" 'delivered|1750000090||' \
    'a foreign biz_opaque_callback_data: matched by wamid'
is "$(row 12)" 'read|1750000003||' 'every entry and change is walked'
is "$(row 2)" 'delivered|1750000020||' 'deleted, warning, in_orbit change nothing'
for s in deleted warning other played; do
	is "$(metric "wa_status_ingest_statuses_total{status=\"$s\"}")" 1 \
	    "status $s counted"
done
for k in malformed_status system_error inbound_message other_field \
    other_object; do
	is "$(metric "wa_status_ingest_skipped_total{kind=\"$k\"}")" 1 \
	    "$k counted"
done
is "$(metric wa_status_ingest_rejected_total)" 2 'two lines rejected'
is "$(wc -l <"$T/rejected" | tr -d ' ')" 2 'and written to --reject'
like "$(cat "$T/err")" '<stdin>:3: system error 130429: Rate limit hit' \
    'a system error is logged with its code'
like "$(cat "$T/err")" '<stdin>:2: status "deleted" not applied' \
    'an unknown status value is logged'
like "$(cat "$T/err")" '<stdin>:5: field "phone_number_name_update" skipped' \
    'another field is logged'
like "$(cat "$T/err")" '<stdin>:8: not valid JSON' \
    'invalid JSON is reported with its line number'
like "$(cat "$T/err")" '<stdin>:10: not a JSON object' \
    'an array is reported too'
ok 'metrics: batch sizes and durations' \
    has '^wa_status_ingest_batch_seconds_count [1-9]'
ok 'metrics: lag from the status timestamp' \
    has '^wa_status_ingest_lag_seconds_count [1-9]'

# Meta's own examples, pretty-printed as sent, flattened as the spool does.
cat >"$T/meta.json" <<'EOF'
{
  "object": "whatsapp_business_account",
  "entry": [
    {
      "id": "102290129340398",
      "changes": [
        {
          "value": {
            "messaging_product": "whatsapp",
            "metadata": {
              "display_phone_number": "15550783881",
              "phone_number_id": "106540352242922"
            },
            "statuses": [
              {
                "id": "wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQUFERjg0NDEzNDdFODU3MUMxMAA=",
                "status": "sent",
                "timestamp": "1750030073",
                "recipient_id": "16505551234",
                "conversation": {
                  "id": "72b14d6bd5407799e66f64d1b338e567",
                  "expiration_timestamp": 1750116480,
                  "origin": { "type": "marketing" }
                },
                "pricing": {
                  "billable": true,
                  "pricing_model": "PMP",
                  "type": "regular",
                  "category": "marketing"
                }
              }
            ]
          },
          "field": "messages"
        }
      ]
    }
  ]
}
EOF
# (its recipient, +16505551234, a row of its own)
m=900
sql "insert into campaign_recipients (id, campaign_id, phone, status,
    attempt, wamid) values ($m, $cid, '+16505551234', 'sending', 1,
    'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQUFERjg0NDEzNDdFODU3MUMxMAA=')" \
    >/dev/null
tr '\n' ' ' <"$T/meta.json" | ingest
is "$(row "$m")" 'sent|1750030073||' "Meta's sent example"

# Kept statuses expire after --unmatched-ttl.
body "$(st 77 sent 1750000000)" | ingest
sql "update unmatched_statuses set received_at = now() - interval '2 hours'"
ingest --unmatched-ttl 3600 </dev/null
is "$(sql 'select count(*) from unmatched_statuses')" 0 'old kept statuses expire'
like "$(cat "$T/err")" 'expired 1 unmatched statuses' 'and that is logged'

# The same table for every failure: 131026 is permanent; an error with a
# message but no title (Meta says titles will go) is stored without the
# message's "(#131026) ", as wa-send stores the same text; an error
# without a code is permanent, as an answer without one would be. A kept
# failure (its wamid not recorded yet) is classed when its row appears.
recipients "$cid" 13 16
sql "update campaign_recipients set status = 'sent', attempt = 1,
    wamid = 'wamid.' || id where id between 13 and 15" >/dev/null
cls() {
	sql "select status || '|' || coalesce(error_code::text, '') || '|' ||
	    coalesce(error_class, '') || '|' || coalesce(error_title, '')
	    from campaign_recipients where id = $1"
}
f1=',"errors":[{"code":131026,"title":"Message undeliverable","message":"Message undeliverable","error_data":{"details":"Unable to deliver."}}]'
f2=',"errors":[{"code":131026,"message":"(#131026) Message undeliverable","error_data":{"details":"Unable to deliver."}}]'
f3=',"errors":[{"title":"Something odd"}]'
f4=',"errors":[{"code":131049,"message":"(#131049) This message was not delivered to maintain healthy ecosystem engagement."}]'
body "$(st 13 failed 1751143100 13 "$f1")" "$(st 14 failed 1751143100 '' "$f2")" \
    "$(st 15 failed 1751143100 15 "$f3")" "$(st 1616 failed 1751143100 '' "$f4" 16)" |
    ingest
is "$(cls 13)" 'failed|131026|permanent|Message undeliverable' \
    '131026 by webhook: permanent'
is "$(cls 14)" 'failed|131026|permanent|Message undeliverable' \
    'a message without a title: stored without its "(#131026) "'
is "$(cls 15)" 'failed||permanent|Something odd' \
    'an error without a code: permanent'
is "$(cls 16)" 'pending|||' 'a failure whose wamid is not recorded waits'
sql "update campaign_recipients set status = 'sent', attempt = 1,
    wamid = 'wamid.1616' where id = 16" >/dev/null
ingest </dev/null
is "$(cls 16)" 'failed|131049|later|This message was not delivered to maintain healthy ecosystem engagement.' \
    '... and is classed later when its row appears, its prefix gone'
is "$(sql "select string_agg(id || ':' || class, ' ' order by id)
    from recipient_errors r join campaign_recipients c
    on c.id = r.recipient_id where c.id between 13 and 16")" \
    '13:permanent 14:permanent 15:permanent 16:later' \
    'recipient_errors has the same classes'

# A status Postgres refuses spoils nothing else: the rest of its batch is
# applied, it is named, exit 65. (Every value is checked where it enters,
# so a constraint of the test's stands in for what Postgres may refuse.)
sql "update campaign_recipients set status = 'sent',
    wamid = 'wamid.' || id where id in (10, 11, 12);
    alter table campaign_recipients add constraint not_11 check
    (id <> 11 or status <> 'delivered')"
{
	body "$(st 10 delivered 1751143000 10)"
	body "$(st 11 delivered 1751143000 11)"
	body "$(st 12 delivered 1751143000 12)"
} >"$T/in"
wa-status-ingest <"$T/in" 2>"$T/err2"
is "$?" 65 "a status Postgres refuses: exit 65"
like "$(cat "$T/err2")" "<stdin>:2: postgres refused a status of this body: .*not_11" \
    "named by its body's line, with Postgres's reason"
is "$(sql "select string_agg(status, ',' order by id) from
    campaign_recipients where id in (10, 11, 12)")" \
    "delivered,sent,delivered" "the rest of the batch is applied"
sql "alter table campaign_recipients drop constraint not_11"

done_testing
