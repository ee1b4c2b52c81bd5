# backends/torch/builtin.mk - the `torch` built-in backend: PyTorch 1.13's CPU path (Debian's libtorch-dev). Two
# parts: backends/torch/torch.c, the built-in table linked into parity (C, no libtorch), and
# $(BUILD)/lib/libparity_torch.so, the C++ side over libtorch (backends/torch/torch_*.cpp), which torch.c opens with
# dlopen, so that parity, libparity.a and the tests never link libtorch. Built only when libtorch's headers are
# installed; exec/backends.def registers it under #ifdef PAR_HAVE_TORCH.
ifeq ($(ARCH_X86),)
$(call not_built_arch,torch,libtorch)
else ifneq ($(wildcard /usr/include/torch/csrc/api/include/torch/torch.h),)
TORCH_VERSION := $(shell dpkg-query -W -f='$${Version}' libtorch-dev 2>/dev/null)
TORCH_LIB := $(BUILD)/lib/libparity_torch.so
TORCH_CXX_SRC := $(wildcard backends/torch/*.cpp)
TORCH_CXX_OBJ := $(TORCH_CXX_SRC:%.cpp=$(BUILD)/torchlib/%.o)
# Line tables only (-g1 for OPT's -g): full debug information over libtorch's headers made these four files 111 of
# the 178 CPU seconds a fresh clone's `make run` builds (docs/suites.md, "The time of make run and make check");
# -g1 costs a third of it and keeps the lines of a backtrace.
TORCH_CXXFLAGS := -std=c++17 $(patsubst -g,-g1,$(OPT)) -Wall -Wextra -Wno-unused-parameter -fPIC \
                  -fvisibility=hidden $(SANFLAGS) \
                  -I. -Ibackends/torch -I/usr/include/torch/csrc/api/include -MMD -MP \
                  -DPAR_TORCH_VERSION='"$(or $(TORCH_VERSION),unknown)"'
BUILTIN_SRC += backends/torch/torch.c
BUILTIN_CPPFLAGS += -DPAR_HAVE_TORCH
$(BUILD)/obj/backends/torch/torch.o: CPPFLAGS += -DPAR_TORCH_VERSION='"$(or $(TORCH_VERSION),unknown)"' \
                                                 -DPAR_TORCH_LIB_DIR='"$(PREFIX)/lib"'

all: $(TORCH_LIB)

$(BUILD)/torchlib/%.o: %.cpp backends/torch/builtin.mk
	@mkdir -p $(dir $@)
	$(Q)$(call msg,CXX,$*.o)$(CXX) $(TORCH_CXXFLAGS) -c $< -o $@

$(TORCH_LIB): $(TORCH_CXX_OBJ)
	@mkdir -p $(dir $@)
	$(Q)$(call msg,LD,$@)$(CXX) -shared -Wl,--no-undefined $(SANFLAGS) $^ -o $@ -ltorch -ltorch_cpu -lc10

# the unit test opens the library
$(BUILD)/tests/test_torch: $(TORCH_LIB)

.PHONY: torch-install
install: torch-install
torch-install: $(TORCH_LIB)
	install -d $(DESTDIR)$(PREFIX)/lib
	install -m 755 $(TORCH_LIB) $(DESTDIR)$(PREFIX)/lib/libparity_torch.so

-include $(shell find $(BUILD)/torchlib -name '*.d' 2>/dev/null)
else
$(call not_built,torch,libtorch's headers are missing (make deps installs libtorch-dev))
endif
