/*
 * claim.c: a send request from a campaign_recipients row. Reads a query's
 * result, writes NDJSON into a buffer; no I/O of its own. The fields of
 * the campaign go once into a head every row's line shares.
 */
#include "core/buf.h"
#include "pg/claim.h"

void
wa_claim_head(struct wa_buf *head, const char *id, PGresult *res)
{
	head->len = 0;
	wa_buf_printf(head, ",\"campaign_id\":%s,\"phone_number_id\":", id);
	wa_buf_json_string(head, PQgetvalue(res, 0, 0),
	    PQgetlength(res, 0, 0));
	wa_buf_puts(head, ",\"template\":{\"name\":");
	wa_buf_json_string(head, PQgetvalue(res, 0, 1),
	    PQgetlength(res, 0, 1));
	wa_buf_puts(head, ",\"language\":");
	wa_buf_json_string(head, PQgetvalue(res, 0, 2),
	    PQgetlength(res, 0, 2));
}

/* params is a JSON array, or an object whose members are merged. */
void
wa_claim_line(struct wa_buf *line, const struct wa_buf *head, PGresult *res,
    int i)
{
	const char *params = PQgetvalue(res, i, 3);
	size_t n = PQgetlength(res, i, 3);

	wa_buf_printf(line, "{\"id\":%s,\"attempt\":%s", PQgetvalue(res, i, 0),
	    PQgetvalue(res, i, 1));
	wa_buf_add(line, head->s, head->len);
	if (params[0] == '{') {
		if (n > 2) {
			wa_buf_add(line, ",", 1);
			wa_buf_add(line, params + 1, n - 2);
		}
	} else {
		wa_buf_puts(line, ",\"params\":");
		wa_buf_add(line, params, n);
	}
	wa_buf_puts(line, "},\"to\":");
	wa_buf_json_string(line, PQgetvalue(res, i, 2), PQgetlength(res, i, 2));
	wa_buf_add(line, "}\n", 2);
}
