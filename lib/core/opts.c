/*
 * opts.c: the options every program shares (-h, --help, --version,
 * --metrics, --metrics-label), handled once for every main's getopt_long
 * loop.
 */
#include <stdio.h>

#include "core/err.h"
#include "core/metrics.h"
#include "core/opts.h"

int
wa_common_opt(int c, const char *arg, void (*usage)(FILE *, int))
{
	switch (c) {
	case 'h':
		usage(stdout, 0);
		break;
	case WA_OPT_VERSION:
		wa_version();
	case WA_OPT_METRICS:
		wa_metrics_open(arg);
		break;
	case WA_OPT_LABEL:
		wa_metrics_label_option(arg);
		break;
	default:
		return 0;
	}
	return 1;
}
