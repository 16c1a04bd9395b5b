/*
 * dryrun.c: wa-campaign run --dry-run: writes on stdout the request each
 * pending row of the campaign would get, through the builder wa-claim
 * uses (its next attempt) and the check and form of wa-send --dry-run
 * (the URL and the body), read from a cursor in a read-only transaction:
 * no row changes, no call is made. Returns 0, 65 when a row would be
 * refused (said on stderr), 75 after a stop.
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/out.h"
#include "core/sig.h"
#include "records/claim.h"
#include "records/json.h"
#include "records/request.h"
#include "api/base.h"
#include "run.h"

/*
 * The request each pending row would get, through the builder wa-claim
 * uses (its next attempt) and the check and form wa-send --dry-run uses,
 * from a cursor in a read-only transaction.
 */
int
run_dry(void)
{
	const char *p[] = { run.id };
	struct json_tokener *tok = wa_json_tokener();
	struct wa_request rq = { 0 };
	struct wa_buf head = { 0 }, line = { 0 };
	struct json_object *o;
	char *base = wa_api_base();
	const char *why;
	char err[256];
	PGresult *res;
	long long bad = 0;
	int i, n;

	res = wa_pg_need(run.db, NULL, WA_CLAIM_HEAD_SQL, 1, p);
	if (PQntuples(res) != 1)
		wa_die(EX_USAGE, "no campaign %s", run.id);
	wa_claim_head(&head, run.id, PQgetvalue(res, 0, 0),
	    PQgetvalue(res, 0, 1), PQgetvalue(res, 0, 2),
	    PQgetvalue(res, 0, 3));
	PQclear(res);
	PQclear(wa_pg_need(run.db, NULL, "BEGIN READ ONLY", 0, NULL));
	PQclear(wa_pg_need(run.db, NULL, "DECLARE wa_dry NO SCROLL CURSOR FOR"
	    " SELECT id, attempt + 1, phone, template_params"
	    " FROM campaign_recipients WHERE campaign_id = $1"
	    " AND status = 'pending' ORDER BY next_attempt_at, id", 1, p));
	do {
		res = wa_pg_need(run.db, NULL, "FETCH 1000 FROM wa_dry", 0,
		    NULL);
		n = PQntuples(res);
		for (i = 0; i < n && !wa_stopping; i++) {
			line.len = 0;
			wa_claim_line(&line, &head, PQgetvalue(res, i, 0),
			    PQgetvalue(res, i, 1), PQgetvalue(res, i, 2),
			    PQgetvalue(res, i, 3), PQgetlength(res, i, 3));
			o = wa_json_parse(tok, line.s, line.len - 1,
			    WA_JSON_RECORD, WA_JSON_DEPTH, err, sizeof err);
			why = o == NULL ? err : wa_request_prepare(&rq, o,
			    line.s, line.len - 1, base);
			if (why != NULL) {
				wa_warn("row %s (%s): %s", PQgetvalue(res, i,
				    0), PQgetvalue(res, i, 2), why);
				bad++;
			} else {
				wa_request_dry(o, &rq);
				wa_out_json(o);
			}
			json_object_put(o);
		}
		PQclear(res);
		wa_wait(NULL, 0, 0);
	} while (n > 0 && !wa_stopping);
	PQclear(wa_pg_need(run.db, NULL, "ROLLBACK", 0, NULL));
	wa_request_free(&rq);
	free(base);
	wa_buf_free(&head);
	wa_buf_free(&line);
	json_tokener_free(tok);
	if (fflush(stdout) == EOF || ferror(stdout))
		wa_die(EX_IOERR, "write to stdout:");
	if (wa_stopping)
		return run_stopped();
	return bad > 0 ? EX_DATAERR : 0;
}
