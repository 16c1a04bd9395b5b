#!/bin/sh
# The conformance suite: what Meta sends and answers, as its reference
# pages shape it, and what wapipe must make of it. Each fixture under
# tests/conformance/ is written by the project from the shapes of one
# page (named in the fixture, with the section), with the outcome the
# rules of wapipe(7) give it:
#   webhook  a body for wa-status-ingest, about a row in a given state:
#            the row's status, wamid, error and class after it, whether
#            the person is then suppressed (a suppression made before
#            it: "suppressed_before", its reason), or that the row is
#            untouched;
#   answer   the Cloud API's answer (HTTP status and body) to a send,
#            served by a canned server: wa-send's outcome and code, and
#            the row's status once wa-record has recorded it.
# In the payloads @DIGITS@ is the row's number without '+', @WAMID@ its
# wamid, @CALLBACK@ the callback data wa-send gives it and @BSUID@ the
# business-scoped user id Meta would know the person by. Optional
# fields Meta documents are absent in at least one fixture, and fields
# wapipe does not know present in at least one.
. "$(dirname "$0")/lib.sh"

pg_start
F=$TOP/tests/conformance
PNID=106540352242922

# field NAME FIXTURE: the fixture's value at NAME (jq path), or null.
field() {
	jq -c "$1" "$2"
}

# row_for FIXTURE N: a campaign of its own with one row (number N of
# the test), in the fixture's state; sets c, r, digits, wamid, callback.
row_for() {
	c=$(campaign 0)
	digits=1555910$(printf '%04d' "$2")
	wamid=wamid.conformance.$(basename "$1" .json)
	callback=wapipe:ROW:1
	r=$(sql "insert into campaign_recipients (campaign_id, phone,
	    template_params, status, attempt, wamid) values ($c, '+$digits',
	    '[\"x\"]', '$(jq -r '.row.status // "sending"' "$1")', 1,
	    $(if [ "$(jq -r '.row.wamid // false' "$1")" = true ]; then
	    echo "'$wamid'"; else echo null; fi)) returning id" | head -1)
	callback=wapipe:$r:1
}

# payload FIXTURE: its payload, on one line, the placeholders filled.
payload() {
	jq -c .payload "$1" | sed -e "s/@DIGITS@/$digits/g" \
	    -e "s/@WAMID@/$wamid/g" -e "s/@CALLBACK@/$callback/g" \
	    -e "s/@BSUID@/US.90$digits/g"
}

# expect FIXTURE KEY: the expected value at KEY (compact JSON), or "".
expect() {
	jq -c ".expect | if has(\"$2\") then .$2 else empty end" "$1"
}

rowtext() {
	sql "select r::text from campaign_recipients r where id = $r"
}

suppressed() {
	test "$(sql "select count(*) from suppressions
	    where phone = '+$digits'")" -gt 0 && echo true || echo false
}

# check_row FIXTURE NAME: the row's columns against the expectations.
check_row() {
	for k in status wamid error_code error_title error_class; do
		want=$(expect "$1" "$k")
		[ -n "$want" ] || continue
		got=$(sql "select coalesce(to_json($k)::text, 'null')
		    from campaign_recipients where id = $r")
		want=$(printf '%s' "$want" | sed "s/@WAMID@/$wamid/g")
		is "$got" "$want" "$2: $k"
	done
	want=$(expect "$1" suppressed)
	[ -z "$want" ] || is "$(suppressed)" "$want" "$2: suppressed $want"
	want=$(expect "$1" user_id_kept)
	[ -z "$want" ] || is "$(sql "select phone from user_ids
	    where user_id = 'US.90$digits'")" "+$digits" \
	    "$2: the user id is known to be the row's number"
}

n=0
for f in "$F"/w*.json; do
	n=$((n + 1))
	name=$(jq -r .fixture "$f")
	ok "$name: names its page and section" jq -e '(.page |
	    test("^https://developers\\.facebook\\.com/")) and
	    (.section | length > 10)' "$f" >/dev/null
	row_for "$f" "$n"
	if [ "$(jq -r '.suppressed_before // ""' "$f")" != "" ]; then
		sql "insert into suppressions (scope, phone, reason) values
		    ('$PNID', '+$digits', $(jq -r '.suppressed_before | @sh' \
		    "$f" | sed "s/^'\(.*\)'$/'\1'/"))" >/dev/null
	fi
	before=$(rowtext)
	payload "$f" | wa-status-ingest 2>"$T/err"
	is "$?" 0 "$name: wa-status-ingest applies the body"
	if [ "$(expect "$f" untouched)" = true ]; then
		is "$(rowtext)" "$before" "$name: the row is untouched"
	fi
	check_row "$f" "$name"
	want=$(expect "$f" messages_stored)
	[ -z "$want" ] || is "$(sql "select count(*) from inbound_messages
	    where phone = '+$digits'")" "$want" "$name: messages stored"
done

# The answers: a canned server per fixture, wa-send, then wa-record.
for f in "$F"/a*.json; do
	n=$((n + 1))
	name=$(jq -r .fixture "$f")
	ok "$name: names its page and section" jq -e '(.page |
	    test("^https://developers\\.facebook\\.com/")) and
	    (.section | length > 10)' "$f" >/dev/null
	row_for "$f" "$n"
	sql "update campaign_recipients set status = 'sending', wamid = null
	    where id = $r" >/dev/null
	payload "$f" >"$T/answer"
	rm -rf "$T/recv" "$T/recv.port"
	mkdir "$T/recv"
	HOOKRECV_BODY=$T/answer bg perl "$TOP/tests/hookrecv.pl" \
	    "$T/recv.port" "$T/recv" "$(jq -r .http "$f")"
	srv=$!
	wait_for 30 test -s "$T/recv.port" || bail 'the canned server did not start'
	printf '{"id":%s,"campaign_id":%s,"attempt":1,"phone_number_id":"%s","to":"+%s","template":{"name":"reminder","language":"en_US","params":["x"]}}\n' \
	    "$r" "$c" "$PNID" "$digits" >"$T/req"
	WA_API_BASE=http://127.0.0.1:$(cat "$T/recv.port")/v25.0 \
	    WA_TOKEN=conformance-token wa-send <"$T/req" \
	    >"$T/result" 2>"$T/send.err"
	kill "$srv" 2>/dev/null
	is "$(jq -r .result.outcome "$T/result")" "$(expect "$f" outcome |
	    tr -d '"')" "$name: wa-send's outcome"
	want=$(expect "$f" code)
	[ -z "$want" ] || is "$(jq -c .result.error.code "$T/result")" "$want" \
	    "$name: the error's code"
	wa-record <"$T/result" >/dev/null 2>"$T/record.err"
	check_row "$f" "$name"
done

# Optional fields absent somewhere, unknown ones present somewhere.
all() {
	cat "$F"/*.json | jq -c .
}
statuses() {
	all | jq -c 'select(.kind == "webhook") |
	    .payload.entry[].changes[].value.statuses[]?'
}
for k in recipient_id recipient_user_id biz_opaque_callback_data pricing \
    conversation; do
	ok "some status lacks $k, some has it" sh -c '
	    test "$(echo "$1" | jq -c "select(has(\"$2\") | not)" | wc -l)" -gt 0 &&
	    test "$(echo "$1" | jq -c "select(has(\"$2\"))" | wc -l)" -gt 0' \
	    _ "$(statuses)" "$k"
done
ok "some failed status lacks errors[].title" test "$(statuses |
    jq -c 'select(.errors) | select(.errors[0] | has("title") | not)' |
    wc -l)" -gt 0
ok "some status has a field wapipe does not know" test "$(statuses |
    jq -c 'select(has("future_field"))' | wc -l)" -gt 0
answers() {
	all | jq -c 'select(.kind == "answer") | .payload'
}
ok "some accepted answer lacks message_status" test "$(answers |
    jq -c 'select(.messages) | select(.messages[0] | has("message_status")
    | not)' | wc -l)" -gt 0
ok "some error lacks error_data, some has it" sh -c '
    test "$(echo "$1" | jq -c "select(.error) | select(.error |
    has(\"error_data\") | not)" | wc -l)" -gt 0 &&
    test "$(echo "$1" | jq -c "select(.error.error_data)" | wc -l)" -gt 0' \
    _ "$(answers)"
ok "some error has fields wapipe does not read" test "$(answers |
    jq -c 'select(.error.error_user_msg)' | wc -l)" -gt 0
done_testing
