build/obj/harness/cli_bench.o: harness/cli_bench.c \
 harness/../reference/reference.h harness/../reference/../harness/ops.h \
 harness/../reference/../harness/parity_backend.h \
 harness/../reference/../harness/ops.def \
 harness/../reference/../harness/ops.def harness/cli.h harness/runner.h \
 harness/case.h harness/graph.h harness/ops.h harness/exec.h \
 harness/result.h harness/parity_backend.h harness/oracle.h
harness/../reference/reference.h:
harness/../reference/../harness/ops.h:
harness/../reference/../harness/parity_backend.h:
harness/../reference/../harness/ops.def:
harness/../reference/../harness/ops.def:
harness/cli.h:
harness/runner.h:
harness/case.h:
harness/graph.h:
harness/ops.h:
harness/exec.h:
harness/result.h:
harness/parity_backend.h:
harness/oracle.h:
