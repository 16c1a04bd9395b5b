/*
 * export.c: a campaign's recipients, one line each, for people and
 * scripts: phone, status, attempts, wamid, the current error (code,
 * class, title and when), status time and template parameters.
 *
 * Reads campaign_recipients (Postgres) through one COPY (SELECT ...) TO
 * STDOUT, so rows come as the server reads them and memory stays flat
 * however many there are; writes them on stdout, CSV with a header line
 * or NDJSON, in phone order. Returns 0. Exits 64 on a bad --status,
 * --code or --format or an unknown campaign, 69 when
 * Postgres fails or goes away in the middle (saying how many rows went
 * out: the output is then incomplete), 74 when stdout fails (a closed
 * pipe included). It holds no state to save, so SIGINT and SIGTERM end
 * it at once, as they would any reader.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "campaign.h"

#define HAS_ERROR "(error_code IS NOT NULL OR error_title IS NOT NULL" \
    " OR error_class IS NOT NULL)"

/* The columns: name, expression. */
static const char *const cols[][2] = {
	{ "phone", "phone" },
	{ "status", "status" },
	{ "attempts", "attempt" },
	{ "wamid", "wamid" },
	{ "error_code", "error_code" },
	{ "error_class", "error_class" },
	{ "error_title", "error_title" },
	{ "error_at", "CASE WHEN " HAS_ERROR " THEN " ISO("status_at") " END" },
	{ "status_at", ISO("status_at") },
	{ "params", "template_params" },
};

enum { CSV, NDJSON };

struct export {
	const char	*id;		/* the campaign */
	const char	*status;	/* only rows in this status, or NULL */
	const char	*code;		/* only rows with this error code */
	int		 format;	/* CSV or NDJSON */
};

static const char *const statuses[] = { "pending", "sending", "unknown",
    "sent", "delivered", "read", "failed", "suppressed", "expired" };

/* Whether s is a status a row can have. */
static int
is_status(const char *s)
{
	size_t i;

	for (i = 0; i < sizeof statuses / sizeof *statuses; i++)
		if (strcmp(s, statuses[i]) == 0)
			return 1;
	return 0;
}

/*
 * The statement. COPY takes no parameters: the id and code were checked
 * as numbers and the status against the list, so they are put in as is.
 */
static void
statement(struct wa_buf *q, const struct export *e)
{
	size_t i, n = sizeof cols / sizeof *cols;
	int csv = e->format == CSV;

	wa_buf_printf(q, "COPY (%sSELECT ", csv ? "" :
	    "SELECT row_to_json(x) FROM (");
	for (i = 0; i < n; i++) {
		/* A CSV row stays one line: titles lose line breaks. */
		if (csv && strcmp(cols[i][0], "error_title") == 0)
			wa_buf_printf(q, ", translate(%s, E'\\r\\n', '  ')"
			    " AS %s", cols[i][1], cols[i][0]);
		else
			wa_buf_printf(q, "%s%s AS %s", i ? ", " : "",
			    cols[i][1], cols[i][0]);
	}
	wa_buf_printf(q, " FROM campaign_recipients WHERE campaign_id = %s",
	    e->id);
	if (e->status != NULL)
		wa_buf_printf(q, " AND status = '%s'", e->status);
	if (e->code != NULL)
		wa_buf_printf(q, " AND error_code = %s", e->code);
	wa_buf_printf(q, " ORDER BY phone%s) TO STDOUT%s", csv ? "" : ") x",
	    csv ? " WITH (FORMAT csv, HEADER)" : "");
}

static void
writeall(const char *s, size_t n)
{
	ssize_t w;

	while (n > 0) {
		if ((w = write(STDOUT_FILENO, s, n)) < 0 && errno == EINTR)
			continue;
		if (w < 0)
			wa_die(EX_IOERR, "write to stdout:");
		s += w;
		n -= w;
	}
}

/*
 * COPY's text format escapes a backslash as two, and would escape control
 * characters; JSON text has none raw, so only "\\" comes, but every
 * escape is undone, to be safe.
 */
static void
unescape(struct wa_buf *b, const char *s, size_t n)
{
	static const char from[] = "bfnrtv", to[] = "\b\f\n\r\t\v";
	const char *q, *p;

	while (n > 0 && (q = memchr(s, '\\', n)) != NULL &&
	    (size_t)(q - s) + 1 < n) {
		wa_buf_add(b, s, q - s);
		p = q[1] != '\0' ? strchr(from, q[1]) : NULL;
		wa_buf_add(b, p != NULL ? &to[p - from] : &q[1], 1);
		n -= q - s + 2;
		s = q + 2;
	}
	wa_buf_add(b, s, n);
}

/* Rows written; exits 69 when Postgres fails, 74 when stdout does. */
static unsigned long long
export(PGconn *conn, const struct export *e)
{
	struct wa_buf q = { 0 }, out = { 0 };
	unsigned long long rows = 0;
	PGresult *res;
	char *row;
	int n;

	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t stop;

	sigaction(SIGINT, &dfl, NULL);
	sigaction(SIGTERM, &dfl, NULL);
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigprocmask(SIG_UNBLOCK, &stop, NULL);
	statement(&q, e);
	res = PQexec(conn, q.s);
	wa_buf_free(&q);
	if (PQresultStatus(res) != PGRES_COPY_OUT) {
		wa_pg_warn(conn, res, "export");
		exit(EX_UNAVAILABLE);
	}
	PQclear(res);
	while ((n = PQgetCopyData(conn, &row, 0)) > 0) {
		if (e->format == CSV)
			wa_buf_add(&out, row, n);
		else
			unescape(&out, row, n);
		PQfreemem(row);
		/* The header is a line of CSV too. */
		rows++;
		if (out.len >= 65536) {
			writeall(out.s, out.len);
			out.len = 0;
		}
	}
	writeall(out.s, out.len);
	wa_buf_free(&out);
	if (e->format == CSV && rows > 0)
		rows--;
	res = n == -1 ? PQgetResult(conn) : NULL;
	if (n != -1 || PQresultStatus(res) != PGRES_COMMAND_OK) {
		wa_pg_warn(conn, res, "export");
		wa_die(EX_UNAVAILABLE, "export of campaign %s cut short after "
		    "%llu rows: the output is incomplete", e->id, rows);
	}
	PQclear(res);
	return rows;
}

int
cmd_export(struct opts *o)
{
	const char *format = o->val[FORMAT];
	struct export e = { o->args[0], o->val[STATUS], o->val[CODE], CSV };
	PGconn *conn = campaign_db(o);

	if (e.status != NULL && !is_status(e.status))
		wa_die(EX_USAGE, "--status is pending, sending, unknown, sent, "
		    "delivered, read, failed, suppressed or expired, not "
		    "'%s'", e.status);
	if (e.code != NULL)
		wa_num(e.code, 0, INT_MAX, "error code");
	if (format != NULL && strcmp(format, "ndjson") == 0)
		e.format = NDJSON;
	else if (format != NULL && strcmp(format, "csv") != 0)
		wa_die(EX_USAGE, "--format is csv or ndjson, not '%s'", format);
	campaign_state(conn, e.id, 0);
	fflush(stdout);
	export(conn, &e);
	return 0;
}
