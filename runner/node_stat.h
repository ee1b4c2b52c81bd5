/*
 * node_stat.h - the statistical companion on every node's value (docs/oracle.md, "The companion on every node"):
 * a case of several nodes runs once more with its node values read through the backend's node outputs
 * (PAR_PROC_NODE_OUTPUTS, exec's taps), and each value is judged by the companion against its own scale, the
 * largest z over the K values against the bound that holds the whole case's false-alarm probability at 3e-8
 * (par_stat_bound_of(K)). One layer computed below its declared precision is seen where it is computed, not only
 * after the layers behind it have diluted it.
 */
#ifndef PAR_NODE_STAT_H
#define PAR_NODE_STAT_H

#include "runner.h"
#include "exec/exec.h"
#include "reference/reference.h"

/* The references of the graph with every node value an output, kept over one case's records per arithmetic kind
 * and flushing (the records without declared algorithms; the others compute their own): values and budgets, and
 * the companion's scales. Zeroed by the caller, freed by par_node_refs_free. */
typedef struct par_node_refs {
    par_ref_result *ref[PAR_ARITH_N_KINDS][2], *stat[PAR_ARITH_N_KINDS][2];
} par_node_refs;
void par_node_refs_free(par_node_refs *nr);

typedef struct par_node_stat {
    int applied;        /* 1: the backend gave node values and the companion judged at least one */
    int32_t n_values;   /* K: the node values judged */
    int32_t node;       /* the first node over the bound, else the node of the largest z; -1 none */
    char name[64];
    char op[32];
    double z;           /* its stat_z */
    double z_max;       /* the largest stat_z of any node value, at node_max */
    int32_t node_max;
    char name_max[64];
    int64_t n;          /* its elements judged */
    double bound;       /* par_stat_bound_of(K) */
    int over;           /* z > bound */
} par_node_stat;

/* Runs g (case c, inputs) on inst once more with every node's value tapped (one run, no warm-up; o: the record's
 * options) and judges each value the backend gave by the companion, with the references of profile p (values and
 * budgets, and p with stat_scale) of the graph with every node value an output, through the reference cache unless
 * cfg turns it off, kept in nr for the case's other records. ns->applied 0 where the backend gives no node values (remembered per instance label for the
 * process), where its run does not pass, or where no value is judged. Returns 0, or 1 when a reference failed. */
int par_node_companion(const par_run_config *cfg, const par_backend_inst *inst, const par_case *c,
                       const par_graph_desc *g, void **inputs, const par_exec_opts *o, par_prec p, par_node_refs *nr,
                       par_node_stat *ns);

#endif
