/*
 * pg/rules.h: the rules of the road an operator sets by hand: a number's
 * messaging limit (wa-campaign limit) and the people not to message
 * (wa-campaign suppress).
 */
#ifndef WA_PG_RULES_H
#define WA_PG_RULES_H

#include "pg/pg.h"

/*
 * Shows every limit (number NULL), one number's, or sets it: value is
 * 250, 1000, 10000, 100000 or unlimited; period: its length in seconds
 * (NULL: kept; 86400 for a new one). 0; exits 64 on a bad value, 69.
 */
int wa_limit(PGconn *conn, const char *number, const char *value,
    const char *period);

struct wa_suppress {
	const char	*verb;		/* add, remove, list or import */
	const char	*scope;		/* a phone_number_id, or NULL: all */
	const char	*reason;	/* NULL: "by hand" */
	const char	*cc;		/* --country-code digits, or NULL */
	const char	*reject;	/* import: where bad lines go */
	int		 json;		/* list: NDJSON */
	char		**args;		/* numbers, or import's file */
	int		 nargs;
};

/* 0, or 65 when import rejected lines; exits 64, 66, 69, 74, 75. */
int wa_suppress(PGconn *conn, const struct wa_suppress *s);

#endif
