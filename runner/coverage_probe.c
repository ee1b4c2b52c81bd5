/*
 * coverage_probe.c - the claims of backends, probed through the runner (runner/coverage_probe.h), and a suite's
 * cases counted for the coverage table. Backends never run in this process: every representative graph is a case of
 * the normal runner, which runs it in the backend's child; this file only reads UNSUPPORTED versus anything else.
 */
#include "coverage_probe.h"

#include "cases/sweep.h"
#include "gen/gen.h"

#include <stdlib.h>
#include <string.h>

void par_cov_probe_opts_default(par_cov_probe_opts *o)
{
    o->seeds = 16;
    o->per_dtype = 2;
}

static int graph_has_op(const par_graph_desc *g, const char *op)
{
    for (int32_t i = 0; i < g->n_nodes; i++)
        if (strcmp(g->nodes[i].op, op) == 0) return 1;
    return 0;
}

/* The representatives being collected: the set, which op and dtype each stands for, and how many each has. */
typedef struct reps {
    par_case_set *set;
    int32_t *op_of, *dt_of;
    int32_t cap;
    int32_t kept[PAR_OP_COUNT][PAR_COV_DTYPES];
    int32_t per_dtype;
    int oom;
} reps;

/* Keep c as a representative of op (or destroy it: its dtype's quota is full, or it is not a graph of op). */
static void keep(reps *r, par_op_id op, par_case *c)
{
    const par_graph_desc *g = par_graph_desc_of(c->graph);
    const par_dtype dt = par_graph_compute_dtype(g);
    if (r->oom || (int)dt <= 0 || dt >= PAR_COV_DTYPES || r->kept[op][dt] >= r->per_dtype ||
        !graph_has_op(g, par_op_get(op)->name)) {
        par_case_destroy(c);
        return;
    }
    if (r->set->n >= r->cap) {
        const int32_t cap = r->cap ? 2 * r->cap : 256;
        int32_t *a = realloc(r->op_of, (size_t)cap * sizeof *a);
        if (a) r->op_of = a;
        int32_t *b = realloc(r->dt_of, (size_t)cap * sizeof *b);
        if (b) r->dt_of = b;
        if (!a || !b) {
            r->oom = 1;
            par_case_destroy(c);
            return;
        }
        r->cap = cap;
    }
    const int32_t i = r->set->n;
    if (par_case_set_adopt(r->set, c, "coverage:probe") != 0) {
        r->oom = 1;
        return;
    }
    r->op_of[i] = (int32_t)op;
    r->dt_of[i] = (int32_t)dt;
    r->kept[op][dt]++;
}

/* The quick suite's cases of one op, for an op the generator makes no graph of. */
typedef struct suite_pick {
    reps *r;
    par_op_id op;
    int32_t wanted;          /* IDs asked to be built so far: at most 64 per op */
} suite_pick;

static int pick_want(void *user, int64_t index, const char *id, const char *op)
{
    suite_pick *p = user;
    (void)index, (void)id;
    if (!op || strcmp(op, par_op_get(p->op)->name) != 0 || p->wanted >= 64) return 0;
    p->wanted++;
    return 1;
}

static void pick_build(void *user, int64_t index, par_case *c)
{
    suite_pick *p = user;
    (void)index;
    keep(p->r, p->op, c);
}

static void pick_error(void *user, const char *id, const par_msg *msg) { (void)user, (void)id, (void)msg; }

int par_coverage_representatives(const par_cov_probe_opts *o, par_case_set *set, int32_t **op_of, int32_t **dt_of,
                                 par_msg *msg)
{
    reps r = {.set = set, .per_dtype = o->per_dtype > 0 ? o->per_dtype : 1};
    for (int op = 0; op < PAR_OP_COUNT && !r.oom; op++) {
        par_fuzz_opts fo;
        par_fuzz_opts_default(&fo);
        for (int k = 0; k < PAR_OP_COUNT; k++) fo.weight[k] = 0;
        fo.weight[op] = 1;
        fo.max_nodes = 1;
        fo.max_elems = 256;
        fo.hazard_share = 0;
        fo.quant_share = 0.5;
        int any = 0;
        for (int32_t s = 1; s <= o->seeds && !r.oom; s++) {
            par_msg m = {{0}};
            par_case *c = par_fuzz_case((uint64_t)s, &fo, &m);
            if (!c) continue; /* no graph of this op from this seed (e.g. a quantized draw of a float-only op) */
            any = 1;
            keep(&r, (par_op_id)op, c);
        }
        if (any) continue;
        suite_pick p = {.r = &r, .op = (par_op_id)op};
        par_sweep_visit v = {.want = pick_want, .build = pick_build, .error = pick_error, .user = &p, .seed = 1,
                             .only_op = par_op_get((par_op_id)op)->name};
        par_sweep_walk("quick", &v);
    }
    *op_of = r.op_of;
    *dt_of = r.dt_of;
    if (r.oom) {
        par_msgf(msg, PAR_ERROR, "coverage: out of memory while making the representative graphs");
        return 3;
    }
    return 0;
}

int par_coverage_probe(const par_run_config *cfg, const par_cov_probe_opts *o, par_coverage *cov, par_msg *msg)
{
    par_case_set set = {0};
    set.seed = 1;
    int32_t *op_of = NULL, *dt_of = NULL;
    int rc = par_coverage_representatives(o, &set, &op_of, &dt_of, msg);
    if (rc != 0 || set.n == 0) {
        par_case_set_free(&set);
        free(op_of);
        free(dt_of);
        return rc;
    }
    par_run_config run = *cfg;
    run.exec.repeat = 1;
    run.exec.warmup = 0;
    run.progress = 0;
    run.no_refcache = 1;
    par_run_result res = {0};
    rc = par_run_cases(&set, &run, &res);
    if (rc == 0 || rc == 1) {
        rc = 0;
        for (int32_t i = 0; i < set.n; i++)
            for (int32_t b = 0; b < cfg->n_backends && b < cov->n_backends; b++) {
                const par_result *x = &res.results[(size_t)i * (size_t)cfg->n_backends + (size_t)b];
                par_cov_cell *c = par_coverage_cell(cov, b, (par_op_id)op_of[i], (par_dtype)dt_of[i]);
                if (!x->done || !c) continue;
                c->probes++;
                if (x->verdict != PAR_V_UNSUPPORTED) c->claims++;
                else if (!c->why_not[0]) par_text_clean(c->why_not, sizeof c->why_not, x->reason, sizeof x->reason, 1);
            }
    } else {
        par_msgf(msg, PAR_ERROR, "coverage: the probe run %s (exit %d)",
                 res.interrupted_by ? "was interrupted" : "failed inside the harness", rc);
    }
    par_run_result_free(&res);
    par_case_set_free(&set);
    free(op_of);
    free(dt_of);
    return rc;
}

/* Every case of a suite, counted by its graph's ops and compute dtype. */
typedef struct suite_count {
    par_coverage *cov;
    int failed;
    par_msg err;
} suite_count;

static int count_want(void *user, int64_t index, const char *id, const char *op)
{
    (void)user, (void)index, (void)id, (void)op;
    return 1;
}

static void count_build(void *user, int64_t index, par_case *c)
{
    suite_count *s = user;
    (void)index;
    const par_graph_desc *g = par_graph_desc_of(c->graph);
    const par_dtype dt = par_graph_compute_dtype(g);
    for (int32_t i = 0; i < g->n_nodes; i++) {
        int first = 1; /* count each op of the case once */
        for (int32_t k = 0; k < i; k++)
            if (strcmp(g->nodes[k].op, g->nodes[i].op) == 0) first = 0;
        if (first) par_coverage_add_case(s->cov, g->nodes[i].op, dt);
    }
    par_case_destroy(c);
}

static void count_error(void *user, const char *id, const par_msg *msg)
{
    suite_count *s = user;
    if (!s->failed) par_msgf(&s->err, PAR_ERROR, "suite case %s: %s", id, msg->text);
    s->failed = 1;
}

int par_coverage_add_suite(par_coverage *cov, const char *suite, uint64_t seed, par_msg *msg)
{
    suite_count s = {.cov = cov};
    par_sweep_visit v = {.want = count_want, .build = count_build, .error = count_error, .user = &s,
                         .seed = seed ? seed : 1};
    if (par_sweep_walk(suite, &v) < 0) {
        par_msgf(msg, PAR_ERROR, "coverage: unknown suite '%s' (quick or full)", suite);
        return 2;
    }
    if (s.failed) {
        *msg = s.err;
        return 2;
    }
    cov->passes_known = 0;
    snprintf(cov->source, sizeof cov->source, "the %s suite's selection (seed %llu)", suite,
             (unsigned long long)(seed ? seed : 1));
    return 0;
}
