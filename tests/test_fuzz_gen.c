/*
 * test_fuzz_gen.c - the graph generator (fuzz/gen.h): thousands of seeds give finished cases within max_nodes and
 * max_elems; every op with weight > 0 appears over the seeds (the list comes from the op table); weight lists parse
 * and refuse; an op of weight 0 never appears; the same seed gives the same JSON and different seeds differ; IDs
 * rebuild their case; any bytes decode to a valid case; the quantized share gives qu8 / qs8 graphs.
 * PAR_TEST_VERBOSE=1 prints the generation rate.
 */
#include <stdlib.h>
#include <time.h>

#include "core/prng.h"
#include "gen/gen.h"
#include "gen/gen_int.h"
#include "runner/runner.h"
#include "tmain.h"

/* Checks one generated case: finished, at most max_nodes nodes, every tensor within max_elems. */
static int case_ok(const par_case *c, const par_fuzz_opts *o)
{
    if (!c || c->status != PAR_OK) return 0;
    const par_graph_desc *d = par_graph_desc_of(c->graph);
    if (d->n_nodes < 1 || d->n_outputs < 1) return 0;
    int32_t ops = 0;
    for (int32_t i = 0; i < d->n_nodes; i++) {
        /* the quantized twin adds quantize / dequantize nodes at its boundaries: only the float graph's count */
        if (strcmp(d->nodes[i].op, "quantize") != 0 && strcmp(d->nodes[i].op, "dequantize") != 0) ops++;
    }
    if (ops > o->max_nodes) return 0;
    for (int32_t v = 0; v < d->n_values; v++)
        if (d->values[v].numel > o->max_elems) return 0;
    return 1;
}

static void count_ops(const par_case *c, int *seen)
{
    const par_graph_desc *d = par_graph_desc_of(c->graph);
    for (int32_t i = 0; i < d->n_nodes; i++) {
        const par_op_info *op = par_op_of(&d->nodes[i]);
        if (op) seen[op->id]++;
    }
}

static void test_seeds_valid_and_cover(void)
{
    par_fuzz_opts o;
    par_fuzz_opts_default(&o);
    o.quant_share = 0;
    o.hazard_share = 0;
    int seen[PAR_OP_COUNT] = {0};
    int bad = 0, nodes = 0;
    for (uint64_t s = 1; s <= 6000; s++) {
        par_msg m = {{0}};
        par_case *c = par_fuzz_case(s, &o, &m);
        if (!case_ok(c, &o)) {
            if (bad++ < 5) fprintf(stderr, "\n    seed %llu: %s\n", (unsigned long long)s, c ? c->err.text : m.text);
        } else {
            count_ops(c, seen);
            nodes += par_graph_desc_of(c->graph)->n_nodes;
        }
        par_case_destroy(c);
    }
    CU_ASSERT_EQUAL(bad, 0);
    /* every op the generator can build is drawn (linear_16a4w between a quantize to qs16 and a dequantize); a family
     * gen_ops.c would list without a builder is never drawn, and there are few */
    int unbuilt = 0;
    for (int i = 0; i < PAR_OP_COUNT; i++) {
        const int drawable = gen_op_fn_of(par_op_get(i)) != NULL;
        unbuilt += !drawable;
        if (drawable && seen[i] == 0) fprintf(stderr, "\n    op %s never drawn\n", par_op_get(i)->name);
        CU_ASSERT(drawable ? seen[i] > 0 : seen[i] == 0);
    }
    CU_ASSERT(unbuilt <= 2);
    PAR_TEST_NOTE("6000 seeds: %d nodes\n", nodes);
}

static void test_weights(void)
{
    par_fuzz_opts o;
    par_fuzz_opts_default(&o);
    par_msg m = {{0}};
    CU_ASSERT_EQUAL(par_fuzz_weights_parse(&o, "conv2d=0,*=2", &m), PAR_OK);
    /* later entries win: "*" overrides conv2d */
    CU_ASSERT_EQUAL(o.weight[PAR_OP_CONV2D], 2.0);
    CU_ASSERT_EQUAL(o.weight[PAR_OP_RELU], 2.0);
    CU_ASSERT_EQUAL(par_fuzz_weights_parse(&o, "*=2,conv2d=0,softmax=0.5", &m), PAR_OK);
    CU_ASSERT_EQUAL(o.weight[PAR_OP_CONV2D], 0.0);
    CU_ASSERT_EQUAL(o.weight[PAR_OP_SOFTMAX], 0.5);
    par_fuzz_opts before = o;
    CU_ASSERT_EQUAL(par_fuzz_weights_parse(&o, "relu=3,nosuch=1", &m), PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "nosuch"));
    CU_ASSERT_EQUAL(memcmp(&o, &before, sizeof o), 0); /* unchanged on error */
    CU_ASSERT_EQUAL(par_fuzz_weights_parse(&o, "relu=abc", &m), PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "relu=abc"));
    CU_ASSERT_EQUAL(par_fuzz_weights_parse(&o, "relu=-1", &m), PAR_ERROR);
    CU_ASSERT_EQUAL(par_fuzz_weights_parse(&o, "relu", &m), PAR_ERROR);
    CU_ASSERT_EQUAL(par_fuzz_weights_parse(&o, "*=0", &m), PAR_OK);
    CU_ASSERT_PTR_NULL(par_fuzz_case(1, &o, &m)); /* nothing to draw */
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "weight 0"));
}

static void test_weight_zero_never_drawn(void)
{
    par_fuzz_opts o;
    par_fuzz_opts_default(&o);
    o.hazard_share = 0;
    o.quant_share = 0;
    par_msg m = {{0}};
    CU_ASSERT_EQUAL(par_fuzz_weights_parse(&o, "conv2d=0,relu=0,add=0,linear=5", &m), PAR_OK);
    int seen[PAR_OP_COUNT] = {0};
    for (uint64_t s = 1; s <= 500; s++) {
        par_case *c = par_fuzz_case(s, &o, &m);
        CU_ASSERT(case_ok(c, &o));
        if (c) count_ops(c, seen);
        par_case_destroy(c);
    }
    CU_ASSERT_EQUAL(seen[PAR_OP_CONV2D], 0);
    CU_ASSERT_EQUAL(seen[PAR_OP_RELU], 0);
    CU_ASSERT_EQUAL(seen[PAR_OP_ADD], 0);
    CU_ASSERT(seen[PAR_OP_LINEAR] > seen[PAR_OP_SUB]);
}

static char *json_of(uint64_t seed, const par_fuzz_opts *o)
{
    par_msg m;
    par_case *c = par_fuzz_case(seed, o, &m);
    char *t = c ? par_case_to_json(c, 0) : NULL;
    par_case_destroy(c);
    return t;
}

static void test_deterministic(void)
{
    par_fuzz_opts o;
    par_fuzz_opts_default(&o);
    int differ = 0;
    for (uint64_t s = 1; s <= 200; s++) {
        char *a = json_of(s, &o), *b = json_of(s, &o), *n = json_of(s + 1, &o);
        CU_ASSERT(a && b && n);
        if (a && b) CU_ASSERT_STRING_EQUAL(a, b);
        if (a && n && strcmp(a, n) != 0) differ++;
        free(a), free(b), free(n);
    }
    CU_ASSERT_EQUAL(differ, 200);
}

static void roundtrip(uint64_t seed, const par_fuzz_opts *o, const char *want_id)
{
    par_msg m = {{0}};
    par_case *c = par_fuzz_case(seed, o, &m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    if (want_id) CU_ASSERT_STRING_EQUAL(c->id, want_id);
    CU_ASSERT(strlen(c->id) < 256);
    CU_ASSERT(par_fuzz_is_id(c->id));
    par_case *b = par_fuzz_case_by_id(c->id, &m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_STRING_EQUAL(b->id, c->id);
    char *t1 = par_case_to_json(c, 0), *t2 = par_case_to_json(b, 0);
    CU_ASSERT(t1 && t2 && strcmp(t1, t2) == 0);
    free(t1), free(t2);
    par_case_destroy(b);
    par_case_destroy(c);
}

static void test_id_roundtrip(void)
{
    par_fuzz_opts o;
    par_fuzz_opts_default(&o);
    roundtrip(17, &o, "fuzz#seed=17");
    o.max_nodes = 4;
    roundtrip(17, &o, "fuzz(max_nodes=4)#seed=17");
    o.max_elems = 1000;
    o.quant_share = 0.5;
    o.hazard_share = 0;
    par_msg m;
    CU_ASSERT_EQUAL(par_fuzz_weights_parse(&o, "conv2d=0,softmax=2.5", &m), PAR_OK);
    roundtrip(99, &o, "fuzz(max_nodes=4,max_elems=1000,hazard_share=0,quant_share=0.5,w[conv2d]=0,"
                      "w[softmax]=2.5)#seed=99");
    /* most weights 0: the ID says so once */
    CU_ASSERT_EQUAL(par_fuzz_weights_parse(&o, "*=0,relu=1,conv2d=3", &m), PAR_OK);
    roundtrip(5, &o, NULL);
    par_case *c = par_fuzz_case(5, &o, &m);
    CU_ASSERT_PTR_NOT_NULL(c);
    if (c) CU_ASSERT_PTR_NOT_NULL(strstr(c->id, "w[*]=0"));
    par_case_destroy(c);
    for (uint64_t s = 1000; s < 1100; s++) roundtrip(s, &o, NULL);

    /* ops of one weight are one option, named in table order; '|' joins names in a weight list too */
    par_fuzz_opts_default(&o);
    CU_ASSERT_EQUAL(par_fuzz_weights_parse(&o, "softmax=2,conv2d=2,relu=0", &m), PAR_OK);
    roundtrip(3, &o, "fuzz(w[conv2d|softmax]=2,w[relu]=0)#seed=3");
    par_fuzz_opts g;
    par_fuzz_opts_default(&g);
    CU_ASSERT_EQUAL(par_fuzz_weights_parse(&g, "softmax|conv2d=2,relu=0", &m), PAR_OK);
    CU_ASSERT_EQUAL(memcmp(g.weight, o.weight, sizeof o.weight), 0);
    /* every third op at weight 1 and the rest 0, as 'parity coverage' suggests for a backend: the names do not fit a
     * case ID, so the ID holds the ops as a mask of the op table, and reads back to the same weights and case */
    par_fuzz_opts_default(&o);
    CU_ASSERT_EQUAL(par_fuzz_weights_parse(&o, "*=0", &m), PAR_OK);
    for (int i = 0; i < PAR_OP_COUNT; i += 3) o.weight[i] = 1;
    o.weight[1] = 3;
    par_case *mc = par_fuzz_case(8, &o, &m);
    CU_ASSERT_PTR_NOT_NULL(mc);
    if (mc) {
        CU_ASSERT_PTR_NOT_NULL(strstr(mc->id, "w[@"));
        CU_ASSERT_PTR_NOT_NULL(strstr(mc->id, "w[*]=0"));
        roundtrip(8, &o, mc->id);
    }
    par_case_destroy(mc);
    /* a mask with a bit past the table, or no hex digit: refused with a message */
    char big[64];
    snprintf(big, sizeof big, "@1%0*d=1", (PAR_OP_COUNT + 3) / 4, 0);
    par_fuzz_opts_default(&g);
    m.text[0] = 0;
    CU_ASSERT_EQUAL(par_fuzz_weights_parse(&g, big, &m), PAR_ERROR);
    CU_ASSERT(m.text[0] != 0);
    CU_ASSERT_EQUAL(par_fuzz_weights_parse(&g, "@=1", &m), PAR_ERROR);
    CU_ASSERT_EQUAL(par_fuzz_weights_parse(&g, "@xyz=1", &m), PAR_ERROR);
    CU_ASSERT_EQUAL(par_fuzz_weights_parse(&g, "relu|=1", &m), PAR_ERROR);

    /* bad IDs: a clear message */
    static const char *const bad[] = {"conv2d#seed=1", "fuzz(max_nodes=4#seed=1", "fuzz(nosuch=1)#seed=1",
                                      "fuzz(w[nosuch]=1)#seed=1", "fuzz(max_nodes=x)#seed=1", "fuzz#seed=",
                                      "fuzz(max_nodes=99)#seed=1", "fuzz#seed=12x", "fuzz(quant_share=2)#seed=1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        m.text[0] = 0;
        CU_ASSERT_PTR_NULL(par_fuzz_case_by_id(bad[i], &m));
        CU_ASSERT(m.text[0] != 0);
    }
    CU_ASSERT_EQUAL(par_fuzz_is_id("conv2d(x)#seed=1"), 0);
}

/* --case with a fuzz ID selects the generator's case (what a report's repro command runs). */
static void test_select_by_id(void)
{
    par_selection sel = {.case_id = "fuzz(max_nodes=4)#seed=17"};
    par_case_set set;
    par_msg m = {{0}};
    CU_ASSERT_EQUAL_FATAL(par_select_cases(&sel, &set, &m), 0);
    CU_ASSERT_EQUAL(set.n, 1);
    CU_ASSERT_EQUAL(set.seed, 17);
    if (set.n == 1) {
        CU_ASSERT_STRING_EQUAL(set.cases[0].id, "fuzz(max_nodes=4)#seed=17");
        par_fuzz_opts o;
        par_fuzz_opts_default(&o);
        o.max_nodes = 4;
        par_case *want = par_fuzz_case(17, &o, &m);
        int owned = 0;
        par_case *got = par_case_set_get(&set, 0, &owned, &m);
        char *a = want ? par_case_to_json(want, 0) : NULL, *b = got ? par_case_to_json(got, 0) : NULL;
        CU_ASSERT(a && b && strcmp(a, b) == 0);
        free(a), free(b);
        par_case_destroy(want);
        if (owned) par_case_destroy(got);
    }
    par_case_set_free(&set);
    sel.case_id = "fuzz(nosuch=1)#seed=1";
    CU_ASSERT_EQUAL(par_select_cases(&sel, &set, &m), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "nosuch"));
}

static void test_from_bytes(void)
{
    par_fuzz_opts o;
    par_fuzz_opts_default(&o);
    o.max_nodes = 6;
    o.max_elems = 1024;
    o.hazard_share = 0;
    par_prng r;
    par_prng_seed(&r, 7);
    int bad = 0;
    uint8_t buf[512];
    for (int i = 0; i < 1500; i++) {
        size_t n = (size_t)par_prng_int(&r, 0, sizeof buf);
        for (size_t k = 0; k < n; k++) buf[k] = (uint8_t)par_prng_next(&r);
        par_msg m = {{0}};
        par_case *c = par_fuzz_case_from_bytes(buf, n, &o, &m);
        if (!case_ok(c, &o) && bad++ < 3) fprintf(stderr, "\n    bytes %d: %s\n", i, c ? c->err.text : m.text);
        par_case_destroy(c);
    }
    CU_ASSERT_EQUAL(bad, 0);
    /* the same bytes decode to the same case */
    for (int i = 0; i < 50; i++) {
        size_t n = (size_t)par_prng_int(&r, 0, sizeof buf);
        for (size_t k = 0; k < n; k++) buf[k] = (uint8_t)par_prng_next(&r);
        par_msg m1, m2;
        par_case *a = par_fuzz_case_from_bytes(buf, n, &o, &m1), *b = par_fuzz_case_from_bytes(buf, n, &o, &m2);
        char *ta = a ? par_case_to_json(a, 0) : NULL, *tb = b ? par_case_to_json(b, 0) : NULL;
        CU_ASSERT(ta && tb && strcmp(ta, tb) == 0);
        free(ta), free(tb);
        par_case_destroy(a), par_case_destroy(b);
    }
    par_msg m;
    par_case *c = par_fuzz_case_from_bytes(NULL, 0, &o, &m); /* nothing at all: the simplest graph */
    CU_ASSERT(case_ok(c, &o));
    par_case_destroy(c);
}

static void test_quant_share(void)
{
    par_fuzz_opts o;
    par_fuzz_opts_default(&o);
    o.quant_share = 1.0;
    o.hazard_share = 0;
    o.max_nodes = 4;
    int qu8 = 0, qs8 = 0, flt = 0;
    for (uint64_t s = 1; s <= 150; s++) {
        par_msg m;
        par_case *c = par_fuzz_case(s, &o, &m);
        CU_ASSERT(case_ok(c, &o));
        if (!c) continue;
        const par_graph_desc *d = par_graph_desc_of(c->graph);
        int u = 0, q = 0;
        for (int32_t v = 0; v < d->n_values; v++) {
            u |= d->values[v].dtype == PAR_DTYPE_QU8;
            q |= d->values[v].dtype == PAR_DTYPE_QS8 && d->values[v].kind == PAR_VALUE_NODE;
        }
        qu8 += u, qs8 += q && !u, flt += !u && !q;
        par_case_destroy(c);
    }
    PAR_TEST_NOTE("quantized: %d qu8, %d qs8, %d kept float\n", qu8, qs8, flt);
    CU_ASSERT(qu8 > 20);
    CU_ASSERT(qs8 > 20);
}

/* The hazard share: valid cases whatever the share; hazard inputs appear once the case model implements the hazard
 * generators (par_gen_check accepts them), and NaN / Inf / overflow hazards only in graphs whose every op has
 * PAR_OPF_NONFINITE. */
static void test_hazard_share(void)
{
    par_fuzz_opts o;
    par_fuzz_opts_default(&o);
    o.hazard_share = 1.0;
    o.quant_share = 0.3;
    par_gen probe = {.dist = PAR_DIST_HAZARD, .a = -1, .b = 1, .hazard = PAR_HAZARD_SUBNORMAL};
    par_msg m;
    int implemented = par_gen_check(&probe, PAR_DTYPE_F32, &m) == PAR_OK;
    int with = 0;
    for (uint64_t s = 1; s <= 400; s++) {
        par_case *c = par_fuzz_case(s, &o, &m);
        CU_ASSERT(case_ok(c, &o));
        if (!c) continue;
        const par_graph_desc *d = par_graph_desc_of(c->graph);
        int nonfinite = 0, any = 0;
        for (int32_t i = 0; i < c->n_srcs; i++) {
            if (c->srcs[i].kind != PAR_SRC_GEN || c->srcs[i].gen.dist != PAR_DIST_HAZARD) continue;
            any = 1;
            par_hazard h = c->srcs[i].gen.hazard;
            nonfinite |= h == PAR_HAZARD_NAN_INF || h == PAR_HAZARD_HUGE || h == PAR_HAZARD_NEAR_OVERFLOW;
        }
        with += any;
        for (int32_t j = 0; nonfinite && j < d->n_nodes; j++)
            CU_ASSERT(par_op_of(&d->nodes[j])->flags & PAR_OPF_NONFINITE);
        par_case_destroy(c);
    }
    PAR_TEST_NOTE("hazard generators %s: %d of 400 cases with hazard inputs\n",
                  implemented ? "implemented" : "not implemented yet", with);
    if (implemented) {
        CU_ASSERT(with > 100);
    } else {
        CU_ASSERT_EQUAL(with, 0);
    }
}

static void test_speed(void)
{
    par_fuzz_opts o;
    par_fuzz_opts_default(&o);
    o.quant_share = 0;
    o.hazard_share = 0;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    int ok = 0;
    for (uint64_t s = 1; s <= 10000; s++) {
        par_msg m;
        par_case *c = par_fuzz_case(s, &o, &m);
        ok += c != NULL;
        par_case_destroy(c);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double sec = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
    PAR_TEST_NOTE("10000 float graphs in %.3f s: %.1f us per graph\n", sec, sec * 1e6 / 10000);
    CU_ASSERT_EQUAL(ok, 10000);
}

static const CU_TestInfo tests[] = {
    {"seeds_valid_and_cover", test_seeds_valid_and_cover},
    {"weights", test_weights},
    {"weight_zero_never_drawn", test_weight_zero_never_drawn},
    {"deterministic", test_deterministic},
    {"id_roundtrip", test_id_roundtrip},
    {"select_by_id", test_select_by_id},
    {"from_bytes", test_from_bytes},
    {"quant_share", test_quant_share},
    {"hazard_share", test_hazard_share},
    {"speed", test_speed},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("fuzz_gen", tests)
