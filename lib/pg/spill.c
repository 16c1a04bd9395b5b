/*
 * spill.c: send results kept on disk until Postgres takes them.
 *
 * Where: WA_RESULTS_DIR, by default /var/lib/wapipe/results or
 * ~/.local/state/wapipe/results (core/state.c: wa_results_dir), a place
 * that survives a reboot, unlike WA_STATE_DIR under /run. What: a
 * file per wa-record process, "<unix ms>-<pid>.ndjson", holding the
 * result lines as wa-send wrote them, so a file is also valid input for
 * wa-record. Concurrency: the owner locks its file (flock) for its whole
 * life; it makes it under a name ending in ".tmp", locks it, then renames
 * it, so no reader ever sees an unlocked file of a live process. A reader
 * applies only files it can lock, and removes each once applied. A kill
 * -9 in the middle of a write leaves at worst a last line without its
 * '\n': a reader skips it and says so. Applying a result twice is
 * harmless: results are fenced on (id, attempt).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/err.h"
#include "core/sig.h"
#include "core/state.h"
#include "pg/results.h"
#include "pg/spill.h"

#define BATCH 500

struct wa_spill {
	int		 fd;
	char		*path;
	unsigned long	 lines;
	int		 dirty;		/* written since the last sync */
};

/*
 * The results directory (core/state.c's wa_results_dir), made if missing
 * with its parents; NULL after saying why.
 */
static const char *
dir(void)
{
	static char path[4200];
	char *p;

	snprintf(path, sizeof path, "%s", wa_results_dir());
	for (p = path + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		if (mkdir(path, 0700) < 0 && errno != EEXIST) {
			wa_warn("mkdir %s:", path);
			return NULL;
		}
		*p = '/';
	}
	if (mkdir(path, 0700) < 0 && errno != EEXIST) {
		wa_warn("mkdir %s:", path);
		return NULL;
	}
	return path;
}

static void
sync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

struct wa_spill *
wa_spill_new(void)
{
	struct wa_spill *s = wa_alloc(sizeof *s);

	s->fd = -1;
	return s;
}

/* Makes this process's file, locked: 0, or -1 after saying why. */
static int
create(struct wa_spill *s)
{
	const char *d = dir();
	char tmp[4320], path[4300];

	if (d == NULL)
		return -1;
	snprintf(path, sizeof path, "%s/%013lld-%ld.ndjson", d,
	    (long long)wa_unix_ms(), (long)getpid());
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	s->fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC,
	    0600);
	if (s->fd < 0) {
		wa_warn("create %s:", tmp);
		return -1;
	}
	if (flock(s->fd, LOCK_EX) < 0 || rename(tmp, path) < 0) {
		wa_warn("%s:", path);
		close(s->fd);
		s->fd = -1;
		unlink(tmp);
		return -1;
	}
	sync_dir(d);
	s->path = wa_strdup(path);
	return 0;
}

int
wa_spill_add(struct wa_spill *s, const char *line, size_t len)
{
	struct iovec v[2] = { { (char *)line, len }, { "\n", 1 } };
	size_t want = len + 1;
	ssize_t w;

	if (s->fd < 0 && create(s) < 0)
		return -1;
	/* One writev: a kill leaves a line whole or its head alone. */
	while (want > 0) {
		if ((w = writev(s->fd, v, 2)) < 0) {
			if (errno == EINTR)
				continue;
			wa_warn("write %s:", s->path);
			return -1;
		}
		want -= w;
		while (w > 0 && (size_t)w >= v[0].iov_len) {
			w -= v[0].iov_len;
			v[0] = v[1];
			v[1].iov_len = 0;
		}
		v[0].iov_base = (char *)v[0].iov_base + w;
		v[0].iov_len -= w;
	}
	s->lines++;
	s->dirty = 1;
	return 0;
}

int
wa_spill_sync(struct wa_spill *s)
{
	if (s->fd < 0 || !s->dirty)
		return 0;
	if (fdatasync(s->fd) < 0) {
		wa_warn("fsync %s:", s->path);
		return -1;
	}
	s->dirty = 0;
	return 0;
}

/* Everything in the file was applied: it starts empty again. */
void
wa_spill_forget(struct wa_spill *s)
{
	if (s->fd < 0 || s->lines == 0)
		return;
	if (ftruncate(s->fd, 0) < 0)
		wa_warn("truncate %s:", s->path);
	s->lines = 0;
	s->dirty = 0;
}

unsigned long
wa_spill_lines(const struct wa_spill *s)
{
	return s->lines;
}

const char *
wa_spill_path(const struct wa_spill *s)
{
	return s->path;
}

void
wa_spill_close(struct wa_spill *s)
{
	if (s == NULL)
		return;
	if (s->fd >= 0) {
		if (s->lines == 0)
			unlink(s->path);
		else
			wa_spill_sync(s);
		close(s->fd);
	}
	free(s->path);
	free(s);
}

/* Says why a line of a kept file was not applied. */
static void
refused(const char *line, size_t len, const char *name, unsigned long lineno,
    const char *why, void *arg)
{
	(void)line;
	(void)len;
	(void)arg;
	wa_warn("%s:%lu: postgres refused this result: %s", name, lineno, why);
}

/*
 * Applies the lines of the locked file f (at path) in batches: 0, or -1
 * when Postgres went away.
 */
static int
replay_file(struct wa_results *r, FILE *f, const char *path,
    unsigned long long *lines)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o;
	char *line = NULL;
	size_t cap = 0;
	unsigned long lineno = 0;
	ssize_t n;
	const char *why;
	int ret = 0;

	if (tok == NULL)
		wa_die(EX_OSERR, "out of memory");
	wa_results_on_refused(r, refused, NULL);
	while (ret == 0 && (n = getline(&line, &cap, f)) > 0) {
		lineno++;
		if (line[n - 1] != '\n') {
			wa_warn("%s:%lu: a result cut short (its writer was "
			    "killed): not applied", path, lineno);
			break;
		}
		line[--n] = '\0';
		json_tokener_reset(tok);
		o = json_tokener_parse_ex(tok, line, n);
		why = o == NULL ? "not valid JSON" : wa_results_take(r, o,
		    line, n, path, lineno);
		if (why != NULL)
			wa_warn("%s:%lu: %s: not applied", path, lineno, why);
		json_object_put(o);
		if (wa_results_count(r) >= BATCH) {
			if (wa_results_apply(r, NULL, NULL) < 0)
				ret = -1;
			else
				*lines += wa_results_count(r);
			wa_results_clear(r);
		}
	}
	if (ret == 0 && wa_results_apply(r, NULL, NULL) < 0)
		ret = -1;
	else if (ret == 0)
		*lines += wa_results_count(r);
	wa_results_clear(r);
	free(line);
	json_tokener_free(tok);
	return ret;
}

static int
bynamecmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
wa_spill_replay(struct wa_results *r, unsigned long long *lines)
{
	const char *d = dir();
	struct dirent *e;
	struct stat st;
	char **names = NULL, path[4600];
	size_t n = 0, i, len;
	DIR *dp;
	FILE *f;
	int fd, done = 0;

	if (d == NULL || (dp = opendir(d)) == NULL)
		return 0;
	while ((e = readdir(dp)) != NULL) {
		len = strlen(e->d_name);
		if (len > 7 && strcmp(e->d_name + len - 7, ".ndjson") == 0) {
			names = wa_realloc(names, (n + 1) * sizeof *names);
			names[n++] = wa_strdup(e->d_name);
		}
	}
	closedir(dp);
	if (n > 1)
		qsort(names, n, sizeof *names, bynamecmp);
	for (i = 0; i < n && done >= 0; i++) {
		snprintf(path, sizeof path, "%s/%s", d, names[i]);
		if ((fd = open(path, O_RDWR | O_CLOEXEC)) < 0)
			continue;
		/* Held: its writer lives. Unlinked: another reader had it. */
		if (flock(fd, LOCK_EX | LOCK_NB) < 0 || fstat(fd, &st) < 0 ||
		    st.st_nlink == 0 || (f = fdopen(fd, "r")) == NULL) {
			close(fd);
			continue;
		}
		if (st.st_size > 0)
			wa_warn("applying the results kept in %s", path);
		if (replay_file(r, f, path, lines) < 0)
			done = -1;
		else {
			unlink(path);
			sync_dir(d);
			done++;
		}
		fclose(f);
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return done;
}
