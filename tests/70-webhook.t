#!/bin/sh
# wa-webhook: the handshake, signatures over the raw bytes, the size limit,
# and no acknowledgement before the body is in the spool, even across
# kill -9.
. "$(dirname "$0")/lib.sh"

SECRET=app-secret-1
export WA_APP_SECRET=$SECRET WA_VERIFY_TOKEN=verify-me
S=$T/spool

# start [OPTIONS]: a webhook on a free port, its pid in $wh, port in $port.
start() {
	rm -f "$T/port"
	bg wa-webhook -s "$S" --listen 127.0.0.1:0 --port-file "$T/port" "$@"
	wh=$!
	wait_for 30 test -s "$T/port" || bail "wa-webhook did not start"
	port=$(cat "$T/port")
}

sign() {
	printf %s "$1" | openssl dgst -sha256 -hmac "${2:-$SECRET}" |
	    sed 's/^.*= */sha256=/'
}

# post BODY [SIGNATURE-HEADER]: prints the HTTP status.
post() {
	if [ $# -gt 1 ]; then
		p_sig=$2
	else
		p_sig=$(sign "$1")
	fi
	curl -s -o /dev/null -w '%{http_code}' \
	    -H "X-Hub-Signature-256: $p_sig" --data-binary "$1" \
	    "http://127.0.0.1:$port/webhook"
}

spool() {
	cat "$S"/*.ndjson 2>/dev/null
}

size() {
	cat "$S"/*.ndjson 2>/dev/null | wc -c
}

body() {
	printf '{"object":"whatsapp_business_account","entry":[{"id":"1",'
	printf '"changes":[{"value":{"statuses":[{"id":"wamid.%s",' "$1"
	printf '"status":"sent","timestamp":"1750030073"}]},'
	printf '"field":"messages"}]}]}'
}

exits 0 '--help' sh -c 'wa-webhook --help >/dev/null'
exits 64 'a bad option is a usage error' wa-webhook --nope 2>/dev/null
exits 64 'the spool directory is required' wa-webhook 2>/dev/null
exits 78 'no app secret is a config error' \
    env -u WA_APP_SECRET wa-webhook -s "$S" 2>/dev/null
: >"$T/empty"
exits 78 'an empty secret file is a config error' env -u WA_APP_SECRET \
    WA_APP_SECRET_FILE="$T/empty" wa-webhook -s "$S" 2>/dev/null
exits 78 'so is a secret file that cannot be read' env -u WA_APP_SECRET \
    WA_APP_SECRET_FILE="$T/none" wa-webhook -s "$S" 2>/dev/null

start --metrics "$T/metrics"

url="http://127.0.0.1:$port/webhook"
is "$(curl -s -w ' %{http_code}' \
    "$url?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=verify-me")" \
    '1158201444 200' 'handshake: the challenge is echoed'
is "$(curl -s -o /dev/null -w '%{http_code}' \
    "$url?hub.mode=subscribe&hub.challenge=1&hub.verify_token=wrong")" \
    403 'handshake: a wrong verify token is refused'
is "$(curl -s -o /dev/null -w '%{http_code}' \
    "$url?hub.mode=unsubscribe&hub.challenge=1&hub.verify_token=verify-me")" \
    403 'handshake: another mode is refused'
is "$(curl -s -o /dev/null -w '%{http_code}' "$url")" 403 \
    'a GET without the handshake is refused'
is "$(curl -s "$url?hub.mode=subscribe&hub.challenge=1&hub.verify_token=x")" \
    'verification refused: hub.mode must be subscribe and hub.verify_token ours' \
    '... saying why, not "bad signature"'

b=$(body 1)
is "$(post "$b")" 200 'a signed body is acknowledged'
is "$(spool)" "$b" 'and it is in the spool, one line'

is "$(post "$(body 2)" "$(sign "$(body 2)" other-secret)")" 403 \
    'a signature under another secret is refused (403)'
is "$(post "$(body 3)" "$(sign "$(body 4)")")" 403 \
    'a signature of other bytes is refused (403)'
is "$(post "$(body 5)" "sha1=$(sign "$(body 5)" | cut -c8-47)")" 401 \
    'a sha1 signature is refused (401)'
is "$(curl -s -o /dev/null -w '%{http_code}' --data-binary "$(body 6)" \
    "$url")" 401 'a missing signature is refused (401)'
is "$(spool)" "$b" 'nothing of the refused bodies was stored'

# Hash the raw bytes: UTF-8 as sent, and \u escapes as sent; newlines
# (pretty-printed JSON, CRLF) become spaces in the spool.
raw=$(printf '{"object":"whatsapp_business_account",\r\n  "text": "J'"'"'ai mang\303\251 des p\303\242tes \342\202\254 \360\237\230\200"\n}')
is "$(post "$raw")" 200 'a body with raw UTF-8 and newlines: accepted'
esc='{"object":"whatsapp_business_account","text":"J'"'"'ai mang\u00e9 des p\u00e2tes"}'
is "$(post "$esc")" 200 'a body with \u escapes: accepted'
is "$(post "$esc" "$(sign "$(printf '%s' "$esc" |
    sed 's/\\u00e9/\xc3\xa9/; s/\\u00e2/\xc3\xa2/')")")" 403 \
    'the signature of the unescaped text does not pass for the escaped'
is "$(spool | sed -n 2p)" "$(printf %s "$raw" | tr '\r\n' '  ')" \
    'the raw body is stored byte for byte, newlines as spaces'
is "$(spool | sed -n 3p)" "$esc" 'the escaped body is stored as sent'
ok 'every stored line is JSON' sh -c "cat '$S'/*.ndjson | jq -e . >/dev/null"

# Size limit: 3 MiB by default.
head -c $((3 * 1048576 + 1)) /dev/zero | tr '\0' ' ' >"$T/big"
is "$(curl -s -o /dev/null -w '%{http_code}' -H \
    "X-Hub-Signature-256: $(openssl dgst -sha256 -hmac "$SECRET" \
    "$T/big" | sed 's/^.*= */sha256=/')" --data-binary @"$T/big" "$url")" \
    413 'a body over 3 MiB is refused (413)'
is "$(curl -s -o /dev/null -w '%{http_code}' -H 'Transfer-Encoding: chunked' \
    -H "X-Hub-Signature-256: $(sign x)" --data-binary @"$T/big" "$url")" \
    413 'also when chunked, without a Content-Length'
is "$(curl -s -o /dev/null -w '%{http_code}' -H "X-Hub-Signature-256: \
$(sign '')" -X POST "$url")" 400 'an empty body is refused (400)'
is "$(curl -s -o /dev/null -w '%{http_code}' -X PUT "$url")" 405 \
    'PUT is refused (405)'
is "$(spool | wc -l)" 3 'none of these was stored'
up=$(sign "$(body 7)" | sed 's/^sha256=//' | tr a-f A-F)
is "$(post "$(body 7)" "sha256=$up")" 200 \
    'a right signature in upper-case hex is accepted'

# Acknowledged only once stored: the spool has grown by the body before
# the answer arrives.
bad=0
for i in $(seq 10 29); do
	before=$(size)
	b=$(body "$i")
	code=$(post "$b")
	after=$(size)
	[ "$code" = 200 ] && [ "$after" -eq $((before + ${#b} + 1)) ] ||
	    bad=$((bad + 1))
done
is "$bad" 0 'each 200 came after its body was in the spool'

exits 75 'a second webhook on the same spool is refused' \
    wa-webhook -s "$S" --listen 127.0.0.1:0 2>/dev/null

# Many concurrent posts, then kill -9 at once after the last answer (and
# the metrics written, on SIGUSR2).
: >"$T/codes"
for i in $(seq 100 159); do
	(echo "$i $(post "$(body "$i")")" >>"$T/codes") &
done
wait_for 30 sh -c "test \$(wc -l <'$T/codes') -ge 60"
metrics_now "$wh" "$T/metrics"
kill -9 "$wh"
wait "$wh" 2>/dev/null
is "$(grep -c ' 200$' "$T/codes")" 60 'all 60 concurrent posts acknowledged'
miss=0
while read -r i code; do
	[ "$code" = 200 ] && ! spool | grep -qF "\"wamid.$i\"" &&
	    miss=$((miss + 1))
done <"$T/codes"
is "$miss" 0 'after kill -9, every acknowledged body is in the spool'
# 200: bodies 1, 7, raw, esc, 10-29 and 100-159; 403: three handshakes,
# the bare GET and three signatures.
is "$(unlabel "$T/metrics" | grep -E '^wa_webhook_requests_total\{code="(200|403)"\}')" \
    "$(printf 'wa_webhook_requests_total{code="%s"} %s\n' 200 84 403 7)" \
    'the metrics file counts answers'

# A restart starts a new segment; small segments rotate. The secret now
# comes from a file.
n=$(ls "$S"/*.ndjson | wc -l)
printf '%s\n' "$SECRET" >"$T/secret"
unset WA_APP_SECRET
export WA_APP_SECRET_FILE="$T/secret"
start --segment-bytes 600
for i in $(seq 200 209); do
	post "$(body "$i")" >/dev/null
done
ok 'segments rotate past --segment-bytes' \
    test "$(ls "$S"/*.ndjson | wc -l)" -ge $((n + 3))
is "$(spool | grep -c 'wamid.20[0-9]"')" 10 \
    'the bodies are all there (secret from WA_APP_SECRET_FILE)'
is "$(spool | grep -o 'wamid.20[0-9]' | tr '\n' ' ')" \
    "$(seq 200 209 | sed 's/^/wamid./' | tr '\n' ' ')" \
    'in order, segment after segment'
kill "$wh"
exits 0 'SIGTERM: exits 0' wait "$wh"

# The order of system calls: write to the spool, fdatasync, then the 200.
if command -v strace >/dev/null && strace -o /dev/null true 2>/dev/null
then
	rm -f "$T/port"
	# LeakSanitizer cannot run under ptrace.
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	export ASAN_OPTIONS
	bg strace -f -s 512 -o "$T/trace" \
	    -e trace=fdatasync,write,writev,sendto,sendmsg \
	    wa-webhook -s "$S" --listen 127.0.0.1:0 --port-file "$T/port"
	st=$!
	wait_for 30 test -s "$T/port"
	port=$(cat "$T/port")
	post "$(body 300)" >/dev/null
	# strace ignores SIGTERM: stop the traced webhook itself.
	kill "$(pgrep -P "$st")"
	wait "$st"
	w=$(grep -n 'write(.*wamid.300' "$T/trace" | head -1 | cut -d: -f1)
	f=$(awk -v w="${w:-0}" 'NR > w && /fdatasync\(/ { print NR; exit }' \
	    "$T/trace")
	a=$(grep -n 'HTTP/1.1 200' "$T/trace" | head -1 | cut -d: -f1)
	ok 'strace: body written, then synced, then 200 sent' \
	    test "${w:-0}" -gt 0 -a "${f:-0}" -gt "${w:-0}" -a \
	    "${a:-0}" -gt "${f:-0}"
else
	t_n=$((t_n + 1))
	echo "ok $t_n # SKIP no usable strace"
fi

done_testing
