/*
 * pg/lease.h: the tokens of one number for this process: from the host's
 * bucket, or shared by every host through Postgres (wa-throttle
 * --cluster; programs using it link libpq), leased in blocks of about
 * 100 ms from one row per number.
 */
#ifndef WA_PG_LEASE_H
#define WA_PG_LEASE_H

#include <stdint.h>

#define WA_LEASE_DOWN (-1)	/* wa_lease_take: Postgres unreachable */

struct wa_bucket;
struct wa_bucket_stats;
struct wa_cluster;
struct wa_lease;

/* Waits up to timeout_s for Postgres, then exits 69. */
struct wa_cluster *wa_cluster_open(const char *conninfo, long long timeout_s);
int wa_cluster_down(const struct wa_cluster *c);
void wa_cluster_close(struct wa_cluster *c);
/* Each number's row (or number's only): how many, -1 if down. */
int wa_cluster_buckets(struct wa_cluster *c, const char *number,
    void (*each)(const char *, const struct wa_bucket_stats *));

/* Tokens of number: from host, or from the cluster c when not NULL. */
struct wa_lease *wa_lease_open(struct wa_cluster *c, struct wa_bucket *host,
    const char *number, double rate, int64_t burst, int64_t lease_ns,
    int weight, int urgent);
/* 0 when a token was taken, ns to wait, or WA_LEASE_DOWN. */
int64_t wa_lease_take(struct wa_lease *l);
int64_t wa_lease_paused_until(const struct wa_lease *l);
void wa_lease_stats(const struct wa_lease *l, struct wa_bucket_stats *st);
int wa_lease_pause(struct wa_lease *l, int64_t ms);
int wa_lease_set_rate(struct wa_lease *l, double rate, int64_t burst);
int wa_lease_set_reserve(struct wa_lease *l, double reserve);
void wa_lease_close(struct wa_lease *l);

#endif
