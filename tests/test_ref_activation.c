/*
 * test_ref_activation.c - tests of the reference activations (reference/activation.c): the clamp family, leaky_relu
 * and prelu, hardswish and hardsigmoid, sigmoid, tanh, elu, silu, mish and gelu on hand-computed values, and their
 * error budgets, sound against float32 computations of the obvious formulas (two of each where two are in use),
 * with and without perturbed inputs, and tight enough that a 1% error exceeds them.
 *
 * Kernels are called directly on a one-node graph view (tests/ref_helpers.h), so budgets of inputs can be set at will.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/graph.h"
#include "reference/reference.h"
#include "core/tensor.h"
#include "ref_helpers.h"
#include "tmain.h"

/* ---- activations -------------------------------------------------------------------------------------------- */

static par_status unop(infer_fn inf, ref_fn ref, const char *op, par_rt *x, const par_attr *a, int32_t na,
                       par_rt **y, par_msg *msg)
{
    par_rt *in[1] = {x};
    return run_op(inf, ref, op, 1, in, a, na, y, msg);
}

/* x = [-7, -1, -0.25, 0, 0.3, 5, 8]:
 *   relu     [0, 0, 0, 0, 0.3, 5, 8]
 *   relu6    [0, 0, 0, 0, 0.3, 5, 6]
 *   hardtanh(-0.5, 0.5)      [-0.5, -0.5, -0.25, 0, 0.3, 0.5, 0.5]
 *   clamp(min=-inf, max=2)   [-7, -1, -0.25, 0, 0.3, 2, 2]
 * Budgets (inputs' 1e-6): the spread of [clamp(x - e), clamp(x + e)]: e inside the bounds, 0 where the whole
 * interval saturates; a bound that formats cannot hold exactly (0.3) adds its roundings. */
static void test_clamp_family(void)
{
    int64_t d[1] = {7};
    double xv[7] = {-7, -1, -0.25, 0, 0.3, 5, 8};
    double w_relu[7] = {0, 0, 0, 0, 0.3, 5, 8}, w_relu6[7] = {0, 0, 0, 0, 0.3, 5, 6};
    double w_ht[7] = {-0.5, -0.5, -0.25, 0, 0.3, 0.5, 0.5}, w_cl[7] = {-7, -1, -0.25, 0, 0.3, 2, 2};
    par_rt *x = rt_of(1, d, xv), *y;
    for (int i = 0; i < 7; i++) x->e[i] = 1e-6;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(unop(par_infer_same, par_ref_relu, "relu", x, NULL, 0, &y, &msg), PAR_OK);
    expect_values(y, w_relu, 0);
    double e_relu[7] = {0, 0, 0, 1e-6, 1e-6, 1e-6, 1e-6};
    for (int i = 0; i < 7; i++) CU_ASSERT_DOUBLE_EQUAL(y->e[i], e_relu[i], 1e-15);
    rt_del(y);
    CU_ASSERT_EQUAL_FATAL(unop(par_infer_same, par_ref_relu6, "relu6", x, NULL, 0, &y, &msg), PAR_OK);
    expect_values(y, w_relu6, 0);
    double e_relu6[7] = {0, 0, 0, 1e-6, 1e-6, 1e-6, 0}; /* 8 - 1e-6 > 6: saturated, exact */
    for (int i = 0; i < 7; i++) CU_ASSERT_DOUBLE_EQUAL(y->e[i], e_relu6[i], 1e-15);
    rt_del(y);
    par_attr ht[2] = {par_a_float("min_val", -0.5), par_a_float("max_val", 0.5)};
    CU_ASSERT_EQUAL_FATAL(unop(par_infer_same, par_ref_hardtanh, "hardtanh", x, ht, 2, &y, &msg), PAR_OK);
    expect_values(y, w_ht, 0);
    CU_ASSERT_EQUAL(y->e[0], 0);                      /* saturated, and 0.5 is exact in every format */
    CU_ASSERT_DOUBLE_EQUAL(y->e[2], 1e-6, 1e-15);     /* inside the bounds: the input's */
    rt_del(y);
    par_attr cl[2] = {par_a_float("min", -INFINITY), par_a_float("max", 2)};
    CU_ASSERT_EQUAL_FATAL(unop(par_infer_same, par_ref_clamp, "clamp", x, cl, 2, &y, &msg), PAR_OK);
    expect_values(y, w_cl, 0);
    rt_del(y);
    par_attr cl3[2] = {par_a_float("min", -INFINITY), par_a_float("max", 0.3)};
    CU_ASSERT_EQUAL_FATAL(unop(par_infer_same, par_ref_clamp, "clamp", x, cl3, 2, &y, &msg), PAR_OK);
    CU_ASSERT_EQUAL(y->v[6], 0.3);
    CU_ASSERT_DOUBLE_EQUAL(y->e[6], 2 * 0x1p-24 * 0.3, 1e-20); /* saturated: only the bound rounded twice */
    CU_ASSERT_DOUBLE_EQUAL(y->e[0], 1e-6, 1e-15);              /* far below the bound: the input's */
    rt_del(y), rt_del(x);
}

/* leaky_relu (slope 0.01): [-2, 3] -> [-0.02, 3]. prelu x [1,3,2] = [[-1,2],[-1,-4],[5,-2]], slope [0.1,0.2,0.3]
 * per channel -> [[-0.1,2],[-0.2,-0.8],[5,-0.6]]; with slope [1] = [0.5] -> [[-0.5,2],[-0.5,-2],[5,-1]]. */
static void test_leaky_prelu(void)
{
    int64_t d2[1] = {2}, dx[3] = {1, 3, 2}, ds[1] = {3}, d1[1] = {1};
    double lv[2] = {-2, 3}, wl[2] = {-0.02, 3};
    double xv[6] = {-1, 2, -1, -4, 5, -2}, sv[3] = {0.1, 0.2, 0.3}, s1[1] = {0.5};
    double w3[6] = {-0.1, 2, -0.2, -0.8, 5, -0.6}, w1[6] = {-0.5, 2, -0.5, -2, 5, -1};
    par_rt *l = rt_of(1, d2, lv), *x = rt_of(3, dx, xv), *sl = rt_of(1, ds, sv), *sl1 = rt_of(1, d1, s1), *y;
    par_msg msg;
    par_attr la[1] = {par_a_float("negative_slope", 0.01)};
    CU_ASSERT_EQUAL_FATAL(unop(par_infer_same, par_ref_leaky_relu, "leaky_relu", l, la, 1, &y, &msg), PAR_OK);
    expect_values(y, wl, 1e-17);
    CU_ASSERT_EQUAL(y->e[1], 0); /* the positive side is a copy */
    CU_ASSERT(y->e[0] > 0 && y->e[0] < 1e-8);
    rt_del(y);
    par_rt *in[2] = {x, sl};
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_prelu, par_ref_prelu, "prelu", 2, in, NULL, 0, &y, &msg), PAR_OK);
    expect_values(y, w3, 1e-16);
    rt_del(y);
    in[1] = sl1;
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_prelu, par_ref_prelu, "prelu", 2, in, NULL, 0, &y, &msg), PAR_OK);
    expect_values(y, w1, 0);
    rt_del(y), rt_del(l), rt_del(x), rt_del(sl), rt_del(sl1);
}

/* hardswish x * relu6(x + 3) / 6 at [-3, 0, 3, 5, -4, 1] -> [0, 0, 3, 5, 0, 1 * 4 / 6];
 * hardsigmoid relu6(x + 3) / 6 at the same -> [0, 0.5, 1, 1, 0, 4/6]. On the flat parts (-4; 5 for hardsigmoid)
 * the result is exact: budget 0. */
static void test_hard_activations(void)
{
    int64_t d[1] = {6};
    double xv[6] = {-3, 0, 3, 5, -4, 1};
    double w_hs[6] = {0, 0, 3, 5, 0, 4.0 / 6}, w_hsig[6] = {0, 0.5, 1, 1, 0, 4.0 / 6};
    par_rt *x = rt_of(1, d, xv), *y;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(unop(par_infer_same, par_ref_hardswish, "hardswish", x, NULL, 0, &y, &msg), PAR_OK);
    expect_values(y, w_hs, 1e-16);
    CU_ASSERT_EQUAL(y->e[4], 0);
    CU_ASSERT(y->e[3] > 0 && y->e[3] < 1e-5); /* x * 6 / 6 may round */
    rt_del(y);
    CU_ASSERT_EQUAL_FATAL(unop(par_infer_same, par_ref_hardsigmoid, "hardsigmoid", x, NULL, 0, &y, &msg), PAR_OK);
    expect_values(y, w_hsig, 1e-16);
    CU_ASSERT_EQUAL(y->e[3], 0);
    CU_ASSERT_EQUAL(y->e[4], 0);
    rt_del(y), rt_del(x);
}

/* sigmoid(0) = 0.5, sigmoid(ln 3) = 3/4; tanh(0) = 0, tanh(ln 2) = 3/5; elu(alpha 2) at -ln 2: 2 (1/2 - 1) = -1,
 * at 2: 2. */
static void test_smooth_activations(void)
{
    int64_t d[1] = {2};
    double sv[2] = {0, log(3.0)}, tv[2] = {0, log(2.0)}, ev[2] = {-log(2.0), 2};
    double ws[2] = {0.5, 0.75}, wt[2] = {0, 0.6}, we[2] = {-1, 2};
    par_rt *xs = rt_of(1, d, sv), *xt = rt_of(1, d, tv), *xe = rt_of(1, d, ev), *y;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(unop(par_infer_same, par_ref_sigmoid, "sigmoid", xs, NULL, 0, &y, &msg), PAR_OK);
    expect_values(y, ws, 1e-15);
    rt_del(y);
    CU_ASSERT_EQUAL_FATAL(unop(par_infer_same, par_ref_tanh, "tanh", xt, NULL, 0, &y, &msg), PAR_OK);
    expect_values(y, wt, 1e-15);
    rt_del(y);
    par_attr al[1] = {par_a_float("alpha", 2)};
    CU_ASSERT_EQUAL_FATAL(unop(par_infer_same, par_ref_elu, "elu", xe, al, 1, &y, &msg), PAR_OK);
    expect_values(y, we, 1e-15);
    CU_ASSERT_EQUAL(y->e[1], 0);
    rt_del(y), rt_del(xs), rt_del(xt), rt_del(xe);
}

/* silu(x) = x sigmoid(x), sigmoid(x) = 1 / (1 + e^-x):
 *   x = 0: 0 * 1/2 = 0;  x = ln 3: sigmoid = 1 / (1 + 1/3) = 3/4, y = (3/4) ln 3;  x = -ln 3: sigmoid = 1/4,
 *   y = -(ln 3)/4;  x = +-1: 1 / (1 + e^-1) = e / (e + 1) and -1 / (1 + e);  x = +-3: 3 / (1 + e^-3), -3 / (1 + e^3);
 *   x = 50: 50 / (1 + e^-50) = 50 (1 - 1.9e-22...), which is 50 in double; x = -50: -50 e^-50 / (1 + e^-50), whose
 *   relative distance from -50 e^-50 is e^-50 (below double precision).
 * The limits: silu(+inf) = +inf, silu(-inf) = -0 (x * sigmoid(x) -> 0 from below), NaN propagates. At -100 the
 * result (-3.7e-42) is below f32's smallest normal: a backend that flushes it to 0 stays within the budget. */
static void test_silu_values(void)
{
    int64_t d[1] = {13};
    double xv[13] = {0, log(3.0), -log(3.0), 1, -1, 3, -3, 50, -50, INFINITY, -INFINITY, NAN, -100};
    double e1 = exp(1.0), e3 = exp(3.0);
    double want[9] = {0, 0.75 * log(3.0), -0.25 * log(3.0), e1 / (e1 + 1), -1 / (1 + e1), 3 / (1 + 1 / e3),
                      -3 / (1 + e3), 50, -50 * exp(-50.0)};
    par_rt *x = rt_of(1, d, xv), *y;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(unop(par_infer_same, par_ref_silu, "silu", x, NULL, 0, &y, &msg), PAR_OK);
    for (int i = 0; i < 9; i++) {
        CU_ASSERT(fabs(y->v[i] - want[i]) <= 1e-15 * fabs(want[i]));
        CU_ASSERT(isfinite(y->e[i]) && (y->e[i] > 0) == (want[i] != 0));
    }
    CU_ASSERT(y->v[9] == INFINITY);
    CU_ASSERT(y->v[10] == 0 && signbit(y->v[10]));
    CU_ASSERT_EQUAL(y->e[10], 0);
    CU_ASSERT(isnan(y->v[11]));
    CU_ASSERT(y->e[11] == INFINITY);
    CU_ASSERT(y->v[12] < 0 && y->v[12] > -1e-41 && y->e[12] >= fabs(y->v[12]));
    /* At the derivative's maximum (x = 2.39936, f' = 1.099839) an input budget 1e-3 propagates as 1.099839e-3 (a
     * bound of 1 would give 1e-3); y = x sigmoid(x) = 2.19966, own (fn + 3u)(|y| + P) = 11 * 2^-24 * 2.20076 =
     * 1.4430e-6, storage 2^-24 * 2.2022 = 1.313e-7: e = 1.101413e-3. */
    rt_del(x), rt_del(y);
    int64_t d1[1] = {1};
    double xm[1] = {2.3993572805154679};
    x = rt_of(1, d1, xm);
    x->e[0] = 1e-3;
    CU_ASSERT_EQUAL_FATAL(unop(par_infer_same, par_ref_silu, "silu", x, NULL, 0, &y, &msg), PAR_OK);
    CU_ASSERT(y->e[0] > 1.1013e-3 && y->e[0] < 1.1015e-3);
    rt_del(x), rt_del(y);
}

/* mish(x) = x tanh(softplus(x)); with E = e^x, tanh(log(1 + E)) = ((1 + E)^2 - 1) / ((1 + E)^2 + 1):
 *   x = 0: E = 1, t = 3/5, y = 0;  x = ln 3: (1 + 3)^2 = 16, t = 15/17, y = (15/17) ln 3;  x = -ln 3: (4/3)^2 = 16/9,
 *   t = 7/25, y = -(7/25) ln 3;  x = ln 2: 9, t = 4/5, y = (4/5) ln 2;  x = -ln 2: 9/4, t = 5/13, y = -(5/13) ln 2;
 *   x = 50: t = 1 - 2 / ((1 + e^50)^2 + 1), 1 in double, y = 50.
 * The limits: mish(+inf) = +inf, mish(-inf) = -0 (x tanh(softplus x) -> 0 from below), NaN propagates. */
static void test_mish_values(void)
{
    int64_t d[1] = {9};
    double xv[9] = {0, log(3.0), -log(3.0), log(2.0), -log(2.0), 50, INFINITY, -INFINITY, NAN};
    double want[6] = {0, 15.0 / 17 * log(3.0), -7.0 / 25 * log(3.0), 0.8 * log(2.0), -5.0 / 13 * log(2.0), 50};
    par_rt *x = rt_of(1, d, xv), *y;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(unop(par_infer_same, par_ref_mish, "mish", x, NULL, 0, &y, &msg), PAR_OK);
    for (int i = 0; i < 6; i++) {
        CU_ASSERT(fabs(y->v[i] - want[i]) <= 1e-15 * fabs(want[i]));
        CU_ASSERT(isfinite(y->e[i]) && (y->e[i] > 0) == (want[i] != 0));
    }
    CU_ASSERT(y->v[6] == INFINITY);
    CU_ASSERT(y->v[7] == 0 && signbit(y->v[7]));
    CU_ASSERT_EQUAL(y->e[7], 0);
    CU_ASSERT(isnan(y->v[8]));
    CU_ASSERT(y->e[8] == INFINITY);
    /* At the derivative's maximum (x = 1.49057, f' = 1.088498) an input budget 1e-3 propagates as 1.088498e-3 (a
     * bound of 1 would give 1e-3); the own roundings (fn = 8u, u = 2^-24: softplus 1.40e-6 through 1 - t^2 = 0.128,
     * tanh's 5.6e-7, times |x| + e = 1.4916; the multiply 8.3e-8) and storage (8.3e-8) add about 1.3e-6. */
    rt_del(x), rt_del(y);
    int64_t d1[1] = {1};
    double xm[1] = {1.4905711794854285};
    x = rt_of(1, d1, xm);
    x->e[0] = 1e-3;
    CU_ASSERT_EQUAL_FATAL(unop(par_infer_same, par_ref_mish, "mish", x, NULL, 0, &y, &msg), PAR_OK);
    CU_ASSERT(y->e[0] > 1.0895e-3 && y->e[0] < 1.0900e-3);
    if (!(y->e[0] > 1.0895e-3 && y->e[0] < 1.0900e-3)) fprintf(stderr, "\n  mish budget at f' max: %.6e\n", y->e[0]);
    rt_del(x), rt_del(y);
}

/* gelu, exact form, y = x Phi(x) with the standard normal cdf Phi (tables: Phi(1) = 0.84134474606854293,
 * Phi(3) = 0.99865010196836990, Phi(-x) = 1 - Phi(x), Phi(-10) = 7.6198530241605261e-24):
 *   x = 0: 0;  +-1: 0.84134474606854293, -0.15865525393145707;  +-3: 2.9959503059051097, -0.0040496940948902970;
 *   10: 10 (Phi(10) = 1 - 7.6e-24 is 1 in double);  -10: -7.6198530241605261e-23.
 * gelu, tanh form, y = x (1 + tanh z) / 2, z = sqrt(2/pi) (x + 0.044715 x^3):
 *   x = 1: z = 0.79788456080 * 1.044715 = 0.83356196894, tanh z = 0.68238398122, y = 0.84119199061;
 *   x = -1: y = -(1 - 0.68238398122) / 2 = -0.15880800939;  x = 3: z = 0.79788456080 * 4.207305 = 3.3569437021,
 *   tanh z = 0.99757507195, y = 2.9963626079;  x = -3: y = -3 (1 - 0.99757507195) / 2 = -0.0036373920818.
 * Both forms: gelu(+inf) = +inf, gelu(-inf) = -0, NaN propagates; the two forms agree within 1e-3 (the tanh form's
 * known accuracy, here checked on [-6, 6]). */
static void test_gelu_values(void)
{
    int64_t d[1] = {11};
    double xv[11] = {0, 1, -1, 3, -3, 10, -10, INFINITY, -INFINITY, NAN, -100};
    double want[7] = {0, 0.84134474606854293, -0.15865525393145707, 2.9959503059051097, -0.0040496940948902970,
                      10, -7.6198530241605261e-23};
    double want_t[5] = {0, 0.8411919906082768, -0.15880800939172324, 2.996362607918227, -0.0036373920817729943};
    par_attr tanh_form[1] = {par_a_str("approximate", "tanh")};
    par_rt *x = rt_of(1, d, xv), *y, *yt;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(unop(par_infer_same, par_ref_gelu, "gelu", x, NULL, 0, &y, &msg), PAR_OK);
    CU_ASSERT_EQUAL_FATAL(unop(par_infer_same, par_ref_gelu, "gelu", x, tanh_form, 1, &yt, &msg), PAR_OK);
    for (int i = 0; i < 7; i++) CU_ASSERT(fabs(y->v[i] - want[i]) <= 1e-12 * fabs(want[i]));
    for (int i = 0; i < 5; i++) CU_ASSERT(fabs(yt->v[i] - want_t[i]) <= 1e-14 * fabs(want_t[i]));
    CU_ASSERT(yt->v[5] == 10 && yt->v[6] < 0 && yt->v[6] > -1e-30);
    for (int f = 0; f < 2; f++) {
        par_rt *r = f ? yt : y;
        CU_ASSERT(r->v[7] == INFINITY);
        CU_ASSERT(r->v[8] == 0 && signbit(r->v[8]) && r->e[8] == 0);
        CU_ASSERT(isnan(r->v[9]) && r->e[9] == INFINITY);
        CU_ASSERT(r->v[10] <= 0 && r->v[10] > -1e-30 && r->e[10] >= fabs(r->v[10]));
        for (int i = 1; i < 7; i++) CU_ASSERT(isfinite(r->e[i]) && r->e[i] > 0);
    }
    rt_del(x), rt_del(y), rt_del(yt);
    int64_t dn[1] = {1201};
    x = rt_new(PAR_DTYPE_F32, 1, dn);
    for (int64_t i = 0; i < x->numel; i++) x->v[i] = -6 + 0.01 * (double)i;
    CU_ASSERT_EQUAL_FATAL(unop(par_infer_same, par_ref_gelu, "gelu", x, NULL, 0, &y, &msg), PAR_OK);
    CU_ASSERT_EQUAL_FATAL(unop(par_infer_same, par_ref_gelu, "gelu", x, tanh_form, 1, &yt, &msg), PAR_OK);
    double worst = 0;
    for (int64_t i = 0; i < x->numel; i++) worst = fmax(worst, fabs(y->v[i] - yt->v[i]));
    CU_ASSERT(worst > 1e-5 && worst < 1e-3); /* different functions, close ones */
    rt_del(x), rt_del(y), rt_del(yt);
}

/* The obvious float32 formulas a backend may use, each within the budget on random inputs (held within their
 * budgets); a 1% error on elements of magnitude > 0.1 exceeds it. */
static float f_hswish_a(float x) { return x * fminf(fmaxf(x + 3.0f, 0.0f), 6.0f) / 6.0f; }
static float f_hswish_b(float x) { return x * fminf(fmaxf(x * (1.0f / 6.0f) + 0.5f, 0.0f), 1.0f); }
static float f_hsig_a(float x) { return fminf(fmaxf(x + 3.0f, 0.0f), 6.0f) * (1.0f / 6.0f); }
static float f_hsig_b(float x) { return fminf(fmaxf(x * (1.0f / 6.0f) + 0.5f, 0.0f), 1.0f); }
static float f_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
static float f_elu_a(float x) { return x > 0 ? x : 1.5f * (expf(x) - 1.0f); }
static float f_elu_b(float x) { return x > 0 ? x : 1.5f * expm1f(x); }
static float f_leaky(float x) { return x >= 0 ? x : 0.01f * x; }
static float f_silu_a(float x) { return x / (1.0f + expf(-x)); }
static float f_silu_b(float x) { return x * f_sigmoid(x); }
static float f_gelu_a(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678f)); }
static float f_gelu_b(float x) { return x * 0.5f * erfcf(-x * 0.70710678f); }
static float gelu_z(float x) { return 0.7978845608f * (x + 0.044715f * x * x * x); }
static float f_gelut_a(float x) { return 0.5f * x * (1.0f + tanhf(gelu_z(x))); }
static float f_gelut_b(float x) { return x / (1.0f + expf(-2.0f * gelu_z(x))); }

static void test_activation_budgets_f32(void)
{
    static const struct {
        const char *name;
        ref_fn ref;
        float (*f)(float);
        int tanh_form; /* gelu: approximate=tanh */
    } cases[] = {
        {"hardswish", par_ref_hardswish, f_hswish_a, 0}, {"hardswish", par_ref_hardswish, f_hswish_b, 0},
        {"hardsigmoid", par_ref_hardsigmoid, f_hsig_a, 0}, {"hardsigmoid", par_ref_hardsigmoid, f_hsig_b, 0},
        {"sigmoid", par_ref_sigmoid, f_sigmoid, 0},         {"tanh", par_ref_tanh, tanhf, 0},
        {"elu", par_ref_elu, f_elu_a, 0},                   {"elu", par_ref_elu, f_elu_b, 0},
        {"leaky_relu", par_ref_leaky_relu, f_leaky, 0},
        {"silu", par_ref_silu, f_silu_a, 0},                {"silu", par_ref_silu, f_silu_b, 0},
        {"gelu", par_ref_gelu, f_gelu_a, 0},             {"gelu", par_ref_gelu, f_gelu_b, 0},
        {"gelu", par_ref_gelu, f_gelut_a, 1},            {"gelu", par_ref_gelu, f_gelut_b, 1},
    };
    int64_t d[1] = {4000};
    uint64_t s = 31;
    par_attr at[3] = {par_a_float("alpha", 1.5), par_a_float("negative_slope", 0.01),
                      par_a_str("approximate", "tanh")};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        for (int with_e = 0; with_e < 2; with_e++) {
            par_rt *x = rt_new(PAR_DTYPE_F32, 1, d), *y;
            for (int64_t i = 0; i < x->numel; i++) {
                /* a quarter of the points near the kinks at -3, 0 and 3 */
                x->v[i] = i % 4 ? rng_f(&s, -10, 10) : (double)(float)((3 * (i % 3) - 3) + rng_f(&s, -1e-3, 1e-3));
                x->e[i] = with_e ? (fabs(x->v[i]) + 1) * 0x1p-20 : 0;
            }
            par_msg msg;
            int32_t na = strcmp(cases[k].name, "elu") == 0 ? 1 : strcmp(cases[k].name, "leaky_relu") == 0 ? 1 : 0;
            const par_attr *a = strcmp(cases[k].name, "leaky_relu") == 0 ? &at[1] : &at[0];
            if (cases[k].tanh_form) na = 1, a = &at[2];
            CU_ASSERT_EQUAL_FATAL(unop(par_infer_same, cases[k].ref, cases[k].name, x, a, na, &y, &msg), PAR_OK);
            ratio r = {0, 0, 0};
            int64_t caught = 0, n_wrong = 0;
            for (int64_t i = 0; i < x->numel; i++) {
                ratio_add(&r, cases[k].f(held(&s, x->v[i], x->e[i])), y->v[i], y->e[i]);
                if (fabs(y->v[i]) > 0.1) {
                    n_wrong++;
                    caught += fabs(0.01 * y->v[i]) > y->e[i];
                }
            }
            char what[64];
            snprintf(what, sizeof what, "%s f32 #%d%s", cases[k].name, (int)k, with_e ? " (perturbed)" : "");
            ratio_report(what, &r);
            CU_ASSERT(n_wrong > 100);
            CU_ASSERT_EQUAL(caught, n_wrong);
            rt_del(x), rt_del(y);
        }
    }
}

static const CU_TestInfo tests[] = {
    {"clamp family", test_clamp_family},
    {"leaky_relu and prelu", test_leaky_prelu},
    {"hardswish and hardsigmoid", test_hard_activations},
    {"sigmoid, tanh, elu", test_smooth_activations},
    {"silu values", test_silu_values},
    {"mish values", test_mish_values},
    {"gelu values", test_gelu_values},
    {"activation budgets f32", test_activation_budgets_f32},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("ref_activation", tests)
