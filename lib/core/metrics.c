/*
 * metrics.c: counters, gauges and histograms in the Prometheus text
 * format, for node_exporter's textfile collector. Every series carries
 * labels that keep the files of two processes apart in one collector:
 * program (wa_prog), wa_instance (by default the --metrics file's name
 * without ".prom", which differs between two files in one directory),
 * and those of --metrics-label NAME=VALUE (campaign=42, number=...), a
 * series' own label of the same name winning. With --metrics FILE a
 * program calls wa_metrics_tick often (it writes every few seconds) and
 * wa_metrics_write at exit; the file is written beside its final name and
 * renamed over it, so a reader never sees half of it. SIGUSR2 has it
 * written at once (wa_metrics_on_usr2), for tests and for operators who
 * cannot wait for the next tick.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/metrics.h"
#include "core/sig.h"

#define EVERY_MS 5000

enum { COUNTER, GAUGE, HISTOGRAM };

struct wa_metric {
	struct wa_metric *next;
	char		*name;
	char		*labels;	/* `code="131026"`, or "" */
	const char	*help;
	int		 type;
	double		 value;		/* counter, gauge; histogram sum */
	const double	*bounds;	/* histogram upper bounds */
	int		 nbounds;
	uint64_t	*buckets;	/* per bound, then +Inf */
};

#define MAX_LABELS 16

static struct wa_metric *all;
static char *path;
static struct {
	char	*name;
	char	*value;		/* escaped for the format */
} labels[MAX_LABELS];
static int nlabels;
static int64_t written;
static pthread_mutex_t *lock;	/* held by other threads to change them */

void
wa_metrics_open(const char *p)
{
	path = wa_strdup(p);
	wa_metrics_write();
}

static void
set_label(const char *name, size_t n, const char *value)
{
	struct wa_buf v = { 0 };
	int i;

	for (; *value; value++) {
		if (*value == '\\' || *value == '"')
			wa_buf_add(&v, "\\", 1);
		if (*value == '\n')
			wa_buf_puts(&v, "\\n");
		else
			wa_buf_add(&v, value, 1);
	}
	if (v.s == NULL)
		wa_buf_puts(&v, "");
	for (i = 0; i < nlabels; i++)
		if (strlen(labels[i].name) == n &&
		    strncmp(labels[i].name, name, n) == 0)
			break;
	if (i == nlabels) {
		if (nlabels == MAX_LABELS)
			wa_die(EX_USAGE, "more than %d metrics labels",
			    MAX_LABELS);
		labels[nlabels].name = wa_alloc(n + 1);
		memcpy(labels[nlabels++].name, name, n);
	}
	free(labels[i].value);
	labels[i].value = v.s;
}

/*
 * A label on every series of this process, one the program knows (the
 * campaign it claims); --metrics-label's of the same name wins.
 */
void
wa_metrics_label(const char *name, const char *value)
{
	int i;

	for (i = 0; i < nlabels; i++)
		if (strcmp(labels[i].name, name) == 0)
			return;
	set_label(name, strlen(name), value);
}

/*
 * --metrics-label NAME=VALUE: NAME a Prometheus label name (letters,
 * digits, '_', not a digit first, no "__" prefix, not le), VALUE any
 * UTF-8. Exits 64 on a bad one.
 */
void
wa_metrics_label_option(const char *arg)
{
	const char *eq = strchr(arg, '=');
	size_t n = eq != NULL ? (size_t)(eq - arg) : 0, i;
	int bad = n == 0 || (arg[0] >= '0' && arg[0] <= '9') ||
	    (n >= 2 && arg[0] == '_' && arg[1] == '_') ||
	    (n == 2 && strncmp(arg, "le", 2) == 0);

	for (i = 0; i < n && !bad; i++)
		bad = !((arg[i] >= 'a' && arg[i] <= 'z') || (arg[i] >= 'A' &&
		    arg[i] <= 'Z') || (arg[i] >= '0' && arg[i] <= '9') ||
		    arg[i] == '_');
	if (bad || !wa_utf8_valid(eq + 1, strlen(eq + 1)))
		wa_die(EX_USAGE, "--metrics-label '%s': not NAME=VALUE with "
		    "NAME a label name (letters, digits, _; not le), such as "
		    "wa_instance=host1", arg);
	set_label(arg, n, eq + 1);
}

/* Whether the series' own labels (`a="1",b="2"`) name name. */
static int
own(const char *mine, const char *name)
{
	size_t n = strlen(name);
	const char *p = mine;

	while ((p = strstr(p, name)) != NULL) {
		if ((p == mine || p[-1] == ',') && p[n] == '=')
			return 1;
		p += n;
	}
	return 0;
}

/* The labels of one series: its own, then the process's. */
static void
all_labels(struct wa_buf *b, const struct wa_metric *m)
{
	int i;

	b->len = 0;
	wa_buf_puts(b, m->labels);
	for (i = 0; i < nlabels; i++)
		if (!own(m->labels, labels[i].name))
			wa_buf_printf(b, "%s%s=\"%s\"", b->len ? "," : "",
			    labels[i].name, labels[i].value);
}

/* program and wa_instance, unless --metrics-label set them. */
static void
default_labels(void)
{
	struct wa_buf v = { 0 };
	const char *base;
	size_t n;
	int i, prog = 0, inst = 0;

	for (i = 0; i < nlabels; i++) {
		prog |= strcmp(labels[i].name, "program") == 0;
		inst |= strcmp(labels[i].name, "wa_instance") == 0;
	}
	if (!prog)
		wa_metrics_label("program", wa_prog);
	if (inst || path == NULL)
		return;
	base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	n = strlen(base);
	if (n > 5 && strcmp(base + n - 5, ".prom") == 0)
		n -= 5;
	wa_buf_add(&v, base, n);
	wa_buf_puts(&v, "");
	wa_metrics_label("wa_instance", v.s);
	wa_buf_free(&v);
}

struct wa_metric *
find(const char *name, const char *labels, const char *help, int type)
{
	struct wa_metric *m, **pp, **after = NULL;

	labels = labels ? labels : "";
	for (pp = &all; (m = *pp) != NULL; pp = &m->next) {
		if (strcmp(m->name, name) != 0)
			continue;
		if (strcmp(m->labels, labels) == 0)
			return m;
		after = &m->next;
	}
	m = wa_alloc(sizeof *m);
	m->name = wa_strdup(name);
	m->labels = wa_strdup(labels);
	m->help = help;
	m->type = type;
	/* Keep the series of one name together, as the format wants. */
	pp = after ? after : pp;
	m->next = *pp;
	*pp = m;
	return m;
}

struct wa_metric *
wa_counter(const char *name, const char *labels, const char *help)
{
	return find(name, labels, help, COUNTER);
}

struct wa_metric *
wa_gauge(const char *name, const char *labels, const char *help)
{
	return find(name, labels, help, GAUGE);
}

struct wa_metric *
wa_histogram(const char *name, const char *labels, const char *help,
    const double *bounds, int n)
{
	struct wa_metric *m = find(name, labels, help, HISTOGRAM);

	if (m->buckets == NULL) {
		m->bounds = bounds;
		m->nbounds = n;
		m->buckets = wa_alloc((n + 1) * sizeof *m->buckets);
	}
	return m;
}

void
wa_metric_add(struct wa_metric *m, double v)
{
	m->value += v;
}

void
wa_metric_set(struct wa_metric *m, double v)
{
	m->value = v;
}

void
wa_metric_observe(struct wa_metric *m, double v)
{
	int i;

	for (i = 0; i < m->nbounds && v > m->bounds[i]; i++)
		;
	m->buckets[i]++;
	m->value += v;
}

static void
series(FILE *f, const struct wa_metric *m, const char *suffix,
    const char *le, double v)
{
	static struct wa_buf b;
	const char *sep;

	all_labels(&b, m);
	sep = b.len && le ? "," : "";
	fprintf(f, "%s%s", m->name, suffix);
	if (b.len || le)
		fprintf(f, "{%s%s%s%s%s}", b.len ? b.s : "", sep,
		    le ? "le=\"" : "", le ? le : "", le ? "\"" : "");
	fprintf(f, " %.17g\n", v);
}

static void
print(FILE *f)
{
	static const char *types[] = { "counter", "gauge", "histogram" };
	const struct wa_metric *m, *prev = NULL;
	char le[32];
	uint64_t n;
	int i;

	for (m = all; m != NULL; prev = m, m = m->next) {
		if (prev == NULL || strcmp(prev->name, m->name) != 0)
			fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", m->name,
			    m->help, m->name, types[m->type]);
		if (m->type != HISTOGRAM) {
			series(f, m, "", NULL, m->value);
			continue;
		}
		for (i = 0, n = 0; i <= m->nbounds; i++) {
			n += m->buckets[i];
			if (i < m->nbounds)
				snprintf(le, sizeof le, "%g", m->bounds[i]);
			series(f, m, "_bucket", i < m->nbounds ? le : "+Inf",
			    n);
		}
		series(f, m, "_sum", NULL, m->value);
		series(f, m, "_count", NULL, n);
	}
}

void
wa_metrics_write(void)
{
	static int defaults;
	struct wa_buf tmp = { 0 };
	FILE *f;

	if (path == NULL)
		return;
	if (!defaults++)
		default_labels();
	written = wa_now_ms();
	wa_buf_printf(&tmp, "%s.%ld.tmp", path, (long)getpid());
	if ((f = fopen(tmp.s, "w")) == NULL) {
		wa_warn("write metrics %s:", tmp.s);
		wa_buf_free(&tmp);
		return;
	}
	print(f);
	if (fclose(f) != 0 || rename(tmp.s, path) != 0) {
		wa_warn("write metrics %s:", path);
		unlink(tmp.s);
	}
	wa_buf_free(&tmp);
}

void
wa_metrics_tick(void)
{
	if (path != NULL && wa_now_ms() - written >= EVERY_MS)
		wa_metrics_write();
}

/* SIGUSR2, after the wait it came in. */
static void
on_usr2(void)
{
	if (lock != NULL)
		pthread_mutex_lock(lock);
	wa_metrics_write();
	if (lock != NULL)
		pthread_mutex_unlock(lock);
}

/*
 * Catches SIGUSR2, which then has the file written at once (without
 * --metrics it does nothing, and never ends the program). Call it in
 * every program that takes --metrics, before any thread starts; mu, when
 * not NULL, is the lock other threads hold while they change metrics.
 */
void
wa_metrics_on_usr2(pthread_mutex_t *mu)
{
	lock = mu;
	wa_signal_then(SIGUSR2, on_usr2);
	wa_metrics_write();	/* again, with every label now */
}
