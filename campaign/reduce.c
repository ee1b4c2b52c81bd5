/*
 * reduce.c - the failure signature of a case and the reducer's driver (reduce.h). The driver sweeps the passes of
 * reduce_pass.c to a fixed point: a pass's candidates are tried in order, a batch of them (as many as the run has
 * workers) per par_run_cases call, each with its prefixes so the runner localizes it in the same call; the first
 * candidate of the batch that keeps the signature becomes the current case and the pass starts over on it. A
 * candidate counts as one test whatever the number of prefixes it runs.
 */
#include "reduce.h"
#include "localize_run.h"
#include "case_edit.h"
#include "reduce_pass.h"
#include "core/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* ---- the reducer ---------------------------------------------------------------------------------------------- */

typedef struct reducer {
    const par_run_config *cfg;
    const par_signature *sig;
    const par_reduce_opts *o;
    par_reduce_stats *st;
    double t0, time_s;
    int32_t max_tests;
    par_case *cur;
    int32_t div_node;        /* cur's first divergent node */
    int stop;                /* 1: budget spent; 2: an internal error (msg); 3: interrupted by a signal */
    par_msg *msg;
} reducer;

#define RD_BATCH_MAX 8

static int budget_left(reducer *r)
{
    if (r->stop) return 0;
    if (par_now_s() - r->t0 >= r->time_s || r->st->tests >= r->max_tests) {
        r->stop = 1;
        r->st->budget_hit = 1;
        return 0;
    }
    return 1;
}

/* The signature of a candidate from its plan's records. */
static void cand_signature(const reducer *r, const par_case *c, const par_loc_plan *p, const par_result *results,
                           par_signature *sig, int32_t *div_node)
{
    par_divergence dv;
    par_result whole;
    par_loc_plan_read(p, c, results, &dv, &whole);
    memset(sig, 0, sizeof *sig);
    snprintf(sig->backend, sizeof sig->backend, "%s", r->cfg->backends[0].label);
    sig->verdict = whole.verdict;
    if (whole.verdict != PAR_V_PASS && whole.verdict != PAR_V_UNSUPPORTED && dv.node >= 0)
        snprintf(sig->op, sizeof sig->op, "%s", dv.op);
    *div_node = dv.node;
}

/* Run the candidates (owned; destroyed here) as one case set; the first that keeps the signature becomes the current
 * case. Returns 1 when one did, 0 when none did or on a stop. */
static int try_batch(reducer *r, par_case **cands, char (*whats)[160], int32_t n)
{
    par_case_set set = {0};
    set.seed = r->cur->seed;
    par_loc_plan plans[RD_BATCH_MAX];
    memset(plans, 0, sizeof plans);
    int accepted = 0, ok = 1;
    for (int32_t j = 0; j < n && ok; j++)
        if (par_loc_plan_add(&set, cands[j], 0, INT32_MAX, 1, &plans[j], r->msg) != 0) ok = 0;
    par_run_result res = {0};
    int rc = 0;
    if (ok) {
        rc = par_loc_run_set(&set, r->cfg, &res, r->msg);
        if (rc != 0) ok = 0;
    }
    if (!ok) r->stop = rc >= 128 ? 3 : 2;
    if (rc >= 128) r->st->interrupted_by = rc - 128;
    r->st->tests += n;
    for (int32_t j = 0; j < n && ok && !accepted; j++) {
        par_signature sig;
        int32_t div;
        cand_signature(r, cands[j], &plans[j], res.results, &sig, &div);
        if (!par_signature_eq(&sig, r->sig)) continue;
        par_case_destroy(r->cur);
        r->cur = cands[j];
        cands[j] = NULL;
        r->div_node = div;
        accepted = 1;
        if (r->o && r->o->verbose)
            fprintf(stderr, "reduce: %s: %d nodes, %lld elements (%d tests, %.1f s)\n", whats[j],
                    (int)par_graph_desc_of(r->cur->graph)->n_nodes, (long long)par_case_data_elems(r->cur),
                    (int)r->st->tests, par_now_s() - r->t0);
    }
    if (ok) par_run_result_free(&res);
    for (int32_t j = 0; j < n; j++) {
        par_loc_plan_free(&plans[j]);
        par_case_destroy(cands[j]);
    }
    par_case_set_free(&set);
    return accepted;
}

/* One sweep of a pass: candidates in order, in batches; returns 1 at the first accepted (the caller sweeps the pass
 * again on the new case, whose candidates differ), 0 when none was. */
static int sweep(reducer *r, par_rd_pass pass, int32_t batch)
{
    int32_t i = 0;
    int end = 0;
    while (!end && budget_left(r)) {
        par_case *cands[RD_BATCH_MAX];
        char whats[RD_BATCH_MAX][160];
        int32_t n = 0;
        while (n < batch && !end && r->st->tests + n < r->max_tests) {
            par_case *c = par_rd_candidate(r->cur, pass, r->div_node, i++, whats[n], sizeof whats[n], &end);
            if (c) cands[n++] = c;
        }
        if (n == 0) break;
        if (try_batch(r, cands, whats, n)) return 1;
    }
    return 0;
}

par_case *par_reduce(const par_case *c, const par_run_config *cfg, const par_signature *sig,
                     const par_reduce_opts *o, par_reduce_stats *st, par_msg *msg)
{
    par_reduce_stats local;
    if (!st) st = &local;
    memset(st, 0, sizeof *st);
    if (!c || !c->graph || c->status != PAR_OK || !sig) {
        par_msgf(msg, PAR_ERROR, "reduce: not a valid case");
        return NULL;
    }
    if (par_loc_check_cfg(cfg, msg) != 0) return NULL;
    reducer r = {.cfg = cfg, .sig = sig, .o = o, .st = st, .msg = msg, .t0 = par_now_s()};
    r.time_s = o && o->time_s > 0 ? o->time_s : 60;
    r.max_tests = o && o->max_tests > 0 ? o->max_tests : 2000;
    st->nodes_before = par_graph_desc_of(c->graph)->n_nodes;
    st->elems_before = par_case_data_elems(c);

    /* the case must show the signature to begin with; its divergent node seeds the node pass */
    par_divergence dv;
    par_result whole;
    if (par_loc_run(c, cfg, &dv, &whole, msg) != 0) return NULL;
    par_signature s0;
    memset(&s0, 0, sizeof s0);
    snprintf(s0.backend, sizeof s0.backend, "%s", cfg->backends[0].label);
    s0.verdict = whole.verdict;
    if (whole.verdict != PAR_V_PASS && whole.verdict != PAR_V_UNSUPPORTED && dv.node >= 0)
        snprintf(s0.op, sizeof s0.op, "%s", dv.op);
    st->tests = 1;
    if (!par_signature_eq(&s0, sig)) {
        char a[256], b[256];
        par_signature_text(sig, a, sizeof a);
        par_signature_text(&s0, b, sizeof b);
        par_msgf(msg, PAR_ERROR, "reduce: case '%s' shows '%s', not '%s'", c->id, b, a);
        return NULL;
    }
    char id[PAR_ID_LEN];
    snprintf(id, sizeof id, "%.240s-reduced", c->id);
    r.cur = par_case_copy(c, id, msg);
    if (!r.cur) return NULL;
    r.div_node = dv.node;
    int32_t batch = cfg->jobs > 1 ? cfg->jobs : 1;
    if (batch > RD_BATCH_MAX) batch = RD_BATCH_MAX;

    /* passes to a fixed point: the cheap structural ones first, each swept again while it makes progress */
    for (int progress = 1; progress && budget_left(&r);) {
        progress = 0;
        for (int p = 0; p < PAR_RD_PASS_COUNT && !r.stop; p++)
            while (sweep(&r, (par_rd_pass)p, batch)) progress = 1;
    }
    st->wall_s = par_now_s() - r.t0;
    if (r.stop == 2) {
        par_case_destroy(r.cur);
        return NULL;
    }
    st->nodes_after = par_graph_desc_of(r.cur->graph)->n_nodes;
    st->elems_after = par_case_data_elems(r.cur);
    return r.cur;
}
