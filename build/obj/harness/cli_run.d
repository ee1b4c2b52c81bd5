build/obj/harness/cli_run.o: harness/cli_run.c harness/cli.h \
 harness/runner.h harness/case.h harness/graph.h harness/ops.h \
 harness/parity_backend.h harness/ops.def harness/exec.h harness/result.h \
 harness/sweep.h
harness/cli.h:
harness/runner.h:
harness/case.h:
harness/graph.h:
harness/ops.h:
harness/parity_backend.h:
harness/ops.def:
harness/exec.h:
harness/result.h:
harness/sweep.h:
