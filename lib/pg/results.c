/*
 * results.c: send results applied to campaign_recipients.
 *
 * A batch is one statement, sorted by id (unsorted overlapping batches
 * deadlock), fenced on (id, attempt) and status sending, rank-monotone:
 * sent stores the wamid (and settles a row of the same attempt that
 * wa-reconcile had already called unknown, or that was put back to
 * pending from unknown, by wa-reconcile or wa-campaign requeue, and not
 * claimed again: that attempt was sent, so it is not sent twice; where a
 * webhook got there first with the same wamid it changes nothing, and is
 * not stale); retry goes back to pending after a jittered backoff, or to
 * failed after max_attempts; failed keeps the error; unknown waits for a
 * webhook or wa-reconcile; halt puts the row back (attempt not counted)
 * and pauses the campaign, the reason its error ("halt: 100/33 ...",
 * code/subcode and title). A retry of class outage (the API unreachable)
 * or unsent (never sent: the sender was stopping) is not an attempt
 * either: the row goes back to pending, never to failed, and an outage
 * is remembered by the campaign, until a result that reached the API
 * moves a row (status_at now(): one the statement took out of sending,
 * unknown or pending); a sent result for a row already settled, as when
 * a batch whose answer was lost is run again, is no news of the API,
 * and must not end the outage that batch began. A row's current error
 * is its last attempt's (none once sent); every error is also added to
 * recipient_errors by the same statement.
 *
 * When Postgres refuses a batch for its data (bad bytes, a wamid given
 * twice), the batch is split in halves until the line at fault is alone:
 * it is refused, the rest applied.
 */
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "records/json.h"
#include "api/class.h"
#include "pg/pg.h"
#include "pg/results.h"

const char *const wa_outcome_names[WA_OUTCOMES] = { "sent", "retry",
    "failed", "unknown", "halt" };

static const char *apply_sql =
    "WITH r AS (SELECT *, coalesce(class IN ('outage', 'unsent'), false)"
    "   AS free FROM unnest($1::bigint[], $2::int[], $3::text[],"
    "   $4::text[], $5::int[], $6::text[], $7::bigint[], $8::text[],"
    "   $9::int[], $10::text[], $11::jsonb[])"
    "   AS r(id, attempt, outcome, wamid, code, title, delay_ms, class,"
    "   subcode, wa_id, reply)),"
    " upd AS (UPDATE campaign_recipients c SET"
    "   status = CASE WHEN c.status <> 'sending' THEN"
    "     CASE WHEN c.status IN ('unknown', 'pending') THEN 'sent'"
    "     ELSE c.status END"
    "     WHEN r.outcome IN ('sent', 'failed', 'unknown') THEN r.outcome"
    "     WHEN r.outcome = 'retry' AND NOT r.free"
    "      AND c.attempt >= k.max_attempts THEN 'failed'"
    "     ELSE 'pending' END,"
    "   attempt = CASE WHEN c.status = 'sending' AND (r.outcome = 'halt'"
    "     OR r.free) THEN c.attempt - 1 ELSE c.attempt END,"
    "   next_attempt_at = CASE WHEN c.status = 'sending'"
    "     AND r.outcome = 'retry'"
    "     THEN now() + r.delay_ms * interval '1 millisecond'"
    "     ELSE c.next_attempt_at END,"
    "   wamid = coalesce(c.wamid, r.wamid), claim_token = NULL,"
    "   wa_id = coalesce(r.wa_id, c.wa_id),"
    "   status_at = CASE WHEN c.status IN ('sending', 'unknown', 'pending')"
    "     THEN now() ELSE c.status_at END,"
    "   error_code = CASE WHEN c.status IN ('sending', 'unknown', 'pending')"
    "     THEN r.code ELSE c.error_code END,"
    "   error_title = CASE WHEN c.status IN ('sending', 'unknown', 'pending')"
    "     THEN r.title ELSE c.error_title END,"
    "   error_class = CASE WHEN c.status = 'sending'"
    "     AND r.outcome <> 'sent' THEN r.class"
    "     WHEN c.status IN ('sending', 'unknown', 'pending') THEN NULL"
    "     ELSE c.error_class END"
    "  FROM r, campaigns k"
    "  WHERE c.id = r.id AND c.attempt = r.attempt AND k.id = c.campaign_id"
    "   AND (c.status = 'sending' OR (r.wamid IS NOT NULL"
    "     AND (c.wamid IS NULL OR c.wamid = r.wamid"
    "      OR c.status = 'unknown')))"
    "  RETURNING c.id, c.campaign_id, r.attempt, r.outcome, r.code,"
    "   r.title, r.class, r.free, c.status_at = now() AS moved),"
    " hist AS (INSERT INTO recipient_errors (recipient_id, attempt, code,"
    "   class, title)"
    "  SELECT id, attempt, code, class, title FROM upd"
    "  WHERE outcome <> 'sent' AND NOT free"
    "   AND (code IS NOT NULL OR title IS NOT NULL)),"
    " h AS (SELECT DISTINCT ON (c.campaign_id) c.campaign_id,"
    "   'halt: ' || coalesce(r.code::text"
    "    || coalesce('/' || r.subcode::text, '') || ' ', '')"
    "   || coalesce(r.title, 'campaign-wide error') AS reason"
    "  FROM r JOIN campaign_recipients c ON c.id = r.id"
    "  WHERE r.outcome = 'halt' ORDER BY c.campaign_id, r.id),"
    " o AS (SELECT campaign_id,"
    "   count(*) FILTER (WHERE class = 'outage') AS n,"
    "   count(*) FILTER (WHERE NOT free AND moved) AS reached,"
    "   min(title) FILTER (WHERE class = 'outage') AS reason"
    "  FROM upd GROUP BY campaign_id),"
    " ks AS (SELECT coalesce(h.campaign_id, o.campaign_id) AS id,"
    "   h.reason AS halt, coalesce(o.n, 0) AS n,"
    "   coalesce(o.reached, 0) AS reached, o.reason"
    "  FROM h FULL JOIN o ON o.campaign_id = h.campaign_id),"
    " kupd AS (UPDATE campaigns k SET updated_at = now(),"
    "   state = CASE WHEN ks.halt IS NOT NULL AND k.state = 'running'"
    "     THEN 'paused' ELSE k.state END,"
    "   state_reason = CASE WHEN ks.halt IS NOT NULL AND k.state = 'running'"
    "     THEN ks.halt ELSE k.state_reason END,"
    "   outage_started_at = CASE WHEN ks.n > 0 AND (k.outage_started_at"
    "     IS NULL OR k.outage_ended_at IS NOT NULL) THEN now()"
    "     ELSE k.outage_started_at END,"
    "   outage_ended_at = CASE WHEN ks.n > 0 THEN NULL"
    "     WHEN ks.reached > 0 AND k.outage_started_at IS NOT NULL"
    "     AND k.outage_ended_at IS NULL THEN now()"
    "     ELSE k.outage_ended_at END,"
    "   outage_seen_at = CASE WHEN ks.n > 0 THEN now()"
    "     ELSE k.outage_seen_at END,"
    "   outage_reason = CASE WHEN ks.n > 0 THEN coalesce(ks.reason,"
    "     'the API could not be reached') ELSE k.outage_reason END,"
    "   outage_results = k.outage_results + ks.n"
    "  FROM ks WHERE k.id = ks.id AND ((ks.halt IS NOT NULL"
    "   AND k.state = 'running') OR ks.n > 0 OR (ks.reached > 0"
    "   AND k.outage_started_at IS NOT NULL AND k.outage_ended_at IS NULL)))"
    /*
     * A conversation's message (a "message" line: r.reply, the line
     * whole) is kept in conversation_messages, attributed to the
     * campaign of the inbound message it answers, with the statuses
     * that came before it (kept unmatched: a webhook can beat its
     * result here); one that did not go, failed with its error. Once:
     * a line given again adds nothing.
     */
    ","
    " cr AS (SELECT r.*, x.*, (SELECT u.status FROM unmatched_statuses u"
    "   WHERE u.wamid = r.wamid ORDER BY status_rank(u.status) DESC"
    "   LIMIT 1) AS came FROM r, LATERAL (SELECT"
    "   coalesce(r.wamid, 'unsent:' || md5(r.reply::text)) AS key,"
    "   r.reply->>'reply_to' AS reply_to) x WHERE r.reply IS NOT NULL),"
    " cm AS (INSERT INTO conversation_messages (wamid, phone_number_id,"
    "   phone, type, message, reply_to, status, error_code, error_title,"
    "   error_class, campaign_id, recipient_id)"
    "  SELECT DISTINCT ON (cr.key) cr.key,"
    "   cr.reply->>'phone_number_id', cr.reply->>'to',"
    "   cr.reply #>> '{message,type}', cr.reply->'message', cr.reply_to,"
    "   CASE WHEN cr.outcome NOT IN ('sent', 'unknown') THEN 'failed'"
    "    WHEN status_rank(cr.came) > 0 THEN cr.came ELSE cr.outcome END,"
    "   cr.code, cr.title, CASE WHEN cr.outcome <> 'sent' THEN cr.class"
    "   END, i.campaign_id, i.recipient_id"
    "  FROM cr LEFT JOIN inbound_messages i ON i.wamid = cr.reply_to"
    "  ORDER BY cr.key ON CONFLICT (wamid) DO NOTHING RETURNING wamid),"
    " cu AS (DELETE FROM unmatched_statuses u USING cm"
    "  WHERE u.wamid = cm.wamid)"
    /*
     * Lines that name no row are looked for only when some line was not
     * applied: the first condition is a one-time filter, so a batch
     * applied whole costs no lookup per line.
     */
    " SELECT (SELECT count(*) FROM upd) + (SELECT count(*) FROM cr),"
    "  count(*), array_to_string((array_agg(r.id ORDER BY r.id))[1:10],"
    "  ' ') FROM r WHERE (SELECT count(*) FROM upd) + (SELECT count(*)"
    "  FROM cr) < (SELECT count(*) FROM r) AND r.reply IS NULL"
    "  AND NOT EXISTS (SELECT 1 FROM campaign_recipients c"
    "  WHERE c.id = r.id)";

struct row {
	int64_t		 id;
	int64_t		 attempt;
	int		 outcome;	/* index in wa_outcome_names */
	int		 refused;
	int64_t		 code;		/* -1: none */
	int64_t		 subcode;	/* -1: none */
	int64_t		 delay_ms;
	const char	*class;		/* a wa_class_name, or NULL */
	size_t		 wamid, title;	/* offsets in str, or 0: none */
	size_t		 wa_id;		/* the same: only one that is not
					   the number sent to */
	size_t		 line, len;	/* the input line, in lines */
	int		 reply;		/* a conversation's message */
	const char	*name;
	unsigned long	 lineno;
};

struct wa_results {
	struct wa_pg	*db;
	int64_t		 base_ms, cap_ms;
	struct row	*v;
	size_t		 n, cap;
	size_t		*order;		/* v's indices sorted by id */
	struct wa_buf	 str;		/* wamids and titles, NUL-ended */
	struct wa_buf	 lines;		/* the batch's lines, to echo or keep */
	struct wa_buf	 a[11];		/* the statement's arrays */
	unsigned long long done[WA_OUTCOMES], stale, norow, refused;
	char		 norow_ids[96];	/* the first ids no row has */
	void		(*on_refused)(const char *, size_t, const char *,
			    unsigned long, const char *, void *);
	void		*arg;
	char		 why[96];	/* a refusal that names numbers */
};

struct wa_results *
wa_results_new(struct wa_pg *db, int64_t base_ms, int64_t cap_ms)
{
	struct wa_results *r = wa_alloc(sizeof *r);

	r->db = db;
	r->base_ms = base_ms;
	r->cap_ms = cap_ms;
	wa_buf_add(&r->str, "", 1);	/* offset 0 means none */
	return r;
}

void
wa_results_free(struct wa_results *r)
{
	int i;

	if (r == NULL)
		return;
	for (i = 0; i < 11; i++)
		wa_buf_free(&r->a[i]);
	wa_buf_free(&r->str);
	wa_buf_free(&r->lines);
	free(r->v);
	free(r->order);
	free(r);
}

void
wa_results_on_refused(struct wa_results *r, void (*fn)(const char *,
    size_t, const char *, unsigned long, const char *, void *), void *arg)
{
	r->on_refused = fn;
	r->arg = arg;
}

size_t
wa_results_count(const struct wa_results *r)
{
	return r->n;
}

unsigned long long
wa_results_done(const struct wa_results *r, int outcome)
{
	return r->done[outcome];
}

unsigned long long
wa_results_stale(const struct wa_results *r)
{
	return r->stale;
}

unsigned long long
wa_results_norow(const struct wa_results *r)
{
	return r->norow;
}

const char *
wa_results_norow_ids(const struct wa_results *r)
{
	return r->norow_ids;
}

unsigned long long
wa_results_refused(const struct wa_results *r)
{
	return r->refused;
}

static size_t
keep(struct wa_results *r, const char *s)
{
	size_t at = r->str.len;

	if (s == NULL)
		return 0;
	wa_buf_add(&r->str, s, strlen(s) + 1);
	return at;
}

/*
 * The delay before a retry: backoff, and at least the error's delay in
 * api/class.h's table; or an outage's.
 */
static int64_t
delay(struct wa_results *r, struct json_object *o, int64_t attempt,
    const char *class)
{
	int64_t code = -1, subcode = -1;

	if (class != NULL && strcmp(class, "unsent") == 0)
		return 0;
	if (class != NULL && strcmp(class, "outage") == 0)
		return r->base_ms + wa_backoff_ms(2, r->base_ms, r->cap_ms);
	if (wa_json_int(o, "result.error.code", &code) != 1)
		code = -1;
	if (wa_json_int(o, "result.error.subcode", &subcode) != 1)
		subcode = -1;
	return wa_backoff_ms(attempt, r->base_ms, r->cap_ms) +
	    wa_error_delay_ms(code, subcode);
}

/* The class's name as lib/api/class.c spells it, or NULL. */
static const char *
class_of(const char *s)
{
	int c;

	if (s == NULL)
		return NULL;
	for (c = 0; c <= WA_UNSENT; c++)
		if (strcmp(s, wa_class_name(c)) == 0)
			return wa_class_name(c);
	return NULL;
}

const char *
wa_results_take(struct wa_results *r, struct json_object *obj,
    const char *line, size_t len, const char *name, unsigned long lineno)
{
	struct row *w;
	const char *s, *to, *wa_id;
	int64_t id, attempt, code;
	int k, reply;

	s = wa_json_str(obj, "result.outcome");
	/* A conversation's message names no row (request.h). */
	reply = wa_json_get(obj, "id") == NULL &&
	    json_object_is_type(wa_json_get(obj, "message"),
	    json_type_object);
	if (reply && (wa_json_str(obj, "phone_number_id") == NULL ||
	    wa_json_str(obj, "to") == NULL ||
	    wa_json_str(obj, "message.type") == NULL))
		return "a message without phone_number_id, to or message.type";
	id = attempt = 0;
	/* As wa-send reads them: " 5" is not row 5 here either. */
	if (!reply && (wa_json_canon_int(obj, "id", &id) != 1 ||
	    wa_json_canon_int(obj, "attempt", &attempt) != 1))
		return "no integer \"id\" and \"attempt\" (a JSON number, "
		    "or digits without sign, space or leading zero)";
	/* What the batch's columns take (bigint, integer), here. */
	if (!reply && (id < 1 || attempt < 0 || attempt > INT32_MAX)) {
		snprintf(r->why, sizeof r->why, "\"id\" %lld or \"attempt\" "
		    "%lld out of range", (long long)id, (long long)attempt);
		return r->why;
	}
	for (k = 0; k < WA_OUTCOMES && s != NULL &&
	    strcmp(s, wa_outcome_names[k]) != 0; k++)
		;
	if (s == NULL || k == WA_OUTCOMES)
		return "no \"result\" with an outcome of sent, retry, "
		    "failed, unknown or halt";
	if (wa_json_int(obj, "result.error.code", &code) != 1 ||
	    code < 0 || code > INT32_MAX)
		code = -1;
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 64;
		r->v = wa_realloc(r->v, r->cap * sizeof *r->v);
		r->order = wa_realloc(r->order, r->cap * sizeof *r->order);
	}
	w = &r->v[r->n++];
	memset(w, 0, sizeof *w);
	w->id = id;
	w->attempt = attempt;
	w->reply = reply;
	w->outcome = k;
	w->code = code;
	if (wa_json_int(obj, "result.error.subcode", &w->subcode) != 1 ||
	    w->subcode < 0 || w->subcode > INT32_MAX)
		w->subcode = -1;
	w->class = class_of(wa_json_str(obj, "result.class"));
	/* Only a retry may be free: the classes say what the row is owed. */
	if (k != 1 && w->class != NULL && (strcmp(w->class, "outage") == 0 ||
	    strcmp(w->class, "unsent") == 0))
		w->class = NULL;
	w->delay_ms = k == 1 ? delay(r, obj, attempt, w->class) : 0;
	w->wamid = k == 0 ? keep(r, wa_json_str(obj, "result.wamid")) : 0;
	/* The answer's wa_id, kept only where it is not the number: the
	 * rare row (a Brazilian number's old account) pays for it. */
	to = wa_json_str(obj, "to");
	wa_id = wa_json_str(obj, "result.wa_id");
	w->wa_id = k == 0 && wa_id != NULL && strlen(wa_id) <= 32 &&
	    wa_id[strspn(wa_id, "0123456789")] == '\0' && *wa_id &&
	    (to == NULL || strcmp(to + (*to == '+'), wa_id) != 0) ?
	    keep(r, wa_id) : 0;
	w->title = keep(r, wa_json_str(obj, "result.error.title"));
	w->line = r->lines.len;
	w->len = len;
	wa_buf_add(&r->lines, line, len);
	w->name = name;
	w->lineno = lineno;
	return NULL;
}

static const char *
str(const struct wa_results *r, size_t at)
{
	return at ? r->str.s + at : NULL;
}

/* Sorts order by id: a qsort without a context argument needs this. */
static const struct row *sorting;

static int
byid(const void *a, const void *b)
{
	const struct row *x = &sorting[*(const size_t *)a];
	const struct row *y = &sorting[*(const size_t *)b];

	return (x->id > y->id) - (x->id < y->id);
}

/* Runs the statement for rows order[lo..hi): the result, or NULL. */
static PGresult *
run(struct wa_results *r, size_t lo, size_t hi, int wait)
{
	const char *p[11];
	size_t i;
	int j;

	for (j = 0; j < 11; j++)
		wa_pg_array_start(&r->a[j]);
	for (i = lo; i < hi; i++) {
		const struct row *w = &r->v[r->order[i]];

		if (w->reply) {
			wa_pg_array_null(&r->a[0]);
			wa_pg_array_add(&r->a[10], r->lines.s + w->line,
			    w->len);
		} else {
			wa_pg_array_int(&r->a[0], w->id);
			wa_pg_array_null(&r->a[10]);
		}
		wa_pg_array_int(&r->a[1], w->attempt);
		wa_pg_array_str(&r->a[2], wa_outcome_names[w->outcome]);
		wa_pg_array_str(&r->a[3], str(r, w->wamid));
		if (w->code >= 0)
			wa_pg_array_int(&r->a[4], w->code);
		else
			wa_pg_array_null(&r->a[4]);
		wa_pg_array_str(&r->a[5], str(r, w->title));
		wa_pg_array_int(&r->a[6], w->delay_ms);
		wa_pg_array_str(&r->a[7], w->class);
		if (w->subcode >= 0)
			wa_pg_array_int(&r->a[8], w->subcode);
		else
			wa_pg_array_null(&r->a[8]);
		wa_pg_array_str(&r->a[9], str(r, w->wa_id));
	}
	for (j = 0; j < 11; j++) {
		wa_pg_array_end(&r->a[j]);
		p[j] = r->a[j].s;
	}
	if (!wait)
		return wa_pg_try(r->db, "wa_record_apply", apply_sql, 11, p);
	return wa_pg_run(r->db, "wa_record_apply", apply_sql, 11, p);
}

/*
 * Counts what the statement for order[lo..hi) did; frees res. A line not
 * applied is stale (its row moved on) or names no row at all; the first
 * ids no row has are kept, to be named. When the statement ran again
 * after Postgres went away under it (again, or lib/pg's own retry), the
 * first may have committed: the lines the second run found moved on are
 * counted as its, not as stale.
 */
static void
count(struct wa_results *r, PGresult *res, size_t lo, size_t hi, int again)
{
	size_t applied = strtoull(PQgetvalue(res, 0, 0), NULL, 10);
	size_t norow = strtoull(PQgetvalue(res, 0, 1), NULL, 10);
	const char *ids = PQgetvalue(res, 0, 2);
	size_t have = strlen(r->norow_ids);

	if (norow > 0 && have + 1 + strlen(ids) < sizeof r->norow_ids)
		snprintf(r->norow_ids + have, sizeof r->norow_ids - have,
		    "%s%s", have ? " " : "", ids);
	PQclear(res);
	r->norow += norow;
	if (applied + norow < hi - lo && !again && !wa_pg_retried(r->db))
		r->stale += hi - lo - applied - norow;
	for (; lo < hi; lo++)
		r->done[r->v[r->order[lo]].outcome]++;
}

static int apply(struct wa_results *, size_t, size_t);

/*
 * order[lo..hi) was refused for its data: applies its halves, or refuses
 * it when it is one line. 0, or -1 when Postgres is gone or refuses the
 * statement itself.
 */
static int
split(struct wa_results *r, size_t lo, size_t hi)
{
	struct row *w;
	size_t mid = lo + (hi - lo) / 2;

	if (hi - lo > 1)
		return apply(r, lo, mid) < 0 || apply(r, mid, hi) < 0 ? -1 : 0;
	w = &r->v[r->order[lo]];
	w->refused = 1;
	r->refused++;
	if (r->on_refused != NULL)
		r->on_refused(r->lines.s + w->line, w->len, w->name,
		    w->lineno, wa_pg_error(r->db), r->arg);
	return 0;
}

/* Applies order[lo..hi), split while Postgres refuses its data. */
static int
apply(struct wa_results *r, size_t lo, size_t hi)
{
	PGresult *res;

	if ((res = run(r, lo, hi, 1)) != NULL) {
		count(r, res, lo, hi, 0);
		return 0;
	}
	if (wa_pg_state(r->db) == WA_PG_REFUSED && wa_pg_data_error(r->db))
		return split(r, lo, hi);
	return -1;
}

int
wa_results_apply(struct wa_results *r,
    void (*waiting)(struct wa_results *, void *), void *arg)
{
	PGresult *res;
	size_t i;
	int again = 0;

	if (r->n == 0)
		return 0;
	for (i = 0; i < r->n; i++)
		r->order[i] = i;
	sorting = r->v;
	qsort(r->order, r->n, sizeof *r->order, byid);
	/*
	 * One statement is one transaction: a kill leaves all or none. When
	 * Postgres does not answer at once, the caller may put the batch
	 * on disk before the wait.
	 */
	res = run(r, 0, r->n, 0);
	if (res == NULL && wa_pg_state(r->db) == WA_PG_WAIT) {
		if (waiting != NULL)
			waiting(r, arg);
		res = run(r, 0, r->n, 1);
		again = 1;
	}
	if (res != NULL) {
		count(r, res, 0, r->n, again);
		return 0;
	}
	if (wa_pg_state(r->db) == WA_PG_REFUSED && wa_pg_data_error(r->db))
		return split(r, 0, r->n);
	return -1;
}

void
wa_results_each(const struct wa_results *r, void (*fn)(const char *, size_t,
    void *), void *arg)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (!r->v[i].refused)
			fn(r->lines.s + r->v[i].line, r->v[i].len, arg);
}

void
wa_results_clear(struct wa_results *r)
{
	r->n = 0;
	r->str.len = 1;
	r->lines.len = 0;
}
