build/tests/test_cli: tests/test_cli.c harness/graph.h harness/ops.h \
 harness/parity_backend.h harness/ops.def tests/tmain.h
harness/graph.h:
harness/ops.h:
harness/parity_backend.h:
harness/ops.def:
tests/tmain.h:
