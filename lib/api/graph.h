/*
 * api/graph.h: the bearer token every Cloud API call carries, and the
 * Graph API's reads beside a send: a GET of an object or an edge (a
 * WhatsApp Business Account's message templates, a phone number's
 * fields) under the base of api/base.h.
 */
#ifndef WA_API_GRAPH_H
#define WA_API_GRAPH_H

#include <stddef.h>

#include <curl/curl.h>
#include <json-c/json.h>

/*
 * h with "Authorization: Bearer" and the token of WA_TOKEN_FILE or
 * WA_TOKEN (core/secret.h) appended; exits 78 without one or with one
 * that holds a space or a control character. The token is never
 * printed.
 */
struct curl_slist *wa_api_auth(struct curl_slist *h);

/*
 * GETs path under the base, its query made of args (a key, its value,
 * ...; NULL ends them; each value escaped here). Returns 0 with the
 * answer, a JSON object, in *out (the caller's), or -1 with why (size
 * bytes): not reached or timed out (nothing answered), an HTTP error
 * (with Graph's code and message when its body has them), or a body
 * that is not one JSON object.
 */
int wa_graph_get(const char *path, const char *const *args,
    struct json_object **out, char *why, size_t size);

#endif
