/*
 * import.c: a recipients file as wa-campaign import takes it, CSV or
 * NDJSON (records/import.h: wa_rows_take, line by line; the first byte
 * picks --country-code). Every row taken has a phone in E.164 and
 * template params that wa-claim can put into a send request (as it does,
 * cmd/wa-claim.c) which passes the strict check and that wa-send
 * accepts (records/request.h): an imported row can always be sent. The
 * params go through Postgres's jsonb on the way, which writes a number
 * with an exponent or a fraction as a decimal without one (1e19 as
 * 10000000000000000000): that is done here too. The second bit of the
 * first byte checks the numbers against the plans (as the import does):
 * a row taken then has a zone COPY can carry, or none, and a country
 * (two capitals, or 001), none without the plans. Its expiry, when
 * it has one, is an RFC 3339 timestamp that reads back as itself.
 */
#include "fuzz.h"
#include "records/claim.h"
#include "records/import.h"
#include "records/request.h"
#include "records/stamp.h"

/* The zone, country and expiry of a row taken. */
static void
rules(const struct wa_rows *r)
{
	char again[WA_STAMP_MAX];
	size_t n;

	if (!r->plan)
		PROP(r->tz == NULL && r->country[0] == '\0');
	else
		PROP(strcmp(r->country, "001") == 0 ||
		    (strlen(r->country) == 2 && strspn(r->country,
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == 2));
	if (r->tz != NULL)
		PROP(*r->tz != '\0' && strcspn(r->tz, "\t\n\\ ") ==
		    strlen(r->tz));
	if (r->expires[0] == '\0')
		return;
	n = strlen(r->expires);
	PROP(n >= 25 && n < WA_STAMP_MAX && r->expires[10] == 'T');
	PROP(strcspn(r->expires, "\t\n\\") == n);
	PROP(wa_stamp(r->expires, n, again) == NULL);
	PROP(strcmp(again, r->expires) == 0);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	return 0;
}

/*
 * The n bytes of JSON at s as jsonb writes them back (its numbers: a
 * numeric without exponent, as an integer when the exponent leaves no
 * fraction), into out.
 */
static void
jsonb(const char *s, size_t n, struct wa_buf *out)
{
	size_t i = 0, j, nint, nfrac, k;
	long e, scale;
	const char *d;
	int str = 0, lead;

	out->len = 0;
	while (i < n) {
		if (str || (s[i] != '-' && (s[i] < '0' || s[i] > '9'))) {
			if (str && s[i] == '\\') {
				wa_buf_add(out, s + i, 2);
				i += 2;
				continue;
			}
			if (s[i] == '"')
				str = !str;
			wa_buf_add(out, s + i++, 1);
			continue;
		}
		/* A number: -? int (. frac)? ([eE] [+-]? exp)? */
		j = i + (s[i] == '-');
		d = s + j;
		for (nint = 0; j < n && s[j] >= '0' && s[j] <= '9'; j++)
			nint++;
		nfrac = 0;
		if (j < n && s[j] == '.')
			for (j++; j < n && s[j] >= '0' && s[j] <= '9'; j++)
				nfrac++;
		e = 0;
		if (j < n && (s[j] == 'e' || s[j] == 'E')) {
			e = strtol(s + j + 1, NULL, 10);
			/* Beyond any that matters; no overflow below. */
			e = e < -100000 ? -100000 : e > 100000 ? 100000 : e;
			for (j++; j < n && strchr("+-0123456789", s[j]); j++)
				;
		}
		scale = (long)nfrac - e;
		if ((nfrac == 0 && e == 0) || scale > 0 || e > 400) {
			wa_buf_add(out, s + i, j - i);	/* as it was */
			i = j;
			continue;
		}
		/* An integer: the digits, then -scale zeros. */
		if (s[i] == '-')
			wa_buf_add(out, "-", 1);
		lead = 1;
		for (k = 0; k < nint + nfrac + (nfrac > 0); k++) {
			if (d[k] == '.' || (lead && d[k] == '0'))
				continue;
			lead = 0;
			wa_buf_add(out, d + k, 1);
		}
		if (lead) {
			if (s[i] == '-')
				out->len--;
			wa_buf_add(out, "0", 1);
		} else
			for (; scale < 0; scale++)
				wa_buf_add(out, "0", 1);
		i = j;
	}
	wa_buf_add(out, "", 0);
}

/* The send request wa-claim writes for the row (records/claim.c). */
static void
claimed(struct wa_buf *line, const struct wa_rows *r)
{
	static struct wa_buf pg, head;

	jsonb(r->params.s, r->params.len, &pg);
	if (head.len == 0)
		wa_claim_head(&head, "1", "106540352242922", "hello",
		    "en_US", "a1b2c3d4");
	line->len = 0;
	wa_claim_line(line, &head, "1", "1", r->phone, pg.s, pg.len);
	line->len--;		/* the '\n' */
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct json_tokener *tok;
	static struct wa_buf line;
	struct wa_request rq = { 0 };
	struct wa_rows r;
	struct json_object *req;
	const char *p, *nl, *why;
	char w[320];
	size_t n, at, len;
	int ret;

	if (size < 1)
		return 0;
	if (tok == NULL)
		tok = wa_json_tokener();
	wa_rows_init(&r, -1, "fuzz", data[0] & 1 ? "44" : NULL);
	r.plan = (data[0] & 2) != 0;
	p = (const char *)data + 1;
	n = size - 1;
	for (at = 0; at < n; at += len + (nl != NULL)) {
		nl = memchr(p + at, '\n', n - at);
		len = nl ? (size_t)(nl - (p + at)) : n - at;
		memset(w, 0, sizeof w);
		ret = wa_rows_take(&r, p + at, len, w, sizeof w);
		PROP(ret >= -2 && ret <= 1);
		if (ret < 0)
			PROP(w[0] != '\0' && memchr(w, '\0', sizeof w));
		if (ret == -2)
			break;		/* a bad CSV header ends the import */
		if (ret != 1)
			continue;
		PROP(r.format == WA_CSV || r.format == WA_NDJSON);
		PROP(wa_phone_is_e164(r.phone));
		rules(&r);
		PROP(r.params.len > 0);
		PROP(r.params.s[0] == '[' || r.params.s[0] == '{');
		claimed(&line, &r);
		PROP(fuzz_strict(line.s, line.len));
		req = wa_json_parse(tok, line.s, line.len, WA_JSON_RECORD,
		    WA_JSON_DEPTH, w, sizeof w);
		PROP(req != NULL);
		why = wa_request_prepare(&rq, req, line.s, line.len,
		    "https://graph.example/v21.0");
		if (why != NULL)
			fprintf(stdout, "claimed row refused: %s\n%s\n", why,
			    line.s);
		PROP(why == NULL);
		json_object_put(req);
	}
	wa_request_free(&rq);
	wa_rows_free(&r);
	return 0;
}
