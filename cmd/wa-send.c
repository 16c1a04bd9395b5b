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
 * number's bucket is
 * paused waits in its slot for the pause to end. Exits 0; 65 if an input
 * line was rejected; 75 if a campaign halted; 74 when reading stdin or
 * writing the reject file fails; 78 without a token or with a bad
 * WA_API_BASE; 64 on a usage error.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "core/lines.h"
#include "core/metrics.h"
#include "core/out.h"
#include "core/sig.h"
#include "records/input.h"
#include "records/json.h"
#include "api/class.h"
#include "api/guard.h"
#include "api/multi.h"
#include "api/send.h"

enum { FREE, HELD, BUSY };

struct slot {
	struct wa_send	 send;
	int64_t		 t0;		/* ns, when it was sent */
	int64_t		 until;		/* ms, when a held one may try */
	int		 state;
};

static struct {
	long long	 jobs, timeout, connect, breaker;
	int		 dry;
	char		*base;
} opt = { 300, 15000, 3000, WA_BREAKER, 0, NULL };

static struct slot *slots;
static int *spare, nspare, nbusy, nheld, most;
static struct wa_multi *multi;
static struct curl_slist *headers;
static struct wa_guard *guard;
static struct wa_metric *in_flight, *in_flight_max, *held;

static void
usage(FILE *f, int status)
{
	fprintf(f, "usage: wa-send [-n | --dry-run] [-j | --concurrency n] "
	    "[--timeout-ms ms]\n"
	    "               [--connect-timeout-ms ms] [--breaker n] "
	    "[--metrics file] [--reject file]\n"
	    "       wa-send -h | --help | --version\n");
	exit(status);
}

/* Queues the request with its result (written before the next wait). */
static void
emit(struct slot *s, const struct wa_answer *a)
{
	wa_answer_out(&s->send.rq, a);
	wa_answer_count(a);
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
	if (curl_multi_add_handle(wa_multi_handle(multi), e) != CURLM_OK)
		wa_die(EX_SOFTWARE, "curl_multi_add_handle failed");
}

/* Takes one request into a free slot: sends it, holds it or answers it. */
static void
take(struct wa_input *in, struct wa_record *rec)
{
	struct slot *s = &slots[spare[nspare - 1]];
	const struct wa_halt *h;
	struct wa_answer a;
	const char *why;
	int64_t ms;

	if ((why = wa_request_prepare(&s->send.rq, rec->obj, rec->line,
	    rec->len, opt.base)) != NULL) {
		wa_input_reject(in, rec, "%s", why);
		return;
	}
	if (opt.dry) {
		wa_request_dry(rec->obj, &s->send.rq);
		wa_out_json(rec->obj);
		return;
	}
	if ((h = wa_guard_halted(guard, s->send.rq.campaign.s)) != NULL) {
		wa_answer_unsent(&a, WA_FATAL, h->code, h->why);
		emit(s, &a);
		wa_out_flush();
		return;
	}
	nspare--;
	if ((ms = wa_guard_paused(guard, s->send.rq.number)) == 0) {
		start(s);
		return;
	}
	s->state = HELD;
	s->until = wa_now_ms() + ms;
	nheld++;
}

/* Sends held requests whose pause is over; returns ms to the next. */
static int64_t
held_go(void)
{
	struct wa_answer a;
	char why[128];
	int64_t next = 1000, now = wa_now_ms();
	int i;

	for (i = 0; nheld > 0 && i < opt.jobs; i++) {
		struct slot *s = &slots[i];

		if (s->state != HELD)
			continue;
		if (!wa_stopping && s->until <= now)
			s->until = now + wa_guard_take(guard,
			    s->send.rq.number);
		if (!wa_stopping && s->until > now) {
			next = s->until - now < next ? s->until - now : next;
			continue;
		}
		nheld--;
		if (!wa_stopping) {
			start(s);
			continue;
		}
		snprintf(why, sizeof why, "stopped while number %s was paused",
		    s->send.rq.number);
		wa_answer_unsent(&a, WA_TRANSIENT, -1, why);
		emit(s, &a);
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
		curl_multi_remove_handle(wa_multi_handle(multi), s->send.easy);
		a.latency_ms = (wa_now_ns() - s->t0) / 1000000;
		wa_guard_answer(guard, s->send.rq.number,
		    s->send.rq.campaign.s, &a, s->t0);
		emit(s, &a);
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
	wa_out_flush();
}

static void
setup(void)
{
	opt.base = wa_send_base();
	slots = wa_alloc(opt.jobs * sizeof *slots);
	spare = wa_alloc(opt.jobs * sizeof *spare);
	for (nspare = 0; nspare < opt.jobs; nspare++)
		spare[nspare] = opt.jobs - 1 - nspare;
	in_flight = wa_gauge("wa_send_in_flight", NULL, "Calls in flight.");
	in_flight_max = wa_gauge("wa_send_in_flight_max", NULL,
	    "The most calls in flight at once.");
	held = wa_gauge("wa_send_held", NULL,
	    "Requests waiting for their number's pause to end.");
	if (opt.dry)
		return;
	headers = wa_send_headers();
	guard = wa_guard_new(opt.breaker);
	multi = wa_multi_new(opt.jobs);
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
		{ "metrics", required_argument, NULL, 'M' },
		{ "reject", required_argument, NULL, 'R' },
		{ "timeout-ms", required_argument, NULL, 'T' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct wa_record rec = { 0 };
	struct wa_input in;
	int c, r, eof = 0, failed = 0, i;
	int64_t wait;

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
		case 'h':
			usage(stdout, 0);
			break;
		case 'j':
			opt.jobs = wa_num(optarg, 1, 10000, "concurrency");
			break;
		case 'M':
			wa_metrics_open(optarg);
			break;
		case 'n':
			opt.dry = 1;
			break;
		case 'R':
			wa_input_reject_file(&in, optarg);
			break;
		case 'T':
			opt.timeout = wa_num(optarg, 1, 3600000, "timeout");
			break;
		case 'V':
			wa_version();
		default:
			usage(stderr, EX_USAGE);
		}
	if (optind != argc)
		usage(stderr, EX_USAGE);
	wa_signals();
	wa_metrics_on_usr2(NULL);
	setup();

	for (;;) {
		/* A few lines at a time: halted ones take no slot. */
		for (i = 0; i < 64 && !eof && !wa_stopping && nspare > 0; i++) {
			if (in.lines.exact)
				in.lines.exact = nspare;
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
		if ((eof || wa_stopping) && nbusy == 0 && nheld == 0)
			break;
		if (multi == NULL)
			continue;
		flush();
		/* Lines in hand are read first, unless reading has ended. */
		if (nspare == 0 || eof || wa_stopping ||
		    !wa_lines_pending(&in.lines))
			wa_multi_wait(multi, !eof && nspare > 0 &&
			    !wa_stopping ? STDIN_FILENO : -1, (int)wait);
		done();
		wa_metrics_tick();
	}
	flush();
	json_object_put(rec.obj);
	wa_metrics_write();
	for (i = 0; i < opt.jobs; i++)
		wa_send_free(&slots[i].send);
	if (multi != NULL)
		wa_multi_free(multi);
	curl_slist_free_all(headers);
	r = wa_guard_halts(guard);
	wa_guard_free(guard);
	wa_input_free(&in);
	free(slots);
	free(spare);
	free(opt.base);
	if (failed)
		return EX_IOERR;
	return in.rejected > 0 ? EX_DATAERR : r > 0 ? EX_TEMPFAIL : 0;
}
