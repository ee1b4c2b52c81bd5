/*
 * test_quant_nodes.c - the default mode's allowances at every quantized node of a graph, not only at its outputs
 * (docs/quantization.md, "Deep graphs"): the reference computed under each scheme is what a correct backend of that
 * scheme produces at every node, so each must lie within the fp32 reference's [ql - e, qh + e] everywhere. Run on
 * the quantized MobileNetV2 (52 convolutions, 10 adds, per-channel weights) and on the quick suite's quantized cases.
 * Every node's output counts as a graph output here: the reference keeps them all. PAR_TEST_VERBOSE=1 prints the
 * elements outside per node.
 */
#include <math.h>
#include <stdlib.h>

#include "cases/sweep.h"
#include "core/case.h"
#include "core/requant.h"
#include "oracle/oracle.h"
#include "tmain.h"

/* The reference of case c under scheme s (default mode). */
static par_ref_result *ref_of(par_case *c, void **inputs, par_requant s)
{
    par_prec p = par_prec_for(PAR_ARITH_F32);
    p.requant = s;
    par_ref_result *r = NULL;
    par_msg msg = {{0}};
    if (par_ref_run(par_graph_desc_of(c->graph), &p, (const void *const *)inputs, &r, &msg) != PAR_OK) {
        fprintf(stderr, "\n    %s: %s\n", c->id, msg.text);
        return NULL;
    }
    return r;
}

/* Elements of every quantized node output where scheme `got`'s integers lie outside the allowance of the reference
 * `want`; per node counts printed when verbose. Returns the total; *n_nodes the nodes compared. */
static int64_t outside(const par_case *c, const par_ref_result *want, const par_ref_result *got, const char *label,
                       int32_t *n_nodes)
{
    const par_graph_desc *g = par_graph_desc_of(c->graph);
    int64_t total = 0;
    *n_nodes = 0;
    for (int32_t k = 0; k < g->n_nodes; k++) {
        const int32_t vi = g->nodes[k].outputs[0];
        const par_rt *w = &want->values[vi], *b = &got->values[vi];
        if (!w->ql || !w->qh) continue;
        (*n_nodes)++;
        int64_t n = 0;
        double worst = 0;
        for (int64_t i = 0; i < w->numel; i++) {
            double x = b->v[i], over = fmax(w->ql[i] - w->e[i] - x, x - w->qh[i] - w->e[i]);
            if (over > 0) {
                n++;
                worst = fmax(worst, over);
            }
        }
        if (n) PAR_TEST_NOTE("\n    %s: node %d '%s' (%s): %lld of %lld outside, by up to %g", label, (int)k,
                             g->nodes[k].name, g->nodes[k].op, (long long)n, (long long)w->numel, worst);
        total += n;
    }
    return total;
}

/* Each scheme's reference against each other's allowances, at every node. */
static void all_pairs(par_case *c, int64_t *total, int32_t *nodes)
{
    void **inputs = NULL;
    par_msg msg = {{0}};
    CU_ASSERT_FATAL(par_case_make_inputs(c, &inputs, &msg) == PAR_OK);
    par_ref_result *r[PAR_REQUANT_N_SCHEMES];
    for (int s = 0; s < PAR_REQUANT_N_SCHEMES; s++) {
        r[s] = ref_of(c, inputs, (par_requant)s);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r[s]);
    }
    for (int d = 0; d < PAR_REQUANT_N_SCHEMES; d++)
        for (int s = 0; s < PAR_REQUANT_N_SCHEMES; s++) {
            if (s == d) continue;
            char label[256];
            snprintf(label, sizeof label, "%s, %s against %s", c->id, par_requant_name((par_requant)s),
                     par_requant_name((par_requant)d));
            int32_t nn = 0;
            int64_t n = outside(c, r[d], r[s], label, &nn);
            total[d * PAR_REQUANT_N_SCHEMES + s] += n;
            *nodes += nn;
        }
    for (int s = 0; s < PAR_REQUANT_N_SCHEMES; s++) par_ref_result_destroy(r[s]);
    par_case_free_inputs(c, inputs);
}

static void report(const char *what, const int64_t *total)
{
    for (int d = 0; d < PAR_REQUANT_N_SCHEMES; d++)
        for (int s = 0; s < PAR_REQUANT_N_SCHEMES; s++)
            if (s != d)
                PAR_TEST_NOTE("\n    %s: %s against %s's allowances: %lld elements outside", what,
                              par_requant_name((par_requant)s), par_requant_name((par_requant)d),
                              (long long)total[d * PAR_REQUANT_N_SCHEMES + s]);
}

static void test_mobilenet_v2_qs8_every_node(void)
{
    PAR_TEST_NIGHTLY(); /* about 70 s of CPU: the float64 reference of MobileNetV2 once per scheme */
    par_msg msg = {{0}};
    par_case *c = par_case_load("cases/models/mobilenet_v2_qs8.json", &msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    int64_t total[PAR_REQUANT_N_SCHEMES * PAR_REQUANT_N_SCHEMES] = {0};
    int32_t nodes = 0;
    all_pairs(c, total, &nodes);
    report("mobilenet_v2_qs8", total);
    CU_ASSERT(nodes >= 90 * PAR_REQUANT_N_SCHEMES * (PAR_REQUANT_N_SCHEMES - 1)); /* conv, add, relu6, ... */
    for (int k = 0; k < PAR_REQUANT_N_SCHEMES * PAR_REQUANT_N_SCHEMES; k++) CU_ASSERT_EQUAL(total[k], 0);
    par_case_destroy(c);
}

typedef struct quick_acc {
    int64_t total[PAR_REQUANT_N_SCHEMES * PAR_REQUANT_N_SCHEMES];
    int32_t nodes, cases;
} quick_acc;

static int want_quant(void *user, int64_t index, const char *id, const char *op)
{
    (void)user, (void)index, (void)op;
    return strstr(id, "dt=q") != NULL;
}

static void build_quant(void *user, int64_t index, par_case *c)
{
    quick_acc *a = user;
    (void)index;
    a->cases++;
    all_pairs(c, a->total, &a->nodes);
    par_case_destroy(c);
}

static void sweep_error(void *user, const char *id, const par_msg *msg)
{
    (void)user;
    fprintf(stderr, "\n    %s: %s\n", id, msg->text);
    CU_FAIL("a quick case could not be built");
}

static void test_quick_quantized_every_node(void)
{
    static quick_acc a;
    memset(&a, 0, sizeof a);
    par_sweep_visit v = {.want = want_quant, .build = build_quant, .error = sweep_error, .user = &a, .seed = 1};
    CU_ASSERT(par_sweep_walk("quick", &v) > 0);
    report("quick suite, quantized", a.total);
    CU_ASSERT(a.cases >= 200);
    for (int k = 0; k < PAR_REQUANT_N_SCHEMES * PAR_REQUANT_N_SCHEMES; k++) CU_ASSERT_EQUAL(a.total[k], 0);
}

static const CU_TestInfo tests[] = {
    {"mobilenet_v2_qs8: every scheme within every other's allowances at every node", test_mobilenet_v2_qs8_every_node},
    {"quick suite, quantized: every scheme within every other's allowances at every node",
     test_quick_quantized_every_node},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("quant_nodes", tests)
