#!/bin/sh
# What a campaign costs: wa-campaign rates load (Meta's rate card, its
# quoted header cell with a line break; bad cards refused by file:line,
# the card before kept), estimate per market and in all (+1 809 is Rest
# of Latin America), the pricing of each message stored from its status
# webhooks by wa-status-ingest, status --json's billable and spend, the
# report's spend; and wa-fake-api's webhooks priced by its --category.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"
pg_start

# The card: made-up prices in BRL, in the layout of the rate cards Meta
# links from its pricing page
# (developers.facebook.com/documentation/business-messaging/whatsapp/pricing):
# a title line, notes, the header whose Authentication-International
# cell is quoted across a line break, a row per market, n/a where a
# category is not sold. fuzz/corpus/ratecard/brl is the same card.
card=$TOP/fuzz/corpus/ratecard/brl
cp "$card" "$T/brl.csv"

json() {
	wa-campaign rates show --json
}

# Loading the good card.
wa-campaign rates load "$T/brl.csv" 2>"$T/err"
is "$?" 0 "rates load: Meta's layout is taken (exit 0)"
like "$(cat "$T/err")" "brl.csv: 41 markets in BRL loaded \(\"Cost per message in BRL on the WhatsApp Business Platform, effective October 1, 2026\"\)" \
    "it says how many markets, the currency and the title"
is "$(json | jq -c '[.currency, (.markets | length)]')" '["BRL",41]' \
    "41 markets in BRL"
is "$(json | jq -c '.markets[] | select(.market == "India") |
    [.marketing, .utility, .authentication,
    .["authentication-international"], .service]')" \
    '[0.055,0.0071,0.0071,0.114,0.0071]' \
    "the quoted two-line Authentication-International column is read in its place"
is "$(json | jq -c '.markets[] | select(.market == "Brazil") |
    .["authentication-international"]')" null "n/a is no price"
is "$(json | jq -r '.markets[-1].market')" Other "Other comes last"
loaded=$(json)

# Bad cards: each refused by file:line, the card before kept whole.
refused() {
	wa-campaign rates load "$T/$1" 2>"$T/err"
	is "$?" 65 "$2 (exit 65)"
	like "$(cat "$T/err")" "^wa-campaign: $T/$1:$3: $4; nothing loaded\$" \
	    "... said by file:line: $4"
	is "$(json)" "$loaded" "... and the card loaded before is kept"
}
# The first rows are fine and cheaper: none of them may go in.
sed 's/^Argentina,BRL,0.3210/Argentina,BRL,0.0001/; s/^Chile,/Chilly,/' \
    "$card" >"$T/unknown.csv"
refused unknown.csv "an unknown market" 9 \
    'no market "Chilly" in wapipe.s map of countries to markets .*'
sed 's/,Service$/,Services/' "$card" >"$T/nocolumn.csv"
refused nocolumn.csv "a category column missing" 5 \
    'no column "Service" in the header .*'
sed 's/^Brazil,BRL,0.3100,/Brazil,BRL,0.31O0,/' "$card" >"$T/nan.csv"
refused nan.csv "a price that is not a number" 8 \
    'Brazil: the price for Marketing, "0.31O0", is not a number'
sed 's/^Peru,BRL,/Peru,USD,/' "$card" >"$T/currency.csv"
refused currency.csv "a currency not the other rows'" 23 \
    'Peru: the currency USD, where the rows above have BRL'
sed 's/^International",Service$/International,Service/' "$card" \
    >"$T/open.csv"
refused open.csv "a quoted cell never closed" 5 \
    'a quoted cell is not closed within 1024 bytes'
sed 's/^Egypt,BRL,0.5520,0.0270,0.0270,0.3200,0.0270$/Egypt,BRL,0.5520,0.0270,0.0270,0.3200,/' \
    "$card" >"$T/empty.csv"
refused empty.csv "a price left empty" 11 \
    'Egypt: no price for Service \(n/a where it is not sold\)'
exits 66 "a file that is not there" sh -c \
    'wa-campaign rates load "$1/none.csv" 2>/dev/null' _ "$T"
exits 64 "rates without load or show" sh -c \
    'wa-campaign rates drop 2>/dev/null'

# A campaign of numbers in several markets, as import finds their
# countries: Brazil, the Dominican Republic (+1 809, Rest of Latin
# America), the United States (North America), Italy, Bangladesh (a
# market of its own on this card), and +882 (no country: Other).
c=$(wa-campaign create --name cost --phone-number-id 106540352242922 \
    --template promo)
cat >"$T/people.csv" <<-EOF
	phone
	+55 11 98765 4321
	+55 21 98765 4322
	+55 31 98765 4323
	+1 809 555 1234
	+1 201 555 0123
	+39 347 123 4567
	+880 1712 345678
	+882 16 123456
EOF
wa-campaign import "$c" "$T/people.csv" 2>/dev/null
is "$(sql "select r.phone || ' ' || rc.country from campaign_recipients r
    join recipient_countries rc on rc.recipient_id = r.id
    where r.phone like '+1%' order by 1")" \
    "+12015550123 US
+18095551234 DO" "import keeps each number's country: +1 809 is DO, +1 201 US"

exits 64 "estimate without a category" sh -c \
    'wa-campaign estimate "$1" 2>"$2/err"' _ "$c" "$T"
like "$(cat "$T/err")" "campaign $c: the category of its template is not known: say --category" \
    "... says to give one"
wa-campaign estimate --category marketing --json "$c" >"$T/est" 2>"$T/err"
is "$?" 0 "estimate --json exits 0"
is "$(cat "$T/err")" "" "... with nothing on stderr"
is "$(jq -c '[.category, .currency, .messages, .total, .unpriced]' \
    "$T/est")" '["marketing","BRL",8,2.339,0]' \
    "the total: 3 x 0.31 + 0.399 + 0.356 + 0.31 + 0.215 + 0.129"
is "$(jq -r '.markets[] | [.market, .messages, .rate, .cost] | @tsv' \
    "$T/est")" "Brazil	3	0.31	0.93
Rest of Latin America	1	0.399	0.399
Italy	1	0.356	0.356
Other	1	0.31	0.31
Bangladesh	1	0.215	0.215
North America	1	0.129	0.129" "per market, most costly first"
is "$(jq -r '.markets[] | select(.market == "Rest of Latin America") |
    .messages' "$T/est")" 1 "+1 809 is priced as Rest of Latin America"
wa-campaign estimate --category marketing "$c" >"$T/text"
like "$(cat "$T/text")" "^campaign $c: 8 messages to send, marketing, at the rate card in BRL" \
    "text: the campaign, its messages and the card"
like "$(cat "$T/text")" "  Rest of Latin America +1 +0.3990 +0.3990" \
    "text: a line per market"
like "$(cat "$T/text")" "  total +8 +2.3390 BRL" "text: the total"

# A category some markets do not sell: their messages are counted apart.
wa-campaign estimate --category authentication-international --json "$c" \
    >"$T/est"
is "$(jq -c '[.total, .unpriced, ([.markets[] | select(.unpriced == "n/a")] |
    length)]' "$T/est")" '[0.29,7,5]' \
    "n/a: not in the total, counted as unpriced"
# The campaign's template_category stands when --category is not given.
sql "update campaigns set template_category = 'UTILITY' where id = $c"
is "$(wa-campaign estimate --json "$c" | jq -c '[.category, .total]')" \
    '["utility",0.383]' "the campaign's template_category, as Graph spells it"

# A card without Bangladesh (one from before October 2026): its numbers
# are priced in the group they were in, Rest of Asia Pacific.
grep -v '^Bangladesh,' "$card" >"$T/old.csv"
wa-campaign rates load "$T/old.csv" 2>/dev/null
is "$(wa-campaign estimate --category marketing --json "$c" |
    jq -r '.markets[] | select(.messages == 1 and .rate == 0.3930) |
    .market')" "Rest of Asia Pacific" \
    "a country with no row of its own on the card: priced in its former group"
wa-campaign rates load "$T/brl.csv" 2>/dev/null

# Pricing from the status webhooks. Rows 1-3 (Brazil) and 4 (+1 809) and
# 5 (+1 201) were sent; 6 is still sending. The pricing objects follow
# Meta's status webhook reference (.../webhooks/reference/messages/status:
# on sent and on one of delivered and read) and its pricing page's
# in-window utility example (free_customer_service), as summarised in
# ../shared/research/cloud-api-2026.md §1.5.
sql "update campaign_recipients set status = 'sent', attempt = 1,
    wamid = 'wamid.' || id where campaign_id = $c and id <= 5;
    update campaign_recipients set status = 'sending', attempt = 1
    where campaign_id = $c and id = 6" >/dev/null
mk='"pricing":{"billable":true,"pricing_model":"PMP","category":"marketing","type":"regular"}'
free='"pricing":{"billable":false,"pricing_model":"PMP","category":"utility","type":"free_customer_service"}'
# st ID STATUS TS [EXTRA [TO]]: a status of wamid.ID, to the number of
# row TO (ID).
st() {
	printf '{"id":"wamid.%s","status":"%s","timestamp":"%s","recipient_id":"%s"%s}' \
	    "$1" "$2" "$3" "$(sql "select coalesce(max(substr(phone, 2)), '1')
	    from campaign_recipients where id = ${5:-$1}")" "${4:+,$4}"
}
body() {
	printf '{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"value":{"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550783881","phone_number_id":"106540352242922"},"statuses":[%s]},"field":"messages"}]}]}\n' "$1"
}
{
	# 1: sent and delivered in one body, the pricing on sent.
	body "$(st 1 sent 1750000001 "$mk"),$(st 1 delivered 1750000002)"
	# 2: read first, then its delivered with the pricing.
	body "$(st 2 read 1750000003)"
	body "$(st 2 delivered 1750000002 "$mk")"
	# 3: a sent that moves nothing (wa-record wrote sent), then read.
	body "$(st 3 sent 1750000001 "$mk")"
} >"$T/hooks1"
wa-status-ingest -n 1 <"$T/hooks1" 2>"$T/err"
is "$?" 0 "wa-status-ingest takes the priced bodies"
is "$(sql "select r.id || ' ' || r.status || ' ' || coalesce(k.category,
    '-') || ' ' || coalesce(k.type, '-') || ' ' || coalesce(k.billable::text,
    '-') from campaign_recipients r left join pricing_kinds k
    on k.code = r.pricing where r.campaign_id = $c and r.id <= 3
    order by r.id")" "1 delivered marketing regular true
2 read marketing regular true
3 sent - - -" \
    "each message's pricing stored: from its sent, from a delivered after its read; a sent that moves nothing writes nothing"
{
	body "$(st 3 read 1750000003 "$mk")"
	# 4: delivered, free (a utility template in a service window).
	body "$(st 4 delivered 1750000002 "$free")"
	# 5: failed: never charged.
	body "$(st 5 failed 1750000002 "$mk")"
	# A status for a message not recorded yet: kept with its pricing.
	body "$(st 99 delivered 1750000002 "$mk" 6)"
} >"$T/hooks2"
wa-status-ingest -n 1 <"$T/hooks2" 2>"$T/err"
is "$(sql "select r.id || ' ' || k.category || ' ' || k.type from
    campaign_recipients r join pricing_kinds k on k.code = r.pricing
    where r.campaign_id = $c and r.id in (3, 4) order by r.id")" \
    "3 marketing regular
4 utility free_customer_service" "the read's pricing, and a free one"
is "$(sql "select k.category from unmatched_statuses u join pricing_kinds k
    on k.code = u.pricing where u.wamid = 'wamid.99'")" marketing \
    "a status kept for a row not there yet keeps its pricing"
sql "update campaign_recipients set wamid = 'wamid.99' where id = 6" \
    >/dev/null
wa-status-ingest </dev/null 2>/dev/null
is "$(sql "select status || ' ' || coalesce(pricing::text, '-') from
    campaign_recipients where id = 6")" "delivered 22" \
    "... and gives it to the row once it appears"

# status --json: billable by category, free by type, the spend at the
# card: 1, 2, 3 (Brazil, 0.31 each) and 6 (Italy, 0.356), all marketing.
wa-campaign status --json "$c" >"$T/status"
is "$(jq -c '.billable' "$T/status")" '{"marketing":4}' \
    "status --json: billable counts per category (delivered or read)"
is "$(jq -c '.free' "$T/status")" '{"free_customer_service":1}' \
    "status --json: free counts per type"
is "$(jq -c '.spend' "$T/status")" \
    '{"total":1.286,"currency":"BRL","unpriced":0,"by_category":{"marketing":1.286}}' \
    "status --json: the spend at the card, in its currency"
like "$(wa-campaign status "$c")" \
    "pricing +billed 4 \(marketing 4\), free 1 \(free_customer_service 1\); spend 1.2860 BRL" \
    "status: the same in a line"
wa-campaign report "$c" >"$T/report.html"
like "$(cat "$T/report.html")" '<span id="spend">1.2860</span> BRL' \
    "report: the spend"
like "$(cat "$T/report.html")" 'Billed <span id="n-billed">4</span> messages, free <span id="n-free">1</span>' \
    "report: billed and free counts"
sql "delete from rate_card; delete from rates" >/dev/null
is "$(wa-campaign status --json "$c" | jq -c '[.billable, .spend]')" \
    '[{"marketing":4},null]' "without a card: billable still, spend null"

# wa-fake-api prices its webhooks by --category, as Meta a template of
# that category (regular, billable), on sent and delivered, and through
# wa-webhook and wa-status-ingest the rows get it.
wa-campaign rates load "$T/brl.csv" 2>/dev/null
export WA_APP_SECRET=cost-secret
bg wa-webhook --listen 127.0.0.1:0 --port-file "$T/hook.port" \
    --spool "$T/spool" 2>"$T/webhook.err"
wait_for 30 test -s "$T/hook.port" || bail "wa-webhook did not start"
bg wa-status-ingest --follow "$T/spool" 2>"$T/ingest.err"
fake_start --rate 0 --latency-ms 5 --category utility \
    --webhook-url "http://127.0.0.1:$(cat "$T/hook.port")/" \
    --webhook-delay-ms 20 --read-rate 0.5
u=$(wa-campaign create --name fake --phone-number-id 106540352242922 \
    --template notice)
wa-campaign import "$u" "$T/people.csv" 2>/dev/null
wa-campaign start --no-check "$u" >/dev/null
wa-claim -c "$u" 2>"$T/claim.err" | wa-throttle -r 500 2>/dev/null |
    wa-send 2>"$T/send.err" | wa-record >/dev/null 2>"$T/record.err"
delivered() {
	test "$(sql "select count(*) from campaign_recipients
	    where campaign_id = $u and status in ('delivered', 'read')
	    and pricing is not null")" = 8
}
ok "the fake's webhooks deliver and price every message" wait_for 60 delivered
is "$(cat "$T"/spool/* | jq -r '.entry[].changes[].value.statuses[] |
    select(.pricing) | [.status, .pricing.category, .pricing.type,
    .pricing.billable] | @tsv' | sort -u)" "delivered	utility	regular	true
sent	utility	regular	true" \
    "the fake: --category utility, regular and billable, on sent and delivered"
is "$(wa-campaign status --json "$u" | jq -c '[.billable, .spend.total]')" \
    '[{"utility":8},0.383]' "so the campaign's spend is the utility rate's"
fake_stop

done_testing
