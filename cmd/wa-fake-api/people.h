/*
 * people.h: what the people a rehearsal messages send back, as Meta's
 * webhook pages show it: the value of a change (its members after
 * metadata) for an answer, an opt-out or a preference, and the WhatsApp
 * id a number has. people.c; fakeapi.c queues what these write.
 */
#ifndef WA_FAKE_PEOPLE_H
#define WA_FAKE_PEOPLE_H

#include "core/buf.h"

/* What a person does back. */
enum people_act {
	PEOPLE_BUTTON,		/* taps the quick reply "Yes" */
	PEOPLE_TEXT,		/* writes a text (text: which) */
	PEOPLE_STOP_BUTTON,	/* taps "Stop promotions" */
	PEOPLE_SYSTEM_STOP,	/* the older system message: marketing stop */
	PEOPLE_SYSTEM_RESUME,	/* ... resume */
	PEOPLE_BSUID_TEXT,	/* writes text, known only by a BSUID */
	PEOPLE_PREFS_STOP,	/* user_preferences: marketing stop */
	PEOPLE_PREFS_RESUME	/* ... resume */
};

/*
 * The value of a "messages" change: person wa_id (digits) answers the
 * message wamid of business number business (digits) with act, its own
 * id, at secs (Unix); text: what a PEOPLE_TEXT or PEOPLE_BSUID_TEXT
 * says. The user id of a BSUID is user_id's (people_user_id).
 */
void people_message(struct wa_buf *b, enum people_act act,
    const char *wa_id, const char *business, const char *wamid,
    const char *id, long long secs, const char *text);
/* The value of a "user_preferences" change: marketing stop or resume. */
void people_preference(struct wa_buf *b, const char *wa_id, int stop,
    long long secs);
/*
 * The WhatsApp id of number digits into out (16 bytes): the digits, but
 * with old_br a Brazilian mobile (55, two of area, 9, eight) without its
 * ninth digit, as Meta's wa_id of an account older than that digit.
 */
const char *people_wa_id(const char *digits, int old_br, char *out);
/* A BSUID for number digits (US. and digits), the same for the same. */
const char *people_user_id(const char *digits, char *out, size_t size);

#endif
