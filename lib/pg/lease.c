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
 *
 * The rate is shared by weight between the processes drawing from the
 * number (one per campaign), less its reserve. On a host each paces
 * itself at its share (api/share.c) under the bucket, which still caps
 * them all. In a cluster each lease says who draws (host:pid) and with
 * what weight (throttle_drawers), and the row gives the process its
 * share's worth of tokens, spaced at its share; the reserve is the
 * row's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "core/sig.h"
#include "api/bucket.h"
#include "api/share.h"
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
	int	 weight;	/* its share of the number's rate, by weight */
	int	 urgent;	/* the others wait while it draws */
	struct wa_share *share;	/* on a host: the number's share file */
	int64_t	 tat;		/* on a host: its own pace, at its share */
	double	 frac;		/* its part of the rate, last seen */
	double	 reserve;	/* in a cluster: the row's, last seen */
	char	 drawer[96];	/* in a cluster: host:pid */
};

static const char *lease_sql =
    "SELECT wait_s, n, every_s, end_s, paused_s, cur_rate, cur_burst,"
    "  cur_reserve, share"
    " FROM throttle_lease($1, $2, $3, $4, $5, $6, $7)";

static const char *reserve_sql =
    "INSERT INTO throttle_buckets AS b (phone_number_id, rate, burst,"
    "  reserve)"
    " VALUES ($1, $2, $3, $4)"
    " ON CONFLICT (phone_number_id) DO UPDATE"
    " SET reserve = excluded.reserve, updated_at = now()";

static const char *gone_sql =
    "DELETE FROM throttle_drawers WHERE phone_number_id = $1"
    " AND drawer = $2";

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
    "   extract(epoch FROM paused_until - clock_timestamp()) ELSE 0 END,"
    "  reserve, coalesce((SELECT string_agg(CASE WHEN d.urgent THEN 'u'"
    "   ELSE '' END || d.weight, '+'"
    "   ORDER BY d.drawer) FROM throttle_drawers d"
    "   WHERE d.phone_number_id = b.phone_number_id"
    "   AND d.until_at > clock_timestamp()), '-')"
    " FROM throttle_buckets b"
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
 * statement at all (the schema never loaded), the program ends. With
 * wait (a change made by hand: nothing else to do meanwhile), it waits up
 * to the timeout for Postgres and returns NULL past it, having said so.
 */
static PGresult *
run(struct wa_cluster *c, int wait, const char *sql, int n,
    const char *const *p)
{
	PGresult *res;

	if (wait)
		res = wa_pg_run(c->db, NULL, sql, n, p);
	else
		res = wa_pg_try(c->db, NULL, sql, n, p);
	if (res != NULL || wa_pg_state(c->db) == WA_PG_WAIT)
		return res;
	if (wa_pg_state(c->db) == WA_PG_DOWN) {
		if (wait)
			return NULL;
		wa_die(EX_UNAVAILABLE, "no tokens without postgres: the lines "
		    "not passed on stay claimed for wa-reconcile");
	}
	wa_warn("postgres: %s", wa_pg_error(c->db));
	if (strncmp(wa_pg_sqlstate(c->db), "42", 2) == 0)
		wa_die(EX_CONFIG, "is sql/schema.sql loaded?");
	exit(EX_UNAVAILABLE);
}

/*
 * The tokens of number for this process: from host, the number's bucket
 * on this host, or when c is not NULL from the cluster's row, made with
 * rate and burst if it is missing (an existing row keeps its own), in
 * leases of lease_ns; shared with the number's other processes by
 * weight (0: it only looks or changes). In a cluster, the host's pauses
 * (made by wa-send) still hold this process at once, and go on to every
 * host. Exits 78 when the host's share file cannot be used.
 */
struct wa_lease *
wa_lease_open(struct wa_cluster *c, struct wa_bucket *host,
    const char *number, double rate, int64_t burst, int64_t lease_ns,
    int weight, int urgent)
{
	struct wa_lease *l = wa_alloc(sizeof *l);
	char name[64] = "";

	l->c = c;
	l->host = host;
	l->number = wa_strdup(number);
	l->rate = rate > 0 ? rate : WA_BUCKET_RATE;
	l->burst = burst > 0 ? burst : wa_bucket_default_burst(l->rate);
	l->lease_ns = lease_ns;
	l->weight = weight;
	l->urgent = urgent;
	l->frac = 1;
	if (c == NULL && (l->share = wa_share_open(number, weight, urgent)) ==
	    NULL)
		wa_die(EX_CONFIG, "cannot share %s's rate: set WA_STATE_DIR",
		    number);
	gethostname(name, sizeof name - 1);
	snprintf(l->drawer, sizeof l->drawer, "%s:%ld", name,
	    (long)getpid());
	return l;
}

/* Gives its share back: the number's other processes take it at once. */
void
wa_lease_close(struct wa_lease *l)
{
	const char *p[2];
	PGresult *res;

	if (l == NULL)
		return;
	if (l->c != NULL && l->weight > 0 && !wa_cluster_down(l->c)) {
		p[0] = l->number;
		p[1] = l->drawer;
		if ((res = wa_pg_try(l->c->db, NULL, gone_sql, 2, p)) != NULL)
			PQclear(res);
	}
	wa_share_close(l->share);
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
	char secs[32], rate[32], burst[32], weight[16];
	const char *p[] = { l->number, secs, rate, burst, l->drawer,
	    weight, l->urgent ? "t" : "f" };
	int64_t sent = wa_now_ns(), got, paused;
	PGresult *res;

	snprintf(secs, sizeof secs, "%.9f", l->lease_ns / 1e9);
	snprintf(rate, sizeof rate, "%.17g", l->rate);
	snprintf(burst, sizeof burst, "%lld", (long long)l->burst);
	snprintf(weight, sizeof weight, "%d", l->weight > 0 ? l->weight : 1);
	l->n = l->used = 0;
	if ((res = run(l->c, 0, lease_sql, 7, p)) == NULL)
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
	l->reserve = atof(PQgetvalue(res, 0, 7));
	l->frac = atof(PQgetvalue(res, 0, 8)) * (1 - l->reserve);
	PQclear(res);
	return 0;
}

/*
 * On a host: its own pace at its share of the rate in force (a burst of
 * its share of the bucket's), then a token from the bucket, which holds
 * every process to the rate. Alone and with no reserve, the bucket's
 * pace is its own.
 */
static int64_t
host_take(struct wa_lease *l)
{
	int64_t now = wa_now_ns(), burst, every, tau, ns;
	double rate;

	l->frac = wa_share_now(l->share, now);
	if (l->frac >= 1)
		return wa_bucket_take(l->host);
	if (l->frac <= 0)
		return WA_SHARE_ACTIVE_NS / 5;	/* an urgent one draws */
	rate = wa_bucket_rate(l->host, &burst) * l->frac;
	every = (int64_t)(1e9 / rate) + 1;
	burst = (int64_t)(burst * l->frac + 0.5);
	tau = (burst > 1 ? burst - 1 : 0) * every;
	if (l->tat == 0)
		l->tat = now + tau;	/* it starts empty, as the bucket */
	if (l->tat - tau > now)
		return l->tat - tau - now;
	if ((ns = wa_bucket_take(l->host)) != 0)
		return ns;
	l->tat = (l->tat > now ? l->tat : now) + every;
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
		return host_take(l);
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

/*
 * The bucket's figures; in a cluster, rate, burst and reserve as last
 * leased. share: this process's part of the rate, as last seen.
 */
void
wa_lease_stats(const struct wa_lease *l, struct wa_bucket_stats *st)
{
	wa_bucket_stats(l->host, st);
	st->share = l->frac;
	if (l->c != NULL) {
		st->rate = l->rate;
		st->burst = l->burst;
		st->reserve = l->reserve;
	} else {
		st->reserve = wa_share_reserve(l->share);
		wa_share_drawing(l->share, st->drawing, sizeof st->drawing);
	}
}

/*
 * Keeps reserve (0 to 0.99) of the number's rate back for live
 * conversations, on this host or on every host; 0, or -1 if Postgres is
 * down.
 */
int
wa_lease_set_reserve(struct wa_lease *l, double reserve)
{
	char rate[32], burst[32], r[32];
	const char *p[] = { l->number, rate, burst, r };
	PGresult *res;

	if (l->c == NULL) {
		wa_share_set_reserve(l->share, reserve);
		return 0;
	}
	snprintf(rate, sizeof rate, "%.17g", l->rate);
	snprintf(burst, sizeof burst, "%lld", (long long)l->burst);
	snprintf(r, sizeof r, "%.6f", reserve);
	if ((res = run(l->c, l->weight == 0, reserve_sql, 4, p)) == NULL)
		return -1;
	PQclear(res);
	l->reserve = reserve;
	l->n = l->used = 0;
	return 0;
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
	if ((res = run(l->c, l->weight == 0, pause_sql, 4, p)) == NULL)
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
	if ((res = run(l->c, l->weight == 0, rate_sql, 3, p)) == NULL)
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

	if ((res = run(c, 1, show_sql, 1, p)) == NULL)
		return -1;
	n = PQntuples(res);
	for (i = 0; i < n; i++) {
		memset(&st, 0, sizeof st);
		st.rate = st.base = atof(PQgetvalue(res, i, 1));
		st.burst = atoll(PQgetvalue(res, i, 2));
		st.paused_ms = (int64_t)(atof(PQgetvalue(res, i, 3)) * 1000 +
		    0.999);
		st.reserve = atof(PQgetvalue(res, i, 4));
		snprintf(st.drawing, sizeof st.drawing, "%s",
		    PQgetvalue(res, i, 5));
		if (each != NULL)
			each(PQgetvalue(res, i, 0), &st);
	}
	PQclear(res);
	return n;
}
