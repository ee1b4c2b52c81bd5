/*
 * localize_run.h - the localizer's one run (localize.c), shared with the reducer: the whole case and every node's
 * prefix in one par_run_cases call on cfg's one backend.
 */
#ifndef PAR_LOCALIZE_RUN_H
#define PAR_LOCALIZE_RUN_H

#include "localize.h"

/* Fills out (node -1 when no prefix fails) and *whole (may be NULL) with the whole case's record. Returns 0, or -1
 * with msg (an internal error, an interrupted run). */
int par_loc_run(const par_case *c, const par_run_config *cfg, par_divergence *out, par_result *whole, par_msg *msg);

#endif
