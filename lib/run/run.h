/*
 * run/run.h: wa-campaign run, a campaign to its end: the pipeline
 * wa-claim | wa-throttle | wa-send | wa-record, wa-reconcile rounds, and
 * reruns while retries are due; or, with --dry-run, the request every
 * row would get.
 */
#ifndef WA_RUN_RUN_H
#define WA_RUN_RUN_H

#define EX_UNSETTLED 76	/* rows left that nothing settles in time */

/* argv as wa-campaign got it, its command at argv[optind]: "run". */
int wa_run_main(int argc, char **argv);

#endif
