#!/bin/sh
# wa-send: bad bytes in an answer spoil nothing else. An error title of
# raw bytes that are not UTF-8 and over 255 bytes of multi-byte text
# (wa-fake-api --script SUFFIX=mojibake:CODE) gives a result line that is
# valid UTF-8 JSON, its title cut on a character boundary; wa-record then
# applies the whole batch, that row included.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"
pg_start
# The throwaway cluster is SQL_ASCII (initdb under LC_ALL=C), which takes
# any bytes: the campaign lives in a UTF8 database, as in production.
sql "create database utf8 encoding 'UTF8' template template0" ||
    bail 'no UTF8 database'
PGDATABASE=utf8
export PGDATABASE
psql -q -v ON_ERROR_STOP=1 -f "$TOP/sql/schema.sql" >/dev/null ||
    bail 'schema did not load'
is "$(sql 'show server_encoding')" UTF8 'the database is UTF8'

fake_start --rate 0 --pair-ms 0 --script 51=mojibake:131026 \
    --script 52=mojibake:132001
c=$(campaign 60)
# The recipients ending 51 fail with the bad title; the one ending 52
# halts the campaign with it.
wa-claim -c "$c" --once 2>"$T/claim.err" >"$T/in"
wa-send -j 1 <"$T/in" >"$T/out" 2>"$T/err"
is $? 79 'the halt: exit 79'
ok 'the results are valid UTF-8' iconv -f UTF-8 -t UTF-8 "$T/out" -o /dev/null
is "$(jq -c . "$T/out" | wc -l)" 60 '... and valid JSON, a line per request'
jq -r 'select(.to == "+15550000051") | .result.error.title' "$T/out" \
    >"$T/title"
n=$(tr -d '\n' <"$T/title" | wc -c)
ok "the title is cut at 255 bytes or less ($n)" test "$n" -le 255 -a "$n" -gt 200
r=$(printf '\357\277\275')	# U+FFFD
like "$(cat "$T/title")" "^Message undeliverable: bad $r $r$r $r$r $r$r$r bytes:" \
    'each byte that is not UTF-8 becomes U+FFFD'
like "$(cat "$T/title")" 'bytes:( é€)+( | é)?$' \
    '... and the cut falls between characters'
is "$(jq -r 'select(.to == "+15550000052") | [.result.outcome,
    .result.error.code] | join(" ")' "$T/out")" 'halt 132001' \
    'the halting answer'
like "$(jq -r 'select(.result.outcome == "halt") | .result.error.title' \
    "$T/out" | tail -1)" 'halted: error 132001: Template does not exist: bad' \
    '... and the halted lines quote its title'
ok '... valid UTF-8 too' iconv -f UTF-8 -t UTF-8 "$T/err" -o /dev/null

wa-record <"$T/out" >/dev/null 2>"$T/record.err"
is $? 0 'wa-record applies the batch'
is "$(sql "select status || ' ' || coalesce(error_code::text, '-')
    from campaign_recipients where campaign_id = $c
    and phone like '%51'")" 'failed 131026' \
    'the row with the bad title is failed, with its code'
is "$(sql "select count(*) from campaign_recipients where campaign_id = $c
    and status = 'sending'")" 0 'no row is left sending'
is "$(sql "select octet_length(error_title) <= 255 from campaign_recipients
    where campaign_id = $c and phone like '%51'")" t \
    'Postgres took the title'


# Hand-written ids (issue 27, item 12): wa-send once sent '"id":" 5"' with
# the callback data "wapipe: 5:1", which wa-status-ingest cannot read back,
# while wa-record wrote row 5. An id or attempt is now an integer of 0 or
# more in one form (a JSON number, or digits without sign, space or leading
# zero); any other line is rejected by its number, and the callback data
# is written from the numbers.
hreq() {
	printf '{"id":%s,"attempt":%s,"phone_number_id":"106540352242922",' \
	    "$1" "$2"
	printf '"to":"+1555000%s","template":{"name":"reminder",' "$3"
	printf '"language":"en_US"}}\n'
}
{
	hreq '" 5"' 1 0071
	hreq '"+5"' 1 0072
	hreq '"05"' 1 0073
	hreq '"5 "' 1 0074
	hreq -5 1 0075
	hreq '"00"' 1 0076
	hreq 5 '" 1"' 0077
	hreq '"5"' 1 0078
	hreq 6 '"2"' 0079
} >"$T/hand"
n=$(jq -s length "$FAKE_LOG")
wa-send --reject "$T/hand.rej" <"$T/hand" >"$T/hand.out" 2>"$T/hand.err"
is $? 65 'ids not in their one form: exit 65'
is "$(jq -s length "$FAKE_LOG")" "$((n + 2))" '... and only two calls'
is "$(jq -r 'select(.to == "+15550000078" or .to == "+15550000079") |
    .callback' "$FAKE_LOG" | sort | tr '\n' ' ')" 'wapipe:5:1 wapipe:6:2 ' \
    'a string id or attempt of digits is sent in the one form'
is "$(jq -r .id "$T/hand.out" | tr '\n' ' ')" '5 6 ' \
    '... its result line as it came'
is "$(cut -d: -f2-3 "$T/hand.err" | tr '\n' ' ')" \
    " <stdin>:1  <stdin>:2  <stdin>:3  <stdin>:4  <stdin>:5  <stdin>:6  <stdin>:7 " \
    'the others are rejected, each by its line'
like "$(sed -n 1p "$T/hand.err")" '<stdin>:1: "id" is not an integer of 0 or more' \
    '... saying why'
like "$(sed -n 7p "$T/hand.err")" '<stdin>:7: "attempt" is not an integer of 0 or more' \
    '... for the attempt too'
ok '... and go to --reject, byte for byte' cmp -s "$T/hand.rej" \
    "$(sed -n 1,7p "$T/hand" >"$T/hand.want"; echo "$T/hand.want")"

# wa-record reads them as wa-send does: '" 5"' is no row.
r=$(sql "select min(id) from campaign_recipients where campaign_id = $c")
sql "update campaign_recipients set status = 'sending', attempt = 1,
    wamid = null where id = $r" >/dev/null
printf '{"id":" %s","attempt":1,"result":{"outcome":"sent","wamid":"wamid.S1"}}\n' \
    "$r" >"$T/hand.res"
wa-record <"$T/hand.res" >/dev/null 2>"$T/hand.rerr"
is $? 65 'wa-record refuses an id with a space'
like "$(cat "$T/hand.rerr")" '<stdin>:1: no integer "id" and "attempt"' \
    '... by its line'
is "$(sql "select status from campaign_recipients where id = $r")" sending \
    '... and the row is not written'
printf '{"id":"%s","attempt":"1","result":{"outcome":"sent","wamid":"wamid.S1"}}\n' \
    "$r" | wa-record >/dev/null 2>"$T/hand.rerr"
is $? 0 'wa-record takes the digits'
is "$(sql "select status || ' ' || wamid from campaign_recipients
    where id = $r")" 'sent wamid.S1' '... and writes the row'

done_testing
