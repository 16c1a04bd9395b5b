/*
 * secret.c: reads a secret such as the API token or the app secret from
 * the environment: NAME itself, or the first line of the file named by
 * NAME_FILE (so that it shows in no process listing). Secrets never come
 * from argv and are never printed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/secret.h"

/*
 * The secret for name (e.g. "WA_TOKEN"), malloc'ed, or NULL when neither
 * name nor name_FILE is set; name_FILE wins when both are. name is then
 * wiped from the environment, where /proc/PID/environ would show it.
 * Exits 78 when the file cannot be read or the secret is empty.
 */
char *
wa_secret(const char *name)
{
	struct wa_buf var = { 0 };
	char *v = getenv(name), *line = NULL;
	const char *path;
	size_t cap = 0;
	ssize_t n;
	FILE *f;

	wa_buf_printf(&var, "%s_FILE", name);
	path = getenv(var.s);
	if (path != NULL && *path != '\0') {
		if ((f = fopen(path, "r")) == NULL)
			wa_die(EX_CONFIG, "%s: %s:", var.s, path);
		errno = 0;
		n = getline(&line, &cap, f);
		if (n < 0 && errno != 0)
			wa_die(EX_CONFIG, "%s: %s:", var.s, path);
		fclose(f);
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (n <= 0)
			wa_die(EX_CONFIG, "%s: %s is empty", var.s, path);
	} else if (v != NULL && *v != '\0') {
		line = wa_strdup(v);
	} else if (v != NULL) {
		wa_die(EX_CONFIG, "%s is empty", name);
	}
	if (v != NULL) {
		explicit_bzero(v, strlen(v));
		unsetenv(name);
	}
	wa_buf_free(&var);
	return line;
}
