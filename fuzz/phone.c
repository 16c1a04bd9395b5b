/*
 * phone.c: records/phone.h's E.164 normaliser. The first byte picks the
 * country code (none, or one from a short list); the rest is the number.
 * What it takes comes out as '+' and 7 to 15 digits, not starting with
 * 0, that wa_phone_is_e164 takes and that normalises to itself; what it
 * refuses, it says why. Then the numbering plans (records/numplan.h):
 * a number they take has a region of two capitals (or "001"), a type
 * and at most one zone, a name COPY can carry; one they refuse, why.
 */
#include "fuzz.h"
#include "records/numplan.h"
#include "records/phone.h"

/* What import's plan check and zone make of a number in E.164. */
static void
plan(const char *e164)
{
	struct wa_numplan np;
	char why[160];
	const char *z;

	memset(why, 0, sizeof why);
	if (wa_numplan_check(e164, &np, WA_NUMPLAN_TYPE, why, sizeof why) < 0) {
		PROP(why[0] != '\0' && memchr(why, '\0', sizeof why));
		return;
	}
	PROP(strcmp(np.region, "001") == 0 || (strlen(np.region) == 2 &&
	    np.region[0] >= 'A' && np.region[0] <= 'Z' &&
	    np.region[1] >= 'A' && np.region[1] <= 'Z'));
	PROP(np.type != NULL && *np.type != '\0');
	if ((z = wa_zone_of(np.region)) != NULL)
		PROP(*z != '\0' && strspn(z, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "abcdefghijklmnopqrstuvwxyz0123456789/_+-") == strlen(z));
}

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
	static const char *ccs[] = { NULL, "1", "44", "351", "+49", "0",
	    "1234", "", "+", "7a" };
	char out[WA_PHONE_MAX + 8], again[WA_PHONE_MAX + 8], *s;
	const char *cc, *why;
	size_t n, i;

	if (size < 1)
		return 0;
	cc = ccs[data[0] % (sizeof ccs / sizeof ccs[0])];
	if (cc != NULL)
		cc = wa_phone_cc(cc);
	/* wa_phone_cc takes only 1 to 3 digits not starting with 0. */
	if (cc != NULL)
		PROP(strlen(cc) >= 1 && strlen(cc) <= 3 && cc[0] != '0' &&
		    strspn(cc, "0123456789") == strlen(cc));
	s = fuzz_copy(data + 1, size - 1);
	n = size - 1;
	memset(out, 0x55, sizeof out);
	why = wa_phone_e164(s, n, cc, out);
	if (why != NULL) {
		PROP(*why != '\0');
		free(s);
		return 0;
	}
	/* The output stays inside WA_PHONE_MAX bytes. */
	PROP(memchr(out, '\0', WA_PHONE_MAX) != NULL);
	n = strlen(out);
	PROP(n >= 8 && n <= 16 && out[0] == '+' && out[1] != '0');
	for (i = 1; i < n; i++)
		PROP(out[i] >= '0' && out[i] <= '9');
	PROP(wa_phone_is_e164(out));
	plan(out);
	/* Idempotent, whatever the country code. */
	PROP(wa_phone_e164(out, n, NULL, again) == NULL);
	PROP(strcmp(out, again) == 0);
	PROP(wa_phone_e164(out, n, "44", again) == NULL);
	PROP(strcmp(out, again) == 0);
	/* Written in E.164 already, the input is that very number. */
	if (s[0] == '+' && strlen(s) == size - 1 && wa_phone_is_e164(s))
		PROP(strcmp(s, out) == 0);
	free(s);
	return 0;
}
