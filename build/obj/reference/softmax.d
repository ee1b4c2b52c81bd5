build/obj/reference/softmax.o: reference/softmax.c reference/reference.h \
 reference/../harness/ops.h reference/../harness/parity_backend.h \
 reference/../harness/ops.def reference/../harness/ops.def
reference/reference.h:
reference/../harness/ops.h:
reference/../harness/parity_backend.h:
reference/../harness/ops.def:
reference/../harness/ops.def:
