/*
 * pg/statusdb.h: a batch of statuses (records/status.h) applied with one
 * statement, rank-monotone; statuses that match no row yet kept in
 * unmatched_statuses; the spool checkpoint committed with each batch.
 * Batches go out one behind the other.
 */
#ifndef WA_PG_STATUSDB_H
#define WA_PG_STATUSDB_H

#include "core/metrics.h"
#include "pg/pg.h"
#include "records/status.h"

struct wa_status_sink {
	PGconn		*conn;
	const char	*spool;		/* the followed spool, or NULL */
	int		 prune;		/* remove segments behind it */
	struct wa_status_batch b[2];	/* b[cur] fills; the other is */
	int		 cur;
	int		 busy;		/* in flight, when busy */
	struct wa_status_result total;	/* since the start */
	int64_t		 kept_at;	/* when a status was last kept, ms */
	struct wa_metric *lag;		/* histograms, or NULL */
	struct wa_metric *secs;
};

void wa_status_checkpoint(PGconn *conn, const char *spool, long long *seg,
    long long *off);
/* Sends b[cur] with the checkpoint (seg, off); the next fills meanwhile. */
void wa_status_flush(struct wa_status_sink *k, long long seg,
    long long off);
/* Waits for the batch in flight, if any. */
void wa_status_collect(struct wa_status_sink *k);
void wa_status_retry(struct wa_status_sink *k, long long window);
long long wa_status_expire(struct wa_status_sink *k, long long ttl);

#endif
