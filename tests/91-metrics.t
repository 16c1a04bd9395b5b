#!/bin/sh
# Metrics that coexist: two pipelines' --metrics files, every program's,
# in one directory read by prometheus-node-exporter's textfile collector,
# which refuses two series of one name with the same labels. Each file
# passes `promtool check metrics`. Every series carries program and
# wa_instance (the file's name) and what --metrics-label adds.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"

NE=$(command -v prometheus-node-exporter || command -v node_exporter)
[ -n "$NE" ] || skip_all 'no prometheus-node-exporter (Debian package prometheus-node-exporter: make deps)'
command -v promtool >/dev/null ||
    skip_all 'no promtool (Debian package prometheus: make deps)'

pg_start
fake_start --rate 0 --pair-ms 0
P=$T/prom
mkdir "$P"

# Two pipelines, one campaign each, one number: every stage's file.
for i in 1 2; do
	c=$(campaign 20)
	wa-claim --once -c "$c" --metrics "$P/claim-$i.prom" 2>>"$T/err" |
	    wa-throttle -r 1000 --metrics "$P/throttle-$i.prom" 2>>"$T/err" |
	    wa-send --metrics "$P/send-$i.prom" 2>>"$T/err" |
	    wa-record --metrics "$P/record-$i.prom" \
	    --metrics-label pipeline="campaign $c" >/dev/null 2>>"$T/err"
	is $? 0 "pipeline $i: exits 0"
done
# Two of the status side too.
mkdir "$T/spool"
for i in 1 2; do
	WA_APP_SECRET=s WA_VERIFY_TOKEN=v wa-webhook -s "$T/spool" \
	    --listen 127.0.0.1:0 --port-file "$T/port$i" \
	    --metrics "$P/webhook-$i.prom" 2>>"$T/err" &
	wh=$!
	t_pids="$t_pids $wh"
	wait_for 30 test -s "$T/port$i"
	metrics_now "$wh" "$P/webhook-$i.prom"
	kill -TERM "$wh"
	wait "$wh"
done
for i in 1 2; do
	wa-status-ingest --once --follow "$T/spool" \
	    --metrics "$P/ingest-$i.prom" 2>>"$T/err"
done
ls "$P" >"$T/files"
is "$(grep -c '\.prom$' "$T/files")" 12 'twelve files, two of each program'

# Each series names its program and instance; --metrics-label adds more.
like "$(grep '^wa_send_in_flight ' "$P/send-1.prom" || grep '^wa_send_in_flight{' "$P/send-1.prom")" \
    '^wa_send_in_flight\{program="wa-send",wa_instance="send-1"\} ' \
    'a series carries program and wa_instance'
like "$(grep '^wa_claim_rows_total' "$P/claim-2.prom")" \
    'campaign="[0-9]+"' 'wa-claim adds its campaign'
like "$(grep '^wa_record_' "$P/record-1.prom" | head -1)" \
    'pipeline="campaign [0-9]+"' '--metrics-label adds a label'
exits 64 'a bad label name is a usage error' \
    sh -c 'wa-send --metrics-label "9x=1" </dev/null 2>/dev/null'

# promtool over every file.
for f in "$P"/*.prom; do
	out=$(promtool check metrics <"$f" 2>&1)
	is "$out" '' "promtool check metrics: $(basename "$f")"
done

# The textfile collector, alone, on a free port.
port=$(free_port)
bg "$NE" --web.listen-address="127.0.0.1:$port" \
    --collector.disable-defaults --collector.textfile \
    --collector.textfile.directory="$P" 2>"$T/ne.err"
scrape() {
	curl -sf "http://127.0.0.1:$port/metrics" >"$T/scrape"
}
ok 'node exporter answers' wait_for 30 scrape
is "$(grep -c '^node_textfile_mtime_seconds{' "$T/scrape")" 12 \
    'it read all twelve files'
is "$(grep '^node_textfile_scrape_error ' "$T/scrape")" \
    'node_textfile_scrape_error 0' 'without an error'
is "$(grep -c '^wa_send_in_flight{' "$T/scrape")" 2 \
    'both pipelines'"'"' series are there'

ok 'no collision logged' sh -c "! grep -q 'collected before' '$T/ne.err'"

# The check can fail: a file with the same series as another (one value
# changed) is an error the collector logs, and its series is dropped.
sed 's/^\(wa_send_in_flight[{ ].*\) [0-9.e+-]*$/\1 99/' "$P/send-1.prom" \
    >"$P/copy.prom.tmp"
mv "$P/copy.prom.tmp" "$P/copy.prom"
collision() {
	scrape
	grep -q 'collected before with the same name and label values' \
	    "$T/ne.err"
}
ok 'the same series in two files is refused (so the check works)' \
    wait_for 30 collision

done_testing
