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
 * the country code for national numbers, or NULL to refuse them. Returns
 * NULL, or why s is not a phone number.
 */
const char *wa_phone_e164(const char *s, size_t n, const char *cc,
    char *out);
/* The country code of --country-code s, digits only, or NULL. */
const char *wa_phone_cc(const char *s);

#endif
