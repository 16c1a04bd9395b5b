/*
 * records/stamp.h: an RFC 3339 timestamp read strictly, written in the
 * form Postgres's timestamptz takes; and a time as an operator writes a
 * schedule: RFC 3339, or a wall-clock time in some time zone.
 */
#ifndef WA_RECORDS_STAMP_H
#define WA_RECORDS_STAMP_H

#include <stddef.h>
#include <stdint.h>

#define WA_STAMP_MAX 40		/* what wa_stamp writes, with its NUL */

/*
 * Reads the n bytes at s as an RFC 3339 date-time ("2026-12-03T09:00:00
 * +01:00", 'T' or a space, 'Z' or an offset, a fraction of a second of
 * up to 9 digits) and writes it into out (WA_STAMP_MAX bytes) with 'T'
 * and "+00:00" for 'Z'. Returns NULL, or why it is not one.
 */
const char *wa_stamp(const char *s, size_t n, char *out);

/* The Unix time, in seconds, of a date-time as wa_stamp writes it. */
int64_t wa_stamp_seconds(const char *stamp);

/* What wa_stamp_when read: an instant, or a wall-clock time. */
enum wa_when { WA_WHEN_INSTANT, WA_WHEN_LOCAL, WA_WHEN_CLOCK };

/*
 * Reads the n bytes at s as a time to start at: an RFC 3339 date-time
 * (WA_WHEN_INSTANT, out as wa_stamp writes it), a date and a time of day
 * without offset, "2026-12-06 09:00" or "2026-12-06T09:00:30"
 * (WA_WHEN_LOCAL, out "2026-12-06T09:00:00"), or a time of day alone,
 * "09:00" or "09:00:30" (WA_WHEN_CLOCK, out "09:00:00"): the last two
 * are wall-clock times, for the caller to place in a time zone. Sets
 * *kind; returns NULL, or why s is none of them.
 */
const char *wa_stamp_when(const char *s, size_t n, char *out,
    enum wa_when *kind);

#endif
