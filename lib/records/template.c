/*
 * template.c: a template of the Graph API's listing read (the shape of
 * its items follows Meta's "Template management" page, updated May 21,
 * 2026: parameter_format POSITIONAL or NAMED, components HEADER with a
 * format, BODY with {{1}} or {{first_name}} placeholders, FOOTER,
 * BUTTONS with URL buttons whose url may end in {{1}}); the shape of the
 * parameters a send carries (the Cloud API's send body: components of
 * type header, body and button, parameters with an optional
 * parameter_name); and whether they fit. No I/O.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "records/json.h"
#include "records/template.h"

#define MAXPH 100	/* placeholders kept per text */

/* The placeholders of text: numbers in num (*nn), names in name (*nm). */
static void
placeholders(const char *text, int *num, int *nn, char **name, int *nm)
{
	const char *p = text, *end;
	size_t n;
	int i, v;

	while (p != NULL && (p = strstr(p, "{{")) != NULL) {
		p += 2;
		if ((end = strstr(p, "}}")) == NULL)
			break;
		n = end - p;
		if (n > 0 && n < 8 && strspn(p, "0123456789") == n) {
			v = atoi(p);
			for (i = 0; i < *nn && num[i] != v; i++)
				;
			if (i == *nn && *nn < MAXPH)
				num[(*nn)++] = v;
		} else if (n > 0 && n < 64 && (islower((unsigned char)*p) ||
		    *p == '_') && strspn(p, "abcdefghijklmnopqrstuvwxyz"
		    "0123456789_") == n) {
			for (i = 0; i < *nm && (strlen(name[i]) != n ||
			    strncmp(name[i], p, n) != 0); i++)
				;
			if (i == *nm && *nm < MAXPH) {
				name[*nm] = malloc(n + 1);
				if (name[*nm] != NULL) {
					memcpy(name[*nm], p, n);
					name[(*nm)++][n] = '\0';
				}
			}
		}
		p = end + 2;
	}
}

static int
cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Copies s (NULL: "") into dst of size bytes; -1 if it does not fit. */
static int
copy(char *dst, size_t size, const char *s)
{
	s = s ? s : "";
	if (strlen(s) >= size)
		return -1;
	strcpy(dst, s);
	return 0;
}

static int
say(char *why, size_t size, const char *s)
{
	snprintf(why, size, "%s", s);
	return -1;
}

/* The BUTTONS component c: the URL buttons whose url has a {{...}}. */
static void
buttons(struct wa_template *t, struct json_object *c)
{
	struct json_object *bs = wa_json_get(c, "buttons"), *b;
	const char *type, *url;
	size_t i, n;

	if (!json_object_is_type(bs, json_type_array))
		return;
	n = json_object_array_length(bs);
	for (i = 0; i < n && i < WA_TEMPLATE_BUTTONS; i++) {
		b = json_object_array_get_idx(bs, i);
		type = wa_json_str(b, "type");
		url = wa_json_str(b, "url");
		if (type != NULL && strcasecmp(type, "URL") == 0 &&
		    url != NULL && strstr(url, "{{") != NULL)
			t->urls |= 1u << i;
	}
}

int
wa_template_read(struct json_object *o, struct wa_template *t, char *why,
    size_t size)
{
	struct json_object *comps, *c, *q;
	const char *type, *text, *fmt;
	char *names[MAXPH];
	int num[MAXPH], nn = 0, nm = 0, hn, hm, i;
	size_t k, n;

	memset(t, 0, sizeof *t);
	if (!json_object_is_type(o, json_type_object))
		return say(why, size, "a template that is not an object");
	if (copy(t->name, sizeof t->name, wa_json_str(o, "name")) < 0 ||
	    !*t->name)
		return say(why, size, "a template without a name");
	if (copy(t->language, sizeof t->language, wa_json_str(o,
	    "language")) < 0 || !*t->language)
		return say(why, size, "a template without a language");
	if (copy(t->status, sizeof t->status, wa_json_str(o, "status")) < 0 ||
	    !*t->status)
		return say(why, size, "a template without a status");
	if (copy(t->category, sizeof t->category, wa_json_str(o,
	    "category")) < 0)
		return say(why, size, "a template's category that is no "
		    "category");
	copy(t->id, sizeof t->id, wa_json_str(o, "id"));
	/* quality_score is an object ({"score": "GREEN", ...}) or a word. */
	q = wa_json_get(o, "quality_score");
	copy(t->quality, sizeof t->quality, json_object_is_type(q,
	    json_type_string) ? json_object_get_string(q) :
	    wa_json_str(q, "score"));
	fmt = wa_json_str(o, "parameter_format");
	comps = wa_json_get(o, "components");
	if (comps != NULL && !json_object_is_type(comps, json_type_array))
		return say(why, size, "a template whose components are not "
		    "an array");
	n = comps ? json_object_array_length(comps) : 0;
	for (k = 0; k < n; k++) {
		c = json_object_array_get_idx(comps, k);
		if ((type = wa_json_str(c, "type")) == NULL) {
			while (nm > 0)
				free(names[--nm]);
			return say(why, size, "a template component without "
			    "a type");
		}
		text = wa_json_str(c, "text");
		if (strcasecmp(type, "BODY") == 0)
			placeholders(text, num, &nn, names, &nm);
		else if (strcasecmp(type, "HEADER") == 0) {
			copy(t->header, sizeof t->header,
			    wa_json_str(c, "format"));
			if (!*t->header)
				strcpy(t->header, "TEXT");
			for (i = 0; t->header[i]; i++)
				t->header[i] = toupper((unsigned char)
				    t->header[i]);
			if (strcmp(t->header, "TEXT") == 0) {
				int hnum[MAXPH];
				char *hname[MAXPH];

				hn = hm = 0;
				placeholders(text, hnum, &hn, hname, &hm);
				t->header_n = hn + hm;
				while (hm > 0)
					free(hname[--hm]);
			}
		} else if (strcasecmp(type, "BUTTONS") == 0)
			buttons(t, c);
		else if (strcasecmp(type, "FOOTER") != 0 && !*t->other)
			copy(t->other, sizeof t->other, type);
	}
	/* Without parameter_format (older answers): what the body holds. */
	t->named = fmt != NULL ? strcasecmp(fmt, "NAMED") == 0 : nm > nn;
	t->body_n = t->named ? nm : nn;
	qsort(names, nm, sizeof *names, cmp);
	for (i = 0; i < nm; i++) {
		if (t->named) {
			if (i > 0)
				wa_buf_add(&t->names, ",", 1);
			wa_buf_puts(&t->names, names[i]);
		}
		free(names[i]);
	}
	return 0;
}

void
wa_template_free(struct wa_template *t)
{
	wa_buf_free(&t->names);
}

/* The first component of type (any case) in comps, or NULL. */
static struct json_object *
component(struct json_object *comps, const char *type)
{
	struct json_object *c;
	const char *t;
	size_t i, n = json_object_array_length(comps);

	for (i = 0; i < n; i++) {
		c = json_object_array_get_idx(comps, i);
		if ((t = wa_json_str(c, "type")) != NULL &&
		    strcasecmp(t, type) == 0)
			return c;
	}
	return NULL;
}

/* Adds to a a new string of s, in lower case, then suffix. */
static void
add_lower(struct json_object *a, const char *s, const char *suffix)
{
	char t[40];
	size_t i;

	for (i = 0; s[i] && i < sizeof t - 2; i++)
		t[i] = tolower((unsigned char)s[i]);
	t[i] = '\0';
	strcat(t, suffix);
	json_object_array_add(a, json_object_new_string(t));
}

static int
str_cmp(const void *a, const void *b)
{
	return strcmp(json_object_get_string(*(struct json_object *const *)a),
	    json_object_get_string(*(struct json_object *const *)b));
}

/* Sorts a's strings, dropping repeats. */
static void
sort_unique(struct json_object *a)
{
	size_t i;

	json_object_array_sort(a, str_cmp);
	for (i = 1; i < json_object_array_length(a);)
		if (strcmp(json_object_get_string(json_object_array_get_idx(a,
		    i - 1)), json_object_get_string(
		    json_object_array_get_idx(a, i))) == 0)
			json_object_array_del_idx(a, i, 1);
		else
			i++;
}

/* The body parameters params (an array) into s: "body", "names". */
static void
body(struct json_object *s, struct json_object *params)
{
	struct json_object *names = json_object_new_array(), *v;
	const char *name;
	size_t i, n = json_object_array_length(params);

	for (i = 0; i < n; i++) {
		v = json_object_array_get_idx(params, i);
		if ((name = wa_json_str(v, "parameter_name")) != NULL)
			json_object_array_add(names,
			    json_object_new_string(name));
	}
	json_object_object_add(s, "body", json_object_new_int64(n));
	if (json_object_array_length(names) > 0) {
		sort_unique(names);
		json_object_object_add(s, "names", names);
	} else
		json_object_put(names);
}

/* The header parameters params (an array) into s. */
static void
header(struct json_object *s, struct json_object *params)
{
	struct json_object *h = json_object_new_array(), *v, *m;
	const char *type;
	char key[16];
	size_t i, j, n = json_object_array_length(params);

	for (i = 0; i < n; i++) {
		v = json_object_array_get_idx(params, i);
		if ((type = wa_json_str(v, "type")) == NULL)
			type = "?";
		if (strcasecmp(type, "image") == 0 ||
		    strcasecmp(type, "video") == 0 ||
		    strcasecmp(type, "document") == 0) {
			/* The medium under its own key: {"image": {...}}. */
			for (j = 0; type[j]; j++)
				key[j] = tolower((unsigned char)type[j]);
			key[j] = '\0';
			m = wa_json_get(v, key);
			add_lower(h, type, wa_json_get(m, "id") != NULL ||
			    wa_json_get(m, "link") != NULL ? "" : "?");
		} else
			add_lower(h, type, "");
	}
	if (json_object_array_length(h) > 0)
		json_object_object_add(s, "header", h);
	else
		json_object_put(h);
}

/* The URL buttons given a parameter, in comps, into s. */
static void
urls(struct json_object *s, struct json_object *comps)
{
	struct json_object *b = json_object_new_array(), *c, *p, *ix;
	const char *t, *st;
	size_t i, n = json_object_array_length(comps);

	for (i = 0; i < n; i++) {
		c = json_object_array_get_idx(comps, i);
		t = wa_json_str(c, "type");
		st = wa_json_str(c, "sub_type");
		p = wa_json_get(c, "parameters");
		ix = wa_json_get(c, "index");
		if (t != NULL && strcasecmp(t, "button") == 0 && st != NULL &&
		    strcasecmp(st, "url") == 0 && json_object_is_type(p,
		    json_type_array) && json_object_array_length(p) > 0 &&
		    (json_object_is_type(ix, json_type_string) ||
		    json_object_is_type(ix, json_type_int)))
			json_object_array_add(b, json_object_new_string(
			    json_object_get_string(ix)));
	}
	if (json_object_array_length(b) > 0) {
		sort_unique(b);
		json_object_object_add(s, "buttons", b);
	} else
		json_object_put(b);
}

struct json_object *
wa_template_shape(struct json_object *p)
{
	struct json_object *s = json_object_new_object(), *comps, *c, *v,
	    *params;

	comps = wa_json_get(p, "components");
	params = wa_json_get(p, "params");
	if (json_object_is_type(p, json_type_array))
		body(s, p);
	else if (json_object_is_type(comps, json_type_array)) {
		c = component(comps, "body");
		v = wa_json_get(c, "parameters");
		if (json_object_is_type(v, json_type_array))
			body(s, v);
		else
			json_object_object_add(s, "body",
			    json_object_new_int(0));
		c = component(comps, "header");
		v = wa_json_get(c, "parameters");
		if (json_object_is_type(v, json_type_array))
			header(s, v);
		urls(s, comps);
	} else if (json_object_is_type(params, json_type_array))
		body(s, params);
	else if (json_object_is_type(params, json_type_object)) {
		v = json_object_new_array();
		json_object_object_foreach(params, k, val) {
			(void)val;
			c = json_object_new_object();
			json_object_object_add(c, "parameter_name",
			    json_object_new_string(k));
			json_object_array_add(v, c);
		}
		body(s, v);
		json_object_put(v);
	} else
		json_object_object_add(s, "body", json_object_new_int(0));
	return s;
}

/* The length of array a; 0 when it is none. */
static size_t
alen(struct json_object *a)
{
	return json_object_is_type(a, json_type_array) ?
	    json_object_array_length(a) : 0;
}

/* The strings of array a (NULL: none), with ',' between, into b. */
static void
joined(struct wa_buf *b, struct json_object *a)
{
	size_t i, n = json_object_is_type(a, json_type_array) ?
	    json_object_array_length(a) : 0;

	b->len = 0;
	wa_buf_add(b, "", 0);
	for (i = 0; i < n; i++) {
		if (i > 0)
			wa_buf_add(b, ",", 1);
		wa_buf_puts(b, json_object_get_string(
		    json_object_array_get_idx(a, i)));
	}
}

/* How many of array a's strings are s. */
static int
count(struct json_object *a, const char *s)
{
	size_t i, n = json_object_is_type(a, json_type_array) ?
	    json_object_array_length(a) : 0;
	int k = 0;

	for (i = 0; i < n; i++)
		k += strcmp(json_object_get_string(
		    json_object_array_get_idx(a, i)), s) == 0;
	return k;
}

static const char *
plural(long long n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* The header of shape h against t's: NULL, or why not. */
static const char *
fit_header(const struct wa_template *t, struct json_object *h, char *why,
    size_t size)
{
	size_t n = json_object_is_type(h, json_type_array) ?
	    json_object_array_length(h) : 0;
	char want[24];
	size_t i;

	if (strcmp(t->header, "IMAGE") == 0 ||
	    strcmp(t->header, "VIDEO") == 0 ||
	    strcmp(t->header, "DOCUMENT") == 0 ||
	    strcmp(t->header, "LOCATION") == 0) {
		for (i = 0; t->header[i]; i++)
			want[i] = tolower((unsigned char)t->header[i]);
		want[i] = '\0';
		if (n == 1 && count(h, want) == 1)
			return NULL;
		strcat(want, "?");
		if (n == 1 && count(h, want) == 1)
			snprintf(why, size, "its header %.12s has no id or "
			    "link", t->header);
		else
			snprintf(why, size, "no header %.12s parameter (the "
			    "template's header is a %.12s: the row needs "
			    "\"components\" with it)", t->header, t->header);
		return why;
	}
	if ((size_t)t->header_n == n && count(h, "text") == (int)n)
		return NULL;
	if (t->header_n == 0)
		snprintf(why, size, "%zu header %s; the template's header "
		    "takes none", n, plural(n, "parameter", "parameters"));
	else
		snprintf(why, size, "%zu header text %s; the template's "
		    "header takes %d", (size_t)count(h, "text"),
		    plural(count(h, "text"), "parameter", "parameters"),
		    t->header_n);
	return why;
}

const char *
wa_template_fit(const struct wa_template *t, struct json_object *shape,
    char *why, size_t size)
{
	struct json_object *names = wa_json_get(shape, "names"), *b;
	struct wa_buf got = { 0 }, want = { 0 };
	int64_t n = 0;
	const char *bad = NULL;
	char ix[8];
	size_t k, m;
	int i;

	if (wa_json_int(shape, "body", &n) != 1)
		n = 0;
	joined(&got, names);
	wa_template_body(t, &want);
	if (t->named && (alen(names) != (size_t)n ||
	    strcmp(got.s, t->names.s ? t->names.s : "") != 0)) {
		if (got.len == 0)
			snprintf(why, size, "%lld body %s without a name; the "
			    "template takes %s", (long long)n,
			    plural(n, "parameter", "parameters"), want.s);
		else
			snprintf(why, size, "body parameters named %s; the "
			    "template takes %s", got.s, want.s);
		bad = why;
	} else if (!t->named && got.len > 0) {
		snprintf(why, size, "named body parameters (%s); the "
		    "template's are positional, {{1}} to {{%d}}", got.s,
		    t->body_n);
		bad = why;
	} else if (!t->named && n != t->body_n) {
		snprintf(why, size, "%lld body %s; the template takes %d",
		    (long long)n, plural(n, "parameter", "parameters"),
		    t->body_n);
		bad = why;
	}
	wa_buf_free(&got);
	wa_buf_free(&want);
	if (bad != NULL)
		return bad;
	if ((bad = fit_header(t, wa_json_get(shape, "header"), why, size)))
		return bad;
	b = wa_json_get(shape, "buttons");
	for (i = 0; i < WA_TEMPLATE_BUTTONS; i++) {
		snprintf(ix, sizeof ix, "%d", i);
		if ((t->urls & 1u << i) && count(b, ix) == 0) {
			snprintf(why, size, "no parameter for URL button %d, "
			    "whose link ends in a placeholder", i);
			return why;
		}
	}
	m = json_object_is_type(b, json_type_array) ?
	    json_object_array_length(b) : 0;
	for (k = 0; k < m; k++) {
		i = atoi(json_object_get_string(json_object_array_get_idx(b,
		    k)));
		if (i < 0 || i >= WA_TEMPLATE_BUTTONS || !(t->urls & 1u << i)) {
			snprintf(why, size, "a parameter for URL button %.8s, "
			    "whose link has no placeholder",
			    json_object_get_string(json_object_array_get_idx(b,
			    k)));
			return why;
		}
	}
	return NULL;
}

void
wa_template_body(const struct wa_template *t, struct wa_buf *b)
{
	const char *p, *comma;
	int i;

	if (t->named && t->names.len > 0)
		for (p = t->names.s; *p; p = comma + (*comma != '\0')) {
			comma = strchrnul(p, ',');
			wa_buf_printf(b, "%s{{%.*s}}", p == t->names.s ? "" :
			    " ", (int)(comma - p), p);
		}
	else
		for (i = 1; i <= t->body_n; i++)
			wa_buf_printf(b, "%s{{%d}}", i > 1 ? " " : "", i);
	if (t->body_n == 0)
		wa_buf_puts(b, "no placeholder");
}
