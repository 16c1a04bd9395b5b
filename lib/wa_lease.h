/*
 * wa_lease.h: the per-number bucket shared by every host through
 * Postgres (wa-throttle --cluster; programs using it link libpq). Tokens
 * are leased in blocks of about 100 ms from one row per number.
 */
#ifndef WA_LEASE_H
#define WA_LEASE_H

#include <stdint.h>

#define WA_LEASE_DOWN (-1)	/* wa_lease_take: Postgres unreachable */

struct wa_bucket;
struct wa_cluster;
struct wa_lease;

struct wa_cluster *wa_cluster_open(const char *);
int wa_cluster_down(const struct wa_cluster *);
void wa_cluster_close(struct wa_cluster *);

struct wa_lease *wa_lease_open(struct wa_cluster *, struct wa_bucket *,
    const char *, double, int64_t, int64_t);
int64_t wa_lease_take(struct wa_lease *);
int64_t wa_lease_paused_until(const struct wa_lease *);
double wa_lease_rate(const struct wa_lease *);
int64_t wa_lease_burst(const struct wa_lease *);
int wa_lease_pause(struct wa_lease *, int64_t);
int wa_lease_set_rate(struct wa_lease *, double, int64_t);
void wa_lease_close(struct wa_lease *);

#endif
