/*
 * check.c: wa-campaign check, and the check start and run make first:
 * whether a campaign can go, asked of the Graph API before anything is
 * sent.
 *
 * Reads the campaign and its rows still to send (Postgres, read only:
 * their parameters grouped by shape with template_shape(), the first
 * rows of a shape that does not fit, the +1 numbers by area code); the
 * templates of the campaign's name in its WhatsApp Business Account
 * (GET /<WABA_ID>/message_templates?name=..., each further page of 100
 * followed) and the sending number (GET /<PHONE_NUMBER_ID>?fields=...):
 * two calls, never one per row, never a send. The WABA is the
 * campaign's (create or set --waba-id), else WA_WABA_ID.
 *
 * It refuses a campaign whose template is missing, not in the
 * campaign's language or not APPROVED, or whose rows' parameters do not
 * fit the template's placeholders (their count or names, a media header,
 * URL buttons), naming the first rows that do not; it warns, with
 * numbers, of a yellow or red quality rating, a display name not
 * approved, a campaign larger than the messaging limit lets through in a
 * day, and marketing rows to United States numbers (Meta delivers them
 * no marketing template: 131049).
 *
 * Writes the verdict (--json: one object with "verdict", "go" or
 * "refused", the reasons, the warnings, the template, the number and
 * the rows) on stdout, or on f for start. Returns 0 when the campaign can
 * go, 65 when it cannot; exits 69 when the API cannot be reached or
 * answers an error or what does not parse, or when Postgres fails; 78
 * without a token or a WABA id; 64 on an unknown campaign.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/err.h"
#include "core/sig.h"
#include "records/json.h"
#include "records/numplan.h"
#include "records/template.h"
#include "api/base.h"
#include "api/graph.h"
#include "campaign.h"

#define PAGES	10	/* pages of 100 templates of one name, at most */

struct camp {
	char		 id[24];
	char		 number[65];
	char		 name[513];
	char		 lang[16];
	char		 waba[33];
};

static void
add_str(struct json_object *o, const char *k, const char *s)
{
	json_object_object_add(o, k, s != NULL && *s ?
	    json_object_new_string(s) : NULL);
}

/* Adds the sentence fmt to array a (the reasons, the warnings). */
static void
say(struct json_object *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
say(struct json_object *a, const char *fmt, ...)
{
	char s[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s, sizeof s, fmt, ap);
	va_end(ap);
	json_object_array_add(a, json_object_new_string(s));
}

/* n with a comma every three digits, in buf (32 bytes). */
static const char *
thousands(char *buf, long long n)
{
	char t[32];
	int len, i, j = 0;

	len = snprintf(t, sizeof t, "%lld", n < 0 ? -n : n);
	if (n < 0)
		buf[j++] = '-';
	for (i = 0; i < len; i++) {
		if (i > 0 && (len - i) % 3 == 0)
			buf[j++] = ',';
		buf[j++] = t[i];
	}
	buf[j] = '\0';
	return buf;
}

/* The campaign's row; exits 64 when there is none, 78 without a WABA. */
static void
load(PGconn *conn, const char *id, struct camp *c)
{
	const char *p[] = { id }, *env = getenv("WA_WABA_ID");
	PGresult *res = wa_pg_must(conn, "SELECT phone_number_id,"
	    " template_name, template_lang, coalesce(waba_id, '')"
	    " FROM campaigns WHERE id = $1", 1, p);

	if (PQntuples(res) != 1)
		wa_die(EX_USAGE, "no campaign %s", id);
	snprintf(c->id, sizeof c->id, "%s", id);
	snprintf(c->number, sizeof c->number, "%s", PQgetvalue(res, 0, 0));
	snprintf(c->name, sizeof c->name, "%s", PQgetvalue(res, 0, 1));
	snprintf(c->lang, sizeof c->lang, "%s", PQgetvalue(res, 0, 2));
	snprintf(c->waba, sizeof c->waba, "%s", PQgetvalue(res, 0, 3));
	PQclear(res);
	if (*c->waba)
		return;
	if (env == NULL || *env == '\0')
		wa_die(EX_CONFIG, "campaign %s has no WhatsApp Business "
		    "Account id to find its template in: wa-campaign set "
		    "--waba-id ID %s, or WA_WABA_ID", id, id);
	if (strlen(env) >= sizeof c->waba || env[strspn(env,
	    "0123456789")] != '\0')
		wa_die(EX_CONFIG, "WA_WABA_ID is a WhatsApp Business Account's "
		    "id (digits), not '%.40s'", env);
	snprintf(c->waba, sizeof c->waba, "%s", env);
}

/* Dies 69 with why: the API did not answer what a check can read. */
static void
unavailable(const struct camp *c, const char *why)
{
	wa_die(EX_UNAVAILABLE, "campaign %s: cannot check: %s; nothing was "
	    "judged", c->id, why);
}

/*
 * The templates named c->name in the WABA, every page; the one in the
 * campaign's language into t (returns 1), or 0, with the languages
 * there are in langs.
 */
static int
templates(const struct camp *c, struct wa_template *t,
    struct json_object *langs)
{
	const char *args[] = { "name", c->name, "fields", "name,language,"
	    "status,category,parameter_format,components,quality_score",
	    "limit", "100", NULL, NULL, NULL };
	char *cursor = NULL;
	struct json_object *ans, *data, *after;
	struct wa_template one;
	char path[64], why[512];
	size_t i, n;
	int page, found = 0;

	snprintf(path, sizeof path, "%s/message_templates", c->waba);
	for (page = 0; page < PAGES; page++) {
		if (wa_graph_get(path, args, &ans, why, sizeof why) < 0)
			unavailable(c, why);
		data = wa_json_get(ans, "data");
		if (!json_object_is_type(data, json_type_array))
			unavailable(c, "the template listing has no \"data\" "
			    "array");
		n = json_object_array_length(data);
		for (i = 0; i < n; i++) {
			if (wa_template_read(json_object_array_get_idx(data,
			    i), &one, why, sizeof why) < 0)
				unavailable(c, why);
			/* The name filter need not be exact: this is. */
			if (strcmp(one.name, c->name) != 0) {
				wa_template_free(&one);
				continue;
			}
			json_object_array_add(langs,
			    json_object_new_string(one.language));
			if (!found && strcmp(one.language, c->lang) == 0) {
				*t = one;
				found = 1;
			} else
				wa_template_free(&one);
		}
		after = wa_json_get(ans, "paging.cursors.after");
		/* More pages while Graph gives a next one. */
		if (wa_json_get(ans, "paging.next") == NULL ||
		    !json_object_is_type(after, json_type_string)) {
			json_object_put(ans);
			free(cursor);
			return found;
		}
		free(cursor);
		cursor = wa_strdup(json_object_get_string(after));
		args[6] = "after";
		args[7] = cursor;
		json_object_put(ans);
	}
	unavailable(c, "more than 1,000 templates of that name: the listing "
	    "does not end");
	return 0;
}

/* The sending number's fields, as v's "number" (the answer, kept). */
static struct json_object *
number(PGconn *conn, const struct camp *c)
{
	const char *limit = campaign_limit_field();
	char fields[256], why[512];
	const char *args[] = { "fields", fields, NULL };
	struct json_object *ans;

	snprintf(fields, sizeof fields, "display_phone_number,verified_name,"
	    "quality_rating,name_status,throughput,%s", limit);
	if (wa_graph_get(c->number, args, &ans, why, sizeof why) < 0)
		unavailable(c, why);
	if (!json_object_is_type(ans, json_type_object))
		unavailable(c, "the number's answer is not an object");
	json_object_object_add(ans, "messaging_limit",
	    json_object_get(wa_json_get(ans, limit)));
	json_object_object_add(ans, "messaging_limit_people",
	    json_object_new_int64(campaign_tier(conn, wa_json_get(ans,
	    limit))));
	return ans;
}

/*
 * The rows still to send: their count, the shapes that do not fit t
 * (none when t is NULL) and the first such rows, into v's "rows".
 */
static long long
rows(PGconn *conn, const struct camp *c, const struct wa_template *t,
    struct json_object *v)
{
	const char *p[] = { c->id, NULL };
	struct json_object *r = json_object_new_object(), *sh, *first, *why;
	struct json_object *fitw = NULL;
	struct wa_buf bad = { 0 };
	long long total = 0, misfit = 0;
	char w[512];
	const char *fit;
	PGresult *res;
	int i;

	res = wa_pg_must(conn, "SELECT template_shape(template_params),"
	    " count(*) FROM campaign_recipients"
	    " WHERE campaign_id = $1 AND phase < 2 GROUP BY 1", 1, p);
	why = json_object_new_object();
	wa_pg_array_start(&bad);
	for (i = 0; i < PQntuples(res); i++) {
		total += atoll(PQgetvalue(res, i, 1));
		if (t == NULL)
			continue;
		if ((sh = json_tokener_parse(PQgetvalue(res, i, 0))) == NULL)
			wa_die(EX_SOFTWARE, "template_shape() is not JSON");
		if ((fit = wa_template_fit(t, sh, w, sizeof w)) != NULL) {
			misfit += atoll(PQgetvalue(res, i, 1));
			wa_pg_array_str(&bad, PQgetvalue(res, i, 0));
			json_object_object_add(why, PQgetvalue(res, i, 0),
			    json_object_new_string(fit));
		}
		json_object_put(sh);
	}
	wa_pg_array_end(&bad);
	PQclear(res);
	json_object_object_add(r, "to_send", json_object_new_int64(total));
	json_object_object_add(r, "misfit", json_object_new_int64(misfit));
	first = json_object_new_array();
	if (misfit > 0) {
		p[1] = bad.s;
		res = wa_pg_must(conn, "SELECT id, phone,"
		    " template_shape(template_params) FROM campaign_recipients"
		    " WHERE campaign_id = $1 AND phase < 2"
		    " AND template_shape(template_params) = ANY ($2::jsonb[])"
		    " ORDER BY id LIMIT 5", 2, p);
		for (i = 0; i < PQntuples(res); i++) {
			sh = json_object_new_object();
			json_object_object_add(sh, "id", json_object_new_int64(
			    atoll(PQgetvalue(res, i, 0))));
			add_str(sh, "phone", PQgetvalue(res, i, 1));
			json_object_object_get_ex(why, PQgetvalue(res, i, 2),
			    &fitw);
			json_object_object_add(sh, "why",
			    json_object_get(fitw));
			json_object_array_add(first, sh);
		}
		PQclear(res);
	}
	json_object_object_add(r, "first_misfits", first);
	json_object_object_add(v, "rows", r);
	json_object_put(why);
	wa_buf_free(&bad);
	return total;
}

/* Rows still to send to United States numbers (+1, by area code). */
static long long
us_rows(PGconn *conn, const struct camp *c)
{
	const char *p[] = { c->id };
	struct wa_numplan np;
	char why[128];
	long long n = 0;
	PGresult *res;
	int i;

	res = wa_pg_must(conn, "SELECT min(phone), count(*)"
	    " FROM campaign_recipients WHERE campaign_id = $1 AND phase < 2"
	    " AND phone LIKE '+1%' GROUP BY substr(phone, 1, 5)", 1, p);
	/* A +1 area code is one country's: its first number says which. */
	for (i = 0; i < PQntuples(res); i++)
		if (wa_numplan_check(PQgetvalue(res, i, 0), &np, 0, why,
		    sizeof why) == 0 && strcmp(np.region, "US") == 0)
			n += atoll(PQgetvalue(res, i, 1));
	PQclear(res);
	return n;
}

/* What the template's status means for a send, in words. */
static const char *
status_means(const char *status)
{
	if (strcmp(status, "PAUSED") == 0)
		return "Meta answers 132015 to every send of it until it is "
		    "unpaused";
	if (strcmp(status, "DISABLED") == 0)
		return "Meta answers 132016 to every send of it";
	if (strcmp(status, "PENDING") == 0 || strcmp(status, "IN_APPEAL") == 0)
		return "it is still in review; Meta answers 132001 until it is "
		    "approved";
	return "only an APPROVED template is sent; Meta answers 132001";
}

/* The warnings of the number, the limit and the template, into w. */
static void
warnings(struct json_object *v, const struct wa_template *t,
    long long total, long long us, struct json_object *w)
{
	struct json_object *num = wa_json_get(v, "number");
	const char *q = wa_json_str(num, "quality_rating"),
	    *ns = wa_json_str(num, "name_status");
	long long day = json_object_get_int64(wa_json_get(num,
	    "messaging_limit_people"));
	char a[32], b[32];

	if (q != NULL && (strcmp(q, "YELLOW") == 0 || strcmp(q, "RED") == 0))
		say(w, "the number's quality rating is %s (%s): more blocks "
		    "and reports can pause the template", q, *q == 'R' ?
		    "low" : "medium");
	if (ns != NULL && strcmp(ns, "APPROVED") != 0 &&
	    strcmp(ns, "AVAILABLE_WITHOUT_REVIEW") != 0)
		say(w, "the number's display name is %s, not approved", ns);
	if (day == 0)
		say(w, "the messaging limit is not known (%s): Meta may let "
		    "fewer people a day be messaged than this campaign has",
		    json_object_get_string(wa_json_get(num,
		    "messaging_limit")) ? json_object_get_string(
		    wa_json_get(num, "messaging_limit")) : "none given");
	else if (day > 0 && total > day) {
		json_object_object_add(v, "days",
		    json_object_new_int64((total + day - 1) / day));
		say(w, "at %s people a day this campaign needs %lld days "
		    "(%s people, outside a customer service window, count "
		    "against the business's limit)", thousands(a, day),
		    (total + day - 1) / day, thousands(b, total));
	}
	if (t == NULL)
		return;
	if (*t->quality && (strcmp(t->quality, "YELLOW") == 0 ||
	    strcmp(t->quality, "RED") == 0))
		say(w, "the template's quality is %s: Meta may pause it",
		    t->quality);
	if (us > 0)
		say(w, "%s rows go to United States numbers, to which Meta "
		    "delivers no marketing template: each would fail with "
		    "131049 and cost a call", thousands(a, us));
	if (*t->other)
		say(w, "the template's %s component is not checked",
		    t->other);
}

/* The template as v's "template". */
static void
template_out(struct json_object *v, const struct wa_template *t,
    struct json_object *langs)
{
	struct json_object *o = json_object_new_object();
	struct wa_buf b = { 0 };

	add_str(o, "name", t->name);
	add_str(o, "language", t->language);
	add_str(o, "id", t->id);
	add_str(o, "status", t->status);
	add_str(o, "category", t->category);
	add_str(o, "parameter_format", t->named ? "NAMED" : "POSITIONAL");
	add_str(o, "quality_score", t->quality);
	wa_template_body(t, &b);
	add_str(o, "body", b.s);
	add_str(o, "header", t->header);
	json_object_object_add(o, "languages", json_object_get(langs));
	json_object_object_add(v, "template", o);
	wa_buf_free(&b);
}

/* The string at path in o, else dflt. */
static const char *
field(struct json_object *o, const char *path, const char *dflt)
{
	const char *s = wa_json_str(o, path);

	return s != NULL ? s : dflt;
}

/* The array at path in o: its length, and its item i. */
static size_t
count(struct json_object *o, const char *path)
{
	o = wa_json_get(o, path);
	return json_object_is_type(o, json_type_array) ?
	    json_object_array_length(o) : 0;
}

static struct json_object *
item(struct json_object *o, const char *path, size_t i)
{
	return json_object_array_get_idx(wa_json_get(o, path), i);
}

/* The verdict as text, on f. */
static void
print(FILE *f, struct json_object *v)
{
	struct json_object *t = wa_json_get(v, "template"), *x;
	struct json_object *num = wa_json_get(v, "number");
	const char *id = json_object_get_string(wa_json_get(v, "campaign"));
	long long day, n;
	char n1[32], n2[32];
	size_t i, w = count(v, "warnings");

	if (t != NULL) {
		fprintf(f, "campaign %s: template %s %s: %s, %s, body %s", id,
		    field(t, "name", ""), field(t, "language", ""),
		    field(t, "status", ""), field(t, "category",
		    "no category"), field(t, "body", ""));
		if (wa_json_str(t, "header") != NULL)
			fprintf(f, ", header %s", field(t, "header", ""));
		if (wa_json_str(t, "quality_score") != NULL)
			fprintf(f, ", quality %s", field(t, "quality_score",
			    ""));
		fprintf(f, "\n");
	}
	day = json_object_get_int64(wa_json_get(num,
	    "messaging_limit_people"));
	fprintf(f, "campaign %s: number %s", id, field(v, "phone_number_id",
	    ""));
	if (wa_json_str(num, "display_phone_number") != NULL)
		fprintf(f, " (%s%s%s)", field(num, "display_phone_number", ""),
		    wa_json_str(num, "verified_name") ? ", " : "",
		    field(num, "verified_name", ""));
	fprintf(f, ": quality %s, name %s, throughput %s, ",
	    field(num, "quality_rating", "unknown"), field(num, "name_status",
	    "unknown"), field(num, "throughput.level", "unknown"));
	if (day > 0)
		fprintf(f, "limit %s people a day\n", thousands(n1, day));
	else
		fprintf(f, "limit %s\n", day < 0 ? "unlimited" : "unknown");
	n = json_object_get_int64(wa_json_get(v, "rows.misfit"));
	fprintf(f, "campaign %s: %s rows to send", id, thousands(n1,
	    json_object_get_int64(wa_json_get(v, "rows.to_send"))));
	if (n > 0)
		fprintf(f, ", %s of which do not fit the template",
		    thousands(n2, n));
	fprintf(f, "\n");
	for (i = 0; i < count(v, "reasons"); i++)
		fprintf(f, "refused: %s\n", json_object_get_string(item(v,
		    "reasons", i)));
	for (i = 0; i < count(v, "rows.first_misfits"); i++) {
		x = item(v, "rows.first_misfits", i);
		fprintf(f, "  row %s (%s): %s\n", json_object_get_string(
		    wa_json_get(x, "id")), field(x, "phone", ""),
		    field(x, "why", ""));
	}
	for (i = 0; i < w; i++)
		fprintf(f, "warning: %s\n", json_object_get_string(item(v,
		    "warnings", i)));
	if (strcmp(field(v, "verdict", ""), "go") != 0)
		fprintf(f, "campaign %s cannot go\n", id);
	else if (w > 0)
		fprintf(f, "campaign %s can go, with %zu %s\n", id, w,
		    w == 1 ? "warning" : "warnings");
	else
		fprintf(f, "campaign %s can go\n", id);
}

int
campaign_check(PGconn *conn, const char *id, FILE *f, int json)
{
	struct json_object *v = json_object_new_object(), *reasons, *warns;
	struct json_object *langs = json_object_new_array(), *misfit;
	struct wa_template t;
	struct wa_buf have = { 0 };
	struct camp c;
	long long total, us = 0;
	size_t i;
	char n1[32];
	int found, go;

	load(conn, id, &c);
	reasons = json_object_new_array();
	warns = json_object_new_array();
	found = templates(&c, &t, langs);
	json_object_object_add(v, "campaign", json_object_new_int64(
	    atoll(c.id)));
	add_str(v, "waba_id", c.waba);
	add_str(v, "phone_number_id", c.number);
	json_object_object_add(v, "number", number(conn, &c));
	if (!found && json_object_array_length(langs) == 0)
		say(reasons, "no template %s in WhatsApp Business Account %s: "
		    "Meta answers 132001 to every send", c.name, c.waba);
	else if (!found) {
		for (i = 0; i < json_object_array_length(langs); i++) {
			wa_buf_puts(&have, i > 0 ? ", " : "");
			wa_buf_puts(&have, json_object_get_string(
			    json_object_array_get_idx(langs, i)));
		}
		say(reasons, "template %s has no %s (it has %s): Meta answers "
		    "132001 to every send", c.name, c.lang, have.s);
		wa_buf_free(&have);
	} else {
		template_out(v, &t, langs);
		if (strcmp(t.status, "APPROVED") != 0)
			say(reasons, "template %s %s is %s: %s", t.name,
			    t.language, t.status, status_means(t.status));
	}
	total = rows(conn, &c, found ? &t : NULL, v);
	misfit = wa_json_get(v, "rows.misfit");
	if (json_object_get_int64(misfit) > 0)
		say(reasons, "%s %s not fit the template's placeholders: "
		    "Meta would answer each with 132000 (132018 from "
		    "v23.0)", thousands(n1, json_object_get_int64(misfit)),
		    json_object_get_int64(misfit) == 1 ? "row does" :
		    "rows do");
	if (found && strcmp(t.category, "MARKETING") == 0)
		us = us_rows(conn, &c);
	json_object_object_add(wa_json_get(v, "rows"), "us_marketing",
	    json_object_new_int64(us));
	warnings(v, found ? &t : NULL, total, us, warns);
	go = json_object_array_length(reasons) == 0;
	add_str(v, "verdict", go ? "go" : "refused");
	json_object_object_add(v, "reasons", reasons);
	json_object_object_add(v, "warnings", warns);
	if (json)
		fprintf(f, "%s\n", json_object_to_json_string_ext(v,
		    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	else
		print(f, v);
	fflush(f);
	if (found)
		wa_template_free(&t);
	json_object_put(langs);
	json_object_put(v);
	return go ? 0 : EX_DATAERR;
}

int
cmd_check(struct opts *o)
{
	return campaign_check(campaign_db(o), o->args[0], stdout,
	    (o->given & O(JSON)) != 0);
}

int
check_child(const char *dir, const char *id)
{
	char path[4200];
	sigset_t none;
	pid_t pid;
	int st;

	if (*dir)
		snprintf(path, sizeof path, "%s/wa-campaign", dir);
	else
		snprintf(path, sizeof path, "wa-campaign");
	if ((pid = fork()) < 0)
		wa_die(EX_OSERR, "fork:");
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGCHLD, SIG_DFL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* Its verdict goes where run's messages go. */
		if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			_exit(EX_OSERR);
		execlp(path, "wa-campaign", "check", id, (char *)NULL);
		fprintf(stderr, "wa-campaign: cannot run %s: %s\n", path,
		    strerror(errno));
		_exit(EX_SOFTWARE);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			wa_die(EX_OSERR, "waitpid:");
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}
