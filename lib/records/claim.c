/*
 * claim.c: a send request from a campaign_recipients row. Reads the
 * row's fields, writes NDJSON into a buffer; no I/O of its own. The
 * fields of the campaign go once into a head every row's line shares.
 */
#include <string.h>

#include "core/buf.h"
#include "records/claim.h"

void
wa_claim_head(struct wa_buf *head, const char *id, const char *number,
    const char *template, const char *lang, const char *tag)
{
	head->len = 0;
	wa_buf_printf(head, ",\"campaign_id\":%s,", id);
	if (*tag) {
		wa_buf_puts(head, "\"deployment\":");
		wa_buf_json_string(head, tag, strlen(tag));
		wa_buf_add(head, ",", 1);
	}
	wa_buf_puts(head, "\"phone_number_id\":");
	wa_buf_json_string(head, number, strlen(number));
	wa_buf_puts(head, ",\"template\":{\"name\":");
	wa_buf_json_string(head, template, strlen(template));
	wa_buf_puts(head, ",\"language\":");
	wa_buf_json_string(head, lang, strlen(lang));
}

void
wa_claim_line(struct wa_buf *line, const struct wa_buf *head,
    const char *id, const char *attempt, const char *phone,
    const char *params, size_t n)
{
	wa_buf_printf(line, "{\"id\":%s,\"attempt\":%s", id, attempt);
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
	wa_buf_json_string(line, phone, strlen(phone));
	wa_buf_add(line, "}\n", 2);
}
