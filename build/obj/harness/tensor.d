build/obj/harness/tensor.o: harness/tensor.c harness/tensor.h \
 harness/parity_backend.h
harness/tensor.h:
harness/parity_backend.h:
