# shellcheck shell=sh
# tests/tls.sh: sourced after tests/fake.sh. The Cloud API as Meta serves
# it, HTTPS with HTTP/2: nginx in front of the latest wa-fake-api, with a
# throwaway self-signed certificate for 127.0.0.1, everything in $T.
#
#   . "$(dirname "$0")/tls.sh"
#   fake_start
#   tls_front 'keepalive_requests 100;'
#   wa-send <requests        # now over TLS: WA_API_BASE, WA_CA_FILE
#   tls_conns; tls_streams   # connections the log saw, most streams on one
#
# Its access log (TLS_LOG) has a line per request: nginx's connection
# serial number, the requests made on that connection so far, the
# protocol, the status and the method.

# tls_front [DIRECTIVE...]: starts nginx (killed at exit) listening on a
# free port, HTTP/2 over TLS, proxying to wa-fake-api over kept-alive
# HTTP/1.1; DIRECTIVEs go in its server block. Exports WA_API_BASE
# (https://127.0.0.1:PORT/$GRAPH_VERSION), WA_CA_FILE (the certificate),
# TLS_LOG, TLS_PID, TLS_PORT and TLS_DIR (its files). TLS_LISTEN=ssl
# makes it HTTPS with HTTP/1.1 only.
tls_front() {
	command -v nginx >/dev/null || bail "no nginx (Debian package nginx)"
	t_tls=$((${t_tls:-0} + 1))
	TLS_DIR=$T/tls$t_tls
	mkdir -p "$TLS_DIR"
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
	    -addext subjectAltName=IP:127.0.0.1 -keyout "$TLS_DIR/key.pem" \
	    -out "$TLS_DIR/cert.pem" 2>/dev/null ||
	    bail "openssl could not make a certificate"
	TLS_LOG=$TLS_DIR/access.log
	# An nginx that lost the race for its port is started on another.
	for t_try in 1 2 3 4 5; do
		TLS_PORT=$(free_port)
		t_tls_conf "$@"
		: >"$TLS_DIR/error.log"
		bg nginx -p "$TLS_DIR" -c "$TLS_DIR/nginx.conf" \
		    -e "$TLS_DIR/error.log"
		TLS_PID=$!
		wait_for 20 t_tls_up && break
		note "nginx try $t_try: $(cat "$TLS_DIR/error.log")"
	done
	kill -0 "$TLS_PID" 2>/dev/null || bail "nginx did not start"
	: >"$TLS_LOG"
	WA_API_BASE=https://127.0.0.1:$TLS_PORT/$GRAPH_VERSION
	WA_CA_FILE=$TLS_DIR/cert.pem
	export WA_API_BASE WA_CA_FILE TLS_LOG TLS_PID TLS_PORT TLS_DIR
}

# t_tls_up: nginx answers over TLS (fails fast once it died).
t_tls_up() {
	kill -0 "$TLS_PID" 2>/dev/null || return 1
	curl -s -o /dev/null --cacert "$TLS_DIR/cert.pem" \
	    "https://127.0.0.1:$TLS_PORT/"
}

# One worker, no master: TLS_PID is the process that serves (killing it
# resets every connection at once). A worker_connections that holds
# 8 wa-sends' 2,400 calls, each a connection to the fake as well; the
# fake's port from FAKE_PORT.
t_tls_conf() {
	cat >"$TLS_DIR/nginx.conf" <<-EOF
	pid $TLS_DIR/nginx.pid;
	daemon off;
	master_process off;
	worker_rlimit_nofile 20000;
	events { worker_connections 8192; }
	http {
		log_format conn '\$connection \$connection_requests \$server_protocol \$status \$request_method';
		access_log $TLS_LOG conn;
		client_body_temp_path $TLS_DIR/body;
		proxy_temp_path $TLS_DIR/proxy;
		fastcgi_temp_path $TLS_DIR/fastcgi;
		uwsgi_temp_path $TLS_DIR/uwsgi;
		scgi_temp_path $TLS_DIR/scgi;
		upstream fake {
			server 127.0.0.1:$FAKE_PORT;
			keepalive 512;
		}
		server {
			listen 127.0.0.1:$TLS_PORT ${TLS_LISTEN:-ssl http2};
			ssl_certificate $TLS_DIR/cert.pem;
			ssl_certificate_key $TLS_DIR/key.pem;
			ssl_protocols TLSv1.2 TLSv1.3;
			$*
			location / {
				proxy_pass http://fake;
				proxy_http_version 1.1;
				proxy_set_header Connection "";
				proxy_set_header Host \$host;
			}
		}
	}
	EOF
}

# The log's POSTs (sends): the GET that saw nginx up may be logged after
# the log was emptied.

# tls_conns: the connections the log saw sends on.
tls_conns() {
	awk '$5 == "POST" { print $1 }' "$TLS_LOG" | sort -u | wc -l | tr -d ' '
}
# tls_streams: the most requests (HTTP/2 streams) made on one connection.
tls_streams() {
	awk '$5 == "POST" && $2 > n { n = $2 } END { print n + 0 }' "$TLS_LOG"
}
# tls_protocols: the protocols the log saw sends over, one a line.
tls_protocols() {
	awk '$5 == "POST" { print $3 }' "$TLS_LOG" | sort -u
}

# tls_restart: nginx again, same port and files (after a kill -9).
tls_restart() {
	bg nginx -p "$TLS_DIR" -c "$TLS_DIR/nginx.conf" -e "$TLS_DIR/error.log"
	TLS_PID=$!
	wait_for 20 t_tls_up || bail "nginx did not start again: $(cat \
	    "$TLS_DIR/error.log")"
}
