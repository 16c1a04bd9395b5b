/*
 * class.c: what to do about a Cloud API answer. The table is DESIGN.md's,
 * keyed on error.code as Meta asks; an answer with no code we know falls
 * back on its HTTP status (429: throughput, 5xx: transient, other 4xx:
 * permanent). Also the retry delay: exponential backoff with full jitter.
 */
#include <stdlib.h>

#include "core/err.h"
#include "api/class.h"

static const struct {
	long		lo, hi;
	enum wa_class	class;
} codes[] = {
	{ 0, 0, WA_FATAL },
	{ 1, 2, WA_TRANSIENT },
	{ 3, 3, WA_FATAL },
	{ 4, 4, WA_THROUGHPUT },
	{ 10, 10, WA_FATAL },
	{ 33, 33, WA_FATAL },
	{ 100, 100, WA_PERMANENT },
	{ 190, 190, WA_FATAL },
	{ 200, 299, WA_FATAL },
	{ 368, 368, WA_FATAL },
	{ 80007, 80007, WA_THROUGHPUT },
	{ 130403, 130403, WA_PERMANENT },
	{ 130429, 130429, WA_THROUGHPUT },
	{ 130472, 130472, WA_PERMANENT },
	{ 130497, 130497, WA_PERMANENT },
	{ 131000, 131000, WA_TRANSIENT },
	{ 131005, 131005, WA_FATAL },
	{ 131009, 131009, WA_PERMANENT },
	{ 131016, 131016, WA_TRANSIENT },
	{ 131021, 131021, WA_PERMANENT },
	{ 131026, 131026, WA_PERMANENT },
	{ 131031, 131031, WA_FATAL },
	{ 131042, 131042, WA_FATAL },
	{ 131048, 131048, WA_UNAVAILABLE },
	{ 131049, 131049, WA_LATER },
	{ 131050, 131050, WA_PERMANENT },
	{ 131056, 131056, WA_PAIR_RATE },
	{ 131057, 131057, WA_UNAVAILABLE },
	{ 131063, 131064, WA_FATAL },
	{ 132000, 132001, WA_FATAL },
	{ 132005, 132005, WA_PERMANENT },
	{ 132007, 132007, WA_FATAL },
	{ 132012, 132012, WA_PERMANENT },
	{ 132015, 132016, WA_FATAL },
	{ 133004, 133004, WA_TRANSIENT },
	{ 133010, 133010, WA_FATAL },
	{ 135000, 135000, WA_PERMANENT },
};

/* The class of an error answer; code is -1 when the body had none. */
enum wa_class
wa_class_of(long code, long http)
{
	size_t i;

	for (i = 0; code >= 0 && i < sizeof codes / sizeof codes[0]; i++)
		if (code >= codes[i].lo && code <= codes[i].hi)
			return codes[i].class;
	if (http == 429)
		return WA_THROUGHPUT;
	if (http >= 500)
		return WA_TRANSIENT;
	if (http >= 200 && http < 300 && code < 0)
		return WA_SENT;
	return WA_PERMANENT;
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

/* The least delay before a row of this class may be tried again. */
int64_t
wa_class_min_delay_ms(enum wa_class c)
{
	switch (c) {
	case WA_PAIR_RATE:
		return 6000;		/* 1 message per 6 s to one user */
	case WA_LATER:
		return 24 * 3600 * 1000LL;
	case WA_UNAVAILABLE:
		return 60000;		/* a throughput upgrade takes ~1 min */
	default:
		return 0;
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
