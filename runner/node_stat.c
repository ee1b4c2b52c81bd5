/*
 * node_stat.c - the statistical companion on every node's value (node_stat.h; docs/oracle.md, "The companion on
 * every node"). It judges nothing itself: the oracle's companion judges each value, and the bound is the oracle's.
 */
#include "node_stat.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "refcache.h"
#include "oracle/oracle.h"

/* The instances found without node outputs in this process (their labels): asked once, not once per case. */
#define NO_TAPS_MAX 64
static char no_taps[NO_TAPS_MAX][128];
static int n_no_taps;

static int known_without(const par_backend_inst *inst)
{
    for (int i = 0; i < n_no_taps; i++)
        if (strcmp(no_taps[i], inst->label) == 0) return 1;
    return 0;
}

static void remember_without(const par_backend_inst *inst)
{
    if (n_no_taps < NO_TAPS_MAX) snprintf(no_taps[n_no_taps++], sizeof no_taps[0], "%s", inst->label);
}

/* g with every node output that is not one already appended to its outputs (*n_taps of them), into *gt with the
 * outputs array *outs (the caller frees it). */
static int tapped_graph(const par_graph_desc *g, par_graph_desc *gt, int32_t **outs, int32_t *n_taps)
{
    int32_t n = g->n_outputs;
    for (int32_t k = 0; k < g->n_nodes; k++) n += g->nodes[k].n_outputs;
    *outs = malloc(sizeof **outs * (size_t)(n ? n : 1));
    if (!*outs) return -1;
    int32_t m = 0;
    for (int32_t i = 0; i < g->n_outputs; i++) (*outs)[m++] = g->outputs[i];
    for (int32_t k = 0; k < g->n_nodes; k++)
        for (int32_t j = 0; j < g->nodes[k].n_outputs; j++) {
            int32_t v = g->nodes[k].outputs[j], dup = 0;
            for (int32_t i = 0; i < g->n_outputs && !dup; i++) dup = g->outputs[i] == v;
            if (!dup) (*outs)[m++] = v;
        }
    *gt = *g;
    gt->n_outputs = m;
    gt->outputs = *outs;
    *n_taps = m - g->n_outputs;
    return 0;
}

static par_status ref_of(const par_run_config *cfg, const par_case *c, const par_graph_desc *gt, const par_prec *p,
                         void **inputs, par_ref_result **out)
{
    par_msg m = {{0}};
    par_status st = cfg->no_refcache ? par_ref_run(gt, p, (const void *const *)inputs, out, &m)
                                     : par_refcache_run(c, gt, p, (const void *const *)inputs, out, &m);
    if (st != PAR_OK) *out = NULL;
    return st;
}

void par_node_refs_free(par_node_refs *nr)
{
    for (int a = 0; a < PAR_ARITH_N_KINDS; a++)
        for (int f = 0; f < 2; f++) {
            par_ref_result_destroy(nr->ref[a][f]);
            par_ref_result_destroy(nr->stat[a][f]);
            nr->ref[a][f] = nr->stat[a][f] = NULL;
        }
}

/* The companion on each node value the run gave (output k of gt is value gt->outputs[k]) into ns: the count K of
 * values judged, the largest z, and the first node in topological order with a value over the bound of K values
 * (where the error enters). */
static int judge_values(const par_graph_desc *gt, int32_t n0, const par_ref_result *ref, const par_ref_result *stat,
                        const par_exec_out *out, par_node_stat *ns)
{
    double *z = malloc(sizeof *z * (size_t)(gt->n_outputs ? gt->n_outputs : 1));
    int64_t *zn = malloc(sizeof *zn * (size_t)(gt->n_outputs ? gt->n_outputs : 1));
    int32_t *node = malloc(sizeof *node * (size_t)(gt->n_outputs ? gt->n_outputs : 1));
    if (!z || !zn || !node) {
        free(z), free(zn), free(node);
        return -1;
    }
    int32_t n = 0;
    for (int32_t i = 0; i < gt->n_nodes; i++) {
        const par_node *nd = &gt->nodes[i];
        for (int32_t j = 0; j < nd->n_outputs; j++) {
            int32_t k = 0;
            while (k < gt->n_outputs && gt->outputs[k] != nd->outputs[j]) k++;
            if (k == gt->n_outputs || (k >= n0 && out->tapped && !out->tapped[k - n0])) continue; /* not held */
            par_metrics m;
            par_metrics_init(&m);
            const int32_t v = gt->outputs[k];
            par_oracle_companion(&ref->values[v], &stat->values[v], out->outputs[k], &m);
            if (m.stat_n <= 0 || !isfinite(m.stat_z)) continue;
            z[n] = m.stat_z, zn[n] = m.stat_n, node[n] = i;
            n++;
        }
    }
    ns->n_values = n;
    ns->bound = par_stat_bound_of(n);
    for (int32_t t = 0; t < n; t++) {
        if (ns->node_max < 0 || z[t] > ns->z_max) ns->node_max = node[t], ns->z_max = z[t];
        if (ns->node < 0 && z[t] > ns->bound) ns->node = node[t], ns->z = z[t], ns->n = zn[t];
    }
    if (ns->node < 0 && ns->node_max >= 0) { /* none over: the largest */
        for (int32_t t = 0; t < n; t++)
            if (node[t] == ns->node_max && z[t] == ns->z_max) ns->node = node[t], ns->z = z[t], ns->n = zn[t];
    }
    if (ns->node >= 0) {
        const par_node *nd = &gt->nodes[ns->node];
        snprintf(ns->name, sizeof ns->name, "%s", nd->name ? nd->name : "");
        snprintf(ns->op, sizeof ns->op, "%s", nd->op ? nd->op : "");
        ns->over = ns->z > ns->bound;
    }
    if (ns->node_max >= 0)
        snprintf(ns->name_max, sizeof ns->name_max, "%s", gt->nodes[ns->node_max].name ? gt->nodes[ns->node_max].name : "");
    free(z), free(zn), free(node);
    return 0;
}

/* The slot of profile p's reference (stat: the companion's scales) in nr, or own for a record with declared
 * algorithms; computed when empty. */
static const par_ref_result *node_ref(const par_run_config *cfg, const par_backend_inst *inst, const par_case *c,
                                      const par_graph_desc *gt, par_prec p, int stat, void **inputs,
                                      par_node_refs *nr, par_ref_result **own)
{
    unsigned a = (unsigned)inst->arith < PAR_ARITH_N_KINDS ? (unsigned)inst->arith : 0, f = p.flush > 0;
    par_ref_result **slot = p.algo ? own : stat ? &nr->stat[a][f] : &nr->ref[a][f];
    p.stat_scale = stat;
    if (!*slot) ref_of(cfg, c, gt, &p, inputs, slot);
    return *slot;
}

int par_node_companion(const par_run_config *cfg, const par_backend_inst *inst, const par_case *c,
                       const par_graph_desc *g, void **inputs, const par_exec_opts *o, par_prec p, par_node_refs *nr,
                       par_node_stat *ns)
{
    memset(ns, 0, sizeof *ns);
    ns->node = ns->node_max = -1;
    ns->z = ns->z_max = ns->bound = NAN;
    if (g->n_nodes < 2 || known_without(inst)) return 0;
    par_graph_desc gt;
    int32_t *outs = NULL, n_taps = 0;
    if (tapped_graph(g, &gt, &outs, &n_taps) != 0 || n_taps == 0) {
        free(outs);
        return 0;
    }
    par_exec_opts to = *o;
    to.n_taps = n_taps;
    to.warmup = 0;
    to.repeat = 1;
    par_exec_out out;
    memset(&out, 0, sizeof out);
    par_exec_run(inst, &gt, (const void *const *)inputs, &to, &out);
    int ret = 0;
    if (out.verdict == PAR_V_UNSUPPORTED) {
        remember_without(inst);
    } else if (out.verdict == PAR_V_PASS) {
        par_ref_result *own = NULL, *own_stat = NULL;
        p.algo = out.algo;
        const par_ref_result *ref = node_ref(cfg, inst, c, &gt, p, 0, inputs, nr, &own);
        const par_ref_result *stat = ref ? node_ref(cfg, inst, c, &gt, p, 1, inputs, nr, &own_stat) : NULL;
        if (!ref || !stat) ret = 1;
        else if (judge_values(&gt, g->n_outputs, ref, stat, &out, ns) != 0) ret = 1;
        par_ref_result_destroy(own);
        par_ref_result_destroy(own_stat);
    }
    /* a second run that did not pass leaves the record as the case's own run judged it (that run passed); its
     * fork server's child is not kept */
    if (out.verdict != PAR_V_PASS && out.verdict != PAR_V_UNSUPPORTED) par_exec_server_drop(o->server);
    par_exec_out_free(&out);
    free(outs);
    ns->applied = ns->n_values > 0;
    return ret;
}
