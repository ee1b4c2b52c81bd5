build/obj/harness/main.o: harness/main.c harness/cli.h harness/runner.h \
 harness/case.h harness/graph.h harness/ops.h harness/parity_backend.h \
 harness/ops.def harness/exec.h harness/result.h
harness/cli.h:
harness/runner.h:
harness/case.h:
harness/graph.h:
harness/ops.h:
harness/parity_backend.h:
harness/ops.def:
harness/exec.h:
harness/result.h:
