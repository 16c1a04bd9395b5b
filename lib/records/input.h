/*
 * records/input.h: the JSON-line reader every NDJSON program shares. It
 * reads a line, checks it and parses it as one JSON object; a line that is
 * not one is reported with its number ("wa-x: <stdin>:42: ...") and copied
 * whole to the --reject file, and counted, never dropped unseen.
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
	unsigned long	 rejected;
	struct json_tokener *tok;
};

struct wa_record {
	struct json_object *obj;	/* the parsed line, the reader's */
	char		*line;		/* the raw line, without '\n' */
	size_t		 len;
	unsigned long	 lineno;
};

void wa_input_init(struct wa_input *in, int fd, const char *name, int exact);
void wa_input_reject_file(struct wa_input *in, const char *path);
int wa_input_next(struct wa_input *in, struct wa_record *rec, int timeout);
void wa_input_reject(struct wa_input *in, const struct wa_record *rec,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int wa_loop(struct wa_input *in, int timeout,
    int (*fn)(struct wa_record *rec, void *arg), void *arg);
void wa_input_free(struct wa_input *in);

#endif
