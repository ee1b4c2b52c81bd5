build/obj/harness/graph.o: harness/graph.c harness/graph.h harness/ops.h \
 harness/parity_backend.h harness/ops.def
harness/graph.h:
harness/ops.h:
harness/parity_backend.h:
harness/ops.def:
