/*
 * graph.c: the Graph API's reads that wa-fake-api answers beside sends,
 * and the template a send names.
 *
 * GET /{version}/{WABA_ID}/message_templates lists the templates of
 * --templates: a file (JSON: an array of templates as Graph lists them,
 * or a saved answer whose "data" is one), a list of names (each in
 * en_US, approved, as the built-in has it or with one placeholder), or
 * the built-in: Meta's sample hello_world and a few reminders. Its
 * filters are Graph's: name (a template whose name holds it), language,
 * status and category (lists, with ','); fields narrows each item (the
 * id stays); limit (25 by default) and the cursors after and before
 * page through, with paging.cursors and paging.next and .previous as
 * Graph writes them. The answers follow Meta's "Template management"
 * page (updated May 21, 2026) and the Graph reference of "WhatsApp
 * Business Account Message Templates" (data, paging.cursors).
 *
 * GET /{version}/{PHONE_NUMBER_ID}?fields=... answers a number's fields
 * from --numbers FILE (an array of numbers as Graph gives them: id,
 * display_phone_number, verified_name, quality_rating, name_status,
 * throughput, whatsapp_business_manager_messaging_limit), else a number
 * in good standing (the shape of Meta's "WhatsApp Business Account Phone
 * Number API" reference, v23.0, and its GET /<WABA_ID>/phone_numbers
 * example). An id that is none of ours gets Graph's 100 with subcode 33.
 *
 * With --templates FILE, a send is checked against the file as Meta
 * checks it: no template of that name and language (or one not
 * approved), 132001; paused, 132015; disabled, 132016; parameters that
 * do not fit its placeholders (records/template.h), 132000, or 132018
 * from v23.0 on (cloud-api-2026.md §2.4).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "core/err.h"
#include "records/json.h"
#include "records/request.h"
#include "fakeapi.h"

#define LIMIT	25	/* items a page, unless limit= says */

/* A reminder in one language: its id, language and body. */
#define REMINDER(id, lang, text) \
	"{\"name\":\"reminder\",\"parameter_format\":\"POSITIONAL\"," \
	"\"components\":[{\"type\":\"BODY\",\"text\":\"" text "\"," \
	"\"example\":{\"body_text\":[[\"Ana\"]]}}],\"language\":\"" lang \
	"\",\"status\":\"APPROVED\",\"category\":\"UTILITY\",\"id\":\"" id \
	"\"}"

/* Two placeholders: a name and a date. */
#define DATED(id, name, text) \
	"{\"name\":\"" name "\",\"parameter_format\":\"POSITIONAL\"," \
	"\"components\":[{\"type\":\"BODY\",\"text\":\"" text "\"," \
	"\"example\":{\"body_text\":[[\"Ana\",\"12 Dec\"]]}}]," \
	"\"language\":\"en_US\",\"status\":\"APPROVED\"," \
	"\"category\":\"UTILITY\",\"id\":\"" id "\"}"

/*
 * The built-in templates: what a rehearsal, the demo and the tests send
 * (reminder: one placeholder; flu_reminder and vaccination_reminder:
 * two), all approved utility templates.
 */
static const char builtin[] = "["
    "{\"name\":\"hello_world\",\"parameter_format\":\"POSITIONAL\","
    "\"components\":[{\"type\":\"HEADER\",\"format\":\"TEXT\","
    "\"text\":\"Hello World\"},{\"type\":\"BODY\",\"text\":\"Welcome and "
    "congratulations!! This message demonstrates your ability to send a "
    "WhatsApp message notification from the Cloud API, hosted by Meta. "
    "Thank you for taking the time to test with us.\"},{\"type\":"
    "\"FOOTER\",\"text\":\"WhatsApp Business Platform sample message\"}],"
    "\"language\":\"en_US\",\"status\":\"APPROVED\","
    "\"category\":\"UTILITY\",\"id\":\"1000000000000001\"},"
    REMINDER("1000000000000002", "en_US", "Hi {{1}}, this is a reminder.")
    "," REMINDER("1000000000000003", "en", "Hi {{1}}, this is a reminder.")
    "," REMINDER("1000000000000004", "it", "Ciao {{1}}, ti ricordiamo "
    "l'appuntamento.")
    "," REMINDER("1000000000000005", "es", "Hola {{1}}, te recordamos la "
    "cita.")
    "," REMINDER("1000000000000006", "pt_BR", "Oi {{1}}, lembramos o seu "
    "compromisso.")
    "," DATED("1000000000000007", "flu_reminder", "Hi {{1}}, your flu "
    "shot is on {{2}}.")
    "," DATED("1000000000000008", "vaccination_reminder", "Hi {{1}}, your "
    "vaccination is on {{2}}.")
    "]";

/* A number in good standing, for any id without --numbers FILE. */
static const char number_default[] = "{"
    "\"verified_name\":\"wapipe rehearsal\","
    "\"code_verification_status\":\"VERIFIED\","
    "\"display_phone_number\":\"+1 555-078-3881\","
    "\"quality_rating\":\"GREEN\",\"platform_type\":\"CLOUD_API\","
    "\"throughput\":{\"level\":\"STANDARD\"},\"name_status\":\"APPROVED\","
    "\"whatsapp_business_manager_messaging_limit\":\"TIER_100K\","
    "\"messaging_limit_tier\":\"TIER_100K\"}";

/* Whether arg names a file: a '/' or a '.' (no name or id has one). */
static int
is_file(const char *arg)
{
	return strpbrk(arg, "/.") != NULL;
}

/* The items of the JSON file path: an array, or an object's "data". */
static struct json_object *
items(const char *opt, const char *path)
{
	struct json_object *o = json_object_from_file(path), *a;

	if (o == NULL)
		wa_die(EX_USAGE, "%s %s: not a JSON file: %s", opt, path,
		    json_util_get_last_err());
	a = json_object_is_type(o, json_type_array) ? o :
	    wa_json_get(o, "data");
	if (!json_object_is_type(a, json_type_array))
		wa_die(EX_USAGE, "%s %s: not an array, nor an object with a "
		    "\"data\" array", opt, path);
	json_object_get(a);
	json_object_put(o);
	return a;
}

void
wa_fake_set_templates(struct wa_fake_conf *c, const char *arg)
{
	const char *p, *comma;
	char *name;

	if (is_file(arg)) {
		json_object_put(c->tpls);
		c->tpls = items("--templates", arg);
		c->tpl_sends = 1;
		return;
	}
	for (p = arg; *p; p = comma + (*comma != '\0')) {
		comma = strchrnul(p, ',');
		if (comma == p)
			continue;
		name = wa_alloc(comma - p + 1);
		memcpy(name, p, comma - p);
		c->templates = wa_realloc(c->templates, (c->ntemplates + 1) *
		    sizeof *c->templates);
		c->templates[c->ntemplates++] = name;
	}
	if (c->ntemplates == 0)
		wa_die(EX_USAGE, "--templates: no name in '%s'", arg);
}

/* Only the ids of list (comma-separated) are phone numbers of ours. */
void
wa_fake_set_numbers(struct wa_fake_conf *c, const char *arg)
{
	struct json_object *n;
	const char *p, *comma, *id;
	size_t i, k;

	if (is_file(arg)) {
		json_object_put(c->nums);
		c->nums = items("--numbers", arg);
		k = json_object_array_length(c->nums);
		for (i = 0; i < k; i++) {
			n = json_object_array_get_idx(c->nums, i);
			id = wa_json_str(n, "id");
			if (id == NULL || !wa_number_id_valid(id))
				wa_die(EX_USAGE, "--numbers %s: item %zu has "
				    "no \"id\" that is a phone-number id", arg,
				    i + 1);
			c->numbers = wa_realloc(c->numbers, (c->nnumbers + 1) *
			    sizeof *c->numbers);
			c->numbers[c->nnumbers++] = wa_strdup(id);
		}
		if (k == 0)
			wa_die(EX_USAGE, "--numbers %s: no number", arg);
		return;
	}
	for (p = arg; *p; p = comma + (*comma != '\0')) {
		comma = strchrnul(p, ',');
		if (comma == p)
			continue;
		c->numbers = wa_realloc(c->numbers, (c->nnumbers + 1) *
		    sizeof *c->numbers);
		c->numbers[c->nnumbers] = wa_alloc(comma - p + 1);
		memcpy(c->numbers[c->nnumbers], p, comma - p);
		if (!wa_number_id_valid(c->numbers[c->nnumbers++]))
			wa_die(EX_USAGE, "--numbers: '%.*s' is not a "
			    "phone-number id", (int)(comma - p), p);
	}
	if (c->nnumbers == 0)
		wa_die(EX_USAGE, "--numbers: no id in '%s'", arg);
}

/* The built-in's templates named name, or one of its own, into a. */
static void
named(struct json_object *a, struct json_object *all, const char *name,
    size_t k)
{
	struct json_object *t;
	struct wa_buf b = { 0 };
	size_t i, n = json_object_array_length(all), found = 0;

	for (i = 0; i < n; i++) {
		t = json_object_array_get_idx(all, i);
		if (strcmp(wa_json_str(t, "name"), name) == 0) {
			json_object_array_add(a, json_object_get(t));
			found++;
		}
	}
	if (found > 0)
		return;
	wa_buf_puts(&b, "{\"name\":");
	wa_buf_json_string(&b, name, strlen(name));
	wa_buf_printf(&b, ",\"parameter_format\":\"POSITIONAL\","
	    "\"components\":[{\"type\":\"BODY\",\"text\":\"Hi {{1}}.\"}],"
	    "\"language\":\"en_US\",\"status\":\"APPROVED\","
	    "\"category\":\"UTILITY\",\"id\":\"%zu\"}",
	    (size_t)2000000000000000 + k);
	json_object_array_add(a, json_tokener_parse(b.s));
	wa_buf_free(&b);
}

void
wa_fake_graph_init(struct wa_fake_conf *c)
{
	struct json_object *all;
	char why[256];
	size_t i;

	if (c->waba_id == NULL)
		c->waba_id = "102290129340398";
	if (c->tpls == NULL) {
		all = json_tokener_parse(builtin);
		if (all == NULL)
			wa_die(EX_USAGE, "the built-in templates are not "
			    "JSON");
		if (c->templates == NULL)
			c->tpls = all;
		else {
			c->tpls = json_object_new_array();
			for (i = 0; i < c->ntemplates; i++)
				named(c->tpls, all, c->templates[i], i);
			json_object_put(all);
		}
	}
	c->ntread = json_object_array_length(c->tpls);
	c->tread = wa_alloc((c->ntread + 1) * sizeof *c->tread);
	for (i = 0; i < c->ntread; i++)
		if (wa_template_read(json_object_array_get_idx(c->tpls, i),
		    &c->tread[i], why, sizeof why) < 0)
			wa_die(EX_USAGE, "--templates: item %zu: %s", i + 1,
			    why);
}

void
wa_fake_graph_free(struct wa_fake_conf *c)
{
	size_t i;

	for (i = 0; i < c->ntread; i++)
		wa_template_free(&c->tread[i]);
	free(c->tread);
	json_object_put(c->tpls);
	json_object_put(c->nums);
}

/* The query's argument key, or NULL. */
static const char *
arg(const struct wa_fake_call *k, const char *key)
{
	return wa_json_str(k->query, key);
}

/* Whether word is one of list's (',' between), in any case. */
static int
listed(const char *list, const char *word, int anycase)
{
	const char *p, *comma;
	size_t n = strlen(word);

	for (p = list; *p; p = comma + (*comma != '\0')) {
		comma = strchrnul(p, ',');
		if ((size_t)(comma - p) == n && (anycase ?
		    strncasecmp(p, word, n) : strncmp(p, word, n)) == 0)
			return 1;
	}
	return 0;
}

/*
 * o narrowed to fields (',' between; "components{type}" counts as
 * components), the id kept; all of o when fields is NULL. New.
 */
static struct json_object *
narrow(struct json_object *o, const char *fields)
{
	struct json_object *n, *v;
	const char *p = fields;
	char key[64];
	size_t len;
	int depth;

	if (fields == NULL)
		return json_object_get(o);
	n = json_object_new_object();
	while (*p) {
		len = strcspn(p, ",{");
		if (len > 0 && len < sizeof key) {
			memcpy(key, p, len);
			key[len] = '\0';
			if (json_object_object_get_ex(o, key, &v))
				json_object_object_add(n, key,
				    json_object_get(v));
		}
		p += len;
		/* Subfields, {...}, nested or not: the whole key is kept. */
		for (depth = 0; *p && (depth > 0 || *p == '{'); p++)
			depth += *p == '{' ? 1 : *p == '}' ? -1 : 0;
		if (*p == ',')
			p++;
	}
	if (json_object_object_get_ex(o, "id", &v))
		json_object_object_add(n, "id", json_object_get(v));
	return n;
}

/* A cursor: the index, in base64, as Graph's opaque ones look. */
static void
cursor(struct wa_buf *b, size_t i)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
	    "qrstuvwxyz0123456789-_";
	char d[24];
	size_t n, j;
	unsigned v;

	n = snprintf(d, sizeof d, "%zu", i);
	for (j = 0; j < n; j += 3) {
		v = (unsigned char)d[j] << 16 | (j + 1 < n ?
		    (unsigned char)d[j + 1] << 8 : 0) | (j + 2 < n ?
		    (unsigned char)d[j + 2] : 0);
		wa_buf_add(b, &tab[v >> 18 & 63], 1);
		wa_buf_add(b, &tab[v >> 12 & 63], 1);
		if (j + 1 < n)
			wa_buf_add(b, &tab[v >> 6 & 63], 1);
		if (j + 2 < n)
			wa_buf_add(b, &tab[v & 63], 1);
	}
}

/* The index a cursor of ours stands for, or -1. */
static long
uncursor(const char *s)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
	    "qrstuvwxyz0123456789-_";
	char d[24], *end;
	size_t n = 0, bits = 0;
	unsigned v = 0;
	const char *q;
	long i;

	for (; *s; s++) {
		if ((q = strchr(tab, *s)) == NULL || n >= sizeof d - 1)
			return -1;
		v = v << 6 | (q - tab);
		if ((bits += 6) >= 8) {
			bits -= 8;
			d[n++] = v >> bits & 0xff;
		}
	}
	d[n] = '\0';
	if (n == 0 || strspn(d, "0123456789") != n)
		return -1;
	i = strtol(d, &end, 10);
	return *end == '\0' ? i : -1;
}

/* s, %-escaped for a query, into b. */
static void
escape(struct wa_buf *b, const char *s)
{
	static const char plain[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789-_.~,";

	for (; *s; s++)
		if (strchr(plain, *s) != NULL)
			wa_buf_add(b, s, 1);
		else
			wa_buf_printf(b, "%%%02X", (unsigned char)*s);
}

/* The URL of this listing's page from cursor key = at, into b. */
static void
page_url(struct wa_buf *b, const struct wa_fake_call *k, const char *key,
    size_t at)
{
	char sep = '?';

	wa_buf_printf(b, "http://%s%s", k->host ? k->host : "localhost",
	    k->url);
	json_object_object_foreach(k->query, name, v) {
		if (strcmp(name, "after") == 0 || strcmp(name, "before") == 0)
			continue;
		wa_buf_printf(b, "%c%s=", sep, name);
		escape(b, json_object_get_string(v));
		sep = '&';
	}
	wa_buf_printf(b, "%c%s=", sep, key);
	cursor(b, at);
}

/* The listing of c's templates that k asks for, into out; or 100. */
static long
templates(const struct wa_fake_conf *c, const struct wa_fake_call *k,
    struct wa_buf *out)
{
	const char *name = arg(k, "name"), *lang = arg(k, "language");
	const char *st = arg(k, "status"), *cat = arg(k, "category");
	size_t *hit = wa_alloc((c->ntread + 1) * sizeof *hit), n = 0, i;
	struct json_object *t;
	long limit = LIMIT, start = 0, end, at;

	if (arg(k, "limit") != NULL && ((limit = atol(arg(k, "limit"))) < 1 ||
	    limit > 1000)) {
		free(hit);
		return 100;
	}
	for (i = 0; i < c->ntread; i++)
		if ((name == NULL || strstr(c->tread[i].name, name)) &&
		    (lang == NULL || listed(lang, c->tread[i].language, 0)) &&
		    (st == NULL || listed(st, c->tread[i].status, 1)) &&
		    (cat == NULL || listed(cat, c->tread[i].category, 1)))
			hit[n++] = i;
	if (arg(k, "after") != NULL) {
		if ((at = uncursor(arg(k, "after"))) < 0) {
			free(hit);
			return 100;
		}
		start = at + 1;
	} else if (arg(k, "before") != NULL) {
		if ((at = uncursor(arg(k, "before"))) < 0) {
			free(hit);
			return 100;
		}
		start = at > limit ? at - limit : 0;
	}
	if (start > (long)n)
		start = n;
	end = start + limit < (long)n ? start + limit : (long)n;
	wa_buf_puts(out, "{\"data\":[");
	for (i = start; i < (size_t)end; i++) {
		t = narrow(json_object_array_get_idx(c->tpls, hit[i]),
		    arg(k, "fields"));
		if (i > (size_t)start)
			wa_buf_add(out, ",", 1);
		wa_buf_puts(out, json_object_to_json_string_ext(t,
		    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(t);
	}
	wa_buf_puts(out, "]");
	if (end > start) {
		wa_buf_puts(out, ",\"paging\":{\"cursors\":{\"before\":\"");
		cursor(out, start);
		wa_buf_puts(out, "\",\"after\":\"");
		cursor(out, end - 1);
		wa_buf_puts(out, "\"}");
		if (end < (long)n) {
			wa_buf_puts(out, ",\"next\":\"");
			page_url(out, k, "after", end - 1);
			wa_buf_puts(out, "\"");
		}
		if (start > 0) {
			wa_buf_puts(out, ",\"previous\":\"");
			page_url(out, k, "before", start);
			wa_buf_puts(out, "\"");
		}
		wa_buf_puts(out, "}");
	}
	wa_buf_puts(out, "}");
	free(hit);
	return 0;
}

/* Whether id is a number of ours: one of --numbers, or any id. */
static int
ours(const struct wa_fake_conf *c, const char *id)
{
	size_t i;

	if (!wa_number_id_valid(id))
		return 0;
	for (i = 0; i < c->nnumbers; i++)
		if (strcmp(c->numbers[i], id) == 0)
			return 1;
	return c->numbers == NULL;
}

/* The fields k asks for of number id, into out. */
static void
number(const struct wa_fake_conf *c, const struct wa_fake_call *k,
    const char *id, struct wa_buf *out)
{
	struct json_object *o = NULL, *n;
	size_t i, len = c->nums ? json_object_array_length(c->nums) : 0;

	for (i = 0; i < len && o == NULL; i++)
		if (strcmp(wa_json_str(json_object_array_get_idx(c->nums, i),
		    "id"), id) == 0)
			o = json_object_get(json_object_array_get_idx(c->nums,
			    i));
	if (o == NULL) {
		o = json_tokener_parse(number_default);
		json_object_object_add(o, "id", json_object_new_string(id));
	}
	n = narrow(o, arg(k, "fields"));
	wa_buf_puts(out, json_object_to_json_string_ext(n,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(n);
	json_object_put(o);
}

long
wa_fake_get(const struct wa_fake_conf *c, const struct wa_fake_call *k,
    const char *id, const char *edge, struct wa_buf *body, int *noobject)
{
	*noobject = 0;
	if (strcmp(id, c->waba_id) == 0) {
		if (edge == NULL) {
			wa_buf_printf(body, "{\"name\":\"wapipe rehearsal\","
			    "\"id\":\"%s\"}", c->waba_id);
			return 0;
		}
		if (strcmp(edge, "message_templates") == 0)
			return templates(c, k, body);
		return 100;
	}
	/* Another WABA's templates, or an id none of ours: no object. */
	if (!ours(c, id) || (edge != NULL &&
	    strcmp(edge, "message_templates") == 0)) {
		*noobject = 1;
		return 100;
	}
	if (edge != NULL)
		return 100;
	number(c, k, id, body);
	return 0;
}

long
wa_fake_send_check(const struct wa_fake_conf *c, struct json_object *tpl,
    int major, char *details, size_t size)
{
	const char *name = wa_json_str(tpl, "name");
	const char *lang = wa_json_str(tpl, "language.code");
	const struct wa_template *t = NULL;
	struct json_object *shape;
	const char *bad;
	size_t i;

	if (!c->tpl_sends || name == NULL)
		return -1;
	if (lang == NULL)
		lang = wa_json_str(tpl, "language");
	for (i = 0; i < c->ntread && t == NULL; i++)
		if (strcmp(c->tread[i].name, name) == 0 && lang != NULL &&
		    strcmp(c->tread[i].language, lang) == 0)
			t = &c->tread[i];
	if (t == NULL)
		return 132001;
	if (strcmp(t->status, "PAUSED") == 0)
		return 132015;
	if (strcmp(t->status, "DISABLED") == 0)
		return 132016;
	if (strcmp(t->status, "APPROVED") != 0)
		return 132001;
	shape = wa_template_shape(tpl);
	bad = wa_template_fit(t, shape, details, size);
	json_object_put(shape);
	if (bad == NULL)
		return -1;
	return major == 0 || major >= 23 ? 132018 : 132000;
}
