/*
 * pg/blocked.c: why a running campaign's due rows cannot be claimed now:
 * its number's portfolio has messaged its messaging limit (the next
 * place frees at a time the table knows), or an urgent campaign on its
 * number has rows due. Reads messaging_limits (limit_used),
 * portfolio_numbers and campaigns; writes nothing.
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/err.h"
#include "core/sig.h"
#include "pg/blocked.h"

static const char *blocked_sql =
    "SELECT f.ms, f.max_people, f.period_s,"
    "  (SELECT min(u.id) FROM campaigns u"
    "    WHERE u.phone_number_id = c.phone_number_id AND u.id <> c.id"
    "    AND c.priority <> 'urgent' AND u.priority = 'urgent'"
    "    AND u.state = 'running' AND EXISTS (SELECT 1"
    "    FROM campaign_recipients r WHERE r.campaign_id = u.id"
    "    AND r.phase = 0 AND r.status = 'pending'"
    "    AND r.next_attempt_at <= now()))"
    "  , f.portfolio"
    " FROM campaigns c LEFT JOIN LATERAL (SELECT l.max_people, l.period_s,"
    "  (extract(epoch FROM u.frees_at - now()) * 1000)::bigint AS ms,"
    "  nullif(l.portfolio, c.phone_number_id) AS portfolio"
    "  FROM messaging_limits l,"
    "  LATERAL limit_used(l.portfolio, l.period_s, now()) u"
    "  WHERE l.portfolio = portfolio_of(c.phone_number_id)"
    "  AND u.used >= l.max_people) f ON true"
    " WHERE c.id = $1";

enum wa_blocked
wa_blocked(struct wa_pg *db, const char *campaign, long long *ms, char *why,
    size_t n)
{
	const char *p[] = { campaign };
	PGresult *res = wa_pg_need(db, NULL, blocked_sql, 1, p);
	enum wa_blocked b = WA_BLOCKED_NOT;
	char when[40];

	*ms = -1;
	if (n > 0)
		*why = '\0';
	if (PQntuples(res) != 1)
		;
	else if (!PQgetisnull(res, 0, 3)) {
		b = WA_BLOCKED_URGENT;
		snprintf(why, n, "waits while urgent campaign %s on its number "
		    "has rows to send", PQgetvalue(res, 0, 3));
	} else if (!PQgetisnull(res, 0, 0)) {
		b = WA_BLOCKED_LIMIT;
		*ms = atoll(PQgetvalue(res, 0, 0));
		if (*ms < 0)
			*ms = 0;
		snprintf(why, n, "its %s%s has messaged its limit of %s "
		    "people in %s s; the next place frees at %s (in %lld s)",
		    PQgetisnull(res, 0, 4) ? "number" : "portfolio ",
		    PQgetvalue(res, 0, 4), PQgetvalue(res, 0, 1),
		    PQgetvalue(res, 0, 2),
		    wa_rfc3339(when, sizeof when, wa_unix_ms() + *ms),
		    (*ms + 999) / 1000);
	}
	PQclear(res);
	return b;
}
