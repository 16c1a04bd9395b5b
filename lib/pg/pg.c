/*
 * pg.c: connecting to Postgres the way operators expect (-d CONNINFO,
 * else DATABASE_URL, else libpq's own PGHOST, PGDATABASE, ...), running a
 * statement with its errors reported in the toolkit's format, building
 * array literals to pass a whole batch as one parameter, and the one
 * retry policy: a session (struct wa_pg) that waits out a restart or a
 * failover of Postgres, with backoff, up to a timeout.
 */
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/sig.h"
#include "pg/pg.h"

#define BASE_MS 100		/* the backoff: random(0, min(CAP, BASE*2^n)) */
#define CAP_MS 5000
#define NPREPARED 8

struct wa_pg {
	char		*conninfo;
	PGconn		*conn;
	int64_t		 timeout_ms;
	int64_t		 since;		/* first failure in a row (ms), or 0 */
	int64_t		 retry_at;	/* wa_pg_try: not before (ms) */
	int		 tries;		/* failures in a row */
	int		 said;		/* that we wait */
	int		 patience;	/* signals that end a wait */
	enum wa_pg_state state;
	char		 sqlstate[6];
	char		 error[512];
	const char	*prepared[NPREPARED];	/* on this session */
	int		 nprepared;
	int		 unprepared;	/* WA_PG_POOLING=transaction */
	int		 retried;	/* the last wa_pg_run ran it again */
};

/* The conninfo to use: the -d argument, DATABASE_URL, or "" (PG*). */
const char *
wa_pg_conninfo(const char *opt)
{
	const char *url = getenv("DATABASE_URL");

	if (opt != NULL)
		return opt;
	return url != NULL ? url : "";
}

/* msg without its trailing newlines and blanks: its length. */
static int
trim(const char *msg)
{
	size_t n = strlen(msg);

	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
		n--;
	return (int)n;
}

/* Reports the error of conn or res as "prog: what: message". */
void
wa_pg_warn(PGconn *conn, PGresult *res, const char *what)
{
	const char *msg = res ? PQresultErrorMessage(res) : "";

	if (*msg == '\0')
		msg = PQerrorMessage(conn);
	wa_warn("%s: %.*s", what, trim(msg), msg);
}

/*
 * Connects, with timeouts so that a server gone silent is noticed
 * (libpq's own defaults wait for ever); a conninfo's own settings win.
 * Without JIT: a batch's statement whose estimated cost passes
 * jit_above_cost is compiled anew at each run, which cost the status
 * statement half a second a batch of 1,000 (bench/status-race.sh).
 * Where the SET does not hold (a pooler's transactions), or Postgres
 * has no JIT, nothing else changes.
 */
static PGconn *
connect_pg(const char *conninfo)
{
	const char *keys[] = { "connect_timeout", "keepalives_idle",
	    "keepalives_interval", "keepalives_count", "dbname",
	    "fallback_application_name", NULL };
	const char *vals[] = { getenv("PGCONNECT_TIMEOUT") ? "" : "5", "10",
	    "5", "3", wa_pg_conninfo(conninfo), wa_prog, NULL };
	PGconn *conn = PQconnectdbParams(keys, vals, 1);

	if (PQstatus(conn) == CONNECTION_OK)
		PQclear(PQexec(conn, "SET jit = off"));
	return conn;
}

/* A connection, or NULL after saying why. */
PGconn *
wa_pg_try_connect(const char *conninfo)
{
	PGconn *conn = connect_pg(conninfo);

	if (PQstatus(conn) != CONNECTION_OK) {
		wa_pg_warn(conn, NULL, "connect to postgres");
		PQfinish(conn);
		return NULL;
	}
	return conn;
}

PGconn *
wa_pg_connect(const char *conninfo)
{
	PGconn *conn = wa_pg_try_connect(conninfo);

	if (conn == NULL)
		exit(EX_UNAVAILABLE);
	return conn;
}

/* res if it succeeded; else reports the error, frees res, NULL. */
static PGresult *
checked(PGconn *conn, PGresult *res)
{
	switch (PQresultStatus(res)) {
	case PGRES_COMMAND_OK:
	case PGRES_TUPLES_OK:
		return res;
	default:
		wa_pg_warn(conn, res, "postgres");
		PQclear(res);
		return NULL;
	}
}

/*
 * Runs sql with text parameters; returns the result when it succeeded,
 * else reports the error and returns NULL.
 */
PGresult *
wa_pg_exec(PGconn *conn, const char *sql, int n, const char *const *params)
{
	return checked(conn, PQexecParams(conn, sql, n, NULL, params, NULL,
	    NULL, 0));
}

/* wa_pg_exec, or exit 69 when the statement fails. */
PGresult *
wa_pg_must(PGconn *conn, const char *sql, int n, const char *const *params)
{
	PGresult *res = wa_pg_exec(conn, sql, n, params);

	if (res == NULL)
		exit(EX_UNAVAILABLE);
	return res;
}

/*
 * Whether a pooler hands each transaction to any server session
 * (WA_PG_POOLING=transaction: pgbouncer's transaction pooling): then
 * nothing may outlive a statement, and nothing is prepared.
 */
static int
pooled(void)
{
	const char *p = getenv("WA_PG_POOLING");

	if (p == NULL || *p == '\0' || strcmp(p, "session") == 0)
		return 0;
	if (strcmp(p, "transaction") != 0)
		wa_die(EX_CONFIG, "WA_PG_POOLING must be session or "
		    "transaction, not %s", p);
	return 1;
}

/* A session on conninfo that waits up to timeout_s for Postgres. */
struct wa_pg *
wa_pg_open(const char *conninfo, long long timeout_s)
{
	struct wa_pg *db = wa_alloc(sizeof *db);

	db->conninfo = conninfo ? wa_strdup(conninfo) : NULL;
	db->timeout_ms = timeout_s * 1000;
	db->patience = 2;
	db->unprepared = pooled();
	return db;
}

int
wa_pg_unprepared(const struct wa_pg *db)
{
	return db->unprepared;
}

void
wa_pg_patience(struct wa_pg *db, int signals)
{
	db->patience = signals;
}

void
wa_pg_close(struct wa_pg *db)
{
	if (db == NULL)
		return;
	PQfinish(db->conn);
	free(db->conninfo);
	free(db);
}

PGconn *
wa_pg_conn(struct wa_pg *db)
{
	return db->conn != NULL && PQstatus(db->conn) == CONNECTION_OK ?
	    db->conn : NULL;
}

enum wa_pg_state
wa_pg_state(const struct wa_pg *db)
{
	return db->state;
}

const char *
wa_pg_sqlstate(const struct wa_pg *db)
{
	return db->sqlstate;
}

const char *
wa_pg_error(const struct wa_pg *db)
{
	return db->error;
}

/*
 * Data exceptions (class 22: bad bytes, values out of range) and
 * integrity violations (23: a wamid given twice): the rows are at fault,
 * not the statement, so a smaller batch may pass.
 */
int
wa_pg_data_error(const struct wa_pg *db)
{
	return strncmp(db->sqlstate, "22", 2) == 0 ||
	    strncmp(db->sqlstate, "23", 2) == 0;
}

/* Keeps the first line of msg, and state, for the caller. */
static void
keep(struct wa_pg *db, const char *state, const char *msg)
{
	size_t n = strcspn(msg, "\n");

	snprintf(db->sqlstate, sizeof db->sqlstate, "%s", state ? state : "");
	snprintf(db->error, sizeof db->error, "%.*s", (int)n, msg);
}

/*
 * Whether a failure is the server's, not the statement's: the connection
 * is lost (class 08, or libpq says so), the server shuts down or starts
 * (57P01-57P03), has no slot (53300), is read-only (25006: a standby, as
 * after a failover), or a deadlock or serialisation failure (40P01,
 * 40001) that a second run resolves.
 */
static int
transient(PGconn *conn, const char *state)
{
	static const char *const codes[] = { "57P01", "57P02", "57P03",
	    "53300", "25006", "40P01", "40001", NULL };
	int i;

	if (conn == NULL || PQstatus(conn) != CONNECTION_OK || *state == '\0')
		return 1;
	if (strncmp(state, "08", 2) == 0)
		return 1;
	for (i = 0; codes[i] != NULL; i++)
		if (strcmp(state, codes[i]) == 0)
			return 1;
	return 0;
}

/*
 * Notes a failure of the server: says once that we wait; returns the ms
 * to wait before the next try, or -1 (state WA_PG_DOWN) when the timeout
 * has passed or a second signal came.
 */
static int64_t
down(struct wa_pg *db)
{
	int64_t now = wa_now_ms(), ceil = BASE_MS, wait;
	int i;

	if (db->since == 0)
		db->since = now;
	for (i = 0; i < db->tries && ceil < CAP_MS; i++)
		ceil *= 2;
	if (ceil > CAP_MS)
		ceil = CAP_MS;
	db->tries++;
	if (wa_stopping >= db->patience ||
	    now - db->since >= db->timeout_ms) {
		wa_warn("postgres unavailable for %.1f s (%s): %s",
		    (now - db->since) / 1e3, db->error,
		    wa_stopping >= db->patience ? "stopped" : "giving up");
		db->state = WA_PG_DOWN;
		db->since = 0;
		db->tries = 0;
		db->said = 0;
		return -1;
	}
	/* A deadlock passes quickly: say nothing of the first ones. */
	if (!db->said && (db->tries > 3 || strncmp(db->sqlstate, "40", 2))) {
		wa_warn("postgres unavailable (%s): waiting up to %lld s for "
		    "it, reading no more input", db->error,
		    (long long)(db->timeout_ms / 1000));
		db->said = 1;
	}
	wait = 10 + random() % ceil;
	if (now + wait > db->since + db->timeout_ms)
		wait = db->since + db->timeout_ms - now;
	db->state = WA_PG_WAIT;
	return wait;
}

void
wa_pg_ok(struct wa_pg *db)
{
	if (db->said)
		wa_warn("postgres is back after %.1f s",
		    (wa_now_ms() - db->since) / 1e3);
	db->since = 0;
	db->tries = 0;
	db->said = 0;
	db->state = WA_PG_OK;
	db->retry_at = 0;
}

/* A session, connected now, or NULL after noting the failure. */
static PGconn *
session(struct wa_pg *db)
{
	if (db->conn != NULL && PQstatus(db->conn) == CONNECTION_OK)
		return db->conn;
	PQfinish(db->conn);
	db->conn = connect_pg(db->conninfo);
	db->nprepared = 0;
	if (PQstatus(db->conn) == CONNECTION_OK)
		return db->conn;
	keep(db, NULL, PQerrorMessage(db->conn));
	return NULL;
}

/* Keeps why res (NULL: the connection) failed; sets the state. */
static void
failure(struct wa_pg *db, PGresult *res)
{
	const char *msg = res ? PQresultErrorMessage(res) : "";

	keep(db, res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL,
	    *msg ? msg : PQerrorMessage(db->conn));
	db->state = transient(db->conn, db->sqlstate) ? WA_PG_WAIT :
	    WA_PG_REFUSED;
}

/* Prepares name on the session unless it is already: 0, or -1. */
static int
prepare(struct wa_pg *db, const char *name, const char *sql, int n)
{
	PGresult *res;
	int i;

	for (i = 0; i < db->nprepared; i++)
		if (db->prepared[i] == name)
			return 0;
	res = PQprepare(db->conn, name, sql, n, NULL);
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		failure(db, res);
		PQclear(res);
		return -1;
	}
	PQclear(res);
	if (db->nprepared < NPREPARED)
		db->prepared[db->nprepared++] = name;
	return 0;
}

/*
 * One attempt: the result, or NULL with the failure kept and the state
 * WA_PG_REFUSED or (the server's fault) WA_PG_WAIT.
 */
static PGresult *
attempt(struct wa_pg *db, const char *name, const char *sql, int n,
    const char *const *p)
{
	PGresult *res;

	if (session(db) == NULL) {
		db->state = WA_PG_WAIT;
		return NULL;
	}
	if (db->unprepared)
		name = NULL;
	if (name != NULL && prepare(db, name, sql, n) < 0)
		return NULL;
	if (name != NULL)
		res = PQexecPrepared(db->conn, name, n, p, NULL, NULL, 0);
	else
		res = PQexecParams(db->conn, sql, n, NULL, p, NULL, NULL, 0);
	if (PQresultStatus(res) == PGRES_TUPLES_OK ||
	    PQresultStatus(res) == PGRES_COMMAND_OK) {
		wa_pg_ok(db);
		return res;
	}
	failure(db, res);
	PQclear(res);
	return NULL;
}

PGresult *
wa_pg_run(struct wa_pg *db, const char *name, const char *sql, int n,
    const char *const *p)
{
	PGresult *res;
	int64_t wait;

	for (db->retried = 0;; db->retried = 1) {
		if ((res = attempt(db, name, sql, n, p)) != NULL)
			return res;
		if (db->state == WA_PG_REFUSED)
			return NULL;
		if ((wait = down(db)) < 0)
			return NULL;
		wa_sleep_ms(wait);
	}
}

int
wa_pg_retried(const struct wa_pg *db)
{
	return db->retried;
}

PGresult *
wa_pg_try(struct wa_pg *db, const char *name, const char *sql, int n,
    const char *const *p)
{
	PGresult *res;
	int64_t wait;

	if (db->state == WA_PG_WAIT && wa_now_ms() < db->retry_at)
		return NULL;
	if ((res = attempt(db, name, sql, n, p)) != NULL)
		return res;
	if (db->state == WA_PG_WAIT && (wait = down(db)) >= 0)
		db->retry_at = wa_now_ms() + wait;
	return NULL;
}

PGresult *
wa_pg_need(struct wa_pg *db, const char *name, const char *sql, int n,
    const char *const *p)
{
	PGresult *res = wa_pg_run(db, name, sql, n, p);

	if (res == NULL && db->state == WA_PG_REFUSED)
		wa_warn("postgres: %s", db->error);
	if (res == NULL)
		exit(EX_UNAVAILABLE);
	return res;
}

PGconn *
wa_pg_ready(struct wa_pg *db, const char *name, const char *sql, int n)
{
	int64_t wait;

	for (;;) {
		if (session(db) == NULL)
			db->state = WA_PG_WAIT;
		else if (name == NULL || db->unprepared ||
		    prepare(db, name, sql, n) == 0)
			return db->conn;
		if (db->state == WA_PG_REFUSED || (wait = down(db)) < 0)
			return NULL;
		wa_sleep_ms(wait);
	}
}

int
wa_pg_send(struct wa_pg *db, const char *name, const char *sql, int n,
    const char *const *p)
{
	if (name != NULL && !db->unprepared)
		return PQsendQueryPrepared(db->conn, name, n, p, NULL, NULL,
		    0);
	return PQsendQueryParams(db->conn, sql, n, NULL, p, NULL, NULL, 0);
}

int
wa_pg_again(struct wa_pg *db, PGresult *res)
{
	int64_t wait;

	failure(db, res);
	if (db->state == WA_PG_REFUSED)
		return 0;
	if ((wait = down(db)) < 0)
		return -1;
	wa_sleep_ms(wait);
	return 1;
}

void
wa_pg_array_start(struct wa_buf *b)
{
	b->len = 0;
	wa_buf_add(b, "{", 1);
}

static void
sep(struct wa_buf *b)
{
	if (b->len > 1)
		wa_buf_add(b, ",", 1);
}

/* Appends one element, always quoted: quoting is never wrong. */
void
wa_pg_array_add(struct wa_buf *b, const char *s, size_t n)
{
	size_t i, start = 0;

	sep(b);
	wa_buf_add(b, "\"", 1);
	for (i = 0; i < n; i++)
		if (s[i] == '"' || s[i] == '\\') {
			wa_buf_add(b, s + start, i - start);
			wa_buf_add(b, "\\", 1);
			start = i;
		}
	wa_buf_add(b, s + start, n - start);
	wa_buf_add(b, "\"", 1);
}

/* Appends an integer element. */
void
wa_pg_array_int(struct wa_buf *b, long long v)
{
	sep(b);
	wa_buf_printf(b, "%lld", v);
}

/* Appends a string element, or NULL when s is NULL. */
void
wa_pg_array_str(struct wa_buf *b, const char *s)
{
	if (s == NULL)
		wa_pg_array_null(b);
	else
		wa_pg_array_add(b, s, strlen(s));
}

void
wa_pg_array_null(struct wa_buf *b)
{
	sep(b);
	wa_buf_add(b, "NULL", 4);
}

void
wa_pg_array_end(struct wa_buf *b)
{
	wa_buf_add(b, "}", 1);
}
