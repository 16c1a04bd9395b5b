/*
 * records/stamp.h: an RFC 3339 timestamp read strictly, written in the
 * form Postgres's timestamptz takes.
 */
#ifndef WA_RECORDS_STAMP_H
#define WA_RECORDS_STAMP_H

#include <stddef.h>

#define WA_STAMP_MAX 40		/* what wa_stamp writes, with its NUL */

/*
 * Reads the n bytes at s as an RFC 3339 date-time ("2026-12-03T09:00:00
 * +01:00", 'T' or a space, 'Z' or an offset, a fraction of a second of
 * up to 9 digits) and writes it into out (WA_STAMP_MAX bytes) with 'T'
 * and "+00:00" for 'Z'. Returns NULL, or why it is not one.
 */
const char *wa_stamp(const char *s, size_t n, char *out);

#endif
