#!/bin/sh
# wa-campaign check: the template and the sending number asked of the
# Graph API (wa-fake-api) and compared with the campaign before anything
# is sent. A good campaign can go (0); a paused, missing or
# wrong-language template, or rows whose parameters do not fit, cannot
# (65, saying why and naming the rows); an API down or an answer that
# does not parse is 69, never a pass. Warnings with numbers (quality,
# the messaging limit, marketing to United States numbers). --json.
# start and run check first and send nothing when it fails; --no-check
# goes on. A check makes a handful of calls, whatever the rows, and
# changes no row.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"
. "$(dirname "$0")/run.sh"
pg_start
N=106540352242922

checksum() {
	sql "select md5(string_agg(r::text, ',' order by id))
	    from campaign_recipients r"
}
# gets, posts: the fake's GETs and POSTs so far.
gets() {
	jq -s 'map(select(.method == "GET")) | length' "$FAKE_LOG"
}
posts() {
	jq -s 'map(select(.method == "POST")) | length' "$FAKE_LOG"
}
# draft [N]: campaign() as a draft.
draft() {
	c=$(campaign "${1:-10}")
	sql "update campaigns set state = 'draft' where id = $c"
	echo "$c"
}
# tpl NAME LANG STATUS CATEGORY BODY [HEADER]: one template as Graph
# lists it (Meta's "Template management" page, May 21, 2026).
tpl() {
	jq -nc --arg n "$1" --arg l "$2" --arg s "$3" --arg c "$4" \
	    --arg b "$5" --arg h "${6:-}" '{name: $n, parameter_format:
	    (if ($b | test("\\{\\{[a-z]")) then "NAMED" else "POSITIONAL"
	    end),
	    components: ((if $h == "" then [] else [{type: "HEADER",
	    format: $h, example: {header_handle: ["https://x/h.png"]}}] end)
	    + [{type: "BODY", text: $b}]), language: $l, status: $s,
	    category: $c, id: "1700000000000001"}'
}

# A good campaign: the built-in reminder (en_US, {{1}}), one parameter a
# row. 0, the verdict on stdout, two calls for its 3,000 rows.
fake_start --rate 0
c=$(campaign 3000)
before=$(checksum)
exits 0 "a good campaign can go: 0" wa-campaign check "$c" >"$T/out" \
    2>"$T/err"
like "$(cat "$T/out")" "campaign $c can go$" "it says so"
like "$(cat "$T/out")" "template reminder en_US: APPROVED, UTILITY, body \{\{1\}\}" \
    "... naming the template's status, category and placeholders"
like "$(cat "$T/out")" "number $N .*quality GREEN, name APPROVED, throughput STANDARD, limit 100,000 people a day" \
    "... and the number's quality, name, throughput and limit"
like "$(cat "$T/out")" "3,000 rows to send" "... and the rows"
is "$(cat "$T/err")" "" "nothing on stderr"
is "$(gets) $(posts)" "2 0" "two GETs for 3,000 rows, and no send"
is "$(checksum)" "$before" "no row changed"
is "$(sql "select state from campaigns where id = $c")" running \
    "nor the campaign"
jq -r 'select(.method == "GET") | .path' "$FAKE_LOG" >"$T/paths"
is "$(tr '\n' ' ' <"$T/paths")" \
    "/$GRAPH_VERSION/$FAKE_WABA/message_templates /$GRAPH_VERSION/$N " \
    "the WABA's templates, then the number"

# --json: one object, with the verdict.
wa-campaign check --json "$c" >"$T/json"
is "$(jq -r '[.verdict, .template.status, .template.body, .rows.to_send,
    .number.quality_rating, (.reasons | length)] | join(" ")' "$T/json")" \
    "go APPROVED {{1}} 3000 GREEN 0" "--json parses, with the verdict"
is "$(wc -l <"$T/json" | tr -d ' ')" 1 "... on one line"
fake_stop

# No WABA id: 78, at once.
exits 78 "no WABA id: 78" env -u WA_WABA_ID wa-campaign check "$c" \
    2>"$T/err"
like "$(cat "$T/err")" "no WhatsApp Business Account id.*--waba-id" \
    "... saying where to give one"

# Templates from a file: paused, missing, another language.
tpl reminder en_US PAUSED MARKETING 'Hi {{1}}' >"$T/t1"
tpl reminder it APPROVED UTILITY 'Ciao {{1}}' >>"$T/t1"
tpl reminder_v2 en_US APPROVED UTILITY 'Hi {{1}}' >>"$T/t1"
jq -s '{data: .}' "$T/t1" >"$T/t1.json"
fake_start --rate 0 --templates "$T/t1.json"
c=$(campaign 5)
exits 65 "a paused template: 65" wa-campaign check "$c" >"$T/out"
like "$(cat "$T/out")" "refused: template reminder en_US is PAUSED: Meta answers 132015" \
    "... saying why"
like "$(cat "$T/out")" "campaign $c cannot go$" "... and that it cannot go"
is "$(wa-campaign check --json "$c" | jq -r .verdict)" refused \
    "--json: refused"
sql "update campaigns set template_lang = 'pt_BR' where id = $c"
exits 65 "a language the template is not in: 65" wa-campaign check "$c" \
    >"$T/out"
like "$(cat "$T/out")" "template reminder has no pt_BR \(it has en_US, it\): Meta answers 132001" \
    "... naming the languages it has"
sql "update campaigns set template_name = 'remind' where id = $c"
exits 65 "a template the WABA lacks: 65" wa-campaign check "$c" \
    >"$T/out"
like "$(cat "$T/out")" "no template remind in WhatsApp Business Account $FAKE_WABA" \
    "... though Graph's name filter matched reminder and reminder_v2"
sql "update campaigns set template_name = 'reminder', template_lang = 'it'
    where id = $c"
exits 0 "the approved language: 0" wa-campaign check "$c" >/dev/null

# Rows that do not fit: the first five named, by id and number.
sql "update campaign_recipients set template_params = '[\"a\", \"b\"]'
    where campaign_id = $c and phone like '%2'" >/dev/null
sql "update campaign_recipients set template_params = '[]'
    where campaign_id = $c and phone like '%4'" >/dev/null
r2=$(sql "select id from campaign_recipients where campaign_id = $c
    and phone like '%2'")
exits 65 "rows with the wrong count: 65" wa-campaign check "$c" >"$T/out"
like "$(cat "$T/out")" "refused: 2 rows do not fit the template's placeholders" \
    "... how many"
like "$(cat "$T/out")" "^  row $r2 \(\+15550000002\): 2 body parameters; the template takes 1$" \
    "... each named, with why"
like "$(cat "$T/out")" "\(\+15550000004\): 0 body parameters" "... both"
is "$(wa-campaign check --json "$c" | jq -r '[.rows.misfit,
    (.rows.first_misfits | map(.phone) | join(","))] | join(" ")')" \
    "2 +15550000002,+15550000004" "--json: the rows"
sql "update campaign_recipients set template_params = '[\"a\", \"b\"]'
    where campaign_id = $c" >/dev/null
wa-campaign check "$c" >"$T/out"
is "$(grep -c '^  row ' "$T/out")" 5 "five rows named of five that fail"
fake_stop

# Named placeholders and a media header.
tpl offer en_US APPROVED UTILITY 'Hi {{first_name}}, {{pct}} off' IMAGE |
    jq -s . >"$T/t2.json"
fake_start --rate 0 --templates "$T/t2.json"
c=$(campaign 3)
sql "update campaigns set template_name = 'offer' where id = $c"
exits 65 "positional rows for a named template with an image: 65" \
    wa-campaign check "$c" >"$T/out"
like "$(cat "$T/out")" "1 body parameter without a name; the template takes \{\{first_name\}\} \{\{pct\}\}" \
    "... the names it takes"
sql "update campaign_recipients set template_params = '{\"components\": [
    {\"type\": \"body\", \"parameters\": [
    {\"type\": \"text\", \"parameter_name\": \"pct\", \"text\": \"5\"},
    {\"type\": \"text\", \"parameter_name\": \"first_name\", \"text\": \"A\"}
    ]}]}' where campaign_id = $c" >/dev/null
exits 65 "the names, but no header image: 65" wa-campaign check "$c" \
    >"$T/out"
like "$(cat "$T/out")" "no header IMAGE parameter" "... said"
sql "update campaign_recipients set template_params = jsonb_set(
    template_params, '{components}', template_params->'components' ||
    '[{\"type\": \"header\", \"parameters\": [{\"type\": \"image\",
    \"image\": {\"link\": \"https://x/a.png\"}}]}]')
    where campaign_id = $c" >/dev/null
exits 0 "the names and an image: 0" wa-campaign check "$c" >/dev/null
sql "update campaign_recipients set template_params = jsonb_set(
    template_params, '{components,0,parameters,0,parameter_name}',
    '\"percent\"') where campaign_id = $c and phone like '%3'" >/dev/null
wa-campaign check "$c" >"$T/out"
like "$(cat "$T/out")" "body parameters named first_name,percent; the template takes \{\{first_name\}\} \{\{pct\}\}" \
    "a wrong name: named"
fake_stop

# Warnings: a yellow number on the 250 tier, marketing to US numbers.
tpl promo en_US APPROVED MARKETING 'Hi {{1}}' | jq -s . >"$T/t3.json"
echo "[{\"id\": \"$N\", \"display_phone_number\": \"+1 555-078-3881\",
    \"quality_rating\": \"YELLOW\", \"name_status\": \"APPROVED\",
    \"throughput\": {\"level\": \"STANDARD\"},
    \"whatsapp_business_manager_messaging_limit\": \"TIER_250\"}]" \
    >"$T/n3.json"
fake_start --rate 0 --templates "$T/t3.json" --numbers "$T/n3.json"
c=$(campaign 600)
sql "update campaigns set template_name = 'promo' where id = $c"
# Two New Jersey numbers and one in Toronto: +1 is not only the US.
sql "update campaign_recipients set phone = '+120155501' || right(phone, 2)
    where campaign_id = $c and phone in ('+15550000001', '+15550000002')"
sql "update campaign_recipients set phone = '+14165550103'
    where campaign_id = $c and phone = '+15550000003'"
exits 0 "warnings alone: it can go, 0" wa-campaign check "$c" >"$T/out"
like "$(cat "$T/out")" "warning: at 250 people a day this campaign needs 3 days \(600 people" \
    "the limit: how many days"
like "$(cat "$T/out")" "warning: the number's quality rating is YELLOW" \
    "the quality"
like "$(cat "$T/out")" "warning: 2 rows go to United States numbers.*131049" \
    "marketing to the US: how many rows"
like "$(cat "$T/out")" "campaign $c can go, with 3 warnings$" \
    "the verdict counts them"
is "$(wa-campaign check --json "$c" | jq -r '[.verdict, .days,
    .rows.us_marketing, (.warnings | length)] | join(" ")')" "go 3 2 3" \
    "--json: days, us_marketing, warnings"
fake_stop

# Graph pages: the language on the second page of 100.
i=0
while [ "$i" -lt 150 ]; do
	tpl reminder "x$i" APPROVED UTILITY 'Hi {{1}}'
	i=$((i + 1))
done >"$T/t4"
tpl reminder en_US APPROVED UTILITY 'Hi {{1}}' >>"$T/t4"
jq -s . "$T/t4" >"$T/t4.json"
fake_start --rate 0 --templates "$T/t4.json"
c=$(campaign 3)
exits 0 "the template on Graph's second page: found" wa-campaign check \
    "$c" >/dev/null
is "$(gets)" 3 "two pages of templates, then the number"
fake_stop

# The API cannot tell: never a pass.
fake_start --rate 0 --outage-file "$T/down"
c=$(campaign 3)
echo 503 >"$T/down"
exits 69 "the API answering 503: 69" wa-campaign check "$c" >"$T/out" \
    2>"$T/err"
like "$(cat "$T/err")" "cannot check: GET $FAKE_WABA/message_templates: HTTP 503" \
    "... saying what it asked and what came back"
is "$(cat "$T/out")" "" "... and no verdict"
echo 200 >"$T/down"
exits 69 "an answer that is not JSON (HTTP 200): 69" wa-campaign check \
    "$c" >"$T/out" 2>"$T/err"
like "$(cat "$T/err")" "not JSON" "... said"
is "$(cat "$T/out")" "" "... and no verdict"
rm -f "$T/down"
exits 69 "a WABA id Graph does not know: 69" env WA_WABA_ID=999 \
    wa-campaign check "$c" 2>"$T/err"
like "$(cat "$T/err")" "Graph error 100 \(subcode 33\): Unsupported get request" \
    "... Graph's error said"
fake_stop
exits 69 "the API down (nothing listens): 69" wa-campaign check "$c" \
    >"$T/out" 2>"$T/err"
like "$(cat "$T/err")" "cannot check: .*(Couldn't connect|Could not connect)" \
    "... said"
is "$(cat "$T/out")" "" "... and no verdict"

# start and run check first: a failing campaign is left as it is and
# nothing is sent.
tpl reminder en_US PAUSED UTILITY 'Hi {{1}}' | jq -s . >"$T/t5.json"
fake_start --rate 0 --templates "$T/t5.json"
c=$(draft 5)
exits 65 "start of a campaign that fails its check: 65" wa-campaign start \
    "$c" 2>"$T/err"
like "$(cat "$T/err")" "template reminder en_US is PAUSED" \
    "... the verdict on stderr"
like "$(cat "$T/err")" "campaign $c is not started: it failed its check" \
    "... and that it is not started"
is "$(sql "select state from campaigns where id = $c")" draft \
    "... it stays a draft"
exits 0 "start --no-check goes on" wa-campaign start --no-check "$c"
is "$(sql "select state from campaigns where id = $c")" running \
    "... running"
exits 65 "run of a campaign that fails its check: 65" wa-campaign run "$c" \
    2>"$T/err"
like "$(cat "$T/err")" "template reminder en_US is PAUSED" \
    "... the verdict on stderr"
is "$(posts)" 0 "nothing was sent: the fake saw no POST"
is "$(count pending)" 5 "every row is still pending"
is "$(sql "select max(attempt) from campaign_recipients
    where campaign_id = $c")" 0 "... none claimed"
exits 79 "run --no-check goes on, to Meta's own answer: a halt" \
    wa-campaign run --no-check "$c" 2>"$T/err"
like "$(cat "$T/err")" "132015" "... the paused template's 132015"
ok "... after a POST" test "$(posts)" -ge 1
fake_stop

# A good draft: start checks and starts.
fake_start --rate 0
c=$(draft 5)
exits 0 "start of a good campaign: 0" wa-campaign start "$c" 2>"$T/err"
like "$(cat "$T/err")" "campaign $c can go" "... its verdict on stderr"
is "$(sql "select state from campaigns where id = $c")" running \
    "... running"
exits 65 "start a running one: 65, and no call" wa-campaign start "$c" \
    2>/dev/null
is "$(gets)" 2 "... the state refused it before the API was asked"
fake_stop

# --waba-id: the campaign's own account wins over WA_WABA_ID.
fake_start --rate 0 --waba-id 4242
c=$(campaign 2)
exits 69 "WA_WABA_ID of another account: 69" wa-campaign check "$c" \
    2>/dev/null
wa-campaign pause "$c"
wa-campaign set --waba-id 4242 "$c" 2>"$T/err"
like "$(cat "$T/err")" "WABA id none -> 4242" "set --waba-id"
exits 0 "the campaign's --waba-id: 0" wa-campaign check "$c" >/dev/null
exits 64 "--waba-id is digits" wa-campaign set --waba-id x1 "$c" \
    2>/dev/null
id=$(WA_WABA_ID=77 wa-campaign create --name w --phone-number-id $N \
    --template reminder)
is "$(sql "select waba_id from campaigns where id = $id")" 77 \
    "create stores WA_WABA_ID"
fake_stop

done_testing
