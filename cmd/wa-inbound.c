/*
 * wa-inbound: the messages people send to the business's numbers, as
 * NDJSON on stdout, for a bot or a helpdesk bridge to read from a pipe:
 *
 *	wa-inbound --follow | handler | wa-throttle | wa-send | wa-record
 *
 * Reads inbound_messages (which wa-status-ingest fills) from a durable
 * cursor, inbound_cursors' row of --cursor NAME (default "default"):
 * the messages after it, in the order they were stored, --batch at a
 * time. Writes one object per message (id, wamid, phone, wa_id, bsuid,
 * phone_number_id, type, text, payload, media_id, context, sent_at,
 * received_at, window_closes_at: sent_at + 24 h, the end of the
 * customer-service window it opened, campaign_id, recipient_id, and the
 * message as Meta sent it, raw), flushes them, then moves the cursor
 * past them: at least once, as a message written before a crash and
 * not yet counted is written again after the restart. --from TIME
 * starts at the first message sent at or after TIME (RFC 3339) instead.
 * With --follow it waits for more (looking every --poll-ms), else it
 * exits once caught up. Postgres away is waited for up to --pg-timeout.
 *
 * Exits 0 caught up (without --follow), 75 after SIGINT or SIGTERM (the
 * cursor past what was written), 74 when stdout fails (its reader gone),
 * 69 when Postgres stays away, 64 on a usage error.
 */
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/opts.h"
#include "core/sig.h"
#include "pg/pg.h"
#include "records/stamp.h"

#define UTC(x) "to_char(" x " AT TIME ZONE 'UTC', " \
    "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"

/* The cursor, made at 0 when new ($1: its name). */
static const char *cursor_sql =
    "INSERT INTO inbound_cursors (name) VALUES ($1)"
    " ON CONFLICT (name) DO UPDATE SET name = excluded.name"
    " RETURNING last_id";

/* --from: the cursor just before the first message sent at $2 or later. */
static const char *from_sql =
    "UPDATE inbound_cursors SET last_id = coalesce((SELECT min(id) - 1"
    "  FROM inbound_messages WHERE sent_at >= $2::timestamptz),"
    "  (SELECT coalesce(max(id), 0) FROM inbound_messages)),"
    "  updated_at = now()"
    " WHERE name = $1 RETURNING last_id";

/* The next $2 messages after id $1, one JSON object each. */
static const char *next_sql =
    "SELECT i.id, json_build_object('id', i.id, 'wamid', i.wamid,"
    "  'phone', i.phone, 'wa_id', i.wa_id, 'bsuid', i.bsuid,"
    "  'phone_number_id', i.phone_number_id, 'type', i.type,"
    "  'text', i.body, 'payload', i.payload, 'media_id', i.media_id,"
    "  'context', i.context_wamid, 'sent_at', " UTC("i.sent_at") ","
    "  'received_at', " UTC("i.received_at") ","
    "  'window_closes_at', " UTC("(i.sent_at + interval '24 hours')") ","
    "  'campaign_id', i.campaign_id, 'recipient_id', i.recipient_id,"
    "  'raw', i.raw)"
    " FROM inbound_messages i WHERE i.id > $1::bigint"
    " ORDER BY i.id LIMIT $2::integer";

static const char *move_sql =
    "UPDATE inbound_cursors SET last_id = $2, updated_at = now()"
    " WHERE name = $1";

static void
usage(FILE *f, int status)
{
	fprintf(f, "usage: wa-inbound [-f | --follow] [--cursor name] "
	    "[--from time] [-n | --batch n]\n"
	    "                  [--poll-ms ms] [--pg-timeout secs] "
	    "[-d conninfo]\n"
	    "       wa-inbound -h | --help | --version\n");
	exit(status);
}

int
main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "batch", required_argument, NULL, 'n' },
		{ "cursor", required_argument, NULL, 'C' },
		{ "follow", no_argument, NULL, 'f' },
		{ "from", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ "pg-timeout", required_argument, NULL, 'T' },
		{ "poll-ms", required_argument, NULL, 'p' },
		{ "version", no_argument, NULL, WA_OPT_VERSION },
		{ NULL, 0, NULL, 0 }
	};
	const char *conninfo = NULL, *name = "default", *from = NULL, *p[2];
	char from_stamp[WA_STAMP_MAX], last[32], batch[16] = "500";
	long long timeout = WA_PG_TIMEOUT, poll = 1000;
	struct wa_pg *db;
	PGresult *res;
	int c, follow = 0, i, n;

	wa_prog = "wa-inbound";
	while ((c = getopt_long(argc, argv, "d:fhn:", longs, NULL)) != -1)
		switch (c) {
		case 'C':
			if (*optarg == '\0' || strlen(optarg) > 64)
				wa_die(EX_USAGE, "--cursor: a name of 1 to 64 "
				    "bytes");
			name = optarg;
			break;
		case 'd':
			conninfo = optarg;
			break;
		case 'f':
			follow = 1;
			break;
		case 'F':
			if (wa_stamp(optarg, strlen(optarg),
			    from_stamp) != NULL)
				wa_die(EX_USAGE, "--from is an RFC 3339 time "
				    "such as 2026-12-05T09:00:00Z, not '%s'",
				    optarg);
			from = from_stamp;
			break;
		case 'n':
			snprintf(batch, sizeof batch, "%lld",
			    wa_num(optarg, 1, 100000, "batch"));
			break;
		case 'p':
			poll = wa_num(optarg, 1, 3600000, "poll-ms");
			break;
		case 'T':
			timeout = wa_num(optarg, 0, 86400 * 7, "pg-timeout");
			break;
		default:
			if (!wa_common_opt(c, optarg, usage))
				usage(stderr, EX_USAGE);
		}
	if (optind != argc)
		usage(stderr, EX_USAGE);
	signal(SIGPIPE, SIG_IGN);
	wa_signals();
	db = wa_pg_open(conninfo, timeout);
	wa_pg_patience(db, 1);
	p[0] = name;
	p[1] = from;
	res = wa_pg_need(db, NULL, from != NULL ? from_sql : cursor_sql,
	    from != NULL ? 2 : 1, p);
	if (from != NULL && PQntuples(res) == 0) {
		PQclear(res);
		PQclear(wa_pg_need(db, NULL, cursor_sql, 1, p));
		res = wa_pg_need(db, NULL, from_sql, 2, p);
	}
	snprintf(last, sizeof last, "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	while (!wa_stopping) {
		p[0] = last;
		p[1] = batch;
		res = wa_pg_need(db, NULL, next_sql, 2, p);
		n = PQntuples(res);
		for (i = 0; i < n; i++)
			printf("%s\n", PQgetvalue(res, i, 1));
		if (fflush(stdout) == EOF || ferror(stdout)) {
			PQclear(res);
			wa_die(EX_IOERR, "write to stdout:");
		}
		if (n > 0) {
			snprintf(last, sizeof last, "%s",
			    PQgetvalue(res, n - 1, 0));
			p[0] = name;
			p[1] = last;
			PQclear(wa_pg_need(db, NULL, move_sql, 2, p));
		}
		PQclear(res);
		if (n == atoi(batch))
			continue;
		if (!follow)
			break;
		wa_sleep_ms(poll);
	}
	wa_pg_close(db);
	return wa_stopping ? EX_TEMPFAIL : 0;
}
