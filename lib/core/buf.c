/*
 * buf.c: a byte string that grows, for building statements, array literals
 * and output lines without counting bytes by hand; and the UTF-8 checks
 * every byte that enters goes through.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"

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

/*
 * The length of the valid UTF-8 sequence at s (n bytes left), or 0: no
 * overlong forms, no surrogates, nothing past U+10FFFF (what Postgres
 * refuses).
 */
size_t
wa_utf8_len(const unsigned char *s, size_t n)
{
	size_t len, i;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] < 0xe0)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] < 0xf0)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] < 0xf5)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp < 0xe000))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

int
wa_utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, k;

	while (i < n) {
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		if ((k = wa_utf8_len(p + i, n - i)) == 0)
			return 0;
		i += k;
	}
	return 1;
}

size_t
wa_text_bad(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, k;

	while (i < n) {
		if (p[i] >= 0x80) {
			if ((k = wa_utf8_len(p + i, n - i)) == 0)
				return i;
			i += k;
		} else if (p[i] == '\0')
			return i;
		else
			i++;
	}
	return n;
}

size_t
wa_utf8_cut(const char *s, size_t n, size_t max)
{
	if (n <= max)
		return n;
	/* Back over continuation bytes to the start of a character. */
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	return max;
}

size_t
wa_utf8_bom(const char *s, size_t n)
{
	return n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
}

size_t
wa_utf8_copy(char *dst, size_t size, const char *src, size_t n)
{
	static const char rep[] = "\xef\xbf\xbd";	/* U+FFFD */
	const unsigned char *p = (const unsigned char *)src;
	size_t i = 0, len = 0, k;

	if (size == 0)
		return 0;
	while (i < n) {
		k = wa_utf8_len(p + i, n - i);
		if (len + (k ? k : 3) >= size)
			break;
		if (k == 0) {
			memcpy(dst + len, rep, 3);
			len += 3;
			i++;
		} else {
			memcpy(dst + len, p + i, k);
			len += k;
			i += k;
		}
	}
	dst[len] = '\0';
	return len;
}

void
wa_buf_free(struct wa_buf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
}
