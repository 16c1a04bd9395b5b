#!/bin/sh
# contrib/nginx/wa-webhook.conf: nginx -t accepts it (with a throwaway
# self-signed certificate and a minimal nginx.conf in our temp dir, so
# /etc/nginx is never read), and, run for real in front of wa-webhook,
# it passes a signed body through byte for byte, the largest body
# wa-webhook takes passes and one byte more is refused (413), the GET
# handshake works, and its access log keeps the verify token out.
. "$(dirname "$0")/lib.sh"

command -v nginx >/dev/null || skip_all "no nginx (Debian package nginx)"
command -v openssl >/dev/null || skip_all "no openssl"

BLOCK=$TOP/contrib/nginx/wa-webhook.conf
SECRET=app-secret-nginx
export WA_APP_SECRET=$SECRET WA_VERIFY_TOKEN=verify-me-please

openssl req -x509 -newkey rsa:2048 -nodes -days 2 \
    -subj /CN=webhook.example.com -keyout "$T/key.pem" -out "$T/cert.pem" \
    2>/dev/null || bail "openssl could not make a certificate"

# conf UPSTREAM-PORT LISTEN-PORT: the block with our certificate, log and
# ports, inside a minimal nginx.conf that keeps everything in $T.
conf() {
	sed -e "s|/etc/ssl/certs/webhook.example.com.pem|$T/cert.pem|" \
	    -e "s|/etc/ssl/private/webhook.example.com.key|$T/key.pem|" \
	    -e "s|/var/log/nginx/|$T/|" \
	    -e "s|server 127.0.0.1:8080;|server 127.0.0.1:$1;|" \
	    -e "s|listen 443 ssl;|listen 127.0.0.1:$2 ssl;|" \
	    -e "/listen \[::\]:443 ssl;/d" "$BLOCK" >"$T/block.conf"
	cat >"$T/nginx.conf" <<-EOF
	pid $T/nginx.pid;
	error_log $T/error.log;
	daemon off;
	master_process off;
	events {}
	http {
		access_log $T/access.log;
		client_body_temp_path $T/body;
		proxy_temp_path $T/proxy;
		fastcgi_temp_path $T/fastcgi;
		uwsgi_temp_path $T/uwsgi;
		scgi_temp_path $T/scgi;
		include $T/block.conf;
	}
	EOF
}

# The files the block names are the ones conf replaces: nginx -t opens
# them, and it must not touch the machine's.
out=$(sed 's/#.*//' "$BLOCK" | grep -v location | grep -o ' /[^ ;]*' |
    tr -d ' ' | tr '\n' ' ')
is "$out" "/etc/ssl/certs/webhook.example.com.pem \
/etc/ssl/private/webhook.example.com.key /var/log/nginx/wa-webhook.log " \
    "the block names the certificate, its key and its log"

conf 8080 8443
nginx -t -q -p "$T" -c "$T/nginx.conf" -e "$T/error.log" 2>"$T/t.err"
is "$?" 0 "nginx -t accepts the block"
[ -s "$T/t.err" ] && note "$(cat "$T/t.err")"
# nginx -t fails on a broken block: the check can fail.
sed 's/proxy_pass http:\/\/wa_webhook;/proxy_pass;/' "$T/block.conf" \
    >"$T/bad.conf"
sed "s|$T/block.conf|$T/bad.conf|" "$T/nginx.conf" >"$T/bad-nginx.conf"
nginx -t -q -p "$T" -c "$T/bad-nginx.conf" -e "$T/error.log" 2>/dev/null
ok "nginx -t refuses a broken block" test $? -ne 0

# The limits agree: client_max_body_size is wa-webhook's --max-body.
mb=$(sed -n 's/.*client_max_body_size \([0-9]*\)m;.*/\1/p' "$BLOCK")
def=$(grep -A1 '^\.It Fl \\-max-body' "$TOP/man/wa-webhook.1" |
    sed -n 's/.*(default \([0-9]*\).*/\1/p')
is "$((mb * 1048576))" "$def" "client_max_body_size is --max-body's default"
like "$(grep -c 'keepalive [0-9]' "$BLOCK"):$(grep -c \
    'proxy_http_version 1.1' "$BLOCK"):$(grep -c 'Connection ""' "$BLOCK")" \
    '^1:1:1$' "HTTP/1.1 kept alive to wa-webhook"

# For real: wa-webhook on a free port, nginx in front on another.
S=$T/spool
bg wa-webhook -s "$S" --listen 127.0.0.1:0 --port-file "$T/hook.port" \
    2>"$T/wa-webhook.err"
wait_for 10 test -s "$T/hook.port" || bail "wa-webhook did not start"
hook=$(cat "$T/hook.port")

# An nginx that lost the race for its port is started again on another.
for try in 1 2 3 4 5; do
	port=$(free_port)
	conf "$hook" "$port"
	: >"$T/error.log"
	bg nginx -p "$T" -c "$T/nginx.conf" -e "$T/error.log"
	ngx=$!
	wait_for 10 sh -c "curl -s -o /dev/null --cacert '$T/cert.pem' \
	    --resolve webhook.example.com:$port:127.0.0.1 \
	    https://webhook.example.com:$port/ || ! kill -0 $ngx 2>/dev/null"
	kill -0 "$ngx" 2>/dev/null && break
	note "nginx try $try: $(cat "$T/error.log")"
done
kill -0 "$ngx" 2>/dev/null || bail "nginx did not start"
URL=https://webhook.example.com:$port/whatsapp/webhook

sign() {
	openssl dgst -sha256 -hmac "$SECRET" "$1" | sed 's/^.*= */sha256=/'
}

# post FILE: POSTs FILE's bytes, signed; prints the HTTP status.
post() {
	curl -s -o /dev/null -w '%{http_code}' --cacert "$T/cert.pem" \
	    --resolve "webhook.example.com:$port:127.0.0.1" \
	    -H "X-Hub-Signature-256: $(sign "$1")" \
	    -H 'Content-Type: application/json' --data-binary "@$1" "$URL"
}

# A body nginx could be tempted to touch: spaces, UTF-8, escapes, a tab.
printf '{"object":"whatsapp_business_account", "entry":[{"id":"1","changes":[{"value":{"statuses":[{"id":"wamid.A1","status":"sent","timestamp":"1750030073","x":"caf\303\251 \\u00e9\\" ok"}\t]},"field":"messages"}]}]}   ' \
    >"$T/small"
is "$(post "$T/small")" 200 "a signed body through nginx: 200"
spooled() {
	cat "$S"/*.ndjson 2>/dev/null
}
printf '\n' >>"$T/small"	# the spool ends each body with a newline
ok "the spool holds it byte for byte" cmp -s "$T/small" "$S"/*.ndjson

# The largest body wa-webhook takes (--max-body), and one byte more.
max=$((mb * 1048576))
big() {
	{
		printf '{"object":"whatsapp_business_account","pad":"'
		head -c "$(($1 - 47))" /dev/zero | tr '\0' x
		printf '"}'
	} >"$T/big"
}
big "$max"
is "$(wc -c <"$T/big" | tr -d ' ')" "$max" "a body of exactly --max-body"
before=$(spooled | wc -c)
is "$(post "$T/big")" 200 "the largest body wa-webhook takes passes nginx"
ok "and is spooled whole" \
    test "$(spooled | wc -c)" -ge "$((before + max))"
big "$((max + 1))"
is "$(post "$T/big")" 413 "one byte more: 413"
curl -s -o "$T/page" --cacert "$T/cert.pem" \
    --resolve "webhook.example.com:$port:127.0.0.1" \
    -H "X-Hub-Signature-256: $(sign "$T/big")" --data-binary "@$T/big" "$URL"
like "$(cat "$T/page")" 'nginx' "from nginx, before wa-webhook sees it"

# The GET handshake goes through; the log keeps the token out.
got=$(curl -s --cacert "$T/cert.pem" \
    --resolve "webhook.example.com:$port:127.0.0.1" \
    "$URL?hub.mode=subscribe&hub.verify_token=$WA_VERIFY_TOKEN&hub.challenge=8147")
is "$got" 8147 "the verification handshake through nginx"
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$T/cert.pem" \
    --resolve "webhook.example.com:$port:127.0.0.1" \
    "https://webhook.example.com:$port/elsewhere")
is "$code" 404 "other paths: 404"
wait_for 10 grep -q 'GET /whatsapp/webhook' "$T/wa-webhook.log"
like "$(cat "$T/wa-webhook.log")" 'GET /whatsapp/webhook" 200' \
    "the access log has the handshake"
ok "without the verify token" \
    sh -c "! grep -q '$WA_VERIFY_TOKEN' '$T/wa-webhook.log'"

done_testing
