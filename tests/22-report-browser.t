#!/bin/sh
# The report as a browser shows it: Chromium (headless) loads the page
# offline, every chart is in its DOM, the figures it shows equal
# `wa-campaign status --json`, and its screenshot is not blank. Skipped
# where Chromium is not installed (Debian's chromium: make deps installs
# it).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/report.sh"
command -v chromium >/dev/null ||
    skip_all "no chromium: the report is not checked in a browser (apt-get install chromium, or make deps)"

# Headless, offline, in a profile of its own under $T.
browse() {
	chromium --headless --no-sandbox --disable-gpu --no-first-run \
	    --disable-extensions --disable-background-networking \
	    --user-data-dir="$T/chromium" --window-size=900,1600 "$@" \
	    2>>"$T/chromium.err"
}

# The page's text at element id $1 in the DOM $2.
at() {
	sed -n "s/.*id=\"$1\"[^>]*>\([^<]*\)<.*/\1/p" "$2" | head -1
}

pg_start
c=$(report_campaign)
wa-campaign report "$c" >"$T/page.html"
wa-campaign status --json "$c" >"$T/status"

browse --dump-dom "file://$T/page.html" >"$T/dom"
like "$(head -c 200 "$T/dom")" '<html lang="en"><head>' \
    "chromium loads the page"
for chart in funnel series latency-delivered latency-read attempts retries
do
	like "$(cat "$T/dom")" "<svg id=\"chart-$chart\"[^>]*>.*<(rect|polyline|circle) " \
	    "chart $chart is in the DOM, drawn"
done
is "$(at n-total "$T/dom")" "$(jq .total "$T/status")" \
    "total: as status --json says"
for s in pending sending unknown sent delivered read failed; do
	is "$(at "n-status-$s" "$T/dom")" "$(jq ".counts.$s" "$T/status")" \
	    "$s: as status --json says"
done
is "$(at n-accepted "$T/dom")" "$(jq .accepted "$T/status")" \
    "accepted: as status --json says"
is "$(at n-retries "$T/dom")" "$(jq .pending_later "$T/status")" \
    "retries pending: as status --json says"
is "$(at n-delivered "$T/dom")" \
    "$(jq '.counts.delivered + .counts.read' "$T/status")" \
    "funnel delivered: status's delivered and read"
is "$(at n-failed "$T/dom")" "$(jq .counts.failed "$T/status")" \
    "funnel failed: as status --json says"
is "$(at state "$T/dom")" "$(jq -r .state "$T/status")" "the state"

browse --screenshot="$T/page.png" "file://$T/page.html" >/dev/null
ok "a screenshot" test -s "$T/page.png"
n=$(perl "$TOP/tests/pngcolours.pl" "$T/page.png")
ok "the screenshot is not blank ($n colours)" test "${n:-0}" -gt 20
# The counter itself: a blank page is one colour.
printf '<!DOCTYPE html><html><body></body></html>\n' >"$T/blank.html"
browse --screenshot="$T/blank.png" "file://$T/blank.html" >/dev/null
is "$(perl "$TOP/tests/pngcolours.pl" "$T/blank.png")" 1 \
    "a blank page's screenshot is one colour"
done_testing
