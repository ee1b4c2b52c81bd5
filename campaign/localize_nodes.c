/*
 * localize_nodes.c - the localization strip of a case (localize.h, par_localize_strip): every node's output from one
 * backend run of the case with all of them made graph outputs, each judged by the oracle against the reference of
 * the backend's precision profile and by the statistical companion (docs/oracle.md, rule 5), so that a whole model
 * costs one backend run and two reference runs instead of a prefix per node. The two reference runs go through the
 * reference cache (runner/refcache.h) unless the configuration turns it off: they hold every value of the model
 * (MobileNetV2: 12 s of float64 work, read back in a fraction of a second). A backend that refuses that graph is
 * localized by prefixes (localize.c). It judges nothing itself: the oracle compares, element by element.
 */
#include "localize.h"
#include "localize_run.h"
#include "case_edit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle/oracle.h"
#include "runner/refcache.h"

void par_node_strip_free(par_node_strip *s)
{
    free(s->nodes);
    s->nodes = NULL;
    s->n = 0;
}

static int graph_has_quant(const par_graph_desc *g)
{
    for (int32_t i = 0; i < g->n_values; i++)
        if (g->values[i].dtype == PAR_DTYPE_QU8 || g->values[i].dtype == PAR_DTYPE_QS8) return 1;
    return 0;
}

/* c with every node's outputs as graph outputs, in node order: after c's own outputs, as taps read through the
 * backend's node outputs (*n_taps of them: a value listed already is one output), or alone (n_taps NULL). */
static par_case *all_outputs(const par_case *c, int32_t *n_taps, par_msg *msg)
{
    const par_graph_desc *d = par_graph_desc_of(c->graph);
    const int32_t n0 = n_taps ? d->n_outputs : 0;
    int32_t n = 0;
    for (int32_t k = 0; k < d->n_nodes; k++) n += d->nodes[k].n_outputs;
    int32_t *outs = malloc(sizeof *outs * (size_t)(n + n0 ? n + n0 : 1));
    if (!outs) return par_msgf(msg, PAR_ERROR, "out of memory"), NULL;
    for (int32_t i = 0; i < n0; i++) outs[i] = d->outputs[i];
    n = n0;
    for (int32_t k = 0; k < d->n_nodes; k++)
        for (int32_t j = 0; j < d->nodes[k].n_outputs; j++) outs[n++] = d->nodes[k].outputs[j];
    par_case_edit e = {.n_outputs = n, .outputs = outs};
    par_case *p = par_case_edited(c, &e, NULL, msg);
    free(outs);
    if (p && n_taps) {
        int32_t own = 0; /* c's distinct outputs: the first of pc's */
        for (int32_t i = 0; i < n0; i++) {
            int dup = 0;
            for (int32_t j = 0; j < i; j++) dup |= d->outputs[j] == d->outputs[i];
            own += !dup;
        }
        *n_taps = par_graph_desc_of(p->graph)->n_outputs - own;
    }
    return p;
}

/* The reference of the all-outputs case pc, through the cache unless cfg turns it off. */
static par_status ref_of(const par_case *pc, const par_run_config *cfg, const par_prec *p, void **inputs,
                         par_ref_result **out, par_msg *msg)
{
    const par_graph_desc *g = par_graph_desc_of(pc->graph);
    return cfg->no_refcache ? par_ref_run(g, p, (const void *const *)inputs, out, msg)
                            : par_refcache_run(pc, g, p, (const void *const *)inputs, out, msg);
}

/* Whether value v is one of graph d's outputs. */
static int is_output(const par_graph_desc *d, int32_t v)
{
    for (int32_t i = 0; i < d->n_outputs; i++)
        if (d->outputs[i] == v) return 1;
    return 0;
}

/* Judge every output of the run (out) of the all-outputs case g, node by node: the node values from output k0 on
 * (k0 0, or c's own outputs before them when they are taps); a tap the backend did not give is not compared. d is
 * c's graph (its nodes are g's, in the same order). A node diverges as the record's verdict would have it: a value
 * out of its budget, a value of c's own outputs over the outputs' companion bound (the oracle's), or any value's
 * companion over the bound of the case's K node values (par_stat_bound_of, docs/oracle.md "The companion on every
 * node"), which s->stat_bound and s->stat_k keep. */
static int judge_nodes(const par_graph_desc *g, const par_graph_desc *d, int32_t k0, const par_ref_result *ref,
                       const par_ref_result *stat, const par_exec_out *out, par_node_strip *s)
{
    s->nodes = calloc((size_t)(g->n_nodes ? g->n_nodes : 1), sizeof *s->nodes);
    if (!s->nodes) return -1;
    s->n = g->n_nodes;
    int32_t k_values = 0;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const par_node *nd = &g->nodes[i];
        par_node_verdict *v = &s->nodes[i];
        v->node = i;
        snprintf(v->name, sizeof v->name, "%s", nd->name ? nd->name : "");
        snprintf(v->op, sizeof v->op, "%s", nd->op ? nd->op : "");
        par_metrics acc;
        par_metrics_init(&acc);
        int64_t bad = 0;
        int32_t held = 0;
        for (int32_t j = 0; j < nd->n_outputs; j++) {
            int32_t k = 0; /* the graph output of the node's value */
            while (k < g->n_outputs && g->outputs[k] != nd->outputs[j]) k++;
            if (k == g->n_outputs || (k >= k0 && out->tapped && !out->tapped[k - k0])) continue; /* not held */
            held++;
            par_metrics m;
            bad += par_oracle_compare(&ref->values[g->outputs[k]], out->outputs[k], &m);
            if (stat) {
                int64_t over = par_oracle_companion(&ref->values[g->outputs[k]], &stat->values[g->outputs[k]],
                                                    out->outputs[k], &m);
                if (j < d->nodes[i].n_outputs && is_output(d, d->nodes[i].outputs[j])) bad += over;
                k_values += m.stat_n > 0 && isfinite(m.stat_z);
            }
            par_metrics_merge(&acc, &m, j);
        }
        v->max_ratio = held ? acc.max_ratio : NAN; /* a value the backend's run never held: nothing compared */
        v->stat_z = held ? acc.stat_z : NAN;
        v->n = acc.n;
        v->n_over = acc.n_over + acc.n_nonfinite;
        v->diverges = bad > 0;
    }
    s->stat_k = k_values;
    s->stat_bound = k_values > 0 ? par_stat_bound_of(k_values) : NAN;
    for (int32_t i = 0; i < s->n; i++) {
        par_node_verdict *v = &s->nodes[i];
        v->diverges |= k_values > 0 && v->stat_z > s->stat_bound;
        if (v->diverges && s->first < 0) {
            s->first = i;
            snprintf(s->first_name, sizeof s->first_name, "%s", v->name);
            snprintf(s->first_op, sizeof s->first_op, "%s", v->op);
            s->first_ratio = v->max_ratio;
            s->first_z = v->stat_z;
        }
    }
    return 0;
}

/* The prefixes (localize.c) where the backend gave no per-node outputs. */
static int by_prefixes(const par_case *c, const par_run_config *cfg, par_node_strip *s, par_msg *msg)
{
    par_divergence dv;
    par_result whole;
    s->by_prefix = 1;
    if (par_loc_run(c, cfg, &dv, &whole, msg) != 0) return -1;
    s->verdict = whole.verdict;
    if (dv.stopped > 0) {
        size_t n = strlen(s->why);
        s->stopped = dv.stopped;
        snprintf(s->why + n, sizeof s->why - n, "%sthe walk reached its time budget after %d of %d prefixes, none "
                 "failing ('parity localize' walks them all)", n ? "; " : "", (int)dv.stopped,
                 (int)par_graph_desc_of(c->graph)->n_nodes);
    }
    if (dv.node >= 0) {
        s->first = dv.node;
        snprintf(s->first_name, sizeof s->first_name, "%s", dv.node_name);
        snprintf(s->first_op, sizeof s->first_op, "%s", dv.op);
        s->first_ratio = dv.rec.m.max_ratio;
        s->first_z = dv.rec.m.stat_z;
    }
    return 0;
}

/* Whether any of c's own outputs (the first n0 of g's), as the backend's run gave them, leaves its budget or fails
 * the companion. */
static int case_fails(const par_graph_desc *g, int32_t n0, const par_ref_result *ref, const par_ref_result *stat,
                      const par_exec_out *out)
{
    int64_t bad = 0;
    for (int32_t i = 0; i < n0; i++) {
        par_metrics m;
        bad += par_oracle_compare(&ref->values[g->outputs[i]], out->outputs[i], &m);
        if (stat) bad += par_oracle_companion(&ref->values[g->outputs[i]], &stat->values[g->outputs[i]],
                                              out->outputs[i], &m);
    }
    return bad > 0;
}

/* One backend run of c with every node's value read, judged node by node into s: with taps, c as it is with the
 * values read through the backend's node outputs (PAR_PROC_NODE_OUTPUTS); else c with every node's output made a
 * graph output. 0 (s->n > 0 when the backend's run passed, else s->why says what it was), or -1 with msg. */
static int strip_run(const par_case *c, const par_run_config *cfg, int taps, par_node_strip *s, par_msg *msg)
{
    const par_backend_inst *inst = &cfg->backends[0];
    int32_t n_taps = 0;
    par_case *pc = all_outputs(c, taps ? &n_taps : NULL, msg);
    if (!pc) return -1;
    const par_graph_desc *g = par_graph_desc_of(pc->graph), *d = par_graph_desc_of(c->graph);
    const int32_t k0 = g->n_outputs - n_taps;
    void **inputs = NULL;
    int ret = 0;
    if (par_case_make_inputs(pc, &inputs, msg) != PAR_OK) {
        par_case_destroy(pc);
        return -1;
    }
    par_exec_opts o = cfg->exec;
    o.server = cfg->servers ? cfg->servers[0] : NULL;
    o.n_taps = n_taps;
    par_exec_out out;
    memset(&out, 0, sizeof out);
    par_exec_run(inst, g, (const void *const *)inputs, &o, &out);
    const int quant = graph_has_quant(g);
    par_ref_result *ref = NULL, *stat = NULL;
    if (out.verdict == PAR_V_PASS) {
        par_prec p = par_prec_of_backend(inst);
        if (!quant) {
            p.requant = PAR_REQUANT_FP32;
            p.requant_exact = 0;
        } else {
            p.requant_node = out.requant;
        }
        p.algo = out.algo;
        par_msg rm = {{0}};
        if (ref_of(pc, cfg, &p, inputs, &ref, &rm) != PAR_OK) {
            par_msgf(msg, PAR_ERROR, "reference: %s", rm.text);
            ret = -1;
        } else if (par_stat_applies(c, quant) == PAR_STAT_APPLIED) {
            p.stat_scale = 1;
            if (ref_of(pc, cfg, &p, inputs, &stat, &rm) != PAR_OK) stat = NULL;
        }
        if (ret == 0 && judge_nodes(g, d, k0, ref, stat, &out, s) != 0) {
            par_msgf(msg, PAR_ERROR, "out of memory");
            ret = -1;
        }
        /* the whole case's verdict: its own outputs as the run gave them, else among the nodes' */
        s->verdict = PAR_V_PASS;
        s->node_outputs = taps;
        if (ret == 0 && taps && case_fails(g, k0, ref, stat, &out)) s->verdict = PAR_V_FAIL;
        for (int32_t i = 0; ret == 0 && !taps && i < d->n_outputs; i++) {
            int32_t pn = d->values[d->outputs[i]].producer;
            if (pn >= 0 && pn < s->n && s->nodes[pn].diverges) s->verdict = PAR_V_FAIL;
        }
    } else {
        snprintf(s->why, sizeof s->why, "the graph with every node's output %s was %s: %s",
                 taps ? "read through the backend's node outputs" : "made an output", par_verdict_name(out.verdict),
                 out.reason);
    }
    par_ref_result_destroy(ref);
    par_ref_result_destroy(stat);
    par_exec_out_free(&out);
    par_case_free_inputs(pc, inputs);
    par_case_destroy(pc);
    return ret;
}

int par_localize_strip(const par_case *c, const par_run_config *cfg, par_node_strip *s, par_msg *msg)
{
    memset(s, 0, sizeof *s);
    s->first = -1;
    s->first_ratio = s->first_z = s->stat_bound = NAN;
    if (!c || !c->graph || c->status != PAR_OK) return par_msgf(msg, PAR_ERROR, "localize: not a valid case"), -1;
    if (par_loc_check_cfg(cfg, msg) != 0) return -1;
    /* the backend's own node values from the case's run as it is; else every node's output made a graph output */
    int ret = strip_run(c, cfg, 1, s, msg);
    if (ret == 0 && s->n == 0) {
        char why[PAR_REASON_LEN];
        snprintf(why, sizeof why, "%s", s->why);
        memset(s, 0, sizeof *s);
        s->first = -1;
        s->first_ratio = s->first_z = s->stat_bound = NAN;
        ret = strip_run(c, cfg, 0, s, msg);
        if (ret == 0 && s->n == 0) snprintf(s->why + strlen(s->why), sizeof s->why - strlen(s->why), "; %s", why);
    }
    if (ret == 0 && s->n > 0 && s->first < 0 && !(s->node_outputs && s->verdict == PAR_V_PASS)) {
        /* No node diverges when every intermediate is an output, yet the case may fail as it is: the backend then
         * computes the graph another way (fused into a consumer, another kernel) when an intermediate need not be
         * kept. Only the prefixes run the graph as the case does; the whole case's verdict decides. (The backend's
         * own node values come from the case's run: there, a passing case needs no prefixes.) */
        par_node_strip whole;
        memset(&whole, 0, sizeof whole);
        whole.first = -1;
        whole.first_ratio = whole.first_z = whole.stat_bound = NAN;
        if (by_prefixes(c, cfg, &whole, msg) != 0) {
            ret = -1;
        } else if (whole.verdict != PAR_V_PASS && whole.verdict != PAR_V_UNSUPPORTED) {
            par_node_strip_free(s);
            *s = whole;
            snprintf(s->why, sizeof s->why, "no node diverged with every node's output made a graph output, but the "
                     "case %s as it is: the backend computes it another way when its intermediates need not be "
                     "kept (fused, another kernel)", par_verdict_name(whole.verdict));
        }
    }
    if (ret == 0 && s->n == 0) ret = by_prefixes(c, cfg, s, msg);
    s->present = ret == 0;
    return ret;
}

void par_localize_failures(const par_case_set *set, const par_run_config *cfg, par_result *results,
                           par_node_strip *strips, int32_t max)
{
    int32_t done = 0;
    for (int32_t i = 0; i < set->n && done < max; i++) {
        const par_case *c = set->cases[i].loaded;
        if (!c || !c->graph || par_graph_desc_of(c->graph)->n_nodes < 2) continue;
        for (int32_t b = 0; b < cfg->n_backends && done < max; b++) {
            const size_t at = (size_t)i * (size_t)cfg->n_backends + (size_t)b;
            par_result *r = &results[at];
            if (!r->done || r->verdict != PAR_V_FAIL) continue;
            par_run_config one = *cfg;
            one.backends = &cfg->backends[b];
            one.n_backends = 1;
            one.servers = NULL;
            one.jobs = 1;
            one.no_refcache = 1; /* up to 16 models' every value: not worth the disk (parity localize caches) */
            one.exec.warmup = 0;
            one.exec.repeat = 1;
            par_node_strip s;
            par_msg msg = {{0}};
            done++;
            if (par_localize_strip(c, &one, &s, &msg) != 0) continue;
            size_t n = strlen(r->reason);
            if (s.first >= 0)
                snprintf(r->reason + n, sizeof r->reason - n, "; first divergent node: '%s' (%s), error/budget %.3g, "
                         "companion %.3g%s", s.first_name, s.first_op, s.first_ratio, s.first_z,
                         s.by_prefix ? " (by prefixes)" : "");
            else if (s.stopped > 0)
                snprintf(r->reason + n, sizeof r->reason - n, "; localization by prefixes stopped at its time budget "
                         "after %d of %d nodes ('parity localize' finishes it)", (int)s.stopped,
                         (int)par_graph_desc_of(c->graph)->n_nodes);
            if (strips) strips[at] = s; /* the report carries it; the caller frees it */
            else par_node_strip_free(&s);
        }
    }
}
