#!/bin/sh
# demo.sh: a whole campaign, from import to report.
#
# The embedded default (no recipients file named; an API token in the
# environment is left alone and not used): a throwaway
# Postgres, wa-fake-api standing in for Meta (80/s limit, ~250 ms latency,
# some failures, signed status webhooks), wa-webhook and wa-status-ingest
# for the statuses; a campaign of DEMO_RECIPIENTS (3000) made-up numbers
# checked against the API first (wa-campaign check: the template, the
# number, every row's parameters), priced (a made-up rate card in Meta's
# layout, wa-campaign estimate), then sent by wa-campaign run (wa-claim |
# wa-throttle | wa-send | wa-record, wa-reconcile for the stragglers,
# reruns for retries); the spend the status webhooks' pricing adds up
# to; the report; everything removed at the end.
#
# A real campaign, when a recipients file is named: set WA_TOKEN or
# WA_TOKEN_FILE, Postgres (DATABASE_URL
# or PG*, schema loaded), WA_PHONE_NUMBER_ID, WA_TEMPLATE (and
# WA_TEMPLATE_LANG, default en_US), WA_WABA_ID (the account of the
# template), and name the recipients' CSV:
#   scripts/demo.sh recipients.csv
# WA_RATE_CARD, a rate card as Meta publishes it, is loaded first, and
# WA_TEMPLATE_CATEGORY (default marketing) prices the estimate.
# Status webhooks then reach your own wa-webhook (see README).
set -u
BIN=${WA_BIN:-$(cd "$(dirname "$0")/.." && pwd)/bin}
TOP=$(cd "$(dirname "$0")/.." && pwd)
PATH=$BIN:$PATH
RATE=${DEMO_RATE:-70}
D=$(mktemp -d /tmp/wapipe-demo.XXXXXX)
chmod 755 "$D"
pids=""

say() {
	printf 'demo: %s\n' "$*" >&2
}

die() {
	say "$*"
	exit 1
}

cleanup() {
	for p in $pids; do
		kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
	pgtmp_stop 2>/dev/null
	rm -rf "$D"
}

# started NAME PORTFILE: waits for a server to write its port; prints it.
started() {
	i=0
	while [ ! -s "$2" ]; do
		i=$((i + 1))
		[ "$i" -gt 200 ] && die "$1 did not start: $(cat "$D/$1.err")"
		sleep 0.05
	done
	cat "$2"
}

# embedded: everything Meta and the operator would provide, on loopback.
embedded() {
	# shellcheck source=scripts/pgtmp.sh
	. "$TOP/scripts/pgtmp.sh"
	say "starting a throwaway Postgres in $D"
	pgtmp_start "$D/pg" || die "no Postgres"
	psql -q -v ON_ERROR_STOP=1 -f "$TOP/sql/schema.sql" >/dev/null ||
	    die "schema did not load"
	unset WA_TOKEN_FILE WA_APP_SECRET_FILE
	WA_TOKEN=demo-token-$$
	WA_APP_SECRET=demo-secret-$$
	WA_STATE_DIR=$D/state
	WA_PHONE_NUMBER_ID=106540352242922
	WA_TEMPLATE=vaccination_reminder
	# wa-fake-api's own account, where its templates are.
	WA_WABA_ID=102290129340398
	export WA_TOKEN WA_APP_SECRET WA_STATE_DIR WA_WABA_ID

	wa-webhook --listen 127.0.0.1:0 --port-file "$D/hook.port" \
	    --spool "$D/spool" 2>"$D/wa-webhook.err" &
	pids="$pids $!"
	hook=$(started wa-webhook "$D/hook.port")
	wa-status-ingest --follow "$D/spool" 2>"$D/wa-status-ingest.err" &
	pids="$pids $!"

	# Some numbers fail for good, some once, some lose their answer
	# (the message went out: a webhook settles them), 1% transient.
	wa-fake-api --listen 127.0.0.1:0 --port-file "$D/api.port" \
	    --log "$D/api.log" --rate 80 --latency-ms 250 --jitter-ms 150 \
	    --templates "$WA_TEMPLATE" --category marketing --script 13=131026 \
	    --script 27=once:131000 --script 41=lost --script 0777=131050 \
	    --error-rate 131000:0.01 --webhook-url "http://127.0.0.1:$hook/" \
	    --webhook-delay-ms 500 --read-rate 0.6 --fail-rate 0.02 \
	    --dup-rate 0.05 --reorder-rate 0.05 --reply-rate 0.05 \
	    2>"$D/wa-fake-api.err" &
	pids="$pids $!"
	# At the Graph API version wa-send speaks by default.
	gv=$(wa-send --version | sed -n 's/^Graph API \(v[0-9.]*\) by default$/\1/p')
	WA_API_BASE=http://127.0.0.1:$(started wa-fake-api "$D/api.port")/$gv
	export WA_API_BASE
	unset WA_API_VERSION

	n=${DEMO_RECIPIENTS:-3000}
	say "writing $n recipients (and 2 bad rows and a duplicate) to" \
	    "$D/recipients.csv"
	awk -v n="$n" 'BEGIN {
		print "phone,name,date"
		for (i = 1; i <= n; i++)
			printf "+1 201 %03d %04d,Person %d,12 Dec\n",
			    555 + int(i / 10000), i % 10000, i
		print "+55 11 98765 4321,Pessoa,12 Dec"
		print "+1 809 555 0100,Persona,12 Dec"
		print "12345,Too Short,12 Dec"
		print "+1 201 555 0001,Duplicate,12 Dec"
		print "not a number,Nobody,12 Dec"
	}' >"$D/recipients.csv"
	CSV=$D/recipients.csv
	UNKNOWN_AFTER=5
	# Made-up prices in USD, in the layout of the rate cards Meta links
	# from developers.facebook.com/documentation/business-messaging/
	# whatsapp/pricing (title, notes, a header cell across two lines).
	WA_RATE_CARD=$D/rates.csv
	cat >"$WA_RATE_CARD" <<-'EOF'
	Cost per message in USD (made up for the demo),,,,,,
	Not Meta's prices,,,,,,
	Market,Currency,Marketing,Utility,Authentication,"Authentication-
	International",Service
	Brazil,$US,0.0625,0.0068,0.0068,n/a,0.0068
	North America,$US,0.0250,0.0034,0.0034,n/a,0.0034
	Rest of Latin America,$US,0.0740,0.0113,0.0113,n/a,0.0113
	Other,$US,0.0604,0.0077,0.0077,n/a,0.0077
	EOF
}

# campaign: the same steps for a rehearsal and for real.
campaign() {
	id=$(wa-campaign create --name "demo $(date +%F)" \
	    --phone-number-id "$WA_PHONE_NUMBER_ID" --template "$WA_TEMPLATE" \
	    --lang "${WA_TEMPLATE_LANG:-en_US}" --on-unknown resend) ||
	    die "create failed"
	say "campaign $id: importing $CSV"
	wa-campaign import "$id" "$CSV"
	say "campaign $id: asking the API whether it can go (wa-campaign check)"
	wa-campaign check "$id" || die "the check refused campaign $id"
	if [ -n "${WA_RATE_CARD:-}" ]; then
		wa-campaign rates load "$WA_RATE_CARD" || die "bad rate card"
		say "campaign $id: what it will cost at most"
		wa-campaign estimate --category \
		    "${WA_TEMPLATE_CATEGORY:-marketing}" "$id"
	fi
	# Checked just now: start and run need not ask again.
	wa-campaign start --no-check "$id" || die "start failed"
	say "campaign $id: sending at $RATE/s (wa-campaign run)"
	# The pipeline, reconcile rounds and reruns for retries, to the end.
	wa-campaign run --no-check "$id" -r "$RATE" --stale-after 60 \
	    --unknown-after "$UNKNOWN_AFTER"
	rc=$?
	case $rc in
	0) ;;
	75) say "campaign $id was paused or stopped:" ;;
	79) say "campaign $id halted (the reason is above):" ;;
	*) die "wa-campaign run exited $rc" ;;
	esac
	# The last statuses are still on their way: give them a moment.
	sleep 3
	wa-campaign status "$id"
	# 5% of the people answer (wa-fake-api --reply-rate): their replies.
	say "campaign $id: the first replies (wa-campaign replies)"
	wa-campaign replies "$id" >"$D/replies" && head -3 "$D/replies"
}

trap cleanup EXIT
trap 'exit 1' INT TERM
if [ $# -gt 1 ]; then
	die "usage: demo.sh [recipients.csv]"
elif [ $# -eq 1 ]; then
	[ -n "${WA_TOKEN:-}${WA_TOKEN_FILE:-}" ] ||
	    die "a real campaign needs WA_TOKEN_FILE (or WA_TOKEN) set"
	: "${WA_PHONE_NUMBER_ID:?}" "${WA_TEMPLATE:?}" "${WA_WABA_ID:?}"
	CSV=$1
	UNKNOWN_AFTER=600
else
	embedded
fi
start=$(date +%s)
campaign
say "done in $(($(date +%s) - start)) s"
