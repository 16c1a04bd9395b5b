/*
 * err.c: messages on stderr in one fixed format, "prog: message", where a
 * format ending in ':' gets ": strerror(errno)" appended; dying with a
 * sysexits code; checked numbers from the command line; allocation that
 * cannot fail silently.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"

const char *wa_prog = "wapipe";

static void
vwarn(const char *fmt, va_list ap)
{
	char msg[2048];
	size_t n;
	int e = errno;

	vsnprintf(msg, sizeof msg, fmt, ap);
	n = strlen(msg);
	if (n > 0 && msg[n - 1] == ':')
		snprintf(msg + n, sizeof msg - n, " %s", strerror(e));
	/* One write, so that lines from several programs never mix. */
	fprintf(stderr, "%s: %s\n", wa_prog, msg);
	fflush(stderr);
	errno = e;
}

void
wa_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
}

void
wa_die(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
	exit(status);
}

void
wa_version(void)
{
	printf("%s (wapipe) %s\n", wa_prog, WA_VERSION);
	exit(0);
}

long long
wa_num(const char *s, long long min, long long max, const char *what)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end != '\0' || v < min || v > max)
		wa_die(EX_USAGE, "%s must be an integer from %lld to %lld, "
		    "not '%s'", what, min, max, s);
	return v;
}

double
wa_fnum(const char *s, double min, double max, const char *what)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end != '\0' || !isfinite(v) ||
	    v < min || v > max)
		wa_die(EX_USAGE, "%s must be a number from %g to %g, not '%s'",
		    what, min, max, s);
	return v;
}

void *
wa_alloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);

	if (p == NULL)
		wa_die(EX_OSERR, "out of memory:");
	return p;
}

void *
wa_realloc(void *p, size_t n)
{
	if ((p = realloc(p, n ? n : 1)) == NULL)
		wa_die(EX_OSERR, "out of memory:");
	return p;
}

char *
wa_strdup(const char *s)
{
	char *p = strdup(s);

	if (p == NULL)
		wa_die(EX_OSERR, "out of memory:");
	return p;
}
