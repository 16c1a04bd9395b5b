/*
 * zones.c: the time zone of a country, from tzdata's zone1970.tab (or
 * the older zone.tab) under $TZDIR or /usr/share/zoneinfo, read once,
 * on the first question. A line there gives the countries a zone covers
 * ("DE,DK,NO,SE,SJ<tab>+5230+01322<tab>Europe/Berlin"). A country has a
 * zone when it has one, or when all of its zones keep the same rule
 * today (the POSIX TZ string at the end of each zone's TZif file:
 * Germany's Europe/Berlin and Europe/Zurich, for Busingen, are both
 * "CET-1CEST,M3.5.0,M10.5.0/3"); then the zone of a line that names the
 * country first is taken. A country whose zones differ (the US, Spain
 * with the Canaries) has none: the campaign's --tz stands for it.
 *
 * Reads those files; writes a warning on stderr, once, when there is no
 * table (every recipient then has the campaign's zone).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"
#include "records/numplan.h"

struct slot {
	char	*zone;		/* NULL: none seen */
	int	 own;		/* from a line that names the country first */
	int	 many;		/* zones that differ: no zone */
};

static struct slot slots[26 * 26];
static const char *dir;

static int
index_of(const char *cc)
{
	if (cc[0] < 'A' || cc[0] > 'Z' || cc[1] < 'A' || cc[1] > 'Z' ||
	    cc[2] != '\0')
		return -1;
	return (cc[0] - 'A') * 26 + (cc[1] - 'A');
}

/* The rule zone keeps today, its TZif footer, into out: 0, or -1. */
static int
rule(const char *zone, char *out, size_t size)
{
	char path[PATH_MAX], head[5], *nl;
	struct stat st;
	ssize_t n;
	off_t at;
	int fd;

	if (strstr(zone, "..") != NULL || (size_t)snprintf(path, sizeof path,
	    "%s/%s", dir, zone) >= sizeof path)
		return -1;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	at = fstat(fd, &st) == 0 && st.st_size > (off_t)size ?
	    st.st_size - (off_t)(size - 1) : 0;
	n = -1;
	if (pread(fd, head, 5, 0) == 5 && memcmp(head, "TZif", 4) == 0 &&
	    head[4] >= '2')
		n = pread(fd, out, size - 1, at);
	close(fd);
	if (n < 2 || out[n - 1] != '\n')
		return -1;
	out[--n] = '\0';
	if ((nl = memrchr(out, '\n', n)) == NULL || nl[1] == '\0' ||
	    strlen(nl + 1) != (size_t)(out + n - nl - 1))
		return -1;
	memmove(out, nl + 1, out + n - nl);
	return 0;
}

static int
same_rule(const char *a, const char *b)
{
	char ra[128], rb[128];

	return rule(a, ra, sizeof ra) == 0 && rule(b, rb, sizeof rb) == 0 &&
	    strcmp(ra, rb) == 0;
}

static void
add(const char *cc, const char *zone, int own)
{
	struct slot *s;
	int i;

	if ((i = index_of(cc)) < 0)
		return;
	s = &slots[i];
	if (s->zone == NULL) {
		s->zone = wa_strdup(zone);
		s->own = own;
	} else if (s->many || strcmp(s->zone, zone) == 0)
		return;
	else if (!same_rule(s->zone, zone))
		s->many = 1;
	else if (own && !s->own) {
		free(s->zone);
		s->zone = wa_strdup(zone);
		s->own = 1;
	}
}

/* A line of the table: countries, coordinates, zone, comments. */
static void
line(char *s)
{
	char *codes, *zone, *cc, *save;
	int first = 1;

	if (*s == '#' || (codes = strsep(&s, "\t")) == NULL ||
	    strsep(&s, "\t") == NULL || (zone = strsep(&s, "\t\n")) == NULL ||
	    *zone == '\0' || zone[strspn(zone, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789/_+-")] != '\0')
		return;
	for (cc = strtok_r(codes, ",", &save); cc != NULL;
	    cc = strtok_r(NULL, ",", &save), first = 0)
		add(cc, zone, first);
}

static void
load(void)
{
	char path[PATH_MAX], *s = NULL;
	size_t size = 0;
	FILE *f;

	if ((dir = getenv("TZDIR")) == NULL || *dir == '\0')
		dir = "/usr/share/zoneinfo";
	snprintf(path, sizeof path, "%s/zone1970.tab", dir);
	if ((f = fopen(path, "re")) == NULL) {
		snprintf(path, sizeof path, "%s/zone.tab", dir);
		f = fopen(path, "re");
	}
	if (f == NULL) {
		wa_warn("no zone1970.tab or zone.tab in %s (tzdata): every "
		    "recipient's zone is the campaign's", dir);
		return;
	}
	while (getline(&s, &size, f) != -1)
		line(s);
	free(s);
	fclose(f);
}

static void
once(void)
{
	static int loaded;

	if (!loaded) {
		loaded = 1;
		load();
	}
}

const char *
wa_zone_of(const char *region)
{
	int i;

	once();
	if ((i = index_of(region)) < 0 || slots[i].many)
		return NULL;
	return slots[i].zone;
}

void
wa_zone_each(void (*fn)(const char *, void *), void *arg)
{
	size_t i, j;

	once();
	for (i = 0; i < sizeof slots / sizeof *slots; i++) {
		if (slots[i].zone == NULL || slots[i].many)
			continue;
		for (j = 0; j < i; j++)
			if (slots[j].zone != NULL && !slots[j].many &&
			    strcmp(slots[j].zone, slots[i].zone) == 0)
				break;
		if (j == i)
			fn(slots[i].zone, arg);
	}
}

void
wa_zone_drop(const char *zone)
{
	size_t i;

	once();
	for (i = 0; i < sizeof slots / sizeof *slots; i++)
		if (slots[i].zone != NULL && strcmp(slots[i].zone, zone) == 0)
			slots[i].many = 1;
}
