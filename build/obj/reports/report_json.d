build/obj/reports/report_json.o: reports/report_json.c harness/report.h \
 harness/exec.h harness/result.h harness/parity_backend.h
harness/report.h:
harness/exec.h:
harness/result.h:
harness/parity_backend.h:
