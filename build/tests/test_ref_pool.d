build/tests/test_ref_pool: tests/test_ref_pool.c harness/graph.h \
 harness/ops.h harness/parity_backend.h harness/ops.def \
 reference/reference.h reference/../harness/ops.h \
 reference/../harness/ops.def tests/tmain.h
harness/graph.h:
harness/ops.h:
harness/parity_backend.h:
harness/ops.def:
reference/reference.h:
reference/../harness/ops.h:
reference/../harness/ops.def:
tests/tmain.h:
