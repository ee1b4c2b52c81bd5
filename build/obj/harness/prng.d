build/obj/harness/prng.o: harness/prng.c harness/prng.h
harness/prng.h:
