/*
 * pg/moves.h: a campaign's state, read, and moved by the operator
 * (start, pause, resume, cancel); and a new campaign.
 */
#ifndef WA_PG_MOVES_H
#define WA_PG_MOVES_H

#include "pg/pg.h"
#include "pg/setting.h"

/* The state of campaign id (valid until the next call); exits 64 if none. */
const char *wa_campaign_state(PGconn *conn, const char *id);
/* Whether cmd is a move (start, pause, resume, cancel). */
int wa_campaign_is_move(const char *cmd);
/* 0; exits 65 when the state does not allow it, 64, 69. */
int wa_campaign_move(PGconn *conn, const char *cmd, const char *id,
    const char *reason);
/*
 * Prints the new campaign's id, a draft with the settings s gives (its
 * id is set here); exits 64 on a bad value, 69.
 */
int wa_campaign_create(PGconn *conn, const char *name, const char *number,
    struct wa_setting *s);

#endif
