/*
 * core/sig.h: signals and time. SIGTERM and SIGINT set wa_stopping: 1 at
 * the first (drain and exit), 2 from the second (stop at once). The
 * caught signals are delivered only while the program waits (wa_wait,
 * wa_sleep_ms), so none slips between a check and a wait;
 * wa_signal_then's work runs right after such a wait.
 */
#ifndef WA_CORE_SIG_H
#define WA_CORE_SIG_H

#include <poll.h>
#include <signal.h>
#include <stdint.h>

extern volatile sig_atomic_t wa_stopping;

void wa_signals(void);
/* Ends the program by the last stop signal, as if never caught. */
void wa_signal_exit(void) __attribute__((noreturn));
void wa_signal(int sig, void (*fn)(int));
void wa_signal_then(int sig, void (*fn)(void));
int wa_wait(struct pollfd *fds, int n, int timeout);
/* A reader of fd that has gone ends the program (74) in its next wait. */
void wa_watch_reader(int fd);
int wa_sleep_ms(int64_t ms);
/*
 * The ms a wait may run on so that several events are taken in one
 * wake-up: wa-send's sockets (api/multi.c), wa-throttle's tokens. One
 * value, so that the lines wa-throttle lets go together reach wa-send
 * as one wake-up's worth.
 */
#define WA_GATHER_MS 5

int64_t wa_now_ms(void);	/* monotonic */
int64_t wa_now_ns(void);	/* monotonic */
int64_t wa_unix_ms(void);	/* wall clock */

#endif
