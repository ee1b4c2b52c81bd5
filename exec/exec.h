/*
 * exec.h - runs one prepared case on one backend instance, isolated in a child process with a time limit and a
 * memory limit, and hands back its outputs, timings and captured output. A crash, hang or runaway allocation of the
 * backend becomes a CRASH or TIMEOUT result; it never ends the run. The child can reach only its own job's buffers:
 * the inputs in a sealed read-only mapping (a write into one faults and is reported), the outputs in a shared
 * mapping between guard regions. The worker (the caller) drives the runs one at a time and checks the guards and
 * compares the outputs after every run; outputs are poisoned before every run so that an unwritten element shows;
 * runs that differ bit-wise are FLAKY. docs/reliability.md describes what is promised and how it is tested.
 */
#ifndef PAR_EXEC_H
#define PAR_EXEC_H

#include "core/result.h"

typedef struct par_exec_server par_exec_server;

typedef struct par_exec_opts {
    int32_t warmup;          /* untimed runs before timing (>= 0) */
    int32_t repeat;          /* timed runs (>= 1); all runs are compared bit-wise for FLAKY */
    double timeout_s;        /* for the whole child (init + prepare + runs); <= 0: none */
    int isolate;             /* 1: child process (default); 0: in process (for gdb; no CRASH/TIMEOUT protection) */
    int64_t mem_limit;       /* bytes of resident memory the backend child may use; 0: no limit */
    par_exec_server *server; /* the fork server of this backend instance and worker; NULL: fork from the caller */
    int32_t n_taps;          /* the last n_taps of g->outputs are not outputs but node values the backend gives through
                              * PAR_PROC_NODE_OUTPUTS (localization): the backend sees the graph without them; one
                              * without the proc is UNSUPPORTED. 0: none */
} par_exec_opts;

/* The outcome of executing a case. When verdict is PAR_V_PASS the outputs are valid and the oracle decides. */
typedef struct par_exec_out {
    par_verdict verdict;     /* PASS (ran fine), UNSUPPORTED, ERROR, CRASH, TIMEOUT, FLAKY, FAIL (out of bounds) */
    char reason[PAR_REASON_LEN]; /* one line, valid UTF-8, control characters escaped */
    par_timing t;            /* with the device's time of the timed runs when PAR_PROC_DEVICE_TIME measured them */
    int32_t n_outputs;
    void **outputs;          /* malloc'ed copies of the first run's outputs, in graph output order */
    int64_t output_bytes;    /* bytes the backend wrote on stdout and stderr (isolated runs only) */
    char output[PAR_OUTPUT_TAIL]; /* their last bytes, valid UTF-8; output_bytes - strlen(output) were dropped */
    /* The algorithm the backend declared for each node after prepare (PAR_PROC_NODE_ALGO), validated with
     * par_algo_check (a bad declaration is an ERROR naming node and value): malloc'ed, n_algo = g->n_nodes entries;
     * NULL (n_algo 0) when every node is PAR_ALGO_DIRECT. */
    int32_t n_algo;
    int32_t *algo;
    /* The requantization scheme the backend declared for each quantized node after prepare (PAR_PROC_NODE_REQUANT)
     * where it is not the backend-wide one, validated (a value outside par_requant, or one for a node without a
     * quantized output, is an ERROR naming node and value): malloc'ed, n_requant = g->n_nodes entries, -1 for a
     * node under the backend-wide scheme; NULL (n_requant 0) when every node is. */
    int32_t n_requant;
    int32_t *requant;
    /* The backend's diagnostics (PAR_PROC_DIAGNOSTICS) after prepare and after each run, whatever the verdict: how
     * many, the first one's text (one line, valid UTF-8) and where (diag_run 0: after prepare, k: after run k). The
     * verdict above does not include them: the judge makes them a FAIL (runner/judge.c). */
    int32_t n_diag, diag_run;
    char diag[PAR_MSG_LEN];
    /* The backend's note on how it prepared the graph (PAR_PROC_NOTE), as the child sent it; "" when none. */
    char note[PAR_MSG_LEN];
    /* With opts.n_taps: tapped[i] is 1 where the backend gave tap i (outputs[n_outputs - n_taps + i]), 0 where the
     * prepared graph does not hold that value (its buffer is then poison, not compared between runs). */
    int32_t n_taps;
    uint8_t *tapped;
} par_exec_out;

/* Start the backend once in a child (init, knobs, describe, requantization scheme and promise, arithmetic flags,
 * arithmetic: PAR_PROC_ARITH for this context, else the table's; destroy) and record the answers in inst (usable,
 * unusable_reason, knob_error, describe, arith, arith_flags, requant, requant_exact, probed). An arithmetic outside
 * par_arith makes the instance unusable, naming the backend and the value. */
void par_exec_probe(par_backend_inst *inst, double timeout_s);

/* Execute: init, knobs, supports for each node, prepare, bind, warmup + repeat runs, release, destroy.
 * The calling process becomes a child subreaper and, after each job, kills and reaps every child it has: it must
 * have no children of its own besides the jobs of this module. */
void par_exec_run(const par_backend_inst *inst, const par_graph_desc *g, const void *const *inputs,
                  const par_exec_opts *o, par_exec_out *out);
void par_exec_out_free(par_exec_out *out);

/* The same job driven run by run, for a caller that interleaves the runs of several backends (parity bench):
 * par_exec_begin starts the child and takes it through supports, prepare, its declarations and bind (never NULL but
 * out of memory; a job that failed there makes no run); par_exec_step makes one run with every check par_exec_run
 * makes (poison, guards, unwritten elements, FLAKY, the child's clocks) and returns 1, or 0 once the job is over
 * (its verdict decided); par_exec_end ends the child (after a second run if only one was made) and fills out exactly
 * as par_exec_run does (opts' warmup and repeat say which runs are timed), and frees the job. par_exec_run is begin,
 * warmup + repeat steps, end. Several jobs may be open at once only through fork servers (opts.server): a job
 * forked from the caller reaps every child of the caller at its end.
 * timeout_s > 0 gives the run that long from now (the job's own deadline, opts.timeout_s from its start, is kept
 * when 0). ri, when not NULL, gets the run's time, its device time and, when ri->node_ms is not NULL
 * (g->n_nodes entries), each node's device time (-1: not timed, or not a time the run can have taken). */
typedef struct par_exec_job par_exec_job;
typedef struct par_exec_run_info {
    double ms;         /* the run's time (the child's clock, within what the worker saw) */
    int dev_measured;  /* PAR_PROC_DEVICE_TIME measured the run: dev_ms */
    double dev_ms;
    double *node_ms;   /* the caller's, or NULL */
} par_exec_run_info;
par_exec_job *par_exec_begin(const par_backend_inst *inst, const par_graph_desc *g, const void *const *inputs,
                             const par_exec_opts *opts);
int par_exec_step(par_exec_job *j, double timeout_s, par_exec_run_info *ri);
double par_exec_prepare_ms(const par_exec_job *j);
void par_exec_end(par_exec_job *j, par_exec_out *out);

/* A backend micro-benchmark (PAR_PROC_MICROBENCH "gemm", "peak", ...) in a sandboxed child, as the probe starts the
 * backend (init, knobs, ready): PAR_OK with *value and unit; PAR_UNSUPPORTED (no such proc, or the backend's
 * answer) or PAR_ERROR (the backend's, or a crash, hang or malformed answer) with msg saying why. The caller must
 * have no other children (as for par_exec_probe). */
par_status par_exec_micro(const par_backend_inst *inst, const char *name, double timeout_s, double *value, char *unit,
                          size_t unit_len, par_msg *msg);

/* Fork servers (exec/server.c): one per (worker slot, backend instance), started from the main process after the
 * backends are resolved and before any case is loaded; each forks the backend child of every job it is sent.
 * par_exec_server_forget closes this process's end without waiting (a worker forgets the other workers' servers);
 * par_exec_server_stop ends the server and waits for it. */
par_exec_server *par_exec_server_start(const par_backend_inst *inst, par_msg *msg);
int par_exec_server_fd(const par_exec_server *s);
/* Wait until each of the n servers (NULL ones skipped) has ended its warm start (the plugin opened, the backend's
 * init and destroy run), all within timeout_s (30 s when <= 0): PAR_ERROR naming the first backend
 * (and its plugin file) whose server did not, so that a constructor or init that hangs only there is one clear
 * error before any case, never a TIMEOUT per job. A server that died in its warm start counts as ready: each of
 * its jobs says so. */
par_status par_exec_servers_ready(par_exec_server **sv, int32_t n, double timeout_s, par_msg *msg);
const char *par_exec_server_cgroup(const par_exec_server *s); /* its job cgroup, "" when none (exec/sandbox.h) */
/* The kernel's hard limit on that cgroup, written only when it changes (the server's job children share it). */
void par_exec_server_limit(par_exec_server *s, int64_t bytes);

/* Whether an unprivileged uid can run the instance's companion (exec/companion.c; 1 also when it has none): its
 * program and script and every folder above them open to others. A sandbox that runs one that is not keeps uid 0
 * without capabilities (exec/sandbox.h, keep_root). */
int par_comp_open_to_all(const par_backend_inst *inst);
void par_exec_server_forget(par_exec_server *s);
/* End the server's backend child kept across jobs (PAR_PROC_REUSE), if any, before its next job: the judge calls it
 * after a verdict other than PASS or UNSUPPORTED, which the job's end alone did not show (the oracle's FAIL). */
void par_exec_server_drop(par_exec_server *s);
/* A server that stopped answering or died mid-run is lost to its worker (exec marks it when a job finds it so): that
 * job is an ERROR naming it, and every later job given it is forked by the worker itself, as without a server
 * (fresh child, no warm start), instead of an ERROR each. */
void par_exec_server_lose(par_exec_server *s);
int par_exec_server_lost(const par_exec_server *s);
void par_exec_server_stop(par_exec_server *s);

/* Load a plugin, in a sandboxed child only (dlopen, entry function, table checks; a crash is refused with its
 * signal, a hang after timeout_s, 30 s when 0): *out is a table of this process with the plugin's name, strings and
 * arithmetic whose entry points refuse to run (PAR_ERROR "a plugin's code runs only in a sandboxed process"); the
 * file stays open. par_plugin_enter(be) makes be the plugin's own table in the calling process (opening the plugin
 * there: constructors and entry function); a process that runs a backend calls it first. PAR_OK for a built-in
 * backend or one entered already; else msg names the plugin and the reason. */
par_status par_plugin_load(const char *path, double timeout_s, const par_backend **out, par_msg *msg);
par_status par_plugin_enter(const par_backend *be, par_msg *msg);

/* Built-in backends (exec/backends.def); *n set to their count. */
const par_backend *const *par_builtin_backends(int32_t *n);

/* Parse "name" or "name[key=value,key=value]" into inst (be left NULL: the caller resolves the name). The shared
 * knobs are checked here, once: threads (an integer in [1, PAR_MAX_THREADS]) and kernels (a name token). */
par_status par_backend_spec_parse(const char *spec, par_backend_inst *inst, par_msg *msg);

/* The one way knobs reach a backend (the job child, the probe, bench): apply inst's knobs to a fresh context in
 * order; returns the index of the first knob the backend refused (its status in *st, its message in m; a backend
 * without PAR_PROC_SET_KNOB refuses every knob), or -1 when all were taken. */
int32_t par_backend_apply_knobs(const par_backend_inst *inst, void *ctx, par_status *st, par_msg *m);

/* The harness's one parser of the shared knob threads (also bench --threads): the kit's par_knob_threads. */
par_status par_knob_threads_parse(const char *s, int32_t *out, par_msg *msg);

#endif
