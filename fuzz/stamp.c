/*
 * stamp.c: the times an operator writes (records/stamp.h). What
 * wa_stamp accepts, wa_stamp_when takes as an instant and writes the
 * same; what wa_stamp_when writes is accepted again as the same kind
 * and written unchanged; a wall-clock time written out is
 * "YYYY-MM-DDThh:mm:ss" or "hh:mm:ss" exactly.
 */
#include "fuzz.h"
#include "records/stamp.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char a[WA_STAMP_MAX], b[WA_STAMP_MAX], c[WA_STAMP_MAX];
	const char *s = (const char *)data;
	enum wa_when k, k2;

	if (wa_stamp(s, size, a) == NULL) {
		PROP(wa_stamp_when(s, size, b, &k) == NULL);
		PROP(k == WA_WHEN_INSTANT && strcmp(a, b) == 0);
	}
	if (wa_stamp_when(s, size, b, &k) != NULL)
		return 0;
	PROP(strlen(b) < WA_STAMP_MAX);
	PROP(wa_stamp_when(b, strlen(b), c, &k2) == NULL);
	PROP(k2 == k && strcmp(b, c) == 0);
	if (k == WA_WHEN_LOCAL)
		PROP(strlen(b) == 19 && b[10] == 'T' && b[13] == ':' &&
		    b[16] == ':');
	if (k == WA_WHEN_CLOCK)
		PROP(strlen(b) == 8 && b[2] == ':' && b[5] == ':');
	return 0;
}
