/*
 * api/version.h: the Graph API versions Meta serves, the last day of
 * each, and whether the version in use is near its end or past it.
 */
#ifndef WA_API_VERSION_H
#define WA_API_VERSION_H

#include <stddef.h>
#include <time.h>

/* How many days before a version's end the warning starts. */
#define WA_API_VERSION_WARN_DAYS 90

/* Whether s is a version as Graph writes it: "v25.0". */
int wa_api_version_valid(const char *s);

/*
 * The last day Meta serves version v ("2028-07-29"), or NULL when it
 * has announced none or v is not in the table.
 */
const char *wa_api_version_until(const char *v);

/*
 * Whether v (said by from: "default", "WA_API_VERSION", "WA_API_BASE")
 * is within WA_API_VERSION_WARN_DAYS of its end on the UTC day of now,
 * or past it: then 1, and the warning, one line, in msg. A version the
 * table does not know is past its end when it is older than every one
 * in it, else taken to be alive (0).
 */
int wa_api_version_warning(const char *v, const char *from, time_t now,
    char *msg, size_t size);

#endif
