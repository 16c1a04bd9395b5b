/*
 * wa.h: the code every wapipe program shares (prefix wa_).
 *
 * Grouped by the file that defines it. Postgres lives in wa_pg.h and the
 * per-number token bucket in wa_bucket.h, so that a program links only
 * the libraries it uses.
 */
#ifndef WA_H
#define WA_H

#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sysexits.h>

#include <json-c/json.h>

#define WA_VERSION "0.1.0"

/* err.c: messages on stderr, "prog: message", and exits. */
extern const char *wa_prog;
void wa_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void wa_die(int, const char *, ...)
    __attribute__((format(printf, 2, 3), noreturn));
void wa_version(void) __attribute__((noreturn));
long long wa_num(const char *, long long, long long, const char *);
double wa_fnum(const char *, double, double, const char *);
void *wa_alloc(size_t);
void *wa_realloc(void *, size_t);
char *wa_strdup(const char *);

/* buf.c: a growing byte string. */
struct wa_buf {
	char	*s;
	size_t	 len;
	size_t	 cap;
};
void wa_buf_grow(struct wa_buf *, size_t);
void wa_buf_add(struct wa_buf *, const char *, size_t);
void wa_buf_puts(struct wa_buf *, const char *);
void wa_buf_printf(struct wa_buf *, const char *, ...)
    __attribute__((format(printf, 2, 3)));
void wa_buf_json_string(struct wa_buf *, const char *, size_t);
size_t wa_utf8_len(const unsigned char *, size_t);
void wa_buf_free(struct wa_buf *);

/* lines.c: reads lines from a descriptor, counting them for messages. */
enum {
	WA_LINE = 1,		/* a line is ready */
	WA_EOF = 0,		/* no more input */
	WA_AGAIN = -1,		/* nothing within the timeout, or a signal */
	WA_TOOLONG = -2,	/* a line over WA_LINE_MAX was skipped */
	WA_ERROR = -3		/* read error, errno set */
};
#define WA_LINE_MAX (4 << 20)
struct wa_lines {
	int		 fd;
	const char	*name;		/* "<stdin>" or a path, for messages */
	unsigned long	 lineno;	/* number of the line last returned */
	int		 exact;		/* consume no input past that line
					   (past n lines, when set to n) */
	int		 peek[2];	/* scratch pipe for tee(2), or -1 */
	int		 eof;
	int		 skipping;	/* inside a line that is too long */
	char		*buf;
	size_t		 off;		/* start of data not yet returned */
	size_t		 len;		/* end of data consumed from fd */
	size_t		 peeked;	/* bytes after len seen, not consumed */
	size_t		 cap;
};
void wa_lines_init(struct wa_lines *, int, const char *, int);
int wa_lines_next(struct wa_lines *, char **, size_t *, int);
int wa_lines_pending(const struct wa_lines *);
void wa_lines_free(struct wa_lines *);

/* input.c: the record loop of every NDJSON filter. */
struct wa_input {
	struct wa_lines	 lines;
	FILE		*reject;	/* --reject FILE, or NULL */
	unsigned long	 rejected;
	struct json_tokener *tok;
};
struct wa_record {
	struct json_object *obj;	/* the parsed line, owned by the loop */
	char		*line;		/* the raw line, without '\n' */
	size_t		 len;
	unsigned long	 lineno;
};
void wa_input_init(struct wa_input *, int, const char *, int);
void wa_input_reject_file(struct wa_input *, const char *);
int wa_input_next(struct wa_input *, struct wa_record *, int);
void wa_input_reject(struct wa_input *, const struct wa_record *,
    const char *, ...) __attribute__((format(printf, 3, 4)));
int wa_loop(struct wa_input *, int, int (*)(struct wa_record *, void *),
    void *);
void wa_input_free(struct wa_input *);

/* json.c: reading fields, writing lines. */
struct json_object *wa_json_get(struct json_object *, const char *);
const char *wa_json_str(struct json_object *, const char *);
int wa_json_int(struct json_object *, const char *, int64_t *);
const char *wa_json_text(struct json_object *);
void wa_out(const char *, size_t);
void wa_out_add(const char *, size_t);
void wa_out_json(struct json_object *);
void wa_out_flush(void);

/* sig.c: SIGTERM and SIGINT ask the program to stop taking input. */
extern volatile sig_atomic_t wa_stopping;
void wa_signals(void);
void wa_signal(int, void (*)(int));
void wa_signals_allow(int);
int wa_wait(struct pollfd *, int, int);
int wa_sleep_ms(int64_t);
int64_t wa_now_ms(void);
int64_t wa_unix_ms(void);
int64_t wa_now_ns(void);

/* metrics.c: Prometheus text format, written atomically to a file. */
struct wa_metric;
void wa_metrics_open(const char *);
struct wa_metric *wa_counter(const char *, const char *, const char *);
struct wa_metric *wa_gauge(const char *, const char *, const char *);
struct wa_metric *wa_histogram(const char *, const char *, const char *,
    const double *, int);
void wa_metric_add(struct wa_metric *, double);
void wa_metric_set(struct wa_metric *, double);
void wa_metric_observe(struct wa_metric *, double);
void wa_metrics_tick(void);
void wa_metrics_write(void);

/*
 * The biz_opaque_callback_data of every send: "wapipe:<id>:<attempt>",
 * so a status webhook finds its row even when no wamid was recorded.
 */
#define WA_CALLBACK_PREFIX "wapipe:"

/* class.c: the Cloud API's error codes, sorted into what to do. */
enum wa_class {
	WA_SENT,		/* accepted */
	WA_THROUGHPUT,		/* pause the number, retry the row */
	WA_UNAVAILABLE,		/* pause the number longer, retry the row */
	WA_PAIR_RATE,		/* retry this row only, after >= 6 s */
	WA_LATER,		/* retry this row no sooner than 24 h */
	WA_TRANSIENT,		/* retry with backoff */
	WA_PERMANENT,		/* this row failed */
	WA_FATAL,		/* halt the campaign */
	WA_AMBIGUOUS		/* may have been sent: unknown */
};
enum wa_class wa_class_of(long, long);
const char *wa_class_outcome(enum wa_class);
const char *wa_class_name(enum wa_class);
int64_t wa_class_min_delay_ms(enum wa_class);
int64_t wa_backoff_ms(int, int64_t, int64_t);

/* hmac.c: webhook signatures (programs using it link libcrypto). */
#define WA_SIGNATURE_LEN 71	/* "sha256=" and 64 hex digits */
void wa_hmac_signature(const char *, const void *, size_t, char *);
int wa_hmac_verify(const char *, const void *, size_t, const char *);

#endif
