#!/bin/sh
# bench/status-race.sh [PEOPLE [CAMPAIGNS]]: what a status costs Postgres
# when it comes before its result (the everyday race of a fast webhook:
# the row its callback data names has no wamid yet), for people who are
# in one campaign, and for people who are in CAMPAIGNS (default 50). Such
# a status's wamid is looked for among its person's rows (schema 10: no
# index on the wamid; pg/statusdb.c's ROWS_OF), so every row of theirs is
# read; before, one index probe found it.
#
# Each side: PEOPLE (default 10,000) people in 1 or CAMPAIGNS campaigns,
# the earlier ones sent, the last one's rows sending without a wamid; a
# sent status for each row of the last, with its callback data and its
# person's number, one body a line, through wa-status-ingest (batches of
# 1,000). Prints Postgres's CPU a status (the whole cluster's, from
# /proc) and the statuses applied.
PEOPLE=${1:-10000}
CAMPAIGNS=${2:-50}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
pg_up
tag=$(sql "select tag from wapipe_deployment")
first=1
for k in 1 "$CAMPAIGNS"; do
	last=$((first + PEOPLE - 1))
	i=0
	while [ "$i" -lt "$k" ]; do
		c=$(campaign 0)
		recipients "$c" "$first" "$last"
		i=$((i + 1))
	done
	sql "update campaign_recipients set status = 'sent', attempt = 1,
	    wamid = 'wamid.race.' || id
	    where phone between '+1555' || lpad('$first', 7, '0')
	    and '+1555' || lpad('$last', 7, '0') and campaign_id <> $c;
	    update campaign_recipients set status = 'sending', attempt = 1
	    where campaign_id = $c" >/dev/null
	sql "vacuum analyze" >/dev/null
	sql "select json_build_object('object', 'whatsapp_business_account',
	    'entry', json_build_array(json_build_object('id', '1',
	    'changes', json_build_array(json_build_object('field',
	    'messages', 'value', json_build_object('messaging_product',
	    'whatsapp', 'statuses', json_build_array(json_build_object(
	    'id', 'wamid.race.' || id, 'status', 'sent',
	    'timestamp', '1750000000', 'recipient_id', substr(phone, 2),
	    'biz_opaque_callback_data', 'wapipe:$tag:' || id || ':1'))))))))
	    from campaign_recipients where campaign_id = $c" >"$T/bodies"
	p0=$(pgticks)
	wa-status-ingest -n 1000 <"$T/bodies" 2>>"$T/err" ||
	    bail "wa-status-ingest: $(tail -3 "$T/err")"
	p1=$(pgticks)
	n=$(sql "select count(*) from campaign_recipients
	    where campaign_id = $c and status = 'sent'")
	echo "people in $k campaign(s): $n of $PEOPLE statuses applied," \
	    "postgres $(us $((p1 - p0)) "$PEOPLE") us/status"
	first=$((last + 1))
done
