#!/bin/sh
# The one error table (lib/api/class.c) walked row by row: its order, the
# rows the research pins down (the sender wrong halts, 131049 later 24 h,
# 131048's long pause, ...), and wa-send(1)'s table, which must be the
# C table printed (run this test with -v: a difference shows the lines
# the page should have).
. "$(dirname "$0")/lib.sh"

# The C table as the page's rows, one .It line each, then as TSV: code,
# subcode, class, stops, delay in ms.
cat >"$T/table.c" <<'EOF'
#include <stdio.h>
#include <string.h>

#include "api/class.h"

static void
retry(const struct wa_error *e, char *s, size_t n)
{
	const char *o = wa_class_outcome(e->class);

	if (strcmp(o, "failed") == 0 || strcmp(o, "halt") == 0)
		snprintf(s, n, "\\(em");
	else if (e->delay_ms == 0)
		snprintf(s, n, "backoff");
	else if (e->delay_ms % 3600000 == 0)
		snprintf(s, n, "%lld h", (long long)e->delay_ms / 3600000);
	else if (e->delay_ms % 60000 == 0)
		snprintf(s, n, "%lld min", (long long)e->delay_ms / 60000);
	else
		snprintf(s, n, "%lld s", (long long)e->delay_ms / 1000);
}

int
main(int argc, char **argv)
{
	const struct wa_error *e;
	char code[48], r[32];
	size_t i;

	for (i = 0; i < wa_nerrors; i++) {
		e = &wa_errors[i];
		if (e->lo != e->hi)
			snprintf(code, sizeof code, "%lld\\(en%lld",
			    (long long)e->lo, (long long)e->hi);
		else if (e->subcode >= 0)
			snprintf(code, sizeof code, "%lld/%lld",
			    (long long)e->lo, (long long)e->subcode);
		else
			snprintf(code, sizeof code, "%lld", (long long)e->lo);
		retry(e, r, sizeof r);
		if (argc > 1 && strcmp(argv[1], "tsv") == 0)
			printf("%lld\t%lld\t%lld\t%s\t%s\t%lld\n",
			    (long long)e->lo, (long long)e->hi,
			    (long long)e->subcode, wa_class_name(e->class),
			    wa_class_stops(e->class), (long long)e->delay_ms);
		else
			printf(".It %s Ta %s Ta %s Ta %s Ta %s\n", code,
			    wa_class_name(e->class), wa_class_stops(e->class),
			    r, e->meaning);
	}
	return 0;
}
EOF
${CC:-cc} -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I"$TOP/lib" \
    -o "$T/table" "$T/table.c" "$TOP/lib/api/class.c" 2>"$T/cc.err" ||
    bail "the table's printer did not build: $(cat "$T/cc.err")"
"$T/table" >"$T/rows"
"$T/table" tsv >"$T/tsv"

# The page's rows: from its header row to the end of the list.
awk '/^\.It Sy code Ta Sy class Ta Sy stops Ta Sy retry Ta Sy meaning$/ {
	on = 1; next }
    on && /^\.El/ { exit }
    on' "$TOP/man/wa-send.1" >"$T/page"
ok "wa-send(1) has the error table" test -s "$T/page"
if cmp -s "$T/rows" "$T/page"; then
	ok "wa-send(1)'s table is lib/api/class.c's, row for row" true
else
	ok "wa-send(1)'s table is lib/api/class.c's, row for row" false
	diff "$T/page" "$T/rows" | sed 's/^/#   /' >&7
fi
is "$(wc -l <"$T/rows" | tr -d ' ')" "$(wc -l <"$T/tsv" | tr -d ' ')" \
    "one row for each of the table's $(wc -l <"$T/tsv" | tr -d ' ') entries"

# In order of code; a code's subcode row before its other one (the first
# row that matches wins); ranges that do not overlap.
is "$(awk -F '\t' 'NR > 1 && $1 <= hi && !($1 == lo && $2 == hi &&
    $3 == -1 && sub_ != -1) { print "row " NR ": " $1 }
    { lo = $1; hi = $2; sub_ = $3 }' "$T/tsv")" "" \
    'rows in order of code, a subcode row before the code'"'"'s own'
is "$(awk -F '\t' '$4 ~ /^(sent|ambiguous|outage|unsent)$/ ||
    $6 < 0 || $6 > 86400000 { print $1 }' "$T/tsv")" "" \
    'every class an error class, every delay within a day'

# row CODE [SUBCODE]: class, stops and delay of that row.
row() {
	awk -F '\t' -v c="$1" -v s="${2:--1}" '$1 <= c && c <= $2 &&
	    ($3 == -1 || $3 == s) { print $4, $5, $6; exit }' "$T/tsv"
}
# Errors that say the sender is wrong halt the campaign at the first
# answer (cloud-api-2026.md §3.1): the token, the permissions, the
# account, the number, the template.
for c in 0 3 10 33 100/33 190 200 250 299 368 131005 131031 131037 131042 \
    131045 131063 131064 132000 132001 132007 132015 132016 132068 133010 \
    134011; do
	is "$(row "${c%/*}" "$(echo "$c" | sed -n 's|.*/||p')")" \
	    'fatal campaign 0' "$c halts the campaign"
done
is "$(row 100)" 'permanent recipient 0' '100 without subcode 33 fails the row'
is "$(row 100 2388024)" 'permanent recipient 0' '... and with another subcode'
is "$(row 131049)" 'later recipient 86400000' '131049: later, 24 h'
is "$(row 131048)" 'unavailable number 900000' \
    '131048: the number pauses a quarter of an hour'
is "$(row 131057)" 'unavailable number 60000' '131057: a minute'
is "$(row 2494100)" 'unavailable number 60000' '2494100: a minute, as 131057'
is "$(row 131056)" 'pair_rate recipient 6000' '131056: 6 s, that person'
for c in 131026 131050 131062 132018; do
	is "$(row "$c")" 'permanent recipient 0' "$c fails the row"
done
for c in 4 80007 130429; do
	is "$(row "$c")" 'throughput number 0' "$c: the number's throughput"
done
is "$(row 999999)" '' 'a code not in the table has no row'

done_testing
