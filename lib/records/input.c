/*
 * input.c: the record loop shared by every NDJSON filter. It reads a
 * line, checks its bytes (UTF-8, no NUL) and parses it as one JSON object
 * (records/json.c: RFC 8259, the nesting and the values the later stages
 * take) and hands it to the program; a line that is not one is reported
 * with its number ("wa-x: <stdin>:42: ...") and copied to the --reject
 * file, and counted, never dropped unseen. A line over WA_LINE_MAX bytes
 * is copied there too, whole, as it is read (or, from a spool, as the
 * caller rereads it: wa_input_reject_part). In raw mode (wa-throttle
 * --number) lines are only checked for their bytes. Blank lines (spaces,
 * tabs, '\r') carry no record and are passed over.
 *
 * A reject file that cannot be written stops the reader: the line in hand
 * is said on stderr, and wa_input_next returns WA_ERROR from then on, so
 * that the program ends with 74 rather than drop lines in silence.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/lines.h"
#include "core/sig.h"
#include "records/input.h"
#include "records/json.h"

void
wa_input_init(struct wa_input *in, int fd, const char *name, int exact)
{
	memset(in, 0, sizeof *in);
	wa_lines_init(&in->lines, fd, name, exact);
	in->tok = wa_json_tokener();
	in->flags = WA_JSON_RECORD;
	in->depth = WA_JSON_DEPTH;
}

/* Appends rejected lines to path, "-" meaning stderr. */
void
wa_input_reject_file(struct wa_input *in, const char *path)
{
	in->reject_path = path;
	if (strcmp(path, "-") == 0) {
		in->reject = stderr;
		in->reject_path = "<stderr>";
	} else if ((in->reject = fopen(path, "a")) == NULL)
		wa_die(EX_CANTCREAT, "open %s:", path);
}

void
wa_input_reject_header(struct wa_input *in, const char *s, size_t n)
{
	free(in->header);
	in->header = wa_alloc(n + 1);
	memcpy(in->header, s, n);
	in->header_len = n;
}

static void
broken(struct wa_input *in, unsigned long lineno)
{
	in->failed = errno ? errno : EIO;
	wa_warn("write %s: %s: line %lu of %s is not kept there; stopping",
	    in->reject_path, strerror(in->failed), lineno, in->lines.name);
}

/*
 * Copies n bytes of a rejected line to the reject file, after the header
 * the first time; end: the line's last bytes, then '\n' and a flush.
 */
static void
keep(struct wa_input *in, const char *s, size_t n, int end,
    unsigned long lineno)
{
	FILE *f = in->reject;

	if (f == NULL || in->failed)
		return;
	errno = 0;
	if (in->header != NULL) {
		if (fwrite(in->header, 1, in->header_len, f) !=
		    in->header_len || putc('\n', f) == EOF) {
			broken(in, lineno);
			return;
		}
		free(in->header);
		in->header = NULL;
	}
	if ((n > 0 && fwrite(s, 1, n, f) != n) ||
	    (end && (putc('\n', f) == EOF || fflush(f) == EOF)))
		broken(in, lineno);
}

void
wa_input_reject_part(struct wa_input *in, const char *s, size_t n,
    unsigned long lineno)
{
	keep(in, s, n, 0, lineno);
}

void
wa_input_reject(struct wa_input *in, const struct wa_record *rec,
    const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	wa_warn("%s:%lu: %s", in->lines.name, rec->lineno, msg);
	in->rejected++;
	if (rec->line != NULL)
		keep(in, rec->line, rec->len, 1, rec->lineno);
}

static int
blank(const char *s, size_t n)
{
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' ||
	    s[n - 1] == '\r'))
		n--;
	return n == 0;
}

int
wa_input_check(struct wa_input *in, struct wa_record *rec)
{
	json_object_put(rec->obj);
	rec->obj = NULL;
	if (blank(rec->line, rec->len))
		return 0;
	if (in->raw) {
		if (wa_json_bytes(rec->line, rec->len, in->why,
		    sizeof in->why) == 0)
			return 1;
	} else if ((rec->obj = wa_json_parse(in->tok, rec->line, rec->len,
	    in->flags, in->depth, in->why, sizeof in->why)) != NULL)
		return 1;
	wa_input_reject(in, rec, "%s", in->why);
	return 0;
}

int
wa_input_next(struct wa_input *in, struct wa_record *rec, int timeout)
{
	int r;

	json_object_put(rec->obj);
	memset(rec, 0, sizeof *rec);
	for (;;) {
		if (in->failed)
			return WA_ERROR;
		r = wa_lines_next(&in->lines, &rec->line, &rec->len, timeout);
		rec->lineno = in->lines.lineno;
		switch (r) {
		case WA_PART:
			/* A line too long to hold: kept as it goes. */
			wa_input_reject_part(in, rec->line, rec->len,
			    in->lines.lineno + 1);
			continue;
		case WA_TOOLONG:
			wa_input_reject(in, rec, "line longer than %d bytes",
			    WA_LINE_MAX);
			continue;
		case WA_LINE:
			if (wa_input_check(in, rec))
				return WA_LINE;
			continue;
		case WA_ERROR:
			wa_warn("read %s:", in->lines.name);
			/* FALLTHROUGH */
		default:
			rec->line = NULL;
			rec->len = 0;
			return r;
		}
	}
}

void
wa_input_free(struct wa_input *in)
{
	wa_lines_free(&in->lines);
	json_tokener_free(in->tok);
	free(in->header);
	in->header = NULL;
	if (in->reject != NULL && in->reject != stderr)
		fclose(in->reject);
}
