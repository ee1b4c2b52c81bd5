build/obj/harness/oracle.o: harness/oracle.c harness/oracle.h \
 harness/../reference/reference.h harness/../reference/../harness/ops.h \
 harness/../reference/../harness/parity_backend.h \
 harness/../reference/../harness/ops.def \
 harness/../reference/../harness/ops.def harness/result.h \
 harness/parity_backend.h harness/tensor.h
harness/oracle.h:
harness/../reference/reference.h:
harness/../reference/../harness/ops.h:
harness/../reference/../harness/parity_backend.h:
harness/../reference/../harness/ops.def:
harness/../reference/../harness/ops.def:
harness/result.h:
harness/parity_backend.h:
harness/tensor.h:
