build/tests/test_ref_conv: tests/test_ref_conv.c harness/graph.h \
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
