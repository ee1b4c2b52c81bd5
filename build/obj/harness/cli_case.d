build/obj/harness/cli_case.o: harness/cli_case.c harness/cli.h \
 harness/runner.h harness/case.h harness/graph.h harness/ops.h \
 harness/parity_backend.h harness/ops.def harness/exec.h harness/result.h \
 harness/tensor.h harness/../reference/reference.h \
 harness/../reference/../harness/ops.h \
 harness/../reference/../harness/ops.def
harness/cli.h:
harness/runner.h:
harness/case.h:
harness/graph.h:
harness/ops.h:
harness/parity_backend.h:
harness/ops.def:
harness/exec.h:
harness/result.h:
harness/tensor.h:
harness/../reference/reference.h:
harness/../reference/../harness/ops.h:
harness/../reference/../harness/ops.def:
