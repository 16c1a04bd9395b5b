/*
 * numplan.cc: a phone number in E.164 against the numbering plans in
 * libphonenumber's metadata (Debian's libphonenumber, whose version
 * says how recent they are): is it a number any country gives out, in
 * which region, of which type. The C side sees only records/numplan.h:
 * nothing thrown here leaves it (an exception is a refusal, with why).
 * Reads no file; writes *np or why.
 *
 * The number is taken as written: "+4407911123456", which libphonenumber
 * would parse as +447911123456 (its trunk 0 dropped), is refused, with
 * the form the plan writes, so that what is stored is what is sent.
 */
#include <cstdio>
#include <list>
#include <string>

#include <phonenumbers/phonenumberutil.h>

#include "records/numplan.h"

using i18n::phonenumbers::PhoneNumber;
using i18n::phonenumbers::PhoneNumberUtil;

static const char *
type_name(PhoneNumberUtil::PhoneNumberType t)
{
	switch (t) {
	case PhoneNumberUtil::FIXED_LINE:		return "fixed_line";
	case PhoneNumberUtil::MOBILE:			return "mobile";
	case PhoneNumberUtil::FIXED_LINE_OR_MOBILE:
		return "fixed_line_or_mobile";
	case PhoneNumberUtil::TOLL_FREE:		return "toll_free";
	case PhoneNumberUtil::PREMIUM_RATE:		return "premium_rate";
	case PhoneNumberUtil::SHARED_COST:		return "shared_cost";
	case PhoneNumberUtil::VOIP:			return "voip";
	case PhoneNumberUtil::PERSONAL_NUMBER:
		return "personal_number";
	case PhoneNumberUtil::PAGER:			return "pager";
	case PhoneNumberUtil::UAN:			return "uan";
	case PhoneNumberUtil::VOICEMAIL:		return "voicemail";
	default:					return "unknown";
	}
}

/* "+39 (IT)", "+1 (US and others)": the country code and its regions. */
static std::string
plan(const PhoneNumberUtil *u, int cc)
{
	std::list<std::string> regions;
	std::string s = "+" + std::to_string(cc);

	u->GetRegionCodesForCountryCallingCode(cc, &regions);
	if (regions.empty())
		return s;
	s += " (" + regions.front();
	if (regions.size() > 1)
		s += " and others";
	return s + ")";
}

/* Why the number n, which no plan has, is refused. */
static std::string
refusal(const PhoneNumberUtil *u, const PhoneNumber &n)
{
	int cc = n.country_code();

	switch (u->IsPossibleNumberWithReason(n)) {
	case PhoneNumberUtil::INVALID_COUNTRY_CODE:
		return "+" + std::to_string(cc) + " is no country's code";
	case PhoneNumberUtil::TOO_SHORT:
		return "too short for the plan of " + plan(u, cc);
	case PhoneNumberUtil::TOO_LONG:
		return "too long for the plan of " + plan(u, cc);
	case PhoneNumberUtil::INVALID_LENGTH:
		return "no number in the plan of " + plan(u, cc) +
		    " has that many digits";
	default:
		return "no number in the plan of " + plan(u, cc) +
		    " starts so";
	}
}

/*
 * The number at e164 ('+' and digits: records/phone.c) in *n, built
 * from its digits rather than parsed, which is most of the cost: the
 * country code is the prefix of 1 to 3 digits that some region has (no
 * code is a prefix of another), the rest is the national number, its
 * leading zeros kept apart as libphonenumber keeps them. 0, or -1.
 */
static int
build(const PhoneNumberUtil *u, const char *e164, PhoneNumber *n)
{
	const char *d = e164 + 1, *p;
	std::string region;
	int cc = 0, k, zeros;

	for (k = 0; k < 3 && d[k] != '\0'; k++) {
		cc = cc * 10 + (d[k] - '0');
		u->GetRegionCodeForCountryCode(cc, &region);
		if (region != "ZZ")
			break;
	}
	if (k == 3 || d[k] == '\0' || d[k + 1] == '\0' || d[k + 2] == '\0')
		return -1;
	for (p = d + k + 1, zeros = 0; p[zeros] == '0' && p[zeros + 1] != '\0';
	    zeros++)
		;
	n->set_country_code(cc);
	n->set_national_number(std::stoull(p));
	if (zeros > 0)
		n->set_italian_leading_zero(true);
	if (zeros > 1)
		n->set_number_of_leading_zeros(zeros);
	return 0;
}

/*
 * Why e164, which no plan has, is refused: how libphonenumber reads it
 * when it parses it (a trunk 0 after the country code dropped, which
 * the plan may take).
 */
static void
refuse(const PhoneNumberUtil *u, const char *e164, std::string *why)
{
	PhoneNumber n;
	std::string again;

	switch (u->Parse(e164, "ZZ", &n)) {
	case PhoneNumberUtil::NO_PARSING_ERROR:
		break;
	case PhoneNumberUtil::INVALID_COUNTRY_CODE_ERROR:
		*why = "no country's code starts it";
		return;
	default:
		*why = "no plan has a number of that length";
		return;
	}
	u->Format(n, PhoneNumberUtil::E164, &again);
	if (again != e164 && u->IsValidNumber(n))
		*why = "its plan writes it " + again;
	else
		*why = refusal(u, n);
}

static int
check(const char *e164, struct wa_numplan *np, int flags, std::string *why)
{
	static const PhoneNumberUtil *u = PhoneNumberUtil::GetInstance();
	PhoneNumber n;
	std::string region;

	if (build(u, e164, &n) == 0) {
		u->GetRegionCodeForNumber(n, &region);
		if (region != "ZZ" && region.size() < sizeof np->region &&
		    u->IsValidNumberForRegion(n, region)) {
			snprintf(np->region, sizeof np->region, "%s",
			    region.c_str());
			np->type = flags & WA_NUMPLAN_TYPE ?
			    type_name(u->GetNumberType(n)) : NULL;
			return 0;
		}
	}
	refuse(u, e164, why);
	return -1;
}

extern "C" int
wa_numplan_check(const char *e164, struct wa_numplan *np, int flags,
    char *why, size_t size)
{
	std::string w;

	try {
		if (check(e164, np, flags, &w) == 0)
			return 0;
		snprintf(why, size, "%s", w.c_str());
	} catch (...) {
		snprintf(why, size, "libphonenumber failed on it");
	}
	return -1;
}
