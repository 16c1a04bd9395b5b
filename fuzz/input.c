/*
 * input.c: records/input.h, the JSON-line reader every NDJSON program
 * shares, over a file of lines with a --reject file. The first byte
 * picks raw mode, the checks (flags) and exact mode. Every line of the
 * input is either handed out (a JSON object the strict check takes again
 * when re-written, or in raw mode UTF-8 without NUL), or blank, or
 * copied whole to the reject file, in order, and counted: none is lost.
 */
#include <fcntl.h>
#include <sys/mman.h>

#include "fuzz.h"
#include "records/input.h"

static char rejects[64];

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");
	int fd;

	(void)argc;
	(void)argv;
	fuzz_quiet();
	snprintf(rejects, sizeof rejects, "%s/wa-fuzz-input.XXXXXX",
	    tmp && strlen(tmp) < 32 ? tmp : "/tmp");
	if ((fd = mkstemp(rejects)) < 0)
		abort();
	close(fd);
	return 0;
}

static void
gone(void)
{
	unlink(rejects);
}

static int
blank(const char *s, size_t n)
{
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' ||
	    s[n - 1] == '\r'))
		n--;
	return n == 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int registered;
	struct wa_input in;
	struct wa_record rec = { 0 };
	struct wa_buf want = { 0 };
	const char *p, *nl, *text;
	char *got, *taken;
	size_t n, at, len, gotn, *start;
	unsigned long lineno, rejected = 0;
	int fd, r;
	FILE *f;

	if (!registered++)
		atexit(gone);
	if (size < 1)
		return 0;
	p = (const char *)data + 1;
	n = size - 1;
	fd = memfd_create("input", 0);
	PROP(fd >= 0);
	PROP(n == 0 || write(fd, p, n) == (ssize_t)n);
	lseek(fd, 0, SEEK_SET);
	PROP(truncate(rejects, 0) == 0);
	taken = calloc(n + 2, 1);	/* by line number: handed out */
	start = calloc(n + 3, sizeof *start);	/* where each line starts */
	for (at = 0, lineno = 1; at < n; lineno++) {
		start[lineno] = at;
		nl = memchr(p + at, '\n', n - at);
		at = nl ? (size_t)(nl - p) + 1 : n;
	}
	/* The end of the last line, as if a '\n' followed. */
	start[lineno] = n > 0 && p[n - 1] == '\n' ? n : n + 1;

	wa_input_init(&in, fd, "fuzz", data[0] & 1);
	in.raw = (data[0] >> 1) & 1;
	in.flags = (data[0] >> 2) & 3;
	wa_input_reject_file(&in, rejects);
	while ((r = wa_input_next(&in, &rec, -1)) == WA_LINE) {
		PROP(rec.lineno >= 1 && rec.lineno <= n + 1);
		PROP(!taken[rec.lineno]);
		taken[rec.lineno] = 1;
		/* The line's own bytes, without its '\n'. */
		len = start[rec.lineno + 1] - 1 - start[rec.lineno];
		PROP(rec.len == len);
		PROP(memcmp(rec.line, p + start[rec.lineno], len) == 0);
		PROP(!blank(rec.line, rec.len));
		PROP(wa_utf8_valid(rec.line, rec.len));
		PROP(strlen(rec.line) == rec.len);
		if (in.raw) {
			PROP(rec.obj == NULL);
			continue;
		}
		PROP(json_object_is_type(rec.obj, json_type_object));
		if (in.flags == WA_JSON_RECORD) {
			text = wa_json_text(rec.obj);
			PROP(fuzz_strict(text, strlen(text)));
		}
	}
	PROP(r == WA_EOF);
	json_object_put(rec.obj);

	/* Each line: handed out (the same bytes), blank, or rejected. */
	for (at = 0, lineno = 1; at < n; lineno++) {
		nl = memchr(p + at, '\n', n - at);
		len = nl ? (size_t)(nl - (p + at)) : n - at;
		if (!taken[lineno] && !blank(p + at, len)) {
			wa_buf_add(&want, p + at, len);
			wa_buf_add(&want, "\n", 1);
			rejected++;
		}
		at += len + (nl != NULL);
	}
	PROP(in.rejected == rejected);
	wa_input_free(&in);
	close(fd);

	/* The reject file holds those lines, whole, in order. */
	PROP((f = fopen(rejects, "r")) != NULL);
	got = malloc(want.len + 2);
	gotn = fread(got, 1, want.len + 1, f);
	fclose(f);
	PROP(gotn == want.len);
	PROP(want.len == 0 || memcmp(got, want.s, want.len) == 0);
	free(got);
	free(taken);
	free(start);
	wa_buf_free(&want);
	return 0;
}
