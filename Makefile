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
# libcurl (the opensandbox backend, src/core/remote/) is linked dynamically: its static archive
# would pull in TLS, HTTP/2, IDN, LDAP, … archives Debian does not all ship
CURL_CFLAGS := $(shell $(PKG_CONFIG) --cflags libcurl 2>/dev/null)
CURL_LIBS := $(shell $(PKG_CONFIG) --libs libcurl 2>/dev/null)

CPPFLAGS += -D_GNU_SOURCE -Isrc
CFLAGS ?= $(OPT) -g
CFLAGS += -std=gnu17 $(WARN) $(SANFLAGS) $(PKG_CFLAGS) $(CURL_CFLAGS) -MMD -MP
LDFLAGS += $(SANFLAGS)
LDLIBS += $(PKG_LIBS) $(CURL_LIBS)

LIB_SRC := $(sort $(shell find src -name '*.c' ! -name main.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
TB_OBJ := $(LIB_SRC:%.c=$(BUILD)/tb/%.o) $(BUILD)/tb/src/main.o
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/unit/%)
HELPER_SRC := $(sort $(wildcard tests/helpers/*.c))
HELPER_BIN := $(HELPER_SRC:tests/helpers/%.c=$(BUILD)/tests/helpers/%)
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/tests/fuzz/%)
BIN := $(BUILD)/agentjail
TESTBIN := $(BUILD)/agentjail-testbuild

.PHONY: all check test unit-check clean install uninstall deps run bench format fuzz clang-build man
all: agentjail

agentjail: $(BIN)
ifneq ($(SAN),1)
	@cp -f $(BIN) $@
else
	@true
endif

$(BIN): $(BUILD)/src/main.o $(BUILD)/libagentjail.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(TESTBIN): $(TB_OBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/libagentjail.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/tb/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -DAJ_TEST_BUILD $(CFLAGS) -c -o $@ $<

$(BUILD)/tests/unit/%: tests/unit/%.c $(BUILD)/libagentjail.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests/unit $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libagentjail.a $(LDLIBS) $(CMOCKA_LIBS)

# Helpers run inside jails as probes: no sanitizers (they are not our shipped code).
$(BUILD)/tests/helpers/%: tests/helpers/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -std=gnu17 -O1 -g $(WARN) -o $@ $<

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
clang-build:
	@if command -v clang >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory CC=clang BUILD=build/clang SAN= build/clang/agentjail \
	    >/dev/null && echo "clang build: ok (-Wall -Wextra -Werror)"; \
	else echo "clang build: skipped, clang not installed"; fi

# libFuzzer (clang): `make fuzz FUZZ_SECONDS=60` explores beyond the replayed corpus, each
# target (FUZZ_TARGETS=fuzz_http for one) from tests/fuzz/corpus/<target> when it exists.
FUZZ_SECONDS ?= 30
FUZZ_TARGETS ?= $(FUZZ_SRC:tests/fuzz/%.c=%)
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
	  c=tests/fuzz/corpus/$$t; [ -d $$c ] || c=tests/fuzz/corpus; \
	  mkdir -p build/fuzz/corpus/$$t; \
	  clang $(CPPFLAGS) -std=gnu17 -g -O1 -fsanitize=fuzzer,address,undefined \
	    -o build/fuzz/$$t tests/fuzz/$$t.c $(filter-out src/main.c,$(LIB_SRC)) $(PKG_LIBS) $(CURL_LIBS); \
	  echo "== $$t ($$c)"; \
	  build/fuzz/$$t -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -artifact_prefix=build/fuzz/ \
	    build/fuzz/corpus/$$t $$c >build/fuzz/$$t.log 2>&1 \
	    || { tail -40 build/fuzz/$$t.log; exit 1; }; \
	  tail -3 build/fuzz/$$t.log; \
	done

# `make check` first installs missing Debian packages, then builds and tests in a fresh make
# (pkg-config flags are read when the Makefile is parsed, so after the install).
check: deps
	@$(MAKE) --no-print-directory test

test: $(BIN) $(TESTBIN) $(UNIT_BIN) $(HELPER_BIN) $(FUZZ_BIN) clang-build man
	@AJ_BUILD=$(abspath $(BUILD)) AJ_SRC=$(abspath .) AJ_SAN=$(SAN) \
	  CMOCKA_MESSAGE_OUTPUT=TAP \
	  prove -f $(UNIT_BIN) $(FUZZ_BIN) $(sort $(wildcard tests/sh/*.t))

$(BUILD)/bench/%: bench/%.c $(BUILD)/libagentjail.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Wno-discarded-qualifiers $(LDFLAGS) -o $@ $< $(BUILD)/libagentjail.a $(LDLIBS)

# Benchmarks print ratios against a baseline run side by side; they run in a scratch
# workspace so the user's tree is not touched.
bench: $(BIN) $(BUILD)/bench/startup $(BUILD)/bench/proxy
	@d=$$(mktemp -d) && cd $$d && $(abspath $(BUILD))/bench/startup $(abspath $(BIN)) 40 && \
	  $(abspath $(BUILD))/bench/startup $(abspath $(BIN)) 30 --net allow; \
	  rc=$$?; rm -rf $$d; exit $$rc
	@$(BUILD)/bench/proxy 9 256

# Manual pages from doc/*.scd (scdoc, in scripts/deps.sh); tests/sh/91-man.t and 93-man1.t check them.
MAN_SRC := $(wildcard doc/*.[1-8].scd)
MAN_PAGES := $(MAN_SRC:doc/%.scd=build/man/%)
man:
	@if command -v scdoc >/dev/null 2>&1; then $(MAKE) --no-print-directory $(MAN_PAGES); \
	else echo "man: skipped, scdoc not installed (make deps)"; fi

build/man/%: doc/%.scd
	@mkdir -p $(@D)
	scdoc <$< >$@.tmp && mv -f $@.tmp $@

# `make install` puts the binary, the manual pages and the shell completions under
# $(DESTDIR)$(PREFIX); `make uninstall` removes exactly those files (and the directories that
# are left empty under a DESTDIR staging tree; with no DESTDIR, directories stay).
# tests/sh/93-install.t checks both.
BASH_COMP_DIR := $(PREFIX)/share/bash-completion/completions
ZSH_COMP_DIR := $(PREFIX)/share/zsh/site-functions
FISH_COMP_DIR := $(PREFIX)/share/fish/vendor_completions.d
INSTALLED := $(PREFIX)/bin/agentjail \
	$(foreach m,$(MAN_PAGES),$(PREFIX)/share/man/man$(subst .,,$(suffix $(m)))/$(notdir $(m))) \
	$(if $(wildcard contrib/completions/agentjail.bash),$(BASH_COMP_DIR)/agentjail) \
	$(if $(wildcard contrib/completions/_agentjail),$(ZSH_COMP_DIR)/_agentjail) \
	$(if $(wildcard contrib/completions/agentjail.fish),$(FISH_COMP_DIR)/agentjail.fish)

install: $(BIN) $(MAN_PAGES)
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/agentjail
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

uninstall:
	@for f in $(INSTALLED); do \
	  if [ -e "$(DESTDIR)$$f" ] || [ -L "$(DESTDIR)$$f" ]; then rm -f "$(DESTDIR)$$f" && echo "removed $(DESTDIR)$$f" || exit 1; fi; \
	  d=$$(dirname "$$f"); [ -n "$(DESTDIR)" ] || continue; \
	  while [ "$$d" != / ] && [ "$$d" != . ] && rmdir "$(DESTDIR)$$d" 2>/dev/null; do d=$$(dirname "$$d"); done; \
	done

deps:
	@./scripts/deps.sh

run: deps
	@$(MAKE) --no-print-directory agentjail
	./agentjail run -- $${SHELL:-/bin/bash}

format:
	clang-format -i $$(find src tests -name '*.[ch]')

clean:
	rm -rf build agentjail

-include $(shell find build -name '*.d' 2>/dev/null)
