/*
 * base.c: the base URL of every Cloud API call, read from the
 * environment once per program: wa-send's requests and wa-campaign run
 * --dry-run's show the same URL.
 */
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "api/base.h"

char *
wa_api_base(void)
{
	const char *env = getenv("WA_API_BASE");
	char *b = wa_strdup(env && *env ? env : WA_API_BASE);
	size_t n = strlen(b);

	while (n > 0 && b[n - 1] == '/')
		b[--n] = '\0';
	if (strncmp(b, "https://", 8) != 0 && strncmp(b, "http://", 7) != 0)
		wa_die(EX_CONFIG, "WA_API_BASE must be an http(s) URL");
	return b;
}
