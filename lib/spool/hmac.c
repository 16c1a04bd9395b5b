/*
 * hmac.c: the X-Hub-Signature-256 of a webhook body, "sha256=" and the
 * lowercase hex HMAC-SHA256 of the raw bytes under the app secret; and a
 * comparison that takes the same time wherever the strings differ.
 */
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "spool/hmac.h"

/* Writes "sha256=<64 hex>" and a NUL into sig (WA_SIGNATURE_LEN + 1). */
void
wa_hmac_signature(const char *secret, const void *body, size_t n, char *sig)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[32];
	unsigned int len = sizeof md, i;

	HMAC(EVP_sha256(), secret, strlen(secret), body, n, md, &len);
	memcpy(sig, "sha256=", 7);
	for (i = 0; i < 32; i++) {
		sig[7 + 2 * i] = hex[md[i] >> 4];
		sig[8 + 2 * i] = hex[md[i] & 15];
	}
	sig[WA_SIGNATURE_LEN] = '\0';
}

/*
 * Whether header is the right signature of body, its hex digits in
 * either case; constant time.
 */
int
wa_hmac_verify(const char *secret, const void *body, size_t n,
    const char *header)
{
	char want[WA_SIGNATURE_LEN + 1], got[WA_SIGNATURE_LEN];
	int i;

	if (header == NULL || strlen(header) != WA_SIGNATURE_LEN)
		return 0;
	/* Hex digits in either case: the same signature. */
	for (i = 0; i < WA_SIGNATURE_LEN; i++)
		got[i] = i >= 7 && header[i] >= 'A' && header[i] <= 'F' ?
		    header[i] - 'A' + 'a' : header[i];
	wa_hmac_signature(secret, body, n, want);
	return CRYPTO_memcmp(want, got, WA_SIGNATURE_LEN) == 0;
}
