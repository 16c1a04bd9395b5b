#!/bin/sh
# Values Postgres or the next stage would refuse are refused where they
# enter, line by line, never in the middle of a batch: wa-campaign import
# (NaN, 1e400, 2^63, lone surrogates, nesting a send could not carry,
# NUL bytes, over-long rows kept whole), wa-record (integers past what
# the columns take), wa-status-ingest from stdin and from the spool
# (timestamps that are not times: the body's other statuses still land,
# and the checkpoint moves on). A reject file that cannot be written
# ends the program with 74.
. "$(dirname "$0")/lib.sh"
pg_start

new() {
	wa-campaign create --name t --phone-number-id 106540352242922 \
	    --template reminder
}
rows() {
	sql "select count(*) from campaign_recipients where campaign_id = $1"
}
# obj K: K objects {"a":...} inside one another around 1.
obj() {
	awk -v k="$1" 'BEGIN { for (i = 0; i < k; i++) printf "{\"a\":";
	    printf "1"; for (i = 0; i < k; i++) printf "}" }'
}

# NDJSON: every kind of bad row between good ones.
c=$(new)
{
	echo '{"phone":"+12015550201","params":["a"]}'
	echo '{"phone":"+12015550202","components":[{"type":"body","parameters":[{"type":"text","text":"x","n":NaN}]}]}'
	echo '{"phone":"+12015550203","params":[1e400]}'
	echo '{"phone":"+12015550204","components":[{"n":9223372036854775808}]}'
	echo '{"phone":"+12015550205","params":["\ud800"]}'
	echo '{"phone":"+12015550206","params":["a"],}'
	printf '\0\0\0\0\n'
	printf '{"phone":"+12015550208","params":["caf\351"]}\n'
	# 31 levels: the row, components, 29 objects: a request of 32.
	printf '{"phone":"+12015550209","components":[%s]}\n' "$(obj 29)"
	printf '{"phone":"+12015550210","components":[%s]}\n' "$(obj 30)"
	echo '{"phone":"+12015550211","params":["NaN",-9223372036854775808,1.5e300]}'
	echo '{"phone":"+12015550212","components":[{"type":"body","parameters":[{"type":"text","text":"\ud83d\ude00"}]}]}'
} >"$T/a.ndjson"
wa-campaign import --reject "$T/rej" "$c" "$T/a.ndjson" 2>"$T/err"
is "$?" 65 "NDJSON import with bad rows: exit 65"
is "$(cat "$T/err")" "wa-campaign: $T/a.ndjson:2: not valid JSON ('NaN' at byte 98: JSON has no NaN or Infinity)
wa-campaign: $T/a.ndjson:3: number 1e400 at byte 35: beyond a double's range
wa-campaign: $T/a.ndjson:4: integer 9223372036854775808 at byte 44: beyond 64 bits
wa-campaign: $T/a.ndjson:5: lone surrogate \\ud800 at byte 36: half a character, not text
wa-campaign: $T/a.ndjson:6: not valid JSON (a comma before '}' at byte 40)
wa-campaign: $T/a.ndjson:7: a NUL byte (byte 1)
wa-campaign: $T/a.ndjson:8: not valid UTF-8 (byte 39)
wa-campaign: $T/a.ndjson:10: nested deeper than 31 levels at byte 184
wa-campaign: $T/a.ndjson: 4 imported, 0 skipped as duplicates, 0 suppressed, 8 rejected" \
    "each refused row by its line, in words, then the counts"
ok "--reject gets the refused rows, byte for byte" cmp -s "$T/rej" \
    "$(sed -n '2,8p;10p' "$T/a.ndjson" >"$T/rej.want"; echo "$T/rej.want")"
is "$(rows "$c")" 4 "the good rows around them are imported"
is "$(sql "select template_params from campaign_recipients
    where campaign_id = $c and phone = '+12015550211'")" \
    '["NaN", "-9223372036854775808", "1.5e300"]' \
    "the edges taken: a string NaN, -2^63, a large finite number"

# The deepest row imported can be sent: every stage takes its request.
wa-campaign start --no-check "$c" >/dev/null
wa-claim -c "$c" --once 2>"$T/claim.err" | wa-throttle -r 1000 |
    wa-send --dry-run >"$T/sent" 2>"$T/send.err"
is "$?" 0 "the rows imported pass wa-throttle and wa-send (exit 0)"
is "$(jq -r .to "$T/sent" | sort | tr '\n' ' ')" \
    "+12015550201 +12015550209 +12015550211 +12015550212 " \
    "all of them, the 31-level one too"
is "$(jq '.dry_run.body.template.components | [paths] | map(length) | max' \
    <"$(grep -l . "$T/sent")" | sort -n | tail -1)" 30 \
    "its components are sent whole"

# CSV: an over-long row is kept whole, after the header.
c=$(new)
{
	echo 'phone,name'
	echo '+12015550301,Ana'
	printf '+12015550302,'
	head -c 5000000 /dev/zero | tr '\0' b
	printf '\n'
	echo '+12015550303,Cy'
} >"$T/b.csv"
wa-campaign import --reject "$T/rej2" "$c" "$T/b.csv" 2>"$T/err"
is "$?" 65 "a CSV row over 4 MiB: exit 65"
is "$(sed -n 1p "$T/err")" \
    "wa-campaign: $T/b.csv:3: line longer than 4194304 bytes" \
    "it is reported with its line"
ok "--reject gets the header and the whole row" cmp -s "$T/rej2" \
    "$(sed -n '1p;3p' "$T/b.csv" >"$T/rej2.want"; echo "$T/rej2.want")"
is "$(rows "$c")" 2 "the rows around it are imported"

# A reject file that cannot be written: 74, nothing imported.
c=$(new)
printf 'phone\n+12015550401\nnot-a-phone\n+12015550403\n' |
    wa-campaign import --reject /dev/full "$c" - 2>"$T/err"
is "$?" 74 "reject file full: exit 74"
like "$(cat "$T/err")" \
    'write /dev/full: No space left on device: line 3 of <stdin> is not kept there; stopping' \
    "the failure is said, with the line"
like "$(tail -1 "$T/err")" '<stdin>: nothing imported$' "nothing imported"
is "$(rows "$c")" 0 "and nothing is"

# wa-record: what the columns would refuse is refused, line by line.
c=$(campaign 4)
wa-claim -c "$c" --once >/dev/null
id=$(sql "select min(id) from campaign_recipients where campaign_id = $c")
result() {
	printf '{"id":%s,"attempt":%s,"result":{"outcome":"%s"%s}}\n' \
	    "$1" "$2" "$3" "${4:+,$4}"
}
{
	result "$id" 1 sent '"wamid":"wamid.R1"'
	result "$((id + 1))" 1099511627776 sent '"wamid":"wamid.R2"'
	result 9223372036854775808 1 sent '"wamid":"wamid.R3"'
	result "$((id + 2))" 1 failed "$(printf '"error":{"code":131026,"title":"caf\351"}')"
	result "$((id + 2))" 1 failed '"error":{"code":131026,"title":"a\u0000b"}'
	result "$((id + 3))" 1 sent '"wamid":"wamid.R4"'
} >"$T/res"
wa-record --reject "$T/rej3" <"$T/res" >"$T/out" 2>"$T/err"
is "$?" 65 "wa-record: refused results, exit 65"
is "$(cut -d: -f2-3 "$T/err" | tr '\n' ' ')" \
    " <stdin>:2  <stdin>:3  <stdin>:4  <stdin>:5 " "each by its line"
like "$(sed -n 1p "$T/err")" '"attempt" 1099511627776 out of range' \
    "an attempt past integer"
like "$(sed -n 2p "$T/err")" 'integer 9223372036854775808 at byte 7: beyond 64 bits' \
    "an id of 2^63"
ok "--reject gets them, byte for byte" cmp -s "$T/rej3" \
    "$(sed -n 2,5p "$T/res" >"$T/rej3.want"; echo "$T/rej3.want")"
is "$(sql "select string_agg(status || ':' || coalesce(wamid, '-'), ' '
    order by id) from campaign_recipients where campaign_id = $c")" \
    "sent:wamid.R1 sending:- sending:- sent:wamid.R4" \
    "the results around them are recorded, in the same batch"

# wa-status-ingest: a timestamp that is not a time leaves its status out
# and rejects the line; the body's other statuses are applied.
c=$(campaign 8)
sql "update campaign_recipients set status = 'sent', attempt = 1,
    wamid = 'wamid.' || id where campaign_id = $c" >/dev/null
first=$(sql "select min(id) from campaign_recipients where campaign_id = $c")
# st N STATUS TIMESTAMP: a status of the campaign's row N, to its
# number (the test's numbering: +1555 and N in seven digits).
st() {
	printf '{"id":"wamid.%s","status":"%s","timestamp":%s,' \
	    "$(($1 + first - 1))" "$2" "$3"
	printf '"recipient_id":"1555%07d"}' "$1"
}
body() {
	printf '{"object":"whatsapp_business_account","entry":[{"id":"1",'
	printf '"changes":[{"value":{"statuses":[%s' "$1"
	shift
	for s in "$@"; do
		printf ',%s' "$s"
	done
	printf ']},"field":"messages"}]}]}\n'
}
row() {
	sql "select status || '|' || coalesce(extract(epoch from
	    status_at)::bigint::text, '') from campaign_recipients
	    where id = $(($1 + first - 1))"
}
{
	body "$(st 1 delivered '"1750000001"')" "$(st 2 delivered 1e400)" \
	    "$(st 3 read '"1750000003000"')"
	body "$(st 4 delivered '"99999999999999999999"')"
	body "$(st 5 delivered -5)"
	body "$(st 6 delivered NaN)"
	body "$(st 7 delivered 9223372036854775807)"
	body "$(st 8 read 1750000008.5)"
} >"$T/bodies"
wa-status-ingest --reject "$T/rej4" <"$T/bodies" 2>"$T/err"
is "$?" 65 "wa-status-ingest: bad timestamps make the exit status 65"
is "$(row 1)" "delivered|1750000001" "a good status in the body lands"
is "$(row 3)" "read|1750000003" "so does another (milliseconds)"
is "$(row 8)" "read|1750000008" "and a line after the bad ones"
is "$(row 2) $(row 4) $(row 5) $(row 6) $(row 7)" \
    "sent| sent| sent| sent| sent|" "the bad timestamps change nothing"
like "$(sed -n 1p "$T/err")" \
    '^wa-status-ingest: <stdin>:1: status delivered of wamid\.[0-9]+: timestamp "1e400" is not a time \(the body.s other statuses are applied\)$' \
    "1e400: refused with its line"
like "$(sed -n 2p "$T/err")" '<stdin>:2: .*"99999999999999999999" is not a time' \
    "a string past 64 bits"
like "$(sed -n 3p "$T/err")" '<stdin>:3: .*"-5" is not a time' "below zero"
like "$(sed -n 4p "$T/err")" "<stdin>:4: not valid JSON \('NaN'" "NaN"
like "$(sed -n 5p "$T/err")" '<stdin>:5: .*"9223372036854775807" is not a time' \
    "past the year 9999"
ok "--reject gets the five lines, byte for byte" cmp -s "$T/rej4" \
    "$(sed -n 1,5p "$T/bodies" >"$T/rej4.want"; echo "$T/rej4.want")"

# An error title is cut to 512 bytes on a character boundary: 300 marks
# of 3 bytes keep 170 (510 bytes); cut in a character, Postgres would
# refuse the whole batch.
title=$(awk 'BEGIN { for (i = 0; i < 300; i++) printf "\342\234\223" }')
body "$(printf '{"id":"wamid.%s","status":"failed","timestamp":"1750000009","recipient_id":"15550000002","errors":[{"code":131026,"title":"%s"}]}' \
    "$((first + 1))" "$title")" | wa-status-ingest 2>"$T/err"
is "$?" 0 "a long error title: exit 0"
is "$(sql "select status || ' ' || error_title from campaign_recipients
    where id = $first + 1")" "failed $(printf %s "$title" | head -c 510)" \
    "the title is cut on a character boundary"

# From the spool: the same, and the checkpoint moves past the bad line,
# so a restart does not stumble on it again.
export WA_APP_SECRET=app-secret-16 WA_VERIFY_TOKEN=v
S=$T/spool
bg wa-webhook -s "$S" --listen 127.0.0.1:0 --port-file "$T/port"
wait_for 10 test -s "$T/port" || bail "wa-webhook did not start"
post() {
	curl -s -o /dev/null -w '%{http_code}' -H "X-Hub-Signature-256: $(
	    printf %s "$1" | openssl dgst -sha256 -hmac "$WA_APP_SECRET" |
	    sed 's/^.*= */sha256=/')" --data-binary "$1" \
	    "http://127.0.0.1:$(cat "$T/port")/"
}
sql "update campaign_recipients set status = 'sent', status_at = null,
    error_code = null, error_title = null where campaign_id = $c" >/dev/null
is "$(post "$(body "$(st 1 delivered 1e400)" "$(st 2 delivered '"1750000102"')")")" \
    200 "a body with a bad timestamp is acknowledged"
is "$(post "$(body "$(st 3 delivered '"1750000103"')")")" 200 "and a good one"
wa-status-ingest --follow "$S" --once --reject "$T/rej5" 2>"$T/err"
is "$?" 65 "--follow --once: exit 65"
is "$(row 1) $(row 2) $(row 3)" "sent| delivered|1750000102 delivered|1750000103" \
    "the good statuses land"
like "$(cat "$T/err")" ':1: status delivered of wamid\.[0-9]+: timestamp "1e400" is not a time' \
    "the bad one is refused, with its spool line"
is "$(sed 's/^[^:]*: [^:]*:\([0-9]*\):.*/\1/' "$T/err")" 1 "one message"
is "$(wc -l <"$T/rej5" | tr -d ' ')" 1 "the body is in --reject"
wa-status-ingest --follow "$S" --once 2>"$T/err2"
is "$?" 0 "a second run: the checkpoint moved past it (exit 0)"
is "$(cat "$T/err2")" "" "nothing to say"

done_testing
