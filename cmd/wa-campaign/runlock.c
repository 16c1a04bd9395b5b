/*
 * runlock.c: one wa-campaign run per campaign. Reads and writes the
 * campaign's row of campaign_runs (Postgres): the run that holds it
 * (host, boot, pid and the process's start time), since when, and its
 * last beat. A row, not a session's advisory lock, so that it holds
 * through a pooler in transaction pooling (every statement stands
 * alone, none prepared). A holder that died is known at once on its own
 * host (no process of that pid and start time), elsewhere when its beat
 * is older than RUNLOCK_STALE seconds. The lock keeps runs from piling
 * up; nothing depends on it for correctness: claims never share a row.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "core/state.h"
#include "core/sig.h"
#include "campaign.h"

#define RUNLOCK_STALE	90	/* s without a beat: the holder is gone */
#define RUNLOCK_BEAT	10	/* s between beats */

/* Takes the row if it is free, stale, or held by the process dead_*. */
static const char *take_sql =
    "INSERT INTO campaign_runs AS r (campaign_id, host, boot_id, pid,"
    "  pid_start) VALUES ($1, $2, $3, $4, $5)"
    " ON CONFLICT (campaign_id) DO UPDATE SET host = excluded.host,"
    "  boot_id = excluded.boot_id, pid = excluded.pid,"
    "  pid_start = excluded.pid_start, since = now(), beat_at = now()"
    " WHERE r.beat_at < now() - make_interval(secs => $6)"
    "  OR (r.host = excluded.host AND r.boot_id = excluded.boot_id"
    "  AND r.pid = $7 AND r.pid_start = $8)"
    " RETURNING true";

static const char *holder_sql =
    "SELECT host, boot_id, pid, pid_start, to_char(since AT TIME ZONE"
    "  'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
    "  extract(epoch FROM now() - beat_at)::bigint"
    " FROM campaign_runs WHERE campaign_id = $1";

#define MINE " WHERE campaign_id = $1 AND host = $2 AND boot_id = $3" \
    " AND pid = $4 AND pid_start = $5"
static const char *beat_sql = "UPDATE campaign_runs SET beat_at = now()"
    MINE;
static const char *free_sql = "DELETE FROM campaign_runs" MINE;

static struct {
	char	 host[HOST_NAME_MAX + 1];
	char	 boot[64];
	char	 pid[24];
	char	 start[24];
	const char	*id;
	int64_t	 beat;		/* wa_now_ms of the last beat */
	int	 held;
} me;

/* The start time of process pid (clock ticks since boot), or -1. */
static long long
started(long long pid)
{
	char path[64], buf[1024], *p;
	long long t = -1;
	FILE *f;
	size_t n;
	int i;

	snprintf(path, sizeof path, "/proc/%lld/stat", pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* Field 22, counted after the command's closing parenthesis. */
	if ((p = strrchr(buf, ')')) == NULL)
		return -1;
	for (i = 2; i < 22 && p != NULL; i++)
		p = strchr(p + 1, ' ');
	if (p != NULL)
		t = strtoll(p + 1, NULL, 10);
	return t;
}

static PGresult *
take(struct wa_pg *db, const char *dead_pid, const char *dead_start)
{
	char stale[16];
	const char *p[] = { me.id, me.host, me.boot, me.pid, me.start,
	    stale, dead_pid, dead_start };

	snprintf(stale, sizeof stale, "%d", RUNLOCK_STALE);
	return wa_pg_need(db, NULL, take_sql, 8, p);
}

int
runlock_take(struct wa_pg *db, const char *id)
{
	const char *p[] = { id };
	PGresult *res, *dead;
	int got;

	me.id = id;
	if (gethostname(me.host, sizeof me.host) != 0)
		snprintf(me.host, sizeof me.host, "?");
	wa_boot_id(me.boot, sizeof me.boot);
	snprintf(me.pid, sizeof me.pid, "%ld", (long)getpid());
	snprintf(me.start, sizeof me.start, "%lld", started(getpid()));
	res = take(db, "0", "0");
	got = PQntuples(res) == 1;
	PQclear(res);
	if (got)
		return me.held = 1, me.beat = wa_now_ms(), 0;
	res = wa_pg_need(db, NULL, holder_sql, 1, p);
	if (PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0),
	    me.host) == 0 && strcmp(PQgetvalue(res, 0, 1), me.boot) == 0 &&
	    started(atoll(PQgetvalue(res, 0, 2))) !=
	    atoll(PQgetvalue(res, 0, 3))) {
		/* Its process is gone: take it from the dead. */
		wa_warn("campaign %s: its last run (pid %s) died; this one "
		    "takes over", id, PQgetvalue(res, 0, 2));
		dead = take(db, PQgetvalue(res, 0, 2), PQgetvalue(res, 0, 3));
		got = PQntuples(dead) == 1;
		PQclear(dead);
		PQclear(res);
		if (got)
			return me.held = 1, me.beat = wa_now_ms(), 0;
		return runlock_take(db, id);
	}
	if ((got = PQntuples(res)) == 1)
		wa_warn("campaign %s is run by wa-campaign run on %s, pid "
		    "%s, since %s (last seen %s s ago): one run per "
		    "campaign", id, PQgetvalue(res, 0, 0),
		    PQgetvalue(res, 0, 2), PQgetvalue(res, 0, 4),
		    PQgetvalue(res, 0, 5));
	PQclear(res);
	/* None, or it left meanwhile: try again. */
	return got ? -1 : runlock_take(db, id);
}

int
runlock_beat(struct wa_pg *db)
{
	const char *p[] = { me.id, me.host, me.boot, me.pid, me.start };
	PGresult *res;

	if (!me.held || wa_now_ms() - me.beat < RUNLOCK_BEAT * 1000)
		return 0;
	/* Postgres away: no beat, and no verdict either. */
	if ((res = wa_pg_try(db, NULL, beat_sql, 5, p)) == NULL)
		return 0;
	me.beat = wa_now_ms();
	if (atoll(PQcmdTuples(res)) == 1) {
		PQclear(res);
		return 0;
	}
	PQclear(res);
	me.held = 0;
	wa_warn("campaign %s: another run took it over (this one was not "
	    "seen for %d s)", me.id, RUNLOCK_STALE);
	return -1;
}

void
runlock_free(struct wa_pg *db)
{
	const char *p[] = { me.id, me.host, me.boot, me.pid, me.start };

	if (me.held)
		PQclear(wa_pg_try(db, NULL, free_sql, 5, p));
	me.held = 0;
}
