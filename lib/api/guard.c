/*
 * guard.c: what one send's answer means for the sends after it.
 *
 * Numbers. A throughput error (130429 and kin) cuts the rate of the
 * number's shared bucket by WA_RATE_CUT, so every wa-throttle on the host
 * slows down, not just this one; while no error comes, the rate climbs
 * back by WA_RATE_STEP of the configured rate every WA_RATE_STEP_MS
 * (additive increase, multiplicative decrease: it settles just under
 * the limit Meta enforces). When a request sent after the cut still
 * meets the limit, the rate is cut again and the bucket is paused, so
 * every wa-throttle and wa-send holds back: first for WA_PAUSE_FIRST_MS,
 * then twice as long each time a request sent after the last pause
 * still meets the limit, up to WA_PAUSE_MAX_MS. Answers to requests that
 * were already in flight when the rate changed say nothing about whether
 * the change is enough, so they change nothing. Once requests sent after
 * a pause succeed, the pause halves at most every WA_PAUSE_DECAY_MS until
 * it is gone. Each change of the rate is a line on stderr and a metric.
 * An error of class unavailable pauses the number for its delay in
 * api/class.h's table: 131057 a minute, 131048 a quarter of an hour with
 * a loud warning (someone must look at the number's quality).
 *
 * Outages. A failure to resolve, connect or shake hands (nothing sent),
 * or WA_OUTAGE_RUN 5xx answers in a row (a proxy's, or the API's errors
 * 2, 131016 and 133004), say the API cannot be reached: such answers are
 * class outage (retried without counting an attempt), and the number's
 * bucket pauses WA_OUTAGE_FIRST_MS, twice as long each time a request
 * sent after the last pause meets the outage again, up to
 * WA_OUTAGE_MAX_MS. The outage lasts until an answer shows the API up
 * (any other HTTP answer); its length tells wa-send when to give up.
 *
 * Campaigns. The first call of a campaign goes alone, a canary: the
 * others wait until a message is accepted, which shows that the API took
 * the campaign's number, template and token, so that a missing template,
 * a wrong phone-number id or a bad token costs one call, not one per
 * slot. Any other answer (one that blames the recipient or the request,
 * a limit, a 5xx, a timeout) sends the next canary. A campaign-fatal
 * error halts the campaign: later requests of it are answered "halt"
 * without calling the API. So does a run of the same permanent error
 * (the circuit breaker): one wrong mapping must not fail a million rows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/metrics.h"
#include "core/sig.h"
#include "api/bucket.h"
#include "api/class.h"
#include "api/guard.h"

struct number {
	struct number	*next;
	char		 id[65];
	struct wa_bucket *bucket;	/* NULL until some process makes it */
	int64_t		 looked_ns;	/* when we last looked for it */
	int64_t		 pause_ms;	/* the throughput pause, 0: none */
	int64_t		 paused_ns;	/* when it was last set */
	int64_t		 decayed_ns;	/* when it last halved */
	int64_t		 long_ns;	/* end of a 131057/131048 pause */
	int64_t		 until_ns;	/* end of the pauses we asked for */
	int		 stormy;	/* a throughput error, no success yet */
	struct wa_metric *rate;		/* the rate in force after a change */
};

struct campaign {
	struct campaign	*next;
	char		*key;
	int64_t		 last;		/* the run's error: code, or -HTTP */
	int		 run;
	int		 halted;
	int		 open;		/* template and token shown good */
	int		 probe;		/* the canary is in flight */
	struct wa_halt	 halt;
};

struct wa_guard {
	struct number	*numbers;
	struct campaign	*campaigns;
	int		 breaker;
	int		 halts;
	int		 run5xx;	/* 5xx answers in a row */
	int64_t		 down_ns;	/* when the outage began, 0: none */
	int64_t		 down_pause_ms;	/* its pause now */
	int64_t		 down_paused_ns; /* when that was set */
	char		 down_why[256];	/* its last failure */
	struct wa_metric *pauses, *pause_ms, *halted, *outages, *cuts, *climbs;
};

struct wa_guard *
wa_guard_new(int breaker)
{
	struct wa_guard *g = wa_alloc(sizeof *g);

	g->breaker = breaker;
	g->pauses = wa_counter("wa_send_pauses_total", NULL,
	    "Pauses of a number's bucket asked for by wa-send.");
	g->pause_ms = wa_gauge("wa_send_pause_seconds", NULL,
	    "The current throughput pause, the longest over the numbers.");
	g->halted = wa_counter("wa_send_halts_total", NULL,
	    "Campaigns halted.");
	g->outages = wa_counter("wa_send_outages_total", NULL,
	    "Times the API could not be reached.");
	g->cuts = wa_counter("wa_send_rate_cuts_total", NULL,
	    "Cuts of a number's shared rate after a throughput error.");
	g->climbs = wa_counter("wa_send_rate_climbs_total", NULL,
	    "Steps of a number's shared rate back towards its own.");
	return g;
}

void
wa_guard_free(struct wa_guard *g)
{
	struct number *n;
	struct campaign *c;

	if (g == NULL)
		return;
	while ((n = g->numbers) != NULL) {
		g->numbers = n->next;
		wa_bucket_close(n->bucket);
		free(n);
	}
	while ((c = g->campaigns) != NULL) {
		g->campaigns = c->next;
		free(c->key);
		free(c);
	}
	free(g);
}

static struct number *
number(struct wa_guard *g, const char *id)
{
	struct number *n, **pp;

	for (pp = &g->numbers; (n = *pp) != NULL; pp = &n->next)
		if (strcmp(n->id, id) == 0) {
			*pp = n->next;
			break;
		}
	if (n == NULL) {
		n = wa_alloc(sizeof *n);
		snprintf(n->id, sizeof n->id, "%s", id);
	}
	n->next = g->numbers;	/* the busiest stay in front */
	g->numbers = n;
	/* Another process (wa-throttle) may make it, at its own rate. */
	if (n->bucket == NULL && wa_now_ns() - n->looked_ns >= 1000000000) {
		n->looked_ns = wa_now_ns();
		n->bucket = wa_bucket_find(id);
	}
	return n;
}

static struct campaign *
campaign(struct wa_guard *g, const char *key)
{
	struct campaign *c, **pp;

	for (pp = &g->campaigns; (c = *pp) != NULL; pp = &c->next)
		if (strcmp(c->key, key) == 0) {
			*pp = c->next;
			break;
		}
	if (c == NULL) {
		c = wa_alloc(sizeof *c);
		c->key = wa_strdup(key);
	}
	c->next = g->campaigns;
	g->campaigns = c;
	return c;
}

/* The halt that stops this campaign's sends, or NULL. */
const struct wa_halt *
wa_guard_halted(struct wa_guard *g, const char *key)
{
	struct campaign *c = campaign(g, key);

	return c->halted ? &c->halt : NULL;
}

/*
 * Whether a request of campaign key must wait for the canary's answer;
 * if not, and the campaign has had no such answer yet, the caller's call
 * is the canary (the caller starts it at once).
 */
int
wa_guard_canary(struct wa_guard *g, const char *key)
{
	struct campaign *c = campaign(g, key);

	if (c->open)
		return 0;
	if (c->probe)
		return 1;
	c->probe = 1;
	return 0;
}

/* Whether campaign key's canary is out, its answer not in yet. */
int
wa_guard_canary_out(struct wa_guard *g, const char *key)
{
	struct campaign *c = campaign(g, key);

	return !c->open && c->probe;
}

/* The ms the number must still wait: a pause in force, 0 if none. */
int64_t
wa_guard_paused(struct wa_guard *g, const char *id)
{
	struct number *n = number(g, id);
	int64_t until = n->until_ns, now = wa_now_ns();

	if (n->bucket != NULL && wa_bucket_paused_until(n->bucket) > until)
		until = wa_bucket_paused_until(n->bucket);
	return until > now ? (until - now + 999999) / 1000000 : 0;
}

/*
 * For a request held through a pause: takes a token from the bucket,
 * since the one wa-throttle gave it went before the pause. Returns 0 to
 * go, or the ms to wait.
 */
int64_t
wa_guard_take(struct wa_guard *g, const char *id)
{
	struct number *n = number(g, id);
	int64_t ms = wa_guard_paused(g, id), ns;

	if (ms > 0 || n->bucket == NULL)
		return ms;
	ns = wa_bucket_take(n->bucket);
	return ns > 0 ? ns / 1000000 + 1 : 0;
}

/* Pauses the number's bucket, making it (at the defaults) if need be. */
static void
pause_number(struct wa_guard *g, struct number *n, int64_t ms)
{
	int64_t until = wa_now_ns() + ms * 1000000;

	if (until > n->until_ns)
		n->until_ns = until;
	if (n->bucket == NULL && (n->bucket = wa_bucket_open(n->id, 0, 0)) ==
	    NULL)
		wa_warn("number %s: no shared bucket: the pause stays in "
		    "this process", n->id);
	if (n->bucket != NULL)
		wa_bucket_pause(n->bucket, ms);
	wa_metric_add(g->pauses, 1);
}

/* The gauge of the number's rate in force, made on first use. */
static void
rate_metric(struct number *n, double rate)
{
	char label[96];

	if (n->rate == NULL) {
		snprintf(label, sizeof label, "number=\"%s\"", n->id);
		n->rate = wa_gauge("wa_send_rate", label, "A number's shared "
		    "rate in force after wa-send last changed it, per second.");
	}
	wa_metric_set(n->rate, rate);
}

/* Cuts the number's shared rate, making its bucket if need be. */
static void
cut(struct wa_guard *g, struct number *n, const struct wa_answer *a)
{
	double rate;

	if (n->bucket == NULL && (n->bucket = wa_bucket_open(n->id, 0, 0)) ==
	    NULL)
		return;
	if ((rate = wa_bucket_cut(n->bucket, WA_RATE_CUT)) == 0)
		return;
	wa_metric_add(g->cuts, 1);
	rate_metric(n, rate);
	wa_warn("number %s: throughput limit (%s %lld): rate cut to %.3g/s",
	    n->id, a->code >= 0 ? "error" : "HTTP",
	    (long long)(a->code >= 0 ? a->code : a->http), rate);
}

/*
 * The other half of the adaptive rate: a step back up, when it is due;
 * called on every answer (the steps need no timer: they matter only
 * while this process sends).
 */
static void
climb(struct wa_guard *g, struct number *n)
{
	struct wa_bucket_stats st;
	double rate;

	if (n->bucket == NULL || n->stormy)
		return;
	wa_bucket_stats(n->bucket, &st);
	if (st.rate >= st.base * 0.9999)
		return;
	rate = st.base * WA_RATE_STEP;
	if (rate < 1)
		rate = 1;
	if ((rate = wa_bucket_climb(n->bucket, rate, WA_RATE_STEP_MS *
	    1000000LL)) == 0)
		return;
	wa_metric_add(g->climbs, 1);
	rate_metric(n, rate);
	wa_warn("number %s: rate back up to %.3g/s (its own: %.3g/s)", n->id,
	    rate, st.base);
}

static void
number_answer(struct wa_guard *g, struct number *n,
    const struct wa_answer *a, int64_t started)
{
	int64_t now = wa_now_ns(), ms;

	switch (a->class) {
	case WA_THROUGHPUT:
		if (started < n->paused_ns)
			break;		/* sent before the change: no news */
		cut(g, n, a);
		if (!n->stormy) {
			/*
			 * The first in a while: the cut may be enough, but
			 * Meta's window still holds the sends before it.
			 */
			n->stormy = 1;
			n->paused_ns = now + WA_RATE_SETTLE_MS * 1000000LL;
			break;
		}
		n->pause_ms = n->pause_ms == 0 ? WA_PAUSE_FIRST_MS :
		    n->pause_ms * 2 > WA_PAUSE_MAX_MS ? WA_PAUSE_MAX_MS :
		    n->pause_ms * 2;
		n->paused_ns = n->decayed_ns = now;
		pause_number(g, n, n->pause_ms);
		wa_warn("number %s: throughput limit (%s %lld): pausing its "
		    "bucket %lld ms", n->id, a->code >= 0 ? "error" : "HTTP",
		    (long long)(a->code >= 0 ? a->code : a->http),
		    (long long)n->pause_ms);
		break;
	case WA_UNAVAILABLE:
		if (n->long_ns > now)
			break;
		ms = wa_error_delay_ms(a->code, a->subcode);
		n->long_ns = now + ms * 1000000;
		pause_number(g, n, ms);
		if (a->code == 131048)
			wa_warn("NUMBER %s HIT META'S SPAM RATE LIMIT (131048):"
			    " too many of its messages were blocked or "
			    "reported; pausing it %lld min. Check its quality "
			    "in WhatsApp Manager before sending more.", n->id,
			    (long long)ms / 60000);
		else
			wa_warn("number %s: unavailable (error %lld: %s): "
			    "pausing it %lld s", n->id, (long long)a->code,
			    a->title, (long long)ms / 1000);
		break;
	case WA_SENT:
		if (started >= n->paused_ns)
			n->stormy = 0;
		if (n->pause_ms == 0 ||
		    started < n->paused_ns + n->pause_ms * 1000000 ||
		    now - n->decayed_ns < WA_PAUSE_DECAY_MS * 1000000LL)
			break;
		n->pause_ms /= 2;
		if (n->pause_ms < WA_PAUSE_FIRST_MS)
			n->pause_ms = 0;
		n->decayed_ns = now;
		break;
	default:
		break;
	}
}

/*
 * Whether an answer says the service is down rather than refusing this
 * message: a 5xx that is not the API's JSON (a proxy's), or one of the
 * API's own availability errors. 131000 ("something went wrong") comes
 * from an API that is up, and may be the message's fault.
 */
static int
down(const struct wa_answer *a)
{
	return a->class == WA_TRANSIENT && a->http >= 500 && (a->code < 0 ||
	    a->code == 2 || a->code == 131016 || a->code == 133004);
}

/*
 * What the answer says of the API: down (an outage: the number pauses,
 * longer each time), up (the outage is over), or nothing (a timeout or
 * reset: the request went, the answer did not come back).
 */
static void
outage(struct wa_guard *g, struct number *n, struct wa_answer *a,
    int64_t started)
{
	int64_t now = wa_now_ns();
	int isdown = down(a);

	if (isdown && ++g->run5xx >= WA_OUTAGE_RUN) {
		a->class = WA_OUTAGE;
		wa_answer_title(a, "%s (%d 5xx answers in a row: the API is "
		    "down)", a->title, g->run5xx);
	} else if (!isdown && a->http > 0)
		g->run5xx = 0;
	if (a->class != WA_OUTAGE) {
		if (a->http == 0 || isdown || g->down_ns == 0)
			return;
		wa_warn("the API answers again, after %lld s",
		    (long long)((now - g->down_ns) / 1000000000));
		g->down_ns = 0;
		g->down_pause_ms = 0;
		g->run5xx = 0;
		return;
	}
	snprintf(g->down_why, sizeof g->down_why, "%s", a->title);
	if (g->down_ns == 0) {
		g->down_ns = now;
		wa_metric_add(g->outages, 1);
		wa_warn("the API cannot be reached (%s): pausing and trying "
		    "again", a->title);
	}
	if (started < g->down_paused_ns)
		return;		/* sent before the pause: no news */
	g->down_pause_ms = g->down_pause_ms == 0 ? WA_OUTAGE_FIRST_MS :
	    g->down_pause_ms * 2 > WA_OUTAGE_MAX_MS ? WA_OUTAGE_MAX_MS :
	    g->down_pause_ms * 2;
	g->down_paused_ns = now;
	pause_number(g, n, g->down_pause_ms);
}

/* How long (ms) the API has been unreachable, 0 if it answers. */
int64_t
wa_guard_outage(const struct wa_guard *g, const char **why)
{
	if (g == NULL || g->down_ns == 0)
		return 0;
	if (why != NULL)
		*why = g->down_why;
	return (wa_now_ns() - g->down_ns) / 1000000 + 1;
}

static void
halt(struct wa_guard *g, struct campaign *c, const struct wa_answer *a,
    const char *why)
{
	char key[61], text[241];

	c->halted = 1;
	c->halt.code = a->code;
	c->halt.subcode = a->subcode;
	wa_answer_text(key, sizeof key, c->key);
	wa_answer_text(text, sizeof text, why);
	snprintf(c->halt.why, sizeof c->halt.why, "%s halted: %s", key,
	    text);
	g->halts++;
	wa_metric_add(g->halted, 1);
	wa_warn("%s: no more API calls for it", c->halt.why);
}

void
wa_guard_answer(struct wa_guard *g, const char *number_id, const char *key,
    struct wa_answer *a, int64_t started)
{
	struct campaign *c = campaign(g, key);
	struct number *n;
	char why[640];
	int64_t run, max = 0;

	n = number(g, number_id);
	outage(g, n, a, started);
	number_answer(g, n, a, started);
	climb(g, n);
	for (n = g->numbers; n != NULL; n = n->next)
		max = n->pause_ms > max ? n->pause_ms : max;
	wa_metric_set(g->pause_ms, max / 1000.0);

	c->probe = 0;
	/*
	 * Only a message accepted shows the number, template and token
	 * good: a refusal that blames the recipient or the request (100,
	 * 131026, 131009, ...) may come before Meta looks at the rest.
	 */
	if (a->class == WA_SENT)
		c->open = 1;
	if (a->class == WA_SENT)
		c->run = 0;
	if (a->class == WA_FATAL && !c->halted) {
		if (a->subcode >= 0)
			snprintf(why, sizeof why, "error %lld/%lld: %s",
			    (long long)a->code, (long long)a->subcode,
			    a->title);
		else
			snprintf(why, sizeof why, "error %lld: %s",
			    (long long)a->code, a->title);
		halt(g, c, a, why);
	}
	if (a->class != WA_PERMANENT)
		return;
	run = a->code >= 0 ? a->code : -a->http;
	c->run = c->last == run ? c->run + 1 : 1;
	c->last = run;
	if (c->run < g->breaker || c->halted)
		return;
	snprintf(why, sizeof why, "circuit breaker: %d sends in a row failed "
	    "with %s %lld (%s)", c->run, a->code >= 0 ? "error" : "HTTP",
	    (long long)(run >= 0 ? run : -run), a->title);
	halt(g, c, a, why);
	a->class = WA_FATAL;
	wa_answer_title(a, "%s", c->halt.why);
}

/* How many campaigns halted. */
int
wa_guard_halts(const struct wa_guard *g)
{
	return g != NULL ? g->halts : 0;
}
