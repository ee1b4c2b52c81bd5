build/tests/test_prng: tests/test_prng.c harness/prng.h tests/tmain.h
harness/prng.h:
tests/tmain.h:
