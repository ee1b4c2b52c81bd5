/*
 * localize.h - the first node of a failing graph whose output diverges. Each node's prefix (the graph up to that
 * node, its output made the graph's output) runs through the normal runner on the one backend of cfg; the first
 * prefix that does not PASS names the node. Data-movement prefixes a backend cannot run alone (UNSUPPORTED) are
 * skipped. Prefixes change no input: the inputs and constants keep their generators and data. A case that passes (or
 * is unsupported) has no divergent node (-1).
 */
#ifndef PAR_LOCALIZE_H
#define PAR_LOCALIZE_H

#include "runner/runner.h"

typedef struct par_divergence {
    int32_t node;            /* index of the first divergent node; -1 when no prefix but the whole graph fails */
    char node_name[64];
    char op[64];             /* its op, "" when node is -1 */
    par_result rec;          /* the record of that prefix (or of the whole graph when node is -1) */
} par_divergence;

/* The case made of node `node` of c and the nodes before it that its output depends on, with node's outputs as the
 * graph outputs (inputs and constants that those nodes do not read are dropped; the others keep their data). Its ID
 * is c's with "@<node name>". NULL with msg when it cannot be built. */
par_case *par_case_prefix(const par_case *c, int32_t node, par_msg *msg);

/* Localize the failure of c on cfg's one backend (cfg->n_backends == 1; cfg->servers, when set, that backend's fork
 * servers, else NULL: the workers fork the backend children themselves). Returns 0 (out filled), or -1 with msg on
 * an internal error or an interrupted run. */
int par_localize(const par_case *c, const par_run_config *cfg, par_divergence *out, par_msg *msg);

/* One node of a localization strip: how its output compares with the reference's, the backend computing every node
 * from its own earlier outputs (as a prefix would), so that the strip shows where the error enters and how it
 * grows. */
typedef struct par_node_verdict {
    int32_t node;            /* node index */
    char name[64], op[32];
    double max_ratio;        /* max |d| / budget over its float outputs (docs/oracle.md) */
    double stat_z;           /* the statistical companion over them; NaN where it stood down */
    int64_t n, n_over;       /* elements compared, over budget or non-finite */
    int diverges;            /* some element fails, or the companion does */
} par_node_verdict;

typedef struct par_node_strip {
    int32_t n;               /* nodes[0 .. n): every node, graph order (per-node outputs); 0 with prefixes */
    par_node_verdict *nodes;
    int32_t first;           /* the first divergent node (a node index), -1 when none */
    char first_name[64], first_op[32];
    double first_ratio, first_z;
    int by_prefix;           /* 1: the backend could not give every node's output at once; prefixes localized */
    par_verdict verdict;     /* the whole case's verdict on the backend (per-node outputs: the graph outputs') */
    char why[PAR_REASON_LEN];/* by_prefix: why the per-node outputs were not available */
} par_node_strip;

/* Localize c on cfg's one backend for every node: one run of c with every node's outputs made graph outputs, judged
 * output by output against the reference and its companion (the first node that diverges is where the values first
 * leave their budgets, or their statistics); where the backend refuses that graph (a fused or unsupported
 * intermediate), the prefixes of par_loc_run instead. Returns 0 (s filled; free with par_node_strip_free), or -1 with
 * msg. */
int par_localize_strip(const par_case *c, const par_run_config *cfg, par_node_strip *s, par_msg *msg);
void par_node_strip_free(par_node_strip *s);

/* `parity run --localize`: each FAIL record (results[case * n_backends + backend]) of a loaded case of several nodes,
 * at most max of them, gets its first divergent node at the end of its reason: "; first divergent node: 'NAME' (OP),
 * error/budget R, companion Z". cfg: the run's, with no fork server running (the localizer forks its own). */
void par_localize_failures(const par_case_set *set, const par_run_config *cfg, par_result *results, int32_t max);

#endif
