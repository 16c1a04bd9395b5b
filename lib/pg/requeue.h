/*
 * pg/requeue.h: rows of a campaign put back in the queue for a replay,
 * chosen by status, error code, error class and a file of phone numbers;
 * or, with dry, only counted and shown.
 */
#ifndef WA_PG_REQUEUE_H
#define WA_PG_REQUEUE_H

#include "pg/pg.h"

struct wa_requeue {
	const char	*id;		/* the campaign */
	const char	*status;	/* "failed,unknown", or NULL: default */
	const char	*code;		/* an error code, or NULL */
	const char	*class;		/* an error class, timeout, http */
	const char	*phones;	/* a file of numbers ("-": stdin) */
	const char	*reject;	/* where its bad lines go, or NULL */
	const char	*cc;		/* --country-code digits, or NULL */
	int		 dry;		/* -n: count and show, change nothing */
};

/* 0, or 65 when lines of the phones file were rejected; exits on error. */
int wa_requeue(PGconn *conn, const struct wa_requeue *rq);

#endif
