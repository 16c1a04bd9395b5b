#!/bin/sh
# mkdeb.sh VERSION: builds wapipe_VERSION_ARCH.deb at the top of the tree
# (or in MKDEB_OUT), then runs lintian on it (its errors fail the build).
#
# What `make install PREFIX=/usr` installs, staged in build-deb/ (or
# MKDEB_DIR): the
# programs built there with Debian's hardening flags (dpkg-buildflags)
# and stripped, the man pages compressed, the units where this system's
# systemd wants them; then the docs (copyright, a Debian changelog made
# from CHANGELOG, README), the control files of packaging/deb/ with the
# dependencies dpkg-shlibdeps reads off the programs' shared libraries,
# and md5sums. Dates come from the last commit (SOURCE_DATE_EPOCH), so two
# builds of one commit give the same package. Needs dpkg-dev and lintian.
#
# Lintian's warnings are kept for the reader, in build-deb/lintian.txt;
# those left on purpose are explained in packaging/deb/README.
set -eu

VERSION=${1:?usage: mkdeb.sh VERSION}
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
ARCH=$(dpkg --print-architecture)
B=${MKDEB_DIR:-build-deb}
case $B in /*) ;; *) B=$TOP/$B ;; esac
P=$B/pkg		# dpkg-shlibdeps wants debian/control and debian/PACKAGE
R=$P/debian/wapipe
DOC=$R/usr/share/doc/wapipe
DEB=${MKDEB_OUT:-$TOP}/wapipe_${VERSION}_$ARCH.deb
MAINT="wapipe maintainers <maintainers@users.noreply.a-seed-36da95ca.example>"

say() {
	printf 'mkdeb: %s\n' "$*" >&2
}

if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
	SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null) ||
	    SOURCE_DATE_EPOCH=$(stat -c %Y Makefile)
fi
export SOURCE_DATE_EPOCH
export DEB_BUILD_MAINT_OPTIONS=hardening=+all
CFLAGS=$(dpkg-buildflags --get CFLAGS)
CXXFLAGS=$(dpkg-buildflags --get CXXFLAGS)
CPPFLAGS=$(dpkg-buildflags --get CPPFLAGS)
LDFLAGS=$(dpkg-buildflags --get LDFLAGS)
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null) ||
    unitdir=/lib/systemd/system
tmpfilesdir=$(pkg-config --variable=tmpfilesdir systemd 2>/dev/null) ||
    tmpfilesdir=/usr/lib/tmpfiles.d
sysusersdir=$(pkg-config --variable=sysusersdir systemd 2>/dev/null) ||
    sysusersdir=/usr/lib/sysusers.d

say "building with dpkg-buildflags in $B"
rm -rf "$P"
make -s -j2 O="$B" BIN="$B/bin" CFLAGS="$CFLAGS" CXXFLAGS="$CXXFLAGS" \
    CPPFLAGS="$CPPFLAGS" LDFLAGS="$LDFLAGS" all
make -s O="$B" BIN="$B/bin" CFLAGS="$CFLAGS" CXXFLAGS="$CXXFLAGS" \
    CPPFLAGS="$CPPFLAGS" LDFLAGS="$LDFLAGS" DESTDIR="$R" PREFIX=/usr \
    UNITDIR="$unitdir" TMPFILESDIR="$tmpfilesdir" \
    SYSUSERSDIR="$sysusersdir" install >/dev/null

for f in "$R"/usr/bin/*; do
	strip --remove-section=.comment --remove-section=.note \
	    --strip-unneeded "$f"
done
find "$R/usr/share/man" -type f -exec gzip -9n {} +

mkdir -p "$DOC"
install -m 0644 packaging/deb/copyright "$DOC/copyright"
gzip -9n <README.md >"$DOC/README.md.gz"
gzip -9n <CHANGELOG >"$DOC/CHANGELOG.gz"
# The Debian changelog: CHANGELOG's released sections, newest first, as
# Debian entries ("## 0.1.0 - 2026-12-02" and its "- " items).
awk -v maint="$MAINT" '
function close_entry() {
	if (ver == "")
		return
	cmd = "date -u -R -d \"" day " 12:00\""
	cmd | getline when
	close(cmd)
	printf "\n -- %s  %s\n\n", maint, when
}
/^## / {
	close_entry()
	ver = ""
	if ($2 == "Unreleased")
		next
	ver = $2
	day = $4
	printf "wapipe (%s) unstable; urgency=medium\n\n", ver
	next
}
ver != "" && /^- / { sub(/^- /, "  * "); print; next }
ver != "" && /^  [^ ]/ { print "  " $0; next }
END { close_entry() }
' CHANGELOG | sed '$d' | gzip -9n >"$DOC/changelog.gz"
zcat "$DOC/changelog.gz" | head -1 | grep -q "^wapipe ($VERSION) " || {
	say "CHANGELOG's newest release is not VERSION $VERSION"
	exit 1
}

# Control files. dpkg-shlibdeps reads the libraries the programs link.
mkdir -p "$R/DEBIAN"
printf 'Source: wapipe\n\nPackage: wapipe\nArchitecture: any\n' \
    >"$P/debian/control"
depends=$(cd "$P" && dpkg-shlibdeps -O debian/wapipe/usr/bin/* |
    sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || {
	say "dpkg-shlibdeps found no dependencies"
	exit 1
}
size=$(du -sk --exclude=DEBIAN "$R" | cut -f1)
sed -e "s/@VERSION@/$VERSION/" -e "s/@ARCH@/$ARCH/" -e "s/@SIZE@/$size/" \
    -e "s/@DEPENDS@/$depends/" packaging/deb/control >"$R/DEBIAN/control"
install -m 0644 packaging/deb/conffiles "$R/DEBIAN/conffiles"
for s in postinst prerm postrm; do
	install -m 0755 "packaging/deb/$s" "$R/DEBIAN/$s"
done
(cd "$R" && find . -path ./DEBIAN -prune -o -type f -print | sed 's|^\./||' |
    LC_ALL=C sort | xargs md5sum) >"$R/DEBIAN/md5sums"
chmod 0644 "$R/DEBIAN/md5sums"
find "$R" -type d -exec chmod 0755 {} +
chmod 0750 "$R/etc/wapipe"

dpkg-deb --root-owner-group -Zxz --build "$R" "$DEB" >/dev/null
say "built ${DEB#"$TOP"/}"

# lintian's errors fail the build; all it said, down to its pedantic
# notes, is kept.
lintian -I -E --pedantic "$DEB" >"$B/lintian.txt" 2>&1 || true
if grep '^E: ' "$B/lintian.txt" >&2; then
	say "lintian found errors (all it said: $B/lintian.txt)"
	exit 1
fi
grep '^W: ' "$B/lintian.txt" >&2 || true
