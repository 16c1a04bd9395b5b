#!/bin/sh
# The units under a real systemd. systemd boots as PID 1 of new pid,
# mount, network, uts and ipc namespaces, its root an overlay of / on a
# tmpfs, so that nothing it does reaches the machine (a kill -9 of that
# PID 1 ends it all). Inside: dpkg -i the package; wa-webhook runs
# sandboxed as wapipe, its secrets as credentials and nowhere else,
# answers the handshake and spools a signed body; wa-status-ingest
# applies it to the Debian Postgres cluster; wa-reconcile runs from its
# unit and its timer is due; a campaign unit ends as its program does and
# is not restarted on a usage error; stopped mid-campaign, wa-campaign
# run in it drains its pipeline and exits 75; wapipe-due runs the
# campaign whose time has come.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip_all "booting systemd in namespaces needs root"
for c in unshare nsenter pivot_root dpkg-deb lintian; do
	command -v "$c" >/dev/null || skip_all "no $c"
done
[ -x /lib/systemd/systemd ] || skip_all "no systemd (Debian package systemd)"
grep -qw overlay /proc/filesystems || skip_all "no overlayfs in this kernel"
if ldd "$WA_BIN/wa-claim" 2>/dev/null | grep -q 'libasan'; then
	skip_all "the package does not depend on WA_BIN: tested in the plain run"
fi
PGVER=$(ls /etc/postgresql 2>/dev/null | sort -n | tail -1)
[ -n "$PGVER" ] && [ -d "/etc/postgresql/$PGVER/main" ] ||
    skip_all "no Debian Postgres cluster (postgresql's main) to run on"

# The machine is the overlay's lower layer: tests/95-package.t must not
# install wapipe on it meanwhile (the same lock), nor may it have one.
exec 9>/run/lock/wapipe-package-test.lock
flock 9
[ -e /usr/bin/wa-webhook ] || [ -e /etc/wapipe ] &&
    skip_all "wapipe is installed on this machine: the test wants it bare"

VERSION=$(sed -n 's/^VERSION = //p' "$TOP/Makefile")
MKDEB_DIR=$T/build MKDEB_OUT=$T make -s -C "$TOP" deb >"$T/make.out" 2>&1 ||
    bail "make deb failed: $(tail -5 "$T/make.out")"
DEB=$(ls "$T"/wapipe_"$VERSION"_*.deb)

# Boot. The overlay's lower layer is /; its writes go to a tmpfs mounted
# in the new mount namespace, gone with it.
cat >"$T/boot.sh" <<EOF
set -e
mount -t tmpfs tmpfs "$T/sd"
mkdir "$T/sd/upper" "$T/sd/work" "$T/sd/root"
mount -t overlay overlay -o \
    lowerdir=/,upperdir="$T/sd/upper",workdir="$T/sd/work" "$T/sd/root"
cd "$T/sd/root"
mount -t proc proc proc
mount --rbind /sys sys
mount --rbind /dev dev
mount -t tmpfs -o mode=0755 tmpfs run
mkdir -p oldroot
pivot_root . oldroot
umount -l /oldroot
mount --make-rshared /
exec /usr/bin/env -i container=wapipe-test /lib/systemd/systemd --system \
    --unit=basic.target
EOF
mkdir "$T/sd"
bg unshare --pid --fork --kill-child --mount --net --uts --ipc \
    --propagation private sh "$T/boot.sh" >"$T/boot.out" 2>&1
ush=$!
# A machine that cannot do this (no CAP_SYS_ADMIN, say) skips the test:
# nothing of ours has run yet.
wait_for 10 pgrep -P "$ush" >/dev/null ||
    skip_all "cannot boot systemd in namespaces here: $(cat "$T/boot.out")"
sd=$(pgrep -P "$ush")
stop_systemd() {
	kill -9 "$sd" 2>/dev/null
	wait "$ush" 2>/dev/null
}
trap 'stop_systemd; t_cleanup' EXIT

# X COMMAND...: runs COMMAND inside.
X() {
	nsenter -t "$sd" -a -r -w "$@"
}
booted() {
	s=$(X systemctl is-system-running 2>/dev/null)
	[ "$s" = running ] || [ "$s" = degraded ]
}
wait_for 60 booted || skip_all "systemd did not boot in namespaces here: \
$(X systemctl is-system-running 2>&1) $(cat "$T/boot.out")"
ok "systemd runs inside, as PID 1" test "$(X cat /proc/1/comm)" = systemd
ok "and the machine has no /usr/bin/wa-webhook" test ! -e /usr/bin/wa-webhook

# Its /tmp is emptied at boot (tmpfiles.d): the package goes in by a pipe.
X sh -c 'cat >/root/wapipe.deb' <"$DEB"
X dpkg -i /root/wapipe.deb >"$T/dpkg.out" 2>&1
is "$?" 0 "dpkg -i inside"
out=$(grep -i -E 'error|warn' "$T/dpkg.out")
[ -n "$out" ] && note "$out"
is "$(X stat -c '%U %a' /run/wapipe /var/spool/wapipe | tr '\n' ' ')" \
    "wapipe 750 wapipe 750 " "the directories, made for wapipe"
X sh -c 'umask 077; echo app-secret-svc >/etc/wapipe/app-secret;
    echo verify-svc >/etc/wapipe/verify-token; echo token-svc >/etc/wapipe/token'

# wa-webhook.
exits 0 "systemctl start wa-webhook" X systemctl start wa-webhook
up() {
	X curl -s -o /dev/null http://127.0.0.1:8080/ 2>/dev/null
}
wait_for 20 up
is "$(X curl -s 'http://127.0.0.1:8080/whatsapp/webhook?hub.mode=subscribe&hub.verify_token=verify-svc&hub.challenge=31337')" \
    31337 "the handshake, with the verify token from its credential"
body='{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"value":{"statuses":[{"id":"wamid.SVC1","status":"delivered","timestamp":"1750030073","recipient_id":"15550000001"}]},"field":"messages"}]}]}'
sig=$(printf %s "$body" | openssl dgst -sha256 -hmac app-secret-svc |
    sed 's/^.*= */sha256=/')
is "$(X curl -s -o /dev/null -w '%{http_code}' \
    -H "X-Hub-Signature-256: $sig" --data-binary "$body" \
    http://127.0.0.1:8080/whatsapp/webhook)" 200 \
    "a body signed with the app secret from its credential: 200"
like "$(X sh -c 'cat /var/spool/wapipe/*.ndjson')" 'wamid.SVC1' \
    "spooled in /var/spool/wapipe"
pid=$(X systemctl show -p MainPID --value wa-webhook)
is "$(X ps -o user= -p "$pid")" wapipe "wa-webhook runs as wapipe"
out=$(X cat "/proc/$pid/environ" | tr '\0' '\n' |
    grep -E 'svc|^WA_(APP_SECRET|VERIFY_TOKEN|TOKEN)=')
is "$out" "" "no secret in its environment"
out=$(X cat "/proc/$pid/cmdline" | tr '\0' ' ')
is "$out" "/usr/bin/wa-webhook --spool /var/spool/wapipe --listen 127.0.0.1:8080 " \
    "nor in its command line"
is "$(X sh -c "grep -E '^(NoNewPrivs|CapEff|Seccomp):' /proc/$pid/status |
    tr -s '\t' ' ' | tr '\n' ' '")" \
    "CapEff: 0000000000000000 NoNewPrivs: 1 Seccomp: 2 " \
    "sandboxed: no new privileges, no capabilities, a syscall filter"
like "$(X nsenter -t "$pid" -m touch /usr/share/wapipe/x 2>&1)" \
    'Read-only file system' "its view of /usr is read-only"
exits 0 "but not of the spool" X nsenter -t "$pid" -m \
    touch /var/spool/wapipe/probe

# Postgres (the Debian cluster, inside), wa-status-ingest, wa-reconcile.
exits 0 "Postgres $PGVER starts inside" \
    X systemctl start "postgresql@$PGVER-main"
X runuser -u postgres -- createuser wapipe
X runuser -u postgres -- createdb -O wapipe wapipe
psqlw() {
	X runuser -u wapipe -- psql -X -q -At -v ON_ERROR_STOP=1 "$@"
}
exits 0 "the schema loads as wapipe" \
    psqlw -f /usr/share/wapipe/schema.sql >/dev/null
cid=$(psqlw -c "insert into campaigns (name, phone_number_id,
    template_name, state) values ('svc', '106540352242922', 'reminder',
    'running') returning id")
psqlw -c "insert into campaign_recipients (campaign_id, phone,
    template_params, status, attempt, wamid) values ($cid, '+15550000001',
    '[]', 'sent', 1, 'wamid.SVC1')"
exits 0 "systemctl start wa-status-ingest" X systemctl start wa-status-ingest
delivered() {
	[ "$(psqlw -c "select status from campaign_recipients
	    where wamid = 'wamid.SVC1'")" = delivered ]
}
ok "wa-status-ingest applies the spooled status" wait_for 30 delivered
exits 0 "wa-reconcile.service runs" X systemctl start wa-reconcile.service
is "$(X systemctl show -p Result --value wa-reconcile.service)" success \
    "and succeeds"
X systemctl enable --now wa-reconcile.timer >/dev/null 2>&1
like "$(X systemctl list-timers --no-pager wa-reconcile.timer)" \
    'wa-reconcile.timer +wa-reconcile.service' "the timer is due"

# A campaign unit. Without wa-campaign run (another issue's) it exits 64,
# a usage error, and is not restarted; with it, a campaign runs to its
# end against wa-fake-api, checked first in the fake's own WABA (as
# wapipe.conf's WA_WABA_ID would say).
X systemd-run -q -u fakeapi /usr/bin/wa-fake-api --any-token \
    --listen 127.0.0.1:8088 --latency-ms 50
X mkdir -p /etc/systemd/system/wapipe-campaign@.service.d
X sh -c 'cat >/etc/systemd/system/wapipe-campaign@.service.d/fake.conf' <<EOF
[Service]
Environment=WA_API_BASE=http://127.0.0.1:8088/v21.0
Environment=WA_WABA_ID=102290129340398
EOF
X systemctl daemon-reload
cid=$(psqlw -c "insert into campaigns (name, phone_number_id,
    template_name, state) values ('unit', '106540352242922', 'reminder',
    'running') returning id")
psqlw -c "insert into campaign_recipients (campaign_id, phone,
    template_params) select $cid, '+1777' || lpad(g::text, 7, '0'),
    jsonb_build_array('p' || g) from generate_series(1, 50) g"
X systemctl start "wapipe-campaign@$cid"
ended() {
	s=$(X systemctl show -p ActiveState --value "wapipe-campaign@$cid")
	[ "$s" = inactive ] || [ "$s" = failed ]
}
ok "wapipe-campaign@$cid ends" wait_for 120 ended
st=$(X systemctl show -p ExecMainStatus --value "wapipe-campaign@$cid")
if wa-campaign --help 2>&1 | grep -Eq '^ +run '; then
	is "$st" 0 "wa-campaign run $cid: completed, exit 0"
	is "$(psqlw -c "select count(*) from campaign_recipients
	    where campaign_id = $cid and status <> 'sent'")" 0 \
	    "every recipient sent"
else
	is "$st" 64 "no wa-campaign run yet: a usage error, 64"
fi
is "$(X systemctl show -p NRestarts --value "wapipe-campaign@$cid")" 0 \
    "and not restarted"

# Stopping drains: the unit's SIGINT reaches wa-campaign run, which
# passes it on to its stages once; they drain, run exits 75, and no row
# is left claimed.
X sh -c 'cat >/etc/systemd/system/wapipe-campaign@.service.d/fake.conf' <<'EOF'
[Service]
Environment=WA_API_BASE=http://127.0.0.1:8088/v21.0
Environment=WA_WABA_ID=102290129340398
Environment="WA_RUN_OPTIONS=-r 70"
EOF
X systemctl daemon-reload
cid=$(psqlw -c "insert into campaigns (name, phone_number_id,
    template_name, state) values ('drain', '106540352242922', 'reminder',
    'running') returning id")
psqlw -c "insert into campaign_recipients (campaign_id, phone,
    template_params) select $cid, '+1888' || lpad(g::text, 7, '0'),
    jsonb_build_array('p' || g) from generate_series(1, 3000) g"
X systemctl start "wapipe-campaign@$cid"
some_sent() {
	[ "$(psqlw -c "select count(*) from campaign_recipients
	    where campaign_id = $cid and status = 'sent'")" -ge 100 ]
}
ok "the pipeline unit sends" wait_for 60 some_sent
exits 0 "systemctl stop" X systemctl stop "wapipe-campaign@$cid"
is "$(X systemctl show -p Result --value "wapipe-campaign@$cid")" \
    exit-code "it stopped by itself, within TimeoutStopSec (no timeout)"
is "$(X systemctl show -p ExecMainStatus --value "wapipe-campaign@$cid")" \
    75 "wa-campaign run: stopped, not completed, 75"
left=$(psqlw -c "select count(*) from campaign_recipients
    where campaign_id = $cid and status = 'sending'")
t_n=$((t_n + 1))
if [ "$left" = 0 ]; then
	echo "ok $t_n - stopped, no row left sending" >&7
else
	echo "not ok $t_n - stopped, no row left sending ($left left)" >&7
	t_failed=$((t_failed + 1))
fi
note "$(X journalctl -u "wapipe-campaign@$cid" --no-pager -o cat | tail -4)"

# The timer of campaigns that start themselves: its service runs the
# campaign whose time has come (wa-campaign run --due) to its end, and
# leaves alone the one whose time is to come.
X mkdir -p /etc/systemd/system/wapipe-due.service.d
X sh -c 'cat >/etc/systemd/system/wapipe-due.service.d/fake.conf' <<'EOF'
[Service]
Environment=WA_API_BASE=http://127.0.0.1:8088/v21.0
Environment=WA_WABA_ID=102290129340398
EOF
X systemctl daemon-reload
psqlw -c "update campaigns set state = 'cancelled' where id = $cid"
due=$(psqlw -c "insert into campaigns (name, phone_number_id,
    template_name, state, start_at) values ('due', '106540352242922',
    'reminder', 'scheduled', now()) returning id")
later=$(psqlw -c "insert into campaigns (name, phone_number_id,
    template_name, state, start_at) values ('later', '106540352242922',
    'reminder', 'scheduled', now() + interval '1 day') returning id")
psqlw -c "insert into campaign_recipients (campaign_id, phone,
    template_params) select c, '+1999' || lpad((c * 100 + g)::text, 7,
    '0'), jsonb_build_array('p' || g) from generate_series(1, 20) g,
    unnest(array[$due, $later]) c"
exits 0 "systemctl start wapipe-due.service" X systemctl start wapipe-due.service
is "$(X systemctl show -p Result --value wapipe-due.service)" success \
    "... succeeds"
is "$(psqlw -c "select state, count(*) filter (where r.status = 'sent')
    from campaigns c join campaign_recipients r on r.campaign_id = c.id
    where c.id in ($due, $later) group by c.id, state order by c.id" |
    tr '\n' ' ')" "completed|20 scheduled|0 " \
    "the campaign due is completed, the one to come left alone"
X systemctl enable --now wapipe-due.timer >/dev/null 2>&1
like "$(X systemctl list-timers --no-pager wapipe-due.timer)" \
    'wapipe-due.timer +wapipe-due.service' "its timer is due"

done_testing
