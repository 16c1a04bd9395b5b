/*
 * wa_lease.h: the tokens of one number for this process: from the host's
 * bucket, or shared by every host through Postgres (wa-throttle
 * --cluster; programs using it link libpq), leased in blocks of about
 * 100 ms from one row per number.
 */
#ifndef WA_LEASE_H
#define WA_LEASE_H

#include <stdint.h>

#define WA_LEASE_DOWN (-1)	/* wa_lease_take: Postgres unreachable */

struct wa_bucket;
struct wa_bucket_stats;
struct wa_cluster;
struct wa_lease;

struct wa_cluster *wa_cluster_open(const char *);
int wa_cluster_down(const struct wa_cluster *);
void wa_cluster_close(struct wa_cluster *);

struct wa_lease *wa_lease_open(struct wa_cluster *, struct wa_bucket *,
    const char *, double, int64_t, int64_t);
int64_t wa_lease_take(struct wa_lease *);
int64_t wa_lease_paused_until(const struct wa_lease *);
void wa_lease_stats(const struct wa_lease *, struct wa_bucket_stats *);
int wa_lease_pause(struct wa_lease *, int64_t);
int wa_lease_set_rate(struct wa_lease *, double, int64_t);
void wa_lease_close(struct wa_lease *);

#endif
