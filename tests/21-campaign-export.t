#!/bin/sh
# wa-campaign export: every column in CSV and NDJSON, --status, --code,
# bad options; Postgres stopped in the middle of a large export (69, a
# clear message, the output cut short) and a reader that goes away (74).
. "$(dirname "$0")/lib.sh"
pg_start

c=$(campaign 5)
# Row n: status, attempt, wamid, error, a title with a comma, a quote and
# a line break, a parameter with a backslash and a quote.
sql "update campaign_recipients r set status = v.status,
    attempt = v.attempt, wamid = v.wamid, error_code = v.code,
    error_class = v.class, error_title = v.title,
    status_at = '2026-01-02 03:04:05+00',
    template_params = v.params::jsonb
    from (values
	(1, 'sent', 1, 'wamid.1', null, null, null, '[\"a\"]'),
	(2, 'failed', 2, null, 131026, 'permanent',
	    'Message undeliverable, \"really\"' || E'\n' || 'twice',
	    '[\"back\\\\slash\", \"q\\\"uote\"]'),
	(3, 'failed', 1, null, 131049, 'permanent', 'Marketing cap', '[]'),
	(4, 'unknown', 1, null, null, 'ambiguous',
	    'Timeout was reached (curl 28): the request may have arrived',
	    '[]'))
	as v(n, status, attempt, wamid, code, class, title, params)
    where r.campaign_id = $c and r.phone = '+1555' || lpad(v.n::text, 7, '0')"

wa-campaign export "$c" >"$T/all.csv" 2>"$T/err"
is "$?" 0 "export exits 0"
is "$(cat "$T/err")" "" "nothing on stderr"
is "$(head -1 "$T/all.csv")" \
    "phone,status,attempts,wamid,error_code,error_class,error_title,error_at,status_at,params" \
    "CSV: a header line naming the columns"
is "$(wc -l <"$T/all.csv" | tr -d ' ')" 6 "one line per recipient, in all"
is "$(sed -n 2p "$T/all.csv")" \
    '+15550000001,sent,1,wamid.1,,,,,2026-01-02T03:04:05Z,"[""a""]"' \
    "a sent row: its wamid, no error, its status time, its params"
is "$(sed -n 3p "$T/all.csv")" \
    '+15550000002,failed,2,,131026,permanent,"Message undeliverable, ""really"" twice",2026-01-02T03:04:05Z,2026-01-02T03:04:05Z,"[""back\\slash"", ""q\""uote""]"' \
    "a failed row: the error's code, class, title (one line) and time"
is "$(sed -n 6p "$T/all.csv")" '+15550000005,pending,0,,,,,,,"[""p5""]"' \
    "a row never tried: empty fields"

wa-campaign export --format ndjson "$c" >"$T/all.ndjson"
is "$?" 0 "--format ndjson exits 0"
is "$(jq -c . "$T/all.ndjson" | wc -l | tr -d ' ')" 5 \
    "NDJSON: one valid object per line, no header"
is "$(sed -n 2p "$T/all.ndjson" | jq -c .)" \
    '{"phone":"+15550000002","status":"failed","attempts":2,"wamid":null,"error_code":131026,"error_class":"permanent","error_title":"Message undeliverable, \"really\"\ntwice","error_at":"2026-01-02T03:04:05Z","status_at":"2026-01-02T03:04:05Z","params":["back\\slash","q\"uote"]}' \
    "every field, typed; the title and params exactly as stored"

is "$(wa-campaign export --status failed "$c" | cut -d, -f1 | tr '\n' ' ')" \
    "phone +15550000002 +15550000003 " "--status failed: only those rows"
is "$(wa-campaign export --status failed --code 131049 --format ndjson \
    "$c" | jq -r .phone)" "+15550000003" "--code with --status"
is "$(wa-campaign export --status delivered "$c")" \
    "phone,status,attempts,wamid,error_code,error_class,error_title,error_at,status_at,params" \
    "no row matches: the header only"
exits 64 "a bad --status" wa-campaign export --status sending2 "$c" \
    2>"$T/err"
like "$(cat "$T/err")" "--status is pending, sending" "says which"
exits 64 "a bad --code" wa-campaign export --code 12x "$c" 2>/dev/null
exits 64 "a bad --format" wa-campaign export --format xml "$c" 2>"$T/err"
like "$(cat "$T/err")" "--format is csv or ndjson, not 'xml'" "says so"
exits 64 "an unknown campaign" wa-campaign export 999999 2>"$T/err"
like "$(cat "$T/err")" "no campaign 999999" "says so"
exits 64 "export takes no --class" wa-campaign export --class outage "$c" \
    2>/dev/null
exits 64 "no campaign id" wa-campaign export 2>/dev/null

# A reader that goes away: 74 and a message, not a death by SIGPIPE.
big=$(campaign 200000)
{ wa-campaign export "$big" 2>"$T/err"; echo $? >"$T/rc"; } | head -2 \
    >"$T/head"
is "$(cat "$T/rc")" 74 "stdout closed under it: exit 74"
like "$(cat "$T/err")" "write to stdout: Broken pipe" "says so"
is "$(wc -l <"$T/head" | tr -d ' ')" 2 "the reader had its lines"

# SIGTERM in the middle ends it, as any reader.
mkfifo "$T/fifo0"
wa-campaign export "$big" >"$T/fifo0" 2>"$T/err" &
pid=$!
t_pids="$t_pids $pid"
exec 3<"$T/fifo0"
IFS= read -r first <&3
is "$first" "phone,status,attempts,wamid,error_code,error_class,error_title,error_at,status_at,params" \
    "the export starts"
kill -TERM "$pid"
wait "$pid"
is "$?" 143 "SIGTERM ends an export at once (128 + 15)"
exec 3<&-

# Postgres stopped in the middle: the export blocks on a fifo nobody
# reads yet; the server goes; the rest is read; 69 and the count.
mkfifo "$T/fifo"
wa-campaign export --format ndjson "$big" >"$T/fifo" 2>"$T/err" &
pid=$!
t_pids="$t_pids $pid"
exec 3<"$T/fifo"
IFS= read -r first <&3
like "$first" '^\{"phone":"\+1555' "the export streams"
pg_stop
cat <&3 >"$T/rest"
exec 3<&-
wait "$pid"
is "$?" 69 "Postgres stopped during the export: exit 69"
like "$(cat "$T/err")" \
    "export of campaign $big cut short after [0-9]+ rows: the output is incomplete" \
    "says the output is incomplete, and after how many rows"
n=$(($(wc -l <"$T/rest") + 1))
ok "fewer rows than the campaign has ($n)" test "$n" -lt 200000
said=$(sed -n 's/.*after \([0-9]*\) rows.*/\1/p' "$T/err")
ok "at least as many rows as it says went out ($said, $n)" \
    test "$n" -ge "$said"
exits 69 "Postgres down: 69" wa-campaign export "$c" 2>"$T/err" >/dev/null
like "$(cat "$T/err")" "connect to postgres" "says so"
pg_resume

# Round trips: an NDJSON export imports as the same recipients and
# parameters, plain or with components; export's CSV is refused, saying
# why, and imports nothing.
src=$(wa-campaign create --name src --phone-number-id 106540352242922 \
    --template t)
wa-campaign import "$src" - <<'EOF' 2>/dev/null
{"phone":"+12015550101","params":["Ann","a, \"b\""]}
{"phone":"+12015550102","components":[{"type":"body","parameters":[{"type":"text","text":"x"}]}],"params":["y"]}
{"phone":"+12015550103"}
EOF
rows() {
	sql "select phone, template_params::text from campaign_recipients
	    where campaign_id = $1 order by phone"
}
dst=$(wa-campaign create --name dst --phone-number-id 106540352242922 \
    --template t)
wa-campaign export --format ndjson "$src" | wa-campaign import "$dst" - \
    2>"$T/err"
is "$?" 0 "an NDJSON export imports: 0"
is "$(rows "$dst")" "$(rows "$src")" "... as the same recipients and params"
is "$(rows "$src" | wc -l | tr -d ' ')" 3 "(all three of them)"
csv=$(wa-campaign create --name csv --phone-number-id 106540352242922 \
    --template t)
wa-campaign export "$src" | wa-campaign import "$csv" - 2>"$T/err"
is "$?" 65 "export's CSV piped into import: 65"
like "$(cat "$T/err")" "export's CSV.*--format ndjson" "and says what to do"
is "$(rows "$csv")" "" "nothing imported"

done_testing
