/*
 * coverage_probe.h - what each backend claims, for `parity coverage` (reports/coverage.h tabulates): for every op
 * of the op table, small representative graphs in each dtype the op can take are run once on every backend instance
 * through the normal runner (each job in its backend child, as in `parity run`), and every answer other than
 * UNSUPPORTED counts as a claim. Also the cases of a suite counted into the table when no report is given. It must
 * not judge anything itself: the verdicts are the runner's.
 */
#ifndef PAR_COVERAGE_PROBE_H
#define PAR_COVERAGE_PROBE_H

#include "reports/coverage.h"
#include "runner.h"

typedef struct par_cov_probe_opts {
    int32_t seeds;           /* generator seeds tried per op (default 16) */
    int32_t per_dtype;       /* representative graphs kept per op and dtype (default 2) */
} par_cov_probe_opts;

void par_cov_probe_opts_default(par_cov_probe_opts *o);

/* The representative graphs, for every op: graphs of the generator (fuzz/gen.h) with every weight 0 but the op's,
 * one node (a quantized twin adds its quantize and dequantize nodes), no hazard inputs and half of them quantized,
 * from seeds 1 .. seeds, the first per_dtype of each compute dtype; for an op the generator makes no graph of, the
 * first per_dtype cases of each dtype among the quick suite's cases of that op. Appended to *set (origin
 * "coverage:probe"); op_of[i] and dt_of[i] (malloc'ed, set->n entries) say which op and dtype case i represents.
 * 0, or 3 with msg (out of memory). */
int par_coverage_representatives(const par_cov_probe_opts *o, par_case_set *set, int32_t **op_of, int32_t **dt_of,
                                 par_msg *msg);

/* Run the representative graphs once (one timed run, no warm-up, no reference cache) on cfg's backends, and count
 * each record into cov's cell (backend b of cov is backend b of cfg): a probe, and a claim unless UNSUPPORTED (the
 * first UNSUPPORTED reason kept). Returns 0, or the runner's code (3 internal error, 130 / 143 interrupted) with
 * msg. */
int par_coverage_probe(const par_run_config *cfg, const par_cov_probe_opts *o, par_coverage *cov, par_msg *msg);

/* Count every case of a suite ("quick", "full") into cov, by its ops and compute dtype, without passes. 0, or 2
 * with msg (unknown suite, a case that cannot be built). */
int par_coverage_add_suite(par_coverage *cov, const char *suite, uint64_t seed, par_msg *msg);

#endif
