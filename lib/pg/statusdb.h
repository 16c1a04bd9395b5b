/*
 * pg/statusdb.h: a batch of statuses (records/status.h) applied with one
 * statement, rank-monotone; statuses that match no row yet kept in
 * unmatched_statuses; the batch's inbound messages inserted into
 * inbound_messages; the spool checkpoint committed with each batch,
 * and said to the caller once it is (the spool is the caller's: nothing
 * here removes a file). Batches go out one behind the other. Postgres
 * gone is waited for (pg/pg.h's policy), then the program exits 69; a
 * batch refused for its data is split until the status at fault is
 * alone.
 */
#ifndef WA_PG_STATUSDB_H
#define WA_PG_STATUSDB_H

#include "core/metrics.h"
#include "pg/pg.h"
#include "records/status.h"

struct wa_status_sink {
	struct wa_pg	*db;		/* waits out a restart (pg/pg.h) */
	int		 locked;	/* the backend that holds the spool */
	const char	*spool;		/* the followed spool, or NULL */
	struct wa_status_batch b[2];	/* b[cur] fills; the other is */
	int		 cur;
	int		 busy;		/* in flight, when busy */
	struct wa_status_result total;	/* since the start */
	int64_t		 kept_at;	/* when a status was last kept, ms */
	struct wa_metric *lag;		/* histograms, or NULL */
	struct wa_metric *secs;
	/* A status Postgres refused on its own (its body's line number). */
	void		(*refused)(unsigned long lineno, const char *why);
	/* A batch committed with a checkpoint in spool segment seg. */
	void		(*committed)(long long seg);
};

/*
 * Reads this database's deployment tag into the batches (a status of
 * another deployment is then not applied); exits 69 without one (a
 * schema older than version 7: wa-campaign migrate).
 */
void wa_status_deployment(struct wa_status_sink *k);
void wa_status_checkpoint(struct wa_status_sink *k, long long *seg,
    long long *off);
/* Sends b[cur] with the checkpoint (seg, off); the next fills meanwhile. */
void wa_status_flush(struct wa_status_sink *k, long long seg,
    long long off);
/* Waits for the batch in flight, if any; then calls committed. */
void wa_status_collect(struct wa_status_sink *k);
void wa_status_retry(struct wa_status_sink *k, long long window);
long long wa_status_expire(struct wa_status_sink *k, long long ttl);

#endif
