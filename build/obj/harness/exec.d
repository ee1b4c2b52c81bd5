build/obj/harness/exec.o: harness/exec.c harness/exec.h harness/result.h \
 harness/parity_backend.h
harness/exec.h:
harness/result.h:
harness/parity_backend.h:
