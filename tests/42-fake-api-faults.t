#!/bin/sh
# wa-fake-api: the faults behind the outage and bad-byte tests of wa-send:
# --outage-file (an outage that starts and ends while it runs) and the
# mojibake script (an error message in bytes that are not UTF-8); Graph's
# 100/33 for what is not an id, and for an id not of --numbers.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"

PNID=106540352242922

fails() {
	! "$@" >/dev/null 2>&1
}

# post TO: POSTs a template send to TO; prints the HTTP status, leaves
# the answer in $T/out.
post() {
	printf '{"messaging_product":"whatsapp","to":"%s","type":"template",' \
	    "$1" >"$T/req"
	printf '"template":{"name":"reminder","language":{"code":"en"}}}' \
	    >>"$T/req"
	curl -s -o "$T/out" -w '%{http_code}' -H @"$T/auth" \
	    -H 'Content-Type: application/json' --data-binary @"$T/req" \
	    "$WA_API_BASE/$PNID/messages"
}

fake_start --rate 0 --pair-ms 0 --outage-file "$T/down" \
    --script 51=mojibake:131026
printf 'Authorization: Bearer %s\n' "$WA_TOKEN" >"$T/auth"

is "$(post +15550000001)" 200 'no outage file: accepted'
: >"$T/down"
is "$(post +15550000002)" 503 'an empty outage file: 503'
like "$(cat "$T/out")" '^<html>' '... with a body that is not the API JSON'
echo 502 >"$T/down"
is "$(post +15550000003)" 502 'the outage file holds the status: 502'
is "$(post +15550000051)" 502 '... before the scripts'
rm "$T/down"
is "$(post +15550000004)" 200 'the file removed: the outage ends'
is "$(jq -r '[.to, .outcome, .http_status] | join(" ")' "$FAKE_LOG" |
    tr '\n' ',')" \
    '+15550000001 sent 200,+15550000002 down 503,+15550000003 down 502,+15550000051 down 502,+15550000004 sent 200,' \
    'the log says down'

is "$(post +15550000051)" 400 'mojibake: HTTP 400'
is "$(tr -d '\200-\377' <"$T/out" | jq -r .error.code)" 131026 \
    '... with its code'
ok '... and a message that is not UTF-8' fails iconv -f UTF-8 -t UTF-8 \
    "$T/out"
n=$(sed 's/.*"message":"\(.*\)","type".*/\1/' "$T/out" | tr -d '\n' | wc -c)
ok "... over 255 bytes long ($n)" test "$n" -gt 255

fake_stop

# A phone-number id that is not an id (issue 27, item 12): wa-fake-api
# once took any bytes of the URL and put them in its webhooks, which were
# then not UTF-8 and refused whole by wa-webhook. Graph answers a POST to
# what is no object with 400, code 100, subcode 33, a GraphMethodException
# "Unsupported post request. Object with ID '...' does not exist, ..."
# (../shared/research/cloud-api-2026.md, §3 "Error codes: additions and
# corrections", the 100 + error_subcode 33 row, and the public reports it
# cites); no webhook follows.
mkdir -p "$T/recv"
bg perl "$TOP/tests/hookrecv.pl" "$T/recv.port" "$T/recv"
wait_for 30 test -s "$T/recv.port" || bail 'the receiver did not start'
WA_APP_SECRET=app-secret-$$
export WA_APP_SECRET
fake_start --rate 0 --pair-ms 0 --webhook-url \
    "http://127.0.0.1:$(cat "$T/recv.port")/hook" --webhook-delay-ms 20
printf 'Authorization: Bearer %s\n' "$WA_TOKEN" >"$T/auth"
PNID=%FF
is "$(post +15550000061)" 400 'an id of the byte 0xFF: HTTP 400'
is "$(jq -r '[.error.code, .error.error_subcode, .error.type] | join(" ")' \
    "$T/out")" '100 33 GraphMethodException' '... code 100, subcode 33'
like "$(jq -r .error.message "$T/out")" \
    "^Unsupported post request. Object with ID '$(printf '\357\277\275')' does not exist, cannot be loaded due to missing permissions, or does not support this operation" \
    '... naming the id, its byte as U+FFFD'
ok '... in UTF-8' iconv -f UTF-8 -t UTF-8 "$T/out" -o /dev/null
PNID=1%C3%A9%80x
is "$(post +15550000062)" 400 'an id with a bad byte after a good character'
like "$(jq -r .error.message "$T/out")" "ID '1é$(printf '\357\277\275')x'" \
    '... quoted as it came, in UTF-8'
PNID=a%20b
is "$(post +15550000063)" 400 'an id with a space: HTTP 400'
PNID=$(printf 'x\377')
is "$(post +15550000064)" 400 'an id with a raw byte: HTTP 400'
PNID=%FF
printf '{"from":"+15550000065","text":"STOP"}' >"$T/req"
is "$(curl -s -o "$T/out" -w '%{http_code}' -H @"$T/auth" \
    --data-binary @"$T/req" "$WA_API_BASE/$PNID/inbound")" 400 \
    '... and so is an inbound message to it'
PNID=106540352242922
is "$(post +15550000069)" 200 'the good id is accepted'
has_hook() {
	cat "$T"/recv/*.body 2>/dev/null | grep -q 15550000069
}
wait_for 30 has_hook || bail 'no webhook came'
fake_stop
is "$(cat "$T"/recv/*.body | jq -r \
    '.entry[].changes[].value | .metadata.phone_number_id,
    .statuses[]?.recipient_id' | sort -u | tr '\n' ' ')" \
    '106540352242922 15550000069 ' 'the webhooks are the good id'"'"'s alone'
ok '... in UTF-8' sh -c 'cat "$1"/recv/*.body | iconv -f UTF-8 -t UTF-8 \
    -o /dev/null' - "$T"
is "$(jq -r '[.phone_number_id // "-", .code // "-", .http_status] |
    join(" ")' "$FAKE_LOG" | tr '\n' ',')" \
    '- 100 400,- 100 400,- 100 400,- 100 400,- 100 400,106540352242922 - 200,' \
    'the log has no bad id'

# --numbers: only those ids exist; a send from another, an id in form
# (a wrong phone_number_id), gets the same 100/33, and is logged.
fake_start --rate 0 --pair-ms 0 --numbers 106540352242922,9001
exits 64 '--numbers refuses what is not an id' \
    sh -c 'wa-fake-api --numbers "a b" 2>/dev/null'
PNID=9001
is "$(post +15550000071)" 200 'a number of --numbers: accepted'
PNID=9002
is "$(post +15550000072)" 400 'another: HTTP 400'
is "$(jq -r '[.error.code, .error.error_subcode, .error.type] | join(" ")' \
    "$T/out")" '100 33 GraphMethodException' '... code 100, subcode 33'
like "$(jq -r .error.message "$T/out")" "^Unsupported post request. Object with ID '9002' does not exist" \
    '... naming the id'
is "$(jq -r '[.phone_number_id, .code // "-", .http_status] | join(" ")' \
    "$FAKE_LOG" | tr '\n' ',')" '9001 - 200,9002 100 400,' \
    'the log has both, by id'

done_testing
