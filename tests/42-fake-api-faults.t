#!/bin/sh
# wa-fake-api: the faults behind the outage and bad-byte tests of wa-send:
# --outage-file (an outage that starts and ends while it runs) and the
# mojibake script (an error message in bytes that are not UTF-8).
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
done_testing
