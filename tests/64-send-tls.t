#!/bin/sh
# wa-send over HTTPS and HTTP/2, as Meta serves the Cloud API (nginx with
# a throwaway certificate before wa-fake-api, tests/tls.sh): it trusts
# WA_CA_FILE and nothing else, multiplexes its calls over one connection
# per 25 calls (one per call against HTTP/1.1), keeps them through idle
# seconds, and counts them (wa_send_connections_total). A GOAWAY every
# 100 requests and a reset of every connection at once (nginx killed)
# cost no message twice: each call is sent, unknown (it may have
# arrived) or retry (it did not), and the server saw each person at most
# once, every sent one exactly once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"
. "$(dirname "$0")/tls.sh"

command -v nginx >/dev/null || skip_all "no nginx (Debian package nginx)"
command -v openssl >/dev/null || skip_all "no openssl"

# reqs FROM TO: requests to +1555FROM..TO.
reqs() {
	awk -v a="$1" -v b="$2" 'BEGIN { for (i = a; i <= b; i++)
	printf "{\"id\":%d,\"campaign_id\":1,\"attempt\":1,\"phone_number_id\":\"9001\",\"to\":\"+1555%07d\",\"template\":{\"name\":\"reminder\",\"language\":\"en_US\"}}\n", i, i }'
}
# once IN OUT: every request of IN has exactly one result in OUT.
once() {
	[ "$(jq -r .id "$1" | sort -n | tr '\n' ' ')" = \
	    "$(jq -r .id "$2" | sort -n | tr '\n' ' ')" ]
}
# seen: the people the server took a message for, one a line, sorted.
seen() {
	jq -r 'select(.outcome == "sent") | .to' "$FAKE_LOG" | sort
}
# outcomes OUT: "outcome class" of each result, counted.
outcomes() {
	jq -r '.result.outcome + " " + .result.class' "$1" | sort | uniq -c |
	    awk '{ k = $2 == $3 ? $2 : $2 " " $3
		printf "%s%s=%s", (NR > 1 ? " " : ""), k, $1 }'
}
# accounted OUT: nobody twice; every sent result's person and wamid are
# the server's; no retry's person reached it.
accounted() {
	[ -z "$(seen | uniq -d)" ] || { note "twice: $(seen | uniq -d)"; return 1; }
	jq -r 'select(.result.outcome == "sent") |
	    .to + " " + .result.wamid' "$1" | sort >"$T/sent"
	jq -r 'select(.outcome == "sent") | .to + " " + .wamid' "$FAKE_LOG" |
	    sort >"$T/took"
	[ -z "$(comm -23 "$T/sent" "$T/took")" ] ||
	    { note "not taken: $(comm -23 "$T/sent" "$T/took")"; return 1; }
	jq -r 'select(.result.outcome == "retry") | .to' "$1" | sort >"$T/r"
	[ -z "$(seen | comm -12 - "$T/r")" ] ||
	    { note "retry but taken: $(seen | comm -12 - "$T/r" | head -1 | xargs -I@ grep -F "\"to\":\"@\"" "$1")"; return 1; }
}
# lines FILE N: FILE has N lines at least (waited for).
lines() {
	[ "$(wc -l <"$1")" -ge "$2" ]
}
# took N: the server took N messages at least.
took() {
	[ "$(seen | wc -l)" -ge "$1" ]
}
metric() {
	unlabel "$1" | awk -v n="$2" '$1 == n { print $2 }'
}

# A certificate nobody trusts: refused before anything is sent, an
# outage (wa-send never turns verification off).
fake_start --rate 0 --pair-ms 0
tls_front
reqs 1 1 >"$T/in"
WA_CA_FILE= wa-send --outage-after 1 <"$T/in" >"$T/out" 2>"$T/err"
is "$?" 69 'an untrusted certificate: the API cannot be reached (69)'
is "$(outcomes "$T/out")" 'retry outage=1' '... the line is retry, outage'
like "$(jq -r .result.error.title "$T/out")" 'curl 60' \
    '... because the peer was not verified'
is "$(seen | wc -l)" 0 '... and nothing reached the server'
WA_CA_FILE=$T/nothing wa-send <"$T/in" >"$T/out" 2>"$T/err"
is "$?" 78 'a WA_CA_FILE that cannot be read: 78'
like "$(cat "$T/err")" 'WA_CA_FILE .*nothing' '... named'

# 600 calls, 300 at once: HTTP/2 only, at most 12 connections (25 calls
# at once on each), many calls on each, everything sent.
reqs 1 600 >"$T/in"
wa-send --metrics "$T/m" <"$T/in" >"$T/out" 2>"$T/err"
is "$?" 0 'over TLS: exit 0'
ok '... every request has one result' once "$T/in" "$T/out"
is "$(outcomes "$T/out")" 'sent=600' '... all sent'
is "$(tls_protocols)" 'HTTP/2.0' '... over HTTP/2'
c=$(tls_conns)
ok "... over at most 12 connections, one per 25 calls ($c)" \
    test "$c" -ge 1 -a "$c" -le 12
ok "... multiplexed: $(tls_streams) calls on one" test "$(tls_streams)" -ge 50
m=$(metric "$T/m" wa_send_connections_total)
ok "... wa_send_connections_total counts them ($m; a connection may \
carry no call)" test "$m" -ge "$c" -a "$m" -le 12
ok '... the server saw each person once' accounted "$T/out"

# Idle seconds between lines keep the connection: fed through a pipe,
# 20 lines, a pause, 20 more, all over one connection.
: >"$TLS_LOG"
mkfifo "$T/feed"
wa-send -j 10 <"$T/feed" >"$T/out" 2>"$T/err" &
pid=$!
t_pids="$t_pids $pid"
exec 8>"$T/feed"
reqs 1001 1020 >&8
wait_for 30 lines "$T/out" 20 ||
    bail "no 20 results: $(wc -l <"$T/out") $(cat "$T/err")"
sleep 3		# the idle seconds themselves: what is tested
reqs 1021 1040 >&8
exec 8>&-
wait "$pid"
is "$?" 0 'fed with a pause: exit 0'
is "$(outcomes "$T/out")" 'sent=40' '... all 40 sent'
is "$(tls_conns)" 1 '... over the one connection kept through the pause'

# A TLS server without HTTP/2 (a proxy, say): one connection per call,
# once the first answer says HTTP/1.1, rather than 20 calls in a row on
# the one connection allowed for 20.
kill "$TLS_PID"
TLS_LISTEN=ssl tls_front
reqs 1101 1300 >"$T/in"
wa-send -j 20 <"$T/in" >"$T/out" 2>"$T/err"
is "$?" 0 'HTTPS without HTTP/2: exit 0'
is "$(outcomes "$T/out")" 'sent=200' '... all sent'
is "$(tls_protocols)" 'HTTP/1.1' '... over HTTP/1.1'
c=$(tls_conns)
ok "... on up to 20 connections, not one ($c)" test "$c" -gt 1 -a "$c" -le 20

# A GOAWAY every 100 requests (nginx's keepalive_requests): calls the
# server refused come back unknown, never sent again on the next
# connection; the rest sent; connections stay few.
kill "$TLS_PID"
tls_front 'keepalive_requests 100;'
reqs 2001 3000 >"$T/in"
wa-send <"$T/in" >"$T/out" 2>"$T/err"
is "$?" 0 'GOAWAY every 100 requests: exit 0'
ok '... every request has one result' once "$T/in" "$T/out"
o=$(outcomes "$T/out")
like "$o" '^(sent=[0-9]+)( unknown ambiguous=[0-9]+)?$' \
    "... each sent or unknown ($o)"
c=$(tls_conns)
ok "... on new connections, not one per call ($c for 1000 calls)" \
    test "$c" -ge 10 -a "$c" -le 40
ok '... nobody twice; every sent one taken once' accounted "$T/out"

# 300 calls at once, each answered in 300 ms: no more than 25 at once on
# a connection, so 12 connections (libcurl would put 100 on each).
kill "$TLS_PID"
fake_stop >/dev/null
fake_start --rate 0 --pair-ms 0 --latency-ms 300
tls_front
reqs 3001 3300 >"$T/in"
# (A state directory of its own: the earlier runs' share of the number
# would hold it to fewer calls at once.)
WA_STATE_DIR=$T/fresh wa-send <"$T/in" >"$T/out" 2>"$T/err"
is "$(outcomes "$T/out")" 'sent=300' '300 calls at once, answered slowly: all sent'
c=$(tls_conns)
is "$c" 12 '... over 12 connections, 25 calls on each'

# Every connection reset at once, 300 calls in flight (nginx killed),
# then nginx back on its port: the calls in flight are unknown, those
# refused meanwhile retry (outage); wa-send goes on once it is back.
kill "$TLS_PID"
fake_stop >/dev/null
fake_start --rate 0 --pair-ms 0 --latency-ms 300
tls_front
reqs 4001 5500 >"$T/in"
wa-send <"$T/in" >"$T/out" 2>"$T/err" &
pid=$!
t_pids="$t_pids $pid"
wait_for 60 took 300 || bail 'the server took no 300'
kill -9 "$TLS_PID"
wait "$TLS_PID" 2>/dev/null
ok 'reset: wa-send says the API cannot be reached' \
    wait_for 60 grep -q 'the API cannot be reached' "$T/err"
tls_restart
wait "$pid"
is "$?" 0 '... and exits 0 once it answers again'
ok '... every request has one result' once "$T/in" "$T/out"
o=$(outcomes "$T/out")
like "$o" '^(retry outage=[0-9]+ )?sent=[0-9]+ unknown ambiguous=[0-9]+$' \
    "... sent, unknown for the calls in flight, retry for the refused ($o)"
ok '... nobody twice; every sent one taken; no retry reached it' \
    accounted "$T/out"
ok '... and it sent again after the reset' \
    test "$(jq -r 'select(.result.outcome == "sent") | .id' "$T/out" |
    sort -n | tail -1)" -gt 4600
done_testing
