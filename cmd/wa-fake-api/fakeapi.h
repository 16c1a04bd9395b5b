/*
 * fakeapi.h: what wa-fake-api answers to a send, as Meta's Cloud API
 * would: validation, the bearer token, throughput and pair-rate limits,
 * scripted and random faults, wamids, the request log and the status
 * webhooks of each accepted message; and, for rehearsals, inbound
 * messages on demand (POST /{version}/{phone_number_id}/inbound).
 * fakeapi.c has no HTTP: it takes a whole request and says what to
 * answer, when, or whether to close the connection instead; fakeserve.c
 * serves that over libmicrohttpd; graph.c answers the Graph API's reads
 * (a WABA's templates, a number's fields) and checks a send's template.
 */
#ifndef WA_FAKE_FAKEAPI_H
#define WA_FAKE_FAKEAPI_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "core/buf.h"
#include "records/template.h"
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
	WA_FAKE_REPLY,		/* accepted; then the person writes text */
	WA_FAKE_PERSON		/* accepted; then the person does arg
				   (people.h), bsuid: writes text */
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
	char		**templates;	/* names; NULL: every name exists */
	size_t		 ntemplates;
	struct json_object *tpls;	/* the templates as Graph lists them
					   (graph.c); NULL: the built-in */
	struct wa_template *tread;	/* each of tpls, read */
	size_t		 ntread;
	int		 tpl_sends;	/* sends checked against tpls whole:
					   language, status, parameters */
	char		**numbers;	/* phone-number ids; NULL: any id */
	size_t		 nnumbers;
	struct json_object *nums;	/* their fields (--numbers FILE), or
					   NULL: the default */
	const char	*waba_id;	/* the WhatsApp Business Account */
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
	double		 reply_rate;	/* of the delivered: answered */
	double		 foreign_rate;	/* of the accepted: a status of another
					   app's with the same callback data */
	int		 titleless;	/* errors[] of webhooks: no title */
	int		 old_br;	/* Brazilian wa_ids: no ninth digit */
	const char	*category;	/* of every template: its pricing */
	int64_t		 pause_after;	/* sends of a template before Meta
					   pauses it; 0: never */
};

void wa_fake_add_script(struct wa_fake_conf *c, const char *arg);
void wa_fake_add_errate(struct wa_fake_conf *c, const char *arg);

/*
 * graph.c: --templates and --numbers, each a list (names, ids) or a file
 * (a value with a '/' or a '.': JSON, an array of templates or numbers
 * as Graph gives them, or an object whose "data" is one); exit 64 on
 * one that is not. wa_fake_graph_init fills in the built-in templates
 * when none were given and reads them; wa_fake_graph_free frees them.
 */
void wa_fake_set_templates(struct wa_fake_conf *c, const char *arg);
void wa_fake_set_numbers(struct wa_fake_conf *c, const char *arg);
void wa_fake_graph_init(struct wa_fake_conf *c);
void wa_fake_graph_free(struct wa_fake_conf *c);
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
	uint64_t	 reads;		/* GETs answered */
};

/* One whole request, as fakeserve.c read it. */
struct wa_fake_call {
	const char	*method;
	const char	*url;		/* the path, without the query */
	struct json_object *query;	/* its arguments, decoded, or NULL */
	const char	*host;		/* the Host header, or NULL */
	const char	*auth;		/* the Authorization header, or NULL */
	const char	*body;		/* NULL: larger than WA_FAKE_BODY_MAX */
	size_t		 len;
};

/*
 * graph.c: a GET's answer, for an authorised call to path id (and edge,
 * or NULL): 0 with the answer's JSON in body, or Graph's error code: 100
 * (*noobject set when id names nothing of ours). send_check: the code a
 * send of template tpl (its object) gets at Graph version major (0: none
 * in the path) when --templates named a file, with why in details, or
 * -1 when it passes.
 */
long wa_fake_get(const struct wa_fake_conf *c, const struct wa_fake_call *k,
    const char *id, const char *edge, struct wa_buf *body, int *noobject);
long wa_fake_send_check(const struct wa_fake_conf *c, struct json_object *tpl,
    int major, char *details, size_t size);

struct wa_fake;
struct wa_fake *wa_fake_new(struct wa_fake_conf *c);
void wa_fake_handle(struct wa_fake *f, const struct wa_fake_call *k,
    struct wa_fake_reply *r);
void wa_fake_reply_free(struct wa_fake_reply *r);
void wa_fake_free(struct wa_fake *f, struct wa_fake_stats *st);

/* fakeserve.c: the HTTP server around it (programs link libmicrohttpd). */
void wa_fake_serve(struct wa_fake *f, const char *listen,
    const char *port_file, int threads);

#endif
