/*
 * localize.h - the first node of a failing graph whose output diverges. Each node's prefix (the graph up to that
 * node, its output made the graph's output) runs through the normal runner on the one backend of cfg; the first
 * prefix that does not PASS names the node. Data-movement prefixes a backend cannot run alone (UNSUPPORTED) are
 * skipped. Prefixes change no input: the inputs and constants keep their generators and data. A case that passes (or
 * is unsupported) has no divergent node (-1).
 */
#ifndef PAR_LOCALIZE_H
#define PAR_LOCALIZE_H

#include "reports/report.h"
#include "runner/runner.h"

typedef struct par_divergence {
    int32_t node;            /* index of the first divergent node; -1 when no prefix but the whole graph fails */
    char node_name[64];
    char op[64];             /* its op, "" when node is -1 */
    par_result rec;          /* the record of that prefix (or of the whole graph when node is -1) */
    int32_t stopped;         /* >0: the walk reached cfg->loc_deadline with this many prefixes judged, none of them
                              * failing (node is then -1); 0: it ran to its end */
} par_divergence;

/* The case made of node `node` of c and the nodes before it that its output depends on, with node's outputs as the
 * graph outputs (inputs and constants that those nodes do not read are dropped; the others keep their data). Its ID
 * is c's with "@<node name>". NULL with msg when it cannot be built. */
par_case *par_case_prefix(const par_case *c, int32_t node, par_msg *msg);

/* Localize the failure of c on cfg's one backend (cfg->n_backends == 1; cfg->servers, when set, that backend's fork
 * servers, else NULL: the workers fork the backend children themselves). Returns 0 (out filled), or -1 with msg on
 * an internal error or an interrupted run. */
int par_localize(const par_case *c, const par_run_config *cfg, par_divergence *out, par_msg *msg);

/* par_node_verdict and par_node_strip, the strip of a case, are in reports/report.h: a report carries them. */

/* Localize c on cfg's one backend for every node: one run of c with every node's outputs made graph outputs, judged
 * output by output against the reference and its companion (the first node that diverges is where the values first
 * leave their budgets, or their statistics); where the backend refuses that graph (a fused or unsupported
 * intermediate), the prefixes of par_loc_run instead. Returns 0 (s filled; free with par_node_strip_free), or -1 with
 * msg. */
int par_localize_strip(const par_case *c, const par_run_config *cfg, par_node_strip *s, par_msg *msg);
void par_node_strip_free(par_node_strip *s);

/* `parity run`'s localization: each FAIL record (results[case * n_backends + backend]) of a loaded case of several
 * nodes, at most max of them, gets its first divergent node at the end of its reason: "; first divergent node: 'NAME'
 * (OP), error/budget R, companion Z", and, when strips is not NULL (as long as results), its whole strip in strips[i]
 * (present set; free each with par_node_strip_free). cfg: the run's, with no fork server running (the localizer
 * forks its own). */
void par_localize_failures(const par_case_set *set, const par_run_config *cfg, par_result *results,
                           par_node_strip *strips, int32_t max);

#endif
