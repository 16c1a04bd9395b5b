#!/bin/sh
# The Graph API version wa-send speaks: the default (the Makefile's
# GRAPH_API_VERSION, as --version says), WA_API_VERSION, or the one in
# WA_API_BASE's path; a malformed or doubly set version exits 78. It
# warns once, on one line, when that version is within 90 days of its end
# (lib/api/version.c's table) or past it, against the real clock: v21.0
# ends on 2027-01-21, v20.0 ended on 2026-09-24; the default must be far
# from its end (this test fails 90 days before it: time to move it).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"

# req ID: a request to +1555000ID from number 9001.
req() {
	printf '{"id":%s,"campaign_id":1,"attempt":1,"phone_number_id":"9001",' \
	    "$1"
	printf '"to":"+1555000%s","template":{"name":"reminder",' "$1"
	printf '"language":"en_US","params":["x"]}}\n'
}

# dry [VAR=VALUE...]: wa-send --dry-run of one request in that
# environment; its URL in $T/url, stderr in $T/err, exit status in $?.
dry() {
	req 1 | env "$@" wa-send --dry-run >"$T/out" 2>"$T/err"
	d_rc=$?
	jq -r .dry_run.url "$T/out" >"$T/url" 2>/dev/null
	return $d_rc
}

# warnings: the lines of $T/err about a Graph API version.
warnings() {
	grep -c 'Graph API' "$T/err"
}

# --- which version -----------------------------------------------------
like "$GRAPH_VERSION" '^v[0-9]+\.[0-9]+$' \
    "--version names the default ($GRAPH_VERSION)"
for p in wa-claim wa-campaign wa-fake-api; do
	is "$("$p" --version | sed -n 2p)" "Graph API $GRAPH_VERSION by default" \
	    "$p --version says it too"
done

dry
is $? 0 'no setting: exit 0'
is "$(cat "$T/url")" "https://graph.facebook.com/$GRAPH_VERSION/9001/messages" \
    "no setting: Graph's URL at the default"
is "$(cat "$T/err")" "" "the default is not near its end: no warning"

dry WA_API_VERSION=v26.0
is "$(cat "$T/url")" "https://graph.facebook.com/v26.0/9001/messages" \
    "WA_API_VERSION=v26.0: Graph's URL at v26.0"
is "$(cat "$T/err")" "" "v26.0 has no end announced: no warning"
dry WA_API_VERSION=
is "$(cat "$T/url")" "https://graph.facebook.com/$GRAPH_VERSION/9001/messages" \
    "WA_API_VERSION empty: as if unset"

for v in 25.0 v25 V25.0 v25.0/ latest v25.0.1 'v1234.0' ' v25.0'; do
	dry WA_API_VERSION="$v"
	is $? 78 "WA_API_VERSION='$v': exit 78"
done
like "$(cat "$T/err")" "WA_API_VERSION must be a Graph API version like $GRAPH_VERSION" \
    '... saying what it must be'
is "$(cat "$T/out")" "" '... before any request'

dry WA_API_VERSION=v26.0 WA_API_BASE=http://127.0.0.1:1/v26.0
is $? 78 'WA_API_VERSION and WA_API_BASE both set: exit 78'
like "$(cat "$T/err")" 'WA_API_BASE and WA_API_VERSION are both set' \
    '... saying so'

dry WA_API_BASE=http://127.0.0.1:1/proxy/
is "$(cat "$T/url")" "http://127.0.0.1:1/proxy/9001/messages" \
    "WA_API_BASE without a version: used whole"
is "$(cat "$T/err")" "" "... taken to speak the default: no warning"

# The pages and the README say the default as --version does.
is "$(grep -rhoE 'graph\.facebook\.com/v[0-9]+\.[0-9]+' "$TOP/man" \
    "$TOP/README.md" "$TOP/contrib" | sort -u)" \
    "graph.facebook.com/$GRAPH_VERSION" "every Graph URL in the docs is at it"
is "$(sed -n '/^wapipe speaks$/{n;p;}' "$TOP/man/wapipe.7")" \
    ".Sy $GRAPH_VERSION" "wapipe(7) says it"
is "$(tr '\n' ' ' <"$TOP/README.md" |
    grep -oE 'by default Graph API v[0-9]+\.[0-9]+' | sort -u)" \
    "by default Graph API $GRAPH_VERSION" "the README says it"

# --- the warning -------------------------------------------------------
dry WA_API_VERSION=v21.0
is "$(cat "$T/url")" "https://graph.facebook.com/v21.0/9001/messages" \
    "WA_API_VERSION=v21.0: Graph's URL at v21.0"
like "$(cat "$T/err")" \
    "Graph API v21.0 \(from WA_API_VERSION\) (ends on 2027-01-21|ended on 2027-01-21)" \
    "v21.0 from WA_API_VERSION: its end, and where the version came from"

fake_start --rate 0 --pair-ms 0
PORT=$FAKE_PORT

# sends VERSION: six requests at the fake, at /VERSION, -j 3.
sends() {
	for i in 11 12 13 14 15 16; do req "$i"; done |
	    WA_API_BASE=http://127.0.0.1:$PORT/$1 wa-send -j 3 >"$T/out" \
	    2>"$T/err"
}

sends v21.0
is $? 0 'v21.0 at the fake: exit 0'
is "$(jq -r .result.outcome "$T/out" | sort | uniq -c | tr -s ' ')" \
    ' 6 sent' '... every request sent'
is "$(warnings)" 1 'v21.0, within 90 days of its end (or past it): one warning'
is "$(wc -l <"$T/err" | tr -d ' ')" 1 '... on one line, and nothing else'
like "$(cat "$T/err")" \
    "wa-send: Graph API v21.0 \(from WA_API_BASE\) (ends on 2027-01-21, in [0-9]+ days?|ends today|ended on 2027-01-21);" \
    '... its end date'
like "$(cat "$T/err")" '(then Meta|Meta now) answers its calls as the oldest version it still serves, whose payloads may differ' \
    '... what Meta does after it'
like "$(cat "$T/err")" "move to a newer version such as wapipe's default, $GRAPH_VERSION \(wapipe\(7\), GRAPH API VERSION\)" \
    '... what to do, and where it is said'

sends v20.0
is $? 0 'v20.0, past its end: still sent (Meta answers at another version)'
is "$(warnings)" 1 'one warning'
like "$(cat "$T/err")" \
    "Graph API v20.0 \(from WA_API_BASE\) ended on 2026-09-24; Meta now answers" \
    '... that it ended, and when'

sends v19.0
is "$(warnings)" 1 'v19.0, older than every version in the table: one warning'
like "$(cat "$T/err")" "Graph API v19.0 \(from WA_API_BASE\) ended by 2026-09-24" \
    '... ended by the end of the oldest one known'

sends "$GRAPH_VERSION"
is $? 0 "the default, $GRAPH_VERSION, at the fake: exit 0"
is "$(cat "$T/err")" "" '... no warning'

sends v99.0
is $? 0 'v99.0, newer than every version in the table: exit 0'
is "$(jq -r .result.outcome "$T/out" | sort -u)" sent '... sent'
is "$(cat "$T/err")" "" '... taken to be alive: no warning'

sends v21.0/
is "$(warnings)" 1 'a trailing / on the base: the same version, warned'

done_testing
