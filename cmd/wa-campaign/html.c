/*
 * html.c: a campaign's report as one HTML page, from the figures
 * report.c reads (the object `wa-campaign report --json` prints), so
 * the page and the JSON cannot disagree. Pure formatting: no Postgres
 * here, so it can be fed any figures.
 *
 * The page stands alone: inline CSS, charts as inline SVG, no script,
 * and nothing fetched (no font, no image, no link to a network), so it
 * opens offline, mailed or archived. Every chart is an <svg> with an id
 * "chart-..." and a <title>; every count the funnel shows is in an
 * element with an id "n-..." (n-total, n-claimed, n-sent, ...), and so
 * are the messages billed and free (n-billed, n-free) and what they cost
 * (spend), and the replies (n-replies, n-repliers, reply-rate,
 * n-answers, n-optouts), for whoever checks the page against
 * `wa-campaign status --json`.
 *
 * Writes to f; the caller checks f for errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "records/json.h"
#include "campaign.h"

#define W 720		/* a chart's width in SVG units */
#define ROW 22		/* a bar's height and gap */
#define LABEL 150	/* room for a bar's label */

struct bar {
	const char	*label;
	long long	 n;
	const char	*color;
};

static const char *style =
    "body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',Roboto,"
    "Helvetica,Arial,sans-serif;color:#1d2329;background:#fff;"
    "margin:0 auto;max-width:800px;padding:16px}"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;"
    "border-bottom:1px solid #d8dde3;padding-bottom:4px}"
    ".state{display:inline-block;padding:1px 8px;border-radius:9px;"
    "background:#e3ecf7;color:#174a7c;font-size:13px}"
    ".muted{color:#5b6670}table{border-collapse:collapse;width:100%}"
    "th,td{text-align:left;padding:3px 8px 3px 0;border-bottom:1px solid "
    "#eef0f3;vertical-align:top}td.n,th.n{text-align:right;"
    "font-variant-numeric:tabular-nums}svg{display:block;width:100%;"
    "height:auto;margin:6px 0}svg text{font:12px system-ui,sans-serif;"
    "fill:#1d2329}.legend span{margin-right:14px}.sw{display:inline-block;"
    "width:10px;height:10px;margin-right:4px}"
    "@media print{body{max-width:none}}";

/* Text with &, <, >, " and ' escaped. */
static void
esc(FILE *f, const char *s)
{
	for (; s != NULL && *s != '\0'; s++)
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			fputc(*s, f);
		}
}

static const char *
str(struct json_object *o, const char *path)
{
	struct json_object *v = wa_json_get(o, path);

	return v != NULL ? json_object_get_string(v) : "-";
}

static long long
num(struct json_object *o, const char *path)
{
	return json_object_get_int64(wa_json_get(o, path));
}

static double
pct(long long n, long long total)
{
	return total > 0 ? 100.0 * n / total : 0.0;
}

/* Horizontal bars, labelled and counted, with shares of total if >= 0. */
static void
bars(FILE *f, const char *id, const char *title, const struct bar *b,
    size_t n, long long total)
{
	long long max = 1;
	size_t i;
	double w;

	for (i = 0; i < n; i++)
		if (b[i].n > max)
			max = b[i].n;
	fprintf(f, "<svg id=\"%s\" viewBox=\"0 0 %d %zu\" role=\"img\">"
	    "<title>", id, W, n * ROW + 4);
	esc(f, title);
	fputs("</title>", f);
	for (i = 0; i < n; i++) {
		w = (W - LABEL - 130.0) * b[i].n / max;
		fprintf(f, "<text x=\"%d\" y=\"%zu\" text-anchor=\"end\">",
		    LABEL - 8, i * ROW + 15);
		esc(f, b[i].label);
		fprintf(f, "</text><rect x=\"%d\" y=\"%zu\" width=\"%.1f\" "
		    "height=\"%d\" fill=\"%s\"/><text x=\"%.1f\" y=\"%zu\">"
		    "%lld", LABEL, i * ROW + 3, w,
		    ROW - 6, b[i].color, LABEL + w + 6, i * ROW + 15, b[i].n);
		if (total >= 0)
			fprintf(f, " (%.1f%%)", pct(b[i].n, total));
		fputs("</text>", f);
	}
	fputs("</svg>\n", f);
}

static void
head(FILE *f, struct json_object *o)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8"
	    "\"><meta name=\"viewport\" content=\"width=device-width\">"
	    "<title>Campaign ", f);
	esc(f, str(o, "id"));
	fputs(": ", f);
	esc(f, str(o, "name"));
	fprintf(f, "</title><style>%s</style></head>\n<body>\n<h1>", style);
	esc(f, str(o, "name"));
	fprintf(f, " <span class=\"muted\">#%lld</span></h1>\n"
	    "<p><span class=\"state\" id=\"state\">", num(o, "id"));
	esc(f, str(o, "state"));
	fputs("</span>", f);
	if (wa_json_str(o, "state_reason") != NULL) {
		fputs(" ", f);
		esc(f, str(o, "state_reason"));
	}
	fprintf(f, " &middot; <span id=\"n-total\">%lld</span> recipients"
	    "</p>\n", num(o, "total"));
}

static void
funnel(FILE *f, struct json_object *o)
{
	static const struct {
		const char *key, *label, *color, *meaning;
	} k[] = {
		{ "claimed", "claimed", "#5b7fa6", "tried at least once" },
		{ "sent", "sent", "#2f6db5", "accepted by the API" },
		{ "delivered", "delivered", "#2a9d6f", "delivered or read" },
		{ "read", "read", "#1b7a4e", "read (or played)" },
		{ "failed", "failed", "#c4413a", "failed for good" },
		{ "unknown", "unknown", "#d08a1f",
		    "fate unknown: wa-reconcile resolves it" },
		{ "pending", "pending", "#8d96a0",
		    "to send, or in the pipe now" },
		{ "suppressed", "suppressed", "#6b4f8a",
		    "opted out: never sent" },
		{ "expired", "expired", "#9a7b4f",
		    "past its expiry: never sent" },
	};
	struct json_object *fu = wa_json_get(o, "funnel");
	struct bar b[sizeof k / sizeof *k];
	long long total = num(o, "total");
	size_t i;

	fputs("<h2 id=\"funnel\">Funnel</h2>\n", f);
	for (i = 0; i < sizeof k / sizeof *k; i++) {
		b[i].label = k[i].label;
		b[i].n = num(fu, k[i].key);
		b[i].color = k[i].color;
	}
	bars(f, "chart-funnel", "Recipients at each step, of all recipients",
	    b, sizeof k / sizeof *k, total);
	fputs("<table><tr><th>step</th><th class=\"n\">rows</th>"
	    "<th class=\"n\">of all</th><th>meaning</th></tr>\n", f);
	for (i = 0; i < sizeof k / sizeof *k; i++)
		fprintf(f, "<tr><td>%s</td><td class=\"n\" id=\"n-%s\">%lld"
		    "</td><td class=\"n\">%.1f%%</td><td class=\"muted\">%s"
		    "</td></tr>\n", k[i].label, k[i].key, b[i].n,
		    pct(b[i].n, total), k[i].meaning);
	fputs("</table>\n<p class=\"muted\">By status:", f);
	json_object_object_foreach(wa_json_get(o, "counts"), s, c)
		fprintf(f, " %s <span id=\"n-status-%s\">%lld</span>", s, s,
		    (long long)json_object_get_int64(c));
	fprintf(f, "; accepted <span id=\"n-accepted\">%lld</span>.</p>\n",
	    num(o, "accepted"));
}

/* The sum of the counts in object c. */
static long long
sum(struct json_object *c)
{
	long long n = 0;

	json_object_object_foreach(c, k, v) {
		(void)k;
		n += json_object_get_int64(v);
	}
	return n;
}

/*
 * What the messages delivered cost: billed and free, by category and by
 * type, and the spend at the rate card loaded.
 */
static void
cost(FILE *f, struct json_object *o)
{
	struct json_object *b = wa_json_get(o, "billable");
	struct json_object *fr = wa_json_get(o, "free");
	struct json_object *s = wa_json_get(o, "spend"), *v;

	fprintf(f, "<h2 id=\"cost\">Cost</h2>\n<p>Billed <span id=\"n-billed"
	    "\">%lld</span> messages, free <span id=\"n-free\">%lld</span>, "
	    "of those delivered or read whose status webhooks gave their "
	    "pricing. ", sum(b), sum(fr));
	if (s == NULL)
		fputs("No rate card loaded (<code>wa-campaign rates load</code>"
		    "): no spend.</p>\n", f);
	else {
		fputs("Spend <span id=\"spend\">", f);
		esc(f, str(s, "total"));
		fputs("</span> ", f);
		esc(f, str(s, "currency"));
		fputs(" at the rate card loaded", f);
		if (num(s, "unpriced") > 0)
			fprintf(f, " (%lld billed without a price on it)",
			    num(s, "unpriced"));
		fputs(".</p>\n", f);
	}
	fputs("<table><tr><th>pricing</th><th class=\"n\">messages</th>"
	    "<th class=\"n\">spend</th></tr>\n", f);
	json_object_object_foreach(b, k, n) {
		fputs("<tr><td>", f);
		esc(f, k);
		fprintf(f, " (billed)</td><td class=\"n\">%lld</td><td "
		    "class=\"n\">", (long long)json_object_get_int64(n));
		v = wa_json_get(wa_json_get(s, "by_category"), k);
		esc(f, v != NULL ? json_object_get_string(v) : "-");
		fputs("</td></tr>\n", f);
	}
	json_object_object_foreach(fr, t, m) {
		fputs("<tr><td>", f);
		esc(f, t);
		fprintf(f, "</td><td class=\"n\">%lld</td><td class=\"n\">0"
		    "</td></tr>\n", (long long)json_object_get_int64(m));
	}
	fputs("</table>\n", f);
}

/* What people sent back, and what it took to answer them. */
static void
replies(FILE *f, struct json_object *o)
{
	struct json_object *r = wa_json_get(o, "replies");

	fprintf(f, "<h2 id=\"replies\">Replies</h2>\n<p><span id=\"n-replies"
	    "\">%lld</span> messages from <span id=\"n-repliers\">%lld</span> "
	    "of %lld people messaged (<span id=\"reply-rate\">%.1f%%</span>); "
	    "answered with <span id=\"n-answers\">%lld</span> messages, "
	    "%lld billed; <span id=\"n-optouts\">%lld</span> opted out.</p>\n",
	    num(r, "count"), num(r, "people"), num(r, "messaged"),
	    pct(num(r, "people"), num(r, "messaged")), num(r, "answers"),
	    num(r, "answers_billable"), num(r, "optouts"));
}

/* The series: one polyline per kind, on one scale. */
static void
series(FILE *f, struct json_object *o)
{
	static const struct {
		const char *key, *color;
	} k[] = {
		{ "sent", "#2f6db5" }, { "delivered", "#2a9d6f" },
		{ "read", "#1b7a4e" }, { "failed", "#c4413a" },
	};
	struct json_object *s = wa_json_get(o, "series");
	size_t i, j, n = json_object_array_length(s);
	long long max = 1, v, bs = num(o, "bucket_seconds");
	const int h = 200, x0 = 50, y0 = 10;
	double x, y;

	fprintf(f, "<h2 id=\"over-time\">Over time</h2>\n<p class=\"muted\">"
	    "Rows sent (accepted, at their claim) and rows delivered, read "
	    "and failed (at their current status) per %lld s", bs > 0 ? bs :
	    60);
	if (n > 0) {
		fputs(", from ", f);
		esc(f, str(json_object_array_get_idx(s, 0), "at"));
		fputs(" to ", f);
		esc(f, str(json_object_array_get_idx(s, n - 1), "at"));
	}
	fputs(".</p>\n<p class=\"legend\">", f);
	for (i = 0; i < sizeof k / sizeof *k; i++)
		fprintf(f, "<span><i class=\"sw\" style=\"background:%s\"></i>"
		    "%s</span>", k[i].color, k[i].key);
	fputs("</p>\n", f);
	for (i = 0; i < n; i++)
		for (j = 0; j < sizeof k / sizeof *k; j++)
			if ((v = num(json_object_array_get_idx(s, i),
			    k[j].key)) > max)
				max = v;
	fprintf(f, "<svg id=\"chart-series\" viewBox=\"0 0 %d %d\" "
	    "role=\"img\"><title>Sends and status updates per %lld s"
	    "</title><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
	    "stroke=\"#8d96a0\"/><line x1=\"%d\" y1=\"%d\" x2=\"%d\" "
	    "y2=\"%d\" stroke=\"#8d96a0\"/><text x=\"%d\" y=\"%d\" "
	    "text-anchor=\"end\">%lld</text><text x=\"%d\" y=\"%d\" "
	    "text-anchor=\"end\">0</text>", W, h + 30, bs, x0, y0, x0, y0 + h,
	    x0, y0 + h, W - 10, y0 + h, x0 - 4, y0 + 10, max, x0 - 4, y0 + h);
	if (n == 0)
		fprintf(f, "<text x=\"%d\" y=\"%d\">nothing sent yet</text>",
		    x0 + 10, y0 + h / 2);
	for (j = 0; n > 0 && j < sizeof k / sizeof *k; j++) {
		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" "
		    "stroke-width=\"2\" points=\"", k[j].color);
		for (i = 0; i < n; i++) {
			x = x0 + (n > 1 ? (W - 10.0 - x0) * i / (n - 1) :
			    (W - 10.0 - x0) / 2);
			y = y0 + h - (double)h * num(json_object_array_get_idx(
			    s, i), k[j].key) / max;
			fprintf(f, "%s%.1f,%.1f", i ? " " : "", x, y);
		}
		fputs("\"/>", f);
		for (i = 0; n <= 60 && i < n; i++)
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" "
			    "fill=\"%s\"/>", x0 + (n > 1 ? (W - 10.0 - x0) * i /
			    (n - 1) : (W - 10.0 - x0) / 2), y0 + h - (double)h *
			    num(json_object_array_get_idx(s, i), k[j].key) /
			    max, k[j].color);
	}
	if (n > 0) {
		fprintf(f, "<text x=\"%d\" y=\"%d\">", x0, y0 + h + 16);
		esc(f, str(json_object_array_get_idx(s, 0), "at"));
		fprintf(f, "</text><text x=\"%d\" y=\"%d\" "
		    "text-anchor=\"end\">", W - 10, y0 + h + 16);
		esc(f, str(json_object_array_get_idx(s, n - 1), "at"));
		fputs("</text>", f);
	}
	fputs("</svg>\n", f);
}

/* Seconds as "30 s", "5 m", "6 h" or "1 d" (the bounds are round). */
static void
dur(char *s, size_t size, long long secs)
{
	if (secs < 60 || secs % 60 != 0)
		snprintf(s, size, "%lld s", secs);
	else if (secs < 3600 || secs % 3600 != 0)
		snprintf(s, size, "%lld m", secs / 60);
	else if (secs < 86400 || secs % 86400 != 0)
		snprintf(s, size, "%lld h", secs / 3600);
	else
		snprintf(s, size, "%lld d", secs / 86400);
}

/* A histogram up to its last bucket with rows (at least 6 buckets). */
static void
latency(FILE *f, struct json_object *o, const char *key, const char *color)
{
	struct json_object *l = wa_json_get(wa_json_get(o, "latency"), key);
	struct json_object *hist = wa_json_get(l, "histogram");
	size_t i, n = json_object_array_length(hist);
	struct bar *b = wa_alloc((n + 1) * sizeof *b);
	char (*lab)[64] = wa_alloc((n + 1) * sizeof *lab), id[64];
	char a[24], z[24];
	size_t shown = n < 6 ? n : 6;
	struct json_object *h;

	for (i = 0; i < n; i++) {
		h = json_object_array_get_idx(hist, i);
		dur(a, sizeof a, num(h, "from"));
		dur(z, sizeof z, num(h, "to"));
		if (wa_json_get(h, "to") == NULL)
			snprintf(lab[i], sizeof *lab, "%s or more", a);
		else
			snprintf(lab[i], sizeof *lab, "%s to %s", a, z);
		if (num(h, "count") > 0 && i + 1 > shown)
			shown = i + 1;
		b[i].label = lab[i];
		b[i].n = num(json_object_array_get_idx(hist, i), "count");
		b[i].color = color;
	}
	fprintf(f, "<h3>To %s</h3>\n<p>rows <span id=\"n-latency-%s\">%lld"
	    "</span>; p50 %s s, p90 %s s, p99 %s s</p>\n", key, key,
	    num(l, "count"), str(l, "p50"), str(l, "p90"), str(l, "p99"));
	snprintf(id, sizeof id, "chart-latency-%s", key);
	bars(f, id, key, b, shown, num(l, "count"));
	free(lab);
	free(b);
}

static void
errors(FILE *f, struct json_object *o)
{
	struct json_object *e = wa_json_get(o, "errors_by_code"), *v;
	size_t i, n = json_object_array_length(e);

	fputs("<h2 id=\"errors\">Errors by code</h2>\n", f);
	if (n == 0) {
		fputs("<p>None.</p>\n", f);
		return;
	}
	fputs("<table id=\"error-table\"><tr><th>code</th><th>Meta's title"
	    "</th><th>class</th><th>wapipe</th><th class=\"n\">attempts</th>"
	    "<th class=\"n\">rows failed</th><th>last</th></tr>\n", f);
	for (i = 0; i < n; i++) {
		v = json_object_array_get_idx(e, i);
		fputs("<tr><td>", f);
		esc(f, str(v, "code"));
		fputs("</td><td>", f);
		esc(f, str(v, "title"));
		fputs("</td><td>", f);
		esc(f, str(v, "class"));
		fputs("</td><td>", f);
		esc(f, str(v, "did"));
		fprintf(f, "</td><td class=\"n\">%lld</td><td class=\"n\">%lld"
		    "</td><td>", num(v, "attempts"), num(v, "failed_rows"));
		esc(f, str(v, "last_at"));
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n<p class=\"muted\">Attempts: every attempt that met "
	    "the error; rows failed: rows whose current status is failed "
	    "with it.</p>\n", f);
}

static void
attempts(FILE *f, struct json_object *o)
{
	struct json_object *a = wa_json_get(o, "attempts");
	size_t i = 0, n = json_object_object_length(a);
	struct bar *b = wa_alloc((n + 1) * sizeof *b);

	fputs("<h2 id=\"attempts\">Attempts per recipient</h2>\n", f);
	json_object_object_foreach(a, k, v) {
		b[i].label = k;
		b[i].n = json_object_get_int64(v);
		b[i++].color = "#5b7fa6";
	}
	bars(f, "chart-attempts", "Recipients by attempts made", b, n,
	    num(o, "total"));
	free(b);
}

static void
retries(FILE *f, struct json_object *o)
{
	struct json_object *r = wa_json_get(o, "retries");
	struct json_object *due = wa_json_get(r, "due");
	size_t i, n = json_object_array_length(due);
	struct bar *b = wa_alloc((n + 1) * sizeof *b);
	char (*lab)[32] = wa_alloc((n + 1) * sizeof *lab);

	fprintf(f, "<h2 id=\"retries\">Retries pending</h2>\n<p><span "
	    "id=\"n-retries\">%lld</span> rows wait for a retry",
	    num(r, "pending"));
	if (num(r, "pending") > 0) {
		fputs("; the next due ", f);
		esc(f, str(r, "next_at"));
		fputs(", the last ", f);
		esc(f, str(r, "last_at"));
	}
	fputs(".</p>\n", f);
	for (i = 0; i < n; i++) {
		snprintf(lab[i], sizeof *lab, "due within %s",
		    str(json_object_array_get_idx(due, i), "within"));
		if (i + 1 == n)
			snprintf(lab[i], sizeof *lab, "due after 24h");
		b[i].label = lab[i];
		b[i].n = num(json_object_array_get_idx(due, i), "count");
		b[i].color = "#d08a1f";
	}
	bars(f, "chart-retries", "Retries by when they are due", b, n, -1);
	free(lab);
	free(b);
}

static void
settings(FILE *f, struct json_object *o)
{
	static const char *k[][2] = {
		{ "phone_number_id", "phone number id" },
		{ "template", "template" }, { "language", "language" },
		{ "max_attempts", "at most attempts" },
		{ "on_unknown", "a send of unknown fate" },
		{ "created_at", "created" }, { "started_at", "started" },
		{ "finished_at", "finished" }, { "expires_at", "expires" },
		{ "window", "send window (recipient's time)" },
		{ "tz", "zone where the number does not tell" },
		{ "weight", "weight" }, { "priority", "priority" },
		{ "limit.max_people", "messaging limit (people)" },
		{ "limit.period_s", "... per (seconds)" },
		{ "limit.used", "... used" }, { "limit.left", "... left" },
	};
	struct json_object *t = wa_json_get(o, "timeline"), *v;
	size_t i;

	fputs("<h2 id=\"settings\">Settings</h2>\n<table>", f);
	for (i = 0; i < sizeof k / sizeof *k; i++) {
		fprintf(f, "<tr><th>%s</th><td>", k[i][1]);
		esc(f, str(o, k[i][0]));
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n<h2 id=\"timeline\">Timeline</h2>\n<ol>\n", f);
	for (i = 0; i < json_object_array_length(t); i++) {
		v = json_object_array_get_idx(t, i);
		fputs("<li>", f);
		esc(f, str(v, "at"));
		fputs(" <b>", f);
		esc(f, str(v, "state"));
		fputs("</b>", f);
		if (wa_json_str(v, "reason") != NULL) {
			fputs(": ", f);
			esc(f, str(v, "reason"));
		}
		fputs("</li>\n", f);
	}
	fputs("</ol>\n", f);
	if ((v = wa_json_get(o, "outage")) != NULL) {
		fputs("<p id=\"outage\">Outage of the API from ", f);
		esc(f, str(v, "started_at"));
		fputs(json_object_get_boolean(wa_json_get(v, "ongoing")) ?
		    ", still going (last seen " : " to ", f);
		esc(f, json_object_get_boolean(wa_json_get(v, "ongoing")) ?
		    str(v, "last_at") : str(v, "ended_at"));
		fputs(json_object_get_boolean(wa_json_get(v, "ongoing")) ?
		    "): " : ": ", f);
		esc(f, str(v, "reason"));
		fprintf(f, "; %lld results put back (not failed).</p>\n",
		    num(v, "results"));
	}
}

void
html_report(FILE *f, struct json_object *o)
{
	head(f, o);
	funnel(f, o);
	replies(f, o);
	cost(f, o);
	series(f, o);
	fputs("<h2 id=\"latency\">From send to delivered and to read</h2>\n"
	    "<p class=\"muted\">Seconds from the claim that sent a row to its "
	    "current status, for the rows delivered (not yet read) and the "
	    "rows read.</p>\n", f);
	latency(f, o, "delivered", "#2a9d6f");
	latency(f, o, "read", "#1b7a4e");
	errors(f, o);
	attempts(f, o);
	retries(f, o);
	settings(f, o);
	fputs("</body></html>\n", f);
}
