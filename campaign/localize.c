/*
 * localize.c - the first divergent node (localize.h). The whole case and the prefix of every node go to the runner
 * as one case set, so one par_run_cases call (its workers, child processes, guards and oracle) judges them all.
 * A node's prefix keeps only the nodes its output depends on: a node of another branch cannot change it, and a
 * backend then has nothing to compute that the prefix does not check. Walking the prefixes in node order, every
 * ancestor of the first one that fails has a passing (or unsupported) prefix of its own, so the first failure is
 * where the values first leave their budgets.
 */
#include "localize.h"
#include "localize_run.h"
#include "case_edit.h"

#include "core/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

par_case *par_case_prefix(const par_case *c, int32_t node, par_msg *msg)
{
    if (!c || !c->graph || c->status != PAR_OK) {
        par_msgf(msg, PAR_ERROR, "prefix: not a valid case");
        return NULL;
    }
    const par_graph_desc *d = par_graph_desc_of(c->graph);
    if (node < 0 || node >= d->n_nodes) {
        par_msgf(msg, PAR_ERROR, "prefix: node %d is not in 0..%d", (int)node, (int)d->n_nodes - 1);
        return NULL;
    }
    uint8_t *keep = calloc((size_t)d->n_nodes, 1);
    if (!keep) {
        par_msgf(msg, PAR_ERROR, "out of memory");
        return NULL;
    }
    /* the ancestors of node: walk back in topological order */
    keep[node] = 1;
    for (int32_t k = node; k >= 0; k--) {
        if (!keep[k]) continue;
        const par_node *n = &d->nodes[k];
        for (int32_t i = 0; i < n->n_inputs; i++) {
            int32_t v = n->inputs[i];
            if (v >= 0 && d->values[v].producer >= 0) keep[d->values[v].producer] = 1;
        }
    }
    char id[PAR_ID_LEN];
    snprintf(id, sizeof id, "%.200s@%.40s", c->id, d->nodes[node].name);
    par_case_edit e = {.keep = keep, .n_outputs = d->nodes[node].n_outputs, .outputs = d->nodes[node].outputs};
    par_case *p = par_case_edited(c, &e, id, msg);
    free(keep);
    return p;
}

int par_loc_plan_add(par_case_set *set, const par_case *c, int32_t k0, int32_t k1, int whole, par_loc_plan *p,
                     par_msg *msg)
{
    const par_graph_desc *d = par_graph_desc_of(c->graph);
    memset(p, 0, sizeof *p);
    p->whole = -1;
    p->n_nodes = d->n_nodes;
    p->slot = malloc(sizeof *p->slot * (size_t)(d->n_nodes ? d->n_nodes : 1));
    if (!p->slot) return par_msgf(msg, PAR_ERROR, "out of memory"), -1;
    for (int32_t k = 0; k < d->n_nodes; k++) p->slot[k] = -1;
    if (whole) {
        par_case *w = par_case_copy(c, NULL, msg);
        if (!w) return -1;
        if (par_case_set_adopt(set, w, NULL) != 0) return par_msgf(msg, PAR_ERROR, "out of memory"), -1;
        p->whole = set->n - 1;
    }
    for (int32_t k = k0 < 0 ? 0 : k0; k < k1 && k < d->n_nodes; k++) {
        par_msg pm = {{0}};
        par_case *pc = par_case_prefix(c, k, &pm);
        if (!pc) continue; /* a prefix the case model refuses has no verdict: it is skipped like UNSUPPORTED */
        if (par_case_set_adopt(set, pc, NULL) != 0) return par_msgf(msg, PAR_ERROR, "out of memory"), -1;
        p->slot[k] = set->n - 1;
    }
    return 0;
}

void par_loc_plan_read(const par_loc_plan *p, const par_case *c, const par_result *results, par_divergence *out,
                       par_result *whole)
{
    const par_graph_desc *d = par_graph_desc_of(c->graph);
    if (p->whole >= 0) {
        memset(out, 0, sizeof *out);
        out->node = -1;
        out->rec = results[p->whole];
        if (whole) *whole = results[p->whole];
    }
    /* a whole case that passes has no failure to localize, whatever a prefix of it does */
    if (out->rec.verdict == PAR_V_PASS || out->rec.verdict == PAR_V_UNSUPPORTED) return;
    for (int32_t k = 0; k < p->n_nodes && out->node < 0; k++) {
        if (p->slot[k] < 0) continue;
        const par_result *r = &results[p->slot[k]];
        if (!r->done || r->verdict == PAR_V_PASS || r->verdict == PAR_V_UNSUPPORTED) continue;
        out->node = k;
        snprintf(out->node_name, sizeof out->node_name, "%s", d->nodes[k].name);
        snprintf(out->op, sizeof out->op, "%s", d->nodes[k].op);
        out->rec = *r;
    }
}

void par_loc_plan_free(par_loc_plan *p)
{
    free(p->slot);
    p->slot = NULL;
}

int par_loc_check_cfg(const par_run_config *cfg, par_msg *msg)
{
    if (!cfg || cfg->n_backends != 1 || !cfg->backends) {
        par_msgf(msg, PAR_ERROR, "localize: the run configuration must hold exactly one backend (it holds %d)",
                 cfg ? (int)cfg->n_backends : 0);
        return -1;
    }
    return 0;
}

int par_loc_run_set(const par_case_set *set, const par_run_config *cfg, par_run_result *res, par_msg *msg)
{
    par_run_config rc = *cfg;
    rc.progress = 0;
    int code = par_run_cases(set, &rc, res);
    if (!res->results || code >= 128 || code == 3) {
        par_msgf(msg, PAR_ERROR, "the run %s", code >= 128 ? "was interrupted" : "failed (internal error)");
        par_run_result_free(res);
        return code >= 128 ? code : -1;
    }
    return 0;
}

/* How many prefixes of c go in one case set: all of them for the small graphs of fuzzing, fewer for a model, whose
 * prefixes would otherwise hold its weights many times over at once (2^24 elements of data per set at most). */
static int32_t chunk_of(const par_case *c)
{
    int64_t elems = par_case_data_elems(c);
    int64_t n = elems > 0 ? (INT64_C(1) << 24) / elems : 1024;
    return n < 1 ? 1 : n > 1024 ? 1024 : (int32_t)n;
}

int par_loc_run(const par_case *c, const par_run_config *cfg, par_divergence *out, par_result *whole_rec,
                par_msg *msg)
{
    memset(out, 0, sizeof *out);
    out->node = -1;
    if (par_loc_check_cfg(cfg, msg) != 0) return -1;
    int32_t n = par_graph_desc_of(c->graph)->n_nodes, chunk = chunk_of(c);
    int ret = 0;
    /* the whole case with the first chunk of prefixes, then chunk after chunk until a prefix fails */
    for (int32_t k0 = 0; ret == 0 && (k0 == 0 || (k0 < n && out->node < 0 && out->rec.verdict != PAR_V_PASS &&
                                                  out->rec.verdict != PAR_V_UNSUPPORTED));
         k0 += chunk) {
        par_case_set set = {0};
        set.seed = c->seed;
        par_loc_plan plan;
        ret = par_loc_plan_add(&set, c, k0, k0 + chunk, k0 == 0, &plan, msg) == 0 ? 0 : -1;
        par_run_result res = {0};
        if (ret == 0 && par_loc_run_set(&set, cfg, &res, msg) != 0) ret = -1;
        if (ret == 0) {
            par_loc_plan_read(&plan, c, res.results, out, whole_rec);
            par_run_result_free(&res);
        }
        par_loc_plan_free(&plan);
        par_case_set_free(&set);
        if (ret == 0 && cfg->loc_deadline > 0 && out->node < 0 && k0 + chunk < n && par_now_s() > cfg->loc_deadline &&
            out->rec.verdict != PAR_V_PASS && out->rec.verdict != PAR_V_UNSUPPORTED) {
            out->stopped = k0 + chunk;
            break;
        }
    }
    return ret;
}

int par_localize(const par_case *c, const par_run_config *cfg, par_divergence *out, par_msg *msg)
{
    if (!c || !c->graph || c->status != PAR_OK) {
        par_msgf(msg, PAR_ERROR, "localize: not a valid case");
        return -1;
    }
    return par_loc_run(c, cfg, out, NULL, msg);
}
