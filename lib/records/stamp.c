/*
 * stamp.c: RFC 3339 date-times (section 5.6), read strictly: a day that
 * the month has (29 February in leap years only), hours 00-23, minutes
 * 00-59, seconds 00-60 (a leap second), and an offset of at most 15:59,
 * the most Postgres takes. Years 0001 to 9999. And the wall-clock times
 * of a schedule, read by the same rules. Reads s, writes out.
 */
#include <string.h>

#include "records/stamp.h"

/* The k digits at s as a number, or -1. */
static int
digits(const char *s, int k)
{
	int v = 0;

	while (k-- > 0) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s++ - '0');
	}
	return v;
}

static int
mdays(int y, int m)
{
	static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31,
	    30, 31 };

	if (m == 2 && y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))
		return 29;
	return days[m - 1];
}

/* "hh:mm" at s into *h and *m: 0, or -1. */
static int
clock2(const char *s, int *h, int *m)
{
	if (s[2] != ':' || (*h = digits(s, 2)) < 0 ||
	    (*m = digits(s + 3, 2)) < 0)
		return -1;
	return 0;
}

const char *
wa_stamp(const char *s, size_t n, char *out)
{
	char t[48];
	const char *p, *e;
	int y, mo, d, h, mi, sec, oh = 0, om = 0, frac;

	if (n >= sizeof t)
		return "not an RFC 3339 timestamp: too long";
	memcpy(t, s, n);
	t[n] = '\0';
	if (n < 20 || t[4] != '-' || t[7] != '-' ||
	    strchr("Tt ", t[10]) == NULL || t[13] != ':' || t[16] != ':' ||
	    (y = digits(t, 4)) < 0 || (mo = digits(t + 5, 2)) < 0 ||
	    (d = digits(t + 8, 2)) < 0 || clock2(t + 11, &h, &mi) < 0 ||
	    (sec = digits(t + 17, 2)) < 0)
		return "not an RFC 3339 timestamp "
		    "(2026-12-03T09:00:00+01:00, or ...Z)";
	if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > mdays(y, mo) ||
	    h > 23 || mi > 59 || sec > 60)
		return "a date or time that is not on the calendar";
	p = t + 19;
	frac = 0;
	if (*p == '.') {
		for (e = ++p; *e >= '0' && *e <= '9'; e++)
			;
		if (e == p || e - p > 9)
			return "a fraction of a second takes 1 to 9 digits";
		frac = (int)(e - p);
		p = e;
	}
	if (sec == 60 && frac > 0)
		return "a leap second (60) takes no fraction";
	if ((*p == 'Z' || *p == 'z') && p[1] == '\0')
		;
	else if ((*p == '+' || *p == '-') && strlen(p) == 6 &&
	    clock2(p + 1, &oh, &om) == 0) {
		if (oh > 15 || om > 59)
			return "an offset beyond 15:59";
	} else
		return "no offset: end it with Z or +hh:mm";
	memcpy(out, t, 19);
	out[10] = 'T';
	n = 19;
	if (frac > 0) {
		out[n++] = '.';
		memcpy(out + n, t + 20, frac);
		n += frac;
	}
	memcpy(out + n, *p == '+' || *p == '-' ? p : "+00:00", 7);
	return NULL;
}

int64_t
wa_stamp_seconds(const char *t)
{
	int y = digits(t, 4), m = digits(t + 5, 2), d = digits(t + 8, 2);
	const char *o = t + 19;
	int64_t days, era, yoe, doy, off;

	/* Days from 1970-01-01 of the proleptic Gregorian calendar. */
	y -= m <= 2;
	era = y / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	days = era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
	while (*o == '.' || (*o >= '0' && *o <= '9'))
		o++;
	off = (digits(o + 1, 2) * 60 + digits(o + 4, 2)) * 60;
	return days * 86400 + digits(t + 11, 2) * 3600 +
	    digits(t + 14, 2) * 60 + digits(t + 17, 2) -
	    (*o == '-' ? -off : off);
}

/* "hh:mm" or "hh:mm:ss", the whole of the n bytes at s, into out. */
static const char *
clock_of_day(const char *s, size_t n, char *out)
{
	int h, m, sec = 0;

	if ((n != 5 && n != 8) || clock2(s, &h, &m) < 0 ||
	    (n == 8 && (s[5] != ':' || (sec = digits(s + 6, 2)) < 0)))
		return "not a time of day (09:00 or 09:00:30)";
	if (h > 23 || m > 59 || sec > 59)
		return "a time of day that is not on the clock";
	memcpy(out, s, 5);
	memcpy(out + 5, n == 8 ? s + 5 : ":00", 3);
	out[8] = '\0';
	return NULL;
}

const char *
wa_stamp_when(const char *s, size_t n, char *out, enum wa_when *kind)
{
	const char *why;
	int y, mo, d;

	*kind = WA_WHEN_INSTANT;
	if (wa_stamp(s, n, out) == NULL)
		return NULL;
	*kind = WA_WHEN_CLOCK;
	if (n <= 8 && n > 2 && s[2] == ':')
		return clock_of_day(s, n, out);
	*kind = WA_WHEN_LOCAL;
	if (n < 16 || n > 19 || s[4] != '-' || s[7] != '-' ||
	    strchr("Tt ", s[10]) == NULL || (y = digits(s, 4)) < 0 ||
	    (mo = digits(s + 5, 2)) < 0 || (d = digits(s + 8, 2)) < 0)
		return "not a time to start at: 2026-12-06T09:00:00+01:00, "
		    "or 2026-12-06 09:00 or 09:00 in the campaign's time zone";
	if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > mdays(y, mo))
		return "a date that is not on the calendar";
	if ((why = clock_of_day(s + 11, n - 11, out + 11)) != NULL)
		return why;
	memcpy(out, s, 10);
	out[10] = 'T';
	return NULL;
}
