/*
 * spool/hmac.h: webhook signatures, X-Hub-Signature-256: "sha256=" and
 * the hex HMAC-SHA256 of the raw body with the app secret (programs using
 * it link libcrypto).
 */
#ifndef WA_SPOOL_HMAC_H
#define WA_SPOOL_HMAC_H

#include <stddef.h>

#define WA_SIGNATURE_LEN 71	/* "sha256=" and 64 hex digits */

/* The header's value for body into sig (WA_SIGNATURE_LEN + 1 bytes). */
void wa_hmac_signature(const char *secret, const void *body, size_t n,
    char *sig);
/* 1 when header is body's signature, in constant time; else 0. */
int wa_hmac_verify(const char *secret, const void *body, size_t n,
    const char *header);

#endif
