build/obj/harness/sweep.o: harness/sweep.c harness/sweep.h harness/case.h \
 harness/graph.h harness/ops.h harness/parity_backend.h harness/ops.def
harness/sweep.h:
harness/case.h:
harness/graph.h:
harness/ops.h:
harness/parity_backend.h:
harness/ops.def:
