/*
 * wa_send.h: one Cloud API send, from request line to result line. The
 * request is checked and turned into the body Meta expects; the answer,
 * or libcurl's failure, is sorted into a wa_class (lib/class.c) and added
 * to the request as its "result".
 */
#ifndef WA_SEND_H
#define WA_SEND_H

#include <curl/curl.h>

#include "wa.h"

#define WA_CALLBACK_MAX 512	/* biz_opaque_callback_data, Meta's limit */
#define WA_API_BASE "https://graph.facebook.com/v21.0"

/* A request ready to POST. */
struct wa_send {
	struct wa_buf	 url;		/* $WA_API_BASE/{number}/messages */
	struct wa_buf	 body;		/* the message object */
	struct wa_buf	 campaign;	/* what a halt stops */
	struct wa_buf	 resp;		/* the answer's body */
	struct wa_buf	 line;		/* the request, for its result */
	char		 number[65];	/* phone_number_id */
	CURL		*easy;		/* kept for the next request */
};

/* What came back, or why nothing did. */
struct wa_answer {
	enum wa_class	 class;
	long		 http;		/* HTTP status, 0 without a response */
	int64_t		 code;		/* error.code, -1 when none */
	int64_t		 subcode;	/* error.error_subcode, -1 when none */
	int		 curl;		/* the CURLcode, 0 if answered */
	int64_t		 latency_ms;
	char		 wamid[192];
	char		 status[48];	/* messages[0].message_status */
	char		 title[256];
};

const char *wa_send_prepare(struct wa_send *, struct json_object *,
    const char *, size_t, const char *);
char *wa_send_base(void);
void wa_send_free(struct wa_send *);
CURL *wa_send_start(struct wa_send *, struct curl_slist *, long, long,
    void *);
void wa_send_dry(struct json_object *, const struct wa_send *);
void wa_answer_http(struct wa_answer *, long, const char *, size_t);
void wa_answer_curl(struct wa_answer *, CURLcode, int);
void wa_answer_done(struct wa_answer *, CURL *, CURLcode,
    const struct wa_buf *);
void wa_answer_unsent(struct wa_answer *, enum wa_class, int64_t,
    const char *);
void wa_answer_out(const struct wa_send *, const struct wa_answer *);
void wa_answer_count(const struct wa_answer *);
struct curl_slist *wa_send_headers(void);

#endif
