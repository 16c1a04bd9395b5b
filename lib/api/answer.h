/*
 * api/answer.h: what came back from a send, sorted into a wa_class, and
 * written out as the request's "result" (DESIGN.md: the send result).
 */
#ifndef WA_API_ANSWER_H
#define WA_API_ANSWER_H

#include <stdint.h>

#include "api/class.h"
#include "records/request.h"

struct wa_answer {
	enum wa_class	 class;
	long		 http;		/* HTTP status, 0 without a response */
	int64_t		 code;		/* error.code, -1 when none */
	int64_t		 subcode;	/* error.error_subcode, -1 when none */
	int		 curl;		/* the CURLcode, 0 if answered */
	int64_t		 latency_ms;
	char		 wamid[192];
	char		 wa_id[48];	/* contacts[0].wa_id, or "" */
	char		 status[48];	/* messages[0].message_status */
	char		 title[256];
};

/* An HTTP answer: status http, its body of len bytes. */
void wa_answer_http(struct wa_answer *a, long http, const char *body,
    size_t len);
/*
 * src as valid UTF-8 (U+FFFD for each bad byte) in dst of size bytes,
 * cut on a character boundary; returns its length.
 */
size_t wa_answer_text(char *dst, size_t size, const char *src);
/* Sets a's title from fmt, valid UTF-8 cut on a boundary. */
void wa_answer_title(struct wa_answer *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Not sent, of class c (a halt, a stop), for why; code or -1. */
void wa_answer_unsent(struct wa_answer *a, enum wa_class c, int64_t code,
    const char *why);
/* Queues (core/out.h) the request's line with a's "result" added. */
void wa_answer_out(const struct wa_request *rq, const struct wa_answer *a);
/* Counts a in the metrics: outcome, error code, latency. */
void wa_answer_count(const struct wa_answer *a);

#endif
