#!/bin/sh
# wa-campaign import and the rules of the road: numbers checked against
# the real numbering plans (libphonenumber), each recipient's time zone
# from its country (tzdata's zone1970.tab; none where the country keeps
# several times), a per-row expires_at, and suppressed numbers skipped,
# counted and kept in --reject with their reason.
. "$(dirname "$0")/lib.sh"
pg_start

new() {
	wa-campaign create --name t --phone-number-id 106540352242922 \
	    --template reminder
}
col() {
	sql "select coalesce($2::text, 'NULL') from campaign_recipients
	    where campaign_id = $1 and phone = '$3'"
}

# Numbers: by the plans, not by their digit count.
c=$(new)
cat >"$T/a.csv" <<'EOF'
phone,name
+39 347 123 4567,Ana
+1 201 555 0123,Bo
+1 555 000 0001,Cy
+49 151 23456789,Di
+34 912 345 678,Ed
+44 07911 123456,Fay
+999 1234 5678,Gus
+54 11 1234 5678,Hal
EOF
wa-campaign import --reject "$T/rej" "$c" "$T/a.csv" 2>"$T/err"
is "$?" 65 "numbers no plan has: exit 65"
is "$(sed 's/^[^:]*: [^:]*:\([0-9]*\): /\1 /' "$T/err")" "4 phone '+15550000001': no number in the plan of +1 (US and others) starts so
7 phone '+4407911123456': its plan writes it +447911123456
8 phone '+99912345678': no country's code starts it
wa-campaign: $T/a.csv: 5 imported, 0 skipped as duplicates, 0 suppressed, 3 rejected" \
    "each refused by its line, with why (seven digits and more are not enough)"
is "$(cat "$T/rej")" "$(sed -n '1p;4p;7p;8p' "$T/a.csv")" \
    "--reject gets the header and those rows, as they were"
is "$(col "$c" tz +393471234567)" Europe/Rome \
    "an Italian mobile: Europe/Rome"
is "$(col "$c" tz +12015550123)" NULL \
    "a US number (the US spans zones): none, the campaign's --tz stands"
is "$(col "$c" tz +34912345678)" NULL \
    "Spain (the Canaries keep another time): none"
is "$(col "$c" tz +4915123456789)" Europe/Berlin \
    "Germany (Busingen's zone keeps Berlin's rule): Europe/Berlin"
is "$(col "$c" tz +541112345678)" America/Argentina/Buenos_Aires \
    "Argentina (a dozen zones, one time): its first"

# The zones are ones Postgres knows: the claim reads them.
sql "update campaigns set window_from = '00:00', window_to = '23:59:59'
    where id = $c"
wa-campaign start --no-check "$c"
wa-claim -c "$c" --once >"$T/claim" 2>"$T/claim.err"
is "$(grep -c 'time zone' "$T/claim.err")" 0 "wa-claim reads their zones"
is "$(grep -c . "$T/claim")" 5 "and claims every one"

# Expiry: an RFC 3339 column, empty for none; NDJSON's field, null for
# none. A bad one rejects its row.
c=$(new)
{
	echo 'phone,name,Expires_At'
	echo '+393471234501,a,2026-12-03T09:00:00+01:00'
	echo '+393471234502,b,'
	echo '+393471234503,c, 2026-12-03t08:00:00.25z '
} >"$T/b.csv"
cat >>"$T/b.csv" <<'EOF'
+393471234504,d,2026-02-29T00:00:00Z
+393471234505,e,2026-12-03T09:00:00
+393471234506,f,tomorrow
+393471234507,g,2026-12-03T09:00:00+16:00
EOF
wa-campaign import --reject "$T/rej2" "$c" "$T/b.csv" 2>"$T/err"
is "$?" 65 "bad expiries: exit 65"
is "$(sed 's/^[^:]*: [^:]*:\([0-9]*\): /\1 /' "$T/err")" "5 expires_at '2026-02-29T00:00:00Z': a date or time that is not on the calendar
6 expires_at '2026-12-03T09:00:00': not an RFC 3339 timestamp (2026-12-03T09:00:00+01:00, or ...Z)
7 expires_at 'tomorrow': not an RFC 3339 timestamp (2026-12-03T09:00:00+01:00, or ...Z)
8 expires_at '2026-12-03T09:00:00+16:00': an offset beyond 15:59
wa-campaign: $T/b.csv: 3 imported, 0 skipped as duplicates, 0 suppressed, 4 rejected" \
    "each bad expiry by its line"
is "$(cat "$T/rej2")" "$(sed -n '1p;5,8p' "$T/b.csv")" "and kept in --reject"
is "$(sql "set timezone = 'UTC'; select phone, coalesce(expires_at::text,
    'NULL'), template_params from campaign_recipients where campaign_id = $c
    order by phone")" "+393471234501|2026-12-03 08:00:00+00|[\"a\"]
+393471234502|NULL|[\"b\"]
+393471234503|2026-12-03 08:00:00.25+00|[\"c\"]" \
    "stored as timestamptz; the column is no template parameter"

cat >"$T/c.ndjson" <<'EOF'
{"phone":"+393471234601","expires_at":"2027-01-01T00:00:00-05:00"}
{"phone":"+393471234602","expires_at":null,"params":["x"]}
{"phone":"+393471234603","expires_at":1767225600}
{"phone":"+393471234604","expires_at":"2027-13-01T00:00:00Z"}
EOF
wa-campaign import --reject "$T/rej3" "$c" "$T/c.ndjson" 2>"$T/err"
is "$?" 65 "NDJSON: bad expiries, exit 65"
is "$(sed 's/^[^:]*: [^:]*:\([0-9]*\): /\1 /' "$T/err" | head -2)" "3 \"expires_at\" is not a string
4 expires_at '2027-13-01T00:00:00Z': a date or time that is not on the calendar" \
    "each by its line"
is "$(sql "set timezone = 'UTC'; select coalesce(expires_at::text, 'NULL')
    from campaign_recipients where phone in ('+393471234601',
    '+393471234602') order by phone")" "2027-01-01 05:00:00+00
NULL" "NDJSON: stored, or none"

# Suppressions: the campaign's number's and those of every number ('*');
# another number's do not count.
c=$(new)
sql "insert into suppressions (scope, phone, reason) values
    ('106540352242922', '+393471234701', 'replied STOP'),
    ('*', '+393471234701', 'by hand'),
    ('*', '+393471234702', 'error 131050'),
    ('106540352242999', '+393471234703', 'another number''s')"
cat >"$T/d.csv" <<'EOF'
phone,name
+39 347 123 4701,a
+393471234702,b
+393471234703,c
+393471234704,d
+393471234702,b again
EOF
wa-campaign import --reject "$T/rej4" "$c" "$T/d.csv" 2>"$T/err"
is "$?" 0 "suppressed numbers alone: exit 0 (the file had no fault)"
is "$(cat "$T/err")" "wa-campaign: $T/d.csv:2: suppressed: replied STOP
wa-campaign: $T/d.csv:3: suppressed: error 131050
wa-campaign: $T/d.csv:6: suppressed: error 131050
wa-campaign: $T/d.csv: 2 imported, 0 skipped as duplicates, 3 suppressed, 0 rejected" \
    "each by its line and reason (the number's own first), then counted"
is "$(cat "$T/rej4")" "$(sed -n '1,3p;6p' "$T/d.csv")" \
    "and kept in --reject, as they were"
is "$(sql "select string_agg(phone, ' ' order by phone)
    from campaign_recipients where campaign_id = $c")" \
    "+393471234703 +393471234704" "the others are imported"

# Zones come from $TZDIR's table: one Postgres does not know is not
# used (a claim would fail on it); no table, no zones.
mkdir "$T/tz" "$T/notz"
printf '# a table\nIT,SM,VA\t+4154+01229\tEurope/Nowhere\nFR,MC\t+4852+00220\tEurope/Paris\n' \
    >"$T/tz/zone1970.tab"
c=$(new)
printf 'phone\n+393471234801\n+33612345678\n' >"$T/e.csv"
TZDIR=$T/tz wa-campaign import "$c" "$T/e.csv" 2>"$T/err"
is "$?" 0 "a zone Postgres does not know: exit 0"
like "$(cat "$T/err")" "time zone Europe/Nowhere is unknown to Postgres" \
    "says so"
is "$(col "$c" tz +393471234801)" NULL "and the row has none"
is "$(col "$c" tz +33612345678)" Europe/Paris "the others keep theirs"
c=$(new)
TZDIR=$T/notz wa-campaign import "$c" "$T/e.csv" 2>"$T/err"
is "$?" 0 "no zone table: exit 0"
like "$(cat "$T/err")" "no zone1970.tab or zone.tab in $T/notz" "says so"
is "$(sql "select count(*) from campaign_recipients where campaign_id = $c
    and tz is null")" 2 "and no row has a zone"

done_testing
