/*
 * fuzz/capture.h: what core/out.h writes on stdout, caught in a memory
 * file (fd 1 is pointed at it by capture_init).
 */
#ifndef WA_FUZZ_CAPTURE_H
#define WA_FUZZ_CAPTURE_H

#include <sys/mman.h>

#include "core/out.h"

static void
capture_init(void)
{
	int fd = memfd_create("stdout", 0);

	if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
		abort();
	close(fd);
}

/* Flushes wa_out and returns what came out (the caller frees it). */
static char *
capture_take(size_t *n)
{
	off_t end;
	char *s;

	wa_out_flush();
	end = lseek(STDOUT_FILENO, 0, SEEK_CUR);
	PROP(end >= 0);
	s = malloc((size_t)end + 1);
	PROP(pread(STDOUT_FILENO, s, (size_t)end, 0) == end);
	s[end] = '\0';
	*n = (size_t)end;
	PROP(ftruncate(STDOUT_FILENO, 0) == 0);
	PROP(lseek(STDOUT_FILENO, 0, SEEK_SET) == 0);
	return s;
}

#endif
