#!/bin/sh
# wa-campaign import: CSV and NDJSON, E.164 numbers, bad rows reported by
# line and written to --reject while the good ones land, duplicates
# skipped and counted, and an import that lands whole or not at all.
. "$(dirname "$0")/lib.sh"
pg_start

new() {
	wa-campaign create --name t --phone-number-id 106540352242922 \
	    --template reminder
}
params() {
	sql "select template_params from campaign_recipients
	    where campaign_id = $1 and phone = '$2'"
}
rows() {
	sql "select count(*) from campaign_recipients where campaign_id = $1"
}

# CSV: quotes, "" escapes, commas in quotes, blanks, and bad rows.
c=$(new)
{
	echo 'phone,name,note'
	echo '+12015550001,Ana,"12 Dec"'
	echo '"+1 201 555 0002","Bo, ""the"" boss",x'
	echo
	echo '+12015550003 , Cy , "with, comma" '
	printf '+12015550004,Dee,tab\tinside\n'
	echo '+12015550005,Ed,café'
	echo '+12015550006,Fay'
	echo '+12015550007,"Gus,x'
	echo '+12015550008,"Hal"x,y'
	echo '+12015550009,Ian,ab"c'
	echo 'not-a-phone,Jo,x'
	printf '+12015550013,K\377,x\n'
	echo '+12015550001,Dup,x'
	printf '+12015550012,Last,x'
} >"$T/a.csv"
wa-campaign import --reject "$T/rej" "$c" "$T/a.csv" >"$T/out" 2>"$T/err"
is "$?" 65 "rejected rows: exit 65"
is "$(cat "$T/out")" "" "nothing on stdout"
is "$(cat "$T/err")" "wa-campaign: $T/a.csv:8: 2 fields, the header has 3
wa-campaign: $T/a.csv:9: a quoted field has no closing quote
wa-campaign: $T/a.csv:10: text after a closing quote
wa-campaign: $T/a.csv:11: a quote inside a field that does not start with one
wa-campaign: $T/a.csv:12: phone 'not-a-phone': a character other than digits, spaces, '-', '.', '(' and ')'
wa-campaign: $T/a.csv:13: not valid UTF-8 (byte 15)
wa-campaign: $T/a.csv: 6 imported, 1 skipped as duplicates, 0 suppressed, 6 rejected" \
    "each bad row by its line number, then the counts"
is "$(cat "$T/rej")" "$(sed -n '1p;8,13p' "$T/a.csv")" \
    "--reject gets the header and the bad rows, as they were"
is "$(rows "$c")" 6 "the good rows are imported"
is "$(params "$c" +12015550001)" '["Ana", "12 Dec"]' \
    "a duplicate in the file: the first row wins"
is "$(params "$c" +12015550002)" '["Bo, \"the\" boss", "x"]' \
    "quoted fields: commas and \"\" escapes; the phone normalised"
is "$(params "$c" +12015550003)" '[" Cy ", "with, comma"]' \
    "unquoted fields are kept as they are; spaces around quotes go"
is "$(params "$c" +12015550004)" '["Dee", "tab\tinside"]' "a tab in a field"
is "$(params "$c" +12015550005)" '["Ed", "café"]' "UTF-8"
is "$(params "$c" +12015550012)" '["Last", "x"]' "a last line without newline"
is "$(sql "select string_agg(distinct status || attempt, ',')
    from campaign_recipients where campaign_id = $c")" pending0 \
    "imported rows are pending, attempt 0"

# The same file again: every good row is a duplicate now.
wa-campaign import "$c" "$T/a.csv" 2>"$T/err"
is "$?" 65 "again: still the rejected rows"
like "$(tail -1 "$T/err")" ": 0 imported, 7 skipped as duplicates, 0 suppressed, 6 rejected" \
    "duplicates of an earlier import are skipped and counted"
is "$(rows "$c")" 6 "and never added twice"

# CRLF, a byte order mark, the phone column elsewhere, stdin.
printf '\357\273\277name, Phone \r\nZoe,+12015550020\r\n\r\n"Y, Z",+12015550021\r\n' |
    wa-campaign import "$c" - 2>"$T/err"
is "$?" 0 "CRLF with a BOM from stdin: exit 0"
is "$(cat "$T/err")" "wa-campaign: <stdin>: 2 imported, 0 skipped as duplicates, 0 suppressed, 0 rejected" \
    "the summary names stdin"
is "$(params "$c" +12015550021)" '["Y, Z"]' \
    "the phone column may be anywhere, in any case; the others are params"

# NDJSON.
c=$(new)
cat >"$T/b.ndjson" <<'EOF'
{"phone":"+12015550101","params":["a","b"]}
{"phone":"+1 201 555 0102","params":[1,2.5],"extra":true}
{"phone":"+12015550103","components":[{"type":"body","parameters":[{"type":"text","text":"x"}]}]}
{"phone":"+12015550104"}

{"phone":"+12015550105","params":"a"}
{"phone":15550000106}
{"params":["a"]}
{"phone":"+12015550108"
["+12015550109"]
{"phone":"+12015550110","params":[{"a":1}]}
{"phone":"+12015550111","params":["a\u0000b"]}
{"phone":"+12015550101","params":["dup"]}
{"phone":"+12015550112"} trailing
{"phone":"+12015550113","components":{"type":"body"}}
{"phone":"+12015550114","params":["\\u0000 is text"]}
EOF
wa-campaign import --reject "$T/rej2" "$c" - <"$T/b.ndjson" 2>"$T/err"
is "$?" 65 "NDJSON with bad rows: exit 65"
is "$(cat "$T/err")" "wa-campaign: <stdin>:6: \"params\" is not an array
wa-campaign: <stdin>:7: \"phone\" is not a string
wa-campaign: <stdin>:8: no \"phone\"
wa-campaign: <stdin>:9: not valid JSON (it ends inside an object)
wa-campaign: <stdin>:10: not a JSON object
wa-campaign: <stdin>:11: \"params\" holds something other than strings and numbers
wa-campaign: <stdin>:12: \\u0000 at byte 37: Postgres keeps no NUL in text
wa-campaign: <stdin>:14: not valid JSON (text after the object at byte 26)
wa-campaign: <stdin>:15: \"components\" is not an array
wa-campaign: <stdin>: 5 imported, 1 skipped as duplicates, 0 suppressed, 9 rejected" \
    "each bad line by number, then the counts"
is "$(cat "$T/rej2")" "$(sed -n '6,12p;14,15p' "$T/b.ndjson")" \
    "--reject gets the bad lines"
is "$(params "$c" +12015550101)" '["a", "b"]' "params"
is "$(params "$c" +12015550102)" '["1", "2.5"]' \
    "numbers become text; unknown keys are ignored"
is "$(params "$c" +12015550104)" '[]' "no params: an empty array"
is "$(params "$c" +12015550114)" '["\\u0000 is text"]' \
    "an escaped backslash before u0000 is plain text"
is "$(params "$c" +12015550103)" \
    '{"components": [{"type": "body", "parameters": [{"text": "x", "type": "text"}]}]}' \
    "components are kept as an object for wa-claim to merge"

# What wa-claim makes of them.
wa-campaign start --no-check "$c"
wa-claim -c "$c" --once >"$T/claim"
is "$(jq -c 'select(.to == "+12015550103") | .template' "$T/claim")" \
    '{"name":"reminder","language":"en_US","components":[{"type":"body","parameters":[{"text":"x","type":"text"}]}]}' \
    "wa-claim merges the components into the template"
is "$(jq -c 'select(.to == "+12015550102") | .template.params' "$T/claim")" \
    '["1","2.5"]' "and sends params as params"

# E.164: what is accepted, and how it is written. +1234567 and
# +123456789012345 have digits enough for E.164 but no plan has them.
c=$(new)
cat >"$T/phones.csv" <<'EOF'
phone,expect
+1 (201) 555-0001,+12015550001
+44 20 7946 0018,+442079460018
0044 20.7946.0019,+442079460019
+44 (0)20 7946 0020,+442079460020
  +49-151-2345-6789  ,+4915123456789
+1234567,
+123456789012345,
555 000 0001,
+0 555 000 0001,
+123456,
+1234567890123456,
+1 555 CALL NOW,
1+5550000001,
,
+,
000441234567,
EOF
wa-campaign import "$c" "$T/phones.csv" 2>"$T/err"
is "$?" 65 "bad numbers: exit 65"
is "$(sql "select count(*), count(*) filter (where phone =
    template_params->>0) from campaign_recipients where campaign_id = $c")" \
    "5|5" "good numbers are written in E.164 as expected"
is "$(sed 's/^[^:]*: [^:]*:\([0-9]*\): /\1 /' "$T/err")" "7 phone '+1234567': too short for the plan of +1 (US and others)
8 phone '+123456789012345': too long for the plan of +1 (US and others)
9 phone '555 000 0001': no country code: write it with '+' or 00, or use --country-code
10 phone '+0 555 000 0001': a country code never starts with 0
11 phone '+123456': too short: E.164 has at least 7 digits
12 phone '+1234567890123456': too long: E.164 has at most 15 digits
13 phone '+1 555 CALL NOW': a character other than digits, spaces, '-', '.', '(' and ')'
14 phone '1+5550000001': a '+' can only come first
15 phone '': empty
16 phone '+': no digits after the '+'
17 phone '000441234567': a country code never starts with 0
wa-campaign: $T/phones.csv: 5 imported, 0 skipped as duplicates, 0 suppressed, 11 rejected" \
    "bad numbers, each with its reason"

c=$(new)
cat >"$T/national.csv" <<'EOF'
phone,expect
020 7946 0018,+442079460018
7400 123456,+447400123456
+1 201 555 0001,+12015550001
0049 151 23456789,+4915123456789
EOF
exits 0 "--country-code: national numbers" wa-campaign import \
    --country-code +44 "$c" "$T/national.csv" 2>/dev/null
is "$(sql "select count(*) from campaign_recipients where campaign_id = $c
    and phone = template_params->>0")" 4 \
    "national numbers get the code, less a trunk 0; others are kept"
exits 64 "a bad --country-code" wa-campaign import --country-code 0 "$c" \
    "$T/national.csv" 2>/dev/null
exits 64 "a four-digit --country-code" wa-campaign import \
    --country-code 1234 "$c" "$T/national.csv" 2>/dev/null

# All or nothing.
c=$(new)
printf 'name,number\nAna,+12015550001\n' >"$T/nophone.csv"
exits 65 "a header without a phone column" wa-campaign import "$c" \
    "$T/nophone.csv" 2>"$T/err"
is "$(cat "$T/err")" "wa-campaign: $T/nophone.csv:1: the CSV header (the first line) has no 'phone' column" \
    "says so"
exits 66 "a file that is not there" wa-campaign import "$c" "$T/none.csv" \
    2>/dev/null
exits 64 "an unknown campaign" wa-campaign import 999999 "$T/a.csv" \
    2>/dev/null
sql "update campaigns set state = 'cancelled' where id = $c"
exits 65 "a cancelled campaign takes no rows" wa-campaign import "$c" \
    "$T/national.csv" 2>"$T/err"
like "$(cat "$T/err")" "campaign $c is cancelled: no more recipients" \
    "says why"
sql "update campaigns set state = 'completed' where id = $c"
exits 65 "nor a completed one" wa-campaign import "$c" "$T/national.csv" \
    2>/dev/null
is "$(rows "$c")" 0 "none of them imported anything"

# A signal in the middle of the COPY: nothing lands.
c=$(new)
mkfifo "$T/fifo"
wa-campaign import "$c" "$T/fifo" 2>"$T/err" &
pid=$!
exec 3>"$T/fifo"
awk 'BEGIN { print "phone"; for (i = 0; i < 5000; i++)
    printf "+1201555%04d\n", i }' >&3
copying() {
	test "$(sql "select count(*) from pg_stat_activity
	    where query like 'COPY wa_import%'")" = 1
}
ok "the import is copying" wait_for 30 copying
kill -TERM "$pid"
wait "$pid"
is "$?" 75 "SIGTERM during the import: exit 75"
exec 3>&-
like "$(cat "$T/err")" "interrupted: nothing imported" "says so"
is "$(rows "$c")" 0 "and nothing was imported"

# A campaign that completes while rows come in runs again.
c=$(new)
wa-campaign start --no-check "$c"
printf 'phone\n+12015550001\n' >"$T/one.csv"
mkfifo "$T/fifo2"
wa-campaign import "$c" "$T/fifo2" 2>"$T/err" &
pid=$!
exec 3>"$T/fifo2"
cat "$T/one.csv" >&3
wait_for 30 copying
sql "update campaigns set state = 'completed', finished_at = now()
    where id = $c"
exec 3>&-
wait "$pid"
is "$?" 0 "import into a campaign completed meanwhile"
like "$(cat "$T/err")" "completed during the import and runs again" \
    "says so"
is "$(sql "select state, finished_at is null from campaigns
    where id = $c")" "running|t" "the campaign runs again"

# Two imports of one campaign take turns: the second waits for the
# first, then finds the phones it added and skips them as duplicates.
c=$(new)
mkfifo "$T/fifo3"
wa-campaign import "$c" "$T/fifo3" >"$T/first" 2>&1 &
first=$!
exec 3>"$T/fifo3"
printf 'phone\n+12015550001\n+12015550002\n' >&3
wait_for 30 copying
printf 'phone\n+12015550002\n+12015550003\n' >"$T/second.csv"
PGAPPNAME=second wa-campaign import "$c" "$T/second.csv" >"$T/second" \
    2>&1 3>&- &
second=$!
ok "the second import waits for the first" \
    wait_for 30 pg_waiting second advisory
exec 3>&-
wait "$first"
is "$?" 0 "the first import ends 0"
wait "$second"
is "$?" 0 "the second import ends 0"
like "$(cat "$T/second")" "1 imported, 1 skipped as duplicates" \
    "the second skips the phone the first added"
is "$(sql "select string_agg(phone, ' ' order by phone)
    from campaign_recipients where campaign_id = $c")" \
    "+12015550001 +12015550002 +12015550003" "every phone once"

done_testing
