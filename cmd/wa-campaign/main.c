/*
 * wa-campaign: the operator's tool. Creates campaigns, imports their
 * recipients, checks them against the Graph API (check.c), starts,
 * pauses, resumes and cancels them, runs them to their end, reports
 * where they stand and puts failed or unknown rows back in the queue.
 *
 * Reads and writes campaigns and campaign_recipients (Postgres), and the
 * rate card (rates); import reads a CSV or NDJSON file (or stdin),
 * requeue --phones a list of numbers, rates load a rate card. Writes the
 * new id (create), the report (status), the campaigns (list), the
 * recipients (export), the rows requeued (requeue), the rate card (rates
 * show), the estimate or the check's verdict on stdout; messages on
 * stderr. This file is the dispatcher: the options the commands share
 * and the table of commands, one row each; every command's work, SQL and
 * output are in the file its row names (campaign.h lists them). run and
 * watch read their own options. Exits 0 on success, 64 on a usage error
 * or an unknown campaign, 65 when a move or a change is not allowed from
 * the campaign's state, a check refuses the campaign (check, start), an
 * import or requeue rejected lines (not counting the suppressed numbers
 * an import skips) or a rate card was refused, 66 when a file cannot be
 * opened, 69 when Postgres fails (an export cut short included) or the
 * API cannot tell a check, 74 when reading a file or writing the reject
 * file or stdout fails, 75 when a signal cut an import or a requeue
 * short (nothing done), 78 when a check has no token or WABA id; run and
 * watch as their files say.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/opts.h"
#include "core/sig.h"
#include "records/phone.h"
#include "campaign.h"

/* The options that are a campaign's rules of the road. */
#define RULES (O(EXPIRES) | O(WINDOW) | O(TZ) | O(WEIGHT) | O(PRIORITY))
/* A command that reads its own options from the whole argv. */
#define OWN (1u << 31)

static const struct option longs[] = {
	{ "name", required_argument, NULL, NAME },
	{ "phone-number-id", required_argument, NULL, NUMBER },
	{ "template", required_argument, NULL, TEMPLATE },
	{ "language", required_argument, NULL, LANG },
	{ "max-attempts", required_argument, NULL, MAXATT },
	{ "on-unknown", required_argument, NULL, UNKNOWN },
	{ "country-code", required_argument, NULL, CC },
	{ "reject", required_argument, NULL, REJECT },
	{ "reason", required_argument, NULL, REASON },
	{ "json", no_argument, NULL, JSON },
	{ "status", required_argument, NULL, STATUS },
	{ "code", required_argument, NULL, CODE },
	{ "format", required_argument, NULL, FORMAT },
	{ "class", required_argument, NULL, CLASS },
	{ "phones", required_argument, NULL, PHONES },
	{ "breaker", required_argument, NULL, BREAKER },
	{ "dry-run", no_argument, NULL, DRY },
	{ "expires-at", required_argument, NULL, EXPIRES },
	{ "window", required_argument, NULL, WINDOW },
	{ "tz", required_argument, NULL, TZ },
	{ "weight", required_argument, NULL, WEIGHT },
	{ "priority", required_argument, NULL, PRIORITY },
	{ "period", required_argument, NULL, PERIOD },
	{ "category", required_argument, NULL, CATEGORY },
	{ "waba-id", required_argument, NULL, WABA },
	{ "no-check", no_argument, NULL, NOCHECK },
	{ "at", required_argument, NULL, AT },
	{ "days", required_argument, NULL, DAYS },
	{ "portfolio", required_argument, NULL, PORTFOLIO },
	{ "fetch", no_argument, NULL, FETCH },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, WA_OPT_VERSION },
	{ NULL, 0, NULL, 0 }
};

static PGconn *conn;

/*
 * Each command: its name, its operands after the name, from min to max
 * (-1: no end), id: whether the first is a campaign's id, the options
 * it takes, the function that does it, its line in the usage.
 */
static const struct cmd {
	const char	*name;
	int		 min, max, id;
	unsigned	 opts;
	int		(*fn)(struct opts *);
	const char	*usage;
} cmds[] = {
	{ "create", 0, 0, 0, O(NAME) | O(NUMBER) | O(TEMPLATE) | O(LANG) |
	    O(MAXATT) | O(UNKNOWN) | O(WABA) | RULES, cmd_create,
	    "create --name name --phone-number-id id --template name\n"
	    "         [--language lang] [--waba-id id] [--max-attempts n]\n"
	    "         [--on-unknown resend|fail] [rules]" },
	{ "import", 2, 2, 1, O(CC) | O(REJECT), cmd_import,
	    "import [--country-code cc] [--reject file] id file|-" },
	{ "check", 1, 1, 1, O(JSON), cmd_check, "check [--json] id" },
	{ "start", 1, 1, 1, O(NOCHECK) | O(AT), cmd_move,
	    "start [--no-check] [--at time] id" },
	{ "pause", 1, 1, 1, O(REASON), cmd_move, "pause [--reason text] id" },
	{ "resume", 1, 1, 1, 0, cmd_move, "resume id" },
	{ "cancel", 1, 1, 1, O(REASON), cmd_move,
	    "cancel [--reason text] id" },
	{ "status", 1, 1, 1, O(JSON), cmd_status, "status [--json] id" },
	{ "report", 1, 1, 1, O(JSON), cmd_report,
	    "report [--json] id > report.html" },
	{ "export", 1, 1, 1, O(STATUS) | O(CODE) | O(FORMAT), cmd_export,
	    "export [--status s] [--code n] [--format csv|ndjson] id" },
	{ "requeue", 1, 1, 1, O(STATUS) | O(CODE) | O(CLASS) | O(PHONES) |
	    O(CC) | O(REJECT) | O(DRY), cmd_requeue,
	    "requeue [-n | --dry-run] "
	    "[--status failed|unknown|pending[,...]]\n"
	    "          [--code n] [--class c]\n"
	    "          [--phones file [--country-code cc] [--reject file]] "
	    "id" },
	{ "set", 1, 1, 1, O(TEMPLATE) | O(LANG) | O(MAXATT) | O(UNKNOWN) |
	    O(BREAKER) | O(WABA) | RULES, cmd_set,
	    "set [--template name] [--language lang] [--waba-id id|none]\n"
	    "      [--max-attempts n] [--on-unknown resend|fail] "
	    "[--breaker n|default]\n"
	    "      [rules] id\n"
	    "    rules: [--expires-at time|none] [--window HH:MM-HH:MM|none]\n"
	    "           [--tz zone|none] [--weight n] "
	    "[--priority normal|urgent]" },
	{ "limit", 0, -1, 0, O(PERIOD) | O(PORTFOLIO) | O(FETCH), cmd_limit,
	    "limit [portfolio|phone-number-id "
	    "[250|2000|10000|100000|unlimited [--period secs]]]\n"
	    "  limit --portfolio name phone-number-id...\n"
	    "  limit --fetch phone-number-id..." },
	{ "suppress", 1, -1, 0, O(NUMBER) | O(REASON) | O(CC) | O(REJECT) |
	    O(JSON), cmd_suppress,
	    "suppress add|remove [--phone-number-id id] [--reason text]\n"
	    "           [--country-code cc] number...\n"
	    "  suppress list [--phone-number-id id] [--json]\n"
	    "  suppress import [--phone-number-id id] [--reason text]\n"
	    "           [--country-code cc] [--reject file] file|-" },
	{ "list", 0, 0, 0, O(JSON), cmd_list, "list [--json]" },
	{ "migrate", 0, 0, 0, 0, cmd_migrate, "migrate" },
	{ "rates", 1, 2, 0, O(JSON), cmd_rates,
	    "rates load file|-\n"
	    "  rates show [--json]" },
	{ "estimate", 1, 1, 1, O(CATEGORY) | O(JSON), cmd_estimate,
	    "estimate [--category category] [--json] id" },
	{ "replies", 1, 1, 1, O(JSON), cmd_replies, "replies [--json] id" },
	{ "inbound", 1, 1, 0, O(DAYS), cmd_inbound,
	    "inbound prune [--days n]" },
	{ "run", 1, 1, 1, OWN, cmd_run,
	    "run [-n | --dry-run] [--no-check] [--until-idle] "
	    "[-r | --rate rate]\n"
	    "      [-b | --burst n] [-j | --concurrency n] [--timeout-ms ms]\n"
	    "      [--outage-after secs] [--pg-timeout secs] "
	    "[--stale-after secs]\n"
	    "      [--unknown-after secs] [--settle-max secs] "
	    "[--claim-opt opt]\n"
	    "      [--throttle-opt opt] [--send-opt opt] [--record-opt opt]\n"
	    "      [--reconcile-opt opt] id\n"
	    "  run --due [options]" },
	{ "watch", 1, 1, 1, OWN, cmd_watch,
	    "watch [--interval secs] [--pg-timeout secs] id" },
};

#define NCMDS (sizeof cmds / sizeof *cmds)

static const struct cmd *
find(const char *name)
{
	size_t i;

	for (i = 0; i < NCMDS; i++)
		if (strcmp(name, cmds[i].name) == 0)
			return &cmds[i];
	return NULL;
}

static void
usage(FILE *f, int status)
{
	size_t i;

	fprintf(f, "usage: wa-campaign [-d conninfo] command [options]\n"
	    "       wa-campaign -h | --help | --version\n");
	for (i = 0; i < NCMDS; i++)
		fprintf(f, "  %s\n", cmds[i].usage);
	exit(status);
}

void
campaign_usage(const char *name, FILE *f, int status)
{
	fprintf(f, "usage: wa-campaign [-d conninfo] %s\n", find(name)->usage);
	exit(status);
}

PGconn *
campaign_db(const struct opts *o)
{
	if (conn == NULL)
		conn = wa_pg_connect(o->conninfo);
	return conn;
}

void
campaign_number_id(const char *s)
{
	if (*s == '\0' || s[strspn(s, "0123456789")] != '\0')
		wa_die(EX_USAGE, "the phone number id is the number's id in "
		    "the Cloud API (digits), not '%s'", s);
}

/* The command's operands and the options it takes, checked. */
static void
check(const struct cmd *cmd, struct opts *o, int n)
{
	size_t i;

	if (n < cmd->min) {
		wa_warn("%s: %s missing", cmd->name, cmd->id && n == 0 ?
		    "the campaign id is" : "an operand is");
		campaign_usage(cmd->name, stderr, EX_USAGE);
	}
	if (cmd->max >= 0 && n > cmd->max) {
		wa_warn("%s: one operand too many: '%s'", cmd->name,
		    o->args[cmd->max]);
		campaign_usage(cmd->name, stderr, EX_USAGE);
	}
	for (i = 0; longs[i].name != NULL; i++)
		if (longs[i].val < NOPT && (o->given & ~cmd->opts &
		    O(longs[i].val)))
			wa_die(EX_USAGE, "%s takes no --%s", cmd->name,
			    longs[i].name);
	if (o->given & O(CC) && wa_phone_cc(o->val[CC]) == NULL)
		wa_die(EX_USAGE, "a country code is 1 to 3 digits, the first "
		    "not 0, not '%s'", o->val[CC]);
	if (o->given & O(CC))
		o->val[CC] = wa_phone_cc(o->val[CC]);
	if (cmd->id)
		wa_num(o->args[0], 1, LLONG_MAX, "campaign id");
}

int
main(int argc, char **argv)
{
	static struct opts o;
	const struct cmd *cmd = NULL;
	int c, i, ret;

	wa_prog = "wa-campaign";
	o.argc = argc;
	o.argv = argv;
	/* A command of its own options is known by its first word. */
	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "-d") == 0)
			i++;
		else if (argv[i][0] != '-' || strcmp(argv[i], "--") == 0)
			break;
	if (i < argc && (cmd = find(argv[i])) != NULL && cmd->opts & OWN) {
		o.name = cmd->name;
		return cmd->fn(&o);
	}
	while ((c = getopt_long(argc, argv, "d:hn", longs, NULL)) != -1) {
		if (c > 0 && c < NOPT) {
			o.val[c] = optarg;
			o.given |= O(c);
		} else if (c == 'n') {
			o.given |= O(DRY);
		} else if (c == 'd')
			o.conninfo = optarg;
		else if (!wa_common_opt(c, optarg, usage))
			usage(stderr, EX_USAGE);
	}
	if (optind >= argc) {
		wa_warn("no command");
		usage(stderr, EX_USAGE);
	}
	if ((cmd = find(argv[optind])) == NULL || cmd->opts & OWN) {
		wa_warn("no command '%s'", argv[optind]);
		usage(stderr, EX_USAGE);
	}
	o.name = cmd->name;
	o.args = argv + optind + 1;
	check(cmd, &o, argc - optind - 1);
	wa_signals();
	ret = cmd->fn(&o);
	if (fflush(stdout) == EOF || ferror(stdout))
		wa_die(EX_IOERR, "write to stdout:");
	PQfinish(conn);
	return ret;
}
