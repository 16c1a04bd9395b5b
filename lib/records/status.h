/*
 * records/status.h: the statuses in Meta's webhook bodies, gathered into
 * a batch and reduced to one per message (the highest rank), ready for
 * pg/statusdb.h to apply with one statement, each with what its pricing
 * object says (category, type, billable) as one code, the code of
 * sql/schema.sql's pricing_kinds; and the inbound texts of the
 * same bodies that may be opt-outs (a keyword of optout_keywords), which
 * the same statement looks up.
 */
#ifndef WA_RECORDS_STATUS_H
#define WA_RECORDS_STATUS_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "core/buf.h"

/* Status values as Meta sends them; played counts as read. */
enum {
	WA_ST_SENT, WA_ST_DELIVERED, WA_ST_READ, WA_ST_FAILED, WA_ST_PLAYED,
	WA_ST_DELETED, WA_ST_WARNING, WA_ST_OTHER, WA_ST_N
};
/* What a body may hold besides statuses: counted, logged, skipped. */
enum {
	WA_ODD_MALFORMED,	/* a status without id or status */
	WA_ODD_SYSTEM_ERROR,	/* value.errors: no message to tie it to */
	WA_ODD_MESSAGE,		/* inbound messages that are not a text
				   with "from" and a phone_number_id */
	WA_ODD_FIELD,		/* changes of another field (templates, ...) */
	WA_ODD_OBJECT,		/* not a whatsapp_business_account body */
	WA_ODD_FOREIGN,		/* a status whose callback data names
				   another deployment (request.h) */
	WA_ODD_N
};
extern const char *const wa_st_names[WA_ST_N];
extern const char *const wa_odd_names[WA_ODD_N];
extern const char *const wa_rank_names[];	/* by rank, 1 to 4 */

struct wa_status {
	int64_t		 rid;	/* from biz_opaque_callback_data, or 0 */
	int64_t		 attempt;	/* the callback's attempt, or -1 */
	int64_t		 ts;	/* the status's timestamp, or 0 */
	int64_t		 code;	/* errors[0].code, when has_code */
	int		 has_code;
	int		 rank;	/* 1 sent, 2 failed, 3 delivered, 4 read */
	int		 pricing;	/* its pricing's code, or -1: none */
	size_t		 wamid, wamid_len;	/* in the batch's str */
	size_t		 title, title_len;	/* title_len 0: none */
	size_t		 uid, uid_len;	/* recipient_user_id (0: none) */
	size_t		 phone, phone_len;	/* "+" and recipient_id's
					   digits (0: none) */
	unsigned long	 lineno;	/* of the body it came from */
};

/*
 * An inbound text short enough to be an opt-out keyword, its parts in
 * the batch's str: scope, metadata.phone_number_id (digits); phone, "+"
 * and "from" (1 to 15 digits), or the BSUID of a sender known only by
 * one (from_user_id, wa_bsuid_ok); said, the text trimmed of white space
 * (1 to WA_INBOUND_MAX bytes); word, said with every character in lower
 * case (at most twice as long). All UTF-8 without NUL.
 */
struct wa_inbound {
	size_t		 scope, scope_len;
	size_t		 phone, phone_len;
	size_t		 said, said_len;
	size_t		 word, word_len;
	unsigned long	 lineno;
};
#define WA_INBOUND_MAX 64	/* a longer text is no keyword */

struct wa_status_batch {
	struct wa_status *v;
	size_t		 n;
	size_t		 cap;
	struct wa_inbound *in;		/* inbound texts, nin of them */
	size_t		 nin;
	size_t		 incap;
	struct wa_buf	 str;		/* the strings of v and in */
	struct wa_buf	 msgs;		/* every inbound message, nmsg of
					   them (records/inbound.h) */
	size_t		 nmsg;
	uint64_t	 seen[WA_ST_N];	/* totals since the start */
	uint64_t	 odd[WA_ODD_N];
	uint64_t	 texts;		/* inbound texts read */
	uint64_t	 events;		/* changes about the business
					   (records/inbound.h) */
	struct wa_buf	 arr[14];	/* the batch as array parameters */
	const char	*p[18];		/* the statement's parameters */
	char		 tag[24];	/* this database's deployment tag */
	char		 num[2][24];
	const char	*spool;
	int64_t		 t0;		/* when it was sent */
};

/* What one statement did. */
struct wa_status_result {
	long long	 applied[4];	/* by status, in wa_st_names order */
	long long	 kept;		/* statuses put in unmatched_statuses */
	long long	 foreign;	/* statuses naming a row not theirs */
	long long	 matched;	/* kept ones whose row has appeared */
	long long	 optouts;	/* people added to suppressions */
	long long	 inbound;	/* messages added to inbound_messages */
	long long	 events;	/* changes added to account_events */
};

/*
 * Adds the statuses and inbound texts of one parsed body
 * (records/json.h: wa_json_parse, flags 0); where, lineno: for messages.
 * Returns NULL, or why a status was left out (a timestamp that is not a
 * time Postgres takes): the line is then to be rejected, though its
 * other statuses are in the batch.
 */
const char *wa_status_walk(struct wa_status_batch *b,
    struct json_object *body, const char *where, unsigned long lineno);
void wa_status_reduce(struct wa_status_batch *b);
/*
 * Appends s (n bytes of UTF-8) to out with every character in lower
 * case, as far as the C library's C.UTF-8 locale knows (else ASCII).
 */
void wa_status_fold(struct wa_buf *out, const char *s, size_t n);
void wa_status_clear(struct wa_status_batch *b);
void wa_status_free(struct wa_status_batch *b);

#endif
