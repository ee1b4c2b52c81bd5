build/obj/reports/env.o: reports/env.c harness/report.h harness/exec.h \
 harness/result.h harness/parity_backend.h
harness/report.h:
harness/exec.h:
harness/result.h:
harness/parity_backend.h:
