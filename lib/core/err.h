/*
 * core/err.h: messages on stderr ("prog: message", after the time when
 * stderr is not a terminal), exits with a sysexits
 * code, checked numbers from the command line, allocation that cannot
 * fail silently.
 */
#ifndef WA_CORE_ERR_H
#define WA_CORE_ERR_H

#include <stddef.h>
#include <sysexits.h>

/*
 * wapipe's own codes, past sysexits' (wapipe(7) has the whole table):
 * a halt, where a person must act before anything more is sent, and a
 * campaign another wa-campaign run already runs.
 */
#define WA_EX_HALTED	79
#define WA_EX_BUSY	80

/*
 * WA_VERSION, the release, comes from the Makefile's VERSION (-D), and
 * WA_GRAPH_API_VERSION, the Graph API version spoken by default, from
 * its GRAPH_API_VERSION: --version shows both.
 */

extern const char *wa_prog;	/* set by main: the name in every message */

/* A format ending in ':' gets ": strerror(errno)" appended. */
void wa_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void wa_die(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));
void wa_version(void) __attribute__((noreturn));
/* unix_ms as RFC 3339 in UTC, "2026-12-03T01:02:03.456Z"; returns buf. */
char *wa_rfc3339(char *buf, size_t size, long long unix_ms);
char *wa_rfc3339_now(char *buf, size_t size);
/*
 * Whether lines written to fd start with the time: WA_LOG_TIME=1 or 0
 * says, else whether fd is not a terminal.
 */
int wa_log_time(int fd);

/* An option's value in [min, max], or exit 64 naming what it is. */
long long wa_num(const char *s, long long min, long long max,
    const char *what);
double wa_fnum(const char *s, double min, double max, const char *what);

/* Zeroed memory, or exit 71. */
void *wa_alloc(size_t n);
void *wa_realloc(void *p, size_t n);
char *wa_strdup(const char *s);

#endif
