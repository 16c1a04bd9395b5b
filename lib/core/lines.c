/*
 * lines.c: reads '\n'-terminated lines from a descriptor and counts them,
 * so that every message can name its line.
 *
 * In exact mode the reader consumes no input past the line it returns:
 * a filter that takes a line only when it can pass it on leaves the rest
 * in the pipe, and backpressure reaches the writer upstream. On a pipe it
 * peeks with tee(2) into a scratch pipe and then reads exactly one line;
 * on a regular file it seeks back over what it read too far; anything
 * else is read in blocks. A filter with room for n lines may set exact to
 * n: up to n lines then go in one read, and none past them.
 *
 * A line over WA_LINE_MAX bytes is handed out in pieces as it is read,
 * so that the caller can keep it whole (in a --reject file) while the
 * buffer stays at about WA_LINE_MAX bytes however long the line is.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"
#include "core/lines.h"
#include "core/sig.h"

#define CHUNK 65536
/* The most the buffer needs: a line's first WA_LINE_MAX bytes and more. */
#define BUF_MAX (WA_LINE_MAX + 3 * CHUNK + 1)

void
wa_lines_init(struct wa_lines *l, int fd, const char *name, int exact)
{
	struct stat st;

	memset(l, 0, sizeof *l);
	l->fd = fd;
	l->name = name;
	l->peek[0] = l->peek[1] = -1;
	if (exact && fstat(fd, &st) == 0) {
		if (S_ISREG(st.st_mode))
			l->exact = 1;
		else if (S_ISFIFO(st.st_mode) && pipe2(l->peek, O_CLOEXEC) == 0)
			l->exact = 1;
	}
}

void
wa_lines_free(struct wa_lines *l)
{
	if (l->peek[0] >= 0) {
		close(l->peek[0]);
		close(l->peek[1]);
	}
	free(l->buf);
	l->buf = NULL;
}

/* Whether a whole line is already in hand, so no wait is needed. */
int
wa_lines_pending(const struct wa_lines *l)
{
	if (l->len == l->off)
		return l->eof && l->skipping;
	return memchr(l->buf + l->off, '\n', l->len - l->off) != NULL ||
	    l->eof || l->skipping;
}

/*
 * Makes room for CHUNK more bytes after len + peeked. The data left is
 * moved to the front only when the room is not there already: moving it
 * for every line would copy up to CHUNK bytes per line in exact mode.
 * The buffer never holds much more than WA_LINE_MAX bytes: past that, a
 * line goes out in pieces (wa_lines_next).
 */
static void
room(struct wa_lines *l)
{
	size_t used = l->len + l->peeked - l->off, want;

	if (l->buf != NULL && l->len + l->peeked + CHUNK + 1 <= l->cap)
		return;
	if (l->off > 0) {
		memmove(l->buf, l->buf + l->off, used);
		l->len -= l->off;
		l->off = 0;
	}
	if (used + CHUNK + 1 > l->cap) {
		/* Doubling, so a long line is not copied over and over. */
		want = used + CHUNK + 1;
		l->cap = l->cap * 2 > want ? l->cap * 2 : want;
		if (l->cap > BUF_MAX && want <= BUF_MAX)
			l->cap = BUF_MAX;
		l->buf = wa_realloc(l->buf, l->cap);
	}
}

/* Reads exactly n bytes that are known to be waiting in the pipe. */
static int
consume(struct wa_lines *l, size_t n)
{
	while (n > 0) {
		ssize_t r = read(l->fd, l->buf + l->len, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		l->len += r;
		l->peeked -= r;
		n -= r;
	}
	return 0;
}

/*
 * In exact mode, the end of the last line that may be consumed now among
 * the n bytes at p: the first '\n', or the exact-th when the caller
 * takes more than one line at a time. NULL when there is none.
 */
static char *
upto(const struct wa_lines *l, char *p, size_t n)
{
	char *nl = NULL, *q = p;
	int k;

	for (k = 0; k < (l->exact > 1 ? l->exact : 1); k++) {
		if ((q = memchr(q, '\n', n - (q - p))) == NULL)
			break;
		nl = q++;
	}
	return nl;
}

/* Moves more input into the buffer: one read, peek or seek. */
static int
fill(struct wa_lines *l)
{
	char *p = l->buf + l->len, *nl;
	ssize_t n;

	if (l->peek[0] >= 0 && l->peeked == 0) {
		n = tee(l->fd, l->peek[1], CHUNK, SPLICE_F_NONBLOCK);
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n <= 0)
			return n == 0 ? (l->eof = 1, 0) : -1;
		if (read(l->peek[0], p, n) != n)
			return -1;
		l->peeked = n;
	}
	if (l->peek[0] >= 0) {
		nl = upto(l, p, l->peeked);
		return consume(l, nl ? (size_t)(nl - p) + 1 : l->peeked);
	}
	/* Small reads when seeking back, so a line costs little. */
	n = read(l->fd, p, l->exact ? 4096 : CHUNK);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -1;
	if (n == 0) {
		l->eof = 1;
		return 0;
	}
	if (l->exact && (nl = upto(l, p, n)) != NULL && nl - p + 1 < n) {
		off_t back = n - (nl - p + 1);

		if (lseek(l->fd, -back, SEEK_CUR) >= 0)
			n -= back;
	}
	l->len += n;
	return 0;
}

/*
 * Returns WA_LINE with the next line in *line (NUL-terminated, '\n'
 * removed) and its length in *len; the line stays valid until the next
 * call. A line over WA_LINE_MAX bytes comes in pieces, each valid until
 * the next call: WA_PART for each piece but the last, then WA_TOOLONG
 * with the last (possibly empty) one, which counts the line. Waits up to
 * timeout ms (-1: for ever) for input; returns WA_AGAIN when none came or
 * a signal arrived, WA_EOF at the end, WA_ERROR on a read error. A last
 * line without '\n' is returned as a line.
 */
int
wa_lines_next(struct wa_lines *l, char **line, size_t *len, int timeout)
{
	struct pollfd pfd;
	char *start, *nl;
	size_t have, n;

	for (;;) {
		/* No pointer arithmetic on a buffer not yet allocated. */
		have = l->len - l->off;
		start = have > 0 ? l->buf + l->off : NULL;
		nl = have > 0 ? memchr(start, '\n', have) : NULL;
		if (nl != NULL || (l->eof && (have > 0 || l->skipping))) {
			n = nl ? (size_t)(nl - start) : have;
			l->lineno++;
			l->off += n + (nl != NULL);
			*line = start ? start : (char *)"";
			*len = n;
			if (start != NULL)
				start[n] = '\0';
			if (l->skipping || n > WA_LINE_MAX) {
				l->skipping = 0;
				return WA_TOOLONG;
			}
			return WA_LINE;
		}
		if (l->eof)
			return WA_EOF;
		if (have > WA_LINE_MAX || (l->skipping && have > 0)) {
			/* Too long: out in pieces, and the buffer reused. */
			l->skipping = 1;
			l->off = l->len;
			*line = start;
			*len = have;
			return WA_PART;
		}
		room(l);
		if (l->peeked == 0) {
			pfd.fd = l->fd;
			pfd.events = POLLIN;
			switch (wa_wait(&pfd, 1, timeout)) {
			case 0:
				return WA_AGAIN;
			case -1:
				if (errno == EINTR)
					return WA_AGAIN;
				return WA_ERROR;
			}
		}
		if (fill(l) < 0)
			return WA_ERROR;
	}
}
