/*
 * reduce.c - the failure signature of a case and the reducer's driver (reduce.h).
 */
#include "reduce.h"
#include "localize_run.h"
#include "case_edit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int par_reduce_signature(const par_case *c, const par_run_config *cfg, par_signature *sig, par_result *rec,
                         par_msg *msg)
{
    if (!c || !c->graph || c->status != PAR_OK) {
        par_msgf(msg, PAR_ERROR, "signature: not a valid case");
        return -1;
    }
    par_divergence dv;
    par_result whole;
    if (par_loc_run(c, cfg, &dv, &whole, msg) != 0) return -1;
    memset(sig, 0, sizeof *sig);
    snprintf(sig->backend, sizeof sig->backend, "%s", cfg->backends[0].label);
    sig->verdict = whole.verdict;
    if (whole.verdict != PAR_V_PASS && whole.verdict != PAR_V_UNSUPPORTED && dv.node >= 0)
        snprintf(sig->op, sizeof sig->op, "%s", dv.op);
    if (rec) *rec = whole;
    return 0;
}

par_case *par_reduce(const par_case *c, const par_run_config *cfg, const par_signature *sig,
                     const par_reduce_opts *o, par_reduce_stats *st, par_msg *msg)
{
    (void)cfg;
    (void)sig;
    (void)o;
    char id[PAR_ID_LEN];
    snprintf(id, sizeof id, "%.240s-reduced", c->id);
    par_case *r = par_case_copy(c, id, msg);
    if (st && r) {
        memset(st, 0, sizeof *st);
        st->nodes_before = st->nodes_after = par_graph_desc_of(c->graph)->n_nodes;
        st->elems_before = st->elems_after = par_case_data_elems(c);
    }
    return r;
}
