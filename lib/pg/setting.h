/*
 * pg/setting.h: a campaign's settings, given when it is created or
 * changed later while it is a draft or paused (template, language, max
 * attempts, on_unknown, circuit breaker, and the rules of the road:
 * expiry, send window, time zone, weight, priority).
 */
#ifndef WA_PG_SETTING_H
#define WA_PG_SETTING_H

#include "pg/pg.h"

enum { WA_SET_TEMPLATE, WA_SET_LANGUAGE, WA_SET_MAX_ATTEMPTS,
    WA_SET_ON_UNKNOWN, WA_SET_BREAKER, WA_SET_EXPIRES_AT, WA_SET_WINDOW,
    WA_SET_TZ, WA_SET_WEIGHT, WA_SET_PRIORITY, WA_SET_N };

/* Each value as given, or NULL: left as it is. */
struct wa_setting {
	const char	*id;
	const char	*v[WA_SET_N];
};

/* Exits 64 on a value that is not one (--name: the option's name). */
void wa_setting_check(PGconn *conn, const struct wa_setting *s);
/*
 * Changes the campaign; quiet: say nothing of what changed (a campaign
 * just created). 0; exits 64 (bad value, no campaign), 65 (running,
 * ended), 69.
 */
int wa_setting(PGconn *conn, const struct wa_setting *s, int quiet);
/* Whether any value is given. */
int wa_setting_any(const struct wa_setting *s);

#endif
