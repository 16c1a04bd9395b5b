# tests/fake.sh: sourced after tests/lib.sh by tests that need the Cloud
# API: wa-fake-api on a free port, its request log in $T.
#
#   . "$(dirname "$0")/fake.sh"
#   fake_start --latency-ms 20 --script 0042=131026
#   wa-send <requests        # uses WA_API_BASE and WA_TOKEN
#   jq -s 'map(select(.method == "POST")) | length' "$FAKE_LOG"

# The Graph API version the programs speak by default, as --version says
# (the Makefile's GRAPH_API_VERSION): the fake is spoken to at it.
GRAPH_VERSION=$(wa-send --version |
    sed -n 's/^Graph API \(v[0-9]*\.[0-9]*\) by default$/\1/p')
[ -n "$GRAPH_VERSION" ] || bail "wa-send --version names no Graph API version"

# The WhatsApp Business Account wa-fake-api is by default (--waba-id):
# wa-campaign check finds the campaign's template there.
FAKE_WABA=102290129340398

# fake_start [OPTION...]: starts wa-fake-api with OPTIONs (killed at exit)
# and waits until it listens. Exports WA_API_BASE (http://127.0.0.1:PORT/
# $GRAPH_VERSION), WA_TOKEN (a test token unless already set), WA_WABA_ID
# (FAKE_WABA unless already set), FAKE_LOG (its NDJSON request log: one
# line per request, GETs too, each with its "method"), FAKE_PID,
# FAKE_PORT and FAKE_ERR (its stderr). Each call starts another server;
# the variables name the latest.
fake_start() {
	t_fake=$((${t_fake:-0} + 1))
	WA_TOKEN=${WA_TOKEN:-test-token-$$}
	WA_WABA_ID=${WA_WABA_ID:-$FAKE_WABA}
	FAKE_LOG=$T/fake$t_fake.log
	FAKE_ERR=$T/fake$t_fake.err
	t_fake_port=$T/fake$t_fake.port
	export WA_TOKEN WA_WABA_ID FAKE_LOG FAKE_ERR
	bg wa-fake-api --listen 127.0.0.1:0 --port-file "$t_fake_port" \
	    --log "$FAKE_LOG" "$@" 2>"$FAKE_ERR"
	FAKE_PID=$!
	wait_for 30 fake_up || bail "wa-fake-api did not start: $(cat "$FAKE_ERR")"
	FAKE_PORT=$(cat "$t_fake_port")
	WA_API_BASE=http://127.0.0.1:$FAKE_PORT/$GRAPH_VERSION
	export WA_API_BASE FAKE_PID FAKE_PORT
}

# fake_up: the latest server has written its port (fails fast if it died).
fake_up() {
	kill -0 "$FAKE_PID" 2>/dev/null || bail "wa-fake-api exited: $(cat "$FAKE_ERR")"
	test -s "$t_fake_port"
}

# fake_stop: SIGTERM to the latest server, and a test that it exits 0
# (under ASan a leak or error shows there); its exit status in $?.
fake_stop() {
	kill -TERM "$FAKE_PID"
	wait "$FAKE_PID"
	t_fake_rc=$?
	is "$t_fake_rc" 0 "wa-fake-api $t_fake stops cleanly"
	[ "$t_fake_rc" = 0 ] || sed 's/^/#   /' "$FAKE_ERR" | tail -20
	return "$t_fake_rc"
}

# fake_restart [OPTION...]: after fake_stop, starts a server again on the
# latest one's port, appending to its log: the end of an outage in which
# connections were refused. Sets FAKE_PID.
fake_restart() {
	rm -f "$t_fake_port"
	bg wa-fake-api --listen "127.0.0.1:$FAKE_PORT" --port-file "$t_fake_port" \
	    --log "$FAKE_LOG" "$@" 2>>"$FAKE_ERR"
	FAKE_PID=$!
	export FAKE_PID
	wait_for 20 fake_up || bail "wa-fake-api did not start again: $(cat "$FAKE_ERR")"
}
