build/tests/test_exec: tests/test_exec.c harness/exec.h harness/result.h \
 harness/parity_backend.h harness/graph.h harness/ops.h harness/ops.def \
 harness/report.h harness/exec.h tests/tmain.h
harness/exec.h:
harness/result.h:
harness/parity_backend.h:
harness/graph.h:
harness/ops.h:
harness/ops.def:
harness/report.h:
harness/exec.h:
tests/tmain.h:
