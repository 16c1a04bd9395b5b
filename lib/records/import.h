/*
 * records/import.h: a campaign's recipients from a CSV or NDJSON file,
 * one row at a time: each phone number normalised to E.164 and each
 * row's template parameters turned into the JSON that wa-claim sends. A
 * bad row is rejected with its line number (records/input.h).
 */
#ifndef WA_RECORDS_IMPORT_H
#define WA_RECORDS_IMPORT_H

#include "core/buf.h"
#include "records/input.h"
#include "records/phone.h"

enum { WA_CSV = 1, WA_NDJSON = 2 };

struct wa_rows {
	struct wa_input	 in;		/* lines, --reject file, rejected */
	const char	*cc;		/* --country-code digits, or NULL */
	int		 format;	/* WA_CSV, WA_NDJSON; 0 before a row */
	int		 ncols;		/* CSV: columns in the header */
	int		 phonecol;	/* CSV: which one is "phone" */
	char		*header;	/* CSV: the header line, for rejects */
	int		 header_out;	/* it is in the reject file */
	unsigned long	 lineno;	/* the line of the row returned */
	char		 phone[WA_PHONE_MAX];
	struct wa_buf	 params;	/* template_params, JSON text */
	struct wa_buf	 field;		/* scratch */
};

void wa_rows_init(struct wa_rows *r, int fd, const char *name,
    const char *cc);
/* 1 with the next row in r->phone and r->params, 0 at the end. */
int wa_rows_next(struct wa_rows *r);
void wa_rows_free(struct wa_rows *r);

#endif
