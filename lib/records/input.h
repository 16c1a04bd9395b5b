/*
 * records/input.h: the JSON-line reader every NDJSON program shares. It
 * reads a line, checks its bytes and parses it as one JSON object
 * (records/json.h); a line that is not one is reported with its number
 * ("wa-x: <stdin>:42: not valid JSON (...)") and copied whole to the
 * --reject file, and counted, never dropped unseen.
 */
#ifndef WA_RECORDS_INPUT_H
#define WA_RECORDS_INPUT_H

#include <stddef.h>
#include <stdio.h>

#include <json-c/json.h>

#include "core/lines.h"

struct wa_input {
	struct wa_lines	 lines;
	FILE		*reject;	/* --reject FILE, or NULL */
	const char	*reject_path;
	unsigned long	 rejected;
	struct json_tokener *tok;
	int		 flags;		/* WA_JSON_* checks: WA_JSON_RECORD */
	int		 depth;		/* nesting taken: WA_JSON_DEPTH */
	int		 raw;		/* lines not parsed, bytes checked */
	char		*header;	/* goes before the first reject */
	size_t		 header_len;
	int		 failed;	/* errno of a failed write there */
	char		 why[256];	/* scratch for messages */
};

struct wa_record {
	struct json_object *obj;	/* the parsed line, the reader's */
	char		*line;		/* the raw line, without '\n' */
	size_t		 len;
	unsigned long	 lineno;
};

void wa_input_init(struct wa_input *in, int fd, const char *name, int exact);
void wa_input_reject_file(struct wa_input *in, const char *path);
/* A line (a CSV header) written before the first rejected line. */
void wa_input_reject_header(struct wa_input *in, const char *s, size_t n);
/*
 * The next good record in *rec (zeroed before the first call; the last
 * one is freed). Returns WA_LINE, WA_AGAIN (timeout ms passed, -1: none;
 * or a signal came), WA_EOF, or WA_ERROR once reading or the reject file
 * failed (said on stderr; the caller stops and exits 74).
 */
int wa_input_next(struct wa_input *in, struct wa_record *rec, int timeout);
/*
 * Checks and parses rec->line (from elsewhere: a spool) as wa_input_next
 * does: 1 with rec->obj set, or 0 for a blank or rejected line.
 */
int wa_input_check(struct wa_input *in, struct wa_record *rec);
/*
 * Copies a piece of a line too long to hold (line lineno) to the reject
 * file; the last piece goes as rec->line to wa_input_reject.
 */
void wa_input_reject_part(struct wa_input *in, const char *s, size_t n,
    unsigned long lineno);
/* Reports rec with its number, copies it to the reject file, counts it. */
void wa_input_reject(struct wa_input *in, const struct wa_record *rec,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void wa_input_free(struct wa_input *in);

#endif
