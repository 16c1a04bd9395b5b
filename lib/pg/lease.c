/*
 * lease.c: the tokens of one number for this process: from the host's
 * bucket (bucket.c) or, with a cluster, from the bucket shared by every
 * host through one Postgres row per number (throttle_buckets and
 * throttle_lease in sql/schema.sql). The row is a GCRA on the server's
 * clock. A process leases about 100 ms of tokens with one statement, so
 * the row sees a few updates a second whatever the rate; the lease says
 * when each of its tokens may go, counted from the moment of the lease,
 * so the hosts' clocks need not agree. The times are taken on the safe
 * side: a token's earliest time from when the answer arrived, the lease's
 * end from when the question left. A token not used by the end of its
 * lease is dropped, so in any window the hosts together pass at most
 * rate + burst + one lease. No lease starts more than one lease ahead,
 * so none outlives a pause by much. When Postgres cannot be reached no
 * token is given (fail closed), new attempts are made with pg/pg.h's
 * backoff, and past --pg-timeout the program exits 69 (the lines it did
 * not pass on stay claimed, for wa-reconcile). A cut of the host's rate
 * by wa-send (adaptive rate) holds this host back further: its tokens
 * must then come from both.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/sig.h"
#include "api/bucket.h"
#include "pg/lease.h"
#include "pg/pg.h"

struct wa_cluster {
	struct wa_pg *db;
};

struct wa_lease {
	struct wa_cluster *c;
	struct wa_bucket *host;		/* the number's bucket on this host */
	int64_t	 pushed;		/* the host's pause, sent on */
	char	*number;
	double	 rate;		/* for a new row; then the row's */
	int64_t	 burst;
	int64_t	 lease_ns;	/* the time one lease covers */
	int64_t	 first;		/* when token 0 may go (CLOCK_MONOTONIC) */
	int64_t	 every;		/* ns between tokens */
	int64_t	 end;		/* no token of this lease after this */
	int64_t	 n;
	int64_t	 used;
	int64_t	 retry_at;	/* no lease to be had before this */
	int64_t	 paused_until;	/* the row's pause, as last seen */
	int	 have;		/* a leased token, waiting for the host's */
};

static const char *lease_sql =
    "SELECT wait_s, n, every_s, end_s, paused_s, cur_rate, cur_burst"
    " FROM throttle_lease($1, $2, $3, $4)";

static const char *pause_sql =
    "INSERT INTO throttle_buckets AS b (phone_number_id, rate, burst,"
    "  paused_until, pauses)"
    " VALUES ($1, $2, $3, clock_timestamp() +"
    "  $4::double precision * interval '1 millisecond', 1)"
    " ON CONFLICT (phone_number_id) DO UPDATE"
    " SET paused_until = greatest(b.paused_until, excluded.paused_until),"
    "  pauses = b.pauses + 1, updated_at = now()";

static const char *rate_sql =
    "INSERT INTO throttle_buckets AS b (phone_number_id, rate, burst)"
    " VALUES ($1, $2, $3)"
    " ON CONFLICT (phone_number_id) DO UPDATE"
    " SET rate = excluded.rate, burst = excluded.burst, updated_at = now()";

static const char *show_sql =
    "SELECT phone_number_id, rate, burst,"
    "  CASE WHEN paused_until > clock_timestamp() THEN"
    "   extract(epoch FROM paused_until - clock_timestamp()) ELSE 0 END"
    " FROM throttle_buckets"
    " WHERE $1::text IS NULL OR phone_number_id = $1"
    " ORDER BY phone_number_id";

struct wa_cluster *
wa_cluster_open(const char *conninfo, long long timeout_s)
{
	struct wa_cluster *c = wa_alloc(sizeof *c);

	c->db = wa_pg_open(conninfo, timeout_s);
	return c;
}

/* Whether Postgres could not be reached at the last attempt. */
int
wa_cluster_down(const struct wa_cluster *c)
{
	return wa_pg_state(c->db) == WA_PG_WAIT;
}

void
wa_cluster_close(struct wa_cluster *c)
{
	if (c == NULL)
		return;
	wa_pg_close(c->db);
	free(c);
}

/*
 * Runs sql; returns its result, or NULL while Postgres cannot be reached
 * (said once). Past the timeout, or when Postgres cannot run the
 * statement at all (the schema never loaded), the program ends.
 */
static PGresult *
run(struct wa_cluster *c, const char *sql, int n, const char *const *p)
{
	PGresult *res = wa_pg_try(c->db, NULL, sql, n, p);

	if (res != NULL || wa_pg_state(c->db) == WA_PG_WAIT)
		return res;
	if (wa_pg_state(c->db) == WA_PG_DOWN)
		wa_die(EX_UNAVAILABLE, "no tokens without postgres: the lines "
		    "not passed on stay claimed for wa-reconcile");
	wa_warn("postgres: %s", wa_pg_error(c->db));
	if (strncmp(wa_pg_sqlstate(c->db), "42", 2) == 0)
		wa_die(EX_CONFIG, "is sql/schema.sql loaded?");
	exit(EX_UNAVAILABLE);
}

/*
 * The tokens of number for this process: from host, the number's bucket
 * on this host, or when c is not NULL from the cluster's row, made with
 * rate and burst if it is missing (an existing row keeps its own), in
 * leases of lease_ns. In a cluster, the host's pauses (made by wa-send)
 * still hold this process at once, and go on to every host.
 */
struct wa_lease *
wa_lease_open(struct wa_cluster *c, struct wa_bucket *host,
    const char *number, double rate, int64_t burst, int64_t lease_ns)
{
	struct wa_lease *l = wa_alloc(sizeof *l);

	l->c = c;
	l->host = host;
	l->number = wa_strdup(number);
	l->rate = rate > 0 ? rate : WA_BUCKET_RATE;
	l->burst = burst > 0 ? burst : wa_bucket_default_burst(l->rate);
	l->lease_ns = lease_ns;
	return l;
}

void
wa_lease_close(struct wa_lease *l)
{
	if (l == NULL)
		return;
	free(l->number);
	free(l);
}

static int64_t
ns_of(const char *s, int up)
{
	double d = atof(s) * 1e9;
	int64_t i = (int64_t)d;

	return up && i < d ? i + 1 : i;
}

/* Leases the next block of tokens: 0, or -1 when Postgres is down. */
static int
lease(struct wa_lease *l)
{
	char secs[32], rate[32], burst[32];
	const char *p[] = { l->number, secs, rate, burst };
	int64_t sent = wa_now_ns(), got, paused;
	PGresult *res;

	snprintf(secs, sizeof secs, "%.9f", l->lease_ns / 1e9);
	snprintf(rate, sizeof rate, "%.17g", l->rate);
	snprintf(burst, sizeof burst, "%lld", (long long)l->burst);
	l->n = l->used = 0;
	if ((res = run(l->c, lease_sql, 4, p)) == NULL)
		return -1;
	got = wa_now_ns();
	l->first = got + ns_of(PQgetvalue(res, 0, 0), 1);
	l->n = atoll(PQgetvalue(res, 0, 1));
	l->every = ns_of(PQgetvalue(res, 0, 2), 1);
	l->end = sent + ns_of(PQgetvalue(res, 0, 3), 0);
	if (l->n == 0)
		l->retry_at = l->first - l->lease_ns;
	paused = ns_of(PQgetvalue(res, 0, 4), 1);
	l->paused_until = paused > 0 ? got + paused : 0;
	l->rate = atof(PQgetvalue(res, 0, 5));
	l->burst = atoll(PQgetvalue(res, 0, 6));
	PQclear(res);
	return 0;
}

/*
 * With a leased token in hand: while wa-send has cut this host's rate
 * (adaptive rate, api/guard.c), the host's bucket must give a token too,
 * so that the cut holds back this host's share of the cluster's rate.
 */
static int64_t
host_too(struct wa_lease *l)
{
	struct wa_bucket_stats st;
	int64_t ns;

	wa_bucket_stats(l->host, &st);
	if (st.rate < st.base && (ns = wa_bucket_take(l->host)) > 0)
		return ns;
	l->have = 0;
	return 0;
}

/*
 * Takes a token: returns 0, or the ns to wait before asking again, or
 * WA_LEASE_DOWN while Postgres cannot be reached.
 */
int64_t
wa_lease_take(struct wa_lease *l)
{
	int64_t now, t, until;

	if (l->c == NULL)
		return wa_bucket_take(l->host);
	now = wa_now_ns();
	until = wa_bucket_paused_until(l->host);
	if (until > now) {
		if (until > l->pushed && wa_lease_pause(l,
		    (until - now + 999999) / 1000000) == 0)
			l->pushed = until;
		return until - now;
	}
	if (l->have)
		return host_too(l);
	if (l->used >= l->n || now >= l->end) {
		if (now < l->retry_at)
			return l->retry_at - now;
		if (lease(l) < 0)
			return WA_LEASE_DOWN;
		now = wa_now_ns();
		if (l->n == 0)
			return l->retry_at > now ? l->retry_at - now : 1000000;
	}
	t = l->first + l->used * l->every;
	if (t > now)
		return t - now;
	l->used++;
	l->have = 1;
	return host_too(l);
}

/* The end of the pause in force, here or on the row at the last lease. */
int64_t
wa_lease_paused_until(const struct wa_lease *l)
{
	int64_t until = wa_bucket_paused_until(l->host);

	return until > l->paused_until ? until : l->paused_until;
}

/* The bucket's figures; in a cluster, rate and burst as last leased. */
void
wa_lease_stats(const struct wa_lease *l, struct wa_bucket_stats *st)
{
	wa_bucket_stats(l->host, st);
	if (l->c != NULL) {
		st->rate = l->rate;
		st->burst = l->burst;
	}
}

/*
 * Pauses the number for ms, on this host or on every host; 0, or -1 if
 * Postgres is down.
 */
int
wa_lease_pause(struct wa_lease *l, int64_t ms)
{
	char rate[32], burst[32], msbuf[32];
	const char *p[] = { l->number, rate, burst, msbuf };
	PGresult *res;

	if (l->c == NULL) {
		wa_bucket_pause(l->host, ms);
		return 0;
	}
	snprintf(rate, sizeof rate, "%.17g", l->rate);
	snprintf(burst, sizeof burst, "%lld", (long long)l->burst);
	snprintf(msbuf, sizeof msbuf, "%lld", (long long)ms);
	if ((res = run(l->c, pause_sql, 4, p)) == NULL)
		return -1;
	PQclear(res);
	l->n = l->used = 0;
	return 0;
}

/*
 * Sets the number's rate, on this host or on every host, and its burst
 * (<= 0: 100 ms worth of the rate); 0, or -1 if Postgres is down.
 */
int
wa_lease_set_rate(struct wa_lease *l, double rate, int64_t burst)
{
	char r[32], b[32];
	const char *p[] = { l->number, r, b };
	PGresult *res;

	if (l->c == NULL) {
		wa_bucket_set_rate(l->host, rate, burst);
		return 0;
	}
	if (burst <= 0)
		burst = wa_bucket_default_burst(rate);
	snprintf(r, sizeof r, "%.17g", rate);
	snprintf(b, sizeof b, "%lld", (long long)burst);
	if ((res = run(l->c, rate_sql, 3, p)) == NULL)
		return -1;
	PQclear(res);
	l->rate = rate;
	l->burst = burst;
	l->n = l->used = 0;
	return 0;
}

/*
 * Calls each for every number's row (only number's when not NULL), in
 * order: the number, its rate, burst and pause left (ms, 0: none).
 * Returns how many rows, or -1 when Postgres cannot be reached.
 */
int
wa_cluster_buckets(struct wa_cluster *c, const char *number,
    void (*each)(const char *, const struct wa_bucket_stats *))
{
	const char *p[] = { number };
	struct wa_bucket_stats st;
	PGresult *res;
	int i, n;

	if ((res = wa_pg_need(c->db, NULL, show_sql, 1, p)) == NULL)
		return -1;
	n = PQntuples(res);
	for (i = 0; i < n; i++) {
		memset(&st, 0, sizeof st);
		st.rate = st.base = atof(PQgetvalue(res, i, 1));
		st.burst = atoll(PQgetvalue(res, i, 2));
		st.paused_ms = (int64_t)(atof(PQgetvalue(res, i, 3)) * 1000 +
		    0.999);
		if (each != NULL)
			each(PQgetvalue(res, i, 0), &st);
	}
	PQclear(res);
	return n;
}
