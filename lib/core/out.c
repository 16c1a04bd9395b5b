/*
 * out.c: output lines on stdout. A line goes out with its '\n' in one
 * write(2), so readers never see half a record and a pipe never carries a
 * split one; lines added with wa_out_add go out together at the next
 * flush.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/out.h"

static struct wa_buf out;

static void
writeall(const struct iovec *iov, int n)
{
	struct iovec v[2];
	ssize_t w;

	memcpy(v, iov, n * sizeof *v);
	while (n > 0) {
		w = writev(STDOUT_FILENO, v, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			wa_die(EX_IOERR, "write to stdout:");
		while (n > 0 && (size_t)w >= v[0].iov_len) {
			w -= v[0].iov_len;
			v[0] = v[1];
			n--;
		}
		if (n > 0) {
			v[0].iov_base = (char *)v[0].iov_base + w;
			v[0].iov_len -= w;
		}
	}
}

/* Writes out the lines buffered by wa_out_add. */
void
wa_out_flush(void)
{
	struct iovec v = { out.s, out.len };

	if (out.len > 0)
		writeall(&v, 1);
	out.len = 0;
}

/* The bytes wa_out_add has buffered since the last flush. */
size_t
wa_out_held(void)
{
	return out.len;
}

/* Buffers one line; wa_out_flush writes them all at once. */
void
wa_out_add(const char *s, size_t n)
{
	wa_buf_add(&out, s, n);
	wa_buf_add(&out, "\n", 1);
}

/* Writes one line now, '\n' added, in a single write. */
void
wa_out(const char *s, size_t n)
{
	struct iovec v[2] = { { (char *)s, n }, { "\n", 1 } };

	wa_out_flush();
	writeall(v, 2);
}
