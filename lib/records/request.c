/*
 * request.c: a send request (DESIGN.md "The NDJSON contract") checked and
 * turned into the template message the Cloud API expects, with the
 * recipient id and attempt in biz_opaque_callback_data; or, for a line
 * with a "message", the message of a conversation (conversation()).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"
#include "records/json.h"
#include "records/phone.h"
#include "records/request.h"
#include "records/stamp.h"

/* Scalars as text: strings as they are, numbers in JSON. */
static const char *
scalar(struct json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_string:
	case json_type_int:
		return json_object_get_string(o);
	default:
		return NULL;
	}
}

int
wa_number_id_valid(const char *s)
{
	size_t n = strspn(s, "0123456789abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ_-");

	return n > 0 && n <= WA_NUMBER_ID_MAX && s[n] == '\0';
}

static void
text_param(struct wa_buf *b, const char *name, const char *text)
{
	wa_buf_puts(b, "{\"type\":\"text\",");
	if (name != NULL) {
		wa_buf_puts(b, "\"parameter_name\":");
		wa_buf_json_string(b, name, strlen(name));
		wa_buf_add(b, ",", 1);
	}
	wa_buf_puts(b, "\"text\":");
	wa_buf_json_string(b, text, strlen(text));
	wa_buf_add(b, "}", 1);
}

/*
 * template.params as the body's parameters: an array fills positional
 * {{1}}, {{2}}...; an object fills named ones. A value that is itself an
 * object is a whole parameter (currency, date_time...), sent verbatim.
 */
static const char *
params(struct wa_buf *b, struct json_object *p)
{
	struct json_object *v;
	const char *t;
	size_t i, n;
	int first = 1;

	if (p == NULL || json_object_is_type(p, json_type_null))
		return NULL;
	wa_buf_puts(b, ",\"components\":[{\"type\":\"body\",\"parameters\":[");
	if (json_object_is_type(p, json_type_array)) {
		n = json_object_array_length(p);
		for (i = 0; i < n; i++) {
			v = json_object_array_get_idx(p, i);
			if (i > 0)
				wa_buf_add(b, ",", 1);
			if (json_object_is_type(v, json_type_object))
				wa_buf_puts(b, wa_json_text(v));
			else if ((t = scalar(v)) != NULL)
				text_param(b, NULL, t);
			else
				return "template.params holds a value that "
				    "is not a string, number or object";
		}
	} else if (json_object_is_type(p, json_type_object)) {
		json_object_object_foreach(p, k, val) {
			if (!first)
				wa_buf_add(b, ",", 1);
			first = 0;
			if ((t = scalar(val)) == NULL)
				return "template.params holds a value that "
				    "is not a string or number";
			text_param(b, k, t);
		}
	} else
		return "template.params is not an array or object";
	wa_buf_puts(b, "]}]");
	return NULL;
}

/*
 * Keeps the request's text, line (len bytes), for its result: as it came,
 * or re-written without the "result" of an earlier run.
 */
static void
keep(struct wa_request *s, struct json_object *req, const char *line,
    size_t len)
{
	s->line.len = 0;
	if (json_object_object_get_ex(req, "result", NULL)) {
		json_object_object_del(req, "result");
		wa_buf_puts(&s->line, wa_json_text(req));
		return;
	}
	while (len > 0 && strchr(" \t\r", line[len - 1]) != NULL)
		len--;
	wa_buf_add(&s->line, line, len);
}

/*
 * A line whose "message" is a Cloud API message that is not a template
 * (the send-messages reference's types: text, image, audio, document,
 * video, sticker, location, contacts, interactive, reaction), to phone:
 * a reply to someone whose customer-service window is open, as the
 * line's "window_closes_at" (RFC 3339: wa-inbound's) says; its
 * "reply_to", the wamid of the message it answers, becomes its context.
 * Meta refuses a message outside the window (131047): so does this,
 * before the call. Returns NULL, or why.
 */
static const char *
conversation(struct wa_request *s, struct json_object *req,
    const char *phone)
{
	static const char *const types[] = { "text", "image", "audio",
	    "document", "video", "sticker", "location", "contacts",
	    "interactive", "reaction" };
	static char why[200];
	struct json_object *m = wa_json_get(req, "message"), *w;
	const char *type = wa_json_str(m, "type"), *bad, *to;
	char at[WA_STAMP_MAX];
	size_t i;

	for (i = 0; type != NULL && i < sizeof types / sizeof *types; i++)
		if (strcmp(type, types[i]) == 0)
			break;
	if (type == NULL || i == sizeof types / sizeof *types)
		return "message.type is not one of text, image, audio, "
		    "document, video, sticker, location, contacts, "
		    "interactive, reaction (a template goes as \"template\")";
	if (!json_object_is_type(wa_json_get(m, type), json_type_object)) {
		snprintf(why, sizeof why, "message.%s, the %s message, is "
		    "missing or not an object", type, type);
		return why;
	}
	w = wa_json_get(req, "window_closes_at");
	if (!json_object_is_type(w, json_type_string))
		return "a message that is not a template goes only to someone "
		    "whose customer-service window is open: the line needs "
		    "its \"window_closes_at\" (wa-inbound gives it)";
	if ((bad = wa_stamp(json_object_get_string(w),
	    json_object_get_string_len(w), at)) != NULL) {
		snprintf(why, sizeof why, "window_closes_at: %s", bad);
		return why;
	}
	if (wa_stamp_seconds(at) <= (int64_t)time(NULL)) {
		snprintf(why, sizeof why, "the customer-service window with %s "
		    "closed at %s: Meta would refuse the message (131047); "
		    "only a template may go", phone, json_object_get_string(w));
		return why;
	}
	wa_buf_puts(&s->body, ",\"type\":");
	wa_buf_json_string(&s->body, type, strlen(type));
	wa_buf_printf(&s->body, ",\"%s\":", type);
	wa_buf_puts(&s->body, wa_json_text(wa_json_get(m, type)));
	if ((to = wa_json_str(req, "reply_to")) != NULL) {
		wa_buf_puts(&s->body, ",\"context\":{\"message_id\":");
		wa_buf_json_string(&s->body, to, strlen(to));
		wa_buf_add(&s->body, "}", 1);
	}
	wa_buf_add(&s->body, "}", 1);
	return NULL;
}

/*
 * Checks request req (the text of line, len bytes) and fills s for a POST
 * under base. Returns NULL, or why the request cannot be sent. A request
 * belongs to its campaign_id; one without (hand-written) to its number
 * and template, for halts.
 */
const char *
wa_request_prepare(struct wa_request *s, struct json_object *req,
    const char *line, size_t len, const char *base)
{
	static char why[160];
	struct json_object *tpl, *lang, *comp, *o;
	const char *number, *to, *name, *bad, *tag;
	char phone[WA_PHONE_MAX], cb[WA_CALLBACK_MAX + 1], dep[24] = "";
	int64_t id, attempt = 0;
	size_t n;

	s->url.len = s->body.len = s->campaign.len = 0;
	keep(s, req, line, len);
	number = scalar(wa_json_get(req, "phone_number_id"));
	if (number == NULL || *number == '\0')
		return "no phone_number_id";
	if (!wa_number_id_valid(number))
		return "phone_number_id is not a phone number id";
	if ((o = wa_json_get(req, "to")) == NULL ||
	    !json_object_is_type(o, json_type_string))
		return "no \"to\"";
	to = json_object_get_string(o);
	if ((bad = wa_phone_e164(to, json_object_get_string_len(o), NULL,
	    phone)) != NULL) {
		snprintf(why, sizeof why, "\"to\" '%.40s' is not an E.164 "
		    "number: %s", to, bad);
		return why;
	}
	if (wa_json_get(req, "message") != NULL) {
		if (wa_json_get(req, "template") != NULL ||
		    wa_json_get(req, "id") != NULL)
			return "a message of a conversation has no template "
			    "and names no campaign row (no \"id\")";
		snprintf(s->number, sizeof s->number, "%s", number);
		wa_buf_printf(&s->url, "%s/%s/messages", base, number);
		wa_buf_puts(&s->body, "{\"messaging_product\":\"whatsapp\","
		    "\"recipient_type\":\"individual\",\"to\":");
		wa_buf_json_string(&s->body, phone, strlen(phone));
		if ((bad = conversation(s, req, phone)) != NULL)
			return bad;
		if (wa_json_check(s->body.s, s->body.len, WA_JSON_RECORD,
		    WA_JSON_DEPTH, why, sizeof why) < 0)
			return "the message is nested too deep or holds what "
			    "JSON records may not";
		wa_buf_printf(&s->campaign, "number %s conversations", number);
		return NULL;
	}
	tpl = wa_json_get(req, "template");
	if ((name = wa_json_str(tpl, "name")) == NULL || *name == '\0')
		return "no template.name";
	lang = wa_json_get(tpl, "language");
	if (!json_object_is_type(lang, json_type_string) &&
	    wa_json_str(lang, "code") == NULL)
		return "no template.language";
	comp = wa_json_get(tpl, "components");
	if (comp != NULL && !json_object_is_type(comp, json_type_array))
		return "template.components is not an array";

	snprintf(s->number, sizeof s->number, "%s", number);
	wa_buf_printf(&s->url, "%s/%s/messages", base, number);
	wa_buf_puts(&s->body, "{\"messaging_product\":\"whatsapp\","
	    "\"recipient_type\":\"individual\",\"to\":");
	wa_buf_json_string(&s->body, phone, strlen(phone));
	wa_buf_puts(&s->body, ",\"type\":\"template\"");
	/*
	 * The callback data is written from the numbers, in the one form
	 * records/status.c reads back and wa-record's fence matches: an id
	 * of " 5", "+5", "05" or -5 is refused, not sent as "wapipe: 5".
	 * (0 is its own form: no row has it, and status.c reads it as none.)
	 */
	if (wa_json_get(req, "attempt") != NULL &&
	    (wa_json_canon_int(req, "attempt", &attempt) != 1 ||
	    attempt < 0))
		return "\"attempt\" is not an integer of 0 or more (a JSON "
		    "number, or digits without sign, space or leading zero)";
	if ((o = wa_json_get(req, "deployment")) != NULL) {
		tag = json_object_is_type(o, json_type_string) ?
		    json_object_get_string(o) : "";
		n = strlen(tag);
		if (n < 1 || n > WA_DEPLOYMENT_MAX ||
		    strspn(tag, "0123456789abcdefghijklmnopqrstuvwxyz") != n)
			return "\"deployment\" is not a deployment tag (1 to "
			    "16 digits and lower-case letters)";
		snprintf(dep, sizeof dep, "%s:", tag);
	}
	if (wa_json_get(req, "id") != NULL) {
		if (wa_json_canon_int(req, "id", &id) != 1 || id < 0)
			return "\"id\" is not an integer of 0 or more (a "
			    "JSON number, or digits without sign, space or "
			    "leading zero)";
		if (wa_json_get(req, "attempt") != NULL)
			n = snprintf(cb, sizeof cb, WA_CALLBACK_PREFIX
			    "%s%lld:%lld", dep, (long long)id,
			    (long long)attempt);
		else
			n = snprintf(cb, sizeof cb, WA_CALLBACK_PREFIX "%lld",
			    (long long)id);
		wa_buf_puts(&s->body, ",\"biz_opaque_callback_data\":");
		wa_buf_json_string(&s->body, cb, n);
	}
	wa_buf_puts(&s->body, ",\"template\":{\"name\":");
	wa_buf_json_string(&s->body, name, strlen(name));
	wa_buf_puts(&s->body, ",\"language\":");
	if (json_object_is_type(lang, json_type_string)) {
		wa_buf_puts(&s->body, "{\"code\":");
		wa_buf_json_string(&s->body, json_object_get_string(lang),
		    json_object_get_string_len(lang));
		wa_buf_add(&s->body, "}", 1);
	} else
		wa_buf_puts(&s->body, wa_json_text(lang));
	if (comp != NULL) {
		wa_buf_puts(&s->body, ",\"components\":");
		wa_buf_puts(&s->body, wa_json_text(comp));
	} else if ((bad = params(&s->body, wa_json_get(tpl, "params"))))
		return bad;
	wa_buf_puts(&s->body, "}}");
	/*
	 * What is sent must be what every stage takes: template.params go
	 * two levels deeper in the body than in the request.
	 */
	if (wa_json_check(s->body.s, s->body.len, WA_JSON_RECORD,
	    WA_JSON_DEPTH, why, sizeof why) < 0) {
		if (strncmp(why, "nested", 6) == 0)
			snprintf(why, sizeof why, "template.params nested too "
			    "deep: the message would be deeper than %d levels",
			    WA_JSON_DEPTH);
		return why;
	}

	if ((o = wa_json_get(req, "campaign_id")) != NULL && scalar(o))
		wa_buf_printf(&s->campaign, "campaign %s", scalar(o));
	else
		wa_buf_printf(&s->campaign, "number %s template %s", number,
		    name);
	return NULL;
}

void
wa_request_free(struct wa_request *s)
{
	wa_buf_free(&s->url);
	wa_buf_free(&s->body);
	wa_buf_free(&s->campaign);
	wa_buf_free(&s->line);
}

/* Adds what --dry-run shows: the URL and the body it would POST. */
void
wa_request_dry(struct json_object *req, const struct wa_request *s)
{
	struct json_object *d = json_object_new_object();
	struct json_tokener *tok = wa_json_tokener();

	json_object_object_add(d, "url", json_object_new_string(s->url.s));
	json_object_object_add(d, "body", json_tokener_parse_ex(tok,
	    s->body.s, s->body.len));
	json_object_object_add(req, "dry_run", d);
	json_tokener_free(tok);
}
