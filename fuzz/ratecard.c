/*
 * ratecard.c: records/ratecard.h's parser of Meta's rate card (wa-campaign
 * rates load). What it takes has a currency of three capitals, at least
 * one market, each named (no white space around it) once without regard
 * to case, on a line of the file, in order, after the header's; each
 * price is digits with at most one point inside, or n/a. Written back as
 * CSV in the card's layout (a quoted header cell with a line break, the
 * markets quoted, their quotes doubled), it parses again to the same
 * markets and prices: the quoting is read as written. What it refuses,
 * it says why, at a line of the file.
 */
#include <strings.h>

#include "fuzz.h"
#include "records/ratecard.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	return 0;
}

/* Whether p is digits, then at most one point followed by digits. */
static int
decimal(const char *p)
{
	size_t d = strspn(p, "0123456789");

	if (d == 0)
		return 0;
	if (p[d] == '\0')
		return 1;
	return p[d] == '.' && p[d + 1] != '\0' &&
	    strspn(p + d + 1, "0123456789") == strlen(p + d + 1);
}

/* rc written back as a card: a title, the header, a row per market. */
static void
emit(const struct wa_ratecard *rc, struct wa_buf *b)
{
	const char *m;
	size_t i, k;

	wa_buf_puts(b, "Cost per message (written back),,,\n\"a note, with "
	    "a comma\"\nMarket,Currency,Marketing,Utility,Authentication,"
	    "\"Authentication-\r\nInternational\",Service\r\n");
	for (i = 0; i < rc->n; i++) {
		wa_buf_add(b, "\"", 1);
		for (m = rc->rows[i].market; *m != '\0'; m++) {
			wa_buf_add(b, m, 1);
			if (*m == '"')
				wa_buf_add(b, "\"", 1);
		}
		wa_buf_printf(b, "\",%s", rc->currency);
		for (k = 0; k < WA_RATE_CATS; k++)
			wa_buf_printf(b, ",%s", rc->rows[i].price[k] ?
			    rc->rows[i].price[k] : "n/a");
		wa_buf_puts(b, i % 2 ? "\n" : "\r\n");
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wa_ratecard rc, again;
	struct wa_buf b = { 0 };
	unsigned long line = 0, lines = 1, last;
	char why[512];
	size_t i, j, k;

	for (i = 0; i < size; i++)
		lines += data[i] == '\n';
	memset(why, 0, sizeof why);
	if (wa_ratecard_parse((const char *)data, size, &rc, why, sizeof why,
	    &line) < 0) {
		PROP(why[0] != '\0' && memchr(why, '\0', sizeof why));
		PROP(line >= 1 && line <= lines);
		PROP(rc.n == 0 && rc.rows == NULL && rc.title == NULL);
		return 0;
	}
	PROP(rc.n >= 1 && rc.n <= WA_RATECARD_ROWS);
	PROP(strlen(rc.currency) == 3 && strspn(rc.currency,
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == 3);
	PROP(rc.header >= 1 && rc.header < lines);
	last = rc.header;
	for (i = 0; i < rc.n; i++) {
		PROP(rc.rows[i].line > last && rc.rows[i].line <= lines);
		last = rc.rows[i].line;
		PROP(rc.rows[i].market[0] != '\0');
		PROP(strchr(" \t\r\n", rc.rows[i].market[0]) == NULL);
		PROP(strchr(" \t\r\n", rc.rows[i].market[strlen(
		    rc.rows[i].market) - 1]) == NULL);
		PROP(wa_utf8_valid(rc.rows[i].market,
		    strlen(rc.rows[i].market)));
		for (j = 0; j < i; j++)
			PROP(strcasecmp(rc.rows[i].market,
			    rc.rows[j].market) != 0);
		for (k = 0; k < WA_RATE_CATS; k++)
			PROP(rc.rows[i].price[k] == NULL ||
			    decimal(rc.rows[i].price[k]));
	}
	emit(&rc, &b);
	PROP(wa_ratecard_parse(b.s, b.len, &again, why, sizeof why,
	    &line) == 0);
	PROP(again.n == rc.n && strcmp(again.currency, rc.currency) == 0);
	PROP(again.header == 3 && again.ignored == NULL);
	for (i = 0; i < rc.n; i++) {
		PROP(strcmp(again.rows[i].market, rc.rows[i].market) == 0);
		for (k = 0; k < WA_RATE_CATS; k++)
			PROP((again.rows[i].price[k] == NULL) ==
			    (rc.rows[i].price[k] == NULL) &&
			    (rc.rows[i].price[k] == NULL ||
			    strcmp(again.rows[i].price[k],
			    rc.rows[i].price[k]) == 0));
	}
	wa_ratecard_free(&again);
	wa_ratecard_free(&rc);
	wa_buf_free(&b);
	return 0;
}
