/*
 * hmac.c: spool/hmac.h, the X-Hub-Signature-256 header. The input is a
 * secret, a header and a body, split at the first two NULs. A signature
 * is "sha256=" and 64 lowercase hex digits; it verifies its body, in
 * upper-case hex too; a header verifies only when it is that very
 * signature but for the case of its hex digits; a body changed by one
 * bit does not verify.
 */
#include <strings.h>

#include "fuzz.h"
#include "spool/hmac.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_copy(data, size), sig[WA_SIGNATURE_LEN + 1];
	char upper[WA_SIGNATURE_LEN + 1];
	const char *secret, *header, *body;
	size_t n, i;
	char *flip;

	secret = s;
	header = s + strlen(s) + 1;
	if ((size_t)(header - s) > size) {
		header = "";
		body = "";
		n = 0;
	} else {
		body = header + strlen(header) + 1;
		if ((size_t)(body - s) > size)
			body = s + size;
		n = size - (size_t)(body - s);
	}
	wa_hmac_signature(secret, body, n, sig);
	PROP(strlen(sig) == WA_SIGNATURE_LEN);
	PROP(strncmp(sig, "sha256=", 7) == 0);
	for (i = 7; i < WA_SIGNATURE_LEN; i++)
		PROP((sig[i] >= '0' && sig[i] <= '9') ||
		    (sig[i] >= 'a' && sig[i] <= 'f'));
	PROP(wa_hmac_verify(secret, body, n, sig) == 1);
	PROP(wa_hmac_verify(secret, body, n, header) ==
	    (strlen(header) == WA_SIGNATURE_LEN &&
	    strncmp(header, "sha256=", 7) == 0 &&
	    strcasecmp(header + 7, sig + 7) == 0));
	for (i = 7; i < WA_SIGNATURE_LEN; i++)
		upper[i] = sig[i] >= 'a' ? sig[i] - 'a' + 'A' : sig[i];
	memcpy(upper, sig, 7);
	upper[WA_SIGNATURE_LEN] = '\0';
	PROP(wa_hmac_verify(secret, body, n, upper) == 1);
	PROP(wa_hmac_verify(secret, body, n, NULL) == 0);
	if (n > 0) {
		flip = malloc(n);
		memcpy(flip, body, n);
		flip[data[0] % n] ^= 1 << (data[size - 1] & 7);
		PROP(wa_hmac_verify(secret, flip, n, sig) == 0);
		free(flip);
	}
	free(s);
	return 0;
}
