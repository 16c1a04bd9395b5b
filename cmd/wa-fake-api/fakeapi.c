/*
 * fakeapi.c: the Cloud API's behaviour for wa-fake-api (fakeapi.h).
 *
 * While the --outage-file exists, every request is answered with the HTTP
 * status it holds (503 when it holds none), as a load balancer in front
 * of a service that is down would, before any other check.
 *
 * A request is checked in Meta's order as far as it is known: the token
 * (190, HTTP 401), the path (100; a phone_number_id that is not an id,
 * records/request.h's wa_number_id_valid, or not one of --numbers, is
 * Graph's "Unsupported post request", 100 with error_subcode 33; one that
 * is not an id never reaches a webhook or the log as it came: its bytes
 * need not even be UTF-8), the body (100,
 * 131008, 131009, 131051),
 * the template (132001, HTTP 404); then a --script matching the end of
 * `to` (the longest suffix wins); then --error-rate and --drop-rate; then
 * the throughput limit (130429: at most `rate` messages accepted from one
 * phone_number_id in any 1000 ms, refusals not counted) and the pair limit
 * (131056: an accepted message to the same `to` from the same number less
 * than pair_ms after the last accepted one). What passes is accepted: a
 * new wamid, a log line, and its status webhooks queued. Error answers
 * carry the HTTP status of Meta's legacy table (cloud-api.md §3.2).
 *
 * Sent and delivered statuses carry the pricing Meta gives a template of
 * --category (marketing unless told) delivered outside any free window:
 * that category, type regular, billable (cloud-api-2026.md §1: since 1
 * October 2026 even a utility template inside a customer service window
 * is charged, and the fake opens no free entry point window).
 *
 * The version in the path (v25.0) picks the webhooks' shapes: before
 * v24.0 a sent status carries "conversation", from v24.0 on (or with a
 * path whose version is none) it does not (cloud-api-2026.md §1.5).
 *
 * Not Meta's: POST /{version}/{phone_number_id}/inbound, with the same
 * token, queues the webhook of a message a person sends to the number,
 * {"from":"+15551234567","text":"STOP"} as a text, or {"message":{...}}
 * as it is given, so that a test or a rehearsal can have someone answer
 * (an opt-out). The script reply:TEXT has the person answer every send
 * accepted, after its statuses; stop-button, prefs:stop|resume,
 * system:stop|resume and bsuid:TEXT have the person do what people.c
 * writes, and --reply-rate has a share of them answer. --foreign-rate
 * adds another app's statuses, --titleless drops errors' titles,
 * --old-br-wa-ids gives old Brazilian wa_ids (people.c).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/sig.h"
#include "records/json.h"
#include "records/phone.h"
#include "records/request.h"
#include "fakeapi.h"
#include "people.h"
/* A wamid and its NUL: 58 characters for 11 digits, 66 for 15. */
#define WAMID_MAX	80
#define HREF		"/documentation/business-messaging/whatsapp/" \
			"support/error-codes"

static const struct meta_error {
	long		 code;
	unsigned int	 http;
	const char	*title;
	const char	*details;
} meta_errors[] = {
	{ 0, 401, "AuthException", "Unable to authenticate the app user." },
	{ 1, 400, "API Unknown", "Invalid request or possible server error." },
	{ 2, 503, "API Service", "Temporary downtime or overload." },
	{ 3, 500, "API Method", "Capability or permissions issue." },
	{ 4, 400, "API Too Many Calls",
	    "The app has reached its API call rate limit." },
	{ 10, 403, "Permission Denied",
	    "Permission is either not granted or has been removed." },
	{ 33, 400, "Parameter value is not valid",
	    "The business phone number has been deleted." },
	{ 100, 400, "Invalid parameter",
	    "Unsupported or misspelled parameter." },
	{ 190, 401, "Access token has expired",
	    "Your access token has expired or is not valid." },
	{ 200, 403, "Permission error", "No access token was provided." },
	{ 368, 403, "Temporarily blocked for policies violations",
	    "The WhatsApp Business Account has been restricted." },
	{ 80007, 400, "Rate limit issues",
	    "The WhatsApp Business Account has reached its rate limit." },
	{ 130429, 400, "Rate limit hit",
	    "Cloud API message throughput has been reached." },
	{ 130472, 400, "User's number is part of an experiment",
	    "Message was not sent as part of an experiment." },
	{ 130497, 400, "Business account is restricted from messaging users "
	    "in this country", "Messaging users in this country is "
	    "restricted." },
	{ 131000, 500, "Something went wrong",
	    "Message failed to send due to an unknown error." },
	{ 131005, 403, "Access denied",
	    "Permission is either not granted or has been removed." },
	{ 131008, 400, "Required parameter is missing",
	    "The request is missing a required parameter." },
	{ 131009, 400, "Parameter value is not valid",
	    "One or more parameter values are invalid." },
	{ 131016, 500, "Service unavailable",
	    "A service is temporarily unavailable." },
	{ 131021, 400, "Recipient cannot be sender",
	    "Sender and recipient phone number is the same." },
	{ 131026, 400, "Message undeliverable",
	    "Unable to deliver message to this recipient." },
	{ 131031, 403, "Account has been locked",
	    "The business account has been locked." },
	{ 131042, 400, "Business eligibility payment issue",
	    "There was an error related to the payment method." },
	{ 131047, 400, "Re-engagement message", "More than 24 hours have "
	    "passed since the recipient last replied." },
	{ 131048, 400, "Spam rate limit hit", "Too many previous messages "
	    "from this number were blocked or flagged as spam." },
	{ 131049, 400, "This message was not delivered to maintain healthy "
	    "ecosystem engagement.", "In order to maintain a healthy "
	    "ecosystem engagement, the message failed to be delivered." },
	{ 131050, 400, "Unable to deliver the message",
	    "The recipient has stopped marketing messages from you." },
	{ 131051, 400, "Unsupported message type",
	    "Message type is not supported." },
	{ 131056, 400, "(Business Account, Consumer Account) pair rate limit "
	    "hit", "Too many messages sent from the sender phone number to "
	    "the same recipient phone number in a short period of time." },
	{ 131057, 500, "Account in maintenance mode",
	    "Business Account is in maintenance mode." },
	{ 132000, 400, "Template Param Count Mismatch", "The number of "
	    "parameters does not match the template." },
	{ 132001, 404, "Template does not exist", "The template does not "
	    "exist in the specified language or is not approved." },
	{ 132005, 400, "Template Hydrated Text Too Long",
	    "Translated text is too long." },
	{ 132007, 400, "Template Format Character Policy Violated",
	    "Template content violates a WhatsApp policy." },
	{ 132012, 400, "Template Parameter Format Mismatch",
	    "Variable parameter values formatted incorrectly." },
	{ 132015, 400, "Template is Paused",
	    "Template is paused due to low quality." },
	{ 132016, 400, "Template is Disabled",
	    "Template has been paused too many times and is disabled." },
	{ 132018, 400, "There's an issue with the parameters in your "
	    "template message", "The template's parameters are not valid." },
	{ 133004, 503, "Server Temporarily Unavailable",
	    "Server is temporarily unavailable." },
	{ 133010, 400, "Phone number Not Registered",
	    "Phone number not registered on the WhatsApp Business Platform." },
	{ 135000, 400, "Generic user error", "Message failed to send "
	    "because of an unknown error with your request parameters." },
};

/* Outcomes, as the log names them. */
enum { SENT, ERROR, HANG, DROP, GARBAGE, DOWN, INBOUND, READ };
static const char *outcomes[] = { "sent", "error", "hang", "drop",
    "garbage", "down", "inbound", "read" };

/* A hash table of keys with a time: pair limits, once: scripts. */
struct ent {
	struct ent	*next;
	int64_t		 t;
	char		 key[];
};
struct table {
	struct ent	**b;
	size_t		 nb;
	size_t		 n;
};

/* The accepted times of one number, a ring of `rate` slots. */
struct number {
	struct number	*next;
	int64_t		*ring;
	int64_t		 head;
	int64_t		 n;
	char		 pnid[];
};

struct wa_fake {
	struct wa_fake_conf c;
	pthread_mutex_t	 mu;
	uint64_t	 rng;
	unsigned char	 run[8];	/* makes wamids unique across runs */
	uint64_t	 serial;
	struct number	*numbers;
	struct table	 pairs;
	int64_t		 swept;
	struct table	 once;
	struct table	 windows;	/* "pnid digits": a person's last
					   message to the number */
	int		 logfd;
	struct wa_fake_stats st;
	int64_t		 tpl_sends;	/* templates accepted to go */
	char		 paused[600];	/* "name\tlanguage" paused, or "" */
};

/* What a request asked for, as far as it could be read. */
struct req {
	struct json_object *obj;
	char		 pnid[WA_NUMBER_ID_MAX + 1];	/* "": none */
	const char	*id;		/* the URL's id as it came, or NULL */
	size_t		 idlen;
	const char	*to;
	const char	*tmpl;
	const char	*callback;
	char		 version[16];	/* "v25.0", or "": none */
	int		 major;		/* its 25, or 0 */
	int		 inbound;	/* POST .../inbound */
	int		 reply;		/* a message that is not a template */
	const char	*text;		/* its text, or */
	struct json_object *msg;	/* its message as given */
	char		 details[256];	/* a template refusal's, or "" */
	char		 path[256];	/* a GET's, valid UTF-8 */
};

/* What was decided. */
struct verdict {
	int		 outcome;
	long		 code;		/* -1: none */
	unsigned int	 http;		/* 0: none */
	int		 lost;		/* accepted, but close unanswered */
	int		 mojibake;	/* the message in bad UTF-8 */
	int		 noobject;	/* 100/33: the id is no object */
	const char	*method;
	int64_t		 delay_ms;
	char		 wamid[WAMID_MAX];
	char		 wa_id[16];	/* of the person sent to */
};

static uint64_t
rnd(struct wa_fake *f)
{
	uint64_t z = (f->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double
unit(struct wa_fake *f)
{
	return (rnd(f) >> 11) * 0x1.0p-53;
}

static char *
dupn(const char *s, size_t n)
{
	char *p = wa_alloc(n + 1);

	memcpy(p, s, n);
	return p;
}

static const struct meta_error *
meta_error(long code)
{
	static const struct meta_error unknown = { -1, 400, "Error",
	    "An error scripted by wa-fake-api." };
	size_t i;

	for (i = 0; i < sizeof meta_errors / sizeof meta_errors[0]; i++)
		if (meta_errors[i].code == code)
			return &meta_errors[i];
	return &unknown;
}

/* The HTTP status of Meta's legacy table for code; unknown codes 400. */
static unsigned int
http_of(long code)
{
	if (code >= 200 && code <= 299)
		return 403;
	return meta_error(code)->http;
}

static uint64_t
hash(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

/* The entry for key, created with t = INT64_MIN when absent. */
static struct ent *
table_get(struct table *t, const char *key)
{
	struct ent *e, **b, *next;
	size_t i, n;

	if (t->n >= t->nb) {
		n = t->nb ? t->nb * 2 : 1024;
		b = wa_alloc(n * sizeof *b);
		for (i = 0; i < t->nb; i++)
			for (e = t->b[i]; e != NULL; e = next) {
				next = e->next;
				e->next = b[hash(e->key) % n];
				b[hash(e->key) % n] = e;
			}
		free(t->b);
		t->b = b;
		t->nb = n;
	}
	b = &t->b[hash(key) % t->nb];
	for (e = *b; e != NULL; e = e->next)
		if (strcmp(e->key, key) == 0)
			return e;
	e = wa_alloc(sizeof *e + strlen(key) + 1);
	strcpy(e->key, key);
	e->t = INT64_MIN;
	e->next = *b;
	*b = e;
	t->n++;
	return e;
}

/* Removes the entries older than before. */
static void
table_sweep(struct table *t, int64_t before)
{
	struct ent **p, *e;
	size_t i;

	for (i = 0; i < t->nb; i++)
		for (p = &t->b[i]; (e = *p) != NULL;)
			if (e->t < before) {
				*p = e->next;
				free(e);
				t->n--;
			} else
				p = &e->next;
}

static void
table_free(struct table *t)
{
	table_sweep(t, INT64_MAX);
	free(t->b);
}

void
wa_fake_add_script(struct wa_fake_conf *c, const char *arg)
{
	static const struct {
		const char *name;
		int act, has_arg;
	} acts[] = {
		{ "http:", WA_FAKE_HTTP, 1 }, { "hang", WA_FAKE_HANG, 0 },
		{ "drop", WA_FAKE_DROP, 0 }, { "garbage", WA_FAKE_GARBAGE, 0 },
		{ "once:", WA_FAKE_ONCE, 1 }, { "slow:", WA_FAKE_SLOW, 1 },
		{ "fail:", WA_FAKE_FAIL, 1 }, { "lost", WA_FAKE_LOST, 0 },
		{ "mojibake:", WA_FAKE_MOJIBAKE, 1 },
		{ "reply:", WA_FAKE_REPLY, 1 },
	};
	static const struct {
		const char *name;
		int act;
	} people[] = {
		{ "stop-button", PEOPLE_STOP_BUTTON },
		{ "prefs:stop", PEOPLE_PREFS_STOP },
		{ "prefs:resume", PEOPLE_PREFS_RESUME },
		{ "system:stop", PEOPLE_SYSTEM_STOP },
		{ "system:resume", PEOPLE_SYSTEM_RESUME },
	};
	const char *eq = strchr(arg, '='), *a;
	struct wa_fake_script *s;
	size_t i, n;

	if (eq == NULL)
		wa_die(EX_USAGE, "--script %s: not SUFFIX=ACTION", arg);
	c->scripts = wa_realloc(c->scripts, (c->nscripts + 1) *
	    sizeof *c->scripts);
	s = &c->scripts[c->nscripts++];
	memset(s, 0, sizeof *s);
	s->suffix = dupn(arg, eq - arg);
	a = eq + 1;
	if (*a >= '0' && *a <= '9') {
		s->act = WA_FAKE_CODE;
		s->arg = wa_num(a, 0, 9999999, "--script error code");
		return;
	}
	for (i = 0; i < sizeof people / sizeof *people; i++)
		if (strcmp(a, people[i].name) == 0) {
			s->act = WA_FAKE_PERSON;
			s->arg = people[i].act;
			return;
		}
	if (strncmp(a, "bsuid:", 6) == 0) {
		if (a[6] == '\0' || !wa_utf8_valid(a + 6, strlen(a + 6)))
			wa_die(EX_USAGE, "--script %s: bsuid: needs a text in "
			    "UTF-8", arg);
		s->act = WA_FAKE_PERSON;
		s->arg = PEOPLE_BSUID_TEXT;
		s->text = dupn(a + 6, strlen(a + 6));
		return;
	}
	for (i = 0; i < sizeof acts / sizeof acts[0]; i++) {
		n = strlen(acts[i].name);
		if (acts[i].has_arg ? strncmp(a, acts[i].name, n) != 0 :
		    strcmp(a, acts[i].name) != 0)
			continue;
		s->act = acts[i].act;
		if (s->act == WA_FAKE_REPLY) {
			if (a[n] == '\0' || !wa_utf8_valid(a + n,
			    strlen(a + n)))
				wa_die(EX_USAGE, "--script %s: reply: needs "
				    "a text in UTF-8", arg);
			s->text = dupn(a + n, strlen(a + n));
		} else if (s->act == WA_FAKE_HTTP)
			s->arg = wa_num(a + n, 100, 599, "--script http:");
		else if (acts[i].has_arg)
			s->arg = wa_num(a + n, 0, s->act == WA_FAKE_SLOW ?
			    3600000 : 9999999, arg);
		return;
	}
	wa_die(EX_USAGE, "--script %s: unknown action '%s'", arg, a);
}

void
wa_fake_add_errate(struct wa_fake_conf *c, const char *arg)
{
	const char *colon = strchr(arg, ':');
	struct wa_buf code = { 0 };
	double sum = 0;
	size_t i;

	if (colon == NULL)
		wa_die(EX_USAGE, "--error-rate %s: not CODE:FRACTION", arg);
	wa_buf_add(&code, arg, colon - arg);
	c->errates = wa_realloc(c->errates, (c->nerrates + 1) *
	    sizeof *c->errates);
	c->errates[c->nerrates].code = wa_num(code.s, 0, 9999999,
	    "--error-rate code");
	c->errates[c->nerrates++].fraction = wa_fnum(colon + 1, 0, 1,
	    "--error-rate fraction");
	for (i = 0; i < c->nerrates; i++)
		sum += c->errates[i].fraction;
	if (sum > 1)
		wa_die(EX_USAGE, "--error-rate fractions add up to over 1");
	wa_buf_free(&code);
}

void
wa_fake_set_category(struct wa_fake_conf *c, const char *s)
{
	static const char *const cats[] = { "marketing", "utility",
	    "authentication", "authentication-international" };
	size_t i;

	for (i = 0; i < sizeof cats / sizeof *cats; i++)
		if (strcmp(s, cats[i]) == 0) {
			c->category = cats[i];
			return;
		}
	wa_die(EX_USAGE, "--category is marketing, utility, authentication "
	    "or authentication-international, not '%s'", s);
}

/* Whether id is an object of ours: a number of --numbers, or any id. */
static int
known(const struct wa_fake *f, const char *id)
{
	size_t i;

	if (*id == '\0')
		return 0;
	for (i = 0; i < f->c.nnumbers; i++)
		if (strcmp(f->c.numbers[i], id) == 0)
			return 1;
	return f->c.numbers == NULL;
}

struct wa_fake *
wa_fake_new(struct wa_fake_conf *c)
{
	struct wa_fake *f = wa_alloc(sizeof *f);

	f->c = *c;
	memset(c, 0, sizeof *c);
	wa_fake_graph_init(&f->c);
	pthread_mutex_init(&f->mu, NULL);
	arc4random_buf(f->run, sizeof f->run);
	if (f->c.seeded)
		f->rng = f->c.seed;
	else
		arc4random_buf(&f->rng, sizeof f->rng);
	f->logfd = -1;
	if (f->c.log != NULL && (f->logfd = open(f->c.log,
	    O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0)
		wa_die(EX_CANTCREAT, "open %s:", f->c.log);
	return f;
}

/* The version of a path that starts "/v25.0/", else "" and 0. */
static void
version(struct req *q, const char *url, const char *p)
{
	size_t n = p - url - 1, a;
	char *s = q->version;

	if (n >= sizeof q->version)
		return;
	memcpy(s, url + 1, n);
	s[n] = '\0';
	a = strspn(s + 1, "0123456789");
	if (s[0] != 'v' || a < 1 || a > 3 || s[1 + a] != '.' || n < a + 3 ||
	    strspn(s + 2 + a, "0123456789") != n - 2 - a) {
		s[0] = '\0';
		return;
	}
	q->major = atoi(s + 1);
}

/* Picks out the phone number id and the fields the log shows. */
static void
parse(struct req *q, const char *url, const char *body, size_t len)
{
	struct json_tokener *tok;
	const char *p, *end;
	char why[160];

	memset(q, 0, sizeof *q);
	/* "/{version}/{phone_number_id}/messages" (or "/inbound") */
	if (url[0] == '/' && (p = strchr(url + 1, '/')) != NULL && p > url + 1)
		version(q, url, p);
	if (url[0] == '/' && (p = strchr(url + 1, '/')) != NULL && p > url + 1
	    && (end = strchr(p + 1, '/')) != NULL && end > p + 1 &&
	    ((q->inbound = strcmp(end, "/inbound") == 0) ||
	    strcmp(end, "/messages") == 0)) {
		q->id = p + 1;
		q->idlen = end - p - 1;
		/* Only an id goes on, into the log and the webhooks. */
		if (q->idlen < sizeof q->pnid) {
			memcpy(q->pnid, q->id, q->idlen);
			if (!wa_number_id_valid(q->pnid))
				q->pnid[0] = '\0';
		}
	}
	if (body == NULL)
		return;
	/* One JSON object, checked as every line we read is (code 100). */
	tok = wa_json_tokener();
	q->obj = wa_json_parse(tok, body, len, 0, WA_JSON_DEPTH, why,
	    sizeof why);
	json_tokener_free(tok);
	q->to = wa_json_str(q->obj, q->inbound ? "from" : "to");
	q->tmpl = wa_json_str(q->obj, "template.name");
	q->callback = wa_json_str(q->obj, "biz_opaque_callback_data");
	q->text = wa_json_str(q->obj, "text");
	q->msg = wa_json_get(q->obj, "message");
}

/* The digits of a sender, "+15551234567" or "15551234567", or NULL. */
static const char *
sender(const char *s)
{
	size_t n;

	if (s == NULL)
		return NULL;
	if (*s == '+')
		s++;
	n = strlen(s);
	return n >= 1 && n <= 15 && strspn(s, "0123456789") == n ? s : NULL;
}

/*
 * The checks of an inbound message: an error code, or -1. It needs the
 * webhooks; then a message object as it is, or a sender ("+" optional)
 * and a text.
 */
static long
check_inbound(struct wa_fake *f, const struct req *q)
{
	if (f->c.hooks == NULL)
		return 100;
	if (q->msg != NULL)
		return json_object_is_type(q->msg, json_type_object) ? -1 :
		    131009;
	if (q->to == NULL || q->text == NULL)
		return 131008;
	return sender(q->to) != NULL ? -1 : 131009;
}

/* Whether auth is the bearer token (any token: --any-token). */
static int
authorised(const struct wa_fake *f, const char *auth)
{
	size_t n;

	if (auth == NULL || strncmp(auth, "Bearer ", 7) != 0 || !auth[7])
		return 0;
	return f->c.token == NULL || ((n = strlen(auth + 7)) ==
	    strlen(f->c.token) && !CRYPTO_memcmp(auth + 7, f->c.token, n));
}

/* The checks that need no state: an error code, or -1 when it passes. */
static long
check(struct wa_fake *f, struct req *q, const char *method,
    const char *auth, const char *body)
{
	struct json_object *comp;
	const char *mp, *type;
	size_t i;

	if (!authorised(f, auth))
		return 190;
	if (strcmp(method, "POST") != 0 || !known(f, q->pnid) ||
	    body == NULL || q->obj == NULL)
		return 100;
	if (q->inbound)
		return check_inbound(f, q);
	mp = wa_json_str(q->obj, "messaging_product");
	if (mp == NULL || strcmp(mp, "whatsapp") != 0)
		return 100;
	if ((type = wa_json_str(q->obj, "type")) == NULL || q->to == NULL)
		return 131008;
	if (strcmp(type, "template") != 0) {
		/* The send-messages reference's other types. */
		if (strstr(",text,image,audio,document,video,sticker,location,"
		    "contacts,interactive,reaction,", type) == NULL ||
		    strchr(type, ',') != NULL || *type == '\0' ||
		    wa_json_get(q->obj, type) == NULL)
			return 131051;
		if (!wa_phone_is_e164(q->to))
			return 131009;
		q->reply = 1;
		return -1;
	}
	if (q->tmpl == NULL || wa_json_str(q->obj, "template.language.code")
	    == NULL)
		return 131008;
	if (!wa_phone_is_e164(q->to))
		return 131009;
	comp = wa_json_get(q->obj, "template.components");
	if (comp != NULL && !json_object_is_type(comp, json_type_array))
		return 131009;
	if (wa_json_get(q->obj, "biz_opaque_callback_data") != NULL &&
	    (q->callback == NULL || strlen(q->callback) > WA_CALLBACK_MAX))
		return 131009;
	for (i = 0; i < f->c.ntemplates; i++)
		if (strcmp(f->c.templates[i], q->tmpl) == 0)
			break;
	if (f->c.templates != NULL && i == f->c.ntemplates)
		return 132001;
	/* --templates FILE: its language, status and parameters too. */
	return wa_fake_send_check(&f->c, wa_json_get(q->obj, "template"),
	    q->major, q->details, sizeof q->details);
}

/* The key of the window between number pnid and person digits. */
static const char *
window_key(char *key, size_t size, const char *pnid, const char *digits)
{
	snprintf(key, size, "%s %s", pnid, digits + (*digits == '+'));
	return key;
}

/*
 * Under f's lock: a message that is not a template goes only to someone
 * who wrote to the number in the last 24 hours (the customer service
 * window, Meta's 131047 outside it); the window opens with each of their
 * messages (window_open). Returns 131047, or -1.
 */
static int
window_shut(struct wa_fake *f, const struct req *q)
{
	char key[WA_NUMBER_ID_MAX + 24];
	struct ent *e = table_get(&f->windows, window_key(key, sizeof key,
	    q->pnid, q->to));

	return e->t == INT64_MIN || wa_now_ms() - e->t >= 86400000 ? 131047 :
	    -1;
}

static void
window_open(struct wa_fake *f, const char *pnid, const char *digits,
    int64_t t)
{
	char key[WA_NUMBER_ID_MAX + 24];
	struct ent *e = table_get(&f->windows, window_key(key, sizeof key,
	    pnid, digits));

	if (t > e->t)
		e->t = t;
}

/*
 * --pause-template-after n, under f's lock: Meta pauses a template whose
 * quality falls mid-campaign (the template pacing page; the
 * message_template_status_update reference): the n-th send of a
 * template that would go is the last; the webhook says PAUSED
 * (FIRST_PAUSE, its language written en-US), and every later send of it
 * is answered 132015. Returns 132015, or -1: this send goes on.
 */
static int
pause_template(struct wa_fake *f, const struct req *q)
{
	const char *lang = wa_json_str(q->obj, "template.language.code");
	struct wa_buf b = { 0 };
	char key[600], hy[16];
	size_t i;

	if (f->c.pause_after == 0)
		return -1;
	snprintf(key, sizeof key, "%.500s\t%.15s", q->tmpl, lang);
	if (strcmp(key, f->paused) == 0)
		return 132015;
	if (*f->paused != '\0' || ++f->tpl_sends < f->c.pause_after ||
	    f->c.hooks == NULL)
		return -1;
	snprintf(f->paused, sizeof f->paused, "%s", key);
	for (i = 0; lang[i] != '\0' && i + 1 < sizeof hy; i++)
		hy[i] = lang[i] == '_' ? '-' : lang[i];
	hy[i] = '\0';
	wa_buf_puts(&b, "\"event\":\"PAUSED\",\"message_template_id\":"
	    "594425479261596,\"message_template_name\":");
	wa_buf_json_string(&b, q->tmpl, strlen(q->tmpl));
	wa_buf_puts(&b, ",\"message_template_language\":");
	wa_buf_json_string(&b, hy, strlen(hy));
	wa_buf_puts(&b, ",\"reason\":\"NONE\",\"other_info\":{\"title\":"
	    "\"FIRST_PAUSE\",\"description\":\"Your message template has "
	    "been paused for 3 hours because of low quality\"}");
	wa_hooks_add_value(f->c.hooks, wa_now_ms(), q->pnid, b.s, b.len,
	    WA_HOOKS_TEMPLATE);
	wa_buf_free(&b);
	return -1;
}

static const struct wa_fake_script *
script_for(struct wa_fake *f, const char *to)
{
	const struct wa_fake_script *best = NULL;
	size_t i, n, tn = strlen(to);

	for (i = 0; i < f->c.nscripts; i++) {
		n = strlen(f->c.scripts[i].suffix);
		if (n <= tn && strcmp(to + tn - n, f->c.scripts[i].suffix) == 0
		    && (best == NULL || n > strlen(best->suffix)))
			best = &f->c.scripts[i];
	}
	return best;
}

/* Under the lock: whether number may accept one more now (ns). */
static int
throughput_ok(struct wa_fake *f, struct number **np, const char *pnid,
    int64_t now)
{
	struct number *n;

	*np = NULL;
	if (f->c.rate == 0)
		return 1;
	for (n = f->numbers; n != NULL; n = n->next)
		if (strcmp(n->pnid, pnid) == 0)
			break;
	if (n == NULL) {
		n = wa_alloc(sizeof *n + strlen(pnid) + 1);
		strcpy(n->pnid, pnid);
		n->ring = wa_alloc(f->c.rate * sizeof *n->ring);
		n->next = f->numbers;
		f->numbers = n;
	}
	*np = n;
	/* Full ring: the rate-th last acceptance must be 1 s old or more. */
	return n->n < f->c.rate || n->ring[n->head] <= now - 1000000000;
}

static void
throughput_take(struct wa_fake *f, struct number *n, int64_t now)
{
	if (n == NULL)
		return;
	if (n->n < f->c.rate) {
		n->ring[(n->head + n->n++) % f->c.rate] = now;
	} else {
		n->ring[n->head] = now;
		n->head = (n->head + 1) % f->c.rate;
	}
}

static void
base64(struct wa_buf *b, const unsigned char *p, size_t n)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
	    "qrstuvwxyz0123456789+/";
	uint32_t v;
	size_t i;

	for (i = 0; i < n; i += 3) {
		v = p[i] << 16 | (i + 1 < n ? p[i + 1] << 8 : 0) |
		    (i + 2 < n ? p[i + 2] : 0);
		wa_buf_add(b, &tab[v >> 18 & 63], 1);
		wa_buf_add(b, &tab[v >> 12 & 63], 1);
		wa_buf_add(b, i + 1 < n ? &tab[v >> 6 & 63] : "=", 1);
		wa_buf_add(b, i + 2 < n ? &tab[v & 63] : "=", 1);
	}
}

/* Delay of the next status: uniform in [0, 2 * mean] ms. */
static int64_t
hook_delay(struct wa_fake *f)
{
	return (int64_t)(unit(f) * (2 * f->c.hook_delay_ms + 1));
}

/* Queues one status (and maybe its duplicate) due at t, stamped ts. */
static void
status(struct wa_fake *f, const struct req *q, const char *wamid,
    const char *st, int64_t t, int64_t ts, long code)
{
	struct wa_buf b = { 0 };
	const struct meta_error *e;
	int64_t off = wa_unix_ms() - wa_now_ms();
	long long secs = (ts + off) / 1000;
	char id[16], uid[32];

	wa_buf_puts(&b, "{\"id\":");
	wa_buf_json_string(&b, wamid, strlen(wamid));
	wa_buf_printf(&b, ",\"status\":\"%s\",\"timestamp\":\"%lld\","
	    "\"recipient_id\":\"%s\"", st, secs,
	    people_wa_id(q->to + 1, f->c.old_br, id));
	/* The BSUID page: on every status but the failure of a message
	   sent to a phone number. */
	if (code < 0)
		wa_buf_printf(&b, ",\"recipient_user_id\":\"%s\"",
		    people_user_id(id, uid, sizeof uid));
	if (q->callback != NULL) {
		wa_buf_puts(&b, ",\"biz_opaque_callback_data\":");
		wa_buf_json_string(&b, q->callback, strlen(q->callback));
	}
	/* Gone from v24.0's webhooks (but for a free entry point). */
	if (strcmp(st, "sent") == 0 && q->major > 0 && q->major < 24)
		wa_buf_printf(&b, ",\"conversation\":{\"id\":"
		    "\"%016llx%016llx\",\"expiration_timestamp\":\"%lld\","
		    "\"origin\":{\"type\":\"marketing\"}}",
		    (unsigned long long)rnd(f), (unsigned long long)rnd(f),
		    secs + 86400);
	if (strcmp(st, "sent") == 0 || strcmp(st, "delivered") == 0)
		wa_buf_printf(&b, ",\"pricing\":{\"billable\":true,"
		    "\"pricing_model\":\"PMP\",\"type\":\"regular\","
		    "\"category\":\"%s\"}", q->reply ? "service" :
		    f->c.category != NULL ? f->c.category : "marketing");
	if (code >= 0) {
		e = meta_error(code);
		wa_buf_printf(&b, ",\"errors\":[{\"code\":%ld", code);
		if (!f->c.titleless) {
			wa_buf_puts(&b, ",\"title\":");
			wa_buf_json_string(&b, e->title, strlen(e->title));
		}
		wa_buf_puts(&b, ",\"message\":");
		wa_buf_json_string(&b, e->title, strlen(e->title));
		wa_buf_puts(&b, ",\"error_data\":{\"details\":");
		wa_buf_json_string(&b, e->details, strlen(e->details));
		wa_buf_puts(&b, "},\"href\":\"" HREF "\"}]");
	}
	wa_buf_add(&b, "}", 1);
	wa_hooks_add(f->c.hooks, t, q->pnid, b.s, b.len);
	if (f->c.dup_rate > 0 && unit(f) < f->c.dup_rate)
		wa_hooks_add(f->c.hooks, t + hook_delay(f), q->pnid, b.s,
		    b.len);
	wa_buf_free(&b);
}

/*
 * Under the lock: a new wamid for a message to or from the person whose
 * WhatsApp id is wa_id (digits) in out (WAMID_MAX bytes), of the shape
 * and length of Meta's (cloud-api.md's examples: 58 characters for 11
 * digits, 62 for 13):
 * "wamid." and the base64 of a compact Thrift struct that holds wa_id
 * and an 18-digit hexadecimal message id, here the run's and a serial.
 */
static void
new_wamid(struct wa_fake *f, const char *wa_id, char *out)
{
	static const char head[] = { 0x1c, 0x18 }, mid[] = { 0x15, 0x02,
	    0x00, 0x11, 0x18, 0x12 };
	struct wa_buf key = { 0 }, raw = { 0 };
	size_t n = strspn(wa_id, "0123456789");
	unsigned char c = n > 15 ? 15 : n;

	f->serial++;
	wa_buf_add(&raw, head, sizeof head);
	wa_buf_add(&raw, (char *)&c, 1);
	wa_buf_add(&raw, wa_id, c);
	wa_buf_add(&raw, mid, sizeof mid);
	wa_buf_printf(&raw, "%02X%02X%02X%02X%010llX", f->run[0], f->run[1],
	    f->run[2], f->run[3],
	    (unsigned long long)f->serial & 0xffffffffffULL);
	wa_buf_add(&raw, "", 1);
	wa_buf_puts(&key, "wamid.");
	base64(&key, (unsigned char *)raw.s, raw.len);
	snprintf(out, WAMID_MAX, "%s", key.s);
	wa_buf_free(&key);
	wa_buf_free(&raw);
}

/*
 * Under the lock: the webhook of a message that the person from (digits,
 * or "+" and digits) sends to number pnid at time t (wa_now_ms): text
 * as a text message, or msg as it is. Its wamid goes to wamid.
 */
static void
inbound(struct wa_fake *f, const char *pnid, const char *from,
    const char *text, struct json_object *msg, int64_t t, char *wamid)
{
	struct wa_buf b = { 0 };
	long long secs = (t + wa_unix_ms() - wa_now_ms()) / 1000;

	from = sender(from);
	new_wamid(f, from != NULL ? from : "", wamid);
	if (from != NULL) {
		window_open(f, pnid, from, t);
		wa_buf_puts(&b, "\"contacts\":[{\"profile\":{\"name\":"
		    "\"Rehearsal\"},\"wa_id\":");
		wa_buf_json_string(&b, from, strlen(from));
		wa_buf_puts(&b, "}],");
	}
	wa_buf_puts(&b, "\"messages\":[");
	if (msg != NULL)
		wa_buf_puts(&b, wa_json_text(msg));
	else {
		wa_buf_puts(&b, "{\"from\":");
		wa_buf_json_string(&b, from, strlen(from));
		wa_buf_puts(&b, ",\"id\":");
		wa_buf_json_string(&b, wamid, strlen(wamid));
		wa_buf_printf(&b, ",\"timestamp\":\"%lld\",\"text\":"
		    "{\"body\":", secs);
		wa_buf_json_string(&b, text, strlen(text));
		wa_buf_puts(&b, "},\"type\":\"text\"}");
	}
	wa_buf_puts(&b, "]");
	wa_hooks_add_value(f->c.hooks, t, pnid, b.s, b.len, WA_HOOKS_MESSAGES);
	wa_buf_free(&b);
}

/*
 * Under the lock: the person message wamid was delivered to does act
 * back at time t (people.c): an answer, an opt-out, a preference. With
 * act -1, --reply-rate's answer: half tap the quick reply, half write a
 * text of their own.
 */
static void
person(struct wa_fake *f, const struct req *q, const char *wamid,
    int64_t t, int act, const char *text)
{
	static const char *const texts[] = { "Thank you",
	    "Hi, what is this about?", "Where can I get it?" };
	struct wa_buf b = { 0 };
	long long secs = (t + wa_unix_ms() - wa_now_ms()) / 1000;
	char id[WAMID_MAX], wa_id[16];

	if (sender(q->to) == NULL)
		return;
	people_wa_id(q->to + 1, f->c.old_br, wa_id);
	if (act < 0) {
		act = unit(f) < 0.5 ? PEOPLE_BUTTON : PEOPLE_TEXT;
		text = texts[(size_t)(unit(f) * 3) % 3];
	}
	if (act == PEOPLE_PREFS_STOP || act == PEOPLE_PREFS_RESUME) {
		people_preference(&b, wa_id, act == PEOPLE_PREFS_STOP, secs);
		wa_hooks_add_value(f->c.hooks, t, q->pnid, b.s, b.len,
		    WA_HOOKS_PREFERENCES);
	} else {
		new_wamid(f, wa_id, id);
		window_open(f, q->pnid, q->to, t);
		people_message(&b, act, wa_id,
		    wa_hooks_display_phone(f->c.hooks), wamid, id, secs, text);
		wa_hooks_add_value(f->c.hooks, t, q->pnid, b.s, b.len,
		    WA_HOOKS_MESSAGES);
	}
	wa_buf_free(&b);
}

/*
 * The callback data of another deployment's message like the one whose
 * callback is cb: "wapipe:TAG:ID:ATTEMPT" with a tag of its own, else
 * the same (an older form names no deployment).
 */
static const char *
foreign_callback(const char *cb, char *out)
{
	const char *c;

	if (cb == NULL || strncmp(cb, WA_CALLBACK_PREFIX,
	    strlen(WA_CALLBACK_PREFIX)) != 0 ||
	    (c = strchr(cb + strlen(WA_CALLBACK_PREFIX), ':')) == NULL ||
	    strchr(c + 1, ':') == NULL)
		return cb;
	snprintf(out, WA_CALLBACK_MAX + 16, WA_CALLBACK_PREFIX "0th3r%s", c);
	return out;
}

/*
 * Under the lock: the statuses of an accepted message. Each comes a
 * random delay after the one before; a reordered read is sent before its
 * delivered, though its timestamp stays the later one, as with Meta.
 * Returns when the last is due.
 */
static int64_t
statuses(struct wa_fake *f, const struct req *q, const char *wamid,
    long fail, int *delivered)
{
	int64_t sent = wa_now_ms() + hook_delay(f);
	int64_t dlv = sent + hook_delay(f), rd = dlv + hook_delay(f);
	char other[WAMID_MAX], cb[WA_CALLBACK_MAX + 16];
	struct req oq;
	int read;

	status(f, q, wamid, "sent", sent, sent, -1);
	/* Another app of the account sends too (another deployment of
	 * wapipe, say): its status comes here, its own wamid, the same
	 * callback data but for the deployment tag, which is its own. */
	if (f->c.foreign_rate > 0 && unit(f) < f->c.foreign_rate) {
		new_wamid(f, q->to + 1, other);
		oq = *q;
		oq.callback = foreign_callback(q->callback, cb);
		status(f, &oq, other, "delivered", dlv, dlv, -1);
	}
	if (fail < 0 && f->c.fail_rate > 0 && unit(f) < f->c.fail_rate)
		fail = unit(f) < 0.5 ? 131026 : 131049;
	*delivered = fail < 0;
	if (fail >= 0) {
		status(f, q, wamid, "failed", dlv, dlv, fail);
		return dlv;
	}
	read = f->c.read_rate > 0 && unit(f) < f->c.read_rate;
	if (read && f->c.reorder_rate > 0 && unit(f) < f->c.reorder_rate) {
		status(f, q, wamid, "read", dlv, rd, -1);
		status(f, q, wamid, "delivered", rd, dlv, -1);
	} else {
		status(f, q, wamid, "delivered", dlv, dlv, -1);
		if (read)
			status(f, q, wamid, "read", rd, rd, -1);
	}
	return read ? rd : dlv;
}

/* Under the lock: the fate of a valid request. */
static void
decide(struct wa_fake *f, const struct req *q, struct verdict *v)
{
	const struct wa_fake_script *s = script_for(f, q->to);
	struct wa_buf key = { 0 };
	struct number *num;
	struct ent *pair = NULL, *once;
	const char *reply = NULL;
	char in[WAMID_MAX];
	int64_t now = wa_now_ns(), last;
	long fail = -1;
	double r, sum;
	size_t i;
	int dlv, act = -1;

	switch (s != NULL ? s->act : -1) {
	case WA_FAKE_CODE:
		v->code = s->arg;
		return;
	case WA_FAKE_MOJIBAKE:
		v->code = s->arg;
		v->mojibake = 1;
		return;
	case WA_FAKE_HTTP:
		v->http = s->arg;
		return;
	case WA_FAKE_HANG:
		v->outcome = HANG;
		return;
	case WA_FAKE_DROP:
		v->outcome = DROP;
		return;
	case WA_FAKE_GARBAGE:
		v->outcome = GARBAGE;
		return;
	case WA_FAKE_ONCE:
		once = table_get(&f->once, q->to);
		if (once->t == INT64_MIN) {
			once->t = now;
			v->code = s->arg;
			return;
		}
		break;
	case WA_FAKE_SLOW:
		v->delay_ms = s->arg;
		break;
	case WA_FAKE_FAIL:
		fail = s->arg;
		break;
	case WA_FAKE_LOST:
		v->lost = 1;
		break;
	case WA_FAKE_REPLY:
		reply = s->text;
		break;
	case WA_FAKE_PERSON:
		act = s->arg;
		break;
	default:
		r = unit(f);
		for (i = 0, sum = 0; i < f->c.nerrates; i++)
			if (r < (sum += f->c.errates[i].fraction)) {
				v->code = f->c.errates[i].code;
				return;
			}
		if (f->c.drop_rate > 0 && unit(f) < f->c.drop_rate) {
			v->outcome = DROP;
			return;
		}
	}
	if (!throughput_ok(f, &num, q->pnid, now)) {
		v->code = 130429;
		return;
	}
	if (f->c.pair_ms > 0) {
		if (now - f->swept > f->c.pair_ms * 1000000) {
			table_sweep(&f->pairs, now - f->c.pair_ms * 1000000);
			f->swept = now;
		}
		wa_buf_printf(&key, "%s %s", q->pnid, q->to);
		pair = table_get(&f->pairs, key.s);
		wa_buf_free(&key);
		if (pair->t != INT64_MIN && now - pair->t <
		    f->c.pair_ms * 1000000) {
			v->code = 131056;
			return;
		}
		pair->t = now;
	}
	throughput_take(f, num, now);
	people_wa_id(q->to + 1, f->c.old_br, v->wa_id);
	new_wamid(f, v->wa_id, v->wamid);
	if (f->c.hooks != NULL) {
		last = statuses(f, q, v->wamid, fail, &dlv);
		if (reply != NULL)
			inbound(f, q->pnid, v->wa_id, reply, NULL,
			    last + hook_delay(f), in);
		else if (dlv && act >= 0)
			person(f, q, v->wamid, last + hook_delay(f), act,
			    s->text);
		else if (dlv && f->c.reply_rate > 0 &&
		    unit(f) < f->c.reply_rate)
			person(f, q, v->wamid, last + hook_delay(f), -1, NULL);
	}
	v->outcome = v->lost ? DROP : SENT;
}

/*
 * The message of a mojibake answer: bytes that are not UTF-8 (a stray
 * continuation byte, a cut sequence, an overlong '/', an encoded
 * surrogate), then more than 255 bytes of two- and three-byte characters,
 * so that a cut at 255 bytes falls inside one.
 */
static void
mojibake(struct wa_buf *b)
{
	int i;

	wa_buf_puts(b, "bad \x80 \xe2\x82 \xc0\xaf \xed\xa0\x80 bytes:");
	for (i = 0; i < 40; i++)
		wa_buf_puts(b, " \xc3\xa9\xe2\x82\xac");	/* " é€" */
}

/* The answer to an error of code: details, or the table's ("": it). */
static void
error_body(struct wa_buf *b, long code, int bad, const char *details)
{
	const struct meta_error *e = meta_error(code);
	struct wa_buf msg = { 0 };
	unsigned char r[15];

	arc4random_buf(r, sizeof r);
	wa_buf_printf(&msg, "(#%ld) %s", code, e->title);
	if (bad) {
		/* Raw bytes, as a broken proxy might pass them on. */
		wa_buf_puts(&msg, ": ");
		mojibake(&msg);
		wa_buf_puts(b, "{\"error\":{\"message\":\"");
		wa_buf_add(b, msg.s, msg.len);
		wa_buf_puts(b, "\"");
	} else {
		wa_buf_puts(b, "{\"error\":{\"message\":");
		wa_buf_json_string(b, msg.s, msg.len);
	}
	wa_buf_printf(b, ",\"type\":\"OAuthException\",\"code\":%ld,"
	    "\"error_data\":{\"messaging_product\":\"whatsapp\",\"details\":",
	    code);
	if (*details)
		wa_buf_json_string(b, details, strlen(details));
	else
		wa_buf_json_string(b, e->details, strlen(e->details));
	wa_buf_puts(b, "},\"fbtrace_id\":\"A");
	base64(b, r, sizeof r);
	wa_buf_puts(b, "\"}}");
	wa_buf_free(&msg);
}

/*
 * Graph's answer to a POST to what is not an object id (HTTP 400, code
 * 100, subcode 33, a GraphMethodException: cloud-api-2026.md §3), the id
 * quoted as valid UTF-8: a byte that is not becomes U+FFFD, and it is
 * cut at 200 bytes.
 */
static void
noobject_body(struct wa_buf *b, const struct req *q, const char *method)
{
	struct wa_buf msg = { 0 };
	unsigned char r[15];
	char id[201];

	arc4random_buf(r, sizeof r);
	wa_utf8_copy(id, sizeof id, q->id, q->idlen);
	wa_buf_printf(&msg, "Unsupported %s request. Object with ID '%s",
	    strcmp(method, "GET") == 0 ? "get" : "post", id);
	wa_buf_puts(&msg, "' does not exist, cannot be loaded due to missing "
	    "permissions, or does not support this operation. Please read "
	    "the Graph API documentation at "
	    "https://developers.facebook.com/docs/graph-api");
	wa_buf_puts(b, "{\"error\":{\"message\":");
	wa_buf_json_string(b, msg.s, msg.len);
	wa_buf_puts(b, ",\"type\":\"GraphMethodException\",\"code\":100,"
	    "\"error_subcode\":33,\"fbtrace_id\":\"A");
	base64(b, r, sizeof r);
	wa_buf_puts(b, "\"}}");
	wa_buf_free(&msg);
}

static void
render(const struct req *q, const struct verdict *v, struct wa_fake_reply *r)
{
	r->delay_ms = v->delay_ms > 0 ? v->delay_ms : 0;
	r->ctype = "application/json";
	if (v->outcome == HANG || v->outcome == DROP) {
		r->how = v->outcome == HANG ? WA_FAKE_NEVER : WA_FAKE_CLOSE;
		return;
	}
	r->how = WA_FAKE_ANSWER;
	r->http = 200;
	if (v->outcome == GARBAGE) {
		/* Cut short, as by a broken proxy: not JSON. */
		wa_buf_puts(&r->body, "{\"messaging_product\":\"whatsapp\","
		    "\"contacts\":[{\"input\"");
	} else if (v->http != 0) {
		r->http = v->http;
		r->ctype = "text/html";
		wa_buf_printf(&r->body, "<html><body><h1>%u</h1>"
		    "<p>wa-fake-api: %s HTTP %u</p></body></html>\n",
		    v->http, v->outcome == DOWN ? "down:" : "scripted",
		    v->http);
	} else if (v->noobject) {
		r->http = 400;
		noobject_body(&r->body, q, v->method);
	} else if (v->code >= 0) {
		r->http = http_of(v->code);
		error_body(&r->body, v->code, v->mojibake, q->details);
	} else if (v->outcome == READ) {
		/* get() wrote the body. */
	} else if (v->outcome == INBOUND) {
		wa_buf_printf(&r->body, "{\"messaging_product\":\"whatsapp\","
		    "\"messages\":[{\"id\":\"%s\"}]}", v->wamid);
	} else {
		wa_buf_puts(&r->body, "{\"messaging_product\":\"whatsapp\","
		    "\"contacts\":[{\"input\":");
		wa_buf_json_string(&r->body, q->to, strlen(q->to));
		wa_buf_puts(&r->body, ",\"wa_id\":");
		wa_buf_json_string(&r->body, v->wa_id, strlen(v->wa_id));
		wa_buf_printf(&r->body, "}],\"messages\":[{\"id\":\"%s\","
		    "\"message_status\":\"accepted\"}]}", v->wamid);
	}
}

static void
str_or_null(struct wa_buf *b, const char *key, const char *s)
{
	wa_buf_printf(b, ",\"%s\":", key);
	if (s != NULL)
		wa_buf_json_string(b, s, strlen(s));
	else
		wa_buf_puts(b, "null");
}

static void
log_request(struct wa_fake *f, const struct req *q, const struct verdict *v,
    const struct wa_fake_reply *r)
{
	struct wa_buf b = { 0 };

	if (f->logfd < 0)
		return;
	wa_buf_printf(&b, "{\"t\":%lld", (long long)wa_unix_ms());
	str_or_null(&b, "method", v->method);
	if (v->outcome == READ || *q->path)
		str_or_null(&b, "path", q->path);
	str_or_null(&b, "version", q->version[0] ? q->version : NULL);
	str_or_null(&b, "phone_number_id", q->pnid[0] ? q->pnid : NULL);
	str_or_null(&b, "to", q->to);
	str_or_null(&b, "callback", q->callback);
	str_or_null(&b, "template", q->tmpl);
	str_or_null(&b, "wamid", v->wamid[0] ? v->wamid : NULL);
	wa_buf_printf(&b, ",\"outcome\":\"%s\",\"code\":",
	    outcomes[v->outcome]);
	if (v->code >= 0)
		wa_buf_printf(&b, "%ld", v->code);
	else
		wa_buf_puts(&b, "null");
	if (r->how == WA_FAKE_ANSWER)
		wa_buf_printf(&b, ",\"http_status\":%u", r->http);
	else
		wa_buf_puts(&b, ",\"http_status\":null");
	wa_buf_printf(&b, ",\"delay_ms\":%lld}\n", (long long)r->delay_ms);
	if (write(f->logfd, b.s, b.len) != (ssize_t)b.len)
		wa_warn("request log:");
	wa_buf_free(&b);
}

/* The HTTP status of the --outage-file (503 if none in it), 0 if none. */
static unsigned int
down(struct wa_fake *f)
{
	char buf[16];
	ssize_t n;
	long st;
	int fd;

	if (f->c.outage == NULL ||
	    (fd = open(f->c.outage, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	st = strtol(buf, NULL, 10);
	return st >= 100 && st <= 599 ? (unsigned int)st : 503;
}

/*
 * A GET (graph.c): the token (190), then /{version}/{id} or
 * /{version}/{id}/{edge}; the answer's body into body, a READ, or an
 * error code in v.
 */
static void
get(struct wa_fake *f, const struct wa_fake_call *k, struct req *q,
    struct verdict *v, struct wa_buf *body)
{
	const char *p = k->url, *end;
	char id[WA_NUMBER_ID_MAX + 1], edge[64];
	size_t n;

	wa_utf8_copy(q->path, sizeof q->path, k->url, strlen(k->url));
	if (!authorised(f, k->auth)) {
		v->code = 190;
		return;
	}
	if (q->version[0])
		p += 1 + strlen(q->version);
	v->code = 100;
	if (*p != '/' || p[1] == '\0')
		return;
	q->id = ++p;
	q->idlen = strcspn(p, "/");
	end = p + q->idlen;
	if (q->idlen >= sizeof id || (*end && (strchr(end + 1, '/') ||
	    (n = strlen(end + 1)) == 0 || n >= sizeof edge))) {
		v->noobject = q->idlen >= sizeof id;
		return;
	}
	memcpy(id, p, q->idlen);
	id[q->idlen] = '\0';
	if (*end)
		strcpy(edge, end + 1);
	v->code = wa_fake_get(&f->c, k, id, *end ? edge : NULL, body,
	    &v->noobject);
	if (v->code == 0) {
		v->code = -1;
		v->outcome = READ;
	}
}

/*
 * Decides the answer to one whole request (body NULL: it was larger than
 * WA_FAKE_BODY_MAX) and logs it. Safe to call from several threads at once.
 */
void
wa_fake_handle(struct wa_fake *f, const struct wa_fake_call *k,
    struct wa_fake_reply *r)
{
	struct verdict v = { .outcome = ERROR, .code = -1,
	    .method = k->method };
	struct req q;

	memset(r, 0, sizeof *r);
	parse(&q, k->url, k->body, k->len);
	if ((v.http = down(f)) != 0)
		v.outcome = DOWN;
	else if (strcmp(k->method, "GET") == 0)
		get(f, k, &q, &v, &r->body);
	else if ((v.code = check(f, &q, k->method, k->auth, k->body)) ==
	    100 && q.id != NULL && !known(f, q.pnid) &&
	    strcmp(k->method, "POST") == 0)
		v.noobject = 1;
	pthread_mutex_lock(&f->mu);
	f->st.requests++;
	v.delay_ms = f->c.latency_ms;
	if (f->c.jitter_ms > 0)
		v.delay_ms += (int64_t)(unit(f) * (2 * f->c.jitter_ms + 1)) -
		    f->c.jitter_ms;
	if (v.code < 0 && v.outcome == ERROR && q.inbound) {
		v.outcome = INBOUND;
		inbound(f, q.pnid, q.to, q.text, q.msg, wa_now_ms(), v.wamid);
	} else if (v.code < 0 && v.outcome == ERROR && (v.code = q.reply ?
	    window_shut(f, &q) : pause_template(f, &q)) < 0)
		decide(f, &q, &v);
	if (v.outcome == SENT || v.lost)
		f->st.sent++;
	else if (v.outcome == READ)
		f->st.reads++;
	else if (v.outcome == ERROR && v.http == 0)
		f->st.refused++;
	else
		f->st.other++;
	pthread_mutex_unlock(&f->mu);
	render(&q, &v, r);
	log_request(f, &q, &v, r);
	json_object_put(q.obj);
}

void
wa_fake_reply_free(struct wa_fake_reply *r)
{
	wa_buf_free(&r->body);
}

void
wa_fake_free(struct wa_fake *f, struct wa_fake_stats *st)
{
	struct number *n;
	size_t i;

	*st = f->st;
	while ((n = f->numbers) != NULL) {
		f->numbers = n->next;
		free(n->ring);
		free(n);
	}
	table_free(&f->pairs);
	table_free(&f->once);
	table_free(&f->windows);
	for (i = 0; i < f->c.nscripts; i++) {
		free(f->c.scripts[i].suffix);
		free(f->c.scripts[i].text);
	}
	for (i = 0; i < f->c.ntemplates; i++)
		free(f->c.templates[i]);
	for (i = 0; i < f->c.nnumbers; i++)
		free(f->c.numbers[i]);
	free(f->c.numbers);
	wa_fake_graph_free(&f->c);
	free(f->c.scripts);
	free(f->c.templates);
	free(f->c.errates);
	free(f->c.token);
	if (f->logfd >= 0)
		close(f->logfd);
	pthread_mutex_destroy(&f->mu);
	free(f);
}
