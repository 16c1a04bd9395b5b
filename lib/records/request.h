/*
 * records/request.h: a send request (wa-claim's output, wa-send's input)
 * checked and turned into the template message the Cloud API expects.
 */
#ifndef WA_RECORDS_REQUEST_H
#define WA_RECORDS_REQUEST_H

#include <stddef.h>

#include <json-c/json.h>

#include "core/buf.h"

/*
 * The biz_opaque_callback_data of every send: "wapipe:<tag>:<id>:<attempt>"
 * (the request's "deployment", the database's tag: sql/schema.sql's
 * wapipe_deployment), so a status webhook finds its row even when no
 * wamid was recorded, and a status of another deployment on the same
 * account is known as such; without a deployment "wapipe:<id>:<attempt>",
 * the form of rows sent before the tag. At most WA_CALLBACK_MAX
 * characters (Meta's limit; counted here in bytes, never fewer). The one
 * limit: requests and the fake Cloud API use it.
 */
#define WA_CALLBACK_PREFIX "wapipe:"
#define WA_CALLBACK_MAX 512
#define WA_DEPLOYMENT_MAX 16	/* a tag's characters: 0-9, a-z */

#define WA_NUMBER_ID_MAX 64	/* a phone_number_id's characters */

/*
 * Whether s is a phone_number_id: 1 to WA_NUMBER_ID_MAX letters, digits,
 * '_' or '-' (it names a bucket file and goes into a URL path). The one
 * check: requests, wa-throttle and the buckets use it.
 */
int wa_number_id_valid(const char *s);

/* A request ready to POST. */
struct wa_request {
	struct wa_buf	 url;		/* base/{number}/messages */
	struct wa_buf	 body;		/* the message object */
	struct wa_buf	 campaign;	/* what a halt stops */
	struct wa_buf	 line;		/* the request, for its result */
	char		 number[WA_NUMBER_ID_MAX + 1];	/* phone_number_id */
};

/*
 * Checks request req (the text of line, len bytes) and fills rq for a
 * POST under base. Returns NULL, or why the request cannot be sent. A
 * request belongs to its campaign_id; one without (hand-written) to its
 * number and template, for halts.
 */
const char *wa_request_prepare(struct wa_request *rq, struct json_object *req,
    const char *line, size_t len, const char *base);
/* Adds to req what --dry-run shows: the URL and the body. */
void wa_request_dry(struct json_object *req, const struct wa_request *rq);
void wa_request_free(struct wa_request *rq);

#endif
