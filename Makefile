# parity - cross-backend conformance and fuzz test harness for on-device ML runtimes.
#
#   make deps     install the Debian packages parity needs (as root; idempotent)
#   make          build build/parity, the plugins and the tests
#   make check    unit tests + the quick conformance suite on the example plugin; ends with one line,
#                 `check: N passed, N failed[, N skipped]` (tools/check_sum.sh), exit status 1 if anything failed
#   make unit-check / conformance-check / fuzz-check / layers-check    the parts of check on their own
#   make ARCH=aarch64                 cross-build for aarch64 into build/aarch64 (docs/aarch64.md)
#   make check-aarch64                that build's unit tests and quick suite under qemu-user, QEMU_CPU=max and
#                                     cortex-a53, and the x86-64 / aarch64 reference comparison; ends like check
#   make run      the default suite on every usable backend; summary on screen, out/report.json and out/report.html (its path printed last);
#                 builds only what the run needs (run-build: not the tests)
#   make bench    latency benchmarks
#   make install  PREFIX=/usr/local DESTDIR=
#   make fuzz     the libFuzzer targets (clang, ASan + UBSan) in build/fuzz/; make fuzz-run FUZZ_TARGET=graph
#   make nightly  the nightly fuzzing job: NIGHTLY_SECONDS=3600 SHARD=K/N (docs/fuzzing.md)
#   SANITIZE=address,undefined make check    everything built with sanitizers (in build/san)
#   make V=1 ...  print the full commands (by default one short line per step: `  CC      core/graph.o`)
#
# `make check` runs layers-check (tools/check_layers.sh on the sources and the objects: no include or call runs up
# the layers or closes a cycle), so a new upward include or cycle fails check; LAYERS_CHECK=0 leaves it out.

CC      ?= cc
PREFIX  ?= /usr/local
SANITIZE ?=
JOBS    ?= 2
V       ?= 0
LAYERS_CHECK ?= 1

# Quiet steps: $(Q) hides a command, $(call msg,TAG,what) prints the short line in its place (nothing with V=1).
# Compiler errors and warnings are not affected: they always print in full.
ifeq ($(V),1)
Q   :=
msg  =
else
Q   := @
msg  = printf '  %-7s %s\n' '$(1)' '$(2)';
endif
# The recursive make of a recipe. Make hands its job slots (-j) only to a recipe line that names $(MAKE) itself or
# starts with '+', so every line that runs $(MAKEQ) starts with '+': without it `make -j2 unit-check` ran its steps
# one at a time (the sub-make saw -j2 in MAKEFLAGS but no job server, and fell back to -j1).
MAKEQ := $(MAKE) --no-print-directory

# Target architecture: the host's (uname -m) unless ARCH= names another. ARCH=aarch64 on an x86-64 host
# cross-compiles with $(CROSS_COMPILE)gcc into build/aarch64/ (docs/aarch64.md): the arm64 json-c and CUnit of
# Debian's multiarch, and a private sysroot ($(AARCH64_SYSROOT), filled by make deps: tools/deps_aarch64.sh) for
# the arm64 libraries that cannot be installed beside the amd64 ones (pthreadpool, cpuinfo, XNNPACK). A builtin.mk whose
# backend needs x86-only libraries tests $(ARCH) (or ARCH_X86) and leaves itself out with one $(info) line.
HOST_ARCH := $(shell uname -m)
ARCH    ?= $(HOST_ARCH)
ARCH_X86 := $(filter x86_64,$(ARCH))
OBJCOPY ?= objcopy
ifeq ($(ARCH),$(HOST_ARCH))
BUILD_ROOT := build
CROSS_COMPILE :=
else
BUILD_ROOT := build/$(ARCH)
CROSS_COMPILE ?= $(ARCH)-linux-gnu-
ifneq ($(origin CC),command line)
CC      := $(CROSS_COMPILE)gcc
endif
AR      := $(CROSS_COMPILE)ar
OBJCOPY := $(CROSS_COMPILE)objcopy
# pkg-config reads the target's .pc files (Debian multiarch puts them under /usr/lib/<triplet>/pkgconfig).
export PKG_CONFIG_LIBDIR := /usr/lib/$(ARCH)-linux-gnu/pkgconfig:/usr/share/pkgconfig
endif
AARCH64_SYSROOT := build/aarch64/sysroot
ifeq ($(ARCH),aarch64)
# The private sysroot's libraries (pthreadpool, cpuinfo's link name, XNNPACK); their headers are the amd64
# packages' (identical), with the sysroot's own as a fallback.
SYSROOT_LIBDIR := $(AARCH64_SYSROOT)/usr/lib/aarch64-linux-gnu
CPPFLAGS += -idirafter $(AARCH64_SYSROOT)/usr/include
LDFLAGS += -L$(SYSROOT_LIBDIR) -Wl,-rpath-link,$(SYSROOT_LIBDIR)
endif
BUILD   := $(BUILD_ROOT)$(if $(SANITIZE),/san)

PKGS    := json-c cunit
# (clang, libclang-rt-dev: make fuzz; llvm: llvm-symbolizer, which names the lines of a sanitizer's report)
# (python3-torch: PyTorch's own NNAPI converter and runtime, run against the simulated libneuralnetworks.so by make check;
#  libonnx-testdata: ONNX's node tests, the onnx suite; python3-onnx: onnx.checker on what parity exports;
#  python3-venv: build/venv, the PyPI packages of tools/deps_py.sh)
DEB_PKGS := build-essential pkg-config libjson-c-dev libcunit1-dev clang libclang-rt-dev llvm \
            libpthreadpool-dev libcpuinfo-dev libxnnpack-dev libxml2-utils chromium \
            libvulkan-dev mesa-vulkan-drivers glslc spirv-tools vulkan-validationlayers python3-torch \
            libdnnl-dev libtorch-dev libonnx-testdata python3-onnx python3-venv
# (2>/dev/null: before `make deps` has installed them these are empty, and the build step says what is missing.)
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
            -DPAR_PREFIX_DIR='"$(PREFIX)"'
CFLAGS  += -std=c11 $(OPT) $(WARN) $(SANFLAGS) -fPIC $(PKG_CFLAGS) -MMD -MP
LDFLAGS += $(SANFLAGS)
LDLIBS  += $(PKG_LIBS) -ldl -lpthread -lm

CORE_SRC := $(wildcard core/*.c) $(wildcard reference/*.c) $(wildcard cases/*.c) $(wildcard cases/ops/*.c) \
            $(wildcard formats/*.c) \
            $(wildcard gen/*.c) $(wildcard campaign/*.c) \
            $(wildcard oracle/*.c) $(wildcard exec/*.c) $(wildcard runner/*.c) $(wildcard reports/*.c) \
            $(filter-out cli/main.c,$(wildcard cli/*.c))

# Built-in backends: each backends/<name>/builtin.mk appends its sources to BUILTIN_SRC and its libraries to
# BUILTIN_LIBS, sets per-object flags (SIMD, compiler) with target-specific variables on $(BUILD)/obj/..., and may
# add -D flags to BUILTIN_CPPFLAGS; its one registration line is in exec/backends.def.
BUILTIN_SRC :=
BUILTIN_LIBS :=
BUILTIN_CPPFLAGS :=
# Kernel files named for an ISA are built only for its architecture: *-avx2.c, *_avx2.c, *-avx512.c, *_avx512.c,
# *-vnni.c, *_vnni.c only for x86-64; *-neon.c, *_neon.c, *-neondot.c, *_neondot.c only for aarch64, where
# the first get NEON_FLAGS (NEON is baseline in armv8-a) and only the second get NEONDOT_FLAGS (the dot-product
# instructions, which run only where cpuinfo says the CPU has them). $(call arch_src,FILES) keeps those of $(ARCH).
X86_ISA_SRC := %-avx2.c %_avx2.c %-avx512.c %_avx512.c %-vnni.c %_vnni.c
ARM_ISA_SRC := %-neon.c %_neon.c %-neondot.c %_neondot.c
arch_src = $(filter-out $(if $(ARCH_X86),,$(X86_ISA_SRC)) $(if $(filter aarch64,$(ARCH)),,$(ARM_ISA_SRC)),$(1))
neon_obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(filter %-neon.c %_neon.c,$(1)))
neondot_obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(filter %-neondot.c %_neondot.c,$(1)))
NEON_FLAGS := -O3 -march=armv8-a
NEONDOT_FLAGS := -O3 -march=armv8.2-a+dotprod
comma := ,
# What a builtin.mk says when it leaves its backend out, in one wording: $(call not_built,NAME,WHY) (not said for the
# goals that install or run what is built: their own output says what ran), $(call not_built_arch,NAME,WHAT) for a
# backend that has no arm64 library WHAT.
not_built = $(if $(filter deps check run bench,$(MAKECMDGOALS)),,$(info $(1) backend not built: $(2)))
not_built_arch = $(info $(1) backend not built for $(ARCH): x86-64 builds only (no arm64 $(2) here))
# The first rule of an included builtin.mk must not become the default goal: plain `make` builds everything.
.DEFAULT_GOAL := all
include $(sort $(wildcard backends/*/builtin.mk))
CORE_SRC += $(BUILTIN_SRC)
CPPFLAGS += $(BUILTIN_CPPFLAGS)
# The built-in set (BUILTIN_CPPFLAGS: which backends are in) is recorded in a file that changes only when the set
# does, and what tests PAR_HAVE_* depends on it (exec/plugin.o, which includes exec/backends.def, and the tests that
# test it): a backend whose library appeared since the last build (make deps filling the aarch64 sysroot) is then
# registered, never left out by an object built before it.
BUILTIN_STAMP := $(BUILD)/builtin-set
$(shell mkdir -p $(BUILD) && [ "$$(cat $(BUILTIN_STAMP) 2>/dev/null)" = '$(strip $(BUILTIN_CPPFLAGS))' ] || \
  echo '$(strip $(BUILTIN_CPPFLAGS))' > $(BUILTIN_STAMP))
LDLIBS  := $(BUILTIN_LIBS) $(LDLIBS)
# The C repro of `parity reduce` names the libraries a program linking libparity.a needs, and the sanitizer flags of
# a sanitized build, whose library and plugins need them in the program too (campaign/repro.c).
$(BUILD)/obj/campaign/repro.o: CPPFLAGS += -DPAR_LINK_LIBS='"$(LDLIBS)"' -DPAR_REPRO_CFLAGS='"$(SANFLAGS)"'
# The objects that read PAR_GIT_REV are rebuilt when the revision changes (a stamp rewritten only then): a stale
# revision in runner/refcache.o would key the reference cache with an older clean revision, and a later build's
# changed reference kernels would read the older build's cached results.
REV_STAMP := $(BUILD)/git_rev.stamp
$(shell mkdir -p $(BUILD) && (echo '$(GIT_REV)' | cmp -s - $(REV_STAMP) || echo '$(GIT_REV)' > $(REV_STAMP)))
$(BUILD)/obj/runner/refcache.o $(BUILD)/obj/reports/report_json.o $(BUILD)/obj/cli/main.o: $(REV_STAMP)
CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/obj/%.o)
MAIN_OBJ := $(BUILD)/obj/cli/main.o
LIB      := $(BUILD)/libparity.a
LIB_ALL  := $(BUILD)/libparity-all.a
EXE      := $(BUILD)/parity

# Plugins: every backends/<name>/ with a plugin.mk is built as build/plugins/libparity_<name>.so.
PLUGIN_DIRS := $(patsubst backends/%/plugin.mk,%,$(wildcard backends/*/plugin.mk))
PLUGINS  := $(PLUGIN_DIRS:%=$(BUILD)/plugins/libparity_%.so)
EXAMPLE_PLUGIN := $(BUILD)/plugins/libparity_example.so

TEST_SRC := $(wildcard tests/test_*.c)
TESTS    := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
# A test tool, not a CUnit program: the reference digests tests/report/aarch64_reference.sh compares across
# architectures (make check-aarch64).
REFDIGEST := $(BUILD)/tests/refdigest

.PHONY: all deps check unit-check conformance-check fuzz-check report-check layers-check run bench install clean fuzz
all: $(EXE) $(PLUGINS) $(TESTS) $(REFDIGEST)
	@: # (a recipe, so that an up-to-date build prints nothing, not "Nothing to be done")

# Installs what is missing and is silent when everything is installed; waits for another apt process's lock
# (tools/deps.sh).
deps:
	@sh tools/deps.sh $(DEB_PKGS)
	@sh tools/deps_aarch64.sh $(AARCH64_SYSROOT)
	@sh tools/deps_py.sh build '$(RUNTIMES)'

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(Q)$(call msg,CC,$*.o)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/exec/plugin.o $(patsubst tests/%.c,$(BUILD)/tests/%,$(shell grep -l PAR_HAVE_ tests/*.c)): $(BUILTIN_STAMP)
# Two archives of the same objects. libparity.a, what the program links and `make install` installs (the C repros of
# parity reduce link it): one relocatable object whose only global symbols are the par_ API, so that no program
# linking it meets the modules' own names (cpu_, vk_, gen_, ox_, ...). libparity-all.a, what the unit tests and the
# fuzz targets link: every object as built, every symbol as its file declares it, for the tests of a module's parts.
$(LIB): $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(Q)$(call msg,AR,$@)rm -f $@ $(BUILD)/libparity.o && $(CC) -r -nostdlib -o $(BUILD)/libparity.o $^ && \
	  $(OBJCOPY) --wildcard --keep-global-symbol='par_*' $(BUILD)/libparity.o && \
	  $(AR) rcs $@ $(BUILD)/libparity.o
$(LIB_ALL): $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(Q)$(call msg,AR,$@)rm -f $@ && $(AR) rcs $@ $^

$(EXE): $(MAIN_OBJ) $(LIB)
	$(Q)$(call msg,LD,$@)$(CC) $(LDFLAGS) $^ -o $@ $(LDLIBS)

# A plugin sees only the public header, as a plugin built outside this tree would.
.SECONDEXPANSION:
$(BUILD)/plugins/libparity_%.so: $$(wildcard backends/$$*/*.c backends/$$*/*.h) core/parity_backend.h
	@mkdir -p $(dir $@)
	$(Q)$(call msg,LD,$@)$(CC) -std=c11 $(OPT) $(WARN) $(SANFLAGS) -fPIC -shared -Icore $(filter %.c,$^) -o $@ -lm

# The tests (only they) know the source tree's path: their data lives there. parity finds its files from where its
# executable is (core/paths.h).
$(BUILD)/tests/%: CPPFLAGS += -DPAR_SOURCE_DIR='"$(CURDIR)"'
$(BUILD)/tests/%: tests/%.c $(LIB_ALL) $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(Q)$(call msg,CCLD,$@)$(CC) $(CPPFLAGS) $(CFLAGS) $< $(LIB_ALL) -o $@ $(LDFLAGS) $(CUNIT_LIBS) $(LDLIBS)

include tests/plugins/plugins.mk
include nnsim/sim.mk

# `make check` and its parts are tables of steps. A step (a CUnit program, a conformance run, a report test) is one
# make target, PART-step-NAME, that runs its command through tools/check_step.sh, which shows its few lines and keeps
# its output, exit status, wall time and CPU seconds under $(CHECK_LOGS)/PART; tools/check_sum.sh then prints the
# time of every slow step, names every failed step and adds up the count lines into the closing line. Each part
# lists its steps in PART_STEPS, run $(JOBS) at a time (or as make's -j says) in the order listed, the longest
# first, and in PART_SERIAL those that measure time (a timing gate), run one at a time afterwards, alone. A new unit
# test or report test lands in its part by its file name; a new conformance step is one line in CONFORMANCE_STEPS.
# CHECK_NOSUM=1 leaves the sum to the caller.
# The steps run $(CHECK_SLOTS) at a time, one more than $(JOBS): several steps mostly wait (test_sandbox and
# test_runners on the deadlines they test, test_html on a browser, test_formats on the runtimes' imports), and with
# only $(JOBS) slots a core sat idle beside each of them (`make check` on a built tree: 350 s of steps for 373 s of
# their CPU on 2 cores; docs/suites.md, "The time of make run and make check"). A make given -j keeps its own count
# for everything.
# CHECK_SUM's third argument is the folder of the phase marks (t-start, t-built, t-steps) for the closing wall time.
CHECK_LOGS := $(BUILD)/check-logs
CHECK_SUM   = $(if $(CHECK_NOSUM),,sh tools/check_sum.sh $(if $(3),--wall $(3)) $(1) $(2))
CHECK_J     = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(JOBS))
CHECK_SLOTS ?= $(shell echo $$(($(JOBS) + 1)))
CHECK_STEP_J = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(CHECK_SLOTS))
CHECK_PARTS := unit conformance fuzz report $(if $(filter 1,$(LAYERS_CHECK)),layers)
# PART-check: that part alone, its own closing line (the prerequisites are what its steps run).
define check_part
.PHONY: $(1)-check $$($(1)_STEPS) $$($(1)_SERIAL)
$(1)-check: $(2)
	@rm -rf $$(CHECK_LOGS)/$(1) && mkdir -p $$(CHECK_LOGS)/$(1) && date +%s >$$(CHECK_LOGS)/$(1)/t-built
	+$$(Q)$$(MAKEQ) $$(CHECK_STEP_J) $$($(1)_STEPS)
	@date +%s >$$(CHECK_LOGS)/$(1)/t-steps
	$$(if $$($(1)_SERIAL),+$$(Q)$$(MAKEQ) -j1 $$($(1)_SERIAL))
	$$(Q)$$(call CHECK_SUM,$(1)-check,$$(CHECK_LOGS)/$(1),$$(CHECK_LOGS)/$(1))
endef

# The unit tests, the slowest first; test_diff, whose timing gate measures time, alone afterwards. A test too slow
# for every check is marked PAR_TEST_NIGHTLY (tests/tmain.h): a skip here, run by make nightly.
UNIT_SERIAL := test_diff
UNIT_FIRST  := test_winograd test_cli test_reduce test_onnx_roundtrip test_vulkan test_cpu_kernels
UNIT_NAMES  := $(TESTS:$(BUILD)/tests/%=%)
unit_STEPS  := $(patsubst %,unit-step-%,$(filter $(UNIT_FIRST),$(UNIT_NAMES)) \
                 $(filter-out $(UNIT_FIRST) $(UNIT_SERIAL),$(UNIT_NAMES)))
unit_SERIAL := $(patsubst %,unit-step-%,$(filter $(UNIT_SERIAL),$(UNIT_NAMES)))
$(eval $(call check_part,unit,$(TESTS) $(TEST_PLUGINS) $(EXE) $(PLUGINS)))
$(unit_STEPS) $(unit_SERIAL): unit-step-%:
	$(Q)sh tools/check_step.sh $(CHECK_LOGS)/unit $* $(BUILD)/tests/$* || :

# The conformance steps, one line each: NAME (its log and count line are conformance-NAME) and its command.
# quick: the quick suite on the example plugin, on cpu with its SIMD and its scalar kernels, and on qnnpack with each
# kernel variant forced in turn (a variant this machine lacks falls back to the best one it has); regressions: the
# reduced cases of fixed fuzzing findings (cases/regressions/README.md), when any exist; onnx: ONNX's node tests;
# vulkan, nnapi, onednn and the runtimes through their runners: each backend's own script (tools/check_*.sh), which
# skips with its reason where the backend cannot run; nnapi-torch: PyTorch's NNAPI converter and runtime on the
# simulated library.
CHECK_BACKENDS ?= example,cpu,cpu[kernels=scalar],qnnpack,qnnpack[kernels=avx2],qnnpack[kernels=scalar]
REGRESSION_CASES := $(shell find cases/regressions -name '*.json' 2>/dev/null)
CONFORMANCE_STEPS := vulkan quick nnapi onednn onnx ort litert ncnn nnapi-torch $(if $(REGRESSION_CASES),regressions)
CHECK_RUN := $(EXE) run --plugin $(EXAMPLE_PLUGIN) -j $(JOBS) --no-progress
CHECK_CMD_quick       = $(CHECK_RUN) --suite quick -b '$(CHECK_BACKENDS)' --repeat 2 --out $(BUILD)/check
CHECK_CMD_regressions = $(CHECK_RUN) cases/regressions -b '$(CHECK_BACKENDS)' --repeat 2 --out $(BUILD)/check-regressions
CHECK_CMD_onnx = sh -c 'if [ -d /usr/share/libonnx-testdata/data/node ] || [ -n "$${PARITY_ONNX_NODE_DIR:-}" ]; then \
    $(CHECK_RUN) --suite onnx -b "expected,$(CHECK_BACKENDS)" --out $(BUILD)/check-onnx; \
  else echo "SKIP onnx node tests: libonnx-testdata is not installed"; \
    echo "conformance-onnx: 0 passed, 0 failed, 1 skipped"; fi'
CHECK_CMD_vulkan = sh tools/check_vulkan.sh $(EXE) $(BUILD)/check-vulkan $(JOBS)
CHECK_CMD_nnapi  = sh tools/check_nnapi.sh $(EXE) $(BUILD)/check-nnapi $(JOBS)
CHECK_CMD_onednn = sh tools/check_onednn.sh $(EXE) $(BUILD)/check-onednn $(JOBS)
CHECK_CMD_ort    = sh tools/check_runtimes.sh $(EXE) $(BUILD)/check-ort $(JOBS) ort
CHECK_CMD_litert = sh tools/check_runtimes.sh $(EXE) $(BUILD)/check-litert $(JOBS) litert
CHECK_CMD_ncnn   = sh tools/check_runtimes.sh $(EXE) $(BUILD)/check-ncnn $(JOBS) ncnn
CHECK_CMD_nnapi-torch = sh -c 'LD_LIBRARY_PATH=$(BUILD)/lib /usr/bin/python3 tools/nnapi_torch_check.py \
    $(BUILD)/lib/libneuralnetworks.so; rc=$$?; [ $$rc = 77 ] && exit 0; exit $$rc'
conformance_STEPS := $(CONFORMANCE_STEPS:%=conformance-step-%)
$(eval $(call check_part,conformance,$(EXE) $(EXAMPLE_PLUGIN)))
$(conformance_STEPS): conformance-step-%:
	@$(call msg,RUN,conformance-$*)
	$(Q)sh tools/check_step.sh $(CHECK_LOGS)/conformance $(if $(filter nnapi-torch,$*),,conformance-)$* \
	  $(CHECK_CMD_$*) || :

# A smoke fuzzing campaign (about 20 s) on the backends of the quick step: fixed seed and count, so a finding is
# reproducible; it fails when the campaign finds anything or runs no graph (tools/check_fuzz.sh prints the count
# line). Findings are localized, not reduced (DIR/findings/<signature>/case.json is the repro).
FUZZ_CHECK_COUNT ?= 10000
fuzz_STEPS := fuzz-step-smoke
$(eval $(call check_part,fuzz,$(EXE) $(EXAMPLE_PLUGIN)))
fuzz-step-smoke:
	@$(call msg,FUZZ,--count $(FUZZ_CHECK_COUNT) --seed 1 -b $(CHECK_BACKENDS))
	@rm -rf $(BUILD)/check-fuzz
	$(Q)sh tools/check_step.sh $(CHECK_LOGS)/fuzz fuzz-smoke sh tools/check_fuzz.sh $(EXE) \
	  --plugin $(EXAMPLE_PLUGIN) -b '$(CHECK_BACKENDS)' --count $(FUZZ_CHECK_COUNT) --seed 1 -j $(JOBS) \
	  --no-reduce --no-progress --out $(BUILD)/check-fuzz || :

# The report tools end to end (tests/report/test_*.sh, tests/report/lib.sh): each runs build/parity and checks what
# it wrote with real parsers and renderers (xmllint, headless Chromium); the files they keep go to $(BUILD)/report/.
# test_worker_deadline times its workers' deadlines: alone, afterwards.
REPORT_SERIAL := test_worker_deadline
REPORT_NAMES  := $(patsubst tests/report/%.sh,%,$(sort $(wildcard tests/report/test_*.sh)))
report_STEPS  := $(patsubst %,report-step-%,$(filter-out $(REPORT_SERIAL),$(REPORT_NAMES)))
report_SERIAL := $(patsubst %,report-step-%,$(filter $(REPORT_SERIAL),$(REPORT_NAMES)))
$(eval $(call check_part,report,$(EXE) $(TEST_PLUGINS) $(EXAMPLE_PLUGIN)))
$(report_STEPS) $(report_SERIAL): report-step-%:
	$(Q)sh tools/check_step.sh $(CHECK_LOGS)/report $* env BUILD=$(BUILD) sh tests/report/$*.sh || :

# No #include and no call (object symbols) runs up the layers or closes a cycle (tools/check_layers.sh), in parity's
# objects and in those of the separately built simulated NNAPI library and libtorch bridge (absent ones are skipped).
layers_STEPS := layers-step-layers
$(eval $(call check_part,layers,$(CORE_OBJ) $(MAIN_OBJ)))
layers-step-layers:
	@$(call msg,CHECK,layers $(BUILD)/obj)
	$(Q)sh tools/check_step.sh $(CHECK_LOGS)/layers layers sh -c \
	  'sh tools/check_layers.sh $(BUILD)/obj $(BUILD)/nnsim $(BUILD)/torchlib && rc=0 || rc=$$?; \
	   if [ $$rc = 0 ]; then echo "layers: 1 passed, 0 failed"; else echo "layers: 0 passed, 1 failed"; fi; exit $$rc' || :

# Builds with $(JOBS) jobs unless make was given -j, then runs the steps of every part $(CHECK_SLOTS) at a time,
# the longest first (CHECK_FIRST: by wall time, longest processing time first, so that no long step starts last), and
# the serial ones alone; every step runs even when an earlier one failed, and the sum over all of them is the last
# line (its exit status is the check's), after the wall time of the whole check and of each phase.
CHECK_FIRST := report-step-test_formats report-step-test_planted fuzz-step-smoke report-step-test_sandbox \
               report-step-test_runners report-step-test_ncnn_export conformance-step-litert conformance-step-ort \
               report-step-test_html report-step-test_cli_edges conformance-step-nnapi report-step-test_coverage \
               report-step-test_merge conformance-step-onednn report-step-test_diff conformance-step-quick \
               conformance-step-vulkan
CHECK_STEPS := $(foreach p,$(CHECK_PARTS),$($(p)_STEPS))
check: deps
	@rm -rf $(CHECK_LOGS) && mkdir -p $(CHECK_LOGS) && date +%s >$(CHECK_LOGS)/t-start
	+@$(MAKEQ) $(CHECK_J) all
	@date +%s >$(CHECK_LOGS)/t-built
	+@$(MAKEQ) $(CHECK_STEP_J) $(filter $(CHECK_STEPS),$(CHECK_FIRST)) $(filter-out $(CHECK_FIRST),$(CHECK_STEPS))
	@date +%s >$(CHECK_LOGS)/t-steps
	$(if $(foreach p,$(CHECK_PARTS),$($(p)_SERIAL)),+@$(MAKEQ) -j1 $(foreach p,$(CHECK_PARTS),$($(p)_SERIAL)))
	@sh tools/check_sum.sh --wall $(CHECK_LOGS) check $(CHECK_PARTS:%=$(CHECK_LOGS)/%)

# The aarch64 cross-build under qemu-user (tools/check_aarch64.sh; docs/aarch64.md): also builds the native tree,
# whose parity and refdigest the reference comparison runs beside the aarch64 ones.
.PHONY: check-aarch64
check-aarch64: deps
	+@$(MAKEQ) $(CHECK_J) all
	+@$(MAKEQ) $(CHECK_J) all ARCH=aarch64 SANITIZE=
	@sh tools/check_aarch64.sh build/aarch64 $(JOBS)

# What `make run` needs built (not the unit tests, their plugins and tools, which `all` builds too): the program, the
# plugins, and the libraries backends open at run time (the simulated NNAPI library, the libtorch bridge).
RUN_NEEDS := $(EXE) $(PLUGINS) $(NNSIM_LIB) $(TORCH_LIB)
.PHONY: run-build
run-build: $(RUN_NEEDS)
	@:
run: deps
	+@$(MAKEQ) $(CHECK_J) run-build
	@# Exit code 1 means the run completed and found conformance failures: that is the job's result (see the
	@# summary and out/report.json), not a failure of the command. Usage (2) and internal (3) errors still fail.
	@$(EXE) run --suite default --plugin $(EXAMPLE_PLUGIN) -j $(JOBS) --max-failures 10 --out out; rc=$$?; \
	if [ $$rc -eq 1 ]; then echo "make run: conformance failures found (listed above; details in out/report.json)"; \
	elif [ $$rc -ne 0 ]; then exit $$rc; fi
	@$(EXE) report out/report.json --html out/report.html; rc=$$?; [ $$rc -le 1 ] || exit $$rc; \
	echo "report: out/report.html"

# The standard benchmark set: MobileNetV2 and MobileNetV3-Small side by side at 1 and 2 threads, and the GEMM
# micro-kernel against this machine's measured peak; JSON in $(BUILD)/bench/. Override the backends with e.g.
# make bench BENCH_BACKENDS=xnnpack,example BENCH_MICRO_BACKENDS=xnnpack
BENCH_BACKENDS ?= cpu$(if $(wildcard /usr/include/xnnpack.h),$(comma)xnnpack,)
BENCH_MICRO_BACKENDS ?= cpu,qnnpack
bench: deps
	+@$(MAKEQ) $(CHECK_J) all
	@mkdir -p $(BUILD)/bench
	$(EXE) bench --model mobilenet_v2 --model mobilenet_v3_small -b $(BENCH_BACKENDS) --plugin $(EXAMPLE_PLUGIN) \
	  --threads 1 --json $(BUILD)/bench/models-threads1.json
	$(EXE) bench --model mobilenet_v2 --model mobilenet_v3_small -b $(BENCH_BACKENDS) --plugin $(EXAMPLE_PLUGIN) \
	  --threads 2 --json $(BUILD)/bench/models-threads2.json
	$(EXE) bench --model mobilenet_v2_quant -b qnnpack --threads 1 --json $(BUILD)/bench/quant-threads1.json
	$(EXE) bench --model mobilenet_v2_qs8 -b qnnpack,xnnpack --threads 1 --json $(BUILD)/bench/quant-qs8-threads1.json
	$(EXE) bench --micro gemm --micro peak -b $(BENCH_MICRO_BACKENDS) --plugin $(EXAMPLE_PLUGIN) \
	  --threads 1 --json $(BUILD)/bench/micro.json

# The installed parity finds everything from where its executable is (core/paths.h): PREFIX/share/parity/cases,
# PREFIX/include/parity and PREFIX/lib/parity (libparity.a for the C repros of built-in backends, and the simulated
# libneuralnetworks.so, kept out of PREFIX/lib). The .pc file is relocatable (${pcfiledir}), so it is right under
# DESTDIR too, and its Version is the ABI's (PAR_BACKEND_API_VERSION).
PAR_ABI_VERSION = $(shell sed -n 's/^\#define PAR_BACKEND_API_VERSION \([0-9]*\)u*$$/\1/p' core/parity_backend.h)
install: $(EXE) $(LIB)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/include/parity $(DESTDIR)$(PREFIX)/lib/pkgconfig \
	           $(DESTDIR)$(PREFIX)/lib/parity $(DESTDIR)$(PREFIX)/share/parity/cases/models
	install -m 755 $(EXE) $(DESTDIR)$(PREFIX)/bin/parity
	install -m 644 $(LIB) $(DESTDIR)$(PREFIX)/lib/parity/libparity.a
	install -m 644 core/parity_backend.h $(DESTDIR)$(PREFIX)/include/parity/parity_backend.h
	$(if $(wildcard cases/models/*),install -m 644 $(wildcard cases/models/*) $(DESTDIR)$(PREFIX)/share/parity/cases/models/,)
	sed -e 's|@VERSION@|$(PAR_ABI_VERSION)|g' parity-backend.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/parity-backend.pc

# libFuzzer targets (clang): make fuzz builds every fuzz/targets/fuzz_*.c into build/fuzz/; make fuzz-run runs one
# (fuzz/Makefile.inc).
include fuzz/Makefile.inc

# The nightly job: each libFuzzer target for NIGHTLY_SHARE percent of NIGHTLY_SECONDS, then a differential campaign
# (parity fuzz) for the rest, on shard SHARD=K/N, then what make check and check-aarch64 sample or skip (the unit test
# programs with PAR_TEST_NIGHTLY tests; the aarch64 cross-build's check whole, AARCH64_CHECK=full);
# out/nightly/summary.txt; exit 1 when anything was found.
NIGHTLY_SECONDS ?= 3600
SHARD ?= 1/1
.PHONY: nightly
NIGHTLY_TESTS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(shell grep -l 'PAR_TEST_NIGHTLY()' tests/test_*.c))
nightly: deps
	+@$(MAKEQ) $(CHECK_J) $(EXE) $(PLUGINS) $(NIGHTLY_TESTS)
	+@$(MAKEQ) $(CHECK_J) fuzz
	+@$(if $(filter x86_64,$(HOST_ARCH)),$(MAKEQ) $(CHECK_J) all ARCH=aarch64 SANITIZE=,:)
	@NIGHTLY_SECONDS='$(NIGHTLY_SECONDS)' SHARD='$(SHARD)' PARITY=$(EXE) PLUGIN=$(EXAMPLE_PLUGIN) sh tools/nightly.sh

clean:
	rm -rf build out

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
