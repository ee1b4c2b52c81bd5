# backends/xnnpack/builtin.mk - the `xnnpack` built-in backend: the system XNNPACK (Debian's libxnnpack-dev, with
# libpthreadpool-dev and libcpuinfo-dev) behind an adapter. Built only when the library's header is installed;
# exec/backends.def registers it under #ifdef PAR_HAVE_XNNPACK.
# For aarch64 the arm64 library is the private sysroot's (make deps: tools/deps_aarch64.sh), its version in a file.
ifeq ($(ARCH),aarch64)
XNN_HAVE := $(and $(wildcard /usr/include/xnnpack.h),$(wildcard $(SYSROOT_LIBDIR)/libXNNPACK.so))
XNN_VERSION := $(shell cat $(AARCH64_SYSROOT)/libxnnpack-dev.version 2>/dev/null)
else
XNN_HAVE := $(wildcard /usr/include/xnnpack.h)
XNN_VERSION := $(shell dpkg-query -W -f='$${Version}' libxnnpack-dev 2>/dev/null)
endif
ifneq ($(XNN_HAVE),)
XNN_SRC := $(wildcard backends/xnnpack/*.c)
BUILTIN_SRC += $(XNN_SRC)
BUILTIN_CPPFLAGS += -DPAR_HAVE_XNNPACK
BUILTIN_LIBS += -lXNNPACK -lpthreadpool -lcpuinfo -lm
$(XNN_SRC:%.c=$(BUILD)/obj/%.o): CPPFLAGS += -DPAR_XNN_VERSION='"$(or $(XNN_VERSION),unknown)"'
else
$(call not_built,xnnpack,$(if $(filter aarch64,$(ARCH)),the arm64 libXNNPACK.so is not in $(AARCH64_SYSROOT) (make deps fetches it),/usr/include/xnnpack.h is missing (make deps installs libxnnpack-dev)))
endif
