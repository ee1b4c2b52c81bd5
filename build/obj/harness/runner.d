build/obj/harness/runner.o: harness/runner.c harness/runner.h \
 harness/case.h harness/graph.h harness/ops.h harness/parity_backend.h \
 harness/ops.def harness/exec.h harness/result.h harness/oracle.h \
 harness/../reference/reference.h harness/../reference/../harness/ops.h \
 harness/../reference/../harness/ops.def harness/report.h harness/sweep.h
harness/runner.h:
harness/case.h:
harness/graph.h:
harness/ops.h:
harness/parity_backend.h:
harness/ops.def:
harness/exec.h:
harness/result.h:
harness/oracle.h:
harness/../reference/reference.h:
harness/../reference/../harness/ops.h:
harness/../reference/../harness/ops.def:
harness/report.h:
harness/sweep.h:
