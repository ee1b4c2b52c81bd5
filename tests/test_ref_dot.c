/*
 * test_ref_dot.c - the dot products' fast path (reference/dot.h: several outputs at once, the per-term tests hoisted)
 * against their general path, dot_add and dot_finish one output at a time (par_prec.dot_general): conv2d, linear
 * and matmul on random shapes (strides, dilation, padding, groups, depthwise, bias or not, widths below, at and above
 * DOT_LANES), random operands of ordinary and huge magnitudes (products that overflow to Inf, sums that become NaN),
 * budgets and scales zero, ordinary, huge and infinite, non-finite values, under every precision profile with and
 * without the statistical companion's scales and with flushing. Every output's value, budget, scale and mark must
 * be the same bits (NaN equal to NaN). The fast path's own conditions (dot_fast) decide which runs take it; the test
 * counts them, so that it cannot pass by never taking it.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/graph.h"
#include "reference/dot.h"
#include "reference/reference.h"
#include "ref_helpers.h"
#include "tmain.h"

/* The same bits, or both NaN. */
static int same(double a, double b) { return (a != a && b != b) || memcmp(&a, &b, sizeof a) == 0; }

/* A random operand: values of magnitude around 2^mag_exp (some exact zeros), budgets by mode (0: none, 1: ordinary,
 * 2: huge but below the fast path's limit, 3: some infinite or beyond the limit), scales (when with_s) at most the
 * budgets; bad: one value made NaN or +-Inf. */
static par_rt *operand(int32_t rank, const int64_t *dims, uint64_t *r, int mag_exp, int mode, int with_s, int bad)
{
    par_rt *t = rt_new(PAR_DTYPE_F32, rank, dims);
    if (with_s) t->s = calloc((size_t)t->numel, sizeof(double));
    for (int64_t i = 0; i < t->numel; i++) {
        double v = rng_int(r, 0, 9) == 0 ? 0.0 : ldexp(rng_val(r), mag_exp);
        double e = mode == 0   ? 0.0
                   : mode == 1 ? fabs(v) * 0x1p-20 + 0x1p-30 * rng_f(r, 0, 1)
                   : mode == 2 ? ldexp(rng_f(r, 0, 1), 990)
                               : (rng_int(r, 0, 3) == 0 ? (rng_int(r, 0, 1) ? INFINITY : 0x1p1001) : fabs(v) * 0x1p-20);
        t->v[i] = v;
        t->e[i] = e;
        if (with_s) t->s[i] = e * rng_f(r, 0, 1);
    }
    if (bad && t->numel) {
        static const double nf[] = {NAN, INFINITY, -INFINITY};
        t->v[rng_int(r, 0, t->numel - 1)] = nf[rng_int(r, 0, 2)];
    }
    return t;
}

/* The precision profiles: every arithmetic kind, with and without the companion's scales, and one flushing. */
static par_prec profile(int i)
{
    par_prec p = par_prec_for((par_arith)(i % PAR_ARITH_N_KINDS));
    p.stat_scale = (i / PAR_ARITH_N_KINDS) % 2;
    if (i >= 2 * PAR_ARITH_N_KINDS) par_prec_set_flush(&p, 1);
    return p;
}
#define N_PROFILES (2 * PAR_ARITH_N_KINDS + 1)

static int n_runs, n_fast, n_outputs;

/* Run the node on both paths under every profile and compare every output. */
static void compare(infer_fn infer, ref_fn ref, const char *op, int32_t n_in, par_rt *const *in,
                    const par_attr *attrs, int32_t n_attrs)
{
    for (int pi = 0; pi < N_PROFILES; pi++) {
        par_prec p = profile(pi), g = p;
        g.dot_general = 1;
        par_rt *yf = NULL, *yg = NULL;
        uint8_t *af = NULL, *ag = NULL;
        par_msg msg = {{0}};
        par_status sf = run_opq_ex(infer, ref, op, n_in, in, attrs, n_attrs, &p, NULL, &yf, &msg, &af, 1);
        par_status sg = run_opq_ex(infer, ref, op, n_in, in, attrs, n_attrs, &g, NULL, &yg, &msg, &ag, 1);
        CU_ASSERT_EQUAL(sf, PAR_OK);
        CU_ASSERT_EQUAL(sg, PAR_OK);
        if (sf == PAR_OK && sg == PAR_OK) {
            n_runs++;
            n_fast += dot_fast(&p, in[0], in[1]);
            int bad = 0;
            for (int64_t i = 0; i < yf->numel; i++)
                bad += !same(yf->v[i], yg->v[i]) || !same(yf->e[i], yg->e[i]) || !same(yf->s[i], yg->s[i]) ||
                       af[i] != ag[i];
            n_outputs += (int)yf->numel;
            CU_ASSERT_EQUAL(bad, 0);
            if (bad) fprintf(stderr, "%s: profile %d: %d of %lld outputs differ\n", op, pi, bad, (long long)yf->numel);
        }
        rt_del(yf);
        rt_del(yg);
        free(af);
        free(ag);
    }
}

/* The operands' magnitudes and budgets of a draw: mostly ordinary, sometimes overflowing products, huge or infinite
 * budgets, operands near bfloat16's overflow, a non-finite value; *wmag the other operand's magnitude. */
static void draw_kind(uint64_t *r, int *mag, int *wmag, int *mode, int *bad)
{
    /* 990: w x overflows (|w| > 2^34); 128: an operand that bfloat16 may round to Inf (dot_finish's opmax) */
    int64_t k = rng_int(r, 0, 7);
    *mag = k == 0 ? 990 : k == 1 ? 128 : (int)rng_int(r, -30, 30);
    *mode = (int)rng_int(r, 0, 5);
    if (*mode > 3) *mode = 1;
    *bad = rng_int(r, 0, 7) == 0;
    *wmag = (int)rng_int(r, -4, 4) + (*mag > 900 ? 40 : 0);
}

static void test_conv2d_fast_equals_general(void)
{
    uint64_t r = 0x5eed0001;
    for (int it = 0; it < 300; it++) {
        int64_t groups = rng_int(&r, 0, 2) == 0 ? 1 : rng_int(&r, 1, 3), cg = rng_int(&r, 1, 3), og = rng_int(&r, 1, 2);
        if (rng_int(&r, 0, 3) == 0) cg = 1, og = 1, groups = rng_int(&r, 1, 6); /* depthwise */
        int64_t kh = rng_int(&r, 1, 4), kw = rng_int(&r, 1, 4);
        int64_t xd[4] = {rng_int(&r, 1, 2), groups * cg, rng_int(&r, 1, 12), rng_int(&r, 1, 22)};
        int64_t wd[4] = {groups * og, cg, kh, kw}, bd[1] = {groups * og};
        int64_t st[2] = {rng_int(&r, 1, 3), rng_int(&r, 1, 3)}, dl[2] = {rng_int(&r, 1, 2), rng_int(&r, 1, 2)};
        int64_t pad[4] = {rng_int(&r, 0, 2), rng_int(&r, 0, 2), rng_int(&r, 0, 2), rng_int(&r, 0, 2)};
        if (xd[2] + pad[0] + pad[2] < (kh - 1) * dl[0] + 1 || xd[3] + pad[1] + pad[3] < (kw - 1) * dl[1] + 1) continue;
        par_attr a[5] = {par_a_ints("stride", 2, st), par_a_ints("padding", 4, pad), par_a_ints("dilation", 2, dl),
                         par_a_int("groups", groups), par_a_str("pad_mode", "explicit")};
        int mag, wmag, mode, bad;
        draw_kind(&r, &mag, &wmag, &mode, &bad);
        par_rt *in[3] = {operand(4, xd, &r, mag, mode, (int)rng_int(&r, 0, 1), bad),
                         operand(4, wd, &r, wmag, mode == 3 ? 1 : mode, (int)rng_int(&r, 0, 1), 0),
                         rng_int(&r, 0, 1) ? operand(1, bd, &r, 0, 1, 0, 0) : NULL};
        compare(par_infer_conv2d, par_ref_conv2d, "conv2d", in[2] ? 3 : 2, in, a, 5);
        for (int i = 0; i < 3; i++) rt_del(in[i]);
    }
}

static void test_linear_fast_equals_general(void)
{
    uint64_t r = 0x5eed0002;
    for (int it = 0; it < 200; it++) {
        int64_t k = rng_int(&r, 1, 40), o = rng_int(&r, 1, 21);
        int64_t xd[3] = {rng_int(&r, 1, 3), rng_int(&r, 1, 3), k}, wd[2] = {o, k}, bd[1] = {o};
        int mag, wmag, mode, bad;
        draw_kind(&r, &mag, &wmag, &mode, &bad);
        int xr = rng_int(&r, 0, 1) ? 3 : 2;
        par_rt *in[3] = {operand(xr, xd + 3 - xr, &r, mag, mode, (int)rng_int(&r, 0, 1), bad),
                         operand(2, wd, &r, wmag, mode, (int)rng_int(&r, 0, 1), 0),
                         rng_int(&r, 0, 1) ? operand(1, bd, &r, 0, 1, 0, 0) : NULL};
        compare(par_infer_linear, par_ref_linear, "linear", in[2] ? 3 : 2, in, NULL, 0);
        for (int i = 0; i < 3; i++) rt_del(in[i]);
    }
}

static void test_matmul_fast_equals_general(void)
{
    uint64_t r = 0x5eed0003;
    for (int it = 0; it < 200; it++) {
        int64_t m = rng_int(&r, 1, 5), k = rng_int(&r, 1, 30), n = rng_int(&r, 1, 21), bt = rng_int(&r, 1, 3);
        int64_t ad[3] = {bt, m, k}, bd[3] = {rng_int(&r, 0, 1) ? bt : 1, k, n};
        int ar = rng_int(&r, 0, 1) ? 3 : 2, br = rng_int(&r, 0, 1) ? 3 : 2;
        int mag, wmag, mode, bad;
        draw_kind(&r, &mag, &wmag, &mode, &bad);
        par_rt *in[2] = {operand(ar, ad + 3 - ar, &r, mag, mode, (int)rng_int(&r, 0, 1), bad),
                         operand(br, bd + 3 - br, &r, wmag, mode, (int)rng_int(&r, 0, 1), 0)};
        compare(par_infer_matmul, par_ref_matmul, "matmul", 2, in, NULL, 0);
        for (int i = 0; i < 2; i++) rt_del(in[i]);
    }
}

/* Runs last: the fast path was taken by most runs (not by every one: flushing, non-finite values and infinite
 * budgets take the general path on both sides). */
static void test_fast_path_taken(void)
{
    PAR_TEST_NOTE("%d runs, %d on the fast path, %d outputs compared\n", n_runs, n_fast, n_outputs);
    CU_ASSERT(n_runs > 1000);
    CU_ASSERT(n_fast > n_runs / 3);
    CU_ASSERT(n_fast < n_runs);
}

static const CU_TestInfo tests[] = {
    {"conv2d_fast_equals_general", test_conv2d_fast_equals_general},
    {"linear_fast_equals_general", test_linear_fast_equals_general},
    {"matmul_fast_equals_general", test_matmul_fast_equals_general},
    {"fast_path_taken", test_fast_path_taken},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("ref_dot", tests)
