/*
 * records/ratecard.h: a rate card in the layout of the price list Meta
 * publishes for download (a CSV per currency): a title line ("Cost per
 * message in BRL ..."), lines of notes, then the header Market, Currency,
 * Marketing, Utility, Authentication, Authentication-International,
 * Service (a cell may be quoted and hold a line break, as that one does),
 * then a row per market with its prices, "n/a" where a category is not
 * sold. Parsed whole (a card is a few kilobytes), with the line of each
 * row, so that a fault is said by file:line.
 */
#ifndef WA_RECORDS_RATECARD_H
#define WA_RECORDS_RATECARD_H

#include <stddef.h>

/* The categories a card prices, in its columns' order, as Meta's
   webhooks spell them (records/status.c's pricing codes agree). */
#define WA_RATE_CATS 5
extern const char *const wa_rate_cats[WA_RATE_CATS];

#define WA_RATECARD_MAX (1024 * 1024)	/* bytes in a file */
#define WA_RATECARD_ROWS 1000		/* markets */

struct wa_rate_row {
	unsigned long	 line;		/* where the row starts */
	char		*market;	/* trimmed, as written */
	char		*price[WA_RATE_CATS];	/* digits with at most one
					   '.', or NULL: n/a */
};

struct wa_ratecard {
	char		*title;		/* the first line's cells, or NULL */
	char		 currency[4];	/* ISO 4217: "$US" is USD */
	unsigned long	 header;	/* the header's line */
	char		*ignored;	/* columns not read, ", " between, or
					   NULL */
	struct wa_rate_row *rows;
	size_t		 n;
};

/*
 * Parses the n bytes at s into rc: 0, or -1 with why (size bytes) and
 * the line at fault in *line (rc is then freed). Refuses what is not
 * CSV (a quote not closed, text after a closing quote, a NUL, bytes that
 * are not UTF-8), a file without the header or with a column of it
 * missing or twice, a row without a market or a currency, with a price
 * that is not a number (nor n/a) or a currency that is not the others',
 * a market twice, more than WA_RATECARD_ROWS rows.
 */
int wa_ratecard_parse(const char *s, size_t n, struct wa_ratecard *rc,
    char *why, size_t size, unsigned long *line);
void wa_ratecard_free(struct wa_ratecard *rc);

#endif
