/*
 * run/progress.h: where a campaign stands, read from the table in one
 * statement (a snapshot), and the one line of progress that wa-campaign
 * run and watch draw from successive snapshots.
 */
#ifndef WA_RUN_PROGRESS_H
#define WA_RUN_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

#include "pg/pg.h"

struct wa_snap {
	char		 state[16];	/* draft, running, paused, ... */
	char		 reason[256];	/* state_reason, or "" */
	long long	 total;		/* rows */
	long long	 done;		/* settled: phase 2 */
	long long	 failed;
	long long	 pending;	/* of which due now: due */
	long long	 due;
	long long	 sending;
	long long	 unknown;
	long long	 next_ms;	/* to the next retry not due, or -1 */
	long long	 unknown_age;	/* ms since the oldest unknown, or
					   -1 */
	long long	 sending_age;	/* ms since the oldest claim, or -1 */
	int64_t		 at;		/* when taken (wa_now_ms) */
	int64_t		 wall;		/* the same, wall clock (unix ms) */
};

/*
 * Fills s for campaign id; -1 when there is no such campaign. With wait,
 * waits for Postgres up to its timeout (then exits 69); without, -2 at
 * once while it is down.
 */
int wa_snap_take(struct wa_pg *db, const char *id, struct wa_snap *s,
    int wait);

#define WA_METER_N 16

/* Successive snapshots: the rate now (the last ~10 s) and on average. */
struct wa_meter {
	int64_t		 t0;
	long long	 done0;
	int		 n, head;
	struct {
		int64_t		 at;
		long long	 done;
	}		 ring[WA_METER_N];
};

void wa_meter_init(struct wa_meter *m, const struct wa_snap *s);
/*
 * Adds s to m and writes the line into buf: "campaign 42: 1200/3000
 * (40.0%), 65/s now, 61/s average, ETA 28 s; 3 retries pending, the
 * next at 2026-...Z".
 */
void wa_meter_line(struct wa_meter *m, const char *id,
    const struct wa_snap *s, char *buf, size_t size);

/* wa-campaign watch: polls the table and draws the line until the end. */
int wa_watch_main(int argc, char **argv);

#endif
