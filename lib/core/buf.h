/*
 * core/buf.h: a byte string that grows, always NUL-terminated; and the
 * UTF-8 check every byte that enters goes through.
 */
#ifndef WA_CORE_BUF_H
#define WA_CORE_BUF_H

#include <stddef.h>

struct wa_buf {
	char	*s;
	size_t	 len;
	size_t	 cap;
};

void wa_buf_grow(struct wa_buf *b, size_t more);
void wa_buf_add(struct wa_buf *b, const char *s, size_t n);
void wa_buf_puts(struct wa_buf *b, const char *s);
void wa_buf_printf(struct wa_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* s (n bytes, UTF-8) as a JSON string, quotes and escapes added. */
void wa_buf_json_string(struct wa_buf *b, const char *s, size_t n);
void wa_buf_free(struct wa_buf *b);

/*
 * UTF-8 as Postgres takes it: no overlong forms, no surrogates, nothing
 * past U+10FFFF. wa_utf8_len: the length of the sequence at s (n bytes
 * left), 0 when invalid; wa_utf8_valid: whether all n bytes are;
 * wa_utf8_cut: the longest prefix of s, at most max bytes, that ends on
 * a character boundary (s valid).
 */
size_t wa_utf8_len(const unsigned char *s, size_t n);
int wa_utf8_valid(const char *s, size_t n);
size_t wa_utf8_cut(const char *s, size_t n, size_t max);
/* 3 when s (n bytes) starts with a byte order mark, else 0. */
size_t wa_utf8_bom(const char *s, size_t n);
/*
 * Copies the n bytes at src into dst (size bytes, NUL-terminated) as
 * valid UTF-8: each byte of an invalid sequence becomes U+FFFD; the copy
 * ends before the first character that does not fit. Its length.
 */
size_t wa_utf8_copy(char *dst, size_t size, const char *src, size_t n);
/*
 * The offset of the first byte of s (n bytes) that Postgres refuses in
 * text: a NUL, or one that is not UTF-8 as above; n when there is none.
 */
size_t wa_text_bad(const char *s, size_t n);

#endif
