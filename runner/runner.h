/*
 * runner.h - selects cases (files, folders, suites, filters, shard) and runs every case on every backend instance
 * in worker processes, judged by the oracle (runner/judge.c). The records come back to the caller, who writes the
 * report and prints the summary (reports/).
 */
#ifndef PAR_RUNNER_H
#define PAR_RUNNER_H

#include "core/case.h"
#include "exec/exec.h"

typedef struct par_selection {
    int32_t n_paths;
    char **paths;             /* case files or folders (recursive, *.json) */
    const char *suite;        /* "quick", "full", "models", "default" (quick + the models of at most
                               * PAR_DEFAULT_MODEL_COST), "onnx" (ONNX's node tests), or NULL */
    const char *case_id;      /* --case: one ID (its "#seed=N" sets the seed) */
    const char *ops;          /* -o: comma-separated op names */
    const char *id_regex;     /* -k: POSIX extended regex on IDs */
    uint64_t seed;            /* base seed of generated cases */
    int32_t shard_k, shard_n; /* --shard K/N, 1 <= K <= N; 0/0 = all */
    const char *input_shapes; /* --shape: "NAME=D0,D1;..." for model files' symbolic inputs, or NULL */
} par_selection;

/* One selected case: a loaded file case, or a suite case built on demand from its walk index. */
/* The default suite (`make run`) takes the models suite's cases whose par_case_cost (runner/case_mem.h) is at most
 * this: the models that run in seconds on every backend with a cold reference cache (MobileNetV3-Small, PP-OCRv4's
 * detector, the face detector, the transformer and decoder blocks, ...); the larger ones (MobileNetV2, EfficientNet-
 * Lite0, DeepLabV3, the segmentation net, 3e8 to 6e8 each) stay in `--suite models` and `--suite full` runs
 * (docs/suites.md gives the figures). */
#define PAR_DEFAULT_MODEL_COST 1e8

typedef struct par_sel_case {
    char id[256];
    char origin[256];
    char ops[256];
    par_case *loaded;         /* file cases: loaded at selection */
    const char *suite;        /* suite cases: the suite walked */
    int64_t walk_index;
    int64_t index;            /* position in the selection before --shard (shards of one selection merge by it) */
} par_sel_case;

typedef struct par_case_set {
    int32_t n;
    par_sel_case *cases;
    uint64_t seed;
} par_case_set;

/* Resolve the selection. Returns 0, or 2 with a message for bad input (unknown suite, malformed file, no match). */
int par_select_cases(const par_selection *sel, par_case_set *out, par_msg *msg);
void par_case_set_free(par_case_set *s);
/* Append a built case to a set (a zeroed par_case_set is an empty one), which then owns it: how the fuzzer, the
 * localizer and the reducer run cases they made through the normal runner. origin NULL: c->origin. Returns 0, or
 * -1 when out of memory (c is destroyed). */
int par_case_set_adopt(par_case_set *s, par_case *c, const char *origin);
/* Build (or hand out) case i of the set; the caller destroys what it got when *owned is 1. */
par_case *par_case_set_get(const par_case_set *s, int32_t i, int *owned, par_msg *msg);

/* The folder with the model cases (cases/models of the source tree, the installed share/, or $PARITY_CASES_DIR). */
const char *par_cases_dir(void);

typedef struct par_run_config {
    par_backend_inst *backends; /* probed (par_exec_probe): their precision profiles judge the outputs */
    int32_t n_backends;
    par_exec_opts exec;
    int32_t jobs;
    int progress;             /* progress bar (TTY only) */
    /* Fork servers [worker * n_backends + backend] for max_workers workers (par_run_servers_start), or NULL: each
     * worker forks its backend children itself. */
    par_exec_server **servers;
    int32_t max_workers;
    /* 1: par_run_cases keeps this process's ends of the servers open, so that later calls (a fuzzing campaign's
     * batches) reuse them; 0: the first run hands them to its workers alone (a server whose worker dies then sees
     * its socket hang up). With 1, a run that reports an internal error should be followed by a restart of the
     * servers (par_run_servers_stop, par_run_servers_start). */
    int keep_servers;
    /* 1: compute every reference afresh, never through the on-disk cache (runner/refcache.h): for one-off cases,
     * whose key would cost a SHA-256 of their inputs and a lookup that can never hit. */
    int no_refcache;
    /* Rounds (--rounds R; 0 or 1: one): the whole selection is run R times, one round after the other, each job in
     * a fresh backend process with its own warm-up and exec.repeat timed runs. A record keeps every round's timed
     * runs (up to PAR_TIMING_SAMPLES) and the worst verdict of its rounds, so that its latency samples come from R
     * processes spread over the run's time rather than one burst in one process (docs/reports-diff.md). */
    int32_t rounds;
    /* The time (par_now_s, core/clock.h) after which a localization by prefixes (campaign/localize.c) starts no
     * further chunk of prefixes and says where it stopped; 0: none. `parity run` bounds its localization of failing
     * records so; `parity localize` walks every prefix. */
    double loc_deadline;
    /* 1: a passing case of several nodes is judged once more on every node's value where the backend gives per-node
     * outputs (runner/node_stat.c): `parity run` sets it. A fuzzing campaign does not: its graphs are a few nodes
     * deep, so the outputs' companion sees what a node adds, and the second run cost a fifth of its graphs/s. */
    int node_companion;
} par_run_config;

/* Start the fork servers of cfg (jobs x backends) from this process: call it after the backends are probed and
 * before any case is selected or loaded, so the servers hold no case data. Waits until each has ended its warm
 * start (par_exec_servers_ready, within cfg->exec.timeout_s). Returns 0, -1 with msg, or -2 with msg
 * when a backend's server did not end its warm start in time (a usage error: that backend cannot be run). */
int par_run_servers_start(par_run_config *cfg, par_msg *msg);
void par_run_servers_stop(par_run_config *cfg);

/* What a run produced: the records ([case * n_backends + backend]; done == 0 for those an interrupted run did
 * not finish), and how the run went. */
typedef struct par_run_result {
    par_result *results;
    double wall_s;
    int32_t jobs;             /* workers used */
    int interrupted_by;       /* SIGINT or SIGTERM when the run was interrupted, else 0 */
    int internal;             /* a reference or harness failure happened */
} par_run_result;

/* Run; fills out (free it with par_run_result_free) and returns the exit code: 0 all passed or unsupported, 1 a
 * conformance failure, 3 internal error, 128 + the signal (130, 143) when interrupted by SIGINT or SIGTERM. The run
 * catches SIGINT and SIGTERM while it lasts; when it was interrupted and the caller had a handler of its own
 * installed, that handler is then called with the signal, so a caller that runs many batches sees it too. */
int par_run_cases(const par_case_set *cases, const par_run_config *cfg, par_run_result *out);
void par_run_result_free(par_run_result *r);

#endif
