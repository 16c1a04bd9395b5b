/*
 * records/phone.h: phone numbers in E.164 with the leading '+', as the
 * Cloud API wants them (without it Meta prepends the sender's country
 * code).
 */
#ifndef WA_RECORDS_PHONE_H
#define WA_RECORDS_PHONE_H

#include <stddef.h>

#define WA_PHONE_MAX 17		/* '+', at most 15 digits, NUL */

/*
 * The E.164 form of the n bytes at s into out (WA_PHONE_MAX bytes); cc:
 * the country code for national numbers, or NULL to refuse them (with
 * wa_phone_no_cc). Returns NULL, or why s is not a phone number. The one
 * normaliser: imports, send requests and the fake Cloud API use it.
 */
const char *wa_phone_e164(const char *s, size_t n, const char *cc,
    char *out);
extern const char wa_phone_no_cc[];
/* Whether s is E.164 as wa_phone_e164 writes it ("+15551234567"). */
int wa_phone_is_e164(const char *s);
/* The country code of --country-code s, digits only, or NULL. */
const char *wa_phone_cc(const char *s);

#endif
