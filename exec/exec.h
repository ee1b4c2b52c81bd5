/*
 * exec.h - runs one prepared case on one backend instance, isolated in a child process with a time limit, and
 * hands back its outputs and timings. A crash or hang of the backend becomes a CRASH or TIMEOUT result; it never
 * ends the run. Guard regions around every output buffer catch out-of-bounds writes; outputs are poisoned before
 * every run so that an unwritten element shows; repeated runs that differ bit-wise are FLAKY.
 */
#ifndef PAR_EXEC_H
#define PAR_EXEC_H

#include "core/result.h"

typedef struct par_exec_opts {
    int32_t warmup;          /* untimed runs before timing (>= 0) */
    int32_t repeat;          /* timed runs (>= 1); all runs are compared bit-wise for FLAKY */
    double timeout_s;        /* for the whole child (init + prepare + runs) */
    int isolate;             /* 1: child process (default); 0: in process (for gdb; no CRASH/TIMEOUT protection) */
} par_exec_opts;

/* The outcome of executing a case. When verdict is PAR_V_PASS the outputs are valid and the oracle decides. */
typedef struct par_exec_out {
    par_verdict verdict;     /* PASS (ran fine), UNSUPPORTED, ERROR, CRASH, TIMEOUT, FLAKY, FAIL (out of bounds) */
    char reason[PAR_REASON_LEN];
    par_timing t;
    int32_t n_outputs;
    void **outputs;          /* malloc'ed copies of the first run's outputs, in graph output order */
} par_exec_out;

/* Init the backend (in a child), apply knobs, read its description. Sets inst->usable and the reason. */
void par_exec_probe(par_backend_inst *inst, double timeout_s);

/* Execute: init, knobs, supports for each node, prepare, bind, warmup + repeat runs, release, destroy. */
void par_exec_run(const par_backend_inst *inst, const par_graph_desc *g, const void *const *inputs,
                  const par_exec_opts *o, par_exec_out *out);
void par_exec_out_free(par_exec_out *out);

/* Load a plugin: dlopen, find PAR_BACKEND_ENTRY_SYMBOL, check the version and the table. The handle stays open. */
par_status par_plugin_load(const char *path, const par_backend **out, par_msg *msg);

/* Built-in backends (exec/backends.def); *n set to their count. */
const par_backend *const *par_builtin_backends(int32_t *n);

/* Parse "name" or "name[key=value,key=value]" into inst (be left NULL: the caller resolves the name). */
par_status par_backend_spec_parse(const char *spec, par_backend_inst *inst, par_msg *msg);

#endif
