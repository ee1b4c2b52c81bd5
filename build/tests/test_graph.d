build/tests/test_graph: tests/test_graph.c harness/graph.h harness/ops.h \
 harness/parity_backend.h harness/ops.def tests/tmain.h
harness/graph.h:
harness/ops.h:
harness/parity_backend.h:
harness/ops.def:
tests/tmain.h:
