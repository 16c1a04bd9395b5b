/*
 * template.c: a template of the Graph API's listing as wa-campaign check
 * and wa-fake-api read it (records/template.h). What wa_template_read
 * takes has a name, a language and a status, as many names as body
 * placeholders when they are named; the send that carries a parameter
 * for each of its placeholders (named or not, a header medium with a
 * link, one for each URL button whose link has one) fits it, and one
 * body parameter more does not. The shape of any JSON at all, as a
 * row's parameters or a send's template, has a body count of 0 or more.
 */
#include "fuzz.h"
#include "records/template.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	return 0;
}

static struct json_object *
text_param(const char *name)
{
	struct json_object *p = json_object_new_object();

	json_object_object_add(p, "type", json_object_new_string("text"));
	if (name != NULL)
		json_object_object_add(p, "parameter_name",
		    json_object_new_string(name));
	json_object_object_add(p, "text", json_object_new_string("x"));
	return p;
}

static struct json_object *
component(struct json_object *comps, const char *type)
{
	struct json_object *c = json_object_new_object();

	json_object_object_add(c, "type", json_object_new_string(type));
	json_object_object_add(c, "parameters", json_object_new_array());
	json_object_array_add(comps, c);
	return json_object_object_get(c, "parameters");
}

/* The send that fills every placeholder of t; extra: one body more. */
static struct json_object *
filled(const struct wa_template *t, int extra)
{
	struct json_object *send = json_object_new_object(), *comps, *ps;
	struct json_object *p, *m;
	char lower[16], ix[8], *names, *name, *save = NULL;
	size_t i;
	int k;

	comps = json_object_new_array();
	json_object_object_add(send, "components", comps);
	ps = component(comps, "body");
	if (t->named && t->names.len > 0) {
		names = strdup(t->names.s);
		for (name = strtok_r(names, ",", &save); name != NULL;
		    name = strtok_r(NULL, ",", &save))
			json_object_array_add(ps, text_param(name));
		free(names);
	} else
		for (k = 0; k < t->body_n; k++)
			json_object_array_add(ps, text_param(NULL));
	if (extra)
		json_object_array_add(ps, text_param(t->named ? "zz_extra" :
		    NULL));
	for (i = 0; t->header[i] && i < sizeof lower - 1; i++)
		lower[i] = t->header[i] - 'A' + 'a';
	lower[i] = '\0';
	if (strcmp(t->header, "IMAGE") == 0 || strcmp(t->header, "VIDEO") == 0
	    || strcmp(t->header, "DOCUMENT") == 0 ||
	    strcmp(t->header, "LOCATION") == 0) {
		ps = component(comps, "header");
		p = json_object_new_object();
		m = json_object_new_object();
		json_object_object_add(m, "link",
		    json_object_new_string("https://x/y"));
		json_object_object_add(p, "type", json_object_new_string(lower));
		json_object_object_add(p, lower, m);
		json_object_array_add(ps, p);
	} else if (t->header_n > 0) {
		ps = component(comps, "header");
		for (k = 0; k < t->header_n; k++)
			json_object_array_add(ps, text_param(NULL));
	}
	for (k = 0; k < WA_TEMPLATE_BUTTONS; k++) {
		if (!(t->urls & 1u << k))
			continue;
		ps = component(comps, "button");
		snprintf(ix, sizeof ix, "%d", k);
		p = json_object_array_get_idx(comps,
		    json_object_array_length(comps) - 1);
		json_object_object_add(p, "sub_type",
		    json_object_new_string("url"));
		json_object_object_add(p, "index", json_object_new_string(ix));
		json_object_array_add(ps, text_param(NULL));
	}
	return send;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct json_tokener *tok;
	struct json_object *o, *send, *shape;
	struct wa_template t;
	char why[512], *s = fuzz_copy(data, size);
	int64_t n;
	int r;

	if (tok == NULL)
		tok = wa_json_tokener();
	o = wa_json_parse(tok, s, size, 0, WA_JSON_DEPTH, why, sizeof why);
	free(s);
	if (o == NULL)
		return 0;
	/* Any JSON's shape: a body count of 0 or more. */
	shape = wa_template_shape(o);
	PROP(wa_json_int(shape, "body", &n) == 1 && n >= 0);
	json_object_put(shape);
	shape = wa_template_shape(wa_json_get(o, "params"));
	PROP(wa_json_int(shape, "body", &n) == 1 && n >= 0);
	json_object_put(shape);

	memset(why, 0, sizeof why);
	r = wa_template_read(o, &t, why, sizeof why);
	PROP(r == 0 || r == -1);
	PROP(r == 0 || (why[0] != '\0' && memchr(why, '\0', sizeof why)));
	if (r < 0) {
		json_object_put(o);
		return 0;
	}
	PROP(*t.name && *t.language && *t.status);
	PROP(t.body_n >= 0 && t.header_n >= 0);
	if (t.named && t.body_n > 0) {
		r = 1;
		for (s = t.names.s; *s; s++)
			r += *s == ',';
		PROP(r == t.body_n);
	}
	/* Every placeholder filled: it fits; one parameter more: not. */
	send = filled(&t, 0);
	shape = wa_template_shape(send);
	PROP(wa_template_fit(&t, shape, why, sizeof why) == NULL);
	json_object_put(shape);
	json_object_put(send);
	send = filled(&t, 1);
	shape = wa_template_shape(send);
	PROP(wa_template_fit(&t, shape, why, sizeof why) != NULL);
	json_object_put(shape);
	json_object_put(send);
	wa_template_free(&t);
	json_object_put(o);
	return 0;
}
