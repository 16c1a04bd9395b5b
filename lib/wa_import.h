/*
 * wa_import.h: a campaign's recipients from a CSV or NDJSON file: read
 * one row at a time, each phone number normalised to E.164 and each
 * row's template parameters turned into the JSON that wa-claim sends,
 * then loaded into Postgres whole or not at all.
 */
#ifndef WA_IMPORT_H
#define WA_IMPORT_H

#include "wa_pg.h"

/* phone.c: E.164 numbers. */
#define WA_PHONE_MAX 17		/* '+', at most 15 digits, NUL */
const char *wa_phone_e164(const char *, size_t, const char *, char *);
const char *wa_phone_cc(const char *);

/* import.c: the rows of a CSV or NDJSON file. */
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
void wa_rows_init(struct wa_rows *, int, const char *, const char *);
int wa_rows_next(struct wa_rows *);
void wa_rows_free(struct wa_rows *);

/* load.c: the rows into a campaign, in one transaction. */
unsigned long wa_import_load(PGconn *, const char *, struct wa_rows *);
int wa_import_reopen(PGconn *, const char *);

#endif
