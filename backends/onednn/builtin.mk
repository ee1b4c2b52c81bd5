# backends/onednn/builtin.mk - the `onednn` built-in backend: oneDNN 2.6 (Debian's libdnnl-dev) through its C API
# behind an adapter. Built only when the library's header is installed; exec/backends.def registers it under
# #ifdef PAR_HAVE_ONEDNN. Linked directly: libdnnl and its dependencies (libgomp, libOpenCL, libstdc++) add 1 to 5 ms
# to a process's start (docs/backends/onednn.md), under the 10 ms that would call for loading it lazily.
ifeq ($(ARCH_X86),)
$(call not_built_arch,onednn,libdnnl)
else ifneq ($(wildcard /usr/include/dnnl.h),)
DNNL_SRC := $(wildcard backends/onednn/*.c)
BUILTIN_SRC += $(DNNL_SRC)
BUILTIN_CPPFLAGS += -DPAR_HAVE_ONEDNN
BUILTIN_LIBS += -ldnnl
else
$(call not_built,onednn,/usr/include/dnnl.h is missing (make deps installs libdnnl-dev))
endif
