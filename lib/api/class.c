/*
 * class.c: what to do about an error of the Cloud API: the one table,
 * for a send's answer (wa-send), a result's retry delay (wa-record) and
 * the error of a failed status webhook (wa-status-ingest). Keyed on
 * error.code as Meta asks, and on error_subcode where a code means two
 * things (100); an answer with no code we know falls back on its HTTP
 * status (429: throughput, 5xx: transient, other: permanent; a webhook's
 * error has no status: permanent). Also the retry delay: exponential
 * backoff with full jitter.
 *
 * Each row is checked against the facts in ../shared/research/cloud-api.md
 * (§3.3, "the sheet") and its 2026 additions, cloud-api-2026.md (§3,
 * "2026"). The rule behind the classes: an error that says the sender is
 * wrong (the token, the app's permissions, the account, the number, the
 * template) halts the campaign at its first answer, as every later send
 * would meet it too; one that blames this recipient or this request's
 * values fails the row; a limit pauses the number or delays the row.
 * wa-send(1)'s table is printed from this one (tests/92-error-table.t
 * keeps them the same).
 */
#include <stdlib.h>

#include "api/class.h"

#define S	1000LL
#define MIN	(60 * S)
#define HOUR	(60 * MIN)

const struct wa_error wa_errors[] = {
	{ 0, 0, -1, WA_FATAL, 0, "the app user could not be authenticated" },
	{ 1, 1, -1, WA_TRANSIENT, 0,
	    "invalid request or possible server error" },
	{ 2, 2, -1, WA_TRANSIENT, 0, "temporary downtime or overload" },
	{ 3, 3, -1, WA_FATAL, 0, "capability or permissions issue" },
	/* Per app; courier counts it as throttling (the sheet, §8.1). */
	{ 4, 4, -1, WA_THROUGHPUT, 0,
	    "the app reached its API call rate limit" },
	{ 10, 10, -1, WA_FATAL, 0, "permission not granted or removed" },
	{ 33, 33, -1, WA_FATAL, 0, "the business phone number was deleted" },
	/*
	 * Graph's GraphMethodException for an id that does not exist or
	 * that the token may not use: the campaign's phone_number_id is
	 * wrong, and every send would fail alike (2026 §3, §11.3).
	 */
	{ 100, 100, 33, WA_FATAL, 0,
	    "the phone-number id does not exist, or the token may not use it" },
	/* Without subcode 33: this request's values (the sheet, §3.3). */
	{ 100, 100, -1, WA_PERMANENT, 0, "invalid parameter" },
	{ 190, 190, -1, WA_FATAL, 0,
	    "the access token expired or is not valid" },
	{ 200, 299, -1, WA_FATAL, 0, "the API permission is missing" },
	{ 368, 368, -1, WA_FATAL, 0,
	    "the account is restricted for a policy violation" },
	{ 80007, 80007, -1, WA_THROUGHPUT, 0,
	    "the business account reached its rate limit" },
	{ 130403, 130403, -1, WA_PERMANENT, 0,
	    "the business blocked this person" },
	{ 130429, 130429, -1, WA_THROUGHPUT, 0,
	    "the number's throughput was reached" },
	/* Held back by Meta's experiment: not retried (the sheet, §3.3). */
	{ 130472, 130472, -1, WA_PERMANENT, 0,
	    "the person is in a marketing experiment" },
	{ 130497, 130497, -1, WA_PERMANENT, 0,
	    "messaging the person's country is restricted" },
	{ 131000, 131000, -1, WA_TRANSIENT, 0, "something went wrong" },
	{ 131005, 131005, -1, WA_FATAL, 0, "access denied" },
	{ 131008, 131008, -1, WA_PERMANENT, 0,
	    "a required parameter is missing" },
	{ 131009, 131009, -1, WA_PERMANENT, 0,
	    "a parameter value is not valid" },
	{ 131016, 131016, -1, WA_TRANSIENT, 0,
	    "a service is temporarily unavailable" },
	{ 131021, 131021, -1, WA_PERMANENT, 0,
	    "sender and recipient are the same number" },
	{ 131026, 131026, -1, WA_PERMANENT, 0,
	    "the message cannot be delivered to this person" },
	{ 131031, 131031, -1, WA_FATAL, 0, "the business account is locked" },
	/* The sender number, so every send of the campaign (2026 §3). */
	{ 131037, 131037, -1, WA_FATAL, 0,
	    "the number has no approved display name" },
	{ 131042, 131042, -1, WA_FATAL, 0, "a payment method problem" },
	{ 131045, 131045, -1, WA_FATAL, 0,
	    "the number's registration is wrong" },
	/* A reply outside the 24-hour window: that person (the sheet). */
	{ 131047, 131047, -1, WA_PERMANENT, 0,
	    "more than 24 h since the person last wrote" },
	/*
	 * The number is restricted for a while for spam: not a minute's
	 * wait like 131057 but a long pause and a person told (2026 §11.4).
	 */
	{ 131048, 131048, -1, WA_UNAVAILABLE, 15 * MIN,
	    "spam rate limit: the number is restricted" },
	/*
	 * The per-user marketing cap: "wait at least 24 hours before
	 * resending" (the sheet, §3.3); mostly a failed status webhook.
	 */
	{ 131049, 131049, -1, WA_LATER, 24 * HOUR,
	    "not delivered, for healthy ecosystem engagement" },
	{ 131050, 131050, -1, WA_PERMANENT, 0,
	    "the person stopped marketing messages" },
	{ 131051, 131051, -1, WA_PERMANENT, 0, "unsupported message type" },
	/*
	 * Meta could not fetch or take the media. Courier retries it (the
	 * sheet, §3.3, §8.1), but a broken link in a campaign's template
	 * fails every send alike: permanent, so that a run of them trips
	 * the circuit breaker instead of each row retrying.
	 */
	{ 131053, 131053, -1, WA_PERMANENT, 0,
	    "the message's media could not be uploaded" },
	/* 1 message per 6 s to one person (the sheet, §4.3). */
	{ 131056, 131056, -1, WA_PAIR_RATE, 6 * S,
	    "pair rate limit: too many messages to this person" },
	/* A throughput upgrade takes up to a minute (the sheet, §4.1). */
	{ 131057, 131057, -1, WA_UNAVAILABLE, MIN,
	    "the business account is in maintenance mode" },
	/*
	 * A BSUID recipient of a template that may not go to one (2026
	 * §3, §6): that person, as we send it.
	 */
	{ 131062, 131062, -1, WA_PERMANENT, 0,
	    "this message may not go to a business-scoped user id" },
	{ 131063, 131063, -1, WA_FATAL, 0,
	    "marketing templates are off on the Cloud API" },
	/* Lifts itself, after an enforcement period (2026 §3.1). */
	{ 131064, 131064, -1, WA_FATAL, 0,
	    "messaging limited for template classification violations" },
	{ 132000, 132000, -1, WA_FATAL, 0,
	    "the parameter count does not match the template" },
	{ 132001, 132001, -1, WA_FATAL, 0,
	    "no such template in this language, or not approved" },
	/* The text with this row's values in it (the sheet, §3.3). */
	{ 132005, 132005, -1, WA_PERMANENT, 0,
	    "the text is too long once filled in" },
	{ 132007, 132007, -1, WA_FATAL, 0,
	    "the template's content violates a policy" },
	/* This row's values, as DESIGN.md has it; a run trips the breaker. */
	{ 132012, 132012, -1, WA_PERMANENT, 0,
	    "parameter values formatted wrongly" },
	/* Paused 3 h or 6 h, then disabled (the sheet, §3.3, §7). */
	{ 132015, 132015, -1, WA_FATAL, 0,
	    "the template is paused for low quality" },
	{ 132016, 132016, -1, WA_FATAL, 0,
	    "the template is disabled for low quality" },
	/*
	 * From v23.0 a template parameter problem at send time, where older
	 * versions said 132000 (the count: the template's) or 132012 (the
	 * format: this row's values; 2026 §2.4). The code cannot tell them
	 * apart, so the row fails as 132012 does: one person's name with a
	 * line break must not stop a campaign; a count that never fits fails
	 * every send alike and trips the circuit breaker.
	 */
	{ 132018, 132018, -1, WA_PERMANENT, 0,
	    "the template's parameters are not valid" },
	/* The template's Flow, so every send of it (2026 §3, §3.1). */
	{ 132068, 132068, -1, WA_FATAL, 0, "the template's Flow is blocked" },
	/* 10 sends with the Flow an hour: retry after the hour (2026 §3). */
	{ 132069, 132069, -1, WA_LATER, HOUR,
	    "the template's Flow is throttled" },
	{ 133004, 133004, -1, WA_TRANSIENT, 0,
	    "the server is temporarily unavailable" },
	{ 133010, 133010, -1, WA_FATAL, 0,
	    "the number is not registered on the platform" },
	/* A configuration of the account, so every send (2026 §3). */
	{ 134011, 134011, -1, WA_FATAL, 0,
	    "the WhatsApp Payments terms are not accepted" },
	{ 135000, 135000, -1, WA_PERMANENT, 0,
	    "an unknown error with the request's parameters" },
	/*
	 * A number being migrated: "try again in a few minutes", like
	 * 131057 (2026 §3, §11.3).
	 */
	{ 2494100, 2494100, -1, WA_UNAVAILABLE, MIN,
	    "the account is in maintenance mode (a migration)" },
};
const size_t wa_nerrors = sizeof wa_errors / sizeof wa_errors[0];

/* The row of code and subcode (-1: none), or NULL. */
const struct wa_error *
wa_error_find(int64_t code, int64_t subcode)
{
	size_t i;

	for (i = 0; code >= 0 && i < wa_nerrors; i++)
		if (code >= wa_errors[i].lo && code <= wa_errors[i].hi &&
		    (wa_errors[i].subcode < 0 ||
		    wa_errors[i].subcode == subcode))
			return &wa_errors[i];
	return NULL;
}

/* The class of an answer; code and subcode are -1 when it had none. */
enum wa_class
wa_class_of(int64_t code, int64_t subcode, long http)
{
	const struct wa_error *e = wa_error_find(code, subcode);

	if (e != NULL)
		return e->class;
	if (http == 429)
		return WA_THROUGHPUT;
	if (http >= 500)
		return WA_TRANSIENT;
	if (http >= 200 && http < 300 && code < 0)
		return WA_SENT;
	return WA_PERMANENT;
}

/* The least delay before a row that met this error is tried again. */
int64_t
wa_error_delay_ms(int64_t code, int64_t subcode)
{
	const struct wa_error *e = wa_error_find(code, subcode);

	return e != NULL ? e->delay_ms : 0;
}

/* The result's "outcome" for a class. */
const char *
wa_class_outcome(enum wa_class c)
{
	switch (c) {
	case WA_SENT:
		return "sent";
	case WA_PERMANENT:
		return "failed";
	case WA_FATAL:
		return "halt";
	case WA_AMBIGUOUS:
		return "unknown";
	default:
		return "retry";
	}
}

/* A short name, for logs and metrics labels. */
const char *
wa_class_name(enum wa_class c)
{
	static const char *names[] = {
		"sent", "throughput", "unavailable", "pair_rate", "later",
		"transient", "permanent", "fatal", "ambiguous", "outage",
		"unsent"
	};

	return names[c];
}

/* What an error of this class stops (api/guard.c does it). */
const char *
wa_class_stops(enum wa_class c)
{
	switch (c) {
	case WA_FATAL:
		return "campaign";
	case WA_THROUGHPUT:
	case WA_UNAVAILABLE:
		return "number";
	case WA_PAIR_RATE:
	case WA_LATER:
	case WA_TRANSIENT:
	case WA_PERMANENT:
		return "recipient";
	default:
		return NULL;
	}
}

/* random(0, min(cap, base * 2^attempt)), in ms. */
int64_t
wa_backoff_ms(int attempt, int64_t base, int64_t cap)
{
	int64_t ceil = base;
	uint64_t r;

	while (attempt-- > 0 && ceil < cap)
		ceil *= 2;
	if (ceil > cap)
		ceil = cap;
	if (ceil <= 0)
		return 0;
	arc4random_buf(&r, sizeof r);
	return r % (uint64_t)(ceil + 1);
}
