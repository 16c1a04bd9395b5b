#!/bin/sh
# The rules of the road, as wa-claim applies them (the schema's
# wapipe_claim) on every host: a number's messaging limit across its
# campaigns, rolling; suppressed people never messaged, even when added
# after import; expired rows never sent; rows outside their send window
# wait for it to open; an urgent campaign goes first. And what a stop or
# Postgres going away does to a claim held back by them.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake.sh"
pg_start
N=106540352242922

# camp NAME FROM TO [OPTIONS]: a running campaign on $N with the people
# +1555 FROM..TO (7 digits); prints its id.
camp() {
	t_name=$1 t_from=$2 t_to=$3
	shift 3
	wa-campaign create --name "$t_name" --phone-number-id $N \
	    --template reminder "$@" >"$T/cid" || return 1
	sql "insert into campaign_recipients (campaign_id, phone)
	    select $(cat "$T/cid"), '+1555' || lpad(g::text, 7, '0')
	    from generate_series($t_from, $t_to) g" >/dev/null
	wa-campaign start --no-check "$(cat "$T/cid")" 2>/dev/null
	cat "$T/cid"
}
# lines FILE N: FILE has N lines.
lines() {
	[ "$(wc -l <"$1")" -eq "$2" ]
}
count() {
	sql "select count(*) from campaign_recipients where $1"
}

# Messaging limits: 2,000 people, two campaigns of 1,600 on the number.
wa-campaign limit $N 2000 --period 3600 >"$T/out"
is "$?" 0 "limit: set"
is "$(cat "$T/out")" "$N: 2000 people per 1 h; 0 used, 2000 left" \
    "... and shown"
a=$(camp a 10001 11600)
b=$(camp b 11601 13200)
wa-claim -c "$a" --once -n 2000 >"$T/a.out" 2>"$T/a.err"
is "$?" 75 "campaign a: --once leaves rows being sent: 75"
wa-claim -c "$b" --once -n 2000 >"$T/b.out" 2>"$T/b.err"
is "$?" 75 "campaign b: stopped by the limit: 75"
is "$(cat "$T/a.out" "$T/b.out" | jq -r .to | sort -u | wc -l | tr -d ' ')" \
    2000 "exactly 2,000 people claimed in the first period"
is "$(count "status = 'sending'")" 2000 "... and 2,000 rows sending"
like "$(cat "$T/b.err")" "campaign $b: its number has messaged its limit of 2000 people in 3600 s; the next place frees at [0-9T:.Z-]+ \(in 3[56][0-9]{2} s\)" \
    "wa-claim says the limit is reached, and until when"
like "$(wa-campaign limit $N)" "^$N: 2000 people per 1 h; 2000 used, 0 left; the next place frees at $(sql "select to_char(now() at time zone 'UTC' + interval '1 hour', 'YYYY-MM-DD\"T\"HH24')"):[0-9:]{5}Z$" \
    "limit shows used, left and when a place frees"
is "$(wa-campaign status --json "$b" | jq -c .limit)" \
    "{\"max_people\":2000,\"period_s\":3600,\"used\":2000,\"left\":0,\"portfolio\":\"$N\"}" \
    "status --json shows used and left"
like "$(wa-campaign status "$b")" "messaging limit of the number: 2000 people per 1 h; 2000 used, 0 left" \
    "... and status in text"

# Someone already messaged within the period does not count again.
c=$(camp again 10001 10005)
wa-claim -c "$c" --once >"$T/c.out" 2>/dev/null
is "$(wc -l <"$T/c.out" | tr -d ' ')" 5 \
    "people messaged within the period go again, the limit spent or not"

# The period rolls: a waiting wa-claim goes on by itself. (A shorter
# period rolls it at once: the same as an hour passing.)
bg wa-claim -c "$b" -n 1000 --poll-ms 50 >"$T/b2.out" 2>"$T/b2.err"
claimer=$!
wait_for 30 grep -q "its number has messaged its limit" "$T/b2.err"
ok "a running wa-claim waits at the limit, saying so" test "$?" = 0
wa-campaign limit $N 2000 --period 1 >/dev/null
wait_for 60 lines "$T/b2.out" 1200
ok "when the period rolls, it claims the rest: 1,200" test "$?" = 0
kill -TERM "$claimer"
wait "$claimer"
is "$?" 75 "SIGTERM while waiting: 75"
is "$(count "campaign_id = $b and status = 'pending'")" 0 \
    "... nothing left pending"

# A real roll, with a short period: never more than the limit of people
# in any period, and all claimed in the end.
wa-campaign limit $N 250 --period 2 >/dev/null
d=$(camp roll 2001 2300)
bg wa-claim -c "$d" -n 1000 --poll-ms 50 >"$T/d.out" 2>"$T/d.err"
claimer=$!
wait_for 60 lines "$T/d.out" 300
ok "250 per 2 s: all 300 claimed as the period rolls" test "$?" = 0
kill -TERM "$claimer"
wait "$claimer"
is "$(sql "select max(n) from (select count(*) over (order by claimed_at
    range between interval '1999 milliseconds' preceding and current row)
    as n from campaign_recipients where campaign_id = $d) x")" 250 \
    "never more than 250 people in any 2 s"
like "$(cat "$T/d.err")" "limit of 250 people in 2 s" "it said it waited"
wa-campaign limit $N unlimited >"$T/out"
is "$(cat "$T/out")" "$N: unlimited" "unlimited: shown so"
is "$(sql "select count(*) from limit_contacts")" 0 \
    "... and the contacts kept for the limit dropped"
exits 64 "a tier Meta does not have is refused" wa-campaign limit $N 500 2>/dev/null
exits 64 "... nor one it no longer has (1,000: gone since October 2025)" \
    wa-campaign limit $N 1000 2>/dev/null
exits 64 "a number id that is not one is refused" \
    wa-campaign limit --portfolio p +3912 2>/dev/null
exits 64 "a portfolio name that is not one is refused" \
    wa-campaign limit 'a b' 2000 2>/dev/null

# Suppressions: by number and for the whole business; added after import.
e=$(camp supp 3001 3010)
wa-campaign suppress add --phone-number-id $N --reason "asked by phone" \
    +15550003001 "+1 555 000 3002" >"$T/out"
is "$(cat "$T/out")" 2 "suppress add: 2 added"
wa-campaign suppress add +15550003003 >/dev/null
printf 'phone\n+15550003004\nnope\n' >"$T/list.csv"
wa-campaign suppress import --phone-number-id 999 --reject "$T/rej" \
    "$T/list.csv" >"$T/out" 2>"$T/err"
is "$?" 65 "suppress import with a bad line: 65"
is "$(cat "$T/out")" 1 "... the good ones added"
like "$(cat "$T/err")" "list.csv:3: phone 'nope'" "... the bad one named by line"
is "$(tail -1 "$T/rej")" nope "... and kept in --reject"
is "$(wa-campaign suppress list | cut -f1,2,4 | tr '\t\n' ': ')" \
    "$N:+15550003001:asked by phone $N:+15550003002:asked by phone 999:+15550003004:by hand business:+15550003003:by hand " \
    "suppress list: scope, phone, reason"
is "$(wa-campaign suppress list --json --phone-number-id 999 | jq -r .phone)" \
    +15550003004 "suppress list --json, by number"
fake_start --rate 0
wa-claim -c "$e" 2>/dev/null | wa-throttle -r 1000 | wa-send |
    wa-record >/dev/null 2>&1
is "$(count "campaign_id = $e and status = 'suppressed'")" 3 \
    "the number's and the business's suppressed people end suppressed"
is "$(jq -r .to "$FAKE_LOG" | grep -c -e 3001 -e 3002 -e 3003)" 0 \
    "... and the API never saw them"
is "$(count "campaign_id = $e and status = 'sent'")" 7 "the others are sent"
is "$(wa-campaign status --json "$e" | jq .counts.suppressed)" 3 \
    "status counts them"
is "$(wa-campaign export --status suppressed "$e" | tail -n +2 | cut -d, -f1 |
    tr '\n' ' ')" "+15550003001 +15550003002 +15550003003 " \
    "export --status suppressed"
wa-campaign suppress remove +15550003003 >"$T/out"
is "$(cat "$T/out")" 1 "suppress remove: 1 removed"
exits 64 "suppress with a verb it has not" wa-campaign suppress drop 1 2>/dev/null

# Error 131050 (the person stopped marketing messages) suppresses them
# for the number, whoever records it.
f=$(camp optout 4001 4002)
sql "update campaign_recipients set status = 'failed', error_code = 131050
    where campaign_id = $f and phone = '+15550004001'" >/dev/null
is "$(sql "select reason from suppressions where phone = '+15550004001'")" \
    "error 131050: opted out" "131050 puts the person on the number's list"

# Expiry: the campaign's and a row's own.
g=$(camp exp 5001 5004)
sql "update campaign_recipients set expires_at = now() - interval '1 s'
    where campaign_id = $g and phone = '+15550005001'" >/dev/null
wa-claim -c "$g" --once >"$T/g.out" 2>/dev/null
is "$(count "campaign_id = $g and status = 'expired'")" 1 \
    "a row past its expiry ends expired"
is "$(grep -c 5001 "$T/g.out")" 0 "... and is not sent"
h=$(camp exp2 5101 5103 --expires-at "2999-01-01T00:00:00Z")
sql "update campaigns set expires_at = now() - interval '1 s'
    where id = $h" >/dev/null
wa-claim -c "$h" >/dev/null 2>&1
is "$?" 0 "a campaign past its expiry: wa-claim completes it"
is "$(count "campaign_id = $h and status = 'expired'")" 3 "... every row expired"
is "$(sql "select state from campaigns where id = $h")" completed \
    "... and the campaign completed"

# Send windows: a window closed now holds the rows until it opens, in
# the recipient's zone.
now=$(sql "select to_char(now() at time zone 'Asia/Tokyo', 'HH24:MI')")
shut=$(sql "select to_char((now() + interval '2 hours') at time zone
    'Asia/Tokyo', 'HH24:MI') || '-' || to_char((now() + interval '3 hours')
    at time zone 'Asia/Tokyo', 'HH24:MI')")
w=$(camp win 6001 6003 --window "$shut" --tz Asia/Tokyo)
wa-claim -c "$w" --once >"$T/w.out" 2>"$T/w.err"
is "$(wc -c <"$T/w.out" | tr -d ' ')" 0 "outside its window: nothing claimed"
is "$(sql "select count(*) from campaign_recipients where campaign_id = $w
    and status = 'pending' and to_char(next_attempt_at at time zone
    'Asia/Tokyo', 'HH24:MI') = split_part('$shut', '-', 1)")" 3 \
    "... each row waits for the window to open, in the recipient's zone"
like "$(cat "$T/w.err")" "waiting for retries \(or a send window\); the next is due at .* \(in [0-9]+ s\)" \
    "wa-claim says when"
open=$(sql "select to_char((now() - interval '1 hour') at time zone
    'Asia/Tokyo', 'HH24:MI') || '-' || to_char((now() + interval '1 hour')
    at time zone 'Asia/Tokyo', 'HH24:MI')")
sql "update campaign_recipients set tz = 'Asia/Tokyo' where phone = '+15550006004'" >/dev/null
w2=$(camp win2 6004 6005 --window "$open" --tz Pacific/Kiritimati)
sql "update campaign_recipients set tz = 'Asia/Tokyo'
    where campaign_id = $w2 and phone = '+15550006004'" >/dev/null
wa-claim -c "$w2" --once >"$T/w2.out" 2>/dev/null
is "$(jq -r .to "$T/w2.out")" +15550006004 \
    "a row's own zone comes first; the campaign's is for the others ($now in Tokyo)"

# Priority: a normal campaign waits while an urgent one has rows due.
wa-campaign limit $N unlimited >/dev/null
u=$(camp urgent 7001 7003 --priority urgent)
v=$(camp news 7101 7103)
wa-claim -c "$v" --once >"$T/v.out" 2>"$T/v.err"
is "$(wc -c <"$T/v.out" | tr -d ' ')" 0 "an urgent campaign has rows: the other claims none"
like "$(cat "$T/v.err")" "campaign $v: waits while urgent campaign $u on its number has rows to send" \
    "... saying why"
wa-claim -c "$u" --once >/dev/null 2>&1
wa-claim -c "$v" --once >"$T/v.out" 2>/dev/null
is "$(wc -l <"$T/v.out" | tr -d ' ')" 3 "the urgent one's rows claimed: the other goes on"

# Settings: checked, shown, changed.
exits 64 "a bad window" wa-campaign create --name x \
    --phone-number-id $N --template t --window 9-17 2>/dev/null
exits 64 "a bad zone" wa-campaign create --name x \
    --phone-number-id $N --template t --tz Mars/Olympus 2>/dev/null
exits 64 "a bad expiry" wa-campaign create --name x \
    --phone-number-id $N --template t --expires-at tomorrowish 2>/dev/null
for e in tomorrow infinity 2999-12-24 "2999-12-24 18:00" \
    2999-12-24T18:00:00; do
	exits 64 "an expiry not RFC 3339: $e" wa-campaign create --name x \
	    --phone-number-id $N --template t --expires-at "$e" 2>/dev/null
done
wa-campaign create --name x --phone-number-id $N --template t \
    --expires-at 2020-12-24T18:00:00Z 2>"$T/err"
is "$?" 64 "an expiry in the past (a year's typo): 64"
like "$(cat "$T/err")" "--expires-at 2020-12-24T18:00:00Z is past" \
    "and says so"
exits 64 "a bad priority" wa-campaign create --name x \
    --phone-number-id $N --template t --priority high 2>/dev/null
is "$(sql "select count(*) from campaigns where name = 'x'")" 0 \
    "a refused create leaves no campaign"
wa-campaign pause "$v" >/dev/null 2>&1
wa-campaign set --weight 3 --window 08:00-21:00 --tz Europe/Rome "$v" \
    2>"$T/err"
is "$?" 0 "set: the rules of a paused campaign"
is "$(wa-campaign status --json "$v" | jq -c '[.weight, .window, .tz]')" \
    '[3,"08:00-21:00","Europe/Rome"]' "... shown by status"
wa-campaign set --window none --tz none "$v" 2>/dev/null
is "$(wa-campaign status --json "$v" | jq -c '[.window, .tz]')" '[null,null]' \
    "none clears them"

# Postgres away while a claim waits at the limit: it waits for it (its
# --pg-timeout), then goes on; nothing is lost.
wa-campaign limit $N 250 --period 3600 >/dev/null
k=$(camp pgdown 8001 8300)
bg wa-claim -c "$k" -n 1000 --poll-ms 50 >"$T/k.out" 2>"$T/k.err"
claimer=$!
wait_for 30 grep -q "its number has messaged its limit" "$T/k.err"
# The tests' Postgres commits without waiting for the disk (lib.sh): a
# crash could lose the claims just made, which a durable one keeps.
sql checkpoint >/dev/null
pg_stop
pg_resume
wa-campaign limit $N 250 --period 1 >/dev/null
wait_for 60 lines "$T/k.out" 300
ok "Postgres restarted under a waiting claim: it claims the rest" test "$?" = 0
kill -INT "$claimer"
wait "$claimer"
is "$?" 75 "SIGINT: 75"
is "$(count "campaign_id = $k and status = 'sending'")" 300 \
    "each row claimed once, none lost"
# A list saved with a byte order mark and CRLF, as a spreadsheet saves
# it: the first number is not lost, nor a one-column header.
printf '\357\273\277+15550007001\r\n+15550007002\r\n' >"$T/bom.txt"
wa-campaign suppress import --phone-number-id 998 "$T/bom.txt" \
    >"$T/out" 2>"$T/err"
is "$?:$(cat "$T/out")" "0:2" "a BOM before the first number: both added"
printf '\357\273\277phone\r\n+15550007003\r\n' >"$T/bom.csv"
wa-campaign suppress import --phone-number-id 998 "$T/bom.csv" \
    >"$T/out" 2>"$T/err"
is "$?:$(cat "$T/out")" "0:1" "a BOM before a phone header: the header read"
is "$(wa-campaign suppress list --json --phone-number-id 998 |
    jq -r .phone | tr '\n' ' ')" "+15550007001 +15550007002 +15550007003 " \
    "the three are suppressed"

# Zones said out loud: a number of a country with several zones
# (Australia) takes the campaign's; import says how many when there is a
# window, and status shows it.
z=$(wa-campaign create --name zones --phone-number-id $N --template t \
    --window 09:00-10:00 --tz America/New_York)
printf 'phone\n+61 412 345 678\n+39 347 123 4567\n' |
    wa-campaign import "$z" - 2>"$T/err"
is "$?" 0 "an import of an Australian and an Italian number: 0"
like "$(cat "$T/err")" "campaign $z: 1 of the rows imported have no time zone of their own \\(their country has several\\): its window is read in America/New_York" \
    "import says how many take the campaign's zone"
is "$(wa-campaign status --json "$z" | jq .without_zone)" 1 \
    "status --json: without_zone"
like "$(wa-campaign status "$z")" "else America/New_York, for 1 rows whose country has several zones" \
    "status says it beside the window"
y=$(wa-campaign create --name nowin --phone-number-id $N --template t)
printf 'phone\n+61 412 345 679\n' | wa-campaign import "$y" - 2>"$T/err"
is "$(grep -c 'no time zone' "$T/err")" 0 "without a window, zones do not matter: nothing said"

done_testing
