/*
 * summary.h - the terminal summary of a run, rendered from the report's records alone (struct par_report), so a
 * report can be rendered without the run: the backend x verdict table with error/budget quantiles, the failures
 * worst first with their repro commands, and the closing line
 *     conformance: P passed, F failed, S skipped
 * (P = PASS records, F = FAIL + ERROR + CRASH + TIMEOUT + FLAKY, S = UNSUPPORTED), which `make check` sums.
 */
#ifndef PAR_SUMMARY_H
#define PAR_SUMMARY_H

#include <stdio.h>

#include "report.h"

/* color: ANSI colours for verdicts; max_failures: failures listed (the rest are counted). Every text from a case or
 * a backend is printed with control characters escaped (\xNN), so each failure stays on one line. */
void par_summary_print(FILE *f, const par_report *r, int color, int32_t max_failures);

#endif
