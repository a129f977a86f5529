# agentjail — GNU Makefile. `make`, `make check`, `make check SAN=1`, `make bench`,
# `make install PREFIX=/usr/local DESTDIR=`, `make uninstall`, `make deps` (Debian packages), `make run`.
CC ?= cc
PKG_CONFIG ?= pkg-config
PREFIX ?= /usr/local
DESTDIR ?=
SAN ?=
PKGS := libseccomp jansson libcares libidn2 ncursesw sqlite3

ifeq ($(SAN),1)
BUILD := build/san
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
OPT := -O1
else
BUILD := build/rel
SANFLAGS :=
OPT := -O2
endif

IS_GCC := $(shell $(CC) --version 2>/dev/null | grep -q 'Free Software Foundation' && echo 1)
WARN := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wvla -Wstrict-prototypes -Wmissing-prototypes \
	-Wno-unused-parameter
ifeq ($(IS_GCC),1)
WARN += -Werror=jump-misses-init -Wjump-misses-init
endif

# ncursesw's flags (-D_XOPEN_SOURCE=600) are left out: _GNU_SOURCE gives curses.h its wide API
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(filter-out ncursesw,$(PKGS)) 2>/dev/null)
# The libraries are linked statically: agentjail is exec'd twice per jail (on the host and as
# the jail's init), and each shared library costs loader time on every start. libsqlite3 is
# linked dynamically when its archive is not installed; statically, its private libraries
# (libm; libz is listed but unused) come after, --as-needed so an unused one is not loaded.
SQLITE_A := $(filter /%,$(shell $(CC) -print-file-name=libsqlite3.a 2>/dev/null))
PKG_LIBS := -Wl,-Bstatic $(shell $(PKG_CONFIG) --static --libs $(filter-out sqlite3,$(PKGS)) 2>/dev/null)
ifneq ($(SQLITE_A),)
SQLITE_PRIV := $(filter-out $(shell $(PKG_CONFIG) --libs-only-l sqlite3 2>/dev/null), \
	$(shell $(PKG_CONFIG) --static --libs-only-l sqlite3 2>/dev/null))
PKG_LIBS += $(shell $(PKG_CONFIG) --libs sqlite3 2>/dev/null) -Wl,-Bdynamic \
	-Wl,--as-needed $(SQLITE_PRIV) -Wl,--no-as-needed
else
PKG_LIBS += -Wl,-Bdynamic $(shell $(PKG_CONFIG) --libs sqlite3 2>/dev/null)
endif
CMOCKA_LIBS := $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null)
# libcurl (the opensandbox backend, src/core/backend/remote/) is linked dynamically, and only into
# agentjail-remote (REMOTE_SRC below): its static archive would pull in TLS, HTTP/2, IDN, LDAP, …
# archives Debian does not all ship, and agentjail itself stays static.
CURL_CFLAGS := $(shell $(PKG_CONFIG) --cflags libcurl 2>/dev/null)
CURL_LIBS := $(shell $(PKG_CONFIG) --libs libcurl 2>/dev/null)
# agentjail and its test build are static PIEs (libc included; still randomised) when not
# sanitised and SQLite's archive is there: no loader, no libc.so/libm.so mapped, so each of the
# two execs per jail is cheaper and the host process's peak RSS stays under 4 MiB (issue 17:
# 4.4 MB dynamic, 3.3 MB static, mostly libc's and libm's pages). libseccomp is not needed
# there (the filter is prebuilt); libz is listed by sqlite3 but unused. glibc warns that
# getpwuid and c-ares's getservbyname load NSS modules at run time: the system's, as before.
# link_bin: the link, with glibc's NSS notes (lines "...: in function `f':" and "warning: Using
# 'getpwuid' in statically linked applications...") left out of the output; anything else shows.
define link_bin
$(CC) $(LDFLAGS) $(BIN_LDFLAGS) -o $@ $^ $(BIN_LIBS) 2>$@.ld || { cat $@.ld >&2; rm -f $@.ld; exit 1; }
@grep -v -e 'in statically linked applications requires at runtime' -e ': in function .*:$$' \
	$@.ld >&2; rm -f $@.ld
endef
ifeq ($(SAN)$(if $(SQLITE_A),,none),)
BIN_LDFLAGS := -static-pie
BIN_LIBS := $(filter-out -lz,$(shell $(PKG_CONFIG) --static --libs \
	$(filter-out libseccomp,$(PKGS)) 2>/dev/null)) -lm
else
BIN_LDFLAGS :=
BIN_LIBS := $(PKG_LIBS)
endif

CPPFLAGS += -D_GNU_SOURCE -Isrc
CFLAGS ?= $(OPT) -g
CFLAGS += -std=gnu17 $(WARN) $(SANFLAGS) $(PKG_CFLAGS) $(CURL_CFLAGS) -MMD -MP
LDFLAGS += $(SANFLAGS)
LDLIBS += $(PKG_LIBS)

# The remote backend (doc/design.md §4b): agentjail-remote, linked dynamically with libcurl from
# these sources and the library; agentjail links src/core/backend/remote/remote_exec.c and
# src/core/diag/doctor_remote_exec.c (which exec it) instead.
REMOTE_SRC := src/remote_main.c src/core/backend/remote/osbrun.c src/core/diag/doctor_remote.c \
	src/core/backend/remote/osb_client.c src/core/backend/remote/osb_sync.c
# The TLS inspector and ssh-agent filter (doc/design.md §4d): agentjail-tls, linked dynamically
# with OpenSSL (libssl3) from these sources and the library; agentjail never links OpenSSL.
TLS_SRC := src/tls_main.c $(sort $(wildcard src/core/tls/*.c))
OPENSSL_CFLAGS := $(shell $(PKG_CONFIG) --cflags openssl 2>/dev/null)
OPENSSL_LIBS := $(shell $(PKG_CONFIG) --libs openssl 2>/dev/null)
LIB_SRC := $(sort $(filter-out $(REMOTE_SRC) $(TLS_SRC),$(shell find src -name '*.c' ! -name main.c \
	! -name init_main.c)))
# The seccomp programs, generated at build time (see SCGEN below), are part of the library.
SC_PREBUILT := $(BUILD)/gen/seccomp_prebuilt
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o) $(SC_PREBUILT).o
# (the test build links objects, not the archive: the generator's libseccomp rules stay out)
TB_OBJ := $(filter-out %/seccomp_rules.o,$(LIB_SRC:%.c=$(BUILD)/tb/%.o)) $(BUILD)/tb/src/main.o \
	$(SC_PREBUILT).o
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/unit/%)
HELPER_SRC := $(sort $(wildcard tests/helpers/*.c))
HELPER_BIN := $(HELPER_SRC:tests/helpers/%.c=$(BUILD)/tests/helpers/%)
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/tests/fuzz/%)
BIN := $(BUILD)/agentjail
TESTBIN := $(BUILD)/agentjail-testbuild
INIT := $(BUILD)/agentjail-init
REMOTE := $(BUILD)/agentjail-remote
TLS := $(BUILD)/agentjail-tls

# The jail's init (doc/design.md §2, §7): its own small program, exec'd on every run as the
# jail's PID 1, so linked statically against musl (musl-gcc, Debian's musl-tools; INIT_CC=cc
# links it against glibc instead, also statically) and from these sources only: no SQLite,
# jansson, libseccomp, c-ares or libidn2 (the link has no library to find them in). A sanitizer
# build links it dynamically with the sanitizers, from the sanitized objects.
INIT_SRC := src/init_main.c src/core/jail/init.c src/core/jail/ctl.c src/core/jail/capinit.c \
	src/core/confine/landlock.c src/core/confine/capfilter.c src/core/plan/initargs.c src/core/plan/execwire.c \
	src/core/jail/bindcheck.c src/cmd/connect.c src/cmd/warn.c \
	src/core/net/connreply.c \
	src/util/strv.c src/util/xalloc.c src/util/err.c src/util/path.c src/util/strbuf.c \
	src/util/fs.c src/util/termtext.c src/util/fdmsg.c
INIT_CC ?= musl-gcc

.PHONY: all check test t unit-check clean install uninstall deps deps-test run bench format fuzz clang-build man unit-syntax
all: agentjail

agentjail: $(BIN) $(INIT) $(REMOTE) $(TLS)
ifneq ($(SAN),1)
	@cp -f $(BIN) $@
	@cp -f $(INIT) $@-init
	@cp -f $(REMOTE) $@-remote
	@cp -f $(TLS) $@-tls
else
	@true
endif

$(BIN): $(BUILD)/src/main.o $(BUILD)/libagentjail.a
	$(call link_bin)

$(TESTBIN): $(TB_OBJ)
	$(call link_bin)

# (its own objects first: they define what remote_exec.o does in the archive, which stays out)
$(REMOTE): $(REMOTE_SRC:%.c=$(BUILD)/%.o) $(BUILD)/libagentjail.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(CURL_LIBS)

$(TLS): $(TLS_SRC:%.c=$(BUILD)/%.o) $(BUILD)/libagentjail.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(OPENSSL_LIBS) -lpthread

$(TLS_SRC:%.c=$(BUILD)/%.o): CFLAGS += $(OPENSSL_CFLAGS)

ifeq ($(SAN),1)
$(INIT): $(INIT_SRC:%.c=$(BUILD)/%.o)
	$(CC) $(LDFLAGS) -o $@ $^
else
# musl has no kernel headers of its own: <linux/…> and <asm/…> come from linux-libc-dev,
# after musl's own headers (-idirafter), through a directory of links to just those three.
INIT_KINC := $(BUILD)/init/kinclude
$(INIT): $(INIT_SRC:%.c=$(BUILD)/init/%.o)
	$(INIT_CC) -static -o $@ $^

$(INIT_KINC)/asm:
	@command -v $(firstword $(INIT_CC)) >/dev/null 2>&1 || { echo "agentjail-init needs \
	  $(firstword $(INIT_CC)): run make deps (Debian's musl-tools), or build with INIT_CC=cc" >&2; \
	  exit 1; }
	@mkdir -p $(@D)
	@ln -sfn /usr/include/linux $(@D)/linux && ln -sfn /usr/include/asm-generic $(@D)/asm-generic
	@a=/usr/include/$$($(CC) -print-multiarch 2>/dev/null)/asm; [ -d "$$a" ] || a=/usr/include/asm; \
	  ln -sfn "$$a" $@

$(BUILD)/init/%.o: %.c | $(INIT_KINC)/asm
	@mkdir -p $(@D)
	$(INIT_CC) $(CPPFLAGS) -idirafter $(INIT_KINC) -std=gnu17 $(OPT) -g $(WARN) -MMD -MP -c -o $@ $<
endif

$(BUILD)/libagentjail.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/tb/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -DAJ_TEST_BUILD $(CFLAGS) -c -o $@ $<

# The seccomp filter is compiled once, here (doc/design.md §3): tools/seccomp_gen runs libseccomp
# on the rules of src/core/confine/seccomp_rules.c for every option set and writes the BPF as C
# arrays, so a run loads bytes and libseccomp stays out of the binary. The generator runs on the
# build machine, whose architecture is the target's. The same object serves the test build (its
# variants with the sentinel errno are rewritten at run time).
SCGEN := $(BUILD)/tools/seccomp_gen
SCGEN_OBJ := $(BUILD)/src/core/confine/seccomp_rules.o $(BUILD)/src/util/err.o \
	$(BUILD)/src/util/xalloc.o
$(SCGEN): tools/seccomp_gen.c $(SCGEN_OBJ)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(SCGEN_OBJ) $(LDLIBS)

$(SC_PREBUILT).c: $(SCGEN)
	@mkdir -p $(@D)
	$(SCGEN) >$@.tmp && mv -f $@.tmp $@

$(SC_PREBUILT).o: $(SC_PREBUILT).c
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/tests/unit/%: tests/unit/%.c $(BUILD)/libagentjail.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests/unit $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libagentjail.a $(LDLIBS) $(CMOCKA_LIBS)

# Helpers run inside jails as probes: no sanitizers (they are not our shipped code).
$(BUILD)/tests/helpers/%: tests/helpers/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -std=gnu17 -O1 -g $(WARN) -o $@ $<

# capclient stands for a Go or Rust binary without proxy support (tests/sh/88-capture.t): linked
# statically against musl, so nothing but the kernel is between it and its connects.
$(BUILD)/tests/helpers/capclient: tests/helpers/capclient.c
	@mkdir -p $(@D)
	$(INIT_CC) $(CPPFLAGS) -std=gnu17 -O1 -g $(WARN) -static -pthread -o $@ $<

# tomldump, the differential test's view of the TOML parser, links the library it tests.
$(BUILD)/tests/helpers/tomldump: tests/helpers/tomldump.c $(BUILD)/libagentjail.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libagentjail.a $(LDLIBS)

# Fuzz targets: libFuzzer under clang when FUZZ=1, else a replay main over the corpus.
$(BUILD)/tests/fuzz/%: tests/fuzz/%.c tests/fuzz/replay.c $(BUILD)/libagentjail.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< tests/fuzz/replay.c $(BUILD)/libagentjail.a $(LDLIBS)

unit-check: $(UNIT_BIN)

# warnings are errors under clang too: build the binary with it as part of `make check`
# The unit tests' C, compiled for its warnings only (clang-build runs it with clang: linking
# them all again would cost `make check` ~15 s for no more warnings).
unit-syntax:
	$(CC) $(CPPFLAGS) -Itests/unit -std=gnu17 $(WARN) $(PKG_CFLAGS) $(CURL_CFLAGS) -fsyntax-only \
	  $(UNIT_SRC)

clang-build:
	@if command -v clang >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory CC=clang INIT_CC=clang BUILD=build/clang SAN= \
	    build/clang/agentjail build/clang/agentjail-init build/clang/agentjail-remote \
	    build/clang/agentjail-tls unit-syntax \
	    >/dev/null && echo "clang build: ok (-Wall -Wextra -Werror; the unit tests checked too)"; \
	else echo "clang build: skipped, clang not installed"; fi

# libFuzzer (clang): `make fuzz FUZZ_SECONDS=60` explores beyond the replayed corpus, each
# target (FUZZ_TARGETS=fuzz_http for one) from tests/fuzz/corpus/<target> when it exists.
FUZZ_SECONDS ?= 30
FUZZ_TARGETS ?= $(FUZZ_SRC:tests/fuzz/%.c=%)
fuzz: $(SC_PREBUILT).c
	@set -e; for t in $(FUZZ_TARGETS); do \
	  c=tests/fuzz/corpus/$$t; [ -d $$c ] || c=tests/fuzz/corpus; \
	  mkdir -p build/fuzz/corpus/$$t; \
	  clang $(CPPFLAGS) -std=gnu17 -g -O1 -fsanitize=fuzzer,address,undefined \
	    -o build/fuzz/$$t tests/fuzz/$$t.c $(filter-out src/main.c,$(LIB_SRC)) $(SC_PREBUILT).c $(PKG_LIBS); \
	  echo "== $$t ($$c)"; \
	  build/fuzz/$$t -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -artifact_prefix=build/fuzz/ \
	    build/fuzz/corpus/$$t $$c >build/fuzz/$$t.log 2>&1 \
	    || { tail -40 build/fuzz/$$t.log; exit 1; }; \
	  tail -3 build/fuzz/$$t.log; \
	done

# `make check` first installs missing Debian packages, then builds and tests in a fresh make
# (pkg-config flags are read when the Makefile is parsed, so after the install).
check: deps-test
	@$(MAKE) --no-print-directory test

# The test files run CHECK_JOBS at a time (prove -j): each has its own temporary directory,
# user, state directories, sockets and markers (tests/sh/lib.sh), and those that change what
# every root jail masks (CHECK_SEQ: a root-only file made, replaced by rename and removed in
# /etc, /opt or /usr/local) run after all the others, one at a time: another file's jail
# planned to mask such a file fails to start when it vanishes before bwrap mounts over it.
# The slowest start first (CHECK_FIRST, by a run's --timer figures: none is left alone at the
# end). The real agents from npm (41, 61, 83, 89, 98, 99) are installed once for the run
# (lib.sh's aj_npm_shared, in AJ_SUITE_DIR) by a process started beside prove; 61, the
# longest, runs its other checks meanwhile. The last line is the suite's wall time.
CHECK_JOBS ?= 4
CHECK_SEQ := tests/sh/08-etc-race.t tests/sh/08-host-race.t tests/sh/64-rootonly.t
CHECK_FIRST := $(addprefix tests/sh/,61-agent-persist.t 99-container.t 98-landlock-agents.t \
	89-secrets-claude.t 66-review.t 20-doctor.t 70-toolchains.t \
	71-compat.t 41-real-agents.t 83-net-claude.t 96-escapes.t 97-opensandbox-run.t \
	82-net-allow.t 81-netlog.t 98-landlock-backend.t 50-sessions.t 24-teardown.t 30-verify.t \
	97-opensandbox-remote.t 03-fs.t 63-watch.t 97-opensandbox-standin.t 60-git-persist.t \
	11-signals.t 96-viol-order.t 10-tty.t)
SH_TESTS := $(sort $(wildcard tests/sh/*.t))
CHECK_PAR := $(filter $(SH_TESTS),$(CHECK_FIRST)) $(filter-out $(CHECK_FIRST) $(CHECK_SEQ),$(SH_TESTS))
SUITE_DIR := $(abspath $(BUILD))/suite
TEST_ENV = AJ_BUILD=$(abspath $(BUILD)) AJ_SRC=$(abspath .) AJ_SAN=$(SAN) \
	AJ_SUITE_DIR=$(SUITE_DIR) CMOCKA_MESSAGE_OUTPUT=TAP
BENCH_BIN := $(addprefix $(BUILD)/bench/,startup proxy mounts initexec capture tlsinspect store)
# the benchmarks are built (not run) too: an interface they call that changed breaks the check,
# not a later `make bench`
test: $(BIN) $(TESTBIN) $(INIT) $(REMOTE) $(TLS) $(UNIT_BIN) $(HELPER_BIN) $(FUZZ_BIN) $(BENCH_BIN) \
		clang-build man
	@rm -rf $(SUITE_DIR)
	@t0=$$(date +%s); \
	  $(TEST_ENV) bash -c '. tests/sh/lib.sh && aj_npm_shared >/dev/null' & npm=$$!; \
	  $(TEST_ENV) prove -f --timer -j$(CHECK_JOBS) \
	  $(foreach t,$(CHECK_PAR) $(UNIT_BIN) $(FUZZ_BIN),--rules=par=$(t)) \
	  $(CHECK_PAR) $(UNIT_BIN) $(FUZZ_BIN) $(CHECK_SEQ); rc=$$?; \
	  wait $$npm; t=$$(( $$(date +%s) - t0 )); \
	  echo "test suite: $$((t / 60)) min $$((t % 60)) s wall time, $(CHECK_JOBS) files at a time"; \
	  exit $$rc

# A few tests while working: `make t T="tests/sh/65-limits.t build/rel/tests/unit/test_limits"`
# builds the binaries and helpers (and the unit tests named), then runs prove on T only.
T ?=
t: $(BIN) $(TESTBIN) $(INIT) $(REMOTE) $(TLS) $(HELPER_BIN) $(filter $(BUILD)/tests/%,$(T))
	@$(TEST_ENV) prove -f $(T)

$(BUILD)/bench/%: bench/%.c $(BUILD)/libagentjail.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Wno-discarded-qualifiers $(LDFLAGS) -o $@ $< $(BUILD)/libagentjail.a $(LDLIBS)

# an inspected request's cost (doc/design.md §4d): OpenSSL for its own client and server, and
# agentjail-tls beside it (where agentjail looks for it)
$(BUILD)/bench/tlsinspect: bench/tlsinspect.c $(BUILD)/libagentjail.a $(TLS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(OPENSSL_CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libagentjail.a \
		$(LDLIBS) $(OPENSSL_LIBS) -lpthread
	@cp -f $(TLS) $(@D)/agentjail-tls

# Benchmarks print ratios against a baseline run side by side; they run in a scratch
# workspace so the user's tree is not touched. bench/startup.sh runs the start-up figures as
# root and as an unprivileged user; bench/mounts what each bwrap mount costs; bench/capture
# the captured direct connections of --net allow against the same client unjailed;
# bench/review.sh diff and apply of 10,000 changed files under --fs review.
bench: $(BIN) $(INIT) $(BENCH_BIN)
	@bench/startup.sh $(abspath $(BUILD))
	@bench/review.sh $(abspath $(BUILD))
	@$(BUILD)/bench/mounts 15
	@$(BUILD)/bench/proxy 9 1024
	@$(BUILD)/bench/capture $(abspath $(BIN)) 1024 1000 11
	@$(BUILD)/bench/initexec $(abspath $(INIT)) 200
	@$(BUILD)/bench/tlsinspect 40 25

# Manual pages from doc/*.scd (scdoc, in scripts/deps.sh); tests/sh/91-man.t and 93-man1.t check them.
MAN_SRC := $(wildcard doc/*.[1-8].scd)
MAN_PAGES := $(MAN_SRC:doc/%.scd=build/man/%)
man:
	@if command -v scdoc >/dev/null 2>&1; then $(MAKE) --no-print-directory $(MAN_PAGES); \
	else echo "man: skipped, scdoc not installed (make deps)"; fi

build/man/%: doc/%.scd
	@mkdir -p $(@D)
	scdoc <$< >$@.tmp && mv -f $@.tmp $@

# `make install` puts the binary, the jail's init (PREFIX/libexec/agentjail/init, where
# agentjail at PREFIX/bin looks for it), the remote backend (PREFIX/libexec/agentjail/remote,
# the same way), the TLS inspector (PREFIX/libexec/agentjail/tls, the same way), the manual pages and the shell completions under
# $(DESTDIR)$(PREFIX); `make uninstall` removes exactly those files (and the directories that
# are left empty under a DESTDIR staging tree; with no DESTDIR, only libexec/agentjail, which is
# ours alone).
# tests/sh/93-install.t checks both.
BASH_COMP_DIR := $(PREFIX)/share/bash-completion/completions
ZSH_COMP_DIR := $(PREFIX)/share/zsh/site-functions
FISH_COMP_DIR := $(PREFIX)/share/fish/vendor_completions.d
INIT_DIR := $(PREFIX)/libexec/agentjail
# agentjail's AppArmor profile (Ubuntu's restriction of unprivileged user namespaces, doc/design.md
# §4c): APPARMOR=auto installs it where /etc/apparmor.d exists and apparmor_parser accepts it,
# 1 always (a package build), 0 never; scripts/apparmor.sh says what it did and loads it.
APPARMOR ?= auto
APPARMOR_DIR ?= /etc/apparmor.d
INSTALLED := $(PREFIX)/bin/agentjail $(INIT_DIR)/init $(INIT_DIR)/remote $(INIT_DIR)/tls \
	$(foreach m,$(MAN_PAGES),$(PREFIX)/share/man/man$(subst .,,$(suffix $(m)))/$(notdir $(m))) \
	$(if $(wildcard contrib/completions/agentjail.bash),$(BASH_COMP_DIR)/agentjail) \
	$(if $(wildcard contrib/completions/_agentjail),$(ZSH_COMP_DIR)/_agentjail) \
	$(if $(wildcard contrib/completions/agentjail.fish),$(FISH_COMP_DIR)/agentjail.fish)

install: $(BIN) $(INIT) $(REMOTE) $(TLS) $(MAN_PAGES)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(INIT_DIR)
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/agentjail
	install -m 0755 $(INIT) $(DESTDIR)$(INIT_DIR)/init
	install -m 0755 $(REMOTE) $(DESTDIR)$(INIT_DIR)/remote
	install -m 0755 $(TLS) $(DESTDIR)$(INIT_DIR)/tls
	@for m in $(MAN_PAGES); do s=$${m##*.}; \
	  install -d $(DESTDIR)$(PREFIX)/share/man/man$$s && \
	  install -m 0644 $$m $(DESTDIR)$(PREFIX)/share/man/man$$s/ || exit 1; done
	@if [ -f contrib/completions/agentjail.bash ]; then install -d $(DESTDIR)$(BASH_COMP_DIR) && \
	  install -m 0644 contrib/completions/agentjail.bash $(DESTDIR)$(BASH_COMP_DIR)/agentjail; fi
	@if [ -f contrib/completions/_agentjail ]; then install -d $(DESTDIR)$(ZSH_COMP_DIR) && \
	  install -m 0644 contrib/completions/_agentjail $(DESTDIR)$(ZSH_COMP_DIR)/_agentjail; fi
	@if [ -f contrib/completions/agentjail.fish ]; then install -d $(DESTDIR)$(FISH_COMP_DIR) && \
	  install -m 0644 contrib/completions/agentjail.fish $(DESTDIR)$(FISH_COMP_DIR)/agentjail.fish; fi
	@echo "installed under $(DESTDIR)$(PREFIX): $(INSTALLED)"
	@scripts/apparmor.sh install "$(DESTDIR)" "$(APPARMOR_DIR)" "$(PREFIX)/bin/agentjail" "$(APPARMOR)"

uninstall:
	@for f in $(INSTALLED); do \
	  if [ -e "$(DESTDIR)$$f" ] || [ -L "$(DESTDIR)$$f" ]; then rm -f "$(DESTDIR)$$f" && echo "removed $(DESTDIR)$$f" || exit 1; fi; \
	  d=$$(dirname "$$f"); [ -n "$(DESTDIR)" ] || continue; \
	  while [ "$$d" != / ] && [ "$$d" != . ] && rmdir "$(DESTDIR)$$d" 2>/dev/null; do d=$$(dirname "$$d"); done; \
	done
	@if [ -d "$(DESTDIR)$(INIT_DIR)" ]; then rmdir "$(DESTDIR)$(INIT_DIR)" 2>/dev/null || true; fi
	@scripts/apparmor.sh uninstall "$(DESTDIR)" "$(APPARMOR_DIR)"
	@if [ -n "$(DESTDIR)" ] && [ -d "$(DESTDIR)$(APPARMOR_DIR)" ]; then d="$(APPARMOR_DIR)"; \
	  while [ "$$d" != / ] && rmdir "$(DESTDIR)$$d" 2>/dev/null; do d=$$(dirname "$$d"); done; fi

deps:
	@./scripts/deps.sh
deps-test:
	@./scripts/deps.sh --test

run: deps
	@$(MAKE) --no-print-directory agentjail
	./agentjail run -- $${SHELL:-/bin/bash}

format:
	clang-format -i $$(find src tests -name '*.[ch]')

clean:
	rm -rf build agentjail agentjail-init agentjail-remote agentjail-tls

-include $(shell find build -name '*.d' 2>/dev/null)
