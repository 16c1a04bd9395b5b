/*
 * state.c: where a host keeps what its processes share (the state
 * directory: one for every session, cron job and service, so that all of
 * them share one bucket per number) and where results wait for Postgres
 * (the results directory: one that survives a reboot). Nothing here
 * knows what goes in them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/state.h"

static char dir[4096];
static int in_tmp;		/* dir is the fallback under /tmp */

/*
 * WA_STATE_DIR; else WA_RUN_DIR (/run/wapipe) when we may write it, or
 * make it: one directory for every session and cron job on the host, so
 * that they all share one bucket per number; else /tmp/wapipe-UID, the
 * same for every session of the user. Looks, makes nothing.
 */
const char *
wa_state_dir(void)
{
	const char *env = getenv("WA_STATE_DIR");

	in_tmp = 0;
	if (env != NULL && *env)
		snprintf(dir, sizeof dir, "%s", env);
	else if (access(WA_RUN_DIR, W_OK | X_OK) == 0 ||
	    (errno == ENOENT && access(WA_RUN_PARENT, W_OK | X_OK) == 0))
		snprintf(dir, sizeof dir, "%s", WA_RUN_DIR);
	else {
		snprintf(dir, sizeof dir, "/tmp/wapipe-%ld", (long)getuid());
		in_tmp = 1;
	}
	return dir;
}

/*
 * Where results wait for Postgres (pg/spill.c), a place that survives a
 * reboot: WA_RESULTS_DIR; else WA_LIB_DIR/results (/var/lib/wapipe, the
 * package's) when we may write there; else
 * ${XDG_STATE_HOME:-$HOME/.local/state}/wapipe/results; else the state
 * directory's results/.
 */
const char *
wa_results_dir(void)
{
	static char res[4096];
	const char *env = getenv("WA_RESULTS_DIR");
	const char *xdg = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");

	if (env != NULL && *env)
		snprintf(res, sizeof res, "%s", env);
	else if (access(WA_LIB_DIR "/results", W_OK | X_OK) == 0 ||
	    (errno == ENOENT && access(WA_LIB_DIR, W_OK | X_OK) == 0))
		snprintf(res, sizeof res, "%s/results", WA_LIB_DIR);
	else if (xdg != NULL && *xdg == '/')
		snprintf(res, sizeof res, "%s/wapipe/results", xdg);
	else if (home != NULL && *home == '/')
		snprintf(res, sizeof res, "%s/.local/state/wapipe/results",
		    home);
	else
		snprintf(res, sizeof res, "%s/results", wa_state_dir());
	return res;
}

/*
 * Makes the state directory. Under /tmp anyone may have made it first:
 * it must then be ours, a real directory, and writable by us alone.
 */
int
wa_state_dir_make(void)
{
	struct stat st;

	if (mkdir(wa_state_dir(), in_tmp ? 0700 : 0750) < 0 &&
	    errno != EEXIST) {
		wa_warn("mkdir %s:", dir);
		return -1;
	}
	if (!in_tmp)
		return 0;
	if (lstat(dir, &st) < 0) {
		wa_warn("%s:", dir);
		return -1;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
	    (st.st_mode & 022) != 0) {
		wa_warn("%s is not a directory of yours that only you may "
		    "write: set WA_STATE_DIR", dir);
		return -1;
	}
	return 0;
}

/* This boot's id, which a CLOCK_MONOTONIC time is only good within. */
void
wa_boot_id(char *id, size_t n)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

	memset(id, 0, n);
	if (f != NULL) {
		if (fgets(id, n, f) == NULL)
			id[0] = '\0';
		fclose(f);
	}
}

/*
 * Maps WA_STATE_DIR/KIND-NUMBER, made if missing and grown to size,
 * locked (LOCK_EX: the caller unlocks once it has checked the state);
 * its descriptor in *fd. NULL after a message.
 */
void *
wa_state_map(const char *kind, const char *number, size_t size, int *fd)
{
	struct wa_buf path = { 0 };
	struct stat st;
	void *s = NULL;

	if (wa_state_dir_make() < 0)
		return NULL;
	wa_buf_printf(&path, "%s/%s-%s", dir, kind, number);
	*fd = open(path.s, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (*fd < 0 || flock(*fd, LOCK_EX) < 0 || fstat(*fd, &st) < 0 ||
	    (st.st_size < (off_t)size && ftruncate(*fd, size) < 0))
		wa_warn("open %s:", path.s);
	else if ((s = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
	    *fd, 0)) == MAP_FAILED) {
		wa_warn("mmap %s:", path.s);
		s = NULL;
	}
	if (s == NULL && *fd >= 0)
		close(*fd);
	wa_buf_free(&path);
	return s;
}
