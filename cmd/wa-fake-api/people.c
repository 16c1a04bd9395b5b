/*
 * people.c: the webhooks of what a rehearsal's people do back (people.h),
 * in the shapes of Meta's pages:
 *   - answers: "Received messages" examples of the Cloud API's webhooks
 *     reference: a quick-reply tap is type "button" with button.payload
 *     and button.text and a context (from: the business's number, id:
 *     the message); a text has text.body and, written freely, no context;
 *   - "Stop promotions": the quick reply many marketing templates carry,
 *     tapped (cloud-api-2026.md §5);
 *   - the user_preferences field: user_preferences[] of wa_id, detail,
 *     category "marketing_messages", value "stop" or "resume" and an
 *     integer timestamp, beside contacts[] (cloud-api-2026.md §5);
 *   - the older form of the same: a message of type "system" whose
 *     system.type is "user_preference_changed" and system.marketing
 *     "stop" or "resume";
 *   - a user known by a business-scoped user id alone (the BSUID page):
 *     contacts[].user_id and messages[].from_user_id, no wa_id, no from.
 * Writes into a buffer; reads nothing.
 */
#include <stdio.h>
#include <string.h>

#include "people.h"

/* "contacts":[...] of a person: wa_id, or (BSUID) user_id alone. */
static void
contacts(struct wa_buf *b, const char *wa_id, const char *user_id)
{
	wa_buf_puts(b, "\"contacts\":[{\"profile\":{\"name\":\"Rehearsal\"},");
	wa_buf_puts(b, user_id != NULL ? "\"user_id\":" : "\"wa_id\":");
	wa_buf_json_string(b, user_id != NULL ? user_id : wa_id,
	    strlen(user_id != NULL ? user_id : wa_id));
	wa_buf_puts(b, "}],");
}

void
people_message(struct wa_buf *b, enum people_act act, const char *wa_id,
    const char *business, const char *wamid, const char *id,
    long long secs, const char *text)
{
	char uid[48];
	int bsuid = act == PEOPLE_BSUID_TEXT;
	const char *label = act == PEOPLE_STOP_BUTTON ? "Stop promotions" :
	    "Yes";

	if (bsuid)
		people_user_id(wa_id, uid, sizeof uid);
	contacts(b, wa_id, bsuid ? uid : NULL);
	wa_buf_puts(b, bsuid ? "\"messages\":[{\"from_user_id\":" :
	    "\"messages\":[{\"from\":");
	wa_buf_json_string(b, bsuid ? uid : wa_id, strlen(bsuid ? uid :
	    wa_id));
	wa_buf_puts(b, ",\"id\":");
	wa_buf_json_string(b, id, strlen(id));
	wa_buf_printf(b, ",\"timestamp\":\"%lld\",", secs);
	switch (act) {
	case PEOPLE_BUTTON:
	case PEOPLE_STOP_BUTTON:
		wa_buf_puts(b, "\"context\":{\"from\":");
		wa_buf_json_string(b, business, strlen(business));
		wa_buf_puts(b, ",\"id\":");
		wa_buf_json_string(b, wamid, strlen(wamid));
		wa_buf_printf(b, "},\"type\":\"button\",\"button\":{"
		    "\"payload\":\"%s\",\"text\":\"%s\"}}]",
		    act == PEOPLE_BUTTON ? "yes" : label, label);
		break;
	case PEOPLE_SYSTEM_STOP:
	case PEOPLE_SYSTEM_RESUME:
		wa_buf_printf(b, "\"type\":\"system\",\"system\":{\"body\":"
		    "\"User requested to %s marketing messages\",\"type\":"
		    "\"user_preference_changed\",\"marketing\":\"%s\"}}]",
		    act == PEOPLE_SYSTEM_STOP ? "stop" : "resume",
		    act == PEOPLE_SYSTEM_STOP ? "stop" : "resume");
		break;
	default:
		wa_buf_puts(b, "\"type\":\"text\",\"text\":{\"body\":");
		wa_buf_json_string(b, text, strlen(text));
		wa_buf_puts(b, "}}]");
	}
}

void
people_preference(struct wa_buf *b, const char *wa_id, int stop,
    long long secs)
{
	const char *v = stop ? "stop" : "resume";

	contacts(b, wa_id, NULL);
	wa_buf_puts(b, "\"user_preferences\":[{\"wa_id\":");
	wa_buf_json_string(b, wa_id, strlen(wa_id));
	wa_buf_printf(b, ",\"detail\":\"User requested to %s marketing "
	    "messages\",\"category\":\"marketing_messages\",\"value\":\"%s\","
	    "\"timestamp\":%lld}]", v, v, secs);
}

const char *
people_wa_id(const char *digits, int old_br, char *out)
{
	size_t n = strlen(digits);

	if (old_br && n == 13 && strncmp(digits, "55", 2) == 0 &&
	    digits[4] == '9') {
		memcpy(out, digits, 4);
		memcpy(out + 4, digits + 5, n - 5 + 1);
	} else
		snprintf(out, 16, "%s", digits);
	return out;
}

const char *
people_user_id(const char *digits, char *out, size_t size)
{
	unsigned long long h = 14695981039346656037ULL;

	/* FNV-1a: the same person, the same id, run after run. */
	for (; *digits; digits++)
		h = (h ^ (unsigned char)*digits) * 1099511628211ULL;
	snprintf(out, size, "US.%llu", h);
	return out;
}
