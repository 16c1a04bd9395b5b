#!/bin/sh
# sql/schema.sql brings a database made by an earlier version up to date
# in place, its data kept, and may be applied any number of times.
. "$(dirname "$0")/lib.sh"
# The schema as it was before recipient_errors and the outage columns.
OLD=36f7f41
git -C "$TOP" show "$OLD:sql/schema.sql" >"$T/old.sql" 2>/dev/null ||
    skip_all "no git history to take the old schema from"
pgtmp_start "$T/pg" -c fsync=off 2>"$T/pg.err" ||
    bail "no Postgres: $(cat "$T/pg.err")"
psql -X -q -v ON_ERROR_STOP=1 -f "$T/old.sql" >/dev/null
# And the index on the rows' phone that version 7 had while unreleased.
sql "create index campaign_recipients_phone on campaign_recipients (phone)"
c=$(campaign 5)
sql "update campaign_recipients set status = 'failed', error_code = 131026,
    error_title = 'old' where id = 1"
for i in 1 2; do
	psql -X -q -v ON_ERROR_STOP=1 -f "$TOP/sql/schema.sql" >"$T/out" 2>&1
	is "$?" 0 "applied over the old schema, time $i"
done
is "$(sql "select count(*) || ' ' || max(error_code) from
    campaign_recipients where campaign_id = $c")" "5 131026" \
    "the rows and their errors are kept"
is "$(sql "select outage_results from campaigns where id = $c")" 0 \
    "campaigns have the outage columns"
is "$(sql "select count(*) from recipient_errors")" 0 \
    "recipient_errors exists"
wa-claim -c "$c" --once >/dev/null 2>&1
printf '{"id":2,"attempt":1,"result":{"outcome":"retry","error":{"code":131000}}}\n' |
    wa-record >/dev/null
is "$(sql "select count(*) from recipient_errors where recipient_id = 2")" 1 \
    "and wa-record writes to it"

# The campaign's phones: listed beside the rows, the indexes on the
# rows' phone dropped (the replies' lookup has one on the list), and a
# phone the campaign has is still not added twice.
is "$(sql "select count(*) from campaign_phones p join campaign_recipients r
    on r.id = p.recipient_id and r.phone = p.phone
    where p.campaign_id = $c")" 5 "each row's phone is listed, once"
is "$(sql "select count(*) from pg_indexes
    where tablename = 'campaign_recipients' and indexdef like '%phone)%'")" \
    0 "no index on the rows takes a version's phone"
is "$(sql "select count(*) from pg_indexes where tablename = 'campaign_phones'
    and indexdef like '%(phone)'")" 1 "the list has an index on phone alone"
sql "insert into campaign_recipients (campaign_id, phone)
    values ($c, '+15550000099'), ($c, '+15550000003')" 2>"$T/err"
like "$(cat "$T/err")" 'duplicate key value violates unique constraint "campaign_phones_pkey"' \
    "a phone the campaign has fails its statement, as the index did"
sql "insert into campaign_recipients (campaign_id, phone)
    values ($c, '+15550000099')"
is "$(sql "select count(*) from campaign_recipients where campaign_id = $c")" \
    6 "nothing of it was added; a new phone is"
done_testing
