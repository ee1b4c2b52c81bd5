/*
 * judge.h - one case on every backend instance: inputs, the reference (once per precision profile), isolated
 * execution (exec/), the oracle's verdict. Records go to a callback; this module keeps no record and prints nothing.
 */
#ifndef PAR_JUDGE_H
#define PAR_JUDGE_H

#include "runner.h"

/* Receives each finished record (done = 1) of case ci on backend b. */
typedef void (*par_emit_fn)(void *user, int32_t ci, int32_t b, const par_result *r);

/* Runs case c (case ci of the set) on every backend of cfg, through worker's fork servers when cfg has them.
 * Returns 1 when a reference or harness failure
 * happened (the run's exit code 3), else 0. */
int par_judge_case(const par_run_config *cfg, int32_t worker, int32_t ci, par_case *c, par_emit_fn emit, void *user);

/* Records of a case that could not be built: ERROR with the reason, one per backend. */
void par_judge_unbuilt(const par_run_config *cfg, int32_t ci, const char *reason, par_emit_fn emit, void *user);

#endif
