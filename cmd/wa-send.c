/*
 * wa-send: sends each send request to the Cloud API, many at once, and
 * emits its result.
 *
 * Reads send requests (NDJSON) on stdin, a line only when one of its -j
 * slots is free, so it never reads ahead of its concurrency. POSTs each to
 * $WA_API_BASE/{phone_number_id}/messages with the token of WA_TOKEN_FILE
 * or WA_TOKEN. Writes on stdout each request plus its "result", in
 * completion order, as the calls end (whole lines: the results of one
 * wake-up go out in one write before it waits again). A request whose
 * number's bucket is paused waits in its slot for the pause to end.
 *
 * Stopping is draining. After SIGTERM or SIGINT it makes no new call:
 * the calls in flight end (within --timeout-ms) and are written, and
 * every request it holds or still reads is answered "unsent" at once,
 * until the end of input; a second signal ends the calls in flight and
 * the program at once. When the API has been unreachable for
 * --outage-after seconds it gives up the same way, answering "outage".
 *
 * Warns once, at the start, when the Graph API version in use (of
 * WA_API_BASE, WA_API_VERSION or the default) is within 90 days of its
 * end or past it (api/version.c).
 *
 * Exits 0; 79 if a campaign halted; 69 if the API was unreachable at the
 * end; 74 when reading stdin or writing the reject file fails, or its
 * reader has gone (noticed even while it waits); 65 if an
 * input line was rejected (in that order: the first that applies); 78
 * without a token or with a bad WA_API_BASE or WA_API_VERSION; 64 on a
 * usage error; killed by the signal after a second one.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/err.h"
#include "core/lines.h"
#include "core/metrics.h"
#include "core/opts.h"
#include "core/out.h"
#include "core/sig.h"
#include "records/input.h"
#include "records/json.h"
#include "api/class.h"
#include "api/guard.h"
#include "api/multi.h"
#include "api/base.h"
#include "api/send.h"
#include "api/version.h"

enum { FREE, HELD, BUSY };

/* Once stopping, how long to wait for the end of input when idle. */
#define DRAIN_MS 2000

struct slot {
	struct wa_send	 send;
	int64_t		 t0;		/* ns, when it was sent */
	int64_t		 until;		/* ms, when a held one may try */
	int		 state;
};

static struct {
	long long	 jobs, timeout, connect, breaker, outage;
	int		 dry;
	char		*base;
} opt = { 300, 15000, 3000, WA_BREAKER, 300, 0, NULL };

static struct slot *slots;
static struct wa_request scratch;	/* for requests answered unsent */
static int *spare, nspare, nbusy, nheld, most;
static struct wa_multi *multi;
static struct curl_slist *headers;
static struct wa_guard *guard;
static struct wa_metric *in_flight, *in_flight_max, *held, *down;
static char gaveup[320];	/* why no more calls: the outage */

static void
usage(FILE *f, int status)
{
	fprintf(f, "usage: wa-send [-n | --dry-run] [-j | --concurrency n] "
	    "[--timeout-ms ms]\n"
	    "               [--connect-timeout-ms ms] [--outage-after secs] "
	    "[--breaker n]\n"
	    "               [--metrics file [--metrics-label name=value]] "
	    "[--reject file]\n"
	    "       wa-send -h | --help | --version\n");
	exit(status);
}

/* Whether it makes no more calls: stopping, or given up on the API. */
static int
closing(void)
{
	return wa_stopping || *gaveup;
}

/*
 * Whether a call is out while the API cannot be reached: the others wait
 * for its answer, so that one request at a time probes the outage.
 */
static int
probing(void)
{
	return nbusy > 0 && wa_guard_outage(guard, NULL) > 0;
}

/* Queues the request with its result (written before the next wait). */
static void
emit(const struct wa_request *rq, const struct wa_answer *a)
{
	wa_answer_out(rq, a);
	wa_answer_count(a);
}

/* The answer to a request never sent because it is closing. */
static void
unsent(struct wa_answer *a, const char *number)
{
	char why[128];

	if (*gaveup) {
		wa_answer_unsent(a, WA_OUTAGE, -1, gaveup);
		return;
	}
	if (number != NULL)
		snprintf(why, sizeof why, "stopped while number %s was paused",
		    number);
	else
		snprintf(why, sizeof why, "wa-send was stopping");
	wa_answer_unsent(a, WA_UNSENT, -1, why);
}

/* The answer to a request of a halted campaign: its halt's error. */
static void
halted(struct wa_answer *a, const struct wa_halt *h)
{
	wa_answer_unsent(a, WA_FATAL, h->code, h->why);
	a->subcode = h->subcode;
}

static void
release(struct slot *s)
{
	s->state = FREE;
	spare[nspare++] = s - slots;
}

static void
start(struct slot *s)
{
	CURL *e = wa_send_start(&s->send, headers, opt.timeout, opt.connect, s);

	s->t0 = wa_now_ns();
	s->state = BUSY;
	nbusy++;
	wa_multi_add(multi, e);
}

/*
 * Takes one request: into a free slot, to send or hold it, or answers it
 * at once (a halted campaign; closing, when it needs no slot).
 */
static void
take(struct wa_input *in, struct wa_record *rec)
{
	struct slot *s = nspare > 0 ? &slots[spare[nspare - 1]] : NULL;
	struct wa_request *rq = closing() || s == NULL ? &scratch :
	    &s->send.rq;
	const struct wa_halt *h;
	struct wa_answer a;
	const char *why;
	int64_t ms;

	if ((why = wa_request_prepare(rq, rec->obj, rec->line, rec->len,
	    opt.base)) != NULL) {
		wa_input_reject(in, rec, "%s", why);
		return;
	}
	if (opt.dry) {
		wa_request_dry(rec->obj, rq);
		wa_out_json(rec->obj);
		return;
	}
	if ((h = wa_guard_halted(guard, rq->campaign.s)) != NULL) {
		halted(&a, h);
		emit(rq, &a);
		return;
	}
	if (rq == &scratch) {
		unsent(&a, NULL);
		emit(rq, &a);
		return;
	}
	nspare--;
	if ((ms = wa_guard_paused(guard, s->send.rq.number)) == 0 &&
	    !probing() && !wa_guard_canary(guard, s->send.rq.campaign.s)) {
		start(s);
		return;
	}
	s->state = HELD;
	s->until = wa_now_ms() + ms;
	nheld++;
}

/*
 * Sends held requests whose pause is over (one while the API cannot be
 * reached), or answers them all when closing; returns ms to the next.
 */
static int64_t
held_go(void)
{
	const struct wa_halt *h;
	struct wa_answer a;
	int64_t next = 1000, now = wa_now_ms();
	int i;

	for (i = 0; nheld > 0 && i < opt.jobs; i++) {
		struct slot *s = &slots[i];

		if (s->state != HELD)
			continue;
		if ((h = wa_guard_halted(guard, s->send.rq.campaign.s)) !=
		    NULL) {
			/* It halted while this one waited for the canary. */
			halted(&a, h);
			goto answered;
		}
		if (!closing() && s->until <= now && (probing() ||
		    wa_guard_canary_out(guard, s->send.rq.campaign.s)))
			continue;
		if (!closing() && s->until <= now)
			s->until = now + wa_guard_take(guard,
			    s->send.rq.number);
		if (!closing() && s->until > now) {
			next = s->until - now < next ? s->until - now : next;
			continue;
		}
		if (!closing() && !wa_guard_canary(guard,
		    s->send.rq.campaign.s)) {
			nheld--;
			start(s);
			continue;
		}
		if (!closing())
			continue;	/* another became the canary */
		unsent(&a, wa_guard_paused(guard, s->send.rq.number) > 0 ?
		    s->send.rq.number : NULL);
answered:
		nheld--;
		emit(&s->send.rq, &a);
		release(s);
	}
	return next;
}

/* Emits the calls that ended. */
static void
done(void)
{
	struct wa_answer a;
	struct slot *s;
	CURLMsg *m;
	int left;

	while ((m = curl_multi_info_read(wa_multi_handle(multi), &left))) {
		if (m->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE,
		    (char **)&s);
		wa_send_answer(&a, &s->send, m->data.result);
		wa_multi_ended(multi, s->send.easy);
		curl_multi_remove_handle(wa_multi_handle(multi), s->send.easy);
		a.latency_ms = (wa_now_ns() - s->t0) / 1000000;
		wa_guard_answer(guard, s->send.rq.number,
		    s->send.rq.campaign.s, &a, s->t0);
		emit(&s->send.rq, &a);
		nbusy--;
		release(s);
	}
}

/* Before a wait: the gauges, and the results so far out. */
static void
flush(void)
{
	wa_metric_set(in_flight, nbusy);
	wa_metric_set(held, nheld);
	if (nbusy > most)
		wa_metric_set(in_flight_max, most = nbusy);
	if (guard != NULL)
		wa_metric_set(down, wa_guard_outage(guard, NULL) / 1000.0);
	wa_out_flush();
}

/*
 * Gives up once the API has been unreachable for --outage-after: no more
 * calls; what it holds or reads is answered retry, class outage.
 */
static void
give_up(void)
{
	const char *why;
	int64_t ms;

	if (*gaveup || guard == NULL ||
	    (ms = wa_guard_outage(guard, &why)) == 0 || ms < opt.outage * 1000)
		return;
	snprintf(gaveup, sizeof gaveup, "the API has been unreachable for "
	    "%lld s: %s", (long long)ms / 1000, why);
	wa_warn("%s: giving up; what is left is answered retry (outage)",
	    gaveup);
}

/*
 * A second signal: the calls in flight end now, answered unknown if
 * their request may have left (unsent if not), the held ones unsent;
 * all written, then the program ends by the signal.
 */
static void
stop_now(void)
{
	struct wa_answer a;
	struct slot *s;
	int i, n = nbusy;

	for (i = 0; i < opt.jobs; i++) {
		s = &slots[i];
		if (s->state == BUSY) {
			curl_multi_remove_handle(wa_multi_handle(multi),
			    s->send.easy);
			unsent(&a, NULL);
			if (wa_send_left(&s->send)) {
				a.class = WA_AMBIGUOUS;
				wa_answer_title(&a, "stopped at once with the "
				    "call in flight: the request may have "
				    "arrived");
			}
			a.latency_ms = (wa_now_ns() - s->t0) / 1000000;
			emit(&s->send.rq, &a);
			nbusy--;
		} else if (s->state == HELD) {
			unsent(&a, wa_guard_paused(guard, s->send.rq.number) >
			    0 ? s->send.rq.number : NULL);
			emit(&s->send.rq, &a);
			nheld--;
		}
		s->state = FREE;
	}
	flush();
	wa_metrics_write();
	wa_warn("stopped at once: %d calls cut short", n);
	wa_signal_exit();
}

static void
setup(void)
{
	const char *from, *v;
	char msg[512];

	opt.base = wa_api_base();
	v = wa_api_version(&from);
	if (wa_api_version_warning(v, from, time(NULL), msg, sizeof msg))
		wa_warn("%s", msg);
	slots = wa_alloc(opt.jobs * sizeof *slots);
	spare = wa_alloc(opt.jobs * sizeof *spare);
	for (nspare = 0; nspare < opt.jobs; nspare++)
		spare[nspare] = opt.jobs - 1 - nspare;
	in_flight = wa_gauge("wa_send_in_flight", NULL, "Calls in flight.");
	in_flight_max = wa_gauge("wa_send_in_flight_max", NULL,
	    "The most calls in flight at once.");
	held = wa_gauge("wa_send_held", NULL,
	    "Requests waiting for their number's pause to end.");
	down = wa_gauge("wa_send_outage_seconds", NULL,
	    "How long the API has been unreachable, 0 when it answers.");
	if (opt.dry)
		return;
	headers = wa_send_headers();
	guard = wa_guard_new(opt.breaker);
	multi = wa_multi_new(opt.jobs, strncmp(opt.base, "https:", 6) == 0);
}

int
main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "breaker", required_argument, NULL, 'B' },
		{ "concurrency", required_argument, NULL, 'j' },
		{ "connect-timeout-ms", required_argument, NULL, 'C' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ "metrics", required_argument, NULL, WA_OPT_METRICS },
		{ "metrics-label", required_argument, NULL, WA_OPT_LABEL },
		{ "outage-after", required_argument, NULL, 'O' },
		{ "reject", required_argument, NULL, 'R' },
		{ "timeout-ms", required_argument, NULL, 'T' },
		{ "version", no_argument, NULL, WA_OPT_VERSION },
		{ NULL, 0, NULL, 0 }
	};
	struct wa_record rec = { 0 };
	struct wa_input in;
	int c, r, eof = 0, failed = 0, want, i;
	int64_t wait, now, drain = 0;

	wa_prog = "wa-send";
	wa_input_init(&in, STDIN_FILENO, "<stdin>", 1);
	while ((c = getopt_long(argc, argv, "hj:n", longs, NULL)) != -1)
		switch (c) {
		case 'B':
			opt.breaker = wa_num(optarg, 1, 1000000, "breaker");
			break;
		case 'C':
			opt.connect = wa_num(optarg, 1, 3600000, "connect "
			    "timeout");
			break;
		case 'j':
			opt.jobs = wa_num(optarg, 1, 10000, "concurrency");
			break;
		case 'n':
			opt.dry = 1;
			break;
		case 'O':
			opt.outage = wa_num(optarg, 0, 30 * 86400,
			    "outage-after");
			break;
		case 'R':
			wa_input_reject_file(&in, optarg);
			break;
		case 'T':
			opt.timeout = wa_num(optarg, 1, 3600000, "timeout");
			break;
		default:
			if (!wa_common_opt(c, optarg, usage))
				usage(stderr, EX_USAGE);
		}
	if (optind != argc)
		usage(stderr, EX_USAGE);
	wa_signals();
	wa_watch_reader(STDOUT_FILENO);
	wa_metrics_on_usr2(NULL);
	setup();

	for (;;) {
		if (wa_stopping > 1 && multi != NULL)
			stop_now();
		give_up();
		/*
		 * A few lines at a time: halted ones take no slot, and none
		 * does once closing. The dry run stops reading at a signal.
		 */
		for (i = 0; i < 64 && !eof && (closing() ? !opt.dry :
		    nspare > 0); i++) {
			if (in.lines.exact)
				in.lines.exact = closing() ? 64 : nspare;
			r = wa_input_next(&in, &rec, opt.dry ? -1 : 0);
			if (r == WA_LINE)
				take(&in, &rec);
			else if (r == WA_AGAIN)
				break;
			else {
				/* Reading or the reject file: said already. */
				failed |= r == WA_ERROR;
				eof = 1;
			}
		}
		wait = nheld > 0 ? held_go() : 1000;
		if (nbusy == 0 && nheld == 0 && (eof || (opt.dry &&
		    wa_stopping)))
			break;
		if (multi == NULL)
			continue;
		/* Idle and closing: the end of input is not far, or never. */
		if (nbusy == 0 && nheld == 0 && closing()) {
			now = wa_now_ms();
			drain = drain ? drain : now + DRAIN_MS;
			if (now >= drain) {
				wa_warn("the input had not ended %d s after "
				    "the last call: its other lines are not "
				    "answered", DRAIN_MS / 1000);
				break;
			}
			wait = drain - now < wait ? drain - now : wait;
		}
		flush();
		want = !eof && (closing() || nspare > 0);
		if (!want || !wa_lines_pending(&in.lines))
			wa_multi_wait(multi, want ? STDIN_FILENO : -1,
			    (int)wait, nspare > 0);
		done();
		wa_metrics_tick();
	}
	flush();
	json_object_put(rec.obj);
	wa_metrics_write();
	for (i = 0; i < opt.jobs; i++)
		wa_send_free(&slots[i].send);
	wa_request_free(&scratch);
	if (multi != NULL)
		wa_multi_free(multi);
	curl_slist_free_all(headers);
	if (wa_guard_halts(guard) > 0)
		r = WA_EX_HALTED;
	else if (*gaveup || wa_guard_outage(guard, NULL) > 0)
		r = EX_UNAVAILABLE;
	else if (failed)
		r = EX_IOERR;
	else
		r = in.rejected > 0 ? EX_DATAERR : 0;
	wa_guard_free(guard);
	wa_input_free(&in);
	free(slots);
	free(spare);
	free(opt.base);
	return r;
}
