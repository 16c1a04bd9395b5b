/*
 * phone.c: phone numbers as the Cloud API wants them, E.164 with the
 * leading '+' (without it Meta prepends the sender's own country code).
 *
 * Spaces, tabs, hyphens, dots and parentheses are dropped, and so is a
 * "(0)" (the trunk prefix some countries write after the country code).
 * A number is international when it starts with '+' or "00"; any other
 * number is national and needs the country code given by the caller, and
 * loses one leading 0 (the trunk prefix of the UK, Germany, France...)
 * before it is prefixed. The result is '+', a digit 1 to 9 and 6 to 14
 * more digits.
 */
#include <string.h>

#include "records/phone.h"

const char wa_phone_no_cc[] = "no country code: write it with '+' or 00";

/*
 * Writes the E.164 form of the n bytes at s into out (WA_PHONE_MAX
 * bytes); cc is the country code for national numbers, digits only, or
 * NULL to refuse them. Returns NULL, or why s is not a phone number.
 */
const char *
wa_phone_e164(const char *s, size_t n, const char *cc, char *out)
{
	char d[WA_PHONE_MAX + 4], *p = d;
	const char *pre = "";
	size_t i = 0, nd = 0, ncc;
	int intl = 0;

	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i < n && s[i] == '+') {
		intl = 1;
		i++;
	}
	for (; i < n; i++) {
		if (s[i] == '(' && n - i >= 3 && memcmp(s + i, "(0)", 3) == 0)
			i += 2;
		else if (s[i] >= '0' && s[i] <= '9') {
			if (nd == sizeof d)
				return "too long: E.164 has at most 15 digits";
			d[nd++] = s[i];
		} else if (s[i] == '+')
			return "a '+' can only come first";
		else if (memchr(" \t-.()", s[i], 6) == NULL)
			return "a character other than digits, spaces, "
			    "'-', '.', '(' and ')'";
	}
	if (nd == 0)
		return intl ? "no digits after the '+'" : "empty";
	if (!intl && nd >= 2 && d[0] == '0' && d[1] == '0') {
		p += 2;
		nd -= 2;
	} else if (!intl) {
		if (cc == NULL)
			return wa_phone_no_cc;
		pre = cc;
		if (d[0] == '0') {
			p++;
			nd--;
		}
	}
	ncc = strlen(pre);
	if (nd + ncc < 7)
		return "too short: E.164 has at least 7 digits";
	if (nd + ncc > 15)
		return "too long: E.164 has at most 15 digits";
	out[0] = '+';
	memcpy(out + 1, pre, ncc);
	memcpy(out + 1 + ncc, p, nd);
	out[1 + ncc + nd] = '\0';
	if (out[1] == '0')
		return "a country code never starts with 0";
	return NULL;
}

int
wa_phone_is_e164(const char *s)
{
	char out[WA_PHONE_MAX];
	size_t n = strlen(s);

	return s[0] == '+' && wa_phone_e164(s, n, NULL, out) == NULL &&
	    strcmp(out, s) == 0;
}

/* The digits of a --country-code ("44" or "+44"), or NULL if it is bad. */
const char *
wa_phone_cc(const char *s)
{
	size_t n;

	if (*s == '+')
		s++;
	n = strspn(s, "0123456789");
	if (n < 1 || n > 3 || s[n] != '\0' || s[0] == '0')
		return NULL;
	return s;
}
