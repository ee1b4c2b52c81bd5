build/obj/harness/case_json.o: harness/case_json.c harness/case.h \
 harness/graph.h harness/ops.h harness/parity_backend.h harness/ops.def \
 harness/prng.h harness/tensor.h
harness/case.h:
harness/graph.h:
harness/ops.h:
harness/parity_backend.h:
harness/ops.def:
harness/prng.h:
harness/tensor.h:
