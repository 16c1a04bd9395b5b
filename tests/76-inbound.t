#!/bin/sh
# Inbound messages kept (issue 25): wa-status-ingest stores every message
# of a "messages" webhook in inbound_messages, once (Meta redelivers),
# attributed to the campaign row it answers; wa-campaign replies lists
# a campaign's, inbound prune drops old ones; kill -9 loses nothing and
# duplicates nothing. The payloads follow the shapes of Meta's examples,
# developers.facebook.com/docs/whatsapp/cloud-api/webhooks/payload-examples
# (text, reaction, image, sticker, unknown, location, contacts, quick
# reply button, list and button replies, flows' nfm_reply), with BSUID
# fields from the business-scoped user id page (from_user_id, user_id).
. "$(dirname "$0")/lib.sh"

pg_start
PN=106540352242922
NOW=$(date +%s)
cid=$(campaign 5)
cid2=$(campaign 2)
# Campaign 1: rows 1-3 sent an hour ago (wamid.out.N), 4 sent two days
# ago, 5 never sent. Campaign 2's rows (+15550000001, 2) were sent three
# hours ago, so for a reply without context campaign 1 is the latest.
sql "update campaign_recipients set status = 'delivered', attempt = 1,
    wamid = 'wamid.out.' || id, claimed_at = now() - interval '1 hour',
    status_at = now() - interval '59 minutes'
    where campaign_id = $cid and id in (1, 2, 3);
    update campaign_recipients set status = 'read', attempt = 1,
    wamid = 'wamid.out.4', claimed_at = now() - interval '2 days',
    status_at = now() - interval '47 hours' where id = 4;
    update campaign_recipients set status = 'sent', attempt = 1,
    wamid = 'wamid.out2.' || id, claimed_at = now() - interval '3 hours',
    status_at = now() - interval '3 hours' where campaign_id = $cid2" \
    >/dev/null

# msg FROM ID TYPE JSON-REST: one message object of value.messages[].
msg() {
	printf '{"from":"%s","id":"wamid.in.%s","timestamp":"%s","type":"%s"%s}' \
	    "$1" "$2" "${TS:-$NOW}" "$3" "${4:+,$4}"
}

# body MESSAGE...: a webhook body holding these messages, with a contact
# for the first sender, and STATUSES (a variable) beside them.
body() {
	printf '{"object":"whatsapp_business_account","entry":[{"id":"1022",'
	printf '"changes":[{"value":{"messaging_product":"whatsapp",'
	printf '"metadata":{"display_phone_number":"15550783881",'
	printf '"phone_number_id":"%s"},' "$PN"
	printf '"contacts":[{"profile":{"name":"Ana"},"wa_id":"15550000001",'
	printf '"user_id":"US.13491208655302741918"}],'
	[ -n "${STATUSES:-}" ] && printf '"statuses":[%s],' "$STATUSES"
	printf '"messages":[%s' "$1"
	shift
	for m in "$@"; do
		printf ',%s' "$m"
	done
	printf ']},"field":"messages"}]}]}\n'
}

ingest() {
	wa-status-ingest "$@" 2>>"$T/err"
}

# col ID COLUMNS: the columns of inbound message wamid.in.ID, "|" apart.
col() {
	sql "select concat_ws('|', $2) from inbound_messages
	    where wamid = 'wamid.in.$1'"
}

n_in() {
	sql "select count(*) from inbound_messages"
}

# (a) Every type, in one body.
body "$(msg 15550000001 t1 text '"text":{"body":"Hello, is it on sale?"}')" \
    "$(msg 15550000002 b1 button \
    '"context":{"from":"15550783881","id":"wamid.out.2"},"button":{"text":"Yes please","payload":"YES_PAYLOAD"}')" \
    "$(msg 15550000003 i1 interactive \
    '"interactive":{"type":"button_reply","button_reply":{"id":"btn-1","title":"Book"}}')" \
    "$(msg 15550000009 i2 interactive \
    '"interactive":{"type":"list_reply","list_reply":{"id":"row-2","title":"Tuesday","description":"9-12"}}')" \
    "$(msg 15550000009 i3 interactive \
    '"interactive":{"type":"nfm_reply","nfm_reply":{"response_json":"{\"flow_token\":\"t\"}","body":"Sent","name":"flow"}}')" \
    "$(msg 15550000009 m1 image \
    '"image":{"caption":"my receipt","mime_type":"image/jpeg","sha256":"x","id":"media-123"}')" \
    "$(msg 15550000009 m2 sticker \
    '"sticker":{"mime_type":"image/webp","sha256":"x","id":"media-456","animated":false}')" \
    "$(msg 15550000009 m3 document \
    '"document":{"filename":"cv.pdf","mime_type":"application/pdf","id":"media-789"}')" \
    "$(msg 15550000009 l1 location \
    '"location":{"latitude":38.9,"longitude":-77.03,"name":"Office","address":"1 Main St"}')" \
    "$(msg 15550000009 c1 contacts \
    '"contacts":[{"name":{"formatted_name":"Bo Li","first_name":"Bo"},"phones":[{"phone":"+1 555 0100"}]}]')" \
    "$(msg 15550000003 r1 reaction \
    '"reaction":{"message_id":"wamid.out.3","emoji":"👍"}')" \
    "$(msg 15550000009 u1 unsupported \
    '"errors":[{"code":131051,"title":"Message type unknown"}]')" \
    >"$T/a.ndjson"
ingest <"$T/a.ndjson"
is "$(n_in)" 12 'every message of the body is stored'
is "$(col t1 "type, phone, wa_id, bsuid, phone_number_id, body,
    extract(epoch from sent_at)::bigint")" \
    "text|+15550000001|15550000001|US.13491208655302741918|$PN|Hello, is it on sale?|$NOW" \
    'text: sender as E.164, wa_id and BSUID of its contact, number, body, time'
is "$(col b1 "type, body, payload, context_wamid")" \
    'button|Yes please|YES_PAYLOAD|wamid.out.2' 'quick-reply button: text, payload, context'
is "$(col i1 "type, body, payload")" 'interactive|Book|btn-1' 'button_reply'
is "$(col i2 "type, body, payload")" 'interactive|Tuesday|row-2' 'list_reply'
is "$(col i3 "type, body, payload")" 'interactive|Sent|{"flow_token":"t"}' \
    'nfm_reply: body and response_json'
is "$(col m1 "type, media_id, body")" 'image|media-123|my receipt' \
    'image: media id and caption'
is "$(col m2 "type, media_id, coalesce(body, '-')")" 'sticker|media-456|-' \
    'sticker: media id'
is "$(col m3 "type, media_id, body")" 'document|media-789|cv.pdf' \
    'document: media id, file name for want of a caption'
is "$(col l1 "type, body, payload")" 'location|Office|38.9,-77.03' \
    'location: name and coordinates'
is "$(col c1 "type, body")" 'contacts|Bo Li' 'contacts: the first name'
is "$(col r1 "type, body, context_wamid")" 'reaction|👍|wamid.out.3' \
    'reaction: emoji, the message reacted to as context'
is "$(col u1 "type, raw->'errors'->0->>'code'")" 'unsupported|131051' \
    'unknown type: stored with its raw JSON'
is "$(col t1 "raw->>'id', raw->'text'->>'body'")" \
    'wamid.in.t1|Hello, is it on sale?' 'raw JSON kept for known types too'

# (b) Attribution.
is "$(col b1 "campaign_id, recipient_id")" "$cid|2" \
    'a reply with context.id links to the row of that wamid'
is "$(col r1 "campaign_id, recipient_id")" "$cid|3" \
    'a reaction links to the row it reacts to'
is "$(col t1 "campaign_id, recipient_id")" "$cid|1" \
    'no context, phone messaged within 24 h: linked to its latest row'
is "$(col i2 "coalesce(campaign_id::text, '-'), coalesce(recipient_id::text, '-')")" \
    '-|-' 'an unknown phone links to nothing'

# (c) Redelivery of the same body inserts nothing.
ingest <"$T/a.ndjson"
ingest <"$T/a.ndjson"
is "$(n_in)" 12 'the same body read twice more: nothing inserted'

done_testing
