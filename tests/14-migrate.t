#!/bin/sh
# wa-campaign migrate: a database made by release 0.1.0 (its schema taken
# from git history, with data) is brought up to this release's schema in
# place, in one transaction, its data kept, and a campaign then runs on
# it; a second run changes nothing; a database newer than the programs
# is refused; a step that fails leaves nothing half done.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"
# Release 0.1.0: the last commit of its stop.
OLD=cb3fd05
git -C "$TOP" show "$OLD:sql/schema.sql" >"$T/old.sql" 2>/dev/null ||
    skip_all "no git history to take the 0.1.0 schema from"
pgtmp_start "$T/pg" -c fsync=off 2>"$T/pg.err" 7>&- ||
    bail "no Postgres: $(cat "$T/pg.err")"
version() { sql "select max(version) from wapipe_schema"; }

# An empty database: migrate installs the schema.
sql "create database empty" >/dev/null
PGDATABASE=empty wa-campaign migrate >"$T/out" 2>"$T/err"
is "$?" 0 "an empty database: migrate exits 0"
is "$(cat "$T/out")" "schema version 0: upgraded to 10" "... saying so"
is "$(PGDATABASE=empty version)" 10 "... and records version 10"

# 0.1.0, with a campaign half done.
psql -X -q -v ON_ERROR_STOP=1 -f "$T/old.sql" >/dev/null
c=$(campaign 20)
sql "update campaign_recipients set status = 'failed', attempt = 3,
    error_code = 131026, error_title = 'old' where id <= 5" >/dev/null
sql "update campaign_recipients set status = 'sent', attempt = 1,
    wamid = 'wamid.old' || id where id between 6 and 10" >/dev/null
before=$(sql "select md5(string_agg(id || status || attempt ||
    coalesce(wamid, '') || coalesce(error_code::text, ''), ',' order by id))
    from campaign_recipients")

wa-campaign migrate >"$T/out" 2>"$T/err"
is "$?" 0 "0.1.0: migrate exits 0"
is "$(cat "$T/out")" "schema version 1: upgraded to 10" "from version 1 to 10"
is "$(version)" 10 "the version is recorded"
is "$(sql "select md5(string_agg(id || status || attempt ||
    coalesce(wamid, '') || coalesce(error_code::text, ''), ',' order by id))
    from campaign_recipients")" "$before" "every row is kept as it was"
is "$(sql "select count(*) from recipient_errors")" 0 \
    "the new tables are there"
is "$(sql "select outage_results from campaigns where id = $c")" 0 \
    "and the new columns, with their defaults"

wa-campaign migrate >"$T/out" 2>&1
is "$?" 0 "migrate again: exits 0"
is "$(cat "$T/out")" "schema version 10: up to date" "... changing nothing"

# A campaign runs on the upgraded database to its end.
fake_start --rate 0
wa-campaign requeue "$c" >/dev/null
wa-claim -c "$c" 2>"$T/claim.err" | wa-throttle -r 1000 | wa-send |
    wa-record >/dev/null 2>"$T/record.err"
is "$(sql "select count(*) from campaign_recipients where campaign_id = $c
    and status = 'sent'")" 20 "a campaign then runs on it to its end"
is "$(sql "select wamid from campaign_recipients where id = 6")" \
    wamid.old6 "rows sent under 0.1.0 were not sent again"

# Newer than the programs: refused, by migrate and by the file alike.
sql "update wapipe_schema set version = 11" >/dev/null
wa-campaign migrate >"$T/out" 2>"$T/err"
is "$?" 65 "a database newer than the programs: 65"
like "$(cat "$T/err")" "schema is version 11, newer than these programs' \(10\)" \
    "... saying so"
psql -X -q -v ON_ERROR_STOP=1 -f "$TOP/sql/schema.sql" >/dev/null 2>"$T/err"
ok "sql/schema.sql refuses it too" test "$?" -ne 0
like "$(cat "$T/err")" "newer than this one" "... saying so"
is "$(version)" 11 "the version is left alone"

# A step that fails: nothing of it stays. A table in the way of one the
# schema makes (recipient_errors without the column its index needs).
sql "create database broken" >/dev/null
PGDATABASE=broken psql -X -q -v ON_ERROR_STOP=1 -f "$T/old.sql" >/dev/null
PGDATABASE=broken sql "create table recipient_errors (x int)" >/dev/null
PGDATABASE=broken wa-campaign migrate >"$T/out" 2>"$T/err"
is "$?" 69 "a step Postgres refuses: 69"
like "$(cat "$T/err")" "nothing was changed" "... saying nothing changed"
is "$(PGDATABASE=broken sql "select to_regclass('wapipe_schema') is null
    and not exists (select 1 from information_schema.columns
    where table_name = 'campaigns' and column_name = 'outage_results')")" t \
    "and indeed: no version table, no new column"

# Version 2 (the schema before the rules of the road), with a campaign
# half done: upgraded to 10, its rows kept, and the rules then apply to it.
V2=f2ccedb
sql "create database v2" >/dev/null
git -C "$TOP" show "$V2:sql/schema.sql" >"$T/v2.sql"
PGDATABASE=v2 psql -X -q -v ON_ERROR_STOP=1 -f "$T/v2.sql" >/dev/null
c2=$(PGDATABASE=v2 campaign 30)
PGDATABASE=v2 sql "update campaign_recipients set status = 'read',
    attempt = 1, wamid = 'wamid.v2.' || id where id <= 10" >/dev/null
sum2() {
	PGDATABASE=v2 sql "select md5(string_agg(id || status || attempt ||
	    coalesce(wamid, ''), ',' order by id)) from campaign_recipients"
}
before=$(sum2)
PGDATABASE=v2 wa-campaign migrate >"$T/out" 2>"$T/err"
is "$(cat "$T/out")" "schema version 2: upgraded to 10" "from version 2 to 10"
is "$(sum2)" "$before" "... every row kept"
is "$(PGDATABASE=v2 sql "select weight || priority from campaigns
    where id = $c2")" 1normal "... campaigns get the new settings' defaults"
PGDATABASE=v2 sql "insert into suppressions values ('106540352242922',
    '+15550000011', 'test')" >/dev/null
PGDATABASE=v2 wa-claim -c "$c2" 2>/dev/null | wa-throttle -r 1000 |
    wa-send | PGDATABASE=v2 wa-record >/dev/null 2>&1
is "$(PGDATABASE=v2 sql "select status, count(*) from campaign_recipients
    where campaign_id = $c2 group by 1 order by 1" | tr '\n' ' ')" \
    "read|10 sent|19 suppressed|1 " "... and a campaign runs on it, by the new rules"

# older N COMMIT: a database vN made by COMMIT's sql/schema.sql, with a
# campaign of 5 rows (its id printed), then migrated (its words in
# $T/out).
older() {
	sql "create database v$1" >/dev/null
	git -C "$TOP" show "$2:sql/schema.sql" >"$T/v$1.sql"
	PGDATABASE=v$1 psql -X -q -v ON_ERROR_STOP=1 -f "$T/v$1.sql" >/dev/null
	PGDATABASE=v$1 campaign 5
	PGDATABASE=v$1 wa-campaign migrate >"$T/out" 2>"$T/err"
}

# Version 3 (before one run per campaign): upgraded to 10, the table of
# runs made, and run holds and lets go of a campaign on it.
c3=$(older 3 89d6f1a)
is "$(cat "$T/out")" "schema version 3: upgraded to 10" "from version 3 to 10"
PGDATABASE=v3 wa-campaign run -r 1000 "$c3" 2>"$T/err"
is "$?" 0 "... and wa-campaign run takes a campaign to its end on it"
is "$(PGDATABASE=v3 sql "select count(*) from campaign_runs")" 0 \
    "... letting it go at the end"

# Version 4 (before the claim token): upgraded to 10; a wa-claim of the
# release before, still running through the upgrade, calls the claim
# with two arguments and still claims; the new one marks its rows.
c4=$(older 4 abe710f)
is "$(cat "$T/out")" "schema version 4: upgraded to 10" "from version 4 to 10"
is "$(PGDATABASE=v4 sql "select count(*) from wapipe_claim($c4, 2)")" 2 \
    "... the claim of the release before still claims"
PGDATABASE=v4 wa-claim -c "$c4" --once 2>/dev/null >"$T/claimed4"
is "$(PGDATABASE=v4 sql "select count(distinct claim_token)
    from campaign_recipients where campaign_id = $c4
    and status = 'sending' and claim_token is not null")" 1 \
    "... and wa-claim marks the rows it claims with its token"

# Version 5 (before check's WABA id): upgraded to 10; its campaigns keep
# their rows and gain the column check reads.
c5=$(older 5 d1e6540)
is "$(cat "$T/out")" "schema version 5: upgraded to 10" "from version 5 to 10"
is "$(PGDATABASE=v5 sql "select count(*), count(waba_id) from campaigns c
    join campaign_recipients r on r.campaign_id = c.id
    where c.id = $c5")" "5|0" "... its campaign's rows kept, no WABA id yet"

# Version 6 (the last release before scheduling): upgraded to 10; its
# campaigns keep their state and rows.
c6=$(older 6 8e1129d)
is "$(cat "$T/out")" "schema version 6: upgraded to 10" "from version 6 to 10"
is "$(PGDATABASE=v6 sql "select c.state, count(*) from campaigns c
    join campaign_recipients r on r.campaign_id = c.id
    where c.id = $c6 group by 1")" "running|5" "... its campaign's rows kept"

# Version 7 (the last before claims of their own), with rows in flight:
# upgraded to 10, each claim in flight listed, so that wa-reconcile still
# finds the rows a dead pipeline left sending; a claim's rows then stay
# in phase 0 and their claim is listed.
sql "create database v7" >/dev/null
git -C "$TOP" show "df0d676:sql/schema.sql" >"$T/v7.sql"
PGDATABASE=v7 psql -X -q -v ON_ERROR_STOP=1 -f "$T/v7.sql" >/dev/null
c7=$(PGDATABASE=v7 campaign 6)
PGDATABASE=v7 sql "select count(*) from wapipe_claim($c7, 2, 5)" >/dev/null
PGDATABASE=v7 sql "select count(*) from wapipe_claim($c7, 1, 6)" >/dev/null
PGDATABASE=v7 wa-campaign migrate >"$T/out" 2>"$T/err"
is "$(cat "$T/out")" "schema version 7: upgraded to 10" "from version 7 to 10"
is "$(PGDATABASE=v7 sql "select count(*), sum(cardinality(ids))
    from campaign_claims where campaign_id = $c7")" "2|3" \
    "... its rows in flight listed, a claim for each time they were claimed at"
PGDATABASE=v7 wa-reconcile --stale-after 0 >"$T/out" 2>&1
like "$(cat "$T/out")" "campaign $c7: moved 3 rows from sending" \
    "... and wa-reconcile finds them"
PGDATABASE=v7 sql "select count(*) from wapipe_claim($c7, 2, 7)" >/dev/null
is "$(PGDATABASE=v7 sql "select string_agg(distinct phase::text, ',')
    from campaign_recipients where status = 'sending'") $(PGDATABASE=v7 \
    sql "select count(*) from campaign_claims where token = 7")" "0 1" \
    "... a claim after leaves its rows in phase 0, and lists its claim"

# Version 8, with rows in every phase: upgraded to 10, status_at and
# status (what a status changes) made again after every other column but
# phase, the wamid index made on the wamid's key, each row's status, time, phase and wamid kept, its check and
# default kept, the indexes on phase made again.
sql "create database v8" >/dev/null
git -C "$TOP" show "62cd323:sql/schema.sql" >"$T/v8.sql"
PGDATABASE=v8 psql -X -q -v ON_ERROR_STOP=1 -f "$T/v8.sql" >/dev/null
c8=$(PGDATABASE=v8 campaign 9)
PGDATABASE=v8 sql "update campaign_recipients set status = 'read',
    wamid = 'wamid.v8-' || id, status_at = now() - id * interval '1 min'
    where id % 3 = 0 and campaign_id = $c8;
    update campaign_recipients set status = 'unknown', claimed_at = now()
    where id % 3 = 1 and campaign_id = $c8" >/dev/null
PGDATABASE=v8 sql "select count(*) from wapipe_claim($c8, 1, 8)" >/dev/null
rows8="select string_agg(id || status || phase || coalesce(status_at::text,
    '') || coalesce(wamid, ''), ',' order by id) from campaign_recipients"
before=$(PGDATABASE=v8 sql "$rows8")
PGDATABASE=v8 wa-campaign migrate >"$T/out" 2>"$T/err"
is "$(cat "$T/out")" "schema version 8: upgraded to 10" "from version 8 to 10"
is "$(PGDATABASE=v8 sql "$rows8")" "$before" \
    "... every row's status, time, phase and wamid kept"
is "$(PGDATABASE=v8 sql "select string_agg(attname, ' ' order by attnum)
    from pg_attribute where attrelid = 'campaign_recipients'::regclass
    and attnum > 0 and not attisdropped and attnum > (select attnum
    from pg_attribute where attrelid = 'campaign_recipients'::regclass
    and attname = 'pricing')")" "status_at status phase" \
    "... status_at, status and phase now last"
PGDATABASE=v8 sql "insert into campaign_recipients (campaign_id, phone)
    values ($c8, '+15559990001')" >/dev/null
is "$(PGDATABASE=v8 sql "select status || phase from campaign_recipients
    where phone = '+15559990001'")" pending0 "... a new row is pending"
PGDATABASE=v8 sql "update campaign_recipients set status = 'bogus'
    where phone = '+15559990001'" >/dev/null 2>&1
is "$?" 1 "... and the check on status holds"
is "$(PGDATABASE=v8 sql "select count(*) from pg_indexes where tablename =
    'campaign_recipients' and indexdef like '%phase%'")" 2 \
    "... the pending and unsettled indexes made again"
is "$(PGDATABASE=v8 sql "select count(*) from pg_indexes
    where indexname = 'campaign_recipients_wamid'") $(PGDATABASE=v8 sql \
    "select to_regprocedure('wamid_key(text)') is null")" "0 t" \
    "... the wamid index dropped (version 10), and its key's function"
PGDATABASE=v8 wa-reconcile --stale-after 0 >"$T/out" 2>&1
like "$(cat "$T/out")" "campaign $c8: moved 1 rows from sending" \
    "... and wa-reconcile finds the row in flight"

# A version-6 number's limit, with a person counted, is its portfolio's
# after the upgrade: the same limit, the same person counted.
sql "create database v6l" >/dev/null
PGDATABASE=v6l psql -X -q -v ON_ERROR_STOP=1 -f "$T/v6.sql" >/dev/null
PGDATABASE=v6l sql "select messaging_limit_set('106540352242922', 250,
    null); insert into limit_contacts values ('106540352242922',
    '+15550000001', now()); select messaging_limit_set('106540352242922',
    250, null)" >/dev/null
PGDATABASE=v6l wa-campaign migrate >/dev/null 2>&1
like "$(PGDATABASE=v6l wa-campaign limit 106540352242922)" \
    '^106540352242922: 250 people per 24 h; 1 used, 249 left; the next place frees at [0-9T:-]+Z$' \
    "a version-6 number's limit and count go on as its portfolio's"
is "$(PGDATABASE=v6l sql "select portfolio_of('106540352242922')")" \
    106540352242922 "... a portfolio of one, named by the number's id"

# Postgres away: 69.
pgtmp_stop
wa-campaign migrate >/dev/null 2>"$T/err"
is "$?" 69 "Postgres away: 69"
done_testing
