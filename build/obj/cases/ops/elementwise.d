build/obj/cases/ops/elementwise.o: cases/ops/elementwise.c \
 cases/ops/sweep_util.h harness/case.h harness/graph.h harness/ops.h \
 harness/parity_backend.h harness/ops.def harness/graph.h harness/sweep.h \
 harness/case.h harness/prng.h
cases/ops/sweep_util.h:
harness/case.h:
harness/graph.h:
harness/ops.h:
harness/parity_backend.h:
harness/ops.def:
harness/graph.h:
harness/sweep.h:
harness/case.h:
harness/prng.h:
