/*
 * fakeapi.h: what wa-fake-api answers to a send, as Meta's Cloud API
 * would: validation, the bearer token, throughput and pair-rate limits,
 * scripted and random faults, wamids, the request log and the status
 * webhooks of each accepted message; and, for rehearsals, inbound
 * messages on demand (POST /{version}/{phone_number_id}/inbound).
 * fakeapi.c has no HTTP: it takes a whole request and says what to
 * answer, when, or whether to close the connection instead; fakeserve.c
 * serves that over libmicrohttpd.
 */
#ifndef WA_FAKE_FAKEAPI_H
#define WA_FAKE_FAKEAPI_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "hooks.h"

/* A scripted action, for recipients whose number ends with a suffix. */
enum wa_fake_act {
	WA_FAKE_CODE,		/* an error envelope with code */
	WA_FAKE_HTTP,		/* HTTP status code, a body not from Meta */
	WA_FAKE_HANG,		/* never answer */
	WA_FAKE_DROP,		/* close without answering */
	WA_FAKE_GARBAGE,	/* HTTP 200, a body that is not JSON */
	WA_FAKE_ONCE,		/* the first request fails with code */
	WA_FAKE_SLOW,		/* answer after ms */
	WA_FAKE_FAIL,		/* accepted, then a failed webhook (code) */
	WA_FAKE_LOST,		/* accepted, then close without answering */
	WA_FAKE_MOJIBAKE,	/* code, with a long message in bad UTF-8 */
	WA_FAKE_REPLY		/* accepted; then the person writes text */
};

struct wa_fake_script {
	char		*suffix;
	int		 act;
	long		 arg;		/* the code, status or ms */
	char		*text;		/* reply: what the person writes */
};

struct wa_fake_errate {
	long		 code;
	double		 fraction;
};

struct wa_fake_conf {
	char		*token;		/* bearer token; NULL: any token */
	int64_t		 rate;		/* accepted/s per number, 0: no limit */
	int64_t		 pair_ms;	/* 0: no pair limit */
	int64_t		 latency_ms;
	int64_t		 jitter_ms;
	char		**templates;	/* NULL: every name exists */
	size_t		 ntemplates;
	char		**numbers;	/* phone-number ids; NULL: any id */
	size_t		 nnumbers;
	struct wa_fake_script *scripts;
	size_t		 nscripts;
	struct wa_fake_errate *errates;
	size_t		 nerrates;
	double		 drop_rate;
	uint64_t	 seed;
	int		 seeded;
	const char	*log;		/* NDJSON request log, or NULL */
	const char	*outage;	/* while this file exists, answer its
					   HTTP status (503) to all */
	struct wa_hooks	*hooks;		/* status webhooks, or NULL */
	int64_t		 hook_delay_ms;	/* mean delay between statuses */
	double		 dup_rate;
	double		 reorder_rate;
	double		 fail_rate;
	double		 read_rate;
	const char	*category;	/* of every template: its pricing */
};

void wa_fake_add_script(struct wa_fake_conf *c, const char *arg);
void wa_fake_add_errate(struct wa_fake_conf *c, const char *arg);
void wa_fake_set_templates(struct wa_fake_conf *c, const char *list);
void wa_fake_set_numbers(struct wa_fake_conf *c, const char *list);
/* Exits 64 unless s is a template category the fake can price. */
void wa_fake_set_category(struct wa_fake_conf *c, const char *s);

#define WA_FAKE_BODY_MAX (64 * 1024)

/* How to end the exchange. */
enum wa_fake_how {
	WA_FAKE_ANSWER,		/* http, ctype, body */
	WA_FAKE_NEVER,		/* hold the connection until the end */
	WA_FAKE_CLOSE		/* close it without an answer */
};

struct wa_fake_reply {
	int		 how;
	unsigned int	 http;
	const char	*ctype;
	struct wa_buf	 body;
	int64_t		 delay_ms;	/* answer (or close) after this */
};

struct wa_fake_stats {
	uint64_t	 requests;
	uint64_t	 sent;		/* accepted */
	uint64_t	 refused;	/* answered with an error */
	uint64_t	 other;		/* hang, drop, garbage, HTTP, down */
};

struct wa_fake;
struct wa_fake *wa_fake_new(struct wa_fake_conf *c);
void wa_fake_handle(struct wa_fake *f, const char *method,
    const char *url, const char *auth, const char *body, size_t len,
    struct wa_fake_reply *r);
void wa_fake_reply_free(struct wa_fake_reply *r);
void wa_fake_free(struct wa_fake *f, struct wa_fake_stats *st);

/* fakeserve.c: the HTTP server around it (programs link libmicrohttpd). */
void wa_fake_serve(struct wa_fake *f, const char *listen,
    const char *port_file, int threads);

#endif
