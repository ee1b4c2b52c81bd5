/*
 * junit.h - a report as JUnit XML (the Ant / Jenkins junit-4 form: testsuites > testsuite > properties, testcase >
 * skipped | error | failure, system-out), for CI systems that show test results from such files. Rendered from a
 * par_report's records only. The mapping (docs/reports-junit-coverage.md):
 *
 *   one <testsuite> per backend instance, name "parity.<label>"; one <testcase> per (case, backend) record that ran:
 *   classname "parity.<label>.<ops>" (the case's ops, '+'-joined), name the case ID, time the median timed run (s)
 *     PASS          nothing inside
 *     FAIL          <failure type="FAIL" message=reason>: reason, metrics, worst element, repro command</failure>
 *     ERROR, CRASH, TIMEOUT, FLAKY
 *                   <error type="VERDICT" message=reason>: reason, repro command</error>
 *     UNSUPPORTED   <skipped message=reason/>
 *   and the backend's captured output (its last bytes) in the testcase's <system-out>.
 *
 * Every text is escaped for XML, invalid UTF-8 becomes U+FFFD and the characters XML 1.0 forbids (C0 controls other
 * than tab, LF, CR; U+FFFE, U+FFFF) become "\xNN" text or U+FFFD, so the file is well-formed whatever a backend wrote.
 */
#ifndef PAR_JUNIT_H
#define PAR_JUNIT_H

#include "report.h"

/* Write r as JUnit XML to path, atomically (core/files.h). PAR_OK, or PAR_ERROR with msg naming the file and the
 * reason. */
par_status par_report_write_junit(const par_report *r, const char *path, par_msg *msg);

/* r as JUnit XML in a malloc'ed string (the caller frees it), or NULL when out of memory. */
char *par_report_junit_text(const par_report *r);

#endif
