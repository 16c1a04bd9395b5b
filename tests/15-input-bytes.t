#!/bin/sh
# Bytes are checked where they enter: every NDJSON line is UTF-8 without
# NUL, RFC 8259 JSON (no trailing comma, NaN, single quote), nested at
# most 32 deep, with integers in 64 bits and finite numbers; a bad line is
# rejected with its number and a message a user can act on, copied whole
# to --reject (over 4 MiB too, memory flat), and the lines around it go
# through; a reject file that cannot be written ends the program with 74.
# Programs without Postgres: wa-throttle, wa-send, wa-fake-api.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"
. "$(dirname "$0")/throttle.sh"

# nest N: a request nested N levels deep (the object and N - 1 arrays).
nest() {
	awk -v n="$1" 'BEGIN { printf "{\"phone_number_id\":\"%s\",\"x\":", \
	    "'"$NUM"'"; for (i = 1; i < n; i++) printf "["; printf "1";
	    for (i = 1; i < n; i++) printf "]"; printf "}\n" }'
}
good() {
	printf '{"id":%s,"phone_number_id":"%s"}\n' "$1" "$NUM"
}

# A throttle stream: good lines around every kind of bad one.
{
	good 1					# 1
	printf '{"id":2,"name":"caf\351"}\n'	# 2: Latin-1, not UTF-8
	good 3					# 3
	printf '\0\0\0\n'			# 4: NUL bytes are not blank
	printf '{"id":5,"s":"\\ud800"}\n'	# 5: a lone surrogate
	printf '{"id":6,"a":[1,2,],"b":1}\n'	# 6: a trailing comma
	printf '{"id":7,"n":9223372036854775808}\n'	# 7: 2^63
	printf '{"id":8,"n":NaN}\n'		# 8
	printf '{"id":9,"n":1e400}\n'		# 9
	nest 33					# 10
	nest 32					# 11: the deepest taken
	printf '[1]\n'				# 12
	printf "{'id':13}\n"			# 13
	printf '{"id":14,"s":"a\tb"}\n'		# 14: a raw tab in a string
	printf '   \r\n'			# 15: blank: passed over
	printf '{"id":16,"phone_number_id":"%s","n":-9223372036854775808,"f":1.5e300,"e":"\\ud83d\\ude00"}\n' \
	    "$NUM"					# 16: the edges taken
	good 17					# 17
} >"$T/in"
{
	sed -n '1p;3p;11p;16,17p' "$T/in"
} >"$T/want"
{
	sed -n '2p;4,10p;12,14p' "$T/in"
} >"$T/wantrej"
wa-throttle -r 1000 --reject "$T/rej" <"$T/in" >"$T/out" 2>"$T/err"
is "$?" 65 'wa-throttle: bad lines make the exit status 65'
ok 'the good lines pass, byte for byte' cmp -s "$T/want" "$T/out"
ok 'the bad ones are in --reject, byte for byte' cmp -s "$T/wantrej" "$T/rej"
is "$(cat "$T/err")" "wa-throttle: <stdin>:2: not valid UTF-8 (byte 20)
wa-throttle: <stdin>:4: a NUL byte (byte 1)
wa-throttle: <stdin>:5: lone surrogate \\ud800 at byte 14: half a character, not text
wa-throttle: <stdin>:6: not valid JSON (a comma before ']' at byte 18)
wa-throttle: <stdin>:7: integer 9223372036854775808 at byte 13: beyond 64 bits
wa-throttle: <stdin>:8: not valid JSON ('NaN' at byte 13: JSON has no NaN or Infinity)
wa-throttle: <stdin>:9: number 1e400 at byte 13: beyond a double's range
wa-throttle: <stdin>:10: nested deeper than 32 levels at byte 73
wa-throttle: <stdin>:12: not a JSON object
wa-throttle: <stdin>:13: not valid JSON (a key in single quotes at byte 2: JSON takes double quotes)
wa-throttle: <stdin>:14: not valid JSON (control character 0x09 in a string at byte 16: write it as an escape such as \\n)" \
    'each bad line by number, in words'

echo nope | wa-throttle >/dev/null 2>"$T/err"
is "$?" 65 'echo nope: exit 65'
is "$(cat "$T/err")" \
    "wa-throttle: <stdin>:1: not valid JSON (unexpected 'nope' at byte 1)" \
    'echo nope: says what is wrong, and where'

# --number passes any line unparsed, but its bytes are checked.
{
	printf 'not json\n'
	printf 'caf\351\n'
	printf '\0\n'
	printf '\n'
	printf '{"a":\n'
} | wa-throttle -r 1000 --number n1 --reject "$T/rej1" >"$T/out" \
    2>"$T/err"
is "$?" 65 '--number: bad bytes make the exit status 65'
is "$(cat "$T/out")" "$(printf 'not json\n{"a":')" \
    '--number: lines that are text pass as they are'
is "$(cat "$T/err")" "wa-throttle: <stdin>:2: not valid UTF-8 (byte 4)
wa-throttle: <stdin>:3: a NUL byte (byte 1)" '--number: bad bytes, by line'
ok '--number: and kept in --reject' cmp -s "$T/rej1" \
    "$(printf 'caf\351\n\0\n' >"$T/rej1.want"; echo "$T/rej1.want")"

# Lines over 4 MiB: kept whole in --reject, memory flat, the rest passes.
{
	good 1
	printf '{"id":2,"phone_number_id":"%s","pad":"' "$NUM"
	head -c 67108864 /dev/zero | tr '\0' a
	printf '"}\n'
	good 3
} >"$T/big"
sed -n 2p "$T/big" >"$T/big2"
rm -f "$T/rej"
/usr/bin/time -o "$T/rss" -f %M wa-throttle -r 1000 --reject "$T/rej" \
    <"$T/big" >"$T/out" 2>"$T/err"
is "$?" 65 'a 64 MiB line: exit 65'
is "$(cat "$T/out")" "$(good 1; good 3)" 'the lines around it pass'
is "$(cat "$T/err")" "wa-throttle: <stdin>:2: line longer than 4194304 bytes" \
    'it is reported with its number'
ok 'it is in --reject whole, byte for byte' cmp -s "$T/big2" "$T/rej"
rss=$(tail -1 "$T/rss")
ok "memory stays flat: peak RSS $rss KB for a 64 MiB line" \
    test "$rss" -lt 49152

rm -f "$T/rej"
cat "$T/big" | wa-throttle -r 1000 --number n2 --reject "$T/rej" \
    >"$T/out" 2>"$T/err"
is "$?" 65 '--number, from a pipe: a 64 MiB line, exit 65'
is "$(cat "$T/out")" "$(good 1; good 3)" '--number: the lines around it pass'
ok '--number: it is in --reject whole, not stale bytes' cmp -s "$T/big2" \
    "$T/rej"
is "$(cat "$T/err")" "wa-throttle: <stdin>:2: line longer than 4194304 bytes" \
    '--number: reported with its number'

# A line of exactly 4 MiB is taken; one byte more is not.
{
	printf '{"p":"'
	head -c $((4194304 - 8)) /dev/zero | tr '\0' a
	printf '"}\n'
	printf '{"p":"'
	head -c $((4194304 - 7)) /dev/zero | tr '\0' a
	printf '"}\n'
} >"$T/edge"
wa-throttle -r 1000 --number n3 <"$T/edge" >"$T/out" 2>"$T/err"
is "$?" 65 'a line of 4 MiB + 1 byte is rejected'
is "$(wc -c <"$T/out" | tr -d ' ')" 4194305 'one of exactly 4 MiB passes'

# A reject file that cannot be written: 74, and said.
printf '%s\n%s\n%s\n' "$(good 1)" oops "$(good 3)" |
    wa-throttle -r 1000 --reject /dev/full >"$T/out" 2>"$T/err"
is "$?" 74 'reject file full: exit 74'
is "$(cat "$T/out")" "$(good 1)" 'what came before passed; nothing after'
like "$(cat "$T/err")" \
    '^wa-throttle: write /dev/full: No space left on device: line 2 of <stdin> is not kept there; stopping$' \
    'the write failure is said, with the line'
{
	good 1
	printf '{"id":2,"pad":"'
	head -c 5000000 /dev/zero | tr '\0' a
	printf '"}\n'
} | wa-throttle -r 1000 --number n4 --reject /dev/full >/dev/null 2>"$T/err"
is "$?" 74 'an over-long line to a full reject file: exit 74'

# wa-send: a bad request is never POSTed, and every result is JSON.
fake_start --rate 0 --pair-ms 0
req() {
	printf '{"id":%s,"phone_number_id":"9001","to":"+1555000%04d",' "$1" "$1"
	printf '"template":{"name":"reminder","language":"en_US","params":[%s]}%s}\n' \
	    "${2:-\"x\"}" "${3:-}"
}
{
	req 1
	req 2 '"x"' ','				# a trailing comma
	req 3 "$(printf '"caf\351"')"		# not UTF-8
	req 4 '"\ud800"'			# a lone surrogate
	req 5 '"a\u0000b"'			# a NUL Postgres would refuse
	req 6 '9223372036854775808'		# 2^63
	req 7 '1e400'
	req 8
} >"$T/req"
wa-send --reject "$T/sendrej" <"$T/req" >"$T/out" 2>"$T/err"
is "$?" 65 'wa-send: bad requests make the exit status 65'
ok 'every line out is JSON' jq -e . "$T/out" >/dev/null
is "$(jq -r .id "$T/out" | sort | tr '\n' ' ')" '1 8 ' 'the good ones are sent'
is "$(jq -s 'map(.to) | sort | join(" ")' "$FAKE_LOG")" \
    '"+15550000001 +15550000008"' 'and only they reach the API'
ok 'the bad ones are in --reject, byte for byte' cmp -s "$T/sendrej" \
    "$(sed -n 2,7p "$T/req" >"$T/sendrej.want"; echo "$T/sendrej.want")"
is "$(cut -d: -f1-3 "$T/err" | tr '\n' ' ')" \
    'wa-send: <stdin>:2 wa-send: <stdin>:3 wa-send: <stdin>:4 wa-send: <stdin>:5 wa-send: <stdin>:6 wa-send: <stdin>:7 ' \
    'each bad request by its line'
like "$(sed -n 1p "$T/err")" "a comma before '}'" 'a trailing comma'
like "$(sed -n 2p "$T/err")" 'not valid UTF-8 \(byte [0-9]+\)$' 'not UTF-8'
like "$(sed -n 3p "$T/err")" 'lone surrogate \\ud800' 'a lone surrogate'
like "$(sed -n 4p "$T/err")" 'u0000 at byte [0-9]+: Postgres keeps no NUL' \
    'an escaped NUL'

# wa-send with a reject file that cannot be written: the call in flight
# ends and is answered, nothing after the bad line is sent, exit 74.
{ req 11; echo oops; req 13; } |
    wa-send --reject /dev/full >"$T/out" 2>"$T/err"
is "$?" 74 'wa-send: reject file full: exit 74'
is "$(jq -r .id "$T/out")" 11 'the request before it is answered'
like "$(cat "$T/err")" 'write /dev/full: .*line 2 of <stdin> is not kept' \
    'the failure is said'
is "$(jq -s 'map(select(.to == "+15550000013")) | length' "$FAKE_LOG")" 0 \
    'nothing after it is sent'

# The body sent must nest no deeper than every stage takes: params go two
# levels deeper in it than in the request.
deep() {
	awk -v m="$1" 'BEGIN { printf "{\"phone_number_id\":\"9001\",\"to\":\"+15550000009\",\"template\":{\"name\":\"t\",\"language\":\"en\",\"params\":[";
	    for (i = 0; i < m; i++) printf "{\"a\":"; printf "1";
	    for (i = 0; i < m; i++) printf "}"; printf "]}}\n" }'
}
{ deep 27; deep 28; } | wa-send --dry-run >"$T/out" 2>"$T/err"
is "$?" 65 'a body too deep: exit 65'
is "$(jq -c '.dry_run.body | [paths] | map(length) | max' "$T/out")" 32 \
    'a body of 32 levels is sent'
is "$(cat "$T/err")" "wa-send: <stdin>:2: template.params nested too deep: the message would be deeper than 32 levels" \
    'one of 33 is refused before it is sent'

# The fake API reads bodies with the same checks (code 100).
post() {
	curl -s -o "$T/body" -w '%{http_code}' -H "Authorization: Bearer $WA_TOKEN" \
	    -H 'Content-Type: application/json' --data-binary "$1" \
	    "$WA_API_BASE/9001/messages"
}
b='{"messaging_product":"whatsapp","to":"+15550000010","type":"template","template":{"name":"t","language":{"code":"en"}}'
is "$(post "$b}")" 200 'the fake API: a good body'
is "$(post "$b,}")" 400 'a trailing comma: HTTP 400'
is "$(jq .error.code "$T/body")" 100 '... code 100'
is "$(post "$(printf '%s,"x":"\351"}' "$b")")" 400 'not UTF-8: HTTP 400'
is "$(post "$(printf '%s}' "$b" | sed 's/+15550000010/+1 555 000 0010/')")" 400 \
    '"to" not as E.164 writes it: HTTP 400'
is "$(jq .error.code "$T/body")" 131009 '... code 131009'
fake_stop

done_testing
