build/obj/reference/norm.o: reference/norm.c reference/reference.h \
 reference/../harness/ops.h reference/../harness/parity_backend.h \
 reference/../harness/ops.def reference/../harness/ops.def
reference/reference.h:
reference/../harness/ops.h:
reference/../harness/parity_backend.h:
reference/../harness/ops.def:
reference/../harness/ops.def:
