/*
 * secret.c: a secret setting (the app secret, a token) from the
 * environment variable NAME, else from the file named by NAME_FILE, so
 * that it never appears in argv or in a process listing.
 */
#include <stdlib.h>
#include <string.h>

#include "wa.h"
#include "wa_secret.h"

/*
 * The value (to free), or NULL when neither is set; trailing newlines of
 * the file are dropped. Exits 78 when the file cannot be read.
 */
char *
wa_secret(const char *name)
{
	struct wa_buf path = { 0 }, v = { 0 };
	char chunk[4096];
	const char *p;
	size_t n;
	FILE *f;

	if ((p = getenv(name)) != NULL && *p != '\0')
		return wa_strdup(p);
	wa_buf_printf(&path, "%s_FILE", name);
	p = getenv(path.s);
	wa_buf_free(&path);
	if (p == NULL || *p == '\0')
		return NULL;
	if ((f = fopen(p, "r")) == NULL)
		wa_die(EX_CONFIG, "open %s_FILE:", name);
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		wa_buf_add(&v, chunk, n);
	if (ferror(f))
		wa_die(EX_CONFIG, "read %s_FILE:", name);
	fclose(f);
	while (v.len > 0 && strchr("\r\n", v.s[v.len - 1]) != NULL)
		v.s[--v.len] = '\0';
	return v.s != NULL ? v.s : wa_strdup("");
}
