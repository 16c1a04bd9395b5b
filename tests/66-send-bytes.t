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
is $? 75 'the halt: exit 75'
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

done_testing
