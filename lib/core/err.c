/*
 * err.c: messages on stderr in one fixed format, "prog: message", where a
 * format ending in ':' gets ": strerror(errno)" appended; dying with a
 * sysexits code; checked numbers from the command line; allocation that
 * cannot fail silently. When stderr is not a terminal (a log file, the
 * journal, a pipe), each line starts with its time in RFC 3339, UTC, to
 * the millisecond; WA_LOG_TIME=1 or 0 says so or not regardless.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "core/err.h"

const char *wa_prog = "wapipe";

char *
wa_rfc3339(char *buf, size_t size, long long unix_ms)
{
	time_t t = unix_ms / 1000;
	struct tm tm;
	char s[24];

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(s, sizeof s, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		snprintf(s, sizeof s, "@%lld", (long long)t);
	snprintf(buf, size, "%s.%03lldZ", s, unix_ms % 1000);
	return buf;
}

int
wa_log_time(int fd)
{
	static int env = -2;
	const char *e;

	if (env == -2) {
		e = getenv("WA_LOG_TIME");
		env = e != NULL && (*e == '0' || *e == '1') && e[1] == '\0' ?
		    *e == '1' : -1;
	}
	return env >= 0 ? env : !isatty(fd);
}

char *
wa_rfc3339_now(char *buf, size_t size)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return wa_rfc3339(buf, size, (long long)tv.tv_sec * 1000 +
	    tv.tv_usec / 1000);
}

/* Whether messages start with the time: once, from WA_LOG_TIME or stderr. */
static int
stamped(void)
{
	static int on = -1;

	if (on < 0)
		on = wa_log_time(STDERR_FILENO);
	return on;
}

static void
vwarn(const char *fmt, va_list ap)
{
	char msg[2048], when[40];
	size_t n;
	int e = errno;

	vsnprintf(msg, sizeof msg, fmt, ap);
	n = strlen(msg);
	if (n > 0 && msg[n - 1] == ':')
		snprintf(msg + n, sizeof msg - n, " %s", strerror(e));
	/* One write, so that lines from several programs never mix. */
	*when = '\0';
	if (stamped()) {
		wa_rfc3339_now(when, sizeof when - 1);
		strcat(when, " ");
	}
	fprintf(stderr, "%s%s: %s\n", when, wa_prog, msg);
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
	printf("%s (wapipe) %s\nGraph API %s by default\n", wa_prog,
	    WA_VERSION, WA_GRAPH_API_VERSION);
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
