#!/bin/sh
# The messaging limit is a business portfolio's (Meta, since October
# 2025): numbers put in one portfolio share its count of people messaged
# in the rolling period, across their campaigns; a person counts once
# whichever number messaged them; a person who wrote to the number in
# the last 24 hours (an open customer-service window) is not counted. A
# number alone brings its limit and its people when it joins. The tier
# can be read from the Graph API (limit --fetch), and what the API says
# wrong or not at all changes nothing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"
pg_start
N1=106540352242901
N2=106540352242902
N3=106540352242903

# camp NUMBER FROM TO: a running campaign on NUMBER with the people
# +1555 FROM..TO (7 digits); prints its id.
camp() {
	wa-campaign create --name "p$2" --phone-number-id "$1" \
	    --template reminder >"$T/cid" || return 1
	sql "insert into campaign_recipients (campaign_id, phone)
	    select $(cat "$T/cid"), '+1555' || lpad(g::text, 7, '0')
	    from generate_series($2, $3) g" >/dev/null
	wa-campaign start --no-check "$(cat "$T/cid")" 2>/dev/null
	cat "$T/cid"
}
count() {
	sql "select count(*) from campaign_recipients where $1"
}

wa-campaign limit --portfolio acme $N1 $N2 >"$T/out"
is "$?" 0 "limit --portfolio: two numbers in one"
is "$(cat "$T/out")" "acme: unlimited" "... no limit yet"
wa-campaign limit acme 250 >"$T/out"
is "$(cat "$T/out")" \
    "acme (numbers $N1, $N2): 250 people per 24 h; 0 used, 250 left" \
    "a portfolio's limit, shown with its numbers"
like "$(wa-campaign limit $N2 2>&1)" "^acme \\(numbers" \
    "a number's limit is its portfolio's"

# Two campaigns, one on each number, 200 people each: 250 in all.
a=$(camp $N1 1 200)
b=$(camp $N2 201 400)
wa-claim -c "$a" --once -n 1000 >"$T/a.out" 2>/dev/null
wa-claim -c "$b" --once -n 1000 >"$T/b.out" 2>"$T/b.err"
is "$(cat "$T/a.out" "$T/b.out" | wc -l | tr -d ' ')" 250 \
    "two numbers of one portfolio message 250 people in all, not 500"
like "$(cat "$T/b.err")" "campaign $b: its portfolio acme has messaged its limit of 250 people in 86400 s" \
    "wa-claim says the portfolio's limit is reached"
like "$(wa-campaign status "$b")" "messaging limit of portfolio acme: 250 people per 24 h; 250 used, 0 left" \
    "status names the portfolio"

# A person messaged by one number goes free on the other.
c=$(camp $N2 1 3)
wa-claim -c "$c" --once >"$T/c.out" 2>/dev/null
is "$(wc -l <"$T/c.out" | tr -d ' ')" 3 \
    "people one number messaged are not counted again by the other"

# A person who wrote to the number today goes free (an open window);
# one who wrote to another number, or two days ago, does not.
sql "insert into inbound_messages (wamid, phone, phone_number_id, type,
    sent_at, raw) values
    ('wamid.w1', '+15550000901', '$N1', 'text', now() - interval '1 hour', '{}'),
    ('wamid.w2', '+15550000902', '$N2', 'text', now() - interval '1 hour', '{}'),
    ('wamid.w3', '+15550000903', '$N1', 'text', now() - interval '2 days', '{}')" \
    >/dev/null
d=$(camp $N1 901 903)
wa-claim -c "$d" --once >"$T/d.out" 2>/dev/null
is "$(jq -r .to "$T/d.out")" "+15550000901" \
    "the limit spent, only the person whose window with the number is open goes"
like "$(wa-campaign limit acme)" "250 used, 0 left" "... and is not counted"

# A number alone joins, with its limit and its people: the portfolio
# keeps the higher limit (Meta's rule), the people are counted there.
wa-campaign limit $N3 2000 >/dev/null
e=$(camp $N3 5001 5002)
wa-claim -c "$e" --once >/dev/null 2>&1
wa-campaign limit --portfolio acme $N3 >"$T/out"
like "$(cat "$T/out")" \
    "^acme \\(numbers $N1, $N2, $N3\\): 2000 people per 24 h; 252 used, 1748 left; " \
    "a number joining brings its 2,000 and its two people"
is "$(sql "select count(*) from messaging_limits where portfolio = '$N3'")" 0 \
    "... and has no limit of its own left"
wa-campaign limit --portfolio acme $N3 >/dev/null
like "$(wa-campaign limit acme)" "252 used" "joining again changes nothing"

# --fetch: the tier Meta gives the number is its portfolio's.
printf '[{"id":"%s","whatsapp_business_manager_messaging_limit":"TIER_10K","messaging_limit_tier":"TIER_10K"},
{"id":"%s","whatsapp_business_manager_messaging_limit":"TIER_NOT_SET"},
{"id":"%s","whatsapp_business_manager_messaging_limit":"TIER_UNLIMITED","messaging_limit_tier":"TIER_250"}]\n' \
    $N1 $N2 $N3 >"$T/numbers.json"
fake_start --rate 0 --numbers "$T/numbers.json"
wa-campaign limit --fetch $N1 >"$T/out" 2>"$T/err"
is "$?" 0 "limit --fetch: 0"
is "$(head -1 "$T/out")" "$N1: the Graph API says TIER_10K" "... says what Meta said"
like "$(tail -1 "$T/out")" "^acme .*: 10000 people per 24 h; 252 used" \
    "... and the portfolio's limit is 10,000, its count kept"
is "$(jq -r 'select(.method == "GET") | .path' "$FAKE_LOG" | tail -1)" \
    "/$GRAPH_VERSION/$N1" "one GET of the number, nothing else"
wa-campaign limit --fetch $N2 >/dev/null 2>"$T/err"
is "$?" 65 "a number Meta gives no tier: 65"
like "$(cat "$T/err")" "no messaging limit \\(whatsapp_business_manager_messaging_limit: TIER_NOT_SET\\); no limit changed" \
    "... saying so"
like "$(wa-campaign limit acme)" "10000 people" "... the limit unchanged"
WA_API_BASE=http://127.0.0.1:$FAKE_PORT/v23.0 wa-campaign limit --fetch $N3 \
    >"$T/out" 2>&1
is "$(head -1 "$T/out")" "$N3: the Graph API says TIER_250" \
    "v23.0 reads messaging_limit_tier"
wa-campaign limit --fetch $N3 >/dev/null 2>&1
like "$(wa-campaign limit acme)" "^acme .*: unlimited$" "TIER_UNLIMITED: unlimited"
fake_stop
wa-campaign limit --fetch $N1 >/dev/null 2>"$T/err"
is "$?" 69 "the API away: 69"
like "$(cat "$T/err")" "no limit changed" "... nothing changed"
like "$(wa-campaign limit acme)" "unlimited" "... indeed"

# Stopped while waiting at the portfolio's limit: 75, nothing lost.
# (Unlimited kept no people: 250 of these 260 go, then it waits.)
wa-campaign limit acme 250 >/dev/null
f=$(camp $N2 7001 7260)
bg wa-claim -c "$f" --poll-ms 50 >"$T/f.out" 2>"$T/f.err"
claimer=$!
wait_for 30 grep -q "its portfolio acme has messaged its limit" "$T/f.err"
ok "a running wa-claim waits at the portfolio's limit" test "$?" = 0
kill -TERM "$claimer"
wait "$claimer"
is "$?" 75 "SIGTERM while waiting: 75"
is "$(count "campaign_id = $f and status = 'pending'")|$(wc -l <"$T/f.out" |
    tr -d ' ')" "10|250" "... the 250 claimed written out, the rest pending"
exits 64 "--period without a limit is refused" \
    wa-campaign limit --portfolio acme $N1 --period 60 2>/dev/null
exits 64 "--fetch with --portfolio is refused" \
    wa-campaign limit --fetch --portfolio acme $N1 2>/dev/null
done_testing
