/*
 * pg.c: connecting to Postgres the way operators expect (-d CONNINFO,
 * else DATABASE_URL, else libpq's own PGHOST, PGDATABASE, ...), running a
 * statement with its errors reported in the toolkit's format, and building
 * array literals to pass a whole batch as one parameter.
 */
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "pg/pg.h"

/* The conninfo to use: the -d argument, DATABASE_URL, or "" (PG*). */
const char *
wa_pg_conninfo(const char *opt)
{
	const char *url = getenv("DATABASE_URL");

	if (opt != NULL)
		return opt;
	return url != NULL ? url : "";
}

/* Reports the error of conn or res as "prog: what: message". */
void
wa_pg_warn(PGconn *conn, PGresult *res, const char *what)
{
	const char *msg = res ? PQresultErrorMessage(res) : "";
	size_t n;

	if (*msg == '\0')
		msg = PQerrorMessage(conn);
	n = strlen(msg);
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
		n--;
	wa_warn("%s: %.*s", what, (int)n, msg);
}

/* A connection, or NULL after saying why. */
PGconn *
wa_pg_try_connect(const char *conninfo)
{
	const char *keys[] = { "dbname", "fallback_application_name", NULL };
	const char *vals[] = { wa_pg_conninfo(conninfo), wa_prog, NULL };
	PGconn *conn = PQconnectdbParams(keys, vals, 1);

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
 * Prepares sql under name on this session unless it already is (a new
 * session, after a reconnect, needs it again): planning once saves a few
 * ms on every batch. name must be a string constant. Returns the failed
 * result (for wa_pg_retryable) or NULL when ready.
 */
PGresult *
wa_pg_prepare(PGconn *conn, const char *name, const char *sql, int n)
{
	static struct {
		const char	*name;
		int		 pid;
	} done[8];
	PGresult *res;
	int i, pid = PQbackendPID(conn);

	for (i = 0; i < 7 && done[i].name && done[i].name != name; i++)
		;
	if (done[i].name == name && done[i].pid == pid && pid != 0)
		return NULL;
	res = PQprepare(conn, name, sql, n, NULL);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		return res;
	PQclear(res);
	done[i].name = name;
	done[i].pid = pid;
	return NULL;
}

/*
 * wa_pg_exec for a statement run many times: prepared once per session.
 */
PGresult *
wa_pg_exec_prepared(PGconn *conn, const char *name, const char *sql, int n,
    const char *const *params)
{
	PGresult *res = wa_pg_prepare(conn, name, sql, n);

	if (res == NULL)
		res = PQexecPrepared(conn, name, n, params, NULL, NULL, 0);
	return checked(conn, res);
}

/*
 * Whether a failed statement is worth running again: a deadlock, a
 * serialisation failure, or a lost connection (which this resets).
 */
int
wa_pg_retryable(PGconn *conn, PGresult *res)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) :
	    NULL;

	if (PQstatus(conn) == CONNECTION_BAD) {
		PQreset(conn);
		return 1;
	}
	return state != NULL && (strcmp(state, "40P01") == 0 ||
	    strcmp(state, "40001") == 0);
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
