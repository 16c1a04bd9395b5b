#!/bin/sh
# contrib/: the Prometheus alert rules pass promtool, the Grafana
# dashboard is a dashboard, and every metric either of them names is in
# the --metrics file of some program, written here by a real run: a
# campaign through wa-claim | wa-throttle | wa-send | wa-record against
# the fake API (with errors, so the series made on the first error
# exist), wa-status-ingest over a webhook body, and wa-webhook, running,
# asked for its file with SIGUSR2.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"
command -v promtool >/dev/null ||
    skip_all "no promtool: the alert rules are not checked (apt-get install prometheus, or make deps)"
RULES=$TOP/contrib/prometheus/wapipe-rules.yml
DASH=$TOP/contrib/grafana/wapipe-dashboard.json

promtool check rules "$RULES" >"$T/promtool" 2>&1
is "$?" 0 "promtool check rules passes"
like "$(cat "$T/promtool")" "SUCCESS: [1-9][0-9]* rules found" \
    "... and finds the rules"
is "$(jq -r '[.title, .uid, (.panels | length > 5)] | @tsv' "$DASH")" \
    "$(printf 'wapipe\twapipe\ttrue')" "the dashboard: its title, uid, panels"
is "$(jq '[.panels[] | select(.type != "row") | select((.targets |
    length) == 0 or any(.targets[]; .expr == ""))] | length' "$DASH")" 0 \
    "every panel queries something"
is "$(jq -r '.panels[] | select(.type != "row") | .title' "$DASH" |
    sort | uniq -d)" "" "no two panels share a title"

# The programs' metrics files, from a real run.
pg_start
fake_start --rate 0 --latency-ms 5 --script 13=131026 \
    --script 27=once:131000
c=$(campaign 30)
M=$T/metrics
mkdir "$M"
wa-claim -c "$c" --metrics "$M/claim.prom" 2>"$T/claim.err" |
    wa-throttle -r 500 --metrics "$M/throttle.prom" 2>"$T/throttle.err" |
    wa-send --timeout-ms 5000 --metrics "$M/send.prom" 2>"$T/send.err" |
    wa-record --backoff-base 100 --backoff-cap 400 \
    --metrics "$M/record.prom" >/dev/null 2>"$T/record.err"
is "$(sql "select count(*) from campaign_recipients where campaign_id = $c
    and status in ('sent', 'failed')")" 30 "the campaign ran to its end"
jq -c 'select(.wamid != null) | {object: "whatsapp_business_account",
    entry: [{id: "1", changes: [{field: "messages", value: {
    messaging_product: "whatsapp", statuses: [{id: .wamid,
    status: "delivered", timestamp: (now | floor | tostring),
    recipient_id: (.to | ltrimstr("+"))}]}}]}]}' "$FAKE_LOG" |
    wa-status-ingest --metrics "$M/ingest.prom" 2>"$T/ingest.err"
is "$?" 0 "wa-status-ingest exits 0"
ok "... having applied the statuses" test "$(sql "select count(*)
    from campaign_recipients where status = 'delivered'")" -gt 0
export WA_APP_SECRET=dash-secret WA_VERIFY_TOKEN=dash
bg wa-webhook -s "$T/spool" --listen 127.0.0.1:0 --port-file "$T/port" \
    --metrics "$M/webhook.prom" 2>"$T/webhook.err"
wh=$!
wait_for 30 test -s "$T/port" || bail "wa-webhook did not start"
curl -s -o /dev/null -d '{}' "http://127.0.0.1:$(cat "$T/port")/"
ok "wa-webhook writes its file on SIGUSR2" metrics_now "$wh" "$M/webhook.prom"
for p in claim throttle send record ingest webhook; do
	ok "$p wrote its metrics" grep -q '^wa_' "$M/$p.prom"
done
cat "$M"/*.prom >"$T/all.prom"

# names FILE: the wa_ metric names FILE's queries use, one a line.
names() {
	grep -o 'wa_[a-z0-9_]*' "$1" | sort -u
}
# missing: the names on stdin that no program's file has.
missing() {
	while read -r n; do
		grep -Eq "^${n}[{ ]" "$T/all.prom" || echo "$n"
	done
}
# Whole files: a name in a description must exist too.
ok "the dashboard names metrics" test "$(names "$DASH" | wc -l)" -gt 10
is "$(names "$DASH" | missing | tr '\n' ' ')" "" \
    "every metric the dashboard names is in some program's file"
ok "the rules name metrics" test "$(names "$RULES" | wc -l)" -gt 5
is "$(names "$RULES" | missing | tr '\n' ' ')" "" \
    "every metric the rules name is in some program's file"
is "$(printf 'wa_send_in_flight\nwa_no_such_metric\n' | missing)" \
    wa_no_such_metric "the check finds a name no program writes"
# What the issue asks to watch, each in a rule or a panel.
for m in wa_throttle_rate wa_send_results_total wa_send_errors_total \
    wa_send_pauses_total wa_send_halts_total wa_send_in_flight \
    wa_record_batch_seconds wa_status_ingest_lag_seconds \
    'wa_record_results_total{outcome="unknown"'; do
	ok "$m is watched" grep -qF "$m" "$DASH" "$RULES"
done
done_testing
