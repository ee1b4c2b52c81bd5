/*
 * localize_run.h - the localizer's one run (localize.c), shared with the reducer: the whole case and every node's
 * prefix in one par_run_cases call on cfg's one backend.
 */
#ifndef PAR_LOCALIZE_RUN_H
#define PAR_LOCALIZE_RUN_H

#include "localize.h"

/* The records of one case in a case set: the whole case (-1: not in the set), and node k's prefix (-1: not in the
 * set, or it could not be built). */
typedef struct par_loc_plan {
    int32_t whole;
    int32_t n_nodes;
    int32_t *slot;
} par_loc_plan;

/* Append to set (which owns them) the whole case c (when whole is 1) and the prefixes of nodes k0 .. k1 - 1. Returns
 * 0, or -1 with msg (free the plan in both cases). */
int par_loc_plan_add(par_case_set *set, const par_case *c, int32_t k0, int32_t k1, int whole, par_loc_plan *p,
                     par_msg *msg);
/* The divergence from the run of the set: with the whole case in the plan, out is reset and filled (and *whole, which
 * may be NULL); without it, out (node -1 so far, the whole case's record in out->rec) takes the first failing prefix
 * of the plan, if any. A whole case that passes (or is unsupported) has node -1. */
void par_loc_plan_read(const par_loc_plan *p, const par_case *c, const par_result *results, par_divergence *out,
                       par_result *whole);
void par_loc_plan_free(par_loc_plan *p);
/* 0 when cfg holds one backend, else -1 with msg. */
int par_loc_check_cfg(const par_run_config *cfg, par_msg *msg);
/* Run a set on cfg without a progress bar. Returns 0 (res filled), -1 (internal error) or 128 + the signal of an
 * interrupted run, with msg; res is freed on failure. */
int par_loc_run_set(const par_case_set *set, const par_run_config *cfg, par_run_result *res, par_msg *msg);

/* Fills out (node -1 when no prefix fails) and *whole (may be NULL) with the whole case's record. Returns 0, or -1
 * with msg (an internal error, an interrupted run). */
int par_loc_run(const par_case *c, const par_run_config *cfg, par_divergence *out, par_result *whole, par_msg *msg);

#endif
