/*
 * core/state.h: the host's state directory and the results directory.
 * Reads WA_STATE_DIR, WA_RESULTS_DIR, XDG_STATE_HOME and HOME, and
 * /proc/sys/kernel/random/boot_id; writes only the state directory (made
 * 0750, or 0700 under /tmp) and the files KIND-NUMBER in it (0600),
 * mapped shared by every process on the host: api/bucket.c's buckets,
 * api/share.c's shares. The results directory is pg/spill.c's to make.
 */
#ifndef WA_CORE_STATE_H
#define WA_CORE_STATE_H

#include <stddef.h>

#define WA_RUN_PARENT "/run"
#define WA_RUN_DIR WA_RUN_PARENT "/wapipe"
#define WA_LIB_DIR "/var/lib/wapipe"

/* WA_STATE_DIR, or the default (/run/wapipe, else /tmp/wapipe-UID). */
const char *wa_state_dir(void);
/* WA_RESULTS_DIR, or the default, which survives a reboot. */
const char *wa_results_dir(void);
/* Makes the state directory: 0, or -1 after a message. */
int wa_state_dir_make(void);
/*
 * WA_STATE_DIR/KIND-NUMBER mapped shared, size bytes, made if missing,
 * locked (LOCK_EX) for the caller to check and unlock; NULL after a
 * message.
 */
void *wa_state_map(const char *kind, const char *number, size_t size,
    int *fd);
/* This boot's id, in id[n] (empty when unknown). */
void wa_boot_id(char *id, size_t n);

#endif
