build/obj/harness/plugin.o: harness/plugin.c harness/exec.h \
 harness/result.h harness/parity_backend.h harness/backends.def
harness/exec.h:
harness/result.h:
harness/parity_backend.h:
harness/backends.def:
