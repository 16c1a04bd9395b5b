/*
 * phonelist.c: a file of phone numbers read into a Postgres array
 * literal, for wa-campaign requeue --phones and suppress import. Reads
 * the file with the import's reader (records/import.c), so a CSV export
 * or NDJSON rows work as well as one number per line (a byte order mark
 * and '\r' before '\n' passed over, as a spreadsheet saves them); writes
 * bad lines to the reject file with their line number and why.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/err.h"
#include "core/sig.h"
#include "records/import.h"
#include "records/phone.h"
#include "campaign.h"

/* Whether the first line of the file is a header or an NDJSON row. */
static int
headed(const char *s, size_t n)
{
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' ||
	    s[n - 1] == '\r'))
		n--;
	while (n > 0 && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	return memchr(s, ',', n) != NULL || memchr(s, '{', n) != NULL ||
	    (n == 5 && strncasecmp(s, "phone", 5) == 0);
}

unsigned long
phone_list(const char *path, const char *cc, const char *reject,
    const char *what, struct wa_buf *a, unsigned long *bad)
{
	struct wa_rows rows;
	struct wa_record rec = { 0 };
	char why[320], e164[WA_PHONE_MAX];
	const char *err;
	unsigned long n = 0;
	size_t bom;
	int fd = STDIN_FILENO, ret, mode = 0;	/* 1: plain, 2: rows */

	if (strcmp(path, "-") != 0 &&
	    (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		wa_die(EX_NOINPUT, "open %s:", path);
	wa_rows_init(&rows, fd, fd == STDIN_FILENO ? "<stdin>" : path,
	    cc);
	if (reject != NULL)
		wa_input_reject_file(&rows.in, reject);
	wa_pg_array_start(a);
	while ((ret = wa_input_next(&rows.in, &rec, -1)) != WA_EOF) {
		if (ret == WA_ERROR)
			wa_die(EX_IOERR, "%s: %s",
			    rows.in.lines.name, what);
		if (wa_stopping)
			wa_die(EX_TEMPFAIL, "interrupted: %s", what);
		if (ret != WA_LINE)
			continue;
		/* Blank lines and bad bytes were passed over or rejected. */
		if (mode == 0) {
			/* A byte order mark: no part of the first line. */
			bom = wa_utf8_bom(rec.line, rec.len);
			rec.line += bom;
			rec.len -= bom;
		}
		if (mode == 0)
			mode = headed(rec.line, rec.len) ? 2 : 1;
		err = NULL;
		if (mode == 2) {
			ret = wa_rows_take(&rows, rec.line, rec.len, why,
			    sizeof why);
			if (ret == -2)
				wa_die(EX_DATAERR, "%s:%lu: %s",
				    rows.in.lines.name, rec.lineno, why);
			if (ret == 0 && rows.format == WA_CSV)
				wa_input_reject_header(&rows.in, rec.line,
				    rec.len);
			if (ret == 0)
				continue;
			if (ret < 0)
				err = why;
			else
				snprintf(e164, sizeof e164, "%s", rows.phone);
		} else
			err = wa_phone_e164(rec.line, rec.len -
			    (rec.line[rec.len - 1] == '\r'), cc, e164);
		if (err != NULL) {
			wa_input_reject(&rows.in, &rec, "%s", err);
			continue;
		}
		wa_pg_array_str(a, e164);
		n++;
	}
	wa_pg_array_end(a);
	*bad = rows.in.rejected;
	wa_input_free(&rows.in);
	wa_buf_free(&rows.params);
	wa_buf_free(&rows.field);
	if (fd != STDIN_FILENO)
		close(fd);
	return n;
}

