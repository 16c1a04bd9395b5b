/*
 * run.h: what the files of wa-campaign run share: run.c (the options,
 * the rounds until the campaign ends, the exit status), round.c (one
 * round: its stages started, waited for and judged; the live line) and
 * dryrun.c (--dry-run), due.c (scheduled campaigns, --due). One run's
 * settings and state, in struct run.
 */
#ifndef WA_CAMPAIGN_RUN_H
#define WA_CAMPAIGN_RUN_H

#include <limits.h>

#include "pg/pg.h"
#include "campaign.h"

enum { CLAIM, THROTTLE, SEND, RECORD, RECONCILE, NSTAGE };

#define RUN_IDLE_MS 60000	/* a wait longer than this ends --until-idle */

/* A stage's argv: its program, then what run adds. */
struct args {
	char	**v;
	int	  n;
};

struct run {
	const char	*id;
	const char	*conninfo;
	long long	 pg_timeout;
	long long	 stale, unknown;	/* wa-reconcile's thresholds */
	long long	 settle_max;
	int		 dry;
	int		 idle;		/* --until-idle */
	struct args	 extra[NSTAGE];	/* --claim-opt ... --reconcile-opt */
	char		 dir[PATH_MAX];	/* where wa-campaign is: the stages
					   too */
	int		 tty;		/* stderr a terminal: the live line */
	int		 relay[2];	/* the stages' stderr, on a tty */
	int		 shown;		/* the live line is on the screen */
	struct meter	 meter;
	struct wa_pg	*db;
	int		 lost;		/* another run took the campaign */
};

extern struct run run;

void args_add(struct args *a, const char *s);
void args_free(struct args *a);

/* SIGCHLD's handler: it only wakes run up. */
void round_onchld(int sig);
/*
 * One round, wa-claim --once | wa-throttle | wa-send | wa-record, to its
 * end: -1 to go on, or run's exit status.
 */
int round_run(void);
/* wa-reconcile for the campaign: 0, or its failure as run's status. */
int round_reconcile(void);

/* Clears the live line; draws it (live: only on a terminal). */
void live_clear(void);
void live_draw(int live);

/* After a stop: says so, returns 75, or dies by a second signal. */
int run_stopped(void);
/* Sleeps ms, drawing the live line; -1 if a stop or another run cut it
 * short, and run_cut then says which and gives run's exit status. */
int run_nap(int64_t ms);
int run_cut(void);

/*
 * due.c: a scheduled campaign waited for, checked and started: -1 to go
 * on with the rounds, or run's exit status. --due: every campaign whose
 * time has come run by a child wa-campaign run (the options in argv
 * before nopt, as getopt left them): the worst of their statuses.
 */
int run_scheduled(int nocheck);
int run_due(char **argv, int nopt);

/* --dry-run: the request of every pending row; run's exit status. */
int run_dry(void);

#endif
