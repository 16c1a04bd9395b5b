/*
 * watch.c: wa-campaign watch, and the line of progress run draws too: a
 * campaign's progress from its rows. Reads campaigns and
 * campaign_recipients (one statement a snapshot); writes the line of
 * progress; wa-campaign watch draws it on stdout, in place on a terminal
 * (every second), a line every --interval seconds otherwise. Watch
 * exits 0 when the campaign is completed, 77 when it is cancelled, 75
 * after SIGINT or SIGTERM, 69 when Postgres fails, 64 on a usage error.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "core/sig.h"
#include "campaign.h"

/* Not prepared: run's statements stand alone, as a pooler needs. */
static const char *snap_sql =
    "SELECT c.state, coalesce(c.state_reason, ''), s.*,"
    " CASE WHEN c.state = 'scheduled' THEN greatest(0, (extract(epoch"
    "  FROM c.start_at - now()) * 1000)::bigint) ELSE -1 END"
    " FROM campaigns c,"
    " LATERAL (SELECT count(*),"
    "  count(*) FILTER (WHERE phase = 2),"
    "  count(*) FILTER (WHERE status = 'failed'),"
    "  count(*) FILTER (WHERE status = 'pending'),"
    "  count(*) FILTER (WHERE status = 'pending'"
    "   AND next_attempt_at <= now()),"
    "  count(*) FILTER (WHERE status = 'sending'),"
    "  count(*) FILTER (WHERE status = 'unknown'),"
    "  coalesce((extract(epoch FROM min(next_attempt_at) FILTER (WHERE"
    "   status = 'pending' AND next_attempt_at > now()) - now()) * 1000)"
    "   ::bigint, -1),"
    "  coalesce((extract(epoch FROM now() - min(coalesce(status_at,"
    "   claimed_at)) FILTER (WHERE status = 'unknown')) * 1000)::bigint,"
    "   -1),"
    "  coalesce((extract(epoch FROM now() - min(claimed_at) FILTER (WHERE"
    "   status = 'sending')) * 1000)::bigint, -1),"
    "  count(*) FILTER (WHERE status = 'suppressed'),"
    "  count(*) FILTER (WHERE status = 'expired')"
    "  FROM campaign_recipients WHERE campaign_id = c.id) s"
    " WHERE c.id = $1";

int
snap_take(struct wa_pg *db, const char *id, struct snap *s, int wait)
{
	PGresult *res = wait ? wa_pg_need(db, NULL, snap_sql, 1, &id) :
	    wa_pg_try(db, NULL, snap_sql, 1, &id);
	long long *f[] = { &s->total, &s->done, &s->failed, &s->pending,
	    &s->due, &s->sending, &s->unknown, &s->next_ms, &s->unknown_age,
	    &s->sending_age, &s->suppressed, &s->expired, &s->start_ms };
	size_t i;

	if (res == NULL)
		return -2;
	if (PQntuples(res) != 1) {
		PQclear(res);
		return -1;
	}
	snprintf(s->state, sizeof s->state, "%s", PQgetvalue(res, 0, 0));
	snprintf(s->reason, sizeof s->reason, "%s", PQgetvalue(res, 0, 1));
	for (i = 0; i < sizeof f / sizeof *f; i++)
		*f[i] = atoll(PQgetvalue(res, 0, 2 + i));
	PQclear(res);
	s->at = wa_now_ms();
	s->wall = wa_unix_ms();
	return 0;
}

void
meter_init(struct meter *m, const struct snap *s)
{
	memset(m, 0, sizeof *m);
	m->t0 = s->at;
	m->done0 = s->done;
}

/* A duration for people: "42 s", "12 min", "3 h 5 min", "2 d 4 h". */
void
campaign_span(char *buf, size_t size, long long s)
{
	if (s < 120)
		snprintf(buf, size, "%lld s", s);
	else if (s < 3600)
		snprintf(buf, size, "%lld min", s / 60);
	else if (s < 86400)
		snprintf(buf, size, "%lld h %lld min", s / 3600, s / 60 % 60);
	else
		snprintf(buf, size, "%lld d %lld h", s / 86400, s / 3600 % 24);
}

void
meter_line(struct meter *m, const char *id, const struct snap *s,
    char *buf, size_t size)
{
	char eta[32], when[40];
	double now = 0, avg = 0, rate;
	long long left = s->total - s->done;
	int old;
	size_t n;

	/* Scheduled: when it starts, counting down. */
	if (s->start_ms >= 0) {
		campaign_span(eta, sizeof eta, (s->start_ms + 999) / 1000);
		snprintf(buf, size, "campaign %s: %lld rows; starts at %s, in "
		    "%s [scheduled]", id, s->total, wa_rfc3339(when,
		    sizeof when, (s->wall + s->start_ms + 500) / 1000 * 1000),
		    eta);
		return;
	}
	/*
	 * The oldest sample of the ring no older than ~10 s gives "now";
	 * one within 500 ms of the last is not kept (it would say 0/s).
	 */
	if (m->n == 0 || s->at - m->ring[(m->head + METER_N - 1) %
	    METER_N].at >= 500) {
		m->ring[m->head].at = s->at;
		m->ring[m->head].done = s->done;
		m->head = (m->head + 1) % METER_N;
		if (m->n < METER_N)
			m->n++;
	}
	old = (m->head - m->n + METER_N) % METER_N;
	while (m->n > 2 && s->at - m->ring[old].at > 10000) {
		old = (old + 1) % METER_N;
		m->n--;
	}
	if (s->at > m->ring[old].at)
		now = (s->done - m->ring[old].done) * 1000.0 /
		    (s->at - m->ring[old].at);
	if (s->at > m->t0)
		avg = (s->done - m->done0) * 1000.0 / (s->at - m->t0);
	if (now < 0)
		now = 0;
	if (avg < 0)
		avg = 0;
	rate = now > 0 ? now : avg;
	if (left <= 0)
		snprintf(eta, sizeof eta, "done");
	else if (s->pending - s->due >= left)
		snprintf(eta, sizeof eta, "ETA: the retries' time");
	else if (rate > 0) {
		memcpy(eta, "ETA ", 4);
		campaign_span(eta + 4, sizeof eta - 4,
		    (long long)(left / rate + 0.5));
	} else
		snprintf(eta, sizeof eta, "ETA unknown");
	snprintf(buf, size, "campaign %s: %lld/%lld (%.1f%%), %.0f/s now, "
	    "%.0f/s average, %s", id, s->done, s->total,
	    s->total > 0 ? s->done * 100.0 / s->total : 100.0, now, avg, eta);
	n = strlen(buf);
	if (s->pending - s->due > 0 && s->next_ms >= 0 && n < size)
		snprintf(buf + n, size - n, "; %lld retr%s pending, the next "
		    "at %s", s->pending - s->due, s->pending - s->due == 1 ?
		    "y" : "ies", wa_rfc3339(when, sizeof when,
		    s->wall + s->next_ms));
	n = strlen(buf);
	if (s->unknown > 0 && n < size)
		snprintf(buf + n, size - n, "; %lld unknown", s->unknown);
	n = strlen(buf);
	if (strcmp(s->state, "running") != 0 && n < size)
		snprintf(buf + n, size - n, " [%s]", s->state);
}

int
cmd_watch(struct opts *o)
{
	static const struct option longs[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "interval", required_argument, NULL, 'i' },
		{ "pg-timeout", required_argument, NULL, 'T' },
		{ NULL, 0, NULL, 0 }
	};
	const char *conninfo = o->conninfo, *id;
	long long interval = 10, timeout = WA_PG_TIMEOUT;
	struct snap s;
	struct meter m;
	struct wa_pg *db;
	char line[512];
	int c, tty, status = -1;
	int64_t last = 0;

	optind = 1;
	while ((c = getopt_long(o->argc, o->argv, "d:h", longs, NULL)) != -1)
		switch (c) {
		case 'd':
			conninfo = optarg;
			break;
		case 'h':
			campaign_usage("watch", stdout, 0);
			break;
		case 'i':
			interval = wa_num(optarg, 1, 86400, "interval");
			break;
		case 'T':
			timeout = wa_num(optarg, 0, 86400 * 7, "pg-timeout");
			break;
		default:
			campaign_usage("watch", stderr, EX_USAGE);
		}
	/* argv[optind] is "watch" (the command), then the id. */
	if (o->argc - optind != 2 || strcmp(o->argv[optind], "watch") != 0)
		campaign_usage("watch", stderr, EX_USAGE);
	id = o->argv[optind + 1];
	wa_num(id, 1, LLONG_MAX, "campaign id");
	tty = isatty(STDOUT_FILENO);
	wa_signals();
	db = wa_pg_open(conninfo, timeout);
	wa_pg_patience(db, 1);
	if (snap_take(db, id, &s, 1) < 0)
		wa_die(EX_USAGE, "no campaign %s", id);
	meter_init(&m, &s);
	while (status < 0) {
		if (strcmp(s.state, "completed") == 0)
			status = 0;
		else if (strcmp(s.state, "cancelled") == 0)
			status = EX_NOPERM;
		meter_line(&m, id, &s, line, sizeof line);
		if (tty)
			printf("\r\033[K%s%s", line, status >= 0 ? "\n" : "");
		else if (status >= 0 || s.at - last >= interval * 1000) {
			printf("%s\n", line);
			last = s.at;
		}
		if (fflush(stdout) == EOF)
			wa_die(EX_IOERR, "write to stdout:");
		if (status >= 0)
			break;
		wa_sleep_ms(1000);
		if (wa_stopping) {
			if (tty)
				printf("\n");
			status = EX_TEMPFAIL;
			break;
		}
		if (snap_take(db, id, &s, 1) < 0)
			wa_die(EX_USAGE, "campaign %s is gone", id);
	}
	wa_pg_close(db);
	return status;
}
