/*
 * hooks.h: sends status webhooks the way Meta does: statuses batched
 * into the Cloud API's envelope (and inbound messages, a change each),
 * each POST signed with X-Hub-Signature-256, retried with exponential
 * backoff until the receiver answers 200. A thread of its own does the
 * sending (libcurl multi), so adding a status never blocks. Programs
 * using it link libcurl and libcrypto.
 */
#ifndef WA_FAKE_HOOKS_H
#define WA_FAKE_HOOKS_H

#include <stddef.h>
#include <stdint.h>

struct wa_hooks_conf {
	const char	*url;
	const char	*secret;	/* the app secret that signs bodies */
	int		 batch;		/* statuses per POST, 1 to 1000 */
	int		 inflight;	/* POSTs under way at once */
	int64_t		 linger_ms;	/* a due status waits this long for
					   a fuller batch */
	int64_t		 retry_ms;	/* first retry; doubles each time */
	int64_t		 retry_max_ms;
	int64_t		 timeout_ms;	/* of one POST */
	const char	*log;		/* a line per POST attempt, or NULL */
	const char	*waba_id;	/* entry[].id */
	const char	*display_phone;	/* metadata.display_phone_number */
};

struct wa_hooks_stats {
	uint64_t	posts;		/* attempts */
	uint64_t	delivered;	/* items in POSTs answered 200 */
	uint64_t	undelivered;	/* items dropped by wa_hooks_stop */
};

struct wa_hooks;
struct wa_hooks *wa_hooks_start(const struct wa_hooks_conf *c);
void wa_hooks_add(struct wa_hooks *h, int64_t due, const char *pnid,
    const char *status, size_t len);
/* The field of a change of its own. */
enum wa_hooks_field { WA_HOOKS_MESSAGES = 1, WA_HOOKS_PREFERENCES,
    WA_HOOKS_TEMPLATE };
/*
 * Queues a change of its own for phone number pnid, due at wa_now_ms
 * time due: its value is messaging_product, metadata and then value
 * (len bytes of JSON members, such as "contacts":[...],"messages":[...]);
 * its field "messages" or "user_preferences"; or, of field
 * "message_template_status_update", value alone (a template's update
 * names no number).
 */
void wa_hooks_add_value(struct wa_hooks *h, int64_t due, const char *pnid,
    const char *value, size_t len, enum wa_hooks_field field);
void wa_hooks_stop(struct wa_hooks *h, struct wa_hooks_stats *st);
/* The business's number, as the webhooks' metadata give it (digits). */
const char *wa_hooks_display_phone(const struct wa_hooks *h);

#endif
