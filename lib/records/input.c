/*
 * input.c: the record loop shared by every NDJSON filter. It reads a
 * line, parses it as a JSON object and hands it to the program; a line
 * that is not one is reported with its number ("wa-x: <stdin>:42: ...")
 * and copied to the --reject file, and counted, never dropped unseen.
 * Blank lines carry no record and are passed over.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/lines.h"
#include "core/sig.h"
#include "records/input.h"

void
wa_input_init(struct wa_input *in, int fd, const char *name, int exact)
{
	memset(in, 0, sizeof *in);
	wa_lines_init(&in->lines, fd, name, exact);
	if ((in->tok = json_tokener_new()) == NULL)
		wa_die(EX_OSERR, "out of memory");
}

/* Appends rejected lines to path, "-" meaning stderr. */
void
wa_input_reject_file(struct wa_input *in, const char *path)
{
	if (strcmp(path, "-") == 0)
		in->reject = stderr;
	else if ((in->reject = fopen(path, "a")) == NULL)
		wa_die(EX_CANTCREAT, "open %s:", path);
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
	if (in->reject != NULL && rec->line != NULL) {
		fwrite(rec->line, 1, rec->len, in->reject);
		putc('\n', in->reject);
		fflush(in->reject);
	}
}

static int
blank(const char *s, size_t n)
{
	while (n > 0 && strchr(" \t\r", s[n - 1]) != NULL)
		n--;
	return n == 0;
}

static const char *
parse(struct wa_input *in, struct wa_record *rec)
{
	enum json_tokener_error e;
	size_t end;

	json_tokener_reset(in->tok);
	rec->obj = json_tokener_parse_ex(in->tok, rec->line, rec->len);
	e = json_tokener_get_error(in->tok);
	if (rec->obj == NULL || e != json_tokener_success) {
		json_object_put(rec->obj);
		rec->obj = NULL;
		if (e == json_tokener_continue || e == json_tokener_success)
			return "not valid JSON: unexpected end of line";
		return json_tokener_error_desc(e);
	}
	end = json_tokener_get_parse_end(in->tok);
	if (!blank(rec->line + end, rec->len - end))
		return "not valid JSON: text after the object";
	if (!json_object_is_type(rec->obj, json_type_object))
		return "not a JSON object";
	return NULL;
}

/*
 * The next record in *rec (zeroed before the first call), parsed; the
 * previous record is freed. Returns WA_LINE, or what
 * wa_lines_next returns (WA_AGAIN after timeout ms, WA_EOF, WA_ERROR).
 * Bad lines are rejected here and never returned.
 */
int
wa_input_next(struct wa_input *in, struct wa_record *rec, int timeout)
{
	const char *why;
	int r;

	json_object_put(rec->obj);
	memset(rec, 0, sizeof *rec);
	for (;;) {
		r = wa_lines_next(&in->lines, &rec->line, &rec->len, timeout);
		rec->lineno = in->lines.lineno;
		if (r == WA_TOOLONG) {
			wa_input_reject(in, rec, "line longer than %d bytes",
			    WA_LINE_MAX);
			continue;
		}
		if (r != WA_LINE)
			return r;
		if (blank(rec->line, rec->len))
			continue;
		if ((why = parse(in, rec)) == NULL)
			return WA_LINE;
		wa_input_reject(in, rec, "%s", why);
		json_object_put(rec->obj);
		rec->obj = NULL;
	}
}

/*
 * Calls fn for every record until the input ends, fn returns -1 or a
 * signal asks to stop. With timeout >= 0, fn is also called with NULL
 * after that many ms without input (to flush a batch by time). Returns 0,
 * or -1 after a read error or fn's -1.
 */
int
wa_loop(struct wa_input *in, int timeout, int (*fn)(struct wa_record *,
    void *), void *arg)
{
	struct wa_record rec = { 0 };
	int r, ret = 0;

	while (!wa_stopping && ret == 0) {
		r = wa_input_next(in, &rec, timeout);
		if (r == WA_LINE)
			ret = fn(&rec, arg);
		else if (r == WA_AGAIN && timeout >= 0 && !wa_stopping)
			ret = fn(NULL, arg);
		else if (r == WA_ERROR) {
			wa_warn("read %s:", in->lines.name);
			ret = -1;
		} else if (r == WA_EOF)
			break;
	}
	json_object_put(rec.obj);
	return ret < 0 ? -1 : 0;
}

void
wa_input_free(struct wa_input *in)
{
	wa_lines_free(&in->lines);
	json_tokener_free(in->tok);
	if (in->reject != NULL && in->reject != stderr)
		fclose(in->reject);
}
