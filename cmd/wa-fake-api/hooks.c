/*
 * hooks.c: the webhook sender of hooks.h. Statuses wait in a heap
 * until their time, then in a ready queue until a batch is full or the
 * oldest has lingered long enough; a batch becomes one POST, grouped by
 * phone number into changes[] of one entry[], signed over the exact bytes
 * sent. An inbound message waits and goes the same way, in a change of
 * its own. A POST that is not answered 200 (or cannot connect) goes back,
 * whole and unchanged, into a retry heap with exponential backoff; it is
 * never dropped before wa_hooks_stop, which counts what is left.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/sig.h"
#include "spool/hmac.h"
#include "heap.h"
#include "hooks.h"

struct status {
	struct wa_heap_item h;		/* due: wa_now_ms time */
	const char	*pnid;		/* inside text, after the status */
	size_t		 len;
	int		 own;		/* a change's value of its own: its
					   field (hooks.h), or 0 */
	char		 text[];	/* the statuses[] element, NUL, pnid */
};

struct post {
	struct wa_heap_item h;		/* due: the next attempt */
	uint64_t	 id;
	int		 attempt;
	int		 n;		/* statuses in the body */
	int		 slot;		/* in fly[] while under way */
	struct wa_buf	 body;
	char		 sig[WA_SIGNATURE_LEN + 1];
	char		 err[CURL_ERROR_SIZE];
	struct curl_slist *hdrs;
	CURL		*easy;		/* while under way */
};

struct wa_hooks {
	struct wa_hooks_conf c;
	pthread_mutex_t	 mu;
	pthread_t	 thread;
	CURLM		*multi;
	struct wa_heap	 waiting;	/* statuses not yet due */
	struct status	**ready;	/* due statuses, oldest first */
	size_t		 ready_off, ready_n, ready_cap;
	struct wa_heap	 retry;		/* posts to try again */
	struct post	**fly;		/* posts under way, c.inflight slots */
	int		 flying;
	uint64_t	 next_id;
	int64_t		 wake_at;	/* when the thread means to wake */
	int		 stop;
	int		 logfd;
	struct wa_hooks_stats st;
};

static size_t
discard(char *p, size_t size, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return size * n;
}

static int
by_number(const void *a, const void *b)
{
	const struct status *x = *(struct status *const *)a;
	const struct status *y = *(struct status *const *)b;
	int c = strcmp(x->pnid, y->pnid);

	if (c == 0)
		c = x->own - y->own;
	return c ? c : x->h.seq < y->h.seq ? -1 : 1;
}

const char *
wa_hooks_display_phone(const struct wa_hooks *h)
{
	return h->c.display_phone;
}

/* Starts the change of s: its value up to the statuses, or its own. */
static void
open_change(struct wa_hooks *h, struct wa_buf *b, const struct status *s)
{
	if (s->own == WA_HOOKS_TEMPLATE) {
		wa_buf_puts(b, "{\"value\":{");
		return;
	}
	wa_buf_puts(b, "{\"value\":{\"messaging_product\":\"whatsapp\","
	    "\"metadata\":{\"display_phone_number\":");
	wa_buf_json_string(b, h->c.display_phone, strlen(h->c.display_phone));
	wa_buf_puts(b, ",\"phone_number_id\":");
	wa_buf_json_string(b, s->pnid, strlen(s->pnid));
	wa_buf_puts(b, s->own ? "}," : "},\"statuses\":[");
}

static void
close_change(struct wa_buf *b, const struct status *s)
{
	wa_buf_puts(b, s->own == WA_HOOKS_TEMPLATE ?
	    "},\"field\":\"message_template_status_update\"}" :
	    s->own == WA_HOOKS_PREFERENCES ?
	    "},\"field\":\"user_preferences\"}" :
	    s->own ? "},\"field\":\"messages\"}" :
	    "]},\"field\":\"messages\"}");
}

/* Takes up to c.batch ready statuses into one body. */
static struct post *
build(struct wa_hooks *h)
{
	struct post *p = wa_alloc(sizeof *p);
	struct status **s = h->ready + h->ready_off;
	struct wa_buf *b = &p->body;
	size_t i, n = h->ready_n < (size_t)h->c.batch ? h->ready_n :
	    (size_t)h->c.batch;

	qsort(s, n, sizeof *s, by_number);
	wa_buf_puts(b, "{\"object\":\"whatsapp_business_account\","
	    "\"entry\":[{\"id\":");
	wa_buf_json_string(b, h->c.waba_id, strlen(h->c.waba_id));
	wa_buf_puts(b, ",\"changes\":[");
	for (i = 0; i < n; i++) {
		if (i == 0 || s[i]->own || s[i - 1]->own ||
		    strcmp(s[i]->pnid, s[i - 1]->pnid) != 0) {
			if (i > 0) {
				close_change(b, s[i - 1]);
				wa_buf_add(b, ",", 1);
			}
			open_change(h, b, s[i]);
		} else
			wa_buf_add(b, ",", 1);
		wa_buf_add(b, s[i]->text, s[i]->len);
	}
	close_change(b, s[n - 1]);
	wa_buf_puts(b, "]}]}");
	for (i = 0; i < n; i++)
		free(s[i]);
	wa_hmac_signature(h->c.secret, b->s, b->len, p->sig);
	p->n = n;
	p->id = ++h->next_id;
	h->ready_off += n;
	h->ready_n -= n;
	return p;
}

static void
send_post(struct wa_hooks *h, struct post *p)
{
	struct wa_buf sig = { 0 };
	CURL *e = curl_easy_init();
	int i;

	if (e == NULL)
		wa_die(EX_OSERR, "webhooks: curl_easy_init failed");
	if (p->hdrs == NULL) {
		wa_buf_printf(&sig, "X-Hub-Signature-256: %s", p->sig);
		p->hdrs = curl_slist_append(NULL,
		    "Content-Type: application/json");
		p->hdrs = curl_slist_append(p->hdrs, sig.s);
		p->hdrs = curl_slist_append(p->hdrs, "Expect:");
		wa_buf_free(&sig);
	}
	curl_easy_setopt(e, CURLOPT_URL, h->c.url);
	curl_easy_setopt(e, CURLOPT_POSTFIELDS, p->body.s);
	curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
	    (curl_off_t)p->body.len);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, p->hdrs);
	curl_easy_setopt(e, CURLOPT_USERAGENT, "facebookexternalua");
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)h->c.timeout_ms);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, p->err);
	curl_easy_setopt(e, CURLOPT_PRIVATE, p);
	p->easy = e;
	for (i = 0; h->fly[i] != NULL; i++)
		;
	h->fly[i] = p;
	p->slot = i;
	p->attempt++;
	p->err[0] = '\0';
	h->flying++;
	h->st.posts++;
	curl_multi_add_handle(h->multi, e);
}

/*
 * Under the lock: starts the POSTs that are due, as slots allow; returns
 * how long the thread may sleep, in ms.
 */
static int64_t
start_due(struct wa_hooks *h, int64_t now)
{
	struct wa_heap_item *top;
	struct status *s;
	int64_t next = now + 1000;

	while ((top = wa_heap_top(&h->waiting)) != NULL && top->due <= now) {
		s = (struct status *)wa_heap_pop(&h->waiting);
		if (h->ready_off + h->ready_n == h->ready_cap) {
			memmove(h->ready, h->ready + h->ready_off,
			    h->ready_n * sizeof *h->ready);
			h->ready_off = 0;
			if (h->ready_n == h->ready_cap) {
				h->ready_cap *= 2;
				h->ready = wa_realloc(h->ready,
				    h->ready_cap * sizeof *h->ready);
			}
		}
		h->ready[h->ready_off + h->ready_n++] = s;
	}
	while (h->flying < h->c.inflight) {
		top = wa_heap_top(&h->retry);
		if (top != NULL && top->due <= now)
			send_post(h, (struct post *)wa_heap_pop(&h->retry));
		else if (h->ready_n >= (size_t)h->c.batch || (h->ready_n > 0 &&
		    h->ready[h->ready_off]->h.due + h->c.linger_ms <= now))
			send_post(h, build(h));
		else
			break;
	}
	if ((top = wa_heap_top(&h->waiting)) != NULL && top->due < next)
		next = top->due;
	/* With every slot taken, only an ending POST (a socket) matters. */
	if (h->flying == h->c.inflight)
		return next - now;
	if ((top = wa_heap_top(&h->retry)) != NULL && top->due < next)
		next = top->due;
	if (h->ready_n > 0 && h->ready[h->ready_off]->h.due + h->c.linger_ms <
	    next)
		next = h->ready[h->ready_off]->h.due + h->c.linger_ms;
	return next > now ? next - now : 0;
}

static void
log_attempt(struct wa_hooks *h, struct post *p, long code, int ok)
{
	struct wa_buf line = { 0 };

	if (h->logfd < 0)
		return;
	wa_buf_printf(&line, "{\"t\":%lld,\"post\":%llu,\"attempt\":%d,"
	    "\"statuses\":%d,\"bytes\":%zu,\"http_status\":",
	    (long long)wa_unix_ms(),
	    (unsigned long long)p->id, p->attempt, p->n, p->body.len);
	if (code > 0)
		wa_buf_printf(&line, "%ld", code);
	else
		wa_buf_puts(&line, "null");
	wa_buf_printf(&line, ",\"delivered\":%s", ok ? "true" : "false");
	if (p->err[0] != '\0') {
		wa_buf_puts(&line, ",\"error\":");
		wa_buf_json_string(&line, p->err, strlen(p->err));
	}
	wa_buf_puts(&line, "}\n");
	if (write(h->logfd, line.s, line.len) != (ssize_t)line.len)
		wa_warn("webhook log:");
	wa_buf_free(&line);
}

/* A POST ended: done with it on 200, else back in line for a retry. */
static void
finish(struct wa_hooks *h, CURL *e, CURLcode rc)
{
	struct post *p;
	long code = 0;
	int64_t delay;
	int ok, i;

	curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&p);
	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
	curl_multi_remove_handle(h->multi, e);
	curl_easy_cleanup(e);
	ok = rc == CURLE_OK && code == 200;
	if (rc == CURLE_OK && !ok)
		snprintf(p->err, sizeof p->err, "HTTP %ld", code);
	log_attempt(h, p, code, ok);
	pthread_mutex_lock(&h->mu);
	h->fly[p->slot] = NULL;
	h->flying--;
	if (ok) {
		h->st.delivered += p->n;
		curl_slist_free_all(p->hdrs);
		wa_buf_free(&p->body);
		free(p);
	} else {
		delay = h->c.retry_ms;
		for (i = 1; i < p->attempt && delay < h->c.retry_max_ms; i++)
			delay *= 2;
		p->h.due = wa_now_ms() +
		    (delay < h->c.retry_max_ms ? delay : h->c.retry_max_ms);
		wa_heap_push(&h->retry, &p->h);
	}
	pthread_mutex_unlock(&h->mu);
}

static void *
run(void *arg)
{
	struct wa_hooks *h = arg;
	int64_t wait;
	int running, left, ended;
	CURLMsg *m;

	for (;;) {
		pthread_mutex_lock(&h->mu);
		if (h->stop) {
			pthread_mutex_unlock(&h->mu);
			break;
		}
		wait = start_due(h, wa_now_ms());
		h->wake_at = wa_now_ms() + wait;
		pthread_mutex_unlock(&h->mu);
		curl_multi_perform(h->multi, &running);
		ended = 0;
		while ((m = curl_multi_info_read(h->multi, &left)) != NULL)
			if (m->msg == CURLMSG_DONE) {
				finish(h, m->easy_handle, m->data.result);
				ended = 1;
			}
		/* A freed slot may let a due batch go now. */
		if (!ended)
			curl_multi_poll(h->multi, NULL, 0, (int)wait, NULL);
	}
	return NULL;
}

struct wa_hooks *
wa_hooks_start(const struct wa_hooks_conf *c)
{
	struct wa_hooks *h = wa_alloc(sizeof *h);

	h->c = *c;
	h->logfd = -1;
	if (c->log != NULL && (h->logfd = open(c->log,
	    O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0)
		wa_die(EX_CANTCREAT, "open %s:", c->log);
	h->fly = wa_alloc(c->inflight * sizeof *h->fly);
	h->ready_cap = 1024;
	h->ready = wa_alloc(h->ready_cap * sizeof *h->ready);
	if ((h->multi = curl_multi_init()) == NULL)
		wa_die(EX_OSERR, "webhooks: curl_multi_init failed");
	curl_multi_setopt(h->multi, CURLMOPT_MAX_HOST_CONNECTIONS,
	    (long)c->inflight);
	pthread_mutex_init(&h->mu, NULL);
	if (pthread_create(&h->thread, NULL, run, h) != 0)
		wa_die(EX_OSERR, "cannot start a thread");
	return h;
}

/* Queues one item of phone number pnid, due at wa_now_ms time due. */
static void
add(struct wa_hooks *h, int64_t due, const char *pnid, const char *status,
    size_t len, int own)
{
	size_t pn = strlen(pnid);
	struct status *s = wa_alloc(sizeof *s + len + pn + 2);
	int wake;

	memcpy(s->text, status, len);
	memcpy(s->text + len + 1, pnid, pn);
	s->pnid = s->text + len + 1;
	s->len = len;
	s->own = own;
	s->h.due = due;
	pthread_mutex_lock(&h->mu);
	wa_heap_push(&h->waiting, &s->h);
	wake = due < h->wake_at;
	if (wake)
		h->wake_at = due;
	pthread_mutex_unlock(&h->mu);
	if (wake)
		curl_multi_wakeup(h->multi);
}

/* Queues one statuses[] element of phone number pnid, due at wa_now_ms. */
void
wa_hooks_add(struct wa_hooks *h, int64_t due, const char *pnid,
    const char *status, size_t len)
{
	add(h, due, pnid, status, len, 0);
}

void
wa_hooks_add_value(struct wa_hooks *h, int64_t due, const char *pnid,
    const char *value, size_t len, enum wa_hooks_field field)
{
	add(h, due, pnid, value, len, field);
}

static void
free_post(struct post *p, uint64_t *lost)
{
	*lost += p->n;
	curl_slist_free_all(p->hdrs);
	wa_buf_free(&p->body);
	free(p);
}

/* Stops sending; st gets the counts, undelivered included. */
void
wa_hooks_stop(struct wa_hooks *h, struct wa_hooks_stats *st)
{
	struct wa_heap_item *it;
	int i;

	pthread_mutex_lock(&h->mu);
	h->stop = 1;
	pthread_mutex_unlock(&h->mu);
	curl_multi_wakeup(h->multi);
	pthread_join(h->thread, NULL);
	for (i = 0; i < h->c.inflight; i++) {
		if (h->fly[i] == NULL)
			continue;
		curl_multi_remove_handle(h->multi, h->fly[i]->easy);
		curl_easy_cleanup(h->fly[i]->easy);
		free_post(h->fly[i], &h->st.undelivered);
	}
	while ((it = wa_heap_pop(&h->retry)) != NULL)
		free_post((struct post *)it, &h->st.undelivered);
	while ((it = wa_heap_pop(&h->waiting)) != NULL) {
		h->st.undelivered++;
		free(it);
	}
	for (; h->ready_n > 0; h->ready_n--) {
		free(h->ready[h->ready_off++]);
		h->st.undelivered++;
	}
	*st = h->st;
	curl_multi_cleanup(h->multi);
	if (h->logfd >= 0)
		close(h->logfd);
	wa_heap_free(&h->retry);
	wa_heap_free(&h->waiting);
	pthread_mutex_destroy(&h->mu);
	free(h->ready);
	free(h->fly);
	free(h);
}
