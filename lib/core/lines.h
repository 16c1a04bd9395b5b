/*
 * core/lines.h: '\n'-terminated lines from a descriptor, counted so that
 * every message can name its line. In exact mode no input is consumed
 * past the line returned, so backpressure reaches the writer upstream.
 * A line over WA_LINE_MAX bytes comes in pieces (WA_PART... WA_TOOLONG),
 * so that it can be kept whole while memory stays flat.
 */
#ifndef WA_CORE_LINES_H
#define WA_CORE_LINES_H

#include <stddef.h>

enum {
	WA_LINE = 1,		/* a line is ready */
	WA_EOF = 0,		/* no more input */
	WA_AGAIN = -1,		/* nothing within the timeout, or a signal */
	WA_TOOLONG = -2,	/* the last piece of a line over WA_LINE_MAX */
	WA_ERROR = -3,		/* read error, errno set */
	WA_PART = -4		/* a piece of a line over WA_LINE_MAX */
};
#define WA_LINE_MAX (4 << 20)

struct wa_lines {
	int		 fd;
	const char	*name;		/* "<stdin>" or a path, for messages */
	unsigned long	 lineno;	/* number of the line last returned */
	int		 exact;		/* consume no input past that line
					   (past n lines, when set to n) */
	int		 peek[2];	/* scratch pipe for tee(2), or -1 */
	int		 eof;
	int		 skipping;	/* inside a line that is too long */
	char		*buf;
	size_t		 off;		/* start of data not yet returned */
	size_t		 len;		/* end of data consumed from fd */
	size_t		 peeked;	/* bytes after len seen, not consumed */
	size_t		 cap;
};

void wa_lines_init(struct wa_lines *l, int fd, const char *name, int exact);
/*
 * The next line in *line and *len: WA_LINE (NUL-terminated, without its
 * '\n'); or a line over WA_LINE_MAX bytes in pieces, WA_PART for each
 * but the last and WA_TOOLONG for the last (which counts the line); or
 * WA_AGAIN after timeout ms (-1: none) or a signal, WA_EOF, WA_ERROR.
 */
int wa_lines_next(struct wa_lines *l, char **line, size_t *len,
    int timeout);
int wa_lines_pending(const struct wa_lines *l);
void wa_lines_free(struct wa_lines *l);

#endif
