/*
 * spool.c: the webhook spool. A directory holds segments named by a
 * 16-digit number ("0001765432101234.ndjson"), each a run of lines, one
 * webhook body per line; a body's own '\n' and '\r' bytes become spaces
 * (JSON whitespace: inside a JSON string they would be illegal raw).
 *
 * The writer (wa-webhook) takes a lock file so that one process owns the
 * directory, starts a new segment each time it opens it and whenever the
 * current one has grown past its size limit, and numbers a new segment
 * max(previous + 1, the time in microseconds), so numbers only grow even
 * when every old segment has been deleted. Appends are serialised by a
 * mutex; each then waits until an fdatasync covers its bytes. Whoever
 * finds no sync running starts one for everything written so far, so one
 * sync serves every body that arrived while the previous one ran (group
 * commit). A failed write is cut off again with ftruncate; after a failed
 * sync nothing more is accepted (the kernel may have dropped the data).
 *
 * The reader (wa-status-ingest) returns whole lines only: a line the
 * writer is still appending has no '\n' yet. A line over WA_LINE_MAX is
 * not held: the reader drops it as it reads, keeps where it starts and
 * how long it is, and the caller rereads it from the segment in pieces
 * (to copy it whole to a reject file with a small buffer). At the end of
 * a segment it moves to the next one only once that exists, after
 * reading the first one to its end again (the writer is done with a
 * segment before it creates the next). A partial last line of a
 * finished segment is a body that was never acknowledged (a crash
 * mid-write); it is skipped.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/lines.h"
#include "spool/spool.h"

#define SUFFIX ".ndjson"
#define CHUNK (1 << 20)

char *
wa_spool_segment_path(const char *dir, long long seg)
{
	struct wa_buf b = { 0 };

	wa_buf_printf(&b, "%s/%016lld%s", dir, seg, SUFFIX);
	return b.s;
}

/* A segment's number from its file name, or -1. */
static long long
segnum(const char *name)
{
	size_t i;

	for (i = 0; i < 16; i++)
		if (name[i] < '0' || name[i] > '9')
			return -1;
	if (strcmp(name + 16, SUFFIX) != 0)
		return -1;
	return strtoll(name, NULL, 10);
}

/*
 * The smallest segment numbered above after (-1: any), or -1; the
 * largest of all in *last when last is not NULL.
 */
static long long
scan(const char *dir, long long after, long long *last)
{
	struct dirent *e;
	long long n, best = -1;
	DIR *d;

	if (last != NULL)
		*last = -1;
	if ((d = opendir(dir)) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		if ((n = segnum(e->d_name)) < 0)
			continue;
		if (n > after && (best < 0 || n < best))
			best = n;
		if (last != NULL && n > *last)
			*last = n;
	}
	closedir(d);
	return best;
}

/* Removes the segments numbered below seg; returns how many. */
int
wa_spool_prune(const char *dir, long long seg)
{
	long long n = -1;
	char *path;
	int removed = 0;

	while ((n = scan(dir, n, NULL)) >= 0 && n < seg) {
		path = wa_spool_segment_path(dir, n);
		if (unlink(path) == 0)
			removed++;
		else
			wa_warn("remove %s:", path);
		free(path);
	}
	return removed;
}

/* Starts a new segment; called with mu held (or before any thread). */
static int
newseg(struct wa_spool *sp)
{
	struct timespec ts;
	long long now;
	char *path;
	int fd;

	clock_gettime(CLOCK_REALTIME, &ts);
	now = (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
	sp->seg = now > sp->seg ? now : sp->seg + 1;
	path = wa_spool_segment_path(sp->dir, sp->seg);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC,
	    0640);
	if (fd < 0 || fsync(sp->dirfd) < 0) {
		wa_warn("create %s:", path);
		if (fd >= 0)
			close(fd);
		free(path);
		return -1;
	}
	free(path);
	sp->fd = fd;
	sp->size = 0;
	return 0;
}

/*
 * dir/name, made if missing and locked (flock, exclusive) for the life
 * of the process: its descriptor, or -1 when another process holds it;
 * exits 73 when it cannot be made.
 */
static int
lockfile(const char *dir, const char *name)
{
	struct wa_buf path = { 0 };
	int fd;

	wa_buf_printf(&path, "%s/%s", dir, name);
	if ((fd = open(path.s, O_RDWR | O_CREAT | O_CLOEXEC, 0640)) < 0)
		wa_die(EX_CANTCREAT, "open %s:", path.s);
	wa_buf_free(&path);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Opens the spool directory dir (created if missing) for appending,
 * segments up to max bytes; exits 75 when another process has it, 73
 * when it cannot be created.
 */
struct wa_spool *
wa_spool_open(const char *dir, long long max)
{
	struct wa_spool *sp = wa_alloc(sizeof *sp);

	if (mkdir(dir, 0750) < 0 && errno != EEXIST)
		wa_die(EX_CANTCREAT, "create %s:", dir);
	sp->dir = wa_strdup(dir);
	if ((sp->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		wa_die(EX_CANTCREAT, "open %s:", dir);
	if ((sp->lockfd = lockfile(dir, "lock")) < 0)
		wa_die(EX_TEMPFAIL, "spool %s is in use by another process",
		    dir);
	scan(dir, -1, &sp->seg);
	sp->max = max;
	if (newseg(sp) < 0)
		exit(EX_CANTCREAT);
	pthread_mutex_init(&sp->mu, NULL);
	pthread_cond_init(&sp->cv, NULL);
	return sp;
}

/* Finishes the current segment and starts the next; mu held. */
static int
rotate(struct wa_spool *sp)
{
	while (sp->syncing)
		pthread_cond_wait(&sp->cv, &sp->mu);
	if (fdatasync(sp->fd) < 0)
		return -1;
	sp->fsyncs++;
	close(sp->fd);
	sp->fd = -1;
	sp->synced = sp->written;
	return newseg(sp);
}

/* Writes all of s, or cuts the segment back to where it was. */
static int
put(struct wa_spool *sp, const char *s, size_t n)
{
	size_t done = 0;
	ssize_t w;
	int e;

	while (done < n) {
		w = write(sp->fd, s + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			e = w < 0 ? errno : ENOSPC;
			if (done > 0 && ftruncate(sp->fd, sp->size) < 0)
				sp->broken = e;
			errno = e;
			return -1;
		}
		done += w;
	}
	return 0;
}

/*
 * Appends body (n bytes in a buffer with room for n + 1: its newlines
 * become spaces and a '\n' is added) and returns 0 once it is on disk;
 * -1 with errno set when it could not be stored. Thread-safe.
 */
int
wa_spool_append(struct wa_spool *sp, char *body, size_t n)
{
	uint64_t mine, upto;
	size_t i;
	int fd, r, e = 0;

	for (i = 0; i < n; i++)
		if (body[i] == '\n' || body[i] == '\r')
			body[i] = ' ';
	body[n] = '\n';
	pthread_mutex_lock(&sp->mu);
	if (!sp->broken && sp->size >= sp->max && rotate(sp) < 0)
		sp->broken = errno;
	if (sp->broken || put(sp, body, n + 1) < 0) {
		e = sp->broken ? sp->broken : errno;
		pthread_mutex_unlock(&sp->mu);
		errno = e;
		return -1;
	}
	sp->size += n + 1;
	sp->written += n + 1;
	sp->bodies++;
	mine = sp->written;
	while (sp->synced < mine && !sp->broken) {
		if (sp->syncing) {
			pthread_cond_wait(&sp->cv, &sp->mu);
			continue;
		}
		sp->syncing = 1;
		upto = sp->written;
		fd = sp->fd;
		pthread_mutex_unlock(&sp->mu);
		r = fdatasync(fd);
		e = errno;
		pthread_mutex_lock(&sp->mu);
		sp->syncing = 0;
		sp->fsyncs++;
		if (r < 0)
			sp->broken = e;
		else if (upto > sp->synced)
			sp->synced = upto;
		pthread_cond_broadcast(&sp->cv);
	}
	r = sp->synced >= mine ? 0 : -1;
	e = sp->broken;
	pthread_mutex_unlock(&sp->mu);
	errno = e;
	return r;
}

void
wa_spool_close(struct wa_spool *sp)
{
	pthread_mutex_lock(&sp->mu);
	while (sp->syncing)
		pthread_cond_wait(&sp->cv, &sp->mu);
	if (sp->fd >= 0) {
		if (fdatasync(sp->fd) < 0)
			wa_warn("sync %s:", sp->dir);
		close(sp->fd);
	}
	pthread_mutex_unlock(&sp->mu);
	close(sp->lockfd);
	close(sp->dirfd);
	pthread_mutex_destroy(&sp->mu);
	pthread_cond_destroy(&sp->cv);
	free(sp->dir);
	free(sp);
}

static unsigned long
count(const char *s, size_t n)
{
	const char *end = s + n;
	unsigned long lines = 0;

	while ((s = memchr(s, '\n', end - s)) != NULL) {
		lines++;
		s++;
	}
	return lines;
}

/* Opens segment seg at offset off; counts the lines before off. */
static int
openseg(struct wa_spool_reader *r, long long seg, long long off)
{
	struct stat st;
	char buf[65536];
	long long left;
	ssize_t n;

	free(r->path);
	r->path = wa_spool_segment_path(r->dir, seg);
	if ((r->fd = open(r->path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	r->seg = seg;
	r->off = 0;
	r->lineno = 0;
	r->start = r->len = 0;
	r->skipping = 0;
	r->long_len = 0;
	if (fstat(r->fd, &st) == 0 && st.st_size < off) {
		wa_warn("%s is shorter (%lld bytes) than the checkpoint "
		    "(%lld): data lost in a crash?", r->path,
		    (long long)st.st_size, off);
		off = st.st_size;
	}
	for (left = off; left > 0; left -= n) {
		n = read(r->fd, buf, left < (long long)sizeof buf ?
		    (size_t)left : sizeof buf);
		if (n <= 0)
			return -1;
		r->lineno += count(buf, n);
	}
	r->off = off;
	return 0;
}

/*
 * Holds dir's reader lock (dir/reader.lock) while the process lives: one
 * reader of a spool on the host, whatever Postgres is behind (a pooler
 * keeps no session lock). Exits 75 when another process has it, 73 when
 * it cannot be made.
 */
void
wa_spool_reader_lock(const char *dir)
{
	if (lockfile(dir, "reader.lock") < 0)
		wa_die(EX_TEMPFAIL, "another %s follows %s", wa_prog, dir);
}

/*
 * Follows dir from segment seg, offset off (seg -1: from the oldest
 * segment there). A checkpoint in a segment that no longer exists goes
 * on from the next one.
 */
void
wa_spool_reader_open(struct wa_spool_reader *r, const char *dir,
    long long seg, long long off)
{
	memset(r, 0, sizeof *r);
	r->dir = wa_strdup(dir);
	r->fd = -1;
	r->seg = seg;
	r->off = off;
	if (seg >= 0 && openseg(r, seg, off) < 0) {
		if (errno != ENOENT)
			wa_die(EX_NOINPUT, "open %s:", r->path);
		r->fd = -1;
		r->seg = seg;
		r->off = off;
	}
}

/* Reads more of the segment; 1 when some came, 0 at its end, -1. */
static int
more(struct wa_spool_reader *r)
{
	ssize_t n;

	if (r->start > 0) {
		memmove(r->buf, r->buf + r->start, r->len - r->start);
		r->len -= r->start;
		r->start = 0;
	}
	if (r->len > WA_LINE_MAX) {
		/* Too long for a body: dropped here, kept in the file. */
		if (!r->skipping)
			r->long_off = r->off;
		r->off += r->len;
		r->len = 0;
		r->skipping = 1;
	}
	if (r->cap - r->len < CHUNK) {
		r->cap = r->len + CHUNK + 1;
		r->buf = wa_realloc(r->buf, r->cap);
	}
	do
		n = read(r->fd, r->buf + r->len, r->cap - r->len - 1);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	r->len += n;
	return n > 0;
}

/* The bytes of the unfinished line, those dropped included. */
static long long
torn(const struct wa_spool_reader *r)
{
	return (long long)(r->len - r->start) +
	    (r->skipping ? r->off - r->long_off : 0);
}

/*
 * The next whole line in *line (NUL-terminated, without '\n'): returns
 * WA_LINE, WA_TOOLONG (a line over WA_LINE_MAX was skipped: long_off and
 * long_len say where it is in the segment, *line holds only its end),
 * WA_AGAIN when no whole line is there yet, or WA_ERROR (errno set).
 * After it, (seg, off) is where the next line starts: the checkpoint to
 * save.
 */
int
wa_spool_next(struct wa_spool_reader *r, char **line, size_t *len)
{
	long long next;
	char *nl;
	int m;

	for (;;) {
		if (r->fd < 0) {
			if ((next = scan(r->dir, r->seg, NULL)) < 0)
				return WA_AGAIN;
			if (openseg(r, next, 0) < 0)
				return WA_ERROR;
		}
		nl = r->len > r->start ? memchr(r->buf + r->start, '\n',
		    r->len - r->start) : NULL;
		if (nl != NULL) {
			*line = r->buf + r->start;
			*len = nl - *line;
			*nl = '\0';
			if (!r->skipping && *len > WA_LINE_MAX) {
				/* Whole in the buffer, but too long. */
				r->skipping = 1;
				r->long_off = r->off;
			}
			if (r->skipping)
				r->long_len = r->off + *len - r->long_off;
			r->start += *len + 1;
			r->off += *len + 1;
			r->lineno++;
			if (!r->skipping)
				return WA_LINE;
			r->skipping = 0;
			return WA_TOOLONG;
		}
		if ((m = more(r)) != 0) {
			if (m < 0)
				return WA_ERROR;
			continue;
		}
		if ((next = scan(r->dir, r->seg, NULL)) < 0)
			return WA_AGAIN;
		/* The writer has moved on: this segment is complete. */
		if ((m = more(r)) != 0) {
			if (m < 0)
				return WA_ERROR;
			continue;
		}
		if (r->len > r->start || r->skipping)
			wa_warn("%s: %lld bytes after the last line skipped "
			    "(a body cut short by a crash, never "
			    "acknowledged)", r->path, torn(r));
		close(r->fd);
		r->fd = -1;
		r->seg = next;
		r->off = 0;
		if (openseg(r, next, 0) < 0)
			return WA_ERROR;
	}
}

/*
 * Reads up to n bytes of the line that the last WA_TOOLONG skipped, from
 * byte at of it, while its segment is still the one open: returns how
 * many, 0 past its end, or -1 (errno set; EIO when the segment is
 * shorter now than when it was read).
 */
ssize_t
wa_spool_reread(struct wa_spool_reader *r, char *buf, size_t n,
    long long at)
{
	ssize_t got;

	if (at >= r->long_len)
		return 0;
	if ((long long)n > r->long_len - at)
		n = r->long_len - at;
	do
		got = pread(r->fd, buf, n, r->long_off + at);
	while (got < 0 && errno == EINTR);
	if (got == 0)
		errno = EIO;
	return got > 0 ? got : -1;
}

void
wa_spool_reader_close(struct wa_spool_reader *r)
{
	if (r->fd >= 0)
		close(r->fd);
	free(r->buf);
	free(r->path);
	free(r->dir);
}
