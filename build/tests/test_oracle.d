build/tests/test_oracle: tests/test_oracle.c harness/graph.h \
 harness/ops.h harness/parity_backend.h harness/ops.def harness/oracle.h \
 harness/../reference/reference.h harness/../reference/../harness/ops.h \
 harness/../reference/../harness/ops.def harness/result.h harness/prng.h \
 tests/tmain.h
harness/graph.h:
harness/ops.h:
harness/parity_backend.h:
harness/ops.def:
harness/oracle.h:
harness/../reference/reference.h:
harness/../reference/../harness/ops.h:
harness/../reference/../harness/ops.def:
harness/result.h:
harness/prng.h:
tests/tmain.h:
