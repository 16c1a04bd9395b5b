/*
 * buf.c: a byte string that grows, for building statements, array literals
 * and output lines without counting bytes by hand.
 */
#include <stdlib.h>
#include <string.h>

#include "wa.h"

void
wa_buf_grow(struct wa_buf *b, size_t more)
{
	if (b->len + more + 1 <= b->cap)
		return;
	while (b->cap < b->len + more + 1)
		b->cap = b->cap ? b->cap * 2 : 256;
	b->s = wa_realloc(b->s, b->cap);
}

void
wa_buf_add(struct wa_buf *b, const char *s, size_t n)
{
	wa_buf_grow(b, n);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void
wa_buf_puts(struct wa_buf *b, const char *s)
{
	wa_buf_add(b, s, strlen(s));
}

void
wa_buf_printf(struct wa_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	wa_buf_grow(b, n);
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, n + 1, fmt, ap);
	va_end(ap);
	b->len += n;
}

/* Appends s as a JSON string, quotes included. */
void
wa_buf_json_string(struct wa_buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, start = 0;

	wa_buf_add(b, "\"", 1);
	for (i = 0; i < n; i++) {
		unsigned char c = s[i];
		char esc[7] = "\\u00";

		if (c != '"' && c != '\\' && c >= 0x20)
			continue;
		wa_buf_add(b, s + start, i - start);
		start = i + 1;
		if (c == '"' || c == '\\') {
			esc[1] = c;
			wa_buf_add(b, esc, 2);
		} else {
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			wa_buf_add(b, esc, 6);
		}
	}
	wa_buf_add(b, s + start, n - start);
	wa_buf_add(b, "\"", 1);
}

void
wa_buf_free(struct wa_buf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
}
