/*
 * reduce.h - delta debugging over a failing case: drop outputs, cut and bypass nodes, reset attributes to their
 * defaults, shrink dimensions, simplify constants and inputs toward zeros and small integers, as long as the same
 * failure signature (signature.h) holds on the one backend of the run configuration (as in localize.h). Every candidate runs through the normal runner (child
 * processes, guards, oracle). The result is a case in the normal case format; repro.c writes it out as a standalone
 * C program too.
 */
#ifndef PAR_REDUCE_H
#define PAR_REDUCE_H

#include "signature.h"
#include "runner/runner.h"

typedef struct par_reduce_opts {
    double time_s;           /* wall-clock budget; <= 0: 60 s */
    int32_t max_tests;       /* candidates tried at most; <= 0: 2000 */
    int verbose;             /* one line per accepted step on stderr */
} par_reduce_opts;

typedef struct par_reduce_stats {
    int32_t tests;           /* candidates run */
    int32_t nodes_before, nodes_after;
    int64_t elems_before, elems_after; /* elements of all inputs and constants */
    double wall_s;
    int budget_hit;          /* 1 when the time or test budget ended the reduction */
    int interrupted_by;      /* SIGINT or SIGTERM when a signal ended it (the case returned is the smallest so far) */
} par_reduce_stats;

/* The signature of case c on cfg's one backend: runs it, localizes a failure (localize.h). Returns 0 with *sig
 * (verdict PASS when the case passes), or -1 with msg. rec (may be NULL) receives the whole case's record. */
int par_reduce_signature(const par_case *c, const par_run_config *cfg, par_signature *sig, par_result *rec,
                         par_msg *msg);

/* The smallest case found that keeps sig, within o's budget (o may be NULL: the defaults; st may be NULL). Returns a
 * new case (its ID: c's ID with "-reduced"; after SIGINT or SIGTERM, st->interrupted_by set, the smallest so far),
 * or NULL with msg when c does not show sig to begin with, or on an internal error. */
par_case *par_reduce(const par_case *c, const par_run_config *cfg, const par_signature *sig,
                     const par_reduce_opts *o, par_reduce_stats *st, par_msg *msg);

/* Write a standalone C program (repro.c) that builds c's graph with its input and constant data inline through the
 * public header alone, loads the backend (a built-in backend through parity's library, build/libparity.a, or the
 * plugin of inst->plugin_path), applies inst's knobs, runs the graph once, and prints the reference's value, the
 * budget and the backend's value of the worst elements and whether the failure reproduces (exit 1 when it does, 0
 * when not, 2 when the backend does not run the graph). The reference values and budgets are computed here, for
 * inst's precision profile (par_prec_of_backend), and written as arrays. ref_values: NULL (the usual), or the
 * reference's values of each graph output (f64) to print and judge against instead of the computed ones. */
par_status par_repro_write_c(const par_case *c, const par_backend_inst *inst, const double *const *ref_values,
                             const char *path, par_msg *msg);

/* The command line that compiles the program written at c_path for inst (the comment at its top shows it too), and
 * the executable it makes (c_path without ".c", beside it). */
void par_repro_compile_line(const par_backend_inst *inst, const char *c_path, char *buf, size_t len);
void par_repro_exe_path(const char *c_path, char *buf, size_t len);

#endif
