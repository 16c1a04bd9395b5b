/*
 * fuzz/fuzz.h: what every harness shares. A harness is one file with
 * LLVMFuzzerTestOneInput; it feeds one parser and checks properties of
 * what the parser accepts, not only that it does not crash: a violated
 * property says what it is on stderr and aborts, so libFuzzer keeps the
 * input (make fuzz; tests/17-fuzz-regress.t replays the corpora).
 */
#ifndef WA_FUZZ_H
#define WA_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "records/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Says which property failed, straight to fd 2, and aborts. */
#define PROP(cond) do {							\
	if (!(cond))							\
		fuzz_fail(__FILE__, __LINE__, #cond);			\
} while (0)

static void __attribute__((noreturn, unused))
fuzz_fail(const char *file, int line, const char *what)
{
	char msg[512];
	int n;

	n = snprintf(msg, sizeof msg, "%s:%d: property violated: %s\n",
	    file, line, what);
	if (n > 0)
		(void)!write(2, msg, (size_t)n < sizeof msg ? (size_t)n :
		    sizeof msg - 1);
	abort();
}

/*
 * The library's messages (wa_warn: a rejected line, a skipped status)
 * go to the FILE stderr; libFuzzer's and the sanitizers' do not. Sent to
 * /dev/null unless WA_FUZZ_VERBOSE is set, so a run's log stays readable.
 */
static void __attribute__((unused))
fuzz_quiet(void)
{
	FILE *f;

	if (getenv("WA_FUZZ_VERBOSE") == NULL &&
	    (f = fopen("/dev/null", "w")) != NULL)
		stderr = f;
}

/*
 * Whether the n bytes at s are one JSON object that the strictest check
 * takes (records/json.h: RFC 8259, UTF-8, no NUL or lone surrogate,
 * numbers in range, at most WA_JSON_DEPTH deep), and parse back.
 */
static int __attribute__((unused))
fuzz_strict(const char *s, size_t n)
{
	static struct json_tokener *tok;
	struct json_object *o;
	char why[256];

	if (!wa_utf8_valid(s, n))
		return 0;
	if (wa_json_check(s, n, WA_JSON_RECORD, WA_JSON_DEPTH, why,
	    sizeof why) < 0) {
		if (getenv("WA_FUZZ_VERBOSE") != NULL)
			dprintf(2, "strict check refuses %.*s: %s\n",
			    (int)(n > 400 ? 400 : n), s, why);
		return 0;
	}
	if (tok == NULL)
		tok = wa_json_tokener();
	if ((o = wa_json_parse(tok, s, n, WA_JSON_RECORD, WA_JSON_DEPTH, why,
	    sizeof why)) == NULL)
		return 0;
	json_object_put(o);
	return 1;
}

/* A NUL-terminated copy of the input (parsers take C strings too). */
static char * __attribute__((unused))
fuzz_copy(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (s == NULL)
		abort();
	if (size > 0)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* The length of the first line of s (n bytes): up to its '\n'. */
static size_t __attribute__((unused))
line_len(const char *s, size_t n)
{
	const char *nl = memchr(s, '\n', n);

	return nl ? (size_t)(nl - s) : n;
}

#endif
