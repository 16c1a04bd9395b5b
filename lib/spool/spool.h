/*
 * spool/spool.h: the webhook spool, a directory of numbered segment files
 * holding one webhook body per line. wa-webhook appends (group commit:
 * a body is acknowledged only once an fsync covers it); wa-status-ingest
 * follows the segments in order, from a checkpoint.
 */
#ifndef WA_SPOOL_SPOOL_H
#define WA_SPOOL_SPOOL_H

#include <sys/types.h>

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* The writer; its appends may come from several threads at once. */
struct wa_spool {
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	char		*dir;
	int		 dirfd;
	int		 lockfd;
	int		 fd;		/* the segment being written */
	long long	 seg;		/* its number */
	long long	 size;		/* its size */
	long long	 max;		/* start a new segment past this size */
	uint64_t	 written;	/* bytes appended, all segments */
	uint64_t	 synced;	/* of those, bytes an fsync covered */
	int		 syncing;	/* a thread is in fdatasync */
	int		 broken;	/* errno of a failed write or sync */
	uint64_t	 fsyncs;	/* counters, read under mu */
	uint64_t	 bodies;
};

/* Opens dir for appending (one writer: locked); segments of max bytes. */
struct wa_spool *wa_spool_open(const char *dir, long long max);
/* Appends one body; returns once an fsync covers it: 0, or -1. */
int wa_spool_append(struct wa_spool *sp, char *body, size_t n);
void wa_spool_close(struct wa_spool *sp);

/* The reader: follows the segments of one directory, in order. */
struct wa_spool_reader {
	char		*dir;
	int		 fd;		/* -1 before the first segment */
	long long	 seg;		/* segment of the next line */
	long long	 off;		/* offset of the next line in it */
	unsigned long	 lineno;	/* number of the line last returned */
	char		*path;		/* of the segment, for messages */
	char		*buf;
	size_t		 start;		/* of data not yet returned */
	size_t		 len;
	size_t		 cap;
	int		 skipping;	/* inside a line that is too long */
	long long	 long_off;	/* where the last too-long line is */
	long long	 long_len;	/* its length, without '\n' */
};

/* Holds dir's reader lock while the process lives; exits 75 if held. */
void wa_spool_reader_lock(const char *dir);
/* Starts reading dir at segment seg, byte off. */
void wa_spool_reader_open(struct wa_spool_reader *r, const char *dir,
    long long seg, long long off);
/*
 * Like wa_lines_next (core/lines.h), without waiting, and a line over
 * WA_LINE_MAX in one WA_TOOLONG, after its '\n': what it held stays in
 * its segment (long_off, long_len), to be read with wa_spool_reread.
 */
int wa_spool_next(struct wa_spool_reader *r, char **line, size_t *len);
/* Up to n bytes of that line from byte at of it; 0 at its end, or -1. */
ssize_t wa_spool_reread(struct wa_spool_reader *r, char *buf, size_t n,
    long long at);
void wa_spool_reader_close(struct wa_spool_reader *r);
/* Removes the segments before seg. */
int wa_spool_prune(const char *dir, long long seg);
char *wa_spool_segment_path(const char *dir, long long seg);

#endif
