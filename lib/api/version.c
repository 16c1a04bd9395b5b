/*
 * version.c: the Graph API versions and the last day Meta serves each,
 * shipped with the code, and the warning wa-send gives (wa-campaign
 * status shows) when the version in use is within 90 days of its end or
 * past it. After a version's end Meta answers its calls as the oldest
 * version it still serves, whose payloads may differ.
 *
 * The table is Meta's Graph API changelog ("available until"), updated
 * 29 October 2026, as ../shared/research/cloud-api-2026.md §9 records
 * it. A version with no end announced has none here (NULL). When Meta
 * announces a new version or an end, add it here; moving the default
 * is the Makefile's GRAPH_API_VERSION (wapipe(7), GRAPH API VERSION).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/version.h"

static const struct {
	const char	*name;
	const char	*until;		/* the last day it is served, UTC */
} versions[] = {
	{ "v20.0", "2026-09-24" },
	{ "v21.0", "2027-01-21" },
	{ "v22.0", "2027-05-20" },
	{ "v23.0", "2027-10-08" },
	{ "v24.0", "2028-02-18" },
	{ "v25.0", "2028-07-29" },
	{ "v26.0", NULL },
};

#define NVERSIONS (sizeof versions / sizeof versions[0])

/* "v25.0": 'v', 1 to 3 digits, '.', 1 or 2 digits; its numbers. */
static int
parse(const char *s, int *major, int *minor)
{
	size_t a, b;

	if (s == NULL || s[0] != 'v')
		return 0;
	a = strspn(s + 1, "0123456789");
	if (a < 1 || a > 3 || s[1 + a] != '.')
		return 0;
	b = strspn(s + 2 + a, "0123456789");
	if (b < 1 || b > 2 || s[2 + a + b] != '\0')
		return 0;
	*major = atoi(s + 1);
	*minor = atoi(s + 2 + a);
	return 1;
}

int
wa_api_version_valid(const char *s)
{
	int major, minor;

	return parse(s, &major, &minor);
}

const char *
wa_api_version_until(const char *v)
{
	size_t i;

	for (i = 0; v != NULL && i < NVERSIONS; i++)
		if (strcmp(versions[i].name, v) == 0)
			return versions[i].until;
	return NULL;
}

/* Days from 1970-01-01 to "YYYY-MM-DD" (Gregorian, after 1970). */
static long long
day_of(const char *date)
{
	int y = 0, m = 0, d = 0;
	long long era, yoe, doy;

	if (sscanf(date, "%4d-%2d-%2d", &y, &m, &d) != 3)
		abort();	/* the table is ours */
	y -= m <= 2;
	era = y / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

/* Days from the UTC day of now to the end of v; 0 when v has none. */
static int
days_left(const char *v, time_t now, long long *left, const char **until,
    int *older)
{
	int major, minor, omajor, ominor;

	*older = 0;
	if (!parse(v, &major, &minor))
		return 0;
	if ((*until = wa_api_version_until(v)) == NULL) {
		/* Not in the table (or no end yet): gone if older than all. */
		parse(versions[0].name, &omajor, &ominor);
		if (major > omajor || (major == omajor && minor >= ominor))
			return 0;
		*until = versions[0].until;
		*older = 1;
	}
	*left = day_of(*until) - (long long)(now / 86400);
	return 1;
}

int
wa_api_version_warning(const char *v, const char *from, time_t now,
    char *msg, size_t size)
{
	const char *until, *then = "then Meta answers its calls as";
	long long left, dleft;
	int older;
	char when[64], hint[64] = "";

	if (!days_left(v, now, &left, &until, &older) ||
	    left > WA_API_VERSION_WARN_DAYS)
		return 0;
	if (older || left < 0) {
		snprintf(when, sizeof when, "ended %s %s", older ? "by" : "on",
		    until);
		then = "Meta now answers its calls as";
	} else if (left == 0)
		snprintf(when, sizeof when, "ends today, %s", until);
	else
		snprintf(when, sizeof when, "ends on %s, in %lld day%s", until,
		    left, left == 1 ? "" : "s");
	/* The default, when it is another and not near its end itself. */
	if (strcmp(v, WA_GRAPH_API_VERSION) != 0 &&
	    (!days_left(WA_GRAPH_API_VERSION, now, &dleft, &until, &older) ||
	    dleft > WA_API_VERSION_WARN_DAYS))
		snprintf(hint, sizeof hint, " such as wapipe's default, %s",
		    WA_GRAPH_API_VERSION);
	snprintf(msg, size, "Graph API %s (%s%s) %s; %s the oldest "
	    "version it still serves, whose payloads may differ: move to a "
	    "newer version%s (wapipe(7), GRAPH API VERSION)", v,
	    strcmp(from, "default") == 0 ? "wapipe's " : "from ", from, when,
	    then, hint);
	return 1;
}
