/*
 * ratecard.c: Meta's rate card (records/ratecard.h). The file is read as
 * CSV (RFC 4180, as a spreadsheet writes it): cells between commas, a
 * cell that opens with a quote runs to the quote that closes it, holding
 * commas, doubled quotes and line breaks; a record ends at a line break
 * outside quotes (CR LF or LF). Lines are counted through quoted cells,
 * so a row is named by the line it starts on.
 *
 * What comes before the header is the title (its first line) and notes;
 * the header is the first record whose first cell is "Market". Header
 * cells are compared without case, with white space made one space and
 * none after a hyphen ("Authentication-\nInternational" is
 * Authentication-International). After it, each record that is not
 * blank is a market's row: market, currency, then a price per category,
 * a decimal number (thousands may be set apart with commas in a quoted
 * cell) or n/a.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "core/err.h"
#include "records/ratecard.h"

const char *const wa_rate_cats[WA_RATE_CATS] = { "marketing", "utility",
    "authentication", "authentication-international", "service" };

/* The header's columns: market, currency, then wa_rate_cats'. */
#define NCOLS (2 + WA_RATE_CATS)
static const char *const cols[NCOLS] = { "market", "currency", "marketing",
    "utility", "authentication", "authentication-international",
    "service" };
/* As a message names them. */
static const char *const names[NCOLS] = { "Market", "Currency",
    "Marketing", "Utility", "Authentication",
    "Authentication-International", "Service" };

#define MAXCELLS 64		/* cells in a record */
#define MAXCELL 1024		/* bytes in a cell */
#define MAXPRICE 40		/* bytes in a price */

struct reader {
	const char	*s;
	size_t		 n, pos;
	unsigned long	 line;	/* of pos */
	char		*why;
	size_t		 size;
	unsigned long	 at;	/* the line at fault */
};

/* One record: its cells, NUL-terminated, one after the other. */
struct rec {
	struct wa_buf	 b;
	size_t		 off[MAXCELLS];
	size_t		 n;
	unsigned long	 line;
};

static int
fail(struct reader *rd, unsigned long line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
fail(struct reader *rd, unsigned long line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rd->why, rd->size, fmt, ap);
	va_end(ap);
	rd->at = line;
	return -1;
}

static const char *
cell(const struct rec *r, size_t i)
{
	return i < r->n ? r->b.s + r->off[i] : "";
}

/* Cuts white space from both ends of each cell, in place. */
static void
trim(struct rec *r)
{
	size_t i, k;
	char *c;

	for (i = 0; i < r->n; i++) {
		c = r->b.s + r->off[i];
		k = strlen(c);
		while (k > 0 && strchr(" \t\r\n", c[k - 1]) != NULL)
			c[--k] = '\0';
		k = strspn(c, " \t\r\n");
		memmove(c, c + k, strlen(c + k) + 1);
	}
}

/*
 * Adds byte c to the cell being read, unless it is full; open: the line
 * its quote opened on, or 0 when it is not quoted (a quote left open
 * runs on until this stops it: said as such).
 */
static int
put(struct reader *rd, struct rec *r, char c, unsigned long open)
{
	if (r->b.len - r->off[r->n - 1] < MAXCELL) {
		wa_buf_add(&r->b, &c, 1);
		return 0;
	}
	if (open)
		return fail(rd, open, "a quoted cell is not closed within %d "
		    "bytes", MAXCELL);
	return fail(rd, rd->line, "a cell of more than %d bytes", MAXCELL);
}

/* The next record in r: 1, 0 at the end, -1 when it is not CSV. */
static int
record(struct reader *rd, struct rec *r)
{
	const char *s = rd->s;
	size_t i = rd->pos, n = rd->n;
	unsigned long open;

	r->n = 0;
	r->b.len = 0;
	r->line = rd->line;
	if (i >= n)
		return 0;
	for (;;) {
		if (r->n == MAXCELLS)
			return fail(rd, r->line, "more than %d cells in a "
			    "row", MAXCELLS);
		r->off[r->n++] = r->b.len;
		if (i < n && s[i] == '"') {
			open = rd->line;
			for (i++;; i++) {
				if (i >= n)
					return fail(rd, open, "a quoted cell "
					    "is not closed");
				if (s[i] == '"' && (i + 1 >= n ||
				    s[i + 1] != '"'))
					break;
				if (s[i] == '"')
					i++;
				else if (s[i] == '\n')
					rd->line++;
				if (put(rd, r, s[i], open) < 0)
					return -1;
			}
			for (i++; i < n && strchr(" \t\r", s[i]) != NULL &&
			    s[i] != '\0'; i++)
				;
			if (i < n && s[i] != ',' && s[i] != '\n')
				return fail(rd, rd->line, "text after the "
				    "quote that closes a cell");
		} else
			for (; i < n && s[i] != ',' && s[i] != '\n'; i++)
				if (put(rd, r, s[i], 0) < 0)
					return -1;
		wa_buf_add(&r->b, "", 1);
		if (i < n && s[i] == ',') {
			i++;
			continue;
		}
		if (i < n) {
			i++;
			rd->line++;
		}
		rd->pos = i;
		trim(r);
		return 1;
	}
}

/* Whether every cell of r is empty. */
static int
blank(const struct rec *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (*cell(r, i) != '\0')
			return 0;
	return 1;
}

/*
 * A header cell as it is compared: lower case, white space made one
 * space and none after a hyphen (out: size bytes).
 */
static void
fold(const char *c, char *out, size_t size)
{
	size_t k = 0;
	int sp = 0;

	for (; *c != '\0' && k + 1 < size; c++) {
		if (isspace((unsigned char)*c)) {
			sp = 1;
			continue;
		}
		if (sp && k > 0 && out[k - 1] != '-' && k + 2 < size)
			out[k++] = ' ';
		sp = 0;
		out[k++] = tolower((unsigned char)*c);
	}
	out[k] = '\0';
}

/*
 * The price in cell c, in out: 1, or 0 for n/a, -1 when it is neither
 * a decimal number (digits, thousands set apart by commas or not, at
 * most one point) nor n/a.
 */
static int
price(const char *c, char *out)
{
	size_t k = 0, group = 0, digits = 0;
	int commas = 0, point = 0;

	if (strcasecmp(c, "n/a") == 0)
		return 0;
	if (strlen(c) >= MAXPRICE)
		return -1;
	if (*c == '.')
		out[k++] = '0';
	for (; *c != '\0'; c++) {
		if (*c >= '0' && *c <= '9') {
			out[k++] = *c;
			digits++;
			group++;
		} else if (*c == ',' && !point && group >= 1 &&
		    (commas ? group == 3 : group <= 3)) {
			commas = 1;
			group = 0;
		} else if (*c == '.' && !point && (!commas || group == 3)) {
			point = 1;
			commas = 0;
			out[k++] = '.';
		} else
			return -1;
	}
	if (digits == 0 || (commas && group != 3) || out[k - 1] == '.')
		return -1;
	out[k] = '\0';
	return 1;
}

/* The ISO code of a currency as the card writes it, in out; -1: none. */
static int
currency(const char *c, char *out)
{
	int i;

	if (strcmp(c, "$US") == 0 || strcmp(c, "US$") == 0) {
		memcpy(out, "USD", 4);
		return 0;
	}
	for (i = 0; i < 3; i++)
		if (!isalpha((unsigned char)c[i]) || (unsigned char)c[i] > 127)
			return -1;
	if (c[3] != '\0')
		return -1;
	for (i = 0; i < 3; i++)
		out[i] = toupper((unsigned char)c[i]);
	out[3] = '\0';
	return 0;
}

/* Where each column is in the header r (where[]), and what is not read. */
static int
header(struct reader *rd, const struct rec *r, size_t *where,
    struct wa_ratecard *rc)
{
	struct wa_buf ign = { 0 };
	char f[MAXCELL];
	size_t i, k;

	for (k = 0; k < NCOLS; k++)
		where[k] = MAXCELLS;
	for (i = 0; i < r->n; i++) {
		fold(cell(r, i), f, sizeof f);
		for (k = 0; k < NCOLS && strcmp(f, cols[k]) != 0; k++)
			;
		if (k < NCOLS && where[k] != MAXCELLS) {
			wa_buf_free(&ign);
			return fail(rd, r->line, "the column \"%s\" twice in "
			    "the header", names[k]);
		}
		if (k < NCOLS)
			where[k] = i;
		else if (*f != '\0')
			wa_buf_printf(&ign, "%s\"%s\"", ign.len ? ", " : "",
			    cell(r, i));
	}
	for (k = 0; k < NCOLS; k++)
		if (where[k] == MAXCELLS) {
			wa_buf_free(&ign);
			return fail(rd, r->line, "no column \"%s\" in the "
			    "header (Market, Currency, Marketing, Utility, "
			    "Authentication, Authentication-International, "
			    "Service)", names[k]);
		}
	rc->ignored = ign.s;
	return 0;
}

/* Row r of the table, its columns at where[], into rc. */
static int
row(struct reader *rd, const struct rec *r, const size_t *where,
    struct wa_ratecard *rc)
{
	struct wa_rate_row *w;
	const char *m = cell(r, where[0]), *c;
	char cur[4], p[MAXPRICE + 2];
	size_t i, k;
	int got;

	if (*m == '\0')
		return fail(rd, r->line, "a row without a market");
	for (i = 0; i < rc->n; i++)
		if (strcasecmp(rc->rows[i].market, m) == 0)
			return fail(rd, r->line, "the market \"%s\" twice "
			    "(line %lu too)", m, rc->rows[i].line);
	if (rc->n == WA_RATECARD_ROWS)
		return fail(rd, r->line, "more than %d markets",
		    WA_RATECARD_ROWS);
	c = cell(r, where[1]);
	if (currency(c, cur) < 0)
		return fail(rd, r->line, "%s: the currency \"%s\" is not a "
		    "code such as BRL or $US", m, c);
	if (rc->n > 0 && strcmp(cur, rc->currency) != 0)
		return fail(rd, r->line, "%s: the currency %s, where the "
		    "rows above have %s", m, cur, rc->currency);
	memcpy(rc->currency, cur, 4);
	rc->rows = wa_realloc(rc->rows, (rc->n + 1) * sizeof *rc->rows);
	w = &rc->rows[rc->n++];
	memset(w, 0, sizeof *w);
	w->line = r->line;
	w->market = wa_strdup(m);
	for (k = 0; k < WA_RATE_CATS; k++) {
		c = cell(r, where[2 + k]);
		if (*c == '\0')
			return fail(rd, r->line, "%s: no price for %s (n/a "
			    "where it is not sold)", m, names[2 + k]);
		if ((got = price(c, p)) < 0)
			return fail(rd, r->line, "%s: the price for %s, "
			    "\"%.40s\", is not a number", m, names[2 + k], c);
		if (got)
			w->price[k] = wa_strdup(p);
	}
	return 0;
}

/* The line of byte at in s. */
static unsigned long
line_of(const char *s, size_t at)
{
	unsigned long line = 1;
	size_t i;

	for (i = 0; i < at; i++)
		line += s[i] == '\n';
	return line;
}

static int
parse(struct reader *rd, struct wa_ratecard *rc)
{
	struct rec r = { { 0 }, { 0 }, 0, 0 };
	struct wa_buf t = { 0 };
	size_t where[NCOLS], bad, i;
	char f[16];
	int got, in = 0;

	if ((bad = wa_text_bad(rd->s, rd->n)) < rd->n)
		return fail(rd, line_of(rd->s, bad), rd->s[bad] == '\0' ?
		    "a NUL byte" : "bytes that are not UTF-8");
	rd->pos = wa_utf8_bom(rd->s, rd->n);
	while ((got = record(rd, &r)) > 0) {
		if (in) {
			if (!blank(&r) && row(rd, &r, where, rc) < 0)
				break;
			continue;
		}
		fold(cell(&r, 0), f, sizeof f);
		if (strcmp(f, "market") == 0) {
			if (header(rd, &r, where, rc) < 0)
				break;
			rc->header = r.line;
			in = 1;
		} else if (rc->title == NULL && !blank(&r)) {
			for (i = 0; i < r.n; i++)
				if (*cell(&r, i) != '\0')
					wa_buf_printf(&t, "%s%s", t.len ?
					    ", " : "", cell(&r, i));
			rc->title = t.s;
		}
	}
	wa_buf_free(&r.b);
	if (got > 0 || got < 0)
		return -1;
	if (!in)
		return fail(rd, rd->line, "no header (Market, Currency, "
		    "Marketing, Utility, Authentication, "
		    "Authentication-International, Service)");
	if (rc->n == 0)
		return fail(rd, rd->line, "no market under the header");
	return 0;
}

int
wa_ratecard_parse(const char *s, size_t n, struct wa_ratecard *rc,
    char *why, size_t size, unsigned long *line)
{
	struct reader rd = { s, n, 0, 1, why, size, 0 };

	memset(rc, 0, sizeof *rc);
	if (parse(&rd, rc) == 0)
		return 0;
	*line = rd.at;
	wa_ratecard_free(rc);
	return -1;
}

void
wa_ratecard_free(struct wa_ratecard *rc)
{
	size_t i, k;

	for (i = 0; i < rc->n; i++) {
		free(rc->rows[i].market);
		for (k = 0; k < WA_RATE_CATS; k++)
			free(rc->rows[i].price[k]);
	}
	free(rc->rows);
	free(rc->title);
	free(rc->ignored);
	memset(rc, 0, sizeof *rc);
}
