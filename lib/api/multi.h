/*
 * api/multi.h: a libcurl multi handle driven by epoll through its socket
 * interface, so that each wake-up costs in proportion to the sockets that
 * are ready, not to the calls in flight.
 */
#ifndef WA_API_MULTI_H
#define WA_API_MULTI_H

#include <curl/curl.h>

struct wa_multi;

/* For up to calls at once; over TLS (tls) one connection per 25. */
struct wa_multi *wa_multi_new(long calls, int tls);
CURLM *wa_multi_handle(struct wa_multi *m);
/* Starts e's call, counting the connections it opens. */
void wa_multi_add(struct wa_multi *m, CURL *e);
/* After e's call ended (an answer over HTTP/1.x widens the bound). */
void wa_multi_ended(struct wa_multi *m, CURL *e);
void wa_multi_kick(struct wa_multi *m);
/* Waits for sockets, timers, fd (-1: none) or timeout ms, and drives;
 * gather: wakes at most every few ms, the caller having room to spare. */
int wa_multi_wait(struct wa_multi *m, int fd, int timeout, int gather);
void wa_multi_free(struct wa_multi *m);

#endif
