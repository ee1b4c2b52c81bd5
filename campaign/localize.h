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

#endif
