build/tests/test_sweep: tests/test_sweep.c harness/case.h harness/graph.h \
 harness/ops.h harness/parity_backend.h harness/ops.def harness/prng.h \
 harness/sweep.h harness/case.h tests/tmain.h
harness/case.h:
harness/graph.h:
harness/ops.h:
harness/parity_backend.h:
harness/ops.def:
harness/prng.h:
harness/sweep.h:
harness/case.h:
tests/tmain.h:
