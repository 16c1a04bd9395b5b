/*
 * later.h: answers held back without a thread per request. An MHD
 * access handler parks its connection with wa_later_hold; a timer thread
 * resumes it at its time and MHD calls the handler again, which answers.
 * The daemon must run with MHD_ALLOW_SUSPEND_RESUME.
 */
#ifndef WA_FAKE_LATER_H
#define WA_FAKE_LATER_H

#include <microhttpd.h>

#include "heap.h"

enum {
	WA_LATER_HELD = 0,	/* still waiting */
	WA_LATER_DUE = 1,	/* its time came: answer now */
	WA_LATER_STOP = 2	/* the server is stopping: close */
};

/* Lives in the caller's per-request state until the handler runs again. */
struct wa_later_item {
	struct wa_heap_item	 h;
	struct MHD_Connection	*conn;
	int			 woke;
};

struct wa_later;
struct wa_later *wa_later_start(void);
int wa_later_hold(struct wa_later *l, struct wa_later_item *it,
    struct MHD_Connection *conn, int64_t due);
void wa_later_drain(void *arg);
void wa_later_free(struct wa_later *l);

#endif
