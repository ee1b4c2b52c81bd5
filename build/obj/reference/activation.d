build/obj/reference/activation.o: reference/activation.c \
 reference/reference.h reference/../harness/ops.h \
 reference/../harness/parity_backend.h reference/../harness/ops.def \
 reference/../harness/ops.def reference/../harness/graph.h \
 reference/../harness/ops.h
reference/reference.h:
reference/../harness/ops.h:
reference/../harness/parity_backend.h:
reference/../harness/ops.def:
reference/../harness/ops.def:
reference/../harness/graph.h:
reference/../harness/ops.h:
