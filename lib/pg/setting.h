/*
 * pg/setting.h: a draft or paused campaign's settings changed (template,
 * language, max attempts, on_unknown, circuit breaker).
 */
#ifndef WA_PG_SETTING_H
#define WA_PG_SETTING_H

#include "pg/pg.h"

struct wa_setting {
	const char	*id;
	const char	*template, *language, *max_attempts, *on_unknown;
	const char	*breaker;	/* a number, or "default" */
};

/* 0; exits 64 (bad value, no campaign), 65 (running, ended), 69. */
int wa_setting(PGconn *conn, const struct wa_setting *s);

#endif
