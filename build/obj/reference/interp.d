build/obj/reference/interp.o: reference/interp.c reference/reference.h \
 reference/../harness/ops.h reference/../harness/parity_backend.h \
 reference/../harness/ops.def reference/../harness/ops.def \
 reference/../harness/tensor.h
reference/reference.h:
reference/../harness/ops.h:
reference/../harness/parity_backend.h:
reference/../harness/ops.def:
reference/../harness/ops.def:
reference/../harness/tensor.h:
