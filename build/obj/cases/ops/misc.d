build/obj/cases/ops/misc.o: cases/ops/misc.c cases/ops/sweep_util.h \
 harness/case.h harness/graph.h harness/ops.h harness/parity_backend.h \
 harness/ops.def harness/graph.h harness/sweep.h harness/case.h
cases/ops/sweep_util.h:
harness/case.h:
harness/graph.h:
harness/ops.h:
harness/parity_backend.h:
harness/ops.def:
harness/graph.h:
harness/sweep.h:
harness/case.h:
