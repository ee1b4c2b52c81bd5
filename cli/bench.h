/*
 * bench.h - what the two halves of `parity bench` share: cli_bench.c (options, backends, micro-benchmarks, the JSON
 * file) and cli_bench_case.c (one case on every backend, runs interleaved, through the executor). Private to cli/.
 */
#ifndef PAR_CLI_BENCH_H
#define PAR_CLI_BENCH_H

#include "cli.h"

#include <json-c/json.h>

#define BENCH_NODE_RUNS 64 /* timed runs whose per-node device times are kept */
#define BENCH_TOP_NODES 5  /* nodes listed per backend without --nodes */

typedef struct bench_opts {
    long threads, repeat, warmup;
    double timeout_s;  /* each backend's init to bind, and each run: then TIMEOUT */
    int all_nodes;     /* --nodes */
} bench_opts;

/* One case on every backend of bs (servers[b]: backend b's fork server, NULL when it could not start: notes[b]
 * says why; notes[b] also carries a backend's note such as "no threads knob"): prints its table and adds its object
 * to jcases. Returns the bench's exit status for the case: PAR_EXIT_OK, PAR_EXIT_FAIL (a check other than PASS or
 * unsupported) or PAR_EXIT_INTERNAL (the case could not be run at all). */
int par_bench_case(const par_case *c, const par_backends *bs, par_exec_server *const *servers, char notes[][PAR_MSG_LEN],
                   const bench_opts *o, json_object *jcases);

#endif
