# wapipe: `make` builds every program into bin/, `make check` runs the
# tests (plain, then under ASan+UBSan built by gcc and by clang), `make
# demo` runs a whole campaign against a throwaway Postgres and the fake
# Cloud API.

VERSION = 0.1.0
# The Graph API version wapipe speaks unless WA_API_VERSION or
# WA_API_BASE says another: the one definition of the default (every
# --version shows it; lib/api/version.c has when each version ends).
# v25.0, served until 29 July 2028: of what changed since v21.0 for a
# sender, v24.0's status webhooks without "conversation" are covered by
# the tests (and rehearsed by wa-fake-api), and v23.0's code 132018 for
# a template's parameters must be classed like 132000 by the error
# table; v26.0 has no end date yet and its changes were not reviewed
# (../shared/research/cloud-api-2026.md §9: Meta's Graph API changelog,
# updated 29 October 2026).
GRAPH_API_VERSION = v25.0
PREFIX = /usr/local
BINDIR = $(PREFIX)/bin
MANDIR = $(PREFIX)/share/man
DATADIR = $(PREFIX)/share/wapipe
# The service side: systemd reads units, tmpfiles and sysusers under
# /usr/local/lib as well as /usr/lib; the units' paths follow BINDIR and
# SYSCONFDIR (/etc for PREFIX=/usr) when installed.
SYSCONFDIR = $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
UNITDIR = $(PREFIX)/lib/systemd/system
TMPFILESDIR = $(PREFIX)/lib/tmpfiles.d
SYSUSERSDIR = $(PREFIX)/lib/sysusers.d
PKG_CONFIG = pkg-config

# Objects go to $(O), programs to $(BIN); check-asan builds a second tree.
O = build
BIN = bin

CFLAGS ?= -O2 -g
# C++, for lib/records/numplan.cc alone (libphonenumber): the compiler
# that goes with CC (g++ for gcc, clang++ for clang, c++ for cc) and
# CFLAGS as given, unless told otherwise.
ifeq ($(origin CXX),default)
CXX = $(if $(filter cc,$(CC)),c++,$(subst clang,clang++,$(subst gcc,g++,$(CC))))
endif
ifeq ($(origin CXXFLAGS),undefined)
CXXFLAGS := $(CFLAGS)
endif
SANFLAGS =
# Warnings are errors in a git checkout (development, CI), but not for
# whoever builds a release with a newer compiler than ours: there a new
# warning must not stop the build. WERROR=-Werror or WERROR= says
# otherwise.
WERROR = $(if $(wildcard .git),-Werror)
override CFLAGS += -std=c11 -Wall -Wextra $(WERROR) $(SANFLAGS)
override CXXFLAGS += -std=c++17 -Wall -Wextra $(WERROR) $(SANFLAGS)
override CPPFLAGS += -D_GNU_SOURCE -Ilib -MMD -MP \
	$(shell $(PKG_CONFIG) --cflags json-c libpq libcurl libmicrohttpd 2>/dev/null)
override LDFLAGS += $(SANFLAGS)

JSON = $(shell $(PKG_CONFIG) --libs json-c 2>/dev/null)
PQ = $(shell $(PKG_CONFIG) --libs libpq 2>/dev/null)
CURL = $(shell $(PKG_CONFIG) --libs libcurl 2>/dev/null)
MHD = $(shell $(PKG_CONFIG) --libs libmicrohttpd 2>/dev/null) -lpthread
CRYPTO = $(shell $(PKG_CONFIG) --libs libcrypto 2>/dev/null)
# libphonenumber (C++, no .pc file): records/numplan.cc's.
PHONE = -lphonenumber

# What the build needs: pkg-config's modules (and the Debian package of
# each), libphonenumber's header, the compilers. A machine without them
# hears so in one line, once per build tree, instead of from the
# compiler's first missing header.
BUILD_DEPS = json-c:libjson-c-dev libpq:libpq-dev \
	libcurl:libcurl4-openssl-dev libmicrohttpd:libmicrohttpd-dev \
	libcrypto:libssl-dev

# What each program links besides lib/ and json-c: only what it uses.
# One that uses records/numplan.h (import's numbering plans) is linked
# by $(CXX), for the C++ runtime: LD_prog.
LIBS_wa-campaign = $(PQ) $(PHONE) $(CURL)
LD_wa-campaign = $(CXX)
LIBS_wa-claim = $(PQ)
LIBS_wa-record = $(PQ)
LIBS_wa-reconcile = $(PQ)
LIBS_wa-inbound = $(PQ)
LIBS_wa-status-ingest = $(PQ)
LIBS_wa-throttle = $(PQ)
LIBS_wa-send = $(CURL)
LIBS_wa-fake-api = $(MHD) $(CURL) $(CRYPTO)
LIBS_wa-webhook = $(MHD) $(CRYPTO)

# lib/ by layer: core (runtime), records (pure parsing and formatting:
# json-c only), api (the Cloud API: classes, answers, buckets, libcurl),
# pg (Postgres), spool (the webhook side); records/numplan.cc is C++
# (libphonenumber), behind a C header.
LAYERS = core records api pg spool
# A program is cmd/NAME.c, or a folder cmd/NAME/ (main.c and a file per
# command or family of commands) whose objects are linked together.
PROGS = $(patsubst cmd/%.c,%,$(wildcard cmd/*.c)) \
	$(patsubst cmd/%/main.c,%,$(wildcard cmd/*/main.c))
objs = $(if $(wildcard cmd/$(1)/main.c),$(patsubst %.c,$(O)/%.o,$(wildcard cmd/$(1)/*.c)),$(O)/cmd/$(1).o)
CMDOBJ = $(foreach p,$(PROGS),$(call objs,$(p)))
LIBOBJ = $(patsubst lib/%.c,$(O)/lib/%.o,$(foreach l,$(LAYERS),$(wildcard lib/$(l)/*.c)))
LIBOBJ += $(patsubst lib/%.cc,$(O)/lib/%.o,$(foreach l,$(LAYERS),$(wildcard lib/$(l)/*.cc)))
# The schema goes into wa-campaign, for its migrate.
OBJ_wa-campaign = $(O)/gen/schema.o
MANS = $(wildcard man/*.[1-9])
UNITS = $(wildcard contrib/systemd/*.service contrib/systemd/*.timer)
ARCHIVES = $(O)/libwa.a

all: $(PROGS:%=$(BIN)/%)

$(O)/lib/%.o: lib/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(O)/lib/%.o: lib/%.cc
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -c -o $@ $<

$(O)/cmd/%.o: cmd/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# VERSION is compiled in (every --version, wa-send's User-Agent), and
# so is GRAPH_API_VERSION: a new one rebuilds the objects, through
# $(O)/version, rewritten only when either changes.
override CPPFLAGS += -DWA_VERSION='"$(VERSION)"' \
	-DWA_GRAPH_API_VERSION='"$(GRAPH_API_VERSION)"'
$(LIBOBJ) $(CMDOBJ): $(O)/version
$(O)/version: FORCE
	@mkdir -p $(@D)
	@echo '$(VERSION) $(GRAPH_API_VERSION)' | cmp -s - $@ || \
	    echo '$(VERSION) $(GRAPH_API_VERSION)' >$@
FORCE:

# sql/schema.sql as a C string: wa_schema_sql.
$(O)/gen/schema.c: sql/schema.sql
	@mkdir -p $(@D)
	{ echo '/* sql/schema.sql, by the Makefile. */'; \
	    echo 'const char wa_schema_sql[] ='; \
	    sed 's/\\/\\\\/g; s/"/\\"/g; s/^/"/; s/$$/\\n"/' $<; \
	    echo ';'; } >$@

$(O)/gen/schema.o: $(O)/gen/schema.c
	$(CC) $(CFLAGS) -c -o $@ $<

$(O)/libwa.a: $(LIBOBJ)
	rm -f $@
	$(AR) rcs $@ $(LIBOBJ)

$(LIBOBJ) $(CMDOBJ) $(O)/gen/schema.o: | $(O)/build-deps
$(O)/build-deps:
	@m=""; \
	command -v $(CC) >/dev/null || m="$$m gcc"; \
	command -v $(CXX) >/dev/null || m="$$m g++"; \
	command -v $(PKG_CONFIG) >/dev/null || m="$$m pkg-config"; \
	for d in $(BUILD_DEPS); do \
		$(PKG_CONFIG) --exists $${d%%:*} 2>/dev/null || m="$$m $${d#*:}"; \
	done; \
	echo '#include <phonenumbers/phonenumberutil.h>' | \
	    $(CXX) -E -x c++ - >/dev/null 2>&1 || m="$$m libphonenumber-dev"; \
	if [ -n "$$m" ]; then \
		echo "make: missing development packages:$$m;" \
		    "'make deps' installs them (as root)" >&2; exit 1; \
	fi; mkdir -p $(@D) && touch $@

.SECONDEXPANSION:
$(BIN)/%: $$(call objs,$$*) $$(OBJ_$$*) $(ARCHIVES)
	@mkdir -p $(@D)
	$(or $(LD_$*),$(CC)) $(LDFLAGS) -o $@ $(call objs,$*) $(OBJ_$*) \
	    $(ARCHIVES) $(LIBS_$*) $(JSON) $(LDLIBS)

# The lib/ objects that one program alone links, and why each is a
# layer all the same; check-layers fails on any other (it belongs in its
# program's folder, as wa-campaign's and wa-fake-api's do) and on a name
# here that more programs link now.
#   api/answer, guard, multi, send: the Cloud API client, wa-send's; the
#     Graph API's other calls (a template, a number's limit: api/graph,
#     wa-campaign check's) share its token and base, not these
#   api/share, pg/lease: a number's tokens and fair share on the host or
#     the cluster, wa-throttle's; whatever else sends from the number
#     (replies) must draw from the same
#   records/status, inbound, pg/statusdb: webhook statuses and inbound
#     messages parsed (fuzzed by fuzz/status.c) and applied,
#     wa-status-ingest's; pg/results beside
#     it is wa-record's half of the same table
#   records/import, numplan, zones: a recipients file parsed (fuzzed by
#     fuzz/import.c), wa-campaign import's
#   records/ratecard: Meta's rate card parsed (fuzzed by
#     fuzz/ratecard.c), wa-campaign rates load's
ONE_PROGRAM = api/answer api/guard api/multi api/send api/share pg/lease \
	records/status records/inbound pg/statusdb records/import records/numplan \
	records/zones records/ratecard

# records/ is pure: it compiles with json-c's include path alone, and
# with libpq, libcurl, libmicrohttpd and OpenSSL headers poisoned. The
# arrows point down: core/ includes only core/; pg/ nothing of spool/
# (the spool is wa-status-ingest's to prune), and of the token bucket
# only lease.c, whose cluster bucket sits on the host's. Then
# ONE_PROGRAM above, checked against what the programs link.
check-layers: all
	@for f in lib/records/*.c; do \
		$(CC) -std=c11 -D_GNU_SOURCE -fsyntax-only $(WERROR) \
		    -Itests/poison -Ilib \
		    $$($(PKG_CONFIG) --cflags json-c) $$f || exit 1; \
	done
	@echo "check-layers: lib/records needs json-c only"
	@up=$$(grep -Hn '^#include "' lib/core/*.[ch] | grep -v '"core/'; \
	    grep -Hn '^#include "spool/' lib/pg/*.[ch]; \
	    grep -Hn '^#include "api/bucket.h"' lib/pg/*.[ch] | \
	    grep -v '^lib/pg/lease.c:'); \
	[ -z "$$up" ] || { echo "$$up"; \
	    echo "check-layers: these includes point the wrong way" >&2; \
	    exit 1; }
	@echo "check-layers: lib/core includes core only, lib/pg no spool"
	@sh scripts/layers.sh $(O) $(BIN) "$(ONE_PROGRAM)"

deps:
	@sh scripts/deps.sh

# The suite, then the same suite under the sanitizers: built by gcc (or
# $(CC)) and by clang, whose UBSan reports things gcc's does not (NULL +
# 0, for one). PROVE='prove -j4' runs more tests at once.
PROVE = prove -j2 --failures --comments
ASAN_CC = $(sort $(CC) clang)
ASAN_ENV = ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=86 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp

check: deps all check-layers
	WA_BIN=$(CURDIR)/$(BIN) $(PROVE) tests/
	$(MAKE) check-asan

# A real highly available Postgres: etcd and two Patroni nodes, the
# leader's postmaster killed, its Patroni stopped, its host dead, each
# mid-campaign (tests/86-patroni.t, which the plain suite skips: 75-95 s);
# then the failover and pgbouncer tests again beside it.
check-ha: all
	@sh scripts/deps.sh ha || echo "check-ha: no Patroni or etcd: tests/86 skips"
	WA_HA=1 WA_BIN=$(CURDIR)/$(BIN) $(PROVE) tests/86-patroni.t \
	    tests/82-failover.t tests/85-pgbouncer.t

check-asan: deps
	@for cc in $(ASAN_CC); do \
		if ! command -v $$cc >/dev/null; then \
			echo "check-asan: no $$cc: its sanitizers not run"; \
			continue; \
		fi; \
		$(MAKE) check-san SAN_CC=$$cc || exit 1; \
	done

# One compiler's sanitizer build (SAN_CC) and the suite on it.
SAN_O = build-asan-$(notdir $(SAN_CC))
check-san:
	$(MAKE) CC=$(SAN_CC) O=$(SAN_O) BIN=$(SAN_O)/bin \
	    CFLAGS='-O1 -g -fno-omit-frame-pointer' \
	    SANFLAGS='-fsanitize=address,undefined -fno-sanitize-recover=all' all
	WA_BIN=$(CURDIR)/$(SAN_O)/bin $(ASAN_ENV) $(PROVE) tests/

# Every parser fuzzed (fuzz/*.c, one libFuzzer harness each): built by
# clang with ASan and UBSan in $(FUZZ_O)/, then each run for FUZZ_SECONDS
# on a copy of its seed corpus (fuzz/corpus/NAME: never written to here).
# An input that breaks a property is left in $(FUZZ_O)/crash/. fuzz-build
# only builds them (tests/17-fuzz-regress.t replays the corpora).
FUZZ_CC = clang
FUZZ_O = build-fuzz
FUZZ_SECONDS = 60
FUZZERS = $(patsubst fuzz/%.c,%,$(wildcard fuzz/*.c))
FUZZ_SAN = -fsanitize=fuzzer-no-link,address,undefined \
	-fno-sanitize-recover=all
FUZZ_LIBS = $(JSON) $(PQ) $(CURL) $(CRYPTO) $(PHONE)

fuzz: fuzz-build
	@mkdir -p $(FUZZ_O)/run $(FUZZ_O)/crash
	@for f in $(FUZZERS); do \
		rm -rf $(FUZZ_O)/run/$$f; mkdir $(FUZZ_O)/run/$$f; \
		cp fuzz/corpus/$$f/* $(FUZZ_O)/run/$$f/ || exit 1; \
		echo "fuzz: $$f for $(FUZZ_SECONDS) s"; \
		if ! $(FUZZ_O)/fuzz/$$f -max_total_time=$(FUZZ_SECONDS) \
		    -timeout=30 -print_final_stats=1 -dict=fuzz/json.dict \
		    -artifact_prefix=$(FUZZ_O)/crash/$$f- \
		    $(FUZZ_O)/run/$$f >$(FUZZ_O)/run/$$f.log 2>&1; then \
			tail -40 $(FUZZ_O)/run/$$f.log; \
			echo "fuzz: $$f failed; the input is in $(FUZZ_O)/crash/;" \
			    "log: $(FUZZ_O)/run/$$f.log" >&2; \
			exit 1; \
		fi; \
		grep -E '^#[0-9]+.*DONE|stat::number_of_executed_units' \
		    $(FUZZ_O)/run/$$f.log | tr '\n' ' '; echo; \
	done

fuzz-build:
	@mkdir -p $(FUZZ_O)
	@printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n)\n{ return d == 0 && n > 0; }\n' \
	    >$(FUZZ_O)/probe.c
	@$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $(FUZZ_O)/probe \
	    $(FUZZ_O)/probe.c 2>$(FUZZ_O)/probe.err || { \
		cat $(FUZZ_O)/probe.err >&2; \
		echo "make fuzz: $(FUZZ_CC) cannot link -fsanitize=fuzzer:" \
		    "install clang and its runtime (libclang-rt-N-dev," \
		    "N = clang's major version)" >&2; exit 1; }
	$(MAKE) CC=$(FUZZ_CC) O=$(FUZZ_O) BIN=$(FUZZ_O)/bin \
	    CFLAGS='-O1 -g -fno-omit-frame-pointer' SANFLAGS='$(FUZZ_SAN)' \
	    fuzz-bins

fuzz-bins: $(FUZZERS:%=$(O)/fuzz/%)

# Compiled as C, linked by $(CXX): some link records/numplan.cc.
$(O)/fuzz/%: fuzz/%.c $(wildcard fuzz/*.h) $(O)/libwa.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@.o $<
	$(CXX) $(CFLAGS) -fsanitize=fuzzer -o $@ $@.o $(O)/libwa.a \
	    $(FUZZ_LIBS) $(LDLIBS)

demo: deps all
	@sh scripts/demo.sh

# With the programs: their pages, the schema, the systemd units (their
# paths made to follow BINDIR and SYSCONFDIR), tmpfiles.d and sysusers.d,
# the nginx example, and the configuration, which is never overwritten.
UNITSED = sed -e 's|/usr/bin/|$(BINDIR)/|g' \
	-e 's|/etc/wapipe|$(SYSCONFDIR)/wapipe|g' -e 's|/usr/share/wapipe|$(DATADIR)|g'

install: all
	mkdir -p $(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR)/nginx
	install -m 0755 $(PROGS:%=$(BIN)/%) $(DESTDIR)$(BINDIR)
	install -m 0644 sql/schema.sql $(DESTDIR)$(DATADIR)
	install -m 0644 contrib/nginx/wa-webhook.conf $(DESTDIR)$(DATADIR)/nginx
	for m in $(MANS); do \
		s=$${m##*.}; mkdir -p $(DESTDIR)$(MANDIR)/man$$s; \
		install -m 0644 $$m $(DESTDIR)$(MANDIR)/man$$s; \
	done
	mkdir -p $(DESTDIR)$(UNITDIR) $(DESTDIR)$(TMPFILESDIR) \
	    $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(SYSCONFDIR)/wapipe
	for u in $(UNITS); do \
		$(UNITSED) $$u >$(DESTDIR)$(UNITDIR)/$${u##*/} || exit 1; \
		chmod 0644 $(DESTDIR)$(UNITDIR)/$${u##*/}; \
	done
	install -m 0644 contrib/systemd/tmpfiles.conf \
	    $(DESTDIR)$(TMPFILESDIR)/wapipe.conf
	install -m 0644 contrib/systemd/sysusers.conf \
	    $(DESTDIR)$(SYSUSERSDIR)/wapipe.conf
	c=$(DESTDIR)$(SYSCONFDIR)/wapipe/wapipe.conf; [ -e $$c ] || { \
		$(UNITSED) contrib/systemd/wapipe.conf >$$c && chmod 0640 $$c; }

uninstall:
	rm -f $(PROGS:%=$(DESTDIR)$(BINDIR)/%) $(DESTDIR)$(DATADIR)/schema.sql
	rm -f $(DESTDIR)$(DATADIR)/nginx/wa-webhook.conf
	for m in $(MANS); do \
		rm -f $(DESTDIR)$(MANDIR)/man$${m##*.}/$${m#man/}; \
	done
	for u in $(UNITS); do rm -f $(DESTDIR)$(UNITDIR)/$${u##*/}; done
	rm -f $(DESTDIR)$(TMPFILESDIR)/wapipe.conf \
	    $(DESTDIR)$(SYSUSERSDIR)/wapipe.conf

# A Debian package of what install installs (scripts/mkdeb.sh), built
# apart in build-deb/ with Debian's hardening flags: wapipe_VERSION_ARCH.deb.
deb: deps
	@sh scripts/mkdeb.sh $(VERSION)

# A release: the committed tree at HEAD as wapipe-VERSION.tar.gz (DIST).
DIST = wapipe-$(VERSION).tar.gz
dist:
	@git diff --quiet HEAD || \
	    echo "dist: uncommitted changes are not in $(DIST)" >&2
	git archive --format=tar.gz --prefix=wapipe-$(VERSION)/ -o $(DIST) HEAD

clean:
	rm -rf build build-asan build-asan-* build-deb build-fuzz bin

.PHONY: all deps check check-ha check-asan check-san check-layers demo install uninstall \
	clean deb dist fuzz fuzz-build fuzz-bins FORCE
.SECONDARY:

-include $(LIBOBJ:.o=.d) $(CMDOBJ:.o=.d)
