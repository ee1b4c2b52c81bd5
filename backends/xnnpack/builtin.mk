# backends/xnnpack/builtin.mk - the `xnnpack` built-in backend: the system XNNPACK (Debian's libxnnpack-dev, with
# libpthreadpool-dev and libcpuinfo-dev) behind an adapter. Built only when the library's header is installed;
# exec/backends.def registers it under #ifdef PAR_HAVE_XNNPACK.
ifneq ($(wildcard /usr/include/xnnpack.h),)
XNN_SRC := $(wildcard backends/xnnpack/*.c)
XNN_VERSION := $(shell dpkg-query -W -f='$${Version}' libxnnpack-dev 2>/dev/null)
BUILTIN_SRC += $(XNN_SRC)
BUILTIN_CPPFLAGS += -DPAR_HAVE_XNNPACK
BUILTIN_LIBS += -lXNNPACK -lpthreadpool -lcpuinfo -lm
$(XNN_SRC:%.c=$(BUILD)/obj/%.o): CPPFLAGS += -DPAR_XNN_VERSION='"$(or $(XNN_VERSION),unknown)"'
else
$(if $(filter deps check run bench,$(MAKECMDGOALS)),,$(info xnnpack backend not built: /usr/include/xnnpack.h is missing (make deps installs libxnnpack-dev)))
endif
