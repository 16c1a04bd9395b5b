#!/bin/sh
# make deb: the package builds, lintian finds no error and every warning
# left is explained in packaging/deb/README; it holds the programs, the
# compressed pages, the schema, the units, and depends on the packages of
# every library the programs link. Then, for real on this machine (as
# root): dpkg -i makes the wapipe user and its directories, the installed
# units verify, make demo's campaign runs from /usr/bin alone, dpkg -r
# leaves nothing of the package's but its configuration (and a spool
# that still holds bodies), dpkg -P the rest. A wapipe already on the
# machine, or any file the package would overwrite, stops the test before
# it installs anything; a test that fails midway still removes the
# package (and the user it made).
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip_all "installing a package needs root"
for c in dpkg-deb dpkg-shlibdeps lintian systemd-analyze; do
	command -v "$c" >/dev/null ||
	    skip_all "no $c (make deps installs dpkg-dev, lintian, systemd)"
done
# The package is built apart, with its own flags: the same whatever
# WA_BIN is, so once (in the plain run) is enough.
if ldd "$WA_BIN/wa-claim" 2>/dev/null | grep -q 'libasan'; then
	skip_all "the package does not depend on WA_BIN: tested in the plain run"
fi

# One test of this kind at a time on the machine (dpkg has one lock).
exec 9>/run/lock/wapipe-package-test.lock
flock 9

st=$(dpkg-query -W -f='${Status}' wapipe 2>/dev/null)
case $st in
*installed* | *config-files* | *unpacked*)
	skip_all "wapipe is on this machine ($st): not touching it" ;;
esac

VERSION=$(sed -n 's/^VERSION = //p' "$TOP/Makefile")
ARCH=$(dpkg --print-architecture)
DEB=$T/wapipe_${VERSION}_$ARCH.deb
MKDEB_DIR=$T/build MKDEB_OUT=$T make -s -C "$TOP" deb >"$T/make.out" 2>&1
rc=$?
[ -f "$DEB" ] || bail "make deb exited $rc, no $DEB: $(tail -5 "$T/make.out")"
dpkg-deb -c "$DEB" | awk '{ print $1 " " $6 }' | sed 's| \./| /|' \
    >"$T/contents"

# Nothing the package holds may be on the machine already.
clash=$(grep '^-' "$T/contents" | cut -d' ' -f2 | while read -r f; do
	[ -e "$f" ] && echo "$f"
done)
[ -e /etc/wapipe ] && clash="$clash /etc/wapipe"
[ -z "$clash" ] || skip_all "wapipe's files are on this machine: $clash"
grep '^d' "$T/contents" | cut -d' ' -f2 | sed 's|/$||' | while read -r d; do
	[ -n "$d" ] && [ ! -e "$d" ] && echo "$d"
done >"$T/newdirs"

is "$rc" 0 "make deb"

# lintian: no error; every tag left is explained.
L=$T/build/lintian.txt
is "$(grep -c '^E: ' "$L")" 0 "lintian: no error"
for tag in $(sed -n 's/^[WIPX]: wapipe[^:]*: \([a-z0-9.+-]*\).*/\1/p' "$L" |
    sort -u); do
	ok "lintian's $tag is explained in packaging/deb/README" \
	    grep -q -- "$tag" "$TOP/packaging/deb/README"
done

# What it is and what it holds.
is "$(dpkg-deb -f "$DEB" Package Version | tr '\n' ' ')" \
    "Package: wapipe Version: $VERSION " "package wapipe, version $VERSION"
has() {
	grep -q " $1\$" "$T/contents"
}
for p in $(programs); do
	ok "/usr/bin/$p" has "/usr/bin/$p"
done
for m in "$TOP"/man/*.[1-9]; do
	s=${m##*.}
	ok "${m##*/}, compressed" has "/usr/share/man/man$s/${m##*/}.gz"
done
ok "no uncompressed page" sh -c "! grep -q '/usr/share/man/.*[1-9]\$' '$T/contents'"
ok "the schema" has /usr/share/wapipe/schema.sql
for u in "$TOP"/contrib/systemd/*.service "$TOP"/contrib/systemd/*.timer; do
	ok "unit ${u##*/}" grep -q "/systemd/system/${u##*/}\$" "$T/contents"
done
ok "tmpfiles.d" has /usr/lib/tmpfiles.d/wapipe.conf
ok "sysusers.d" has /usr/lib/sysusers.d/wapipe.conf
ok "the nginx example" has /usr/share/wapipe/nginx/wa-webhook.conf
ok "the copyright file" has /usr/share/doc/wapipe/copyright
is "$(dpkg-deb -I "$DEB" conffiles)" /etc/wapipe/wapipe.conf \
    "/etc/wapipe/wapipe.conf is a conffile"

# Dependencies: each library a program links comes from a package the
# control file names.
dpkg-deb -x "$DEB" "$T/x"
deps=$(dpkg-deb -f "$DEB" Depends)
for lib in $(for f in "$T"/x/usr/bin/*; do
	objdump -p "$f" | awk '$1 == "NEEDED" { print $2 }'
done | sort -u); do
	path=$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')
	real=$(readlink -f "$path")
	pkg=
	for c in "$path" "$real" "${real#/usr}" "/usr$path"; do
		pkg=$(dpkg -S "$c" 2>/dev/null | head -1 | cut -d: -f1)
		[ -n "$pkg" ] && break
	done
	# The package, or a name it provides (libphonenumber8's shlibs
	# name libphonenumber8-protobuf32), compared as plain strings.
	{ echo "$pkg"; dpkg-query -W -f '${Provides}' "$pkg" 2>/dev/null |
	    tr ',' '\n' | sed 's/(.*//; s/ //g'; } | grep . >"$T/names"
	named=$(printf '%s\n' "$deps" | tr ',' '\n' | sed 's/(.*//; s/ //g' |
	    grep -Fx -f "$T/names" | head -1)
	ok "$lib: Depends names $pkg (or what it provides)" test -n "$named"
done

had_user=0
getent passwd wapipe >/dev/null && had_user=1
had_group=0
getent group wapipe >/dev/null && had_group=1

# From here on the machine changes: whatever happens, undo it.
pkg_cleanup() {
	if dpkg-query -W -f='${Status}' wapipe 2>/dev/null |
	    grep -qv not-installed; then
		dpkg -P wapipe >/dev/null 2>&1 || dpkg -P --force-all wapipe \
		    >/dev/null 2>&1
	fi
	[ "$had_user" = 0 ] && getent passwd wapipe >/dev/null &&
	    userdel wapipe 2>/dev/null
	[ "$had_group" = 0 ] && getent group wapipe >/dev/null &&
	    groupdel wapipe 2>/dev/null
}
trap 'pkg_cleanup; t_cleanup' EXIT

dpkg -i "$DEB" >"$T/dpkg.out" 2>&1
is "$?" 0 "dpkg -i"
grep -Ev '^(\(Reading|Selecting|Preparing|Unpacking|Setting)' \
    "$T/dpkg.out" >"$T/dpkg.said"
[ -s "$T/dpkg.said" ] && note "$(cat "$T/dpkg.said")"
is "$(dpkg-query -W -f='${Status}' wapipe)" "install ok installed" \
    "installed"
dpkg -L wapipe >"$T/list"
like "$(getent passwd wapipe)" '^wapipe:x:[0-9]+:[0-9]+:.*:/var/lib/wapipe:' \
    "the wapipe user"
for d in /run/wapipe /var/spool/wapipe /var/lib/wapipe /var/lib/wapipe/results; do
	is "$(stat -c '%U %a' "$d" 2>&1)" "wapipe 750" "$d, wapipe's"
done
is "$(stat -c '%U %a' /etc/wapipe /etc/wapipe/wapipe.conf | tr '\n' ' ')" \
    "root 750 root 640 " "/etc/wapipe: root's alone"
ok "the installed schema is sql/schema.sql" \
    cmp -s /usr/share/wapipe/schema.sql "$TOP/sql/schema.sql"
for p in $(programs); do
	is "$(/usr/bin/"$p" --version | head -1)" "$p (wapipe) $VERSION" \
	    "/usr/bin/$p --version"
done
# Docker's Debian images tell dpkg to leave man pages out.
man=yes
if [ ! -e /usr/share/man/man1/wa-send.1.gz ] &&
    grep -qs '^path-exclude=*/usr/share/man' /etc/dpkg/dpkg.cfg.d/*; then
	note "dpkg here leaves man pages out (/etc/dpkg/dpkg.cfg.d)"
	man=no
else
	ok "man finds the installed pages" \
	    sh -c 'man -w wa-send wapipe >/dev/null'
fi
unitdir=$(dirname "$(grep '/wa-webhook.service$' "$T/list")")
for u in "$unitdir"/wa-* "$unitdir"/wapipe-*; do
	out=$(systemd-analyze verify --man="$man" "$u" 2>&1)
	is "$?:$out" "0:" "installed ${u##*/}: systemd-analyze verify says nothing"
done

# make demo's campaign, from the installed programs alone; with the
# WA_TOKEN_FILE that README's first campaign has the reader export, which
# the rehearsal leaves alone.
env -i PATH=/usr/bin:/bin:/usr/sbin:/sbin HOME=/root LC_ALL=C \
    WA_BIN=/usr/bin DEMO_RECIPIENTS=300 DEMO_RATE=200 \
    WA_TOKEN_FILE=/etc/wapipe/token \
    sh "$TOP/scripts/demo.sh" >"$T/demo.out" 2>&1
is "$?" 0 "the demo runs from /usr/bin"
like "$(cat "$T/demo.out")" '^campaign [0-9]+ .*: completed$' \
    "its campaign completed"
note "$(tail -5 "$T/demo.out")"
ok "with no program from the tree" \
    sh -c "! grep -q '$TOP/bin' '$T/demo.out'"

# A spool that holds bodies survives dpkg -r.
echo '{"object":"kept"}' >/var/spool/wapipe/0000000000000001.ndjson

dpkg -r wapipe >"$T/dpkg.out" 2>&1
is "$?" 0 "dpkg -r"
is "$(dpkg-query -W -f='${Status}' wapipe)" "deinstall ok config-files" \
    "removed, configuration kept"
left=$(while read -r f; do
	[ -d "$f" ] && continue
	[ -e "$f" ] && echo "$f"
done <"$T/list")
is "$left" /etc/wapipe/wapipe.conf "every file gone but the configuration"
left=$(while read -r d; do
	[ -e "$d" ] && echo "$d"
done <"$T/newdirs")
is "$left" /etc/wapipe "every directory it made gone but /etc/wapipe"
ok "/run/wapipe gone" test ! -e /run/wapipe
ok "/var/lib/wapipe (empty) gone" test ! -e /var/lib/wapipe
ok "a spool with bodies kept" test -s /var/spool/wapipe/0000000000000001.ndjson

dpkg -P wapipe >"$T/dpkg.out" 2>&1
is "$?" 0 "dpkg -P"
st=$(dpkg-query -W -f='${Status}' wapipe 2>/dev/null)
like "${st:-not-installed}" 'not-installed$' "purged"
for d in /etc/wapipe /var/spool/wapipe /var/lib/wapipe /run/wapipe; do
	ok "$d gone" test ! -e "$d"
done

done_testing
