/*
 * records/import.h: a campaign's recipients from a CSV or NDJSON file,
 * one row at a time: each phone number normalised to E.164 (and, for
 * an import, checked against the numbering plans and given its country
 * and time zone: records/numplan.h), its expiry read, and each row's template
 * parameters turned into the JSON that wa-claim sends. A bad row is
 * rejected with its line number (records/input.h).
 */
#ifndef WA_RECORDS_IMPORT_H
#define WA_RECORDS_IMPORT_H

#include "core/buf.h"
#include "records/input.h"
#include "records/json.h"
#include "records/phone.h"
#include "records/stamp.h"

enum { WA_CSV = 1, WA_NDJSON = 2 };

/*
 * How deep an NDJSON row may nest: its components go one level deeper
 * into a send request, which every stage takes up to WA_JSON_DEPTH.
 */
#define WA_IMPORT_DEPTH (WA_JSON_DEPTH - 1)

struct wa_rows {
	struct wa_input	 in;		/* lines, --reject file, rejected */
	const char	*cc;		/* --country-code digits, or NULL */
	int		 format;	/* WA_CSV, WA_NDJSON; 0 before a row */
	int		 ncols;		/* CSV: columns in the header */
	int		 phonecol;	/* CSV: which one is "phone" */
	int		 expcol;	/* CSV: "expires_at", or -1 */
	int		 plan;		/* check numbers against the plans */
	/* A number not to take: why (the row is rejected), or NULL. */
	const char	*(*suppressed)(const char *phone, void *arg);
	void		*suppressed_arg;
	unsigned long	 nsuppressed;	/* rows rejected so (in.rejected) */
	unsigned long	 lineno;	/* the line of the row returned */
	char		 phone[WA_PHONE_MAX];
	const char	*tz;		/* its zone (plan set), or NULL */
	char		 country[4];	/* its region (plan set: "IT", "001"
					   for none), or "" */
	char		 expires[WA_STAMP_MAX];	/* "": none */
	struct wa_buf	 params;	/* template_params, JSON text */
	struct wa_buf	 field;		/* scratch */
};

void wa_rows_init(struct wa_rows *r, int fd, const char *name,
    const char *cc);
/*
 * The next good row in r->phone, r->tz, r->expires and r->params:
 * WA_LINE; or WA_EOF, WA_ERROR (said on stderr), WA_AGAIN (a signal
 * came). A row whose number r->suppressed names is rejected with that
 * reason, and counted in r->nsuppressed.
 */
int wa_rows_next(struct wa_rows *r);
/*
 * One line, n bytes at s without '\n', taken as a row: r->format is set
 * by the first. Returns 1 with the row (as wa_rows_next), 0 for the CSV
 * header or a blank line, or -1 with why (size bytes).
 */
int wa_rows_take(struct wa_rows *r, const char *s, size_t n, char *why,
    size_t size);
void wa_rows_free(struct wa_rows *r);

#endif
