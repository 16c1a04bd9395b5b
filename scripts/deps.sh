#!/bin/sh
# deps.sh [ha]: installs the Debian packages that wapipe's build, tests,
# demo and benchmarks need, when some are missing; with "ha", those of
# make check-ha too (Patroni and etcd: tests/86-patroni.t). As root it
# runs apt-get; otherwise it prints the command and fails.
set -eu

# The line ending in shellcheck is for the packaging tests (make deb, the
# units, the nginx example); installing nginx starts Debian's own nginx on
# port 80 where a service manager runs: the tests only run theirs, in a
# temp dir. The last line: the report's browser test needs chromium
# (headless); promtool (in prometheus, whose own server a service
# manager would start on port 9090: the tests never use it) and the node
# exporter's textfile collector are for tests/25-dashboards.t and
# tests/91-metrics.t. Those tests skip without them. g++ and
# libphonenumber-dev build lib/records/numplan.cc (import's numbering
# plans); tzdata's zone1970.tab gives each recipient's time zone.
# pgbouncer: tests/24-campaign-run-once.t runs one in its temp dir (its
# own socket, no TCP) in front of the test cluster, transaction pooling.
pkgs="gcc g++ make pkg-config libc6-dev libpq-dev libcurl4-openssl-dev
libjson-c-dev libmicrohttpd-dev libssl-dev libphonenumber-dev tzdata
postgresql postgresql-client pgbouncer
perl curl jq mandoc procps pv wrk util-linux openssl
dpkg-dev binutils lintian systemd man-db nginx shellcheck
chromium prometheus prometheus-node-exporter"
# Debian's packages start no service here. Under systemd, etcd-server's
# would start etcd on port 2379, which the test leaves alone (its own etcd
# is on ports of its own), and Patroni's units wait for a configuration
# in /etc/patroni. iproute2: ss, which the test asks for free ports.
[ "${1:-}" = ha ] && pkgs="$pkgs patroni etcd-server iproute2"

missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
	    grep -q 'install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

cmd="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages; run as root: $cmd" >&2
	exit 1
fi
echo "deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
