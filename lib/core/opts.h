/*
 * core/opts.h: the options every program shares, handled in one place:
 * -h and --help, --version, and for the programs that keep metrics
 * --metrics and --metrics-label. Each program names them in its own
 * struct option table, with these values, beside its own options.
 */
#ifndef WA_CORE_OPTS_H
#define WA_CORE_OPTS_H

#include <stdio.h>

/*
 * getopt_long's values for the shared long options (--help is 'h'):
 * apart from every letter and every enum a program starts at 256.
 */
enum {
	WA_OPT_VERSION = 0x10000,	/* --version */
	WA_OPT_METRICS,			/* --metrics file */
	WA_OPT_LABEL			/* --metrics-label name=value */
};

/*
 * Takes c, what getopt_long returned (arg: its optarg), if it is a
 * shared option: -h and --help call usage(stdout, 0), --version prints
 * the version and exits 0, --metrics and --metrics-label set the metrics
 * file up (exiting 64 on a bad label). Returns 1 if it took c, 0 if c
 * is no shared option (the program's usage error).
 */
int wa_common_opt(int c, const char *arg, void (*usage)(FILE *, int));

#endif
