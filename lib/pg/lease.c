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
 * token is given (fail closed), and a new attempt is made every second.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/sig.h"
#include "api/bucket.h"
#include "pg/lease.h"
#include "pg/pg.h"

#define RETRY_NS 1000000000LL	/* between attempts to reach Postgres */
#define NAG_NS 60000000000LL	/* between reminders that it is down */

struct wa_cluster {
	char	*conninfo;
	PGconn	*conn;
	int	 down;		/* the last attempt failed */
	int64_t	 down_since;
	int64_t	 retry_at;	/* no new attempt before this */
	int64_t	 nag_at;
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

struct wa_cluster *
wa_cluster_open(const char *conninfo)
{
	struct wa_cluster *c = wa_alloc(sizeof *c);

	c->conninfo = conninfo ? wa_strdup(conninfo) : NULL;
	return c;
}

/* Whether Postgres could not be reached at the last attempt. */
int
wa_cluster_down(const struct wa_cluster *c)
{
	return c->down;
}

void
wa_cluster_close(struct wa_cluster *c)
{
	if (c == NULL)
		return;
	PQfinish(c->conn);
	free(c->conninfo);
	free(c);
}

/* The first line of a libpq message. */
static void
first_line(char *dst, size_t n, const char *msg)
{
	size_t len = strcspn(msg, "\n");

	snprintf(dst, n, "%.*s", (int)len, msg);
}

static void
went_down(struct wa_cluster *c, const char *msg)
{
	int64_t now = wa_now_ns();
	char why[256];

	first_line(why, sizeof why, msg);
	if (!c->down) {
		wa_warn("postgres unreachable (%s): passing no lines until "
		    "it is back", why);
		c->down = 1;
		c->down_since = now;
		c->nag_at = now + NAG_NS;
	} else if (now >= c->nag_at) {
		wa_warn("postgres still unreachable after %lld s (%s)",
		    (long long)((now - c->down_since) / 1000000000), why);
		c->nag_at = now + NAG_NS;
	}
	c->retry_at = now + RETRY_NS;
}

/* A connection with timeouts, so that a lost server is noticed. */
static PGconn *
connect_pg(struct wa_cluster *c)
{
	const char *keys[] = { "connect_timeout", "keepalives_idle",
	    "keepalives_interval", "keepalives_count", "dbname",
	    "fallback_application_name", NULL };
	const char *vals[] = { getenv("PGCONNECT_TIMEOUT") ? "" : "5", "10",
	    "5", "3", wa_pg_conninfo(c->conninfo), wa_prog, NULL };

	return PQconnectdbParams(keys, vals, 1);
}

/*
 * Runs sql; returns its result, or NULL while Postgres cannot be reached
 * (said once). A statement that Postgres cannot run at all, as when
 * the schema was never loaded, ends the program.
 */
static PGresult *
run(struct wa_cluster *c, const char *sql, int n, const char *const *p)
{
	PGresult *res;
	const char *state;

	if (c->conn == NULL || PQstatus(c->conn) != CONNECTION_OK) {
		if (c->down && wa_now_ns() < c->retry_at)
			return NULL;
		PQfinish(c->conn);
		c->conn = connect_pg(c);
		if (PQstatus(c->conn) != CONNECTION_OK) {
			went_down(c, PQerrorMessage(c->conn));
			return NULL;
		}
	}
	res = PQexecParams(c->conn, sql, n, NULL, p, NULL, NULL, 0);
	switch (PQresultStatus(res)) {
	case PGRES_COMMAND_OK:
	case PGRES_TUPLES_OK:
		if (c->down)
			wa_warn("postgres is back after %.1f s: passing lines "
			    "again", (wa_now_ns() - c->down_since) / 1e9);
		c->down = 0;
		return res;
	default:
		break;
	}
	state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	if (PQstatus(c->conn) == CONNECTION_OK && state != NULL &&
	    strncmp(state, "42", 2) == 0) {
		wa_pg_warn(c->conn, res, "postgres");
		wa_die(EX_CONFIG, "is sql/schema.sql loaded?");
	}
	went_down(c, PQresultErrorMessage(res)[0] ? PQresultErrorMessage(res) :
	    PQerrorMessage(c->conn));
	PQclear(res);
	return NULL;
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
	return 0;
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
