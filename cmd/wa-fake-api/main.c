/*
 * wa-fake-api: a stand-in for Meta's WhatsApp Cloud API, so that tests,
 * benchmarks, the demo and operators' rehearsals run without Meta.
 *
 * Reads HTTP requests, POST /{version}/{phone_number_id}/messages with a
 * template send and "Authorization: Bearer" the token of WA_TOKEN or
 * WA_TOKEN_FILE. Answers as the Cloud API does, after the latency asked
 * for, with its throughput and pair-rate limits, scripted faults and
 * error envelopes (fakeapi.c), and while --outage-file exists
 * the HTTP status it holds, as a service that is down. Answers the
 * Graph API's reads a check makes, a WABA's message templates and a
 * number's fields, from --templates and --numbers (lists, JSON files,
 * or the built-in; graph.c), and checks a send against a templates
 * file. Writes one NDJSON line per request to --log (GETs too) and,
 * with --webhook-url, POSTs signed status webhooks (key from
 * WA_APP_SECRET or WA_APP_SECRET_FILE), priced as Meta prices a
 * template of --category, and inbound message webhooks when asked, by
 * POST /{version}/{id}/inbound or the script reply:TEXT, for rehearsing
 * opt-outs. Prints nothing on stdout.
 * Exits 0 after SIGTERM or SIGINT, 64 on a usage error, 69 when it
 * cannot listen, 73 when it cannot create a log, 78 without a token or
 * an app secret.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "core/err.h"
#include "core/opts.h"
#include "core/secret.h"
#include "core/sig.h"
#include "fakeapi.h"
#include "hooks.h"

static void
usage(FILE *f, int status)
{
	fprintf(f, "usage: wa-fake-api [--any-token] [--listen addr:port] "
	    "[--port-file file] [--log file]\n"
	    "        [--rate n] [--pair-ms ms] [--latency-ms mean] "
	    "[--jitter-ms spread]\n"
	    "        [--templates name,...|file] [--numbers id,...|file] "
	    "[--waba-id id]\n"
	    "        [--category category]\n"
	    "        [--script suffix=action]... [--error-rate code:f]...\n"
	    "        [--drop-rate f] [--seed n] [--threads n] "
	    "[--outage-file file]\n"
	    "        [--webhook-url url] [--webhook-batch n] "
	    "[--webhook-delay-ms ms]\n"
	    "        [--webhook-linger-ms ms] [--webhook-retry-ms ms] "
	    "[--webhook-inflight n]\n"
	    "        [--webhook-log file] [--dup-rate f] [--reorder-rate f] "
	    "[--fail-rate f]\n"
	    "        [--read-rate f] [--reply-rate f] [--foreign-rate f] "
	    "[--titleless]\n"
	    "        [--old-br-wa-ids] [--pause-template-after n]\n"
	    "       wa-fake-api -h | --help | --version\n");
	exit(status);
}

int
main(int argc, char **argv)
{
	enum { ANY = 256, BATCH, CATEGORY, DELAY, DROP, DUP, ERRATE, FAIL,
	    INFLIGHT, JITTER, LATENCY, LINGER, LISTEN, LOG, NUMBERS, OUTAGE,
	    PAIR, PORTFILE, RATE, READ, REPLY, REORDER, RETRY, SCRIPT, SEED,
	    TEMPLATES, THREADS, HOOKLOG, URL, WABA, FOREIGN, TITLELESS,
	    OLDBR, PAUSE };
	static const struct option longs[] = {
		{ "any-token", no_argument, NULL, ANY },
		{ "category", required_argument, NULL, CATEGORY },
		{ "drop-rate", required_argument, NULL, DROP },
		{ "dup-rate", required_argument, NULL, DUP },
		{ "error-rate", required_argument, NULL, ERRATE },
		{ "fail-rate", required_argument, NULL, FAIL },
		{ "help", no_argument, NULL, 'h' },
		{ "jitter-ms", required_argument, NULL, JITTER },
		{ "latency-ms", required_argument, NULL, LATENCY },
		{ "listen", required_argument, NULL, LISTEN },
		{ "log", required_argument, NULL, LOG },
		{ "outage-file", required_argument, NULL, OUTAGE },
		{ "pair-ms", required_argument, NULL, PAIR },
		{ "port-file", required_argument, NULL, PORTFILE },
		{ "rate", required_argument, NULL, RATE },
		{ "read-rate", required_argument, NULL, READ },
		{ "reply-rate", required_argument, NULL, REPLY },
		{ "foreign-rate", required_argument, NULL, FOREIGN },
		{ "titleless", no_argument, NULL, TITLELESS },
		{ "old-br-wa-ids", no_argument, NULL, OLDBR },
		{ "pause-template-after", required_argument, NULL, PAUSE },
		{ "reorder-rate", required_argument, NULL, REORDER },
		{ "script", required_argument, NULL, SCRIPT },
		{ "seed", required_argument, NULL, SEED },
		{ "numbers", required_argument, NULL, NUMBERS },
		{ "templates", required_argument, NULL, TEMPLATES },
		{ "threads", required_argument, NULL, THREADS },
		{ "version", no_argument, NULL, WA_OPT_VERSION },
		{ "waba-id", required_argument, NULL, WABA },
		{ "webhook-batch", required_argument, NULL, BATCH },
		{ "webhook-delay-ms", required_argument, NULL, DELAY },
		{ "webhook-inflight", required_argument, NULL, INFLIGHT },
		{ "webhook-linger-ms", required_argument, NULL, LINGER },
		{ "webhook-log", required_argument, NULL, HOOKLOG },
		{ "webhook-retry-ms", required_argument, NULL, RETRY },
		{ "webhook-url", required_argument, NULL, URL },
		{ NULL, 0, NULL, 0 }
	};
	struct wa_fake_conf fc = { .rate = 80, .pair_ms = 6000,
	    .hook_delay_ms = 500, .read_rate = 0.5 };
	struct wa_hooks_conf hc = { .batch = 10, .inflight = 4,
	    .linger_ms = 100, .retry_ms = 1000, .retry_max_ms = 300000,
	    .timeout_ms = 10000, .waba_id = "102290129340398",
	    .display_phone = "15550783881" };
	const char *listen = "127.0.0.1:8088", *port_file = NULL;
	struct wa_hooks_stats hs;
	struct wa_fake_stats fs;
	struct wa_hooks *hooks = NULL;
	struct wa_fake *fake;
	char *secret = NULL;
	int c, any = 0, threads = 1;

	wa_prog = "wa-fake-api";
	while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1)
		switch (c) {
		case ANY:
			any = 1;
			break;
		case BATCH:
			hc.batch = wa_num(optarg, 1, 1000, "--webhook-batch");
			break;
		case CATEGORY:
			wa_fake_set_category(&fc, optarg);
			break;
		case DELAY:
			fc.hook_delay_ms = wa_num(optarg, 0, 86400000,
			    "--webhook-delay-ms");
			break;
		case DROP:
			fc.drop_rate = wa_fnum(optarg, 0, 1, "--drop-rate");
			break;
		case DUP:
			fc.dup_rate = wa_fnum(optarg, 0, 1, "--dup-rate");
			break;
		case ERRATE:
			wa_fake_add_errate(&fc, optarg);
			break;
		case FAIL:
			fc.fail_rate = wa_fnum(optarg, 0, 1, "--fail-rate");
			break;
		case INFLIGHT:
			hc.inflight = wa_num(optarg, 1, 1000,
			    "--webhook-inflight");
			break;
		case JITTER:
			fc.jitter_ms = wa_num(optarg, 0, 3600000,
			    "--jitter-ms");
			break;
		case LATENCY:
			fc.latency_ms = wa_num(optarg, 0, 3600000,
			    "--latency-ms");
			break;
		case LINGER:
			hc.linger_ms = wa_num(optarg, 0, 3600000,
			    "--webhook-linger-ms");
			break;
		case LISTEN:
			listen = optarg;
			break;
		case LOG:
			fc.log = optarg;
			break;
		case OUTAGE:
			fc.outage = optarg;
			break;
		case PAIR:
			fc.pair_ms = wa_num(optarg, 0, 86400000, "--pair-ms");
			break;
		case PORTFILE:
			port_file = optarg;
			break;
		case RATE:
			fc.rate = wa_num(optarg, 0, 100000, "--rate");
			break;
		case READ:
			fc.read_rate = wa_fnum(optarg, 0, 1, "--read-rate");
			break;
		case PAUSE:
			fc.pause_after = wa_num(optarg, 1, INT64_MAX,
			    "--pause-template-after");
			break;
		case REPLY:
			fc.reply_rate = wa_fnum(optarg, 0, 1, "--reply-rate");
			break;
		case FOREIGN:
			fc.foreign_rate = wa_fnum(optarg, 0, 1,
			    "--foreign-rate");
			break;
		case TITLELESS:
			fc.titleless = 1;
			break;
		case OLDBR:
			fc.old_br = 1;
			break;
		case REORDER:
			fc.reorder_rate = wa_fnum(optarg, 0, 1,
			    "--reorder-rate");
			break;
		case RETRY:
			hc.retry_ms = wa_num(optarg, 1, 3600000,
			    "--webhook-retry-ms");
			break;
		case SCRIPT:
			wa_fake_add_script(&fc, optarg);
			break;
		case SEED:
			fc.seed = wa_num(optarg, 0, LLONG_MAX, "--seed");
			fc.seeded = 1;
			break;
		case NUMBERS:
			wa_fake_set_numbers(&fc, optarg);
			break;
		case TEMPLATES:
			wa_fake_set_templates(&fc, optarg);
			break;
		case THREADS:
			threads = wa_num(optarg, 1, 64, "--threads");
			break;
		case HOOKLOG:
			hc.log = optarg;
			break;
		case URL:
			hc.url = optarg;
			break;
		case WABA:
			if (*optarg == '\0' || strlen(optarg) > 32 ||
			    optarg[strspn(optarg, "0123456789")] != '\0')
				wa_die(EX_USAGE, "--waba-id: a WhatsApp "
				    "Business Account's id is digits, not "
				    "'%s'", optarg);
			fc.waba_id = hc.waba_id = optarg;
			break;
		default:
			if (!wa_common_opt(c, optarg, usage))
				usage(stderr, EX_USAGE);
		}
	if (optind != argc)
		usage(stderr, EX_USAGE);

	if (!any && (fc.token = wa_secret("WA_TOKEN")) == NULL)
		wa_die(EX_CONFIG, "no token: set WA_TOKEN or WA_TOKEN_FILE, "
		    "or accept any with --any-token");
	if (hc.url != NULL && (secret = wa_secret("WA_APP_SECRET")) == NULL)
		wa_die(EX_CONFIG, "--webhook-url needs the app secret that "
		    "signs them: set WA_APP_SECRET or WA_APP_SECRET_FILE");
	/* Threads start with the stop signals blocked: main takes them. */
	wa_signals();
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (hc.url != NULL) {
		hc.secret = secret;
		fc.hooks = hooks = wa_hooks_start(&hc);
	}
	fake = wa_fake_new(&fc);
	wa_fake_serve(fake, listen, port_file, threads);
	if (hooks != NULL) {
		wa_hooks_stop(hooks, &hs);
		wa_warn("webhooks: %llu statuses delivered, %llu POST "
		    "attempts, %llu undelivered",
		    (unsigned long long)hs.delivered,
		    (unsigned long long)hs.posts,
		    (unsigned long long)hs.undelivered);
	}
	wa_fake_free(fake, &fs);
	wa_warn("%llu requests: %llu sent, %llu refused, %llu other, %llu "
	    "reads", (unsigned long long)fs.requests,
	    (unsigned long long)fs.sent, (unsigned long long)fs.refused,
	    (unsigned long long)fs.other, (unsigned long long)fs.reads);
	free(secret);
	curl_global_cleanup();
	return 0;
}
