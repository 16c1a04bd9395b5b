/*
 * wa-campaign: the operator's tool. Creates campaigns, imports their
 * recipients, starts, pauses, resumes and cancels them, reports where
 * they stand and puts failed or unknown rows back in the queue; run
 * (lib/run/run.c) and watch (lib/run/progress.c) have their own options
 * and exit statuses, described there.
 *
 * Reads and writes campaigns and campaign_recipients (Postgres); import
 * reads a CSV or NDJSON file (or stdin), requeue --phones a list of
 * numbers. Writes the new id (create), the report (status), the
 * campaigns (list), the recipients (export) or the rows requeued
 * (requeue) on stdout; messages on stderr. This file is the dispatcher:
 * the options and the table of commands; the work is in lib/pg (moves,
 * load, report, figures, export, requeue, setting, migrate). Exits 0 on
 * success, 64 on a usage error or an unknown campaign, 65 when a move
 * or a change is not allowed from the campaign's state or an import or
 * requeue rejected lines (not counting the suppressed numbers an import
 * skips), 66 when a file cannot be opened, 69 when
 * Postgres fails (an export cut short included), 74 when reading a file
 * or writing the reject file or stdout fails, 75 when a signal cut an
 * import or a requeue short (nothing done).
 *
 * report writes the campaign as one HTML page (lib/pg/figures.c and
 * lib/records/html.c), or with --json the figures it is drawn from.
 */
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "core/sig.h"
#include "records/import.h"
#include "pg/load.h"
#include "pg/migrate.h"
#include "pg/moves.h"
#include "records/input.h"
#include "records/json.h"
#include "records/phone.h"
#include "pg/export.h"
#include "pg/report.h"
#include "pg/figures.h"
#include "pg/requeue.h"
#include "pg/rules.h"
#include "pg/setting.h"
#include "run/progress.h"
#include "run/run.h"

enum { NAME = 1, NUMBER, TEMPLATE, LANG, MAXATT, UNKNOWN, CC, REJECT,
    REASON, JSON, STATUS, CODE, FORMAT, CLASS, PHONES, BREAKER, DRY,
    EXPIRES, WINDOW, TZ, WEIGHT, PRIORITY, PERIOD, NOPT };
/* The options that are a campaign's settings, in pg/setting.h's order. */
static const int settings[WA_SET_N] = { TEMPLATE, LANG, MAXATT, UNKNOWN,
    BREAKER, EXPIRES, WINDOW, TZ, WEIGHT, PRIORITY };
#define RULES (O(EXPIRES) | O(WINDOW) | O(TZ) | O(WEIGHT) | O(PRIORITY))
#define O(x) (1u << (x))

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
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

static const char *val[NOPT];	/* the value of each option given */
static unsigned given;
static const char *conninfo;
static PGconn *conn;

static void
usage(FILE *f, int status)
{
	fprintf(f, "usage: wa-campaign [-d conninfo] command [options]\n"
	    "       wa-campaign -h | --help | --version\n"
	    "  create --name name --phone-number-id id --template name\n"
	    "         [--language lang] [--max-attempts n] "
	    "[--on-unknown resend|fail]\n"
	    "         [rules]\n"
	    "  import [--country-code cc] [--reject file] id file|-\n"
	    "  start id\n  pause [--reason text] id\n  resume id\n"
	    "  cancel [--reason text] id\n  status [--json] id\n"
	    "  report [--json] id > report.html\n"
	    "  export [--status s] [--code n] [--format csv|ndjson] id\n"
	    "  requeue [-n | --dry-run] "
	    "[--status failed|unknown|pending[,...]]\n"
	    "          [--code n] [--class c]\n"
	    "          [--phones file [--country-code cc] [--reject file]] "
	    "id\n"
	    "  set [--template name] [--language lang] [--max-attempts n]\n"
	    "      [--on-unknown resend|fail] [--breaker n|default] "
	    "[rules] id\n"
	    "    rules: [--expires-at time|none] [--window HH:MM-HH:MM|none]\n"
	    "           [--tz zone|none] [--weight n] "
	    "[--priority normal|urgent]\n"
	    "  limit [phone-number-id [250|1000|10000|100000|unlimited "
	    "[--period secs]]]\n"
	    "  suppress add|remove [--phone-number-id id] [--reason text]\n"
	    "           [--country-code cc] number...\n"
	    "  suppress list [--phone-number-id id] [--json]\n"
	    "  suppress import [--phone-number-id id] [--reason text]\n"
	    "           [--country-code cc] [--reject file] file|-\n"
	    "  list [--json]\n  migrate\n"
	    "  run [-n | --dry-run] [-r | --rate rate] [-b | --burst n]\n"
	    "      [-j | --concurrency n] [--timeout-ms ms] "
	    "[--outage-after secs]\n"
	    "      [--pg-timeout secs] [--stale-after secs] "
	    "[--unknown-after secs]\n"
	    "      [--settle-max secs] [--claim-opt opt] "
	    "[--throttle-opt opt]\n"
	    "      [--send-opt opt] [--record-opt opt] "
	    "[--reconcile-opt opt] id\n"
	    "  watch [--interval secs] [--pg-timeout secs] id\n");
	exit(status);
}

static PGconn *
db(void)
{
	if (conn == NULL)
		conn = wa_pg_connect(conninfo);
	return conn;
}

/* The settings given as options, for campaign id. */
static struct wa_setting
setting(const char *id)
{
	struct wa_setting st = { id, { NULL } };
	int i;

	for (i = 0; i < WA_SET_N; i++)
		st.v[i] = val[settings[i]];
	return st;
}

static int
create(char **args)
{
	struct wa_setting st = setting(NULL);

	(void)args;
	return wa_campaign_create(db(), val[NAME], val[NUMBER], &st);
}

static int
import(char **args)
{
	struct wa_rows rows;
	int fd = STDIN_FILENO, ret;

	if (strcmp(args[1], "-") != 0 &&
	    (fd = open(args[1], O_RDONLY | O_CLOEXEC)) < 0)
		wa_die(EX_NOINPUT, "open %s:", args[1]);
	wa_rows_init(&rows, fd, fd == STDIN_FILENO ? "<stdin>" : args[1],
	    val[CC]);
	if (val[REJECT] != NULL)
		wa_input_reject_file(&rows.in, val[REJECT]);
	wa_import_load(db(), args[0], &rows);
	/* Suppressed rows are kept in --reject, but the file had no fault. */
	ret = rows.in.rejected > rows.nsuppressed ? EX_DATAERR : 0;
	wa_rows_free(&rows);
	if (fd != STDIN_FILENO)
		close(fd);
	return ret;
}

static int
status(char **args)
{
	struct json_object *o = wa_report(db(), args[0]);

	if (o == NULL)
		wa_die(EX_USAGE, "no campaign %s", args[0]);
	if (given & O(JSON))
		wa_out_json(o);
	else
		wa_report_print(stdout, o);
	json_object_put(o);
	return 0;
}

static int
report(char **args)
{
	return wa_figures_write(db(), args[0], given & O(JSON), stdout);
}

static int
export(char **args)
{
	struct wa_export e = { args[0], val[STATUS], val[CODE],
	    WA_EXPORT_CSV };

	if (e.status != NULL && !wa_export_status(e.status))
		wa_die(EX_USAGE, "--status is pending, sending, unknown, sent, "
		    "delivered, read, failed, suppressed or expired, not "
		    "'%s'", e.status);
	if (e.code != NULL)
		wa_num(e.code, 0, INT_MAX, "error code");
	if (val[FORMAT] != NULL && strcmp(val[FORMAT], "ndjson") == 0)
		e.format = WA_EXPORT_NDJSON;
	else if (val[FORMAT] != NULL && strcmp(val[FORMAT], "csv") != 0)
		wa_die(EX_USAGE, "--format is csv or ndjson, not '%s'",
		    val[FORMAT]);
	wa_campaign_state(db(), args[0]);
	fflush(stdout);
	wa_export(db(), &e);
	return 0;
}

static int
requeue(char **args)
{
	struct wa_requeue rq = { args[0], val[STATUS], val[CODE], val[CLASS],
	    val[PHONES], val[REJECT], val[CC], (given & O(DRY)) != 0 };

	if ((val[REJECT] != NULL || val[CC] != NULL) && val[PHONES] == NULL)
		wa_die(EX_USAGE, "--reject and --country-code go with "
		    "--phones");
	return wa_requeue(db(), &rq);
}

static int
set(char **args)
{
	struct wa_setting st = setting(args[0]);

	return wa_setting(db(), &st, 0);
}

static int
limit(char **args)
{
	return wa_limit(db(), args[0], args[0] ? args[1] : NULL, val[PERIOD]);
}

static int
suppress(char **args)
{
	struct wa_suppress s = { args[0], val[NUMBER], val[REASON], val[CC],
	    val[REJECT], (given & O(JSON)) != 0, args + 1, 0 };

	while (s.args[s.nargs] != NULL)
		s.nargs++;
	if (val[REJECT] != NULL && strcmp(s.verb, "import") != 0)
		wa_die(EX_USAGE, "--reject goes with suppress import");
	return wa_suppress(db(), &s);
}

static int
list(char **args)
{
	(void)args;
	wa_report_list(db(), stdout, (given & O(JSON)) != 0);
	return 0;
}

static int
migrate(char **args)
{
	(void)args;
	return wa_migrate(db());
}

/*
 * Each command: its operands after the name, from min to max (-1: no
 * end); id: the first is a campaign's id.
 */
static const struct cmd {
	const char	*name;
	int		 min, max, id;
	unsigned	 opts;		/* the options it takes */
	int		(*fn)(char **);
} cmds[] = {
	{ "create", 0, 0, 0, O(NAME) | O(NUMBER) | O(TEMPLATE) | O(LANG) |
	    O(MAXATT) | O(UNKNOWN) | RULES, create },
	{ "import", 2, 2, 1, O(CC) | O(REJECT), import },
	{ "start", 1, 1, 1, 0, NULL }, { "pause", 1, 1, 1, O(REASON), NULL },
	{ "resume", 1, 1, 1, 0, NULL },
	{ "cancel", 1, 1, 1, O(REASON), NULL },
	{ "status", 1, 1, 1, O(JSON), status },
	{ "report", 1, 1, 1, O(JSON), report },
	{ "export", 1, 1, 1, O(STATUS) | O(CODE) | O(FORMAT), export },
	{ "requeue", 1, 1, 1, O(STATUS) | O(CODE) | O(CLASS) | O(PHONES) |
	    O(CC) | O(REJECT) | O(DRY), requeue },
	{ "set", 1, 1, 1, O(TEMPLATE) | O(LANG) | O(MAXATT) | O(UNKNOWN) |
	    O(BREAKER) | RULES, set },
	{ "list", 0, 0, 0, O(JSON), list },
	{ "migrate", 0, 0, 0, 0, migrate },
	{ "limit", 0, 2, 0, O(PERIOD), limit },
	{ "suppress", 1, -1, 0, O(NUMBER) | O(REASON) | O(CC) | O(REJECT) |
	    O(JSON), suppress },
};

int
main(int argc, char **argv)
{
	const struct cmd *cmd = NULL;
	size_t i;
	int c, ret = 0;

	wa_prog = "wa-campaign";
	/* run and watch parse their own options: the first word decides. */
	for (i = 1; i < (size_t)argc; i++)
		if (strcmp(argv[i], "-d") == 0)
			i++;
		else if (argv[i][0] != '-' || strcmp(argv[i], "--") == 0)
			break;
	if (i < (size_t)argc && strcmp(argv[i], "run") == 0)
		return wa_run_main(argc, argv);
	if (i < (size_t)argc && strcmp(argv[i], "watch") == 0)
		return wa_watch_main(argc, argv);
	while ((c = getopt_long(argc, argv, "d:hn", longs, NULL)) != -1) {
		if (c > 0 && c < NOPT) {
			val[c] = optarg;
			given |= O(c);
		} else if (c == 'n') {
			given |= O(DRY);
		} else if (c == 'd')
			conninfo = optarg;
		else if (c == 'h')
			usage(stdout, 0);
		else if (c == 'V')
			wa_version();
		else
			usage(stderr, EX_USAGE);
	}
	for (i = 0; optind < argc && i < sizeof cmds / sizeof *cmds; i++)
		if (strcmp(argv[optind], cmds[i].name) == 0)
			cmd = &cmds[i];
	if (cmd == NULL || argc - optind - 1 < cmd->min ||
	    (cmd->max >= 0 && argc - optind - 1 > cmd->max))
		usage(stderr, EX_USAGE);
	for (i = 0; longs[i].name != NULL; i++)
		if (longs[i].val < NOPT && (given & ~cmd->opts &
		    O(longs[i].val)))
			wa_die(EX_USAGE, "%s takes no --%s", cmd->name,
			    longs[i].name);
	if (given & O(CC) && wa_phone_cc(val[CC]) == NULL)
		wa_die(EX_USAGE, "a country code is 1 to 3 digits, the first "
		    "not 0, not '%s'", val[CC]);
	if (given & O(CC))
		val[CC] = wa_phone_cc(val[CC]);
	if (cmd->id)
		wa_num(argv[optind + 1], 1, LLONG_MAX, "campaign id");
	wa_signals();
	if (cmd->fn != NULL)
		ret = cmd->fn(argv + optind + 1);
	else if (wa_campaign_is_move(cmd->name))
		ret = wa_campaign_move(db(), cmd->name, argv[optind + 1],
		    val[REASON]);
	if (fflush(stdout) == EOF || ferror(stdout))
		wa_die(EX_IOERR, "write to stdout:");
	PQfinish(conn);
	return ret;
}
