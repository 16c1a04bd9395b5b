/*
 * spool.c: spool/spool.h's segment reader, over segment files written
 * here (the input split at 0xff bytes into up to four segments, the
 * first two bytes picking the segment numbers and the checkpoint). From
 * a checkpoint (segment, offset) it returns every complete line after
 * it, in order, each numbered by its place in its segment; the bytes
 * after a segment's last '\n' are skipped once a later segment exists,
 * and waited for (WA_AGAIN) in the last one; a checkpoint past a
 * segment's end starts at its end.
 */
#include <fcntl.h>

#include "fuzz.h"
#include "core/lines.h"
#include "spool/spool.h"

#define SEGS 4

static char dir[64];

static void
gone(void)
{
	char *p;
	int i;

	for (i = 0; i < 16; i++) {
		p = wa_spool_segment_path(dir, i);
		unlink(p);
		free(p);
	}
	rmdir(dir);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");

	(void)argc;
	(void)argv;
	fuzz_quiet();
	snprintf(dir, sizeof dir, "%s/wa-fuzz-spool.XXXXXX",
	    tmp && strlen(tmp) < 32 ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL)
		abort();
	atexit(gone);
	return 0;
}

static unsigned long
count(const char *s, size_t n)
{
	unsigned long k = 0;

	while (n-- > 0)
		k += *s++ == '\n';
	return k;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wa_spool_reader r;
	const char *seg[SEGS], *p, *e, *nl;
	size_t len[SEGS], n, at, want, off, got;
	long long num[SEGS];
	unsigned long lineno;
	char *path, *line;
	int k = 0, i, fd, ret;

	if (size < 2)
		return 0;
	p = (const char *)data + 2;
	e = (const char *)data + size;
	while (k < SEGS) {
		nl = k < SEGS - 1 ? memchr(p, 0xff, e - p) : NULL;
		seg[k] = p;
		len[k] = nl ? (size_t)(nl - p) : (size_t)(e - p);
		num[k] = k == 0 ? data[0] % 3 : num[k - 1] + 1 +
		    (data[0] >> (k + 1) & 1) * 2;
		k++;
		if (nl == NULL)
			break;
		p = nl + 1;
	}
	for (i = 0; i < k; i++) {
		path = wa_spool_segment_path(dir, num[i]);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		PROP(fd >= 0);
		PROP(len[i] == 0 || write(fd, seg[i], len[i]) ==
		    (ssize_t)len[i]);
		close(fd);
		free(path);
	}
	off = data[1] % (len[0] + 3);

	wa_spool_reader_open(&r, dir, num[0], (long long)off);
	if (off > len[0])
		off = len[0];
	for (i = 0; i < k; i++) {
		p = seg[i];
		n = len[i];
		at = i == 0 ? off : 0;
		lineno = i == 0 ? count(p, off) : 0;
		while ((nl = memchr(p + at, '\n', n - at)) != NULL) {
			want = (size_t)(nl - (p + at));
			ret = wa_spool_next(&r, &line, &got);
			PROP(ret == WA_LINE);
			PROP(got == want);
			PROP(r.seg == num[i]);
			PROP(r.lineno == ++lineno);
			PROP(memcmp(line, p + at, want) == 0);
			PROP(line[want] == '\0');
			at += want + 1;
			PROP(r.off == (long long)at);
		}
	}
	/* The last segment's unfinished line is waited for. */
	PROP(wa_spool_next(&r, &line, &got) == WA_AGAIN);
	wa_spool_reader_close(&r);
	for (i = 0; i < k; i++) {
		path = wa_spool_segment_path(dir, num[i]);
		unlink(path);
		free(path);
	}
	return 0;
}
