build/obj/harness/select.o: harness/select.c harness/runner.h \
 harness/case.h harness/graph.h harness/ops.h harness/parity_backend.h \
 harness/ops.def harness/exec.h harness/result.h harness/sweep.h
harness/runner.h:
harness/case.h:
harness/graph.h:
harness/ops.h:
harness/parity_backend.h:
harness/ops.def:
harness/exec.h:
harness/result.h:
harness/sweep.h:
