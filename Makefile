# parity - cross-backend conformance and fuzz test harness for on-device ML runtimes.
#
#   make deps     install the Debian packages parity needs (as root; idempotent)
#   make          build build/parity, the plugins and the tests
#   make check    unit tests + the quick conformance suite on the example plugin
#   make run      the default suite on every usable backend; summary on screen, out/report.json
#   make bench    latency benchmarks
#   make install  PREFIX=/usr/local DESTDIR=
#   SANITIZE=address,undefined make check    everything built with sanitizers (in build/san)

CC      ?= cc
PREFIX  ?= /usr/local
SANITIZE ?=
JOBS    ?= 2

ifeq ($(SANITIZE),)
BUILD   := build
else
BUILD   := build/san
endif

PKGS    := json-c cunit
DEB_PKGS := build-essential pkg-config libjson-c-dev libcunit1-dev clang libclang-rt-dev \
            libpthreadpool-dev libcpuinfo-dev libxnnpack-dev
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs json-c 2>/dev/null)
CUNIT_LIBS := $(shell pkg-config --libs cunit 2>/dev/null)
GIT_REV := $(shell git describe --always --dirty 2>/dev/null || echo unknown)

WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
# Messages are cut to their buffers on purpose; gcc's truncation warning would flag every nested message.
ifeq ($(findstring clang,$(shell $(CC) --version 2>/dev/null)),)
WARN    += -Wno-format-truncation
endif
ifeq ($(CI),true)
WARN    += -Werror
endif
OPT     ?= -O2 -g
SANFLAGS := $(if $(SANITIZE),-fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=undefined,)
CPPFLAGS += -D_GNU_SOURCE -I. -DPAR_GIT_REV='"$(GIT_REV)"' \
            -DPAR_SOURCE_DIR='"$(CURDIR)"' -DPAR_DATA_DIR='"$(PREFIX)/share/parity"'
CFLAGS  += -std=c11 $(OPT) $(WARN) $(SANFLAGS) -fPIC $(PKG_CFLAGS) -MMD -MP
LDFLAGS += $(SANFLAGS)
LDLIBS  += $(PKG_LIBS) -ldl -lpthread -lm

CORE_SRC := $(wildcard core/*.c) $(wildcard reference/*.c) $(wildcard cases/*.c) $(wildcard cases/ops/*.c) \
            $(wildcard oracle/*.c) $(wildcard exec/*.c) $(wildcard runner/*.c) $(wildcard reports/*.c) \
            $(filter-out cli/main.c,$(wildcard cli/*.c))

# Built-in backends: each backends/<name>/builtin.mk appends its sources to BUILTIN_SRC and its libraries to
# BUILTIN_LIBS, sets per-object flags (SIMD, compiler) with target-specific variables on $(BUILD)/obj/..., and may
# add -D flags to BUILTIN_CPPFLAGS; its one registration line is in exec/backends.def.
BUILTIN_SRC :=
BUILTIN_LIBS :=
BUILTIN_CPPFLAGS :=
include $(sort $(wildcard backends/*/builtin.mk))
CORE_SRC += $(BUILTIN_SRC)
CPPFLAGS += $(BUILTIN_CPPFLAGS)
LDLIBS  := $(BUILTIN_LIBS) $(LDLIBS)
CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/obj/%.o)
MAIN_OBJ := $(BUILD)/obj/cli/main.o
LIB      := $(BUILD)/libparity.a
EXE      := $(BUILD)/parity

# Plugins: every backends/<name>/ with a plugin.mk is built as build/plugins/libparity_<name>.so.
PLUGIN_DIRS := $(patsubst backends/%/plugin.mk,%,$(wildcard backends/*/plugin.mk))
PLUGINS  := $(PLUGIN_DIRS:%=$(BUILD)/plugins/libparity_%.so)
EXAMPLE_PLUGIN := $(BUILD)/plugins/libparity_example.so

TEST_SRC := $(wildcard tests/test_*.c)
TESTS    := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)

.PHONY: all deps check unit-check conformance-check run bench install clean fuzz
all: $(EXE) $(PLUGINS) $(TESTS)

deps:
	@missing=""; for p in $(DEB_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" != 0 ]; then echo "make deps: missing Debian packages:$$missing (run 'make deps' as root)"; exit 1; fi; \
	  echo "make deps: installing$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
	fi

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(LIB): $(CORE_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(EXE): $(MAIN_OBJ) $(LIB)
	$(CC) $(LDFLAGS) $^ -o $@ $(LDLIBS)

# A plugin sees only the public header, as a plugin built outside this tree would.
.SECONDEXPANSION:
$(BUILD)/plugins/libparity_%.so: $$(wildcard backends/$$*/*.c backends/$$*/*.h) core/parity_backend.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(OPT) $(WARN) $(SANFLAGS) -fPIC -shared -Icore $(filter %.c,$^) -o $@ -lm

$(BUILD)/tests/%: tests/%.c $(LIB) $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $< $(LIB) -o $@ $(LDFLAGS) $(CUNIT_LIBS) $(LDLIBS)

include tests/plugins/plugins.mk

unit-check: $(TESTS) $(TEST_PLUGINS) $(EXE) $(PLUGINS)
	@fail=0; for t in $(TESTS); do \
	  if ! $$t; then echo "FAILED: $$t"; fail=1; fi; \
	done; exit $$fail

# The quick suite on the example plugin, on cpu with its SIMD and its scalar kernels, and on qnnpack with each
# kernel variant forced in turn (a variant this machine lacks falls back to the best one it has).
CHECK_BACKENDS ?= example,cpu,cpu[kernels=scalar],qnnpack,qnnpack[kernels=avx2],qnnpack[kernels=scalar]
conformance-check: $(EXE) $(EXAMPLE_PLUGIN)
	$(EXE) run --suite quick --plugin $(EXAMPLE_PLUGIN) -b '$(CHECK_BACKENDS)' -j $(JOBS) --repeat 2 \
	  --no-progress --out $(BUILD)/check

check: deps
	$(MAKE) all
	$(MAKE) unit-check
	$(MAKE) conformance-check

run: deps
	$(MAKE) all
	@# Exit code 1 means the run completed and found conformance failures: that is the job's result (see the
	@# summary and out/report.json), not a failure of the command. Usage (2) and internal (3) errors still fail.
	@$(EXE) run --suite default --plugin $(EXAMPLE_PLUGIN) -j $(JOBS) --max-failures 10 --out out; rc=$$?; \
	if [ $$rc -eq 1 ]; then echo "make run: conformance failures found (listed above; details in out/report.json)"; \
	elif [ $$rc -ne 0 ]; then exit $$rc; fi

# The standard benchmark set: MobileNetV2 and MobileNetV3-Small side by side at 1 and 2 threads, and the GEMM
# micro-kernel against this machine's measured peak; JSON in $(BUILD)/bench/. Override the backends with e.g.
# make bench BENCH_BACKENDS=xnnpack,example BENCH_MICRO_BACKENDS=xnnpack
BENCH_BACKENDS ?= cpu$(if $(wildcard /usr/include/xnnpack.h),$(comma)xnnpack,)
BENCH_MICRO_BACKENDS ?= cpu,qnnpack
comma := ,
bench: deps
	$(MAKE) all
	@mkdir -p $(BUILD)/bench
	$(EXE) bench --model mobilenet_v2 --model mobilenet_v3_small -b $(BENCH_BACKENDS) --plugin $(EXAMPLE_PLUGIN) \
	  --threads 1 --json $(BUILD)/bench/models-threads1.json
	$(EXE) bench --model mobilenet_v2 --model mobilenet_v3_small -b $(BENCH_BACKENDS) --plugin $(EXAMPLE_PLUGIN) \
	  --threads 2 --json $(BUILD)/bench/models-threads2.json
	$(EXE) bench --model mobilenet_v2_quant -b qnnpack --threads 1 --json $(BUILD)/bench/quant-threads1.json
	$(EXE) bench --model mobilenet_v2_qs8 -b qnnpack,xnnpack --threads 1 --json $(BUILD)/bench/quant-qs8-threads1.json
	$(EXE) bench --micro gemm --micro peak -b $(BENCH_MICRO_BACKENDS) --plugin $(EXAMPLE_PLUGIN) \
	  --threads 1 --json $(BUILD)/bench/micro.json

install: $(EXE)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/include/parity $(DESTDIR)$(PREFIX)/lib/pkgconfig \
	           $(DESTDIR)$(PREFIX)/share/parity/cases/models
	install -m 755 $(EXE) $(DESTDIR)$(PREFIX)/bin/parity
	install -m 644 core/parity_backend.h $(DESTDIR)$(PREFIX)/include/parity/parity_backend.h
	$(if $(wildcard cases/models/*),install -m 644 $(wildcard cases/models/*) $(DESTDIR)$(PREFIX)/share/parity/cases/models/,)
	sed -e 's|@PREFIX@|$(PREFIX)|g' parity-backend.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/parity-backend.pc

# libFuzzer targets (clang): make fuzz builds build/fuzz/fuzz_case; fuzz/Makefile.inc has the run targets.
include fuzz/Makefile.inc
fuzz: fuzz-case

clean:
	rm -rf build out

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
