#!/bin/sh
# wa-fake-api's Graph reads, driven with curl: a WABA's message
# templates (filters, fields, paging as Graph pages) and a phone
# number's fields, from the built-in, --templates and --numbers lists
# and files; a send checked against a templates file as Meta checks it
# (132001, 132015, 132016, 132018, 132000 before v23.0); the token, an
# id that is no object of ours, bad files; every GET in the log.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"

N=106540352242922

# get PATH [CURL-OPTION...]: GETs PATH under the base; prints the HTTP
# status, leaves the answer in $T/out.
get() {
	t_path=$1
	shift
	curl -s -o "$T/out" -w '%{http_code}' -G \
	    -H "Authorization: Bearer $WA_TOKEN" "$@" "$WA_API_BASE/$t_path"
}
# send TEMPLATE LANG [COMPONENTS [BASE]]: a template send; prints the
# HTTP status, the answer in $T/out.
send() {
	printf '{"messaging_product":"whatsapp","to":"+15550000001",' >"$T/req"
	printf '"type":"template","template":{"name":"%s",' "$1" >>"$T/req"
	printf '"language":{"code":"%s"},"components":%s}}' "$2" \
	    "${3:-[]}" >>"$T/req"
	curl -s -o "$T/out" -w '%{http_code}' \
	    -H "Authorization: Bearer $WA_TOKEN" --data-binary @"$T/req" \
	    "${4:-$WA_API_BASE}/$N/messages"
}
# body N: a body component of N text parameters.
body() {
	jq -nc --argjson n "$1" '[{type: "body", parameters: [range($n) |
	    {type: "text", text: "p\(.)"}]}]'
}
code() {
	jq -r '.error.code' "$T/out"
}
T_LIST=$FAKE_WABA/message_templates

# The built-in templates, as Graph lists them.
fake_start --rate 0 --pair-ms 0
is "$(get "$T_LIST")" 200 "the templates: HTTP 200"
is "$(jq -r '[.data[] | "\(.name):\(.language):\(.status)"] | join(" ")' \
    "$T/out")" "hello_world:en_US:APPROVED reminder:en_US:APPROVED reminder:en:APPROVED reminder:it:APPROVED reminder:es:APPROVED reminder:pt_BR:APPROVED flu_reminder:en_US:APPROVED vaccination_reminder:en_US:APPROVED" \
    "the built-in: hello_world, reminder in five languages, two more"
is "$(jq -r '.data[1] | [.parameter_format, .category, .components[0].type,
    .components[0].text] | join("|")' "$T/out")" \
    "POSITIONAL|UTILITY|BODY|Hi {{1}}, this is a reminder." \
    "each in Meta's shape: parameter_format, category, components"
is "$(jq -r '.paging.cursors | has("before") and has("after")' "$T/out")" \
    true "paging.cursors"
is "$(jq -r '.paging | has("next")' "$T/out")" false "no next: one page"

# Filters: name holds the text, language and status lists, any case.
get "$T_LIST" -d name=remind -d language=it,es >/dev/null
is "$(jq -r '[.data[] | "\(.name):\(.language)"] | join(" ")' "$T/out")" \
    "reminder:it reminder:es" "name= and language=, a list"
get "$T_LIST" -d name=reminder -d language=en_US -d status=approved \
    -d category=utility >/dev/null
is "$(jq -r '[.data[].name] | join(" ")' "$T/out")" \
    "reminder flu_reminder vaccination_reminder" \
    "name holds, language, status and category in any case"
get "$T_LIST" -d status=PAUSED >/dev/null
is "$(jq -c .data "$T/out")" "[]" "a status none has: no data"
get "$T_LIST" -d name=hello_world -d 'fields=name,status,components{type}' \
    >/dev/null
is "$(jq -c '.data[0] | keys' "$T/out")" '["components","id","name","status"]' \
    "fields narrows each item, its id kept; components{type} counts"

# Paging: limit, then after, then before.
is "$(get "$T_LIST" -d limit=3)" 200 "limit=3"
is "$(jq -r '[.data[] | .language] | join(" ")' "$T/out")" "en_US en_US en" \
    "... the first three"
next=$(jq -r .paging.next "$T/out")
like "$next" "^http://127\.0\.0\.1:$FAKE_PORT/$GRAPH_VERSION/$FAKE_WABA/message_templates\?.*limit=3.*&after=" \
    "... and a next URL on the request's host"
after=$(jq -r .paging.cursors.after "$T/out")
curl -s -o "$T/out" -H "Authorization: Bearer $WA_TOKEN" "$next"
is "$(jq -r '[.data[] | "\(.name):\(.language)"] | join(" ")' "$T/out")" \
    "reminder:it reminder:es reminder:pt_BR" "following next: the next three"
is "$(jq -r '.paging | has("previous")' "$T/out")" true "... with a previous"
get "$T_LIST" -d limit=3 -d "after=$after" >/dev/null
is "$(jq -r '[.data[].language] | join(" ")' "$T/out")" "it es pt_BR" \
    "after=, the cursor: the same page"
before=$(jq -r .paging.cursors.before "$T/out")
get "$T_LIST" -d limit=3 -d "before=$before" >/dev/null
is "$(jq -r '[.data[].language] | join(" ")' "$T/out")" "en_US en_US en" \
    "before=: the page before"
get "$T_LIST" -d limit=3 -d after=Mw >/dev/null
is "$(jq -r '[.data[].language] | join(" ")' "$T/out")" "es pt_BR en_US" \
    "after= a cursor: the items after its own"
get "$T_LIST" -d limit=6 -d after=Ng >/dev/null
is "$(jq -r '([.data[].name] | join(" ")) + " " + (.paging | has("next") |
    tostring)' "$T/out")" "vaccination_reminder false" "the last page: no next"
is "$(get "$T_LIST" -d after=zz.z)" 400 "a cursor not ours: 400"
is "$(code)" 100 "... code 100"
is "$(get "$T_LIST" -d limit=0)" 400 "limit=0: 400"

# The number's fields.
is "$(get "$N" -d fields=quality_rating,name_status,throughput,whatsapp_business_manager_messaging_limit)" \
    200 "a number's fields: 200"
is "$(jq -c . "$T/out")" "{\"quality_rating\":\"GREEN\",\"name_status\":\"APPROVED\",\"throughput\":{\"level\":\"STANDARD\"},\"whatsapp_business_manager_messaging_limit\":\"TIER_100K\",\"id\":\"$N\"}" \
    "... in good standing, narrowed by fields, its id kept"
get "$N" >/dev/null
is "$(jq -r '[.verified_name, .display_phone_number, .messaging_limit_tier]
    | join("|")' "$T/out")" "wapipe rehearsal|+1 555-078-3881|TIER_100K" \
    "without fields: all of them, the old tier too"
is "$(get "$FAKE_WABA")" 200 "the WABA itself: 200"
is "$(jq -r .id "$T/out")" "$FAKE_WABA" "... its id"

# Ids that are no object of ours, paths that are no read, the token.
is "$(get 4242/message_templates)" 400 "another WABA's templates: 400"
is "$(jq -r '[.error.code, .error.error_subcode, .error.type] | join(" ")' \
    "$T/out")" "100 33 GraphMethodException" "... Graph's 100/33"
like "$(jq -r .error.message "$T/out")" "^Unsupported get request. Object with ID '4242' does not exist" \
    "... a get request, naming the id"
is "$(get "$FAKE_WABA/phone_numbers")" 400 "an edge it does not serve: 400"
is "$(code)" 100 "... 100"
is "$(curl -s -o "$T/out" -w '%{http_code}' "$WA_API_BASE/$T_LIST")" 401 \
    "no token: 401"
is "$(code)" 190 "... 190"
is "$(curl -s -o "$T/out" -w '%{http_code}' \
    -H 'Authorization: Bearer nope' "$WA_API_BASE/$T_LIST")" 401 \
    "another token: 401"

# Sends are not checked against the built-in: any template, any count.
is "$(send t xx)" 200 "a send of any template is accepted"
is "$(send reminder en_US "$(body 5)")" 200 "... with any parameters"

# Every GET is in the log, with its method and path.
is "$(jq -r 'select(.method == "GET" and (.path | test("/(4242|'"$N"')")))
    | [.path, .outcome, .http_status] | map(tostring) | join(" ")' \
    "$FAKE_LOG" | sort -u | tr '\n' ',')" \
    "/$GRAPH_VERSION/$N read 200,/$GRAPH_VERSION/4242/message_templates error 400," \
    "the log: each GET, its path, outcome and status"
is "$(jq -s 'map(select(.method == "POST")) | length' "$FAKE_LOG")" 2 \
    "... and the POSTs, with theirs"
fake_stop
like "$(cat "$FAKE_ERR")" "[0-9]+ requests: 2 sent, .* [0-9]+ reads" \
    "the summary counts the reads"

# --templates FILE: listed as they are, and sends checked against them.
cat >"$T/tpl.json" <<'EOF'
{"data": [
 {"name": "offer", "parameter_format": "NAMED", "components": [
   {"type": "HEADER", "format": "IMAGE",
    "example": {"header_handle": ["https://x/h.png"]}},
   {"type": "BODY", "text": "Hi {{first_name}}, {{pct}} off",
    "example": {"body_text_named_params": [
     {"param_name": "first_name", "example": "Ana"},
     {"param_name": "pct", "example": "10%"}]}},
   {"type": "BUTTONS", "buttons": [{"type": "URL", "text": "See",
    "url": "https://x/{{1}}"}]}],
  "language": "en_US", "status": "APPROVED", "category": "MARKETING",
  "id": "1"},
 {"name": "offer", "parameter_format": "POSITIONAL", "components": [
   {"type": "BODY", "text": "Ciao {{1}}"}],
  "language": "it", "status": "PAUSED", "category": "MARKETING", "id": "2"},
 {"name": "offer", "parameter_format": "POSITIONAL", "components": [
   {"type": "BODY", "text": "Hola {{1}}"}],
  "language": "es", "status": "DISABLED", "category": "MARKETING",
  "id": "3"},
 {"name": "offer", "parameter_format": "POSITIONAL", "components": [
   {"type": "BODY", "text": "Oi {{1}}"}],
  "language": "pt_BR", "status": "PENDING", "category": "MARKETING",
  "id": "4"},
 {"name": "plain", "parameter_format": "POSITIONAL", "components": [
   {"type": "BODY", "text": "Hi {{1}} and {{2}}"}],
  "language": "en_US", "status": "APPROVED", "category": "UTILITY",
  "id": "5"}
], "paging": {"cursors": {"before": "MAZDZD", "after": "MjQZD"}}}
EOF
fake_start --rate 0 --pair-ms 0 --templates "$T/tpl.json"
get "$T_LIST" -d language=it >/dev/null
is "$(jq -r '.data[] | [.name, .status, .id] | join(" ")' "$T/out")" \
    "offer PAUSED 2" "a saved answer's data, listed"
is "$(send offer it "$(body 1)")" 400 "a send of a paused template: 400"
is "$(code)" 132015 "... 132015"
is "$(send offer es "$(body 1)")" 400 "a disabled one: 400"
is "$(code)" 132016 "... 132016"
is "$(send offer pt_BR "$(body 1)")" 404 "a pending one: 404"
is "$(code)" 132001 "... 132001"
is "$(send offer fr "$(body 1)")" 404 "a language it is not in: 404"
is "$(code)" 132001 "... 132001"
is "$(send nope en_US)" 404 "a template not in the file: 404"
is "$(code)" 132001 "... 132001"
is "$(send plain en_US "$(body 1)")" 400 "one parameter of two: 400"
is "$(code)" 132018 "... 132018 (Graph $GRAPH_VERSION)"
is "$(jq -r .error.error_data.details "$T/out")" \
    "1 body parameter; the template takes 2" "... the misfit in details"
is "$(send plain en_US "$(body 1)" \
    "http://127.0.0.1:$FAKE_PORT/v22.0")" 400 "the same on v22.0: 400"
is "$(code)" 132000 "... 132000, as before v23.0"
is "$(send plain en_US "$(body 2)")" 200 "two parameters: accepted"
named='[{"type":"header","parameters":[{"type":"image","image":{"id":"9"}}]},
    {"type":"body","parameters":[
    {"type":"text","parameter_name":"pct","text":"5"},
    {"type":"text","parameter_name":"first_name","text":"A"}]},
    {"type":"button","sub_type":"url","index":"0",
    "parameters":[{"type":"text","text":"x"}]}]'
is "$(send offer en_US "$named")" 200 \
    "named parameters, an image and the URL button's: accepted"
is "$(send offer en_US "$(echo "$named" | jq -c 'del(.[2])')")" 400 \
    "without the URL button's parameter: 400"
like "$(jq -r .error.error_data.details "$T/out")" "URL button 0" \
    "... said"
is "$(send offer en_US "$(echo "$named" | jq -c 'del(.[0])')")" 400 \
    "without the header image: 400"
is "$(send offer en_US "$(echo "$named" |
    jq -c '.[1].parameters[0].parameter_name = "percent"')")" 400 \
    "a wrong name: 400"
is "$(code)" 132018 "... 132018"
fake_stop

# --templates names: each listed in en_US, approved, the built-in's when
# it has one; a send of another name is 132001, as before.
fake_start --rate 0 --pair-ms 0 --templates reminder,promo_x
get "$T_LIST" >/dev/null
is "$(jq -r '[.data[] | "\(.name):\(.language)"] | join(" ")' "$T/out")" \
    "reminder:en_US reminder:en reminder:it reminder:es reminder:pt_BR promo_x:en_US" \
    "names: the built-in's of that name, else one of its own"
is "$(jq -r '.data[-1].components[0].text' "$T/out")" "Hi {{1}}." \
    "... with one placeholder"
is "$(send other en_US)" 404 "a name not listed: 404"
is "$(send promo_x fr "$(body 4)")" 200 \
    "a listed name: any language, any parameters, as before"
fake_stop

# --numbers FILE: its numbers' fields; another id is no object.
cat >"$T/num.json" <<EOF
[{"id": "$N", "display_phone_number": "+1 555-078-3881",
  "quality_rating": "RED", "name_status": "DECLINED",
  "throughput": {"level": "HIGH"},
  "whatsapp_business_manager_messaging_limit": "TIER_2K"},
 {"id": "9001", "quality_rating": "YELLOW"}]
EOF
fake_start --rate 0 --pair-ms 0 --numbers "$T/num.json" --waba-id 4242
get "$N" -d fields=quality_rating,whatsapp_business_manager_messaging_limit \
    >/dev/null
is "$(jq -c . "$T/out")" "{\"quality_rating\":\"RED\",\"whatsapp_business_manager_messaging_limit\":\"TIER_2K\",\"id\":\"$N\"}" \
    "a number of the file: its fields"
is "$(get 9001 -d fields=quality_rating)" 200 "the file's other number"
is "$(get 9002)" 400 "a number not in it: 400"
is "$(jq -r '[.error.code, .error.error_subcode] | join(" ")' "$T/out")" \
    "100 33" "... 100/33"
is "$(send reminder en_US "$(body 1)")" 200 "a send from it: accepted"
is "$(get 4242/message_templates)" 200 "--waba-id: that account's templates"
is "$(get "$T_LIST")" 400 "... and not the default's"
fake_stop

# Bad files: a usage error, before listening.
echo '{"data": 5}' >"$T/bad1.json"
jq -n '[{name: "x", language: "en_US", components: []}]' >"$T/bad2.json"
echo '[{"quality_rating": "RED"}]' >"$T/bad3.json"
exits 64 "--templates: not a JSON file" wa-fake-api --any-token \
    --templates "$T/none.json" 2>/dev/null
exits 64 "--templates: no data array" wa-fake-api --any-token \
    --templates "$T/bad1.json" 2>/dev/null
exits 64 "--templates: a template without a status" wa-fake-api \
    --any-token --templates "$T/bad2.json" 2>"$T/err"
like "$(cat "$T/err")" "item 1: a template without a status" "... said"
exits 64 "--numbers: a number without an id" wa-fake-api --any-token \
    --numbers "$T/bad3.json" 2>/dev/null
exits 64 "--waba-id: digits" wa-fake-api --any-token --waba-id x1 \
    2>/dev/null

done_testing
