/*
 * inbound.c: one inbound message (value.messages[] of a "messages"
 * change, the shapes of Meta's webhook payload examples) as the object
 * pg/statusdb.c inserts into inbound_messages. Reads the message, the
 * change's metadata and contacts; writes JSON text into a buffer;
 * returns nothing: a message of an unknown type or an odd shape goes in
 * with what could be read (its type "unknown" when it has none) and its
 * raw JSON, which every message keeps.
 *
 * The body was checked before it was parsed (records/json.h: UTF-8, no
 * raw NUL, no lone surrogate), so what json-c writes back is text jsonb
 * takes but for "\u0000", which jsonb refuses: it becomes U+FFFD (and a
 * string column's value ends where its NUL was). Fields:
 *   wamid	"id" (1 to 256 bytes; else null: Postgres keys it by md5)
 *   phone	"+" and "from" when it is 1 to 15 digits
 *   wa_id	the sender's contact's wa_id
 *   bsuid	from_user_id, or the contact's user_id (wa_bsuid_ok)
 *   pnid	metadata.phone_number_id
 *   type, body, payload, media_id
 *   context	context.id, or a reaction's message_id
 *   ts		the timestamp, seconds, or null
 *   raw	the message
 *   line	its body's line number (for a report, not a column)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "records/inbound.h"
#include "records/json.h"

#define TS_MAX 253402300799LL	/* 9999-12-31T23:59:59Z */

static void
str(struct json_object *o, const char *key, const char *s)
{
	if (s != NULL && *s != '\0')
		json_object_object_add(o, key, json_object_new_string(s));
}

/*
 * The contact of value.contacts[] that sent m (by wa_id or user_id), or
 * the only one when m names no sender.
 */
static struct json_object *
contact(struct json_object *value, const char *from, const char *uid)
{
	struct json_object *a = wa_json_get(value, "contacts"), *c;
	const char *w, *u;
	size_t i, n;

	if (!json_object_is_type(a, json_type_array))
		return NULL;
	n = json_object_array_length(a);
	for (i = 0; i < n; i++) {
		c = json_object_array_get_idx(a, i);
		w = wa_json_str(c, "wa_id");
		u = wa_json_str(c, "user_id");
		if ((from != NULL && w != NULL && strcmp(from, w) == 0) ||
		    (uid != NULL && u != NULL && strcmp(uid, u) == 0))
			return c;
	}
	/* Without a sender to match, the only contact is the sender. */
	return n == 1 && from == NULL && uid == NULL ?
	    json_object_array_get_idx(a, 0) : NULL;
}

/* Seconds, as a number or a string of digits; -1: none or not a time. */
static long long
seconds(struct json_object *m)
{
	struct json_object *t = wa_json_get(m, "timestamp");
	const char *s;
	long long v = -1;
	char *end;

	if (json_object_is_type(t, json_type_int))
		v = json_object_get_int64(t);
	else if (json_object_is_type(t, json_type_string)) {
		s = json_object_get_string(t);
		if (*s >= '0' && *s <= '9' && strlen(s) <= 14) {
			v = strtoll(s, &end, 10);
			if (*end != '\0')
				v = -1;
		}
	}
	if (v > 100000000000LL)
		v /= 1000;
	return v >= 0 && v <= TS_MAX ? v : -1;
}

/* The text, payload and media id of m, by its type. */
static void
content(struct json_object *o, struct json_object *m, const char *type)
{
	static const char *const media[] = { "image", "video", "audio",
	    "document", "sticker" };
	struct json_object *x;
	const char *it, *lat, *lon;
	char k[64], ll[128];
	size_t i;

	if (strcmp(type, "text") == 0) {
		str(o, "body", wa_json_str(m, "text.body"));
		return;
	}
	if (strcmp(type, "button") == 0) {
		str(o, "body", wa_json_str(m, "button.text"));
		str(o, "payload", wa_json_str(m, "button.payload"));
		return;
	}
	if (strcmp(type, "interactive") == 0) {
		if ((it = wa_json_str(m, "interactive.type")) == NULL ||
		    strlen(it) > 32)
			return;
		snprintf(k, sizeof k, "interactive.%s", it);
		x = wa_json_get(m, k);
		if (strcmp(it, "nfm_reply") == 0) {
			str(o, "body", wa_json_str(x, "body"));
			str(o, "payload", wa_json_str(x, "response_json"));
		} else {
			str(o, "body", wa_json_str(x, "title"));
			str(o, "payload", wa_json_str(x, "id"));
		}
		return;
	}
	for (i = 0; i < sizeof media / sizeof *media; i++)
		if (strcmp(type, media[i]) == 0) {
			x = wa_json_get(m, type);
			str(o, "media_id", wa_json_str(x, "id"));
			str(o, "body", wa_json_str(x, "caption") ?
			    wa_json_str(x, "caption") :
			    wa_json_str(x, "filename"));
			return;
		}
	if (strcmp(type, "location") == 0) {
		x = wa_json_get(m, "location");
		str(o, "body", wa_json_str(x, "name") ? wa_json_str(x,
		    "name") : wa_json_str(x, "address"));
		lat = json_object_get_string(wa_json_get(x, "latitude"));
		lon = json_object_get_string(wa_json_get(x, "longitude"));
		if (lat != NULL && lon != NULL && strlen(lat) < 60 &&
		    strlen(lon) < 60) {
			snprintf(ll, sizeof ll, "%s,%s", lat, lon);
			str(o, "payload", ll);
		}
		return;
	}
	if (strcmp(type, "contacts") == 0) {
		x = wa_json_get(m, "contacts");
		if (json_object_is_type(x, json_type_array))
			str(o, "body", wa_json_str(json_object_array_get_idx(
			    x, 0), "name.formatted_name"));
		return;
	}
	if (strcmp(type, "reaction") == 0) {
		str(o, "body", wa_json_str(m, "reaction.emoji"));
		if (wa_json_str(m, "context.id") == NULL)
			str(o, "context", wa_json_str(m,
			    "reaction.message_id"));
		return;
	}
	if (strcmp(type, "system") == 0)
		str(o, "body", wa_json_str(m, "system.body"));
}

/* Appends the JSON text s to out, each \u0000 escape as \ufffd. */
static void
nul_free(struct wa_buf *out, const char *s)
{
	size_t i, from = 0;

	for (i = 0; s[i] != '\0'; i++) {
		if (s[i] != '\\')
			continue;
		if (strncmp(s + i + 1, "u0000", 5) == 0) {
			wa_buf_add(out, s + from, i - from);
			wa_buf_add(out, "\\ufffd", 6);
			from = i + 6;
		}
		i++;	/* the escaped character: "\\u0000" is no NUL */
	}
	wa_buf_add(out, s + from, i - from);
}

/*
 * Adds to o what every object has (ts, the timestamp of raw when it has
 * one; raw; line), appends o to out's array, counts it in *n, and lets
 * o go.
 */
static void
append(struct wa_buf *out, size_t *n, struct json_object *o,
    struct json_object *raw, unsigned long lineno)
{
	long long ts;
	const char *s;

	if ((ts = seconds(raw)) >= 0)
		json_object_object_add(o, "ts", json_object_new_int64(ts));
	json_object_object_add(o, "raw", json_object_get(raw));
	json_object_object_add(o, "line", json_object_new_int64(lineno));
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);

	if (out->len == 0)
		wa_buf_add(out, "[", 1);
	else if (*n > 0)
		wa_buf_add(out, ",", 1);
	nul_free(out, s);
	++*n;
	json_object_put(o);
}

void
wa_inbound_add(struct wa_buf *out, size_t *n, struct json_object *value,
    struct json_object *m, unsigned long lineno)
{
	struct json_object *o, *c;
	const char *id, *from, *uid, *type, *s;
	char phone[20];

	if (!json_object_is_type(m, json_type_object))
		return;
	o = json_object_new_object();
	if ((id = wa_json_str(m, "id")) != NULL && strlen(id) <= 256)
		str(o, "wamid", id);
	from = wa_json_str(m, "from");
	if (from != NULL && *from != '\0' && strlen(from) <= 15 &&
	    from[strspn(from, "0123456789")] == '\0') {
		snprintf(phone, sizeof phone, "+%s", from);
		str(o, "phone", phone);
	}
	uid = wa_json_str(m, "from_user_id");
	c = contact(value, from, uid);
	str(o, "wa_id", wa_json_str(c, "wa_id"));
	if (uid == NULL)
		uid = wa_json_str(c, "user_id");
	if (uid != NULL && wa_bsuid_ok(uid))
		str(o, "bsuid", uid);
	str(o, "pnid", wa_json_str(value, "metadata.phone_number_id"));
	type = wa_json_str(m, "type");
	if (type == NULL || *type == '\0' || strlen(type) > 64)
		type = "unknown";
	str(o, "type", type);
	content(o, m, type);
	if ((s = wa_json_str(m, "context.id")) != NULL)
		str(o, "context", s);
	append(out, n, o, m, lineno);
}

void
wa_inbound_event(struct wa_buf *out, size_t *n, const char *field,
    const char *waba, struct json_object *value, unsigned long lineno)
{
	struct json_object *o = json_object_new_object();

	str(o, "field", field);
	if (waba != NULL && strlen(waba) <= 32 &&
	    waba[strspn(waba, "0123456789")] == '\0')
		str(o, "waba", waba);
	append(out, n, o, value, lineno);
}

int
wa_bsuid_ok(const char *s)
{
	size_t n;

	if (s == NULL || strlen(s) < 4 || s[0] < 'A' || s[0] > 'Z' ||
	    s[1] < 'A' || s[1] > 'Z' || s[2] != '.')
		return 0;
	s += 3;
	if (strncmp(s, "ENT.", 4) == 0)
		s += 4;
	n = strspn(s, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz");
	return n > 0 && n <= 128 && s[n] == '\0';
}
