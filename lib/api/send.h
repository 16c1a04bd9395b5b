/*
 * api/send.h: one Cloud API call over libcurl, from a prepared request
 * (records/request.h) to its answer (api/answer.h).
 */
#ifndef WA_API_SEND_H
#define WA_API_SEND_H

#include <curl/curl.h>

#include "api/answer.h"
#include "records/request.h"

struct wa_send {
	struct wa_request rq;
	struct wa_buf	 resp;		/* the answer's body */
	CURL		*easy;		/* kept for the next request */
	size_t		 off;		/* body bytes handed to libcurl */
	int		 resent;	/* libcurl rewound the body to send
					   it again */
};

/* The request headers, with the bearer token; exits 78 without one. */
struct curl_slist *wa_send_headers(void);
/* The handle that POSTs s->rq, timeouts in ms, priv as its PRIVATE. */
CURL *wa_send_start(struct wa_send *s, struct curl_slist *headers,
    long timeout_ms, long connect_ms, void *priv);
/*
 * The answer to the call of s that ended with rc. A request libcurl sent
 * twice is ambiguous unless the answer names the message.
 */
void wa_send_answer(struct wa_answer *a, struct wa_send *s, CURLcode rc);
/* Whether request bytes of s's call in flight may have left this host. */
int wa_send_left(struct wa_send *s);
void wa_send_free(struct wa_send *s);

#endif
