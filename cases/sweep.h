/*
 * sweep.h - the sweep generator: per-op parameter grids, in the way XNNPACK's testers sweep them (sizes below, at
 * and above vector widths, channels that are not multiples of 4/8/16, strides, dilations, asymmetric paddings,
 * groups, batch > 1, broadcasting, edge values).
 *
 * A sweep spec (cases/ops/<family>.c, named in the op table) walks its grid and, for each point, asks for a case:
 *
 *     par_case *c = par_sweep_case(s, "conv2d", "conv2d(in=[%d,%d,%d,%d],k=%d,s=%d,p=%d,g=%d)", ...);
 *     if (!c) continue;               // not wanted by the filter: nothing else to do (cheap)
 *     ... par_case_input / par_case_const / par_case_node / par_case_output ...
 *     par_sweep_done(s, c);
 *
 * par_sweep_case appends "#seed=N" to the ID. The walk must be deterministic and must not depend on anything but
 * the suite level: the same ID always yields the same bytes.
 */
#ifndef PAR_SWEEP_H
#define PAR_SWEEP_H

#include "core/case.h"

typedef enum par_suite_level {
    PAR_SUITE_QUICK = 1, /* make check: >= 1,500 cases in all, seconds */
    PAR_SUITE_FULL = 2,  /* nightly: >= 10,000 cases in all; a superset of quick's grids */
} par_suite_level;

typedef struct par_sweep par_sweep;

par_suite_level par_sweep_level(const par_sweep *s);

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
par_case *par_sweep_case(par_sweep *s, const char *op, const char *id_fmt, ...);
/* Hand a case back (takes ownership). A case whose builder failed is an internal error, reported with its ID. */
void par_sweep_done(par_sweep *s, par_case *c);

/* Walking a suite (used by the runner). */
typedef struct par_sweep_visit {
    /* Called for every case ID in order; return 1 to build it (then `build` gets the case). */
    int (*want)(void *user, int64_t index, const char *id, const char *op);
    void (*build)(void *user, int64_t index, par_case *c);  /* takes ownership of c */
    void (*error)(void *user, const char *id, const par_msg *msg);
    void *user;
    uint64_t seed;      /* base seed of the run (--seed), >= 1 */
    const char *only_op; /* if set, only sweep specs that generate this op are walked (speed) */
} par_sweep_visit;

/* Walk the suite ("quick" or "full"); returns the number of IDs visited, or -1 if the name is unknown. */
int64_t par_sweep_walk(const char *suite, const par_sweep_visit *v);

/* A sweep spec: generates the cases of one op family (the sweep column of core/ops.def). */
typedef void (*par_sweep_fn)(par_sweep *s);

/* Sweep specs: declared from the op table. */
#define PAR_OP(id, name, in_min, in_max, n_out, flags, qform, schema, infer, ref, sweep) void sweep(par_sweep *s);

#include "core/ops.def"
#undef PAR_OP

#endif
