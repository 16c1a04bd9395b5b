/*
 * lines.c: core/lines.h's reader, on a pipe or on a regular file, in
 * block or exact mode (the first byte picks). The lines it returns are
 * the input, split at '\n', in order, each NUL-terminated and without
 * '\n', numbered from 1; a last line without '\n' is a line. In exact
 * mode no byte past the line returned has been consumed (past the
 * exact-th line from it, when exact is more than one).
 */
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "fuzz.h"
#include "core/lines.h"

#define PIPE_MAX 65536	/* a pipe holds this much: written at once */

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	return 0;
}

/* Bytes consumed from fd so far: its offset, or what left the pipe. */
static size_t
consumed(int fd, int pipe, size_t total)
{
	int left = 0;

	if (!pipe)
		return (size_t)lseek(fd, 0, SEEK_CUR);
	PROP(ioctl(fd, FIONREAD, &left) == 0);
	return total - (size_t)left;
}

/* The offset after m more lines from at (or n). */
static size_t
after(const char *in, size_t n, size_t at, int m)
{
	const char *nl;

	while (m-- > 0 && at < n) {
		nl = memchr(in + at, '\n', n - at);
		at = nl ? (size_t)(nl - in) + 1 : n;
	}
	return at;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wa_lines l;
	const char *in, *nl;
	char *line;
	size_t len, n, at = 0, want;
	unsigned long k = 0;
	int fd[2], pipe_, exact, r;

	if (size < 1 || size > PIPE_MAX)
		return 0;
	pipe_ = data[0] & 1;
	exact = (data[0] >> 1) & 3;	/* 0: blocks, else up to 3 lines */
	in = (const char *)data + 1;
	n = size - 1;
	if (pipe_) {
		PROP(pipe(fd) == 0);
		(void)fcntl(fd[1], F_SETPIPE_SZ, PIPE_MAX);
		PROP(n == 0 || write(fd[1], in, n) == (ssize_t)n);
		close(fd[1]);
	} else {
		fd[0] = memfd_create("lines", 0);
		PROP(fd[0] >= 0);
		PROP(n == 0 || write(fd[0], in, n) == (ssize_t)n);
		lseek(fd[0], 0, SEEK_SET);
	}
	wa_lines_init(&l, fd[0], "fuzz", exact);
	PROP(l.exact == (exact > 0));
	if (exact > 1)
		l.exact = exact;	/* room for that many lines */
	while ((r = wa_lines_next(&l, &line, &len, -1)) == WA_LINE) {
		/* The next line of the input, whole, and nothing else. */
		PROP(at < n);
		nl = memchr(in + at, '\n', n - at);
		want = nl ? (size_t)(nl - (in + at)) : n - at;
		PROP(len == want);
		PROP(memcmp(line, in + at, len) == 0);
		PROP(line[len] == '\0');
		PROP(l.lineno == ++k);
		at += want + (nl != NULL);
		/* Exact, one line at a time: nothing read past it. */
		if (exact == 1)
			PROP(consumed(fd[0], pipe_, n) == at);
		if (exact > 1) {
			PROP(consumed(fd[0], pipe_, n) >= at);
			PROP(consumed(fd[0], pipe_, n) <=
			    after(in, n, at, exact - 1));
		}
	}
	PROP(r == WA_EOF);
	PROP(at == n);
	PROP(wa_lines_next(&l, &line, &len, -1) == WA_EOF);
	wa_lines_free(&l);
	close(fd[0]);
	return 0;
}
