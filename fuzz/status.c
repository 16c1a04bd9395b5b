/*
 * status.c: a webhook body as wa-status-ingest takes it (records/input.h
 * with flags 0: Meta's bodies; then records/status.h's wa_status_walk and
 * wa_status_reduce). Every status kept is what the statement's arrays
 * take: a rank of 1 to 4, a timestamp from 0 to 9999-12-31, a wamid of 1
 * to 256 bytes and a title of at most 512, both UTF-8 without NUL, an
 * error code in 32 bits, a pricing code that pricing_kinds has (0 to
 * 127: category * 16 + type * 4 + billable) or none; after the reduction
 * one status per message, in the statement's order, priced when any of
 * its statuses was. Every inbound text kept is what the opt-out
 * arrays take: a number of 1 to 64 digits, a sender "+" and 1 to 15
 * digits, a text of 1 to WA_INBOUND_MAX bytes with no white space around
 * it, and its word: the text folded, at most twice as long, with no
 * ASCII capital, folded again unchanged; all UTF-8 without NUL. The
 * inbound messages (records/inbound.h), closed with "]", are one JSON
 * array of as many objects, each with a string "type" and its "raw"
 * object, with no \u0000 (jsonb refuses it).
 */
#include "fuzz.h"
#include "records/inbound.h"
#include "records/status.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	return 0;
}

/* The batch's inbound messages, as pg/statusdb.c sends them. */
static void
check_messages(const struct wa_status_batch *b)
{
	static struct json_tokener *tok;
	struct json_object *a, *m;
	struct wa_buf t = { 0 };
	size_t i;
	char w[256];

	if (b->nmsg == 0) {
		PROP(b->msgs.len == 0);
		return;
	}
	PROP(b->msgs.len > 0 && b->msgs.s[0] == '[');
	wa_buf_add(&t, b->msgs.s, b->msgs.len);
	wa_buf_add(&t, "]", 1);
	for (i = 0; i + 1 < t.len; i++) {
		if (t.s[i] != '\\')
			continue;
		PROP(strncmp(t.s + i + 1, "u0000", 5) != 0);
		i++;
	}
	PROP(wa_json_bytes(t.s, t.len, w, sizeof w) == 0);
	/* Two levels above the body's messages: the array, the object. */
	if (tok == NULL)
		tok = json_tokener_new_ex(WA_JSON_DEPTH + 4);
	json_tokener_reset(tok);
	a = json_tokener_parse_ex(tok, t.s, (int)t.len);
	PROP(a != NULL && json_object_is_type(a, json_type_array));
	PROP(json_object_array_length(a) == b->nmsg);
	for (i = 0; i < b->nmsg; i++) {
		m = json_object_array_get_idx(a, i);
		/* A message has a type; a change about the business
		   (records/inbound.h's event) a field, and no type. */
		PROP(json_object_is_type(wa_json_get(m, "type"),
		    json_type_string) != json_object_is_type(wa_json_get(m,
		    "field"), json_type_string));
		PROP(json_object_is_type(wa_json_get(m, "raw"),
		    json_type_object));
	}
	json_object_put(a);
	wa_buf_free(&t);
}

static int
text_ok(const struct wa_status_batch *b, size_t at, size_t n)
{
	PROP(at + n <= b->str.len);
	return wa_text_bad(b->str.s + at, n) == n;
}

static int
all_digits(const struct wa_status_batch *b, size_t at, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (b->str.s[at + i] < '0' || b->str.s[at + i] > '9')
			return 0;
	return 1;
}

static void
check_inbound(const struct wa_status_batch *b, const struct wa_inbound *t)
{
	static struct wa_buf f;
	const char *w;
	char id[160];
	size_t i;
	char c;

	PROP(t->scope_len >= 1 && t->scope_len <= 64);
	PROP(all_digits(b, t->scope, t->scope_len));
	if (b->str.s[t->phone] == '+') {
		PROP(t->phone_len >= 2 && t->phone_len <= 16);
		PROP(all_digits(b, t->phone + 1, t->phone_len - 1));
	} else {
		/* A BSUID: its whole shape, and nothing after it. */
		PROP(t->phone_len >= 4 && t->phone_len <= 3 + 4 + 128);
		snprintf(id, sizeof id, "%.*s", (int)t->phone_len,
		    b->str.s + t->phone);
		PROP(strlen(id) == t->phone_len && wa_bsuid_ok(id));
	}
	PROP(t->said_len >= 1 && t->said_len <= WA_INBOUND_MAX);
	PROP(text_ok(b, t->said, t->said_len));
	c = b->str.s[t->said];
	PROP(c != ' ' && c != '\t' && c != '\n' && c != '\r');
	c = b->str.s[t->said + t->said_len - 1];
	PROP(c != ' ' && c != '\t' && c != '\n' && c != '\r');
	PROP(t->word_len >= 1 && t->word_len <= 2 * WA_INBOUND_MAX);
	PROP(text_ok(b, t->word, t->word_len));
	w = b->str.s + t->word;
	for (i = 0; i < t->word_len; i++)
		PROP(w[i] < 'A' || w[i] > 'Z');
	/* The same text folds to the same word. */
	f.len = 0;
	wa_status_fold(&f, b->str.s + t->said, t->said_len);
	PROP(f.len == t->word_len && memcmp(f.s, w, f.len) == 0);
}

/* Whether x and y name the same message (as the reduction sees it). */
static int
same(const struct wa_status_batch *b, const struct wa_status *x,
    const struct wa_status *y)
{
	if (x->rid != 0 || y->rid != 0)
		return x->rid == y->rid;
	return x->wamid_len == y->wamid_len && memcmp(b->str.s + x->wamid,
	    b->str.s + y->wamid, x->wamid_len) == 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct json_tokener *tok;
	static struct wa_status_batch b;
	struct json_object *o;
	const struct wa_status *s;
	struct wa_status *copy;
	char *in = fuzz_copy(data, size), w[256], *priced;
	size_t i, j, before;

	/* One line, as the line reader hands it out: no '\n' inside. */
	size = line_len(in, size);
	if (tok == NULL)
		tok = wa_json_tokener();
	o = wa_json_parse(tok, in, size, 0, WA_JSON_DEPTH, w, sizeof w);
	if (o == NULL) {
		free(in);
		return 0;
	}
	(void)wa_status_walk(&b, o, "fuzz", 1);
	for (i = 0; i < b.nin; i++)
		check_inbound(&b, &b.in[i]);
	check_messages(&b);
	before = b.n;
	for (i = 0; i < b.n; i++) {
		s = &b.v[i];
		PROP(s->rank >= 1 && s->rank <= 4);
		PROP(s->ts >= 0 && s->ts <= 253402300799LL);
		PROP(s->rid >= 0);
		PROP(s->wamid_len >= 1 && s->wamid_len <= 256);
		PROP(text_ok(&b, s->wamid, s->wamid_len));
		PROP(s->title_len <= 512);
		if (s->title_len > 0)
			PROP(text_ok(&b, s->title, s->title_len));
		if (s->has_code)
			PROP(s->code >= INT32_MIN && s->code <= INT32_MAX);
		PROP(s->pricing == -1 || (s->pricing >= 0 &&
		    s->pricing / 16 <= 7 && s->pricing % 4 <= 2));
		if (s->uid_len > 0) {
			PROP(s->uid_len <= 3 + 4 + 128);
			snprintf(w, sizeof w, "%.*s", (int)s->uid_len,
			    b.str.s + s->uid);
			PROP(strlen(w) == s->uid_len && wa_bsuid_ok(w));
		}
	}
	/* Which messages had a priced status, before the reduction. */
	priced = calloc(b.n + 1, 1);
	for (i = 0; i < b.n; i++)
		priced[i] = b.v[i].pricing >= 0;
	copy = malloc((b.n + 1) * sizeof *copy);
	if (b.n > 0)
		memcpy(copy, b.v, b.n * sizeof *copy);
	wa_status_reduce(&b);
	PROP(b.n <= before && (before == 0 || b.n >= 1));
	for (i = 0; i < b.n; i++)
		for (j = i + 1; j < b.n; j++)
			PROP(!same(&b, &b.v[i], &b.v[j]));
	for (i = 0; i < b.n; i++)
		for (j = 0; j < before; j++)
			if (priced[j] && same(&b, &b.v[i], &copy[j]))
				PROP(b.v[i].pricing >= 0);
	free(priced);
	free(copy);
	/* Sorted by recipient id, those without one last. */
	for (i = 1; i < b.n; i++)
		if (b.v[i].rid != 0)
			PROP(b.v[i - 1].rid != 0 &&
			    b.v[i - 1].rid < b.v[i].rid);
	wa_status_clear(&b);
	json_object_put(o);
	free(in);
	return 0;
}
