build/obj/harness/ops.o: harness/ops.c harness/ops.h \
 harness/parity_backend.h harness/ops.def \
 harness/../reference/reference.h harness/../reference/../harness/ops.h \
 harness/../reference/../harness/ops.def harness/sweep.h harness/case.h \
 harness/graph.h
harness/ops.h:
harness/parity_backend.h:
harness/ops.def:
harness/../reference/reference.h:
harness/../reference/../harness/ops.h:
harness/../reference/../harness/ops.def:
harness/sweep.h:
harness/case.h:
harness/graph.h:
