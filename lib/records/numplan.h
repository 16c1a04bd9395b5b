/*
 * records/numplan.h: a phone number against the real numbering plans,
 * through libphonenumber (lib/records/numplan.cc, C++; a program that
 * uses it links the C++ runtime and -lphonenumber), and the time zone
 * its country keeps (lib/records/zones.c, tzdata's zone1970.tab).
 */
#ifndef WA_RECORDS_NUMPLAN_H
#define WA_RECORDS_NUMPLAN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct wa_numplan {
	char		 region[4];	/* ISO 3166 alpha-2; "001": none */
	const char	*type;		/* "mobile", "fixed_line", ...: NULL */
};

#define WA_NUMPLAN_TYPE	1	/* find the type too (it costs) */

/*
 * Checks e164 ("+393471234567", as records/phone.h writes it) against
 * libphonenumber's metadata: 0 with its region (and with flags
 * WA_NUMPLAN_TYPE its type, else NULL) in *np, or -1 with why (size
 * bytes) when no plan has it as written. Never throws.
 */
int wa_numplan_check(const char *e164, struct wa_numplan *np, int flags,
    char *why, size_t size);

/*
 * The time zone of region ("IT": "Europe/Rome") when the country keeps
 * one time (one zone in zone1970.tab, or zones whose rules today are
 * the same), or NULL (several times, an unknown region, no table). The
 * table is read on the first call, from $TZDIR or /usr/share/zoneinfo.
 */
const char *wa_zone_of(const char *region);
/* Calls fn with each zone wa_zone_of may return, once each. */
void wa_zone_each(void (*fn)(const char *zone, void *arg), void *arg);
/* Forgets zone: its countries have none from now on. */
void wa_zone_drop(const char *zone);

#ifdef __cplusplus
}
#endif

#endif
