/*
 * test_ref_select.c - tests of the reference selection ops (reference/select.c: where, masked_fill, gather,
 * embedding, and the decisions argmax and argmin), pad's reflect and replicate modes (reference/shape.c), and the resampling added beside nearest and
 * bilinear (reference/resize.c: nearest-exact, bicubic, PyTorch's same-size rule). Every expected value is worked
 * out by hand in the comments; budgets are checked to travel with their elements (selections) or against the
 * derivation's constants (a fill value's rounding); errors must name the input, element or attribute.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/graph.h"
#include "oracle/oracle.h"
#include "reference/reference.h"
#include "ref_helpers.h"
#include "tmain.h"

static par_rt *bool_of(int32_t rank, const int64_t *dims, const double *v)
{
    par_rt *t = rt_new(PAR_DTYPE_BOOL, rank, dims);
    for (int64_t i = 0; i < t->numel; i++) t->v[i] = v[i];
    return t;
}

static par_rt *i32_of(int32_t rank, const int64_t *dims, const double *v)
{
    par_rt *t = rt_new(PAR_DTYPE_I32, rank, dims);
    for (int64_t i = 0; i < t->numel; i++) t->v[i] = v[i];
    return t;
}

/* ---- where -------------------------------------------------------------------------------------------------- */

/* cond [2,1] = [[1],[0]], a [3] = [1,2,3] (budgets .1,.2,.3), b a scalar 9 (budget .9): all three broadcast to
 * [2,3]; row 0 takes a, row 1 takes b: [[1,2,3],[9,9,9]], budgets [[.1,.2,.3],[.9,.9,.9]]. */
static void test_where_broadcast(void)
{
    int64_t dc[2] = {2, 1}, da[1] = {3}, dy[2] = {2, 3};
    double cv[2] = {1, 0}, av[3] = {1, 2, 3}, bv[1] = {9};
    double want[6] = {1, 2, 3, 9, 9, 9}, we[6] = {.1, .2, .3, .9, .9, .9};
    par_rt *c = bool_of(2, dc, cv), *a = rt_of(1, da, av), *b = rt_of(0, NULL, bv), *y;
    a->e[0] = .1, a->e[1] = .2, a->e[2] = .3, b->e[0] = .9;
    par_rt *in[3] = {c, a, b};
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_where, par_ref_where, "where", 3, in, NULL, 0, &y, &msg), PAR_OK);
    expect_exact(y, 2, dy, want);
    CU_ASSERT_EQUAL(y->dtype, PAR_DTYPE_F32); /* a's dtype, not cond's */
    for (int i = 0; i < 6; i++) CU_ASSERT_EQUAL(y->e[i], we[i]);
    rt_del(y);
    rt_del(c);
    rt_del(a);
    rt_del(b);
}

/* A float condition, and shapes [2,3] / [4] that do not broadcast: errors naming the input. */
static void test_where_errors(void)
{
    int64_t d23[2] = {2, 3}, d4[1] = {4};
    double z[6] = {0};
    par_rt *cf = rt_of(2, d23, z), *cb = bool_of(2, d23, z), *a = rt_of(2, d23, z), *b = rt_of(1, d4, z);
    par_msg msg;
    par_rt *in1[3] = {cf, a, a}, *in2[3] = {cb, a, b};
    expect_error(run_op(par_infer_where, NULL, "where", 3, in1, NULL, 0, NULL, &msg), &msg, "input 0 (cond)");
    expect_error(run_op(par_infer_where, NULL, "where", 3, in2, NULL, 0, NULL, &msg), &msg, "does not broadcast");
    rt_del(cf);
    rt_del(cb);
    rt_del(a);
    rt_del(b);
}

/* ---- masked_fill -------------------------------------------------------------------------------------------- */

/* x [2,2] = [[1,2],[3,4]], mask [2] = [0,1] (broadcast over rows): the second column is filled.
 * value 0.5 is exact in f32: budget 0. value 0.1 is not: one rounding to f32 in arithmetic and one in storage,
 * (2^-24 + 2^-24) * 0.1. value -inf: exact, budget 0. x's budgets (.01 each) stay on the unfilled elements. */
static void test_masked_fill(void)
{
    int64_t dx[2] = {2, 2}, dm[1] = {2};
    double xv[4] = {1, 2, 3, 4}, mv[2] = {0, 1};
    par_rt *x = rt_of(2, dx, xv), *m = bool_of(1, dm, mv), *y;
    for (int i = 0; i < 4; i++) x->e[i] = .01;
    par_rt *in[2] = {x, m};
    par_msg msg;
    const double values[3] = {0.5, 0.1, -INFINITY};
    const double fill_e[3] = {0, 2 * 0x1p-24 * 0.1, 0};
    for (int k = 0; k < 3; k++) {
        par_attr at[1] = {par_a_float("value", values[k])};
        CU_ASSERT_EQUAL_FATAL(run_op(par_infer_masked_fill, par_ref_masked_fill, "masked_fill", 2, in, at, 1, &y, &msg),
                              PAR_OK);
        double want[4] = {1, values[k], 3, values[k]};
        expect_exact(y, 2, dx, want);
        CU_ASSERT_EQUAL(y->e[0], .01);
        CU_ASSERT_EQUAL(y->e[2], .01);
        CU_ASSERT_DOUBLE_EQUAL(y->e[1], fill_e[k], 1e-24);
        CU_ASSERT_DOUBLE_EQUAL(y->e[3], fill_e[k], 1e-24);
        rt_del(y);
    }
    /* a mask [3] does not broadcast to [2,2] */
    int64_t d3[1] = {3};
    par_rt *m3 = bool_of(1, d3, xv), *in3[2] = {x, m3};
    par_attr at[1] = {par_a_float("value", 0)};
    expect_error(run_op(par_infer_masked_fill, NULL, "masked_fill", 2, in3, at, 1, NULL, &msg), &msg, "input 1 (mask)");
    rt_del(m3);
    rt_del(x);
    rt_del(m);
}

/* ---- gather ------------------------------------------------------------------------------------------------- */

/* x [2,3] = [[10,11,12],[20,21,22]].
 * axis 1, indices [2,2] = [[2,0],[2,1]] (2 repeated): y [2,2,2] = x[r, idx[i][j]]:
 *   r=0: [[12,10],[12,11]]; r=1: [[22,20],[22,21]].  axis -1 is the same.
 * axis 0, a rank-0 index 1: y [3] = x[1] = [20,21,22]. */
static void test_gather(void)
{
    int64_t dx[2] = {2, 3}, di[2] = {2, 2}, dy[3] = {2, 2, 2}, dr[1] = {3};
    double xv[6] = {10, 11, 12, 20, 21, 22}, iv[4] = {2, 0, 2, 1}, one[1] = {1};
    double want[8] = {12, 10, 12, 11, 22, 20, 22, 21}, want0[3] = {20, 21, 22};
    par_rt *x = rt_of(2, dx, xv), *ix = i32_of(2, di, iv), *i0 = i32_of(0, NULL, one), *y;
    for (int i = 0; i < 6; i++) x->e[i] = xv[i] * 1e-3; /* budgets follow their elements */
    par_msg msg;
    for (int ax = -1; ax <= 1; ax += 2) {
        par_attr at[1] = {par_a_int("axis", ax)};
        par_rt *in[2] = {x, ix};
        CU_ASSERT_EQUAL_FATAL(run_op(par_infer_gather, par_ref_gather, "gather", 2, in, at, 1, &y, &msg), PAR_OK);
        expect_exact(y, 3, dy, want);
        for (int i = 0; i < 8; i++) CU_ASSERT_EQUAL(y->e[i], want[i] * 1e-3);
        rt_del(y);
    }
    par_attr at0[1] = {par_a_int("axis", 0)};
    par_rt *in0[2] = {x, i0};
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_gather, par_ref_gather, "gather", 2, in0, at0, 1, &y, &msg), PAR_OK);
    expect_exact(y, 1, dr, want0);
    rt_del(y);
    rt_del(x);
    rt_del(ix);
    rt_del(i0);
}

/* Index 3 on an axis of size 3 (element [1,0] of the indices), and axis 2 of a rank-2 x: errors naming them. */
static void test_gather_errors(void)
{
    int64_t dx[2] = {2, 3}, di[2] = {2, 2};
    double xv[6] = {0}, iv[4] = {0, 1, 3, 2};
    par_rt *x = rt_of(2, dx, xv), *ix = i32_of(2, di, iv), *y = NULL;
    par_rt *in[2] = {x, ix};
    par_msg msg;
    par_attr at1[1] = {par_a_int("axis", 1)}, at2[1] = {par_a_int("axis", 2)};
    expect_error(run_op(par_infer_gather, par_ref_gather, "gather", 2, in, at1, 1, &y, &msg), &msg,
                 "element [1,0] is 3, outside [0, 3)");
    CU_ASSERT_PTR_NULL(y);
    expect_error(run_op(par_infer_gather, NULL, "gather", 2, in, at2, 1, NULL, &msg), &msg, "attribute 'axis'");
    rt_del(x);
    rt_del(ix);
}

/* ---- embedding ---------------------------------------------------------------------------------------------- */

/* weight [3,2] = [[0,1],[2,3],[4,5]], indices [2,2] = [[2,2],[0,1]]: y [2,2,2] = rows 2, 2, 0, 1 =
 * [4,5, 4,5, 0,1, 2,3]. An index -1 (element [1]) is an error naming it. */
static void test_embedding(void)
{
    int64_t dw[2] = {3, 2}, di[2] = {2, 2}, dy[3] = {2, 2, 2}, d2[1] = {2};
    double wv[6] = {0, 1, 2, 3, 4, 5}, iv[4] = {2, 2, 0, 1}, bad[2] = {0, -1};
    double want[8] = {4, 5, 4, 5, 0, 1, 2, 3};
    par_rt *w = rt_of(2, dw, wv), *ix = i32_of(2, di, iv), *ib = i32_of(1, d2, bad), *y;
    par_rt *in[2] = {ix, w}, *inb[2] = {ib, w};
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_embedding, par_ref_embedding, "embedding", 2, in, NULL, 0, &y, &msg), PAR_OK);
    expect_exact(y, 3, dy, want);
    CU_ASSERT_EQUAL(y->dtype, PAR_DTYPE_F32); /* the table's dtype, not the indices' */
    rt_del(y);
    expect_error(run_op(par_infer_embedding, par_ref_embedding, "embedding", 2, inb, NULL, 0, &y, &msg), &msg,
                 "element [1] is -1, outside [0, 3)");
    rt_del(w);
    rt_del(ix);
    rt_del(ib);
}

/* ---- pad modes ---------------------------------------------------------------------------------------------- */

/* x [1,4] = [1,2,3,4].
 * reflect, pads [0,0,2,3]: mirror about the edges without repeating them: [3,2 | 1,2,3,4 | 3,2,1].
 * replicate, pads [0,0,2,1]: [1,1 | 1,2,3,4 | 4].
 * reflect along dim 0 of size 1 (pads [1,0,0,0]) is an error: the pad must be below the size. */
static void test_pad_modes(void)
{
    int64_t dx[2] = {1, 4}, dr[2] = {1, 9}, dp[2] = {1, 7};
    double xv[4] = {1, 2, 3, 4}, wr[9] = {3, 2, 1, 2, 3, 4, 3, 2, 1}, wp[7] = {1, 1, 1, 2, 3, 4, 4};
    par_rt *x = rt_of(2, dx, xv), *y, *in[1] = {x};
    par_msg msg;
    int64_t pr[4] = {0, 0, 2, 3}, pp[4] = {0, 0, 2, 1}, pbad[4] = {1, 0, 0, 0};
    par_attr ar[2] = {par_a_ints("pads", 4, pr), par_a_str("mode", "reflect")};
    par_attr ap[2] = {par_a_ints("pads", 4, pp), par_a_str("mode", "replicate")};
    par_attr ab[2] = {par_a_ints("pads", 4, pbad), par_a_str("mode", "reflect")};
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_pad, par_ref_pad, "pad", 1, in, ar, 2, &y, &msg), PAR_OK);
    expect_exact(y, 2, dr, wr);
    rt_del(y);
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_pad, par_ref_pad, "pad", 1, in, ap, 2, &y, &msg), PAR_OK);
    expect_exact(y, 2, dp, wp);
    rt_del(y);
    expect_error(run_op(par_infer_pad, NULL, "pad", 1, in, ab, 2, NULL, &msg), &msg, "mode reflect");
    rt_del(x);
}

/* ---- resampling --------------------------------------------------------------------------------------------- */

/* x [1,1,1,3] = [10,20,30] to size [1,5]. nearest-exact: src = floor((d + 0.5) * 3/5) = floor(0.3, 0.9, 1.5, 2.1,
 * 2.7) = 0,0,1,2,2: [10,10,20,30,30]. (nearest's floor(d * 3/5) = 0,0,1,1,2 would give [10,10,20,20,30].) */
static void test_nearest_exact(void)
{
    int64_t dx[4] = {1, 1, 1, 3}, dy[4] = {1, 1, 1, 5}, size[2] = {1, 5};
    double xv[3] = {10, 20, 30}, want[5] = {10, 10, 20, 30, 30};
    par_rt *x = rt_of(4, dx, xv), *y, *in[1] = {x};
    par_attr at[1] = {par_a_ints("size", 2, size)};
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_upsample2d, par_ref_upsample_nearest_exact2d, "upsample_nearest_exact2d", 1,
                                 in, at, 1, &y, &msg), PAR_OK);
    expect_exact(y, 4, dy, want);
    rt_del(y);
    rt_del(x);
}

/* PyTorch's same-size rule. x [1,1,1,5] = [0,1,2,3,4] with scale [1, 1.1]: floor(5 * 1.1) = 5, so the axis is copied:
 * y = x for nearest and bilinear (by the scale alone nearest would take floor(d / 1.1) = 0,0,1,2,3, and bilinear
 * src = (d + 0.5) / 1.1 - 0.5 = 0, 0.86, ...). And x [1,1,1,10] = [0..9] with scale [1, 2.05]: floor(20.5) = 20 =
 * 2 * 10, so nearest takes d / 2: y[12] = 6 (the scale would give floor(12 / 2.05) = floor(5.85) = 5).
 * Bicubic has no such rule (PyTorch's cubic indices come from the scale alone): with scale [1, 1.1], W keeps its size
 * and d = 1 maps to src = 1.5 / 1.1 - 0.5 = 0.8636364, floor 0, t = 0.8636364, taps -1,0,1,2 clamped to 0,0,1,2:
 * 0 (taps at 0) + cc1(0.1363636) * 1 + cc2(1.1363636) * 2 = 0.9613309 + 2 (-0.0762820) = 0.8087669, not 1. */
static void test_same_size_rule(void)
{
    int64_t d5[4] = {1, 1, 1, 5}, d10[4] = {1, 1, 1, 10};
    double x5[5] = {0, 1, 2, 3, 4}, x10[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    double s11[2] = {1, 1.1}, s205[2] = {1, 2.05};
    par_rt *a = rt_of(4, d5, x5), *b = rt_of(4, d10, x10), *y, *ina[1] = {a}, *inb[1] = {b};
    par_attr at[1] = {par_a_floats("scale", 2, s11)}, at2[1] = {par_a_floats("scale", 2, s205)};
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_upsample2d, par_ref_upsample_nearest2d, "upsample_nearest2d", 1, ina, at, 1,
                                 &y, &msg), PAR_OK);
    expect_exact(y, 4, d5, x5);
    rt_del(y);
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_upsample2d, par_ref_upsample_bilinear2d, "upsample_bilinear2d", 1, ina, at,
                                 1, &y, &msg), PAR_OK);
    expect_exact(y, 4, d5, x5);
    rt_del(y);
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_upsample2d, par_ref_upsample_nearest2d, "upsample_nearest2d", 1, inb, at2, 1,
                                 &y, &msg), PAR_OK);
    CU_ASSERT_EQUAL_FATAL(y->numel, 20);
    for (int d = 0; d < 20; d++) CU_ASSERT_EQUAL(y->v[d], d / 2);
    rt_del(y);
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_upsample2d, par_ref_upsample_bicubic2d, "upsample_bicubic2d", 1, ina, at, 1,
                                 &y, &msg), PAR_OK);
    CU_ASSERT(fabs(y->v[1] - 0.8087669) < 1e-6);
    rt_del(y);
    rt_del(a);
    rt_del(b);
}

/* Bicubic (A = -0.75): cc1(x) = (1.25 x - 2.25) x^2 + 1, cc2(x) = ((-0.75 x + 3.75) x - 6) x + 3.
 *   cc1(0.25) = 0.87890625, cc1(0.75) = 0.26171875, cc2(1.25) = -0.10546875, cc2(1.75) = -0.03515625 (sum 1);
 *   cc1(0.5) = 0.59375, cc2(1.5) = -0.09375.
 * x [1,1,1,8] = [0,1,...,7] to size [1,16] (align_corners 0): H is copied (1 -> 1).
 *   d = 7: src = 7.5 / 2 - 0.5 = 3.25, taps 2..5, t = 0.25: 2(-0.10546875) + 3(0.87890625) + 4(0.26171875)
 *          + 5(-0.03515625) = 3.296875 (A = -0.75 does not reproduce a line: not 3.25).
 *   d = 0: src = -0.25, floor -1, t = 0.75, taps -2,-1,0,1 clamped to 0,0,0,1 with weights cc2(1.75), cc1(0.75),
 *          cc1(0.25), cc2(1.25): only tap 1 is nonzero: 1 * (-0.10546875) = -0.10546875 (the border overshoot).
 * x [1,1,1,4] = [0,1,2,3] to size [1,7], align_corners 1: src = d * 3/6; d = 3: src 1.5, taps 0..3, t = 0.5:
 *   0(-0.09375) + 1(0.59375) + 2(0.59375) + 3(-0.09375) = 1.5. */
static void test_bicubic(void)
{
    int64_t d8[4] = {1, 1, 1, 8}, d4[4] = {1, 1, 1, 4}, s16[2] = {1, 16}, s7[2] = {1, 7};
    double x8[8] = {0, 1, 2, 3, 4, 5, 6, 7}, x4[4] = {0, 1, 2, 3};
    par_rt *a = rt_of(4, d8, x8), *b = rt_of(4, d4, x4), *y, *ina[1] = {a}, *inb[1] = {b};
    par_attr at[2] = {par_a_ints("size", 2, s16), par_a_int("align_corners", 0)};
    par_attr at1[2] = {par_a_ints("size", 2, s7), par_a_int("align_corners", 1)};
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_upsample2d, par_ref_upsample_bicubic2d, "upsample_bicubic2d", 1, ina, at, 2,
                                 &y, &msg), PAR_OK);
    CU_ASSERT_EQUAL_FATAL(y->numel, 16);
    CU_ASSERT_DOUBLE_EQUAL(y->v[7], 3.296875, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(y->v[0], -0.10546875, 1e-15);
    /* the budget: at least the own rounding 360u M (M = 5, the largest tap) and finite */
    CU_ASSERT(y->e[7] >= 360 * 0x1p-24 * 5 && isfinite(y->e[7]));
    rt_del(y);
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_upsample2d, par_ref_upsample_bicubic2d, "upsample_bicubic2d", 1, inb, at1, 2,
                                 &y, &msg), PAR_OK);
    CU_ASSERT_EQUAL_FATAL(y->numel, 7);
    CU_ASSERT_DOUBLE_EQUAL(y->v[3], 1.5, 1e-15);
    rt_del(y);
    rt_del(a);
    rt_del(b);
}

/* A backend's bicubic in f32 (the test's own, from docs/ops.md): coordinates and Horner weights in float, rows along
 * W then along H, the cubic's A a parameter. */
static float cc1f(float x, float A) { return ((A + 2.0f) * x - (A + 3.0f)) * x * x + 1.0f; }
static float cc2f(float x, float A) { return ((A * x - 5.0f * A) * x + 8.0f * A) * x - 4.0f * A; }

static void taps_f(int64_t dst, int64_t in, int64_t out, float A, int64_t *i, float *w)
{
    float src = in == out ? (float)dst : ((float)in / (float)out) * ((float)dst + 0.5f) - 0.5f;
    float f = floorf(src), t = src - f;
    for (int k = 0; k < 4; k++) {
        int64_t j = (int64_t)f - 1 + k;
        i[k] = j < 0 ? 0 : j > in - 1 ? in - 1 : j;
    }
    w[0] = cc2f(t + 1.0f, A), w[1] = cc1f(t, A), w[2] = cc1f(1.0f - t, A), w[3] = cc2f(2.0f - t, A);
}

/* The budget holds a correct f32 bicubic (A = -0.75) over random inputs and sizes, up and down, and rejects one with
 * PyTorch's other common constant (A = -0.5): a wrong kernel is caught, a correct one passes. */
static void test_bicubic_budget_f32(void)
{
    uint64_t s = 7;
    int64_t over_right = 0, over_wrong = 0, n = 0;
    for (int trial = 0; trial < 40; trial++) {
        int64_t h = 2 + (int64_t)(rng_next(&s) % 9), w = 2 + (int64_t)(rng_next(&s) % 9);
        int64_t oh = 1 + (int64_t)(rng_next(&s) % 20), ow = 1 + (int64_t)(rng_next(&s) % 20);
        int64_t d[4] = {1, 1, h, w}, size[2] = {oh, ow};
        par_rt *x = rt_new(PAR_DTYPE_F32, 4, d), *y, *in[1] = {x};
        for (int64_t k = 0; k < x->numel; k++) x->v[k] = rng_val(&s);
        par_attr at[1] = {par_a_ints("size", 2, size)};
        par_msg msg;
        CU_ASSERT_EQUAL_FATAL(run_op(par_infer_upsample2d, par_ref_upsample_bicubic2d, "upsample_bicubic2d", 1, in, at, 1,
                                     &y, &msg), PAR_OK);
        for (int pass = 0; pass < 2; pass++) {
            const float A = pass ? -0.5f : -0.75f;
            for (int64_t i = 0; i < oh; i++) {
                int64_t ti[4], tj[4];
                float wi[4], wj[4];
                taps_f(i, h, oh, A, ti, wi);
                for (int64_t j = 0; j < ow; j++) {
                    taps_f(j, w, ow, A, tj, wj);
                    float acc = 0.0f;
                    for (int a = 0; a < 4; a++) {
                        float r = 0.0f;
                        for (int b = 0; b < 4; b++) r += wj[b] * (float)x->v[ti[a] * w + tj[b]];
                        acc += wi[a] * r;
                    }
                    int64_t k = i * ow + j;
                    int over = fabs((double)acc - y->v[k]) > y->e[k];
                    if (pass) over_wrong += over;
                    else over_right += over, n++;
                }
            }
        }
        rt_del(y);
        rt_del(x);
    }
    CU_ASSERT(n > 1000);
    CU_ASSERT_EQUAL(over_right, 0);
    CU_ASSERT(over_wrong > n / 4);
    PAR_TEST_NOTE(" (bicubic: %lld elements, A = -0.5 over budget at %lld)", (long long)n, (long long)over_wrong);
}

/* ---- decision ops ------------------------------------------------------------------------------------------- */

/* a = [1, 1, 1, 1, NaN, inf], b = [1, 1 + 2^-22, 2, 0.5, 1, inf], a's budgets [0, 2^-23, 2^-23, 2^-23, 0, 0], b's
 * [0, 2^-23, 2^-23, 2^-23, 0, 0].
 *   element 0: 1 vs 1, both exact: a tie decided, eq 1, gt 0, ge 1, budget 0.
 *   element 1: |a - b| = 2^-22 <= 2^-23 + 2^-23: ambiguous, budget 1 (eq 0, lt 1 as the reference values say).
 *   element 2: |1 - 2| = 1 > 2^-22: decided, lt 1, budget 0. element 3: 1 > 0.5 decided: gt 1, lt 0.
 *   element 4: NaN compares false for eq, gt, lt, ge and le alike, exactly (an exact NaN): budget 0.
 *   element 5: inf == inf (IEEE), exact: eq 1, ge 1, le 1, gt 0, lt 0, budget 0 (|inf - inf| is no distance). */
static void test_compare(void)
{
    int64_t d[1] = {6};
    double av[6] = {1, 1, 1, 1, NAN, INFINITY}, bv[6] = {1, 1 + 0x1p-22, 2, 0.5, 1, INFINITY};
    const struct {
        const char *op;
        ref_fn fn;
        double want[6];
    } cases[] = {
        {"eq", par_ref_eq, {1, 0, 0, 0, 0, 1}}, {"gt", par_ref_gt, {0, 0, 0, 1, 0, 0}},
        {"lt", par_ref_lt, {0, 1, 1, 0, 0, 0}}, {"ge", par_ref_ge, {1, 0, 0, 1, 0, 1}},
        {"le", par_ref_le, {1, 1, 1, 0, 0, 1}},
    };
    const double we[6] = {0, 1, 0, 0, 0, 0};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        par_rt *a = rt_of(1, d, av), *b = rt_of(1, d, bv), *y;
        for (int i = 1; i <= 3; i++) a->e[i] = b->e[i] = 0x1p-23;
        par_rt *in[2] = {a, b};
        par_msg msg;
        CU_ASSERT_EQUAL_FATAL(run_op(par_infer_compare, cases[k].fn, cases[k].op, 2, in, NULL, 0, &y, &msg), PAR_OK);
        CU_ASSERT_EQUAL(y->dtype, PAR_DTYPE_BOOL);
        for (int i = 0; i < 6; i++) {
            CU_ASSERT_EQUAL(y->v[i], cases[k].want[i]);
            CU_ASSERT_EQUAL(y->e[i], we[i]);
        }
        rt_del(y);
        rt_del(a);
        rt_del(b);
    }
}

/* An unbounded input (budget +inf) makes any comparison ambiguous; an f32 and an i32 input, or a bool one, are
 * refused naming the input. */
static void test_compare_unbounded_and_errors(void)
{
    int64_t d[1] = {2};
    double av[2] = {1, 5}, bv[2] = {3, 5};
    par_rt *a = rt_of(1, d, av), *b = rt_of(1, d, bv), *y, *c = bool_of(1, d, av), *ix = i32_of(1, d, av);
    a->e[0] = INFINITY;
    par_rt *in[2] = {a, b}, *bad1[2] = {a, ix}, *bad2[2] = {c, c};
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_compare, par_ref_gt, "gt", 2, in, NULL, 0, &y, &msg), PAR_OK);
    CU_ASSERT_EQUAL(y->v[0], 0); /* 1 > 3 is false, but a may be anything */
    CU_ASSERT_EQUAL(y->e[0], 1);
    CU_ASSERT_EQUAL(y->e[1], 0); /* 5 > 5 false, exact */
    rt_del(y);
    expect_error(run_op(par_infer_compare, NULL, "gt", 2, bad1, NULL, 0, NULL, &msg), &msg, "input 1 (b)");
    expect_error(run_op(par_infer_compare, NULL, "gt", 2, bad2, NULL, 0, NULL, &msg), &msg, "input 0 (a)");
    rt_del(a);
    rt_del(b);
    rt_del(c);
    rt_del(ix);
}

/* Logic ops over every pair of bool values, p = [0, 0, 1, 1], q = [0, 1, 0, 1] (truth tables), then with p's
 * elements ambiguous (budget 1): and(x, 0) = 0 whatever x (decided), and(x, 1) = x (ambiguous); or(x, 1) = 1
 * (decided), or(x, 0) = x (ambiguous); xor(x, q) and not(x) always ambiguous. */
static void test_logical(void)
{
    int64_t d[1] = {4};
    double pv[4] = {0, 0, 1, 1}, qv[4] = {0, 1, 0, 1};
    const struct {
        const char *op;
        ref_fn fn;
        int n_in;
        double want[4], amb[4];
    } cases[] = {
        {"logical_and", par_ref_logical_and, 2, {0, 0, 0, 1}, {0, 1, 0, 1}},
        {"logical_or", par_ref_logical_or, 2, {0, 1, 1, 1}, {1, 0, 1, 0}},
        {"logical_xor", par_ref_logical_xor, 2, {0, 1, 1, 0}, {1, 1, 1, 1}},
        {"logical_not", par_ref_logical_not, 1, {1, 1, 0, 0}, {1, 1, 1, 1}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        for (int amb = 0; amb < 2; amb++) {
            par_rt *p = bool_of(1, d, pv), *q = bool_of(1, d, qv), *y;
            for (int i = 0; i < 4; i++) p->e[i] = amb;
            par_rt *in[2] = {p, q};
            par_msg msg;
            CU_ASSERT_EQUAL_FATAL(run_op(par_infer_logical, cases[k].fn, cases[k].op, cases[k].n_in, in, NULL, 0, &y,
                                         &msg), PAR_OK);
            CU_ASSERT_EQUAL(y->dtype, PAR_DTYPE_BOOL);
            for (int i = 0; i < 4; i++) {
                CU_ASSERT_EQUAL(y->v[i], cases[k].want[i]);
                CU_ASSERT_EQUAL(y->e[i], amb ? cases[k].amb[i] : 0);
            }
            rt_del(y);
            rt_del(p);
            rt_del(q);
        }
}

/* The oracle reads a bool output as its byte: with budget 1 both 0 and 1 pass, with budget 0 only the reference. */
static void test_oracle_bool(void)
{
    int64_t d[1] = {2};
    double v[2] = {1, 0};
    par_rt *y = bool_of(1, d, v);
    y->e[0] = 1; /* ambiguous */
    par_metrics m;
    const uint8_t both_flipped[2] = {0, 1}, first_flipped[2] = {0, 0}, right[2] = {1, 0};
    CU_ASSERT_EQUAL(par_oracle_compare(y, right, &m), 0);
    CU_ASSERT_EQUAL(par_oracle_compare(y, first_flipped, &m), 0);
    CU_ASSERT_EQUAL(par_oracle_compare(y, both_flipped, &m), 1);
    rt_del(y);
}

/* where fed by a decision: x = [0, 0], w = [5, 5] (budgets 2^-20 each). cond from eq(a, b):
 *   element 0: a = 1, b = 1 + 2^-23, budgets 2^-23 each: ambiguous (|a - b| = 2^-23 <= 2^-22); the reference says
 *     false, so w: value 5, and a correct backend may pick x = 0: budget max(2^-20, |0 - 5| + 2^-20) = 5 + 2^-20.
 *   element 1: a = 1, b = 2: clearly false: value 5, budget 2^-20 only.
 * The oracle: a backend answering [0, 5] (x where the condition is ambiguous) passes; one answering [5, 0] (x where it
 * is clear) fails on element 1. masked_fill(x, cond; value -1e9) likewise: element 0 filled or not, element 1 not. */
static void test_where_decided(void)
{
    int64_t d[1] = {2};
    double av[2] = {1, 1}, bv[2] = {1 + 0x1p-23, 2}, xv[2] = {0, 0}, wv[2] = {5, 5};
    par_rt *a = rt_of(1, d, av), *b = rt_of(1, d, bv), *x = rt_of(1, d, xv), *w = rt_of(1, d, wv), *c, *y;
    a->e[0] = b->e[0] = 0x1p-23;
    x->e[0] = x->e[1] = w->e[0] = w->e[1] = 0x1p-20;
    par_rt *cin[2] = {a, b};
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_compare, par_ref_eq, "eq", 2, cin, NULL, 0, &c, &msg), PAR_OK);
    CU_ASSERT_EQUAL(c->v[0], 0);
    CU_ASSERT_EQUAL(c->e[0], 1);
    CU_ASSERT_EQUAL(c->e[1], 0);
    par_rt *win[3] = {c, x, w};
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_where, par_ref_where, "where", 3, win, NULL, 0, &y, &msg), PAR_OK);
    CU_ASSERT_EQUAL(y->v[0], 5);
    CU_ASSERT_EQUAL(y->e[0], 5 + 0x1p-20);
    CU_ASSERT_EQUAL(y->v[1], 5);
    CU_ASSERT_EQUAL(y->e[1], 0x1p-20);
    par_metrics m;
    const float other_where_ambiguous[2] = {0, 5}, other_where_clear[2] = {5, 0};
    CU_ASSERT_EQUAL(par_oracle_compare(y, other_where_ambiguous, &m), 0);
    CU_ASSERT_EQUAL(par_oracle_compare(y, other_where_clear, &m), 1);
    rt_del(y);
    /* masked_fill: mask false at both; element 0 may be filled with -1e9 (exact in f32? no: one rounding each in
     * arithmetic and storage, 2 * 2^-24 * 1e9), so its budget is |-1e9 - 0| + that rounding. */
    par_attr at = par_a_float("value", -1e9);
    par_rt *min[2] = {x, c};
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_masked_fill, par_ref_masked_fill, "masked_fill", 2, min, &at, 1, &y, &msg),
                          PAR_OK);
    CU_ASSERT_EQUAL(y->v[0], 0);
    CU_ASSERT(y->e[0] >= 1e9);
    CU_ASSERT_EQUAL(y->e[1], 0x1p-20);
    const float filled_ambiguous[2] = {-1e9f, 0}, filled_clear[2] = {0, -1e9f};
    CU_ASSERT_EQUAL(par_oracle_compare(y, filled_ambiguous, &m), 0);
    CU_ASSERT_EQUAL(par_oracle_compare(y, filled_clear, &m), 1);
    rt_del(y);
    rt_del(c);
    rt_del(a);
    rt_del(b);
    rt_del(x);
    rt_del(w);
}

/* argmax / argmin along axis 1 of x [3, 4], exact inputs except row 2:
 *   row 0 [1, 3, 3, 2]: argmax 1 (the first of the equal 3s), 2 with select_last; argmin 0. Exact ties are decided
 *     by the rule: budget 0.
 *   row 1 [0.5, NaN, 0.25, NaN]: a NaN wins both: argmax and argmin 1, 3 with select_last; budget 0.
 *   row 2 [1, 1 + 2^-22, 0, 1] with budgets 2^-23 on elements 0 and 1: argmax 1; element 0 may be held at
 *     1 + 2^-23 and element 1 at 1 + 2^-23 too (1 + 2^-23 >= 1 + 2^-22 - 2^-23): index 0 is a correct answer, budget
 *     |0 - 1| = 1; element 3 (exact 1) cannot reach 1 + 2^-23: not an alternative. argmin 2, budget 0 (0 is far
 *     below the others).
 * The oracle: argmax answering [1, 1, 0] passes (0 where ambiguous), [1, 1, 3] fails (3 is 2 from 1). */
static void test_argmax(void)
{
    int64_t d[2] = {3, 4};
    double xv[12] = {1, 3, 3, 2, 0.5, NAN, 0.25, NAN, 1, 1 + 0x1p-22, 0, 1};
    const struct {
        const char *op;
        ref_fn fn;
        int last;
        double want[3], want_e[3];
    } cases[] = {
        {"argmax", par_ref_argmax, 0, {1, 1, 1}, {0, 0, 1}}, {"argmax", par_ref_argmax, 1, {2, 3, 1}, {0, 0, 1}},
        {"argmin", par_ref_argmin, 0, {0, 1, 2}, {0, 0, 0}}, {"argmin", par_ref_argmin, 1, {0, 3, 2}, {0, 0, 0}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        par_rt *x = rt_of(2, d, xv), *y;
        x->e[8] = x->e[9] = 0x1p-23;
        par_attr at[2] = {par_a_int("axis", 1), par_a_int("select_last", cases[k].last)};
        par_rt *in[1] = {x};
        par_msg msg;
        CU_ASSERT_EQUAL_FATAL(run_op(par_infer_arg, cases[k].fn, cases[k].op, 1, in, at, 2, &y, &msg), PAR_OK);
        CU_ASSERT_EQUAL(y->dtype, PAR_DTYPE_I32);
        CU_ASSERT_EQUAL(y->rank, 1);
        for (int i = 0; i < 3; i++) {
            CU_ASSERT_EQUAL(y->v[i], cases[k].want[i]);
            CU_ASSERT_EQUAL(y->e[i], cases[k].want_e[i]);
        }
        if (k == 0) {
            par_metrics m;
            const int32_t ambiguous[3] = {1, 1, 0}, wrong[3] = {1, 1, 3}, tie_other[3] = {2, 1, 1};
            CU_ASSERT_EQUAL(par_oracle_compare(y, ambiguous, &m), 0);
            CU_ASSERT_EQUAL(par_oracle_compare(y, wrong, &m), 1);
            CU_ASSERT_EQUAL(par_oracle_compare(y, tie_other, &m), 1); /* an exact tie is decided: the first */
        }
        rt_del(y);
        rt_del(x);
    }
}

static const CU_TestInfo tests[] = {
    {"where_broadcast", test_where_broadcast},
    {"where_errors", test_where_errors},
    {"masked_fill", test_masked_fill},
    {"gather", test_gather},
    {"gather_errors", test_gather_errors},
    {"embedding", test_embedding},
    {"pad_modes", test_pad_modes},
    {"nearest_exact", test_nearest_exact},
    {"same_size_rule", test_same_size_rule},
    {"bicubic", test_bicubic},
    {"bicubic_budget_f32", test_bicubic_budget_f32},
    {"compare", test_compare},
    {"compare_unbounded_and_errors", test_compare_unbounded_and_errors},
    {"logical", test_logical},
    {"oracle_bool", test_oracle_bool},
    {"where_decided", test_where_decided},
    {"argmax", test_argmax},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("ref_select", tests)
