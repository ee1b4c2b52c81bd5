/*
 * test_ref_elementwise.c - tests of the reference elementwise ops, activations, softmax, batch_norm and
 * quantize/dequantize (reference/elementwise.c, activation.c, softmax.c, norm.c, quant.c): hand-computed values,
 * independent formulations (add vs sub of the negation, softmax vs exp(log_softmax)), error budgets (sound against
 * float32 computations of the obvious formulas, with and without perturbed inputs, and tight enough that a 1% error
 * exceeds them), and shape-inference errors naming the attribute or input.
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

/* ---- elementwise binary ------------------------------------------------------------------------------------- */

static par_status binop(ref_fn ref, const char *op, par_rt *a, par_rt *b, par_rt **y, par_msg *msg)
{
    par_rt *in[2] = {a, b};
    return run_op(par_infer_broadcast, ref, op, 2, in, NULL, 0, y, msg);
}

/* a [2,1,3] = [[0,1,2]], [[3,4,5]]; b [4,1] = [0,10,20,30]: y [2,4,3], y[i][j][k] = a[i][0][k] + b[j][0]:
 * y[0] = [[0,1,2],[10,11,12],[20,21,22],[30,31,32]], y[1] = the same plus 3. */
static void test_broadcast_add_values(void)
{
    int64_t ad[3] = {2, 1, 3}, bd[2] = {4, 1};
    double av[6] = {0, 1, 2, 3, 4, 5}, bv[4] = {0, 10, 20, 30}, want[24];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 3; k++) want[i * 12 + j * 3 + k] = 3 * i + k + 10 * j;
    par_rt *a = rt_of(3, ad, av), *b = rt_of(2, bd, bv), *y;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(binop(par_ref_add, "add", a, b, &y, &msg), PAR_OK);
    CU_ASSERT_EQUAL(y->rank, 3);
    CU_ASSERT(y->dims[0] == 2 && y->dims[1] == 4 && y->dims[2] == 3);
    expect_values(y, want, 0);
    CU_ASSERT_EQUAL(y->v[1 * 12 + 2 * 3 + 1], 24); /* a[1][0][1] = 4 plus b[2] = 20 */
    rt_del(y);
    /* Swapped operands: size-1 dims on the other side, the same values. */
    CU_ASSERT_EQUAL_FATAL(binop(par_ref_add, "add", b, a, &y, &msg), PAR_OK);
    expect_values(y, want, 0);
    rt_del(a), rt_del(b), rt_del(y);
}

/* [1,3] - [2,1]: y[i][k] = a[k] - b[i]; a = [1,2,3], b = [10,20] -> [[-9,-8,-7],[-19,-18,-17]].
 * [3] * [2,3] (rank difference): [1,2,3] * [[1,1,1],[2,2,2]] -> [[1,2,3],[2,4,6]].
 * rank 0 / [2]: 6 / [2,3] -> [3,2]. */
static void test_broadcast_sub_mul_div_values(void)
{
    int64_t d13[2] = {1, 3}, d21[2] = {2, 1}, d3[1] = {3}, d23[2] = {2, 3}, d2[1] = {2};
    double a[3] = {1, 2, 3}, b[2] = {10, 20}, m[6] = {1, 1, 1, 2, 2, 2}, six[1] = {6}, den[2] = {2, 3};
    double want_sub[6] = {-9, -8, -7, -19, -18, -17}, want_mul[6] = {1, 2, 3, 2, 4, 6}, want_div[2] = {3, 2};
    par_rt *ta = rt_of(2, d13, a), *tb = rt_of(2, d21, b), *tv = rt_of(1, d3, a), *tm = rt_of(2, d23, m);
    par_rt *ts = rt_of(0, NULL, six), *tden = rt_of(1, d2, den), *y;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(binop(par_ref_sub, "sub", ta, tb, &y, &msg), PAR_OK);
    CU_ASSERT(y->rank == 2 && y->dims[0] == 2 && y->dims[1] == 3);
    expect_values(y, want_sub, 0);
    rt_del(y);
    CU_ASSERT_EQUAL_FATAL(binop(par_ref_mul, "mul", tv, tm, &y, &msg), PAR_OK);
    CU_ASSERT(y->rank == 2 && y->dims[0] == 2 && y->dims[1] == 3);
    expect_values(y, want_mul, 0);
    rt_del(y);
    CU_ASSERT_EQUAL_FATAL(binop(par_ref_div, "div", ts, tden, &y, &msg), PAR_OK);
    CU_ASSERT(y->rank == 1 && y->dims[0] == 2);
    expect_values(y, want_div, 0);
    /* 6 / 3 = 2: one division u * 2 plus storage u * (2 + u * 2). */
    CU_ASSERT_DOUBLE_EQUAL(y->e[1], 0x1p-24 * 2 + 0x1p-24 * (2 + 0x1p-24 * 2), 1e-22);
    rt_del(y);
    rt_del(ta), rt_del(tb), rt_del(tv), rt_del(tm), rt_del(ts), rt_del(tden);
}

/* Random shapes with broadcasting on both sides: a + b equals a - (-b), values and budgets. */
static void test_add_vs_sub_of_negation(void)
{
    uint64_t s = 11;
    for (int trial = 0; trial < 40; trial++) {
        int32_t ra = 1 + (int32_t)(rng_next(&s) % 4), rb = 1 + (int32_t)(rng_next(&s) % 4);
        int32_t r = ra > rb ? ra : rb;
        int64_t full[4], ad[4], bd[4];
        for (int32_t i = 0; i < r; i++) full[i] = 1 + (int64_t)(rng_next(&s) % 4);
        for (int32_t i = 0; i < ra; i++) ad[i] = rng_next(&s) % 3 == 0 ? 1 : full[r - ra + i];
        for (int32_t i = 0; i < rb; i++) bd[i] = rng_next(&s) % 3 == 0 ? 1 : full[r - rb + i];
        par_rt *a = rt_new(PAR_DTYPE_F32, ra, ad), *b = rt_new(PAR_DTYPE_F32, rb, bd);
        par_rt *nb = rt_new(PAR_DTYPE_F32, rb, bd), *y1, *y2;
        for (int64_t i = 0; i < a->numel; i++) a->v[i] = rng_f(&s, -4, 4), a->e[i] = rng_f(&s, 0, 1e-6);
        for (int64_t i = 0; i < b->numel; i++) {
            b->v[i] = rng_f(&s, -4, 4), b->e[i] = rng_f(&s, 0, 1e-6);
            nb->v[i] = -b->v[i], nb->e[i] = b->e[i];
        }
        par_msg msg;
        CU_ASSERT_EQUAL_FATAL(binop(par_ref_add, "add", a, b, &y1, &msg), PAR_OK);
        CU_ASSERT_EQUAL_FATAL(binop(par_ref_sub, "sub", a, nb, &y2, &msg), PAR_OK);
        CU_ASSERT_EQUAL_FATAL(y1->rank, r);
        for (int32_t i = 0; i < r; i++) {
            int64_t da = i >= r - ra ? ad[i - (r - ra)] : 1, db = i >= r - rb ? bd[i - (r - rb)] : 1;
            CU_ASSERT_EQUAL(y1->dims[i], da > db ? da : db);
        }
        int same = 1;
        for (int64_t i = 0; i < y1->numel; i++) same &= y1->v[i] == y2->v[i] && y1->e[i] == y2->e[i];
        CU_ASSERT(same);
        rt_del(a), rt_del(b), rt_del(nb), rt_del(y1), rt_del(y2);
    }
}

/* Budgets against float32 arithmetic, with operands held within their budgets; a 1% error must exceed them. */
static void test_binary_budgets_f32(void)
{
    static const struct { ref_fn ref; const char *op; } ops[4] = {
        {par_ref_add, "add"}, {par_ref_sub, "sub"}, {par_ref_mul, "mul"}, {par_ref_div, "div"}};
    int64_t d[2] = {64, 64};
    uint64_t s = 21;
    for (int k = 0; k < 4; k++) {
        for (int with_e = 0; with_e < 2; with_e++) {
            par_rt *a = rt_new(PAR_DTYPE_F32, 2, d), *b = rt_new(PAR_DTYPE_F32, 2, d), *y;
            for (int64_t i = 0; i < a->numel; i++) {
                a->v[i] = rng_f(&s, -8, 8);
                b->v[i] = rng_f(&s, 0.25, 8) * (rng_next(&s) & 1 ? 1 : -1);
                a->e[i] = with_e ? fabs(a->v[i]) * 0x1p-20 : 0;
                b->e[i] = with_e ? fabs(b->v[i]) * 0x1p-20 : 0;
            }
            par_msg msg;
            CU_ASSERT_EQUAL_FATAL(binop(ops[k].ref, ops[k].op, a, b, &y, &msg), PAR_OK);
            ratio r = {0, 0, 0};
            int64_t wrong_caught = 0, wrong_n = 0;
            for (int64_t i = 0; i < y->numel; i++) {
                float fa = held(&s, a->v[i], a->e[i]), fb = held(&s, b->v[i], b->e[i]);
                float f = k == 0 ? fa + fb : k == 1 ? fa - fb : k == 2 ? fa * fb : fa / fb;
                ratio_add(&r, f, y->v[i], y->e[i]);
                if (fabs(y->v[i]) > 1e-3) {
                    wrong_n++;
                    wrong_caught += fabs(y->v[i] * 1.01 - y->v[i]) > y->e[i];
                }
            }
            char what[64];
            snprintf(what, sizeof what, "%s f32%s", ops[k].op, with_e ? " (perturbed inputs)" : "");
            ratio_report(what, &r);
            CU_ASSERT_EQUAL(wrong_caught, wrong_n);
            rt_del(a), rt_del(b), rt_del(y);
        }
    }
}

/* Division whose divisor interval contains 0: the budget is infinite; exact divisor 0: infinite too. */
static void test_div_interval_through_zero(void)
{
    int64_t d[1] = {2};
    double av[2] = {1, 1}, bv[2] = {0.5, 0.5};
    par_rt *a = rt_of(1, d, av), *b = rt_of(1, d, bv), *y;
    b->e[0] = 1.0;  /* [-0.5, 1.5] */
    b->e[1] = 0.25; /* [0.25, 0.75]: 1/0.25 - 2 = 2 from the divisor alone */
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(binop(par_ref_div, "div", a, b, &y, &msg), PAR_OK);
    CU_ASSERT(isinf(y->e[0]) && y->e[0] > 0);
    CU_ASSERT(y->e[1] >= 2.0 && y->e[1] < 2.0 + 1e-5);
    rt_del(a), rt_del(b), rt_del(y);
}

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

/* ---- softmax ------------------------------------------------------------------------------------------------ */

static par_status softmax_op(ref_fn ref, const char *op, par_rt *x, int64_t axis, par_rt **y, par_msg *msg)
{
    par_attr a[1] = {par_a_int("axis", axis)};
    return unop(par_infer_same, ref, op, x, a, 1, y, msg);
}

/* [[1,2,3]] (shape [1,3]): along axis 1 (= -1) e^k / (e + e^2 + e^3) = [0.0900306, 0.2447285, 0.6652410];
 * along axis 0 every row of length 1: [1, 1, 1]. log_softmax along 1: k - 3 - log(1 + e^-1 + e^-2) =
 * [-2.4076059, -1.4076059, -0.4076059]. The transposed [3,1] along axis 0 gives the axis-1 values. */
static void test_softmax_values(void)
{
    int64_t d13[2] = {1, 3}, d31[2] = {3, 1};
    double xv[3] = {1, 2, 3};
    double s = exp(1) + exp(2) + exp(3);
    double w1[3] = {exp(1) / s, exp(2) / s, exp(3) / s}, w0[3] = {1, 1, 1};
    double lse = log(1 + exp(-1) + exp(-2));
    double wl[3] = {-2 - lse, -1 - lse, -lse};
    par_rt *x = rt_of(2, d13, xv), *xt = rt_of(2, d31, xv), *y;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(softmax_op(par_ref_softmax, "softmax", x, 1, &y, &msg), PAR_OK);
    expect_values(y, w1, 1e-15);
    CU_ASSERT(fabs(y->v[0] - 0.0900306) < 1e-7 && fabs(y->v[2] - 0.6652410) < 1e-7);
    rt_del(y);
    CU_ASSERT_EQUAL_FATAL(softmax_op(par_ref_softmax, "softmax", x, -1, &y, &msg), PAR_OK);
    expect_values(y, w1, 1e-15);
    rt_del(y);
    CU_ASSERT_EQUAL_FATAL(softmax_op(par_ref_softmax, "softmax", x, 0, &y, &msg), PAR_OK);
    expect_values(y, w0, 0);
    rt_del(y);
    CU_ASSERT_EQUAL_FATAL(softmax_op(par_ref_softmax, "softmax", xt, 0, &y, &msg), PAR_OK);
    expect_values(y, w1, 1e-15);
    rt_del(y);
    CU_ASSERT_EQUAL_FATAL(softmax_op(par_ref_log_softmax, "log_softmax", x, 1, &y, &msg), PAR_OK);
    expect_values(y, wl, 1e-15);
    CU_ASSERT(fabs(y->v[0] + 2.4076059) < 1e-7);
    rt_del(y), rt_del(x), rt_del(xt);
}

/* A masked attention row: [1, -inf, 3, -inf] (masked_fill with -inf before softmax). exp(-inf) = 0 exactly, so the
 * row is softmax([1, 3]) at the unmasked places: e / (e + e^3) = 1 / (1 + e^2) = 0.1192029, e^2 / (1 + e^2) =
 * 0.8807971, and exactly 0 (log_softmax: -inf) with budget 0 at the masked ones. The unmasked budgets must stay
 * finite and close to those of the unmasked row [1, 3]: the masked terms add nothing but their count. */
static void test_softmax_masked_row(void)
{
    int64_t d14[2] = {1, 4}, d12[2] = {1, 2};
    double xv[4] = {1, -INFINITY, 3, -INFINITY}, xr[2] = {1, 3};
    double w[4] = {1 / (1 + exp(2)), 0, exp(2) / (1 + exp(2)), 0};
    par_rt *x = rt_of(2, d14, xv), *xs = rt_of(2, d12, xr), *y, *ys;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(softmax_op(par_ref_softmax, "softmax", x, 1, &y, &msg), PAR_OK);
    CU_ASSERT_EQUAL_FATAL(softmax_op(par_ref_softmax, "softmax", xs, 1, &ys, &msg), PAR_OK);
    expect_values(y, w, 1e-15);
    CU_ASSERT(fabs(y->v[0] - 0.1192029) < 1e-7);
    CU_ASSERT(y->e[1] == 0 && y->e[3] == 0);
    CU_ASSERT(isfinite(y->e[0]) && isfinite(y->e[2]) && y->e[0] > 0);
    /* the sum's gamma counts all 4 terms (a backend adds the zeros), so at least the unmasked row's, and close */
    CU_ASSERT(y->e[0] >= ys->e[0] && y->e[0] < 2 * ys->e[0] && y->e[2] >= ys->e[1] && y->e[2] < 2 * ys->e[1]);
    rt_del(y), rt_del(ys);
    CU_ASSERT_EQUAL_FATAL(softmax_op(par_ref_log_softmax, "log_softmax", x, 1, &y, &msg), PAR_OK);
    CU_ASSERT(isinf(y->v[1]) && y->v[1] < 0 && y->e[1] == 0);
    CU_ASSERT(fabs(y->v[0] - (1 - 3 - log(1 + exp(-2)))) < 1e-15 && isfinite(y->e[0]));
    rt_del(y), rt_del(x), rt_del(xs);
}

/* softmax == exp(log_softmax) on random [4,5,6] tensors along every axis. */
static void test_softmax_vs_exp_log_softmax(void)
{
    int64_t d[3] = {4, 5, 6};
    uint64_t s = 41;
    par_rt *x = rt_new(PAR_DTYPE_F32, 3, d), *y1, *y2;
    for (int64_t i = 0; i < x->numel; i++) x->v[i] = rng_f(&s, -20, 20);
    for (int64_t axis = -3; axis < 3; axis++) {
        par_msg msg;
        CU_ASSERT_EQUAL_FATAL(softmax_op(par_ref_softmax, "softmax", x, axis, &y1, &msg), PAR_OK);
        CU_ASSERT_EQUAL_FATAL(softmax_op(par_ref_log_softmax, "log_softmax", x, axis, &y2, &msg), PAR_OK);
        double worst = 0, sum0 = 0;
        for (int64_t i = 0; i < x->numel; i++) worst = fmax(worst, fabs(exp(y2->v[i]) - y1->v[i]) / y1->v[i]);
        for (int64_t i = 0; i < d[0]; i++) sum0 += y1->v[i * 30]; /* along axis 0 at [*,0,0] (checked for axis 0) */
        CU_ASSERT(worst < 1e-12);
        if (axis == 0 || axis == -3) CU_ASSERT_DOUBLE_EQUAL(sum0, 1.0, 1e-14);
        rt_del(y1), rt_del(y2);
    }
    rt_del(x);
}

/* f32 softmax (max, expf, sum, divide) and log_softmax ((x - m) - logf(sum)) within the budgets; perturbed too. */
static void test_softmax_budgets_f32(void)
{
    int64_t d[2] = {64, 33};
    uint64_t s = 51;
    for (int with_e = 0; with_e < 2; with_e++) {
        par_rt *x = rt_new(PAR_DTYPE_F32, 2, d), *ys, *yl;
        for (int64_t i = 0; i < x->numel; i++) {
            x->v[i] = rng_f(&s, -12, 12);
            x->e[i] = with_e ? 1e-6 : 0;
        }
        par_msg msg;
        CU_ASSERT_EQUAL_FATAL(softmax_op(par_ref_softmax, "softmax", x, 1, &ys, &msg), PAR_OK);
        CU_ASSERT_EQUAL_FATAL(softmax_op(par_ref_log_softmax, "log_softmax", x, 1, &yl, &msg), PAR_OK);
        ratio rs = {0, 0, 0}, rl = {0, 0, 0};
        int64_t caught = 0, n_big = 0;
        float xf[33];
        for (int64_t row = 0; row < d[0]; row++) {
            float m = -INFINITY, sum = 0;
            for (int j = 0; j < 33; j++) {
                xf[j] = held(&s, x->v[row * 33 + j], x->e[row * 33 + j]);
                m = fmaxf(m, xf[j]);
            }
            for (int j = 0; j < 33; j++) sum += expf(xf[j] - m);
            for (int j = 0; j < 33; j++) {
                int64_t k = row * 33 + j;
                ratio_add(&rs, expf(xf[j] - m) / sum, ys->v[k], ys->e[k]);
                ratio_add(&rl, (xf[j] - m) - logf(sum), yl->v[k], yl->e[k]);
                if (ys->v[k] > 0.01) {
                    n_big++;
                    caught += 0.01 * ys->v[k] > ys->e[k];
                }
            }
        }
        ratio_report(with_e ? "softmax f32 (perturbed)" : "softmax f32", &rs);
        ratio_report(with_e ? "log_softmax f32 (perturbed)" : "log_softmax f32", &rl);
        CU_ASSERT(n_big > 50);
        CU_ASSERT_EQUAL(caught, n_big);
        rt_del(x), rt_del(ys), rt_del(yl);
    }
}

/* f16 storage (f32 arithmetic, results rounded to f16): the f32 softmax rounded to f16 is within the budget, the
 * tiny probabilities (subnormal in f16) included. */
static void test_softmax_budget_f16_storage(void)
{
    int64_t d[2] = {16, 40};
    uint64_t s = 53;
    par_rt *x = rt_new(PAR_DTYPE_F32, 2, d), *y;
    for (int64_t i = 0; i < x->numel; i++) x->v[i] = rng_f(&s, -15, 15);
    par_prec p16 = par_prec_for(PAR_ARITH_F16_STORAGE);
    par_attr a[1] = {par_a_int("axis", 1)};
    par_rt *in[1] = {x};
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(run_opq(par_infer_same, par_ref_softmax, "softmax", 1, in, a, 1, &p16, NULL, &y, &msg),
                          PAR_OK);
    ratio r = {0, 0, 0};
    int64_t subnormal = 0;
    for (int64_t row = 0; row < d[0]; row++) {
        float m = -INFINITY, sum = 0;
        for (int j = 0; j < 40; j++) m = fmaxf(m, (float)x->v[row * 40 + j]);
        for (int j = 0; j < 40; j++) sum += expf((float)x->v[row * 40 + j] - m);
        for (int j = 0; j < 40; j++) {
            int64_t k = row * 40 + j;
            float v = par_f16_to_f32(par_f32_to_f16(expf((float)x->v[k] - m) / sum));
            subnormal += v > 0 && v < 0x1p-14f;
            ratio_add(&r, v, y->v[k], y->e[k]);
        }
    }
    ratio_report("softmax f16 storage", &r);
    CU_ASSERT(subnormal > 10);
    rt_del(x), rt_del(y);
}

/* ---- batch_norm --------------------------------------------------------------------------------------------- */

/* x [1,2,2] = [[1,3],[0,4]], weight [2, 0.5], bias [1, -1], mean [1, 2], var [4 - eps, 16 - eps] with eps = 0.25
 * (sqrt(var + eps) = 2 and 4 exactly): channel 0 (x - 1) / 2 * 2 + 1 = [1, 3]; channel 1 (x - 2) / 4 * 0.5 - 1 =
 * [-1.25, -0.75]. */
static void test_batch_norm_values(void)
{
    int64_t dx[3] = {1, 2, 2}, dc[1] = {2};
    double xv[4] = {1, 3, 0, 4}, wv[2] = {2, 0.5}, bv[2] = {1, -1}, mv[2] = {1, 2}, vv[2] = {3.75, 15.75};
    double want[4] = {1, 3, -1.25, -0.75};
    par_rt *in[5] = {rt_of(3, dx, xv), rt_of(1, dc, wv), rt_of(1, dc, bv), rt_of(1, dc, mv), rt_of(1, dc, vv)};
    par_attr a[1] = {par_a_float("eps", 0.25)};
    par_rt *y;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_batch_norm, par_ref_batch_norm, "batch_norm", 5, in, a, 1, &y, &msg),
                          PAR_OK);
    expect_values(y, want, 0);
    rt_del(y);
    in[4]->v[1] = -1; /* a negative variance is refused, naming the input */
    CU_ASSERT_EQUAL(run_op(par_infer_batch_norm, par_ref_batch_norm, "batch_norm", 5, in, a, 1, &y, &msg), PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "running_var"));
    for (int i = 0; i < 5; i++) rt_del(in[i]);
}

/* Folded (x * s + t) and direct ((x - m) / sqrt(v + eps) * w + b) f32 evaluations within the budget. */
static void test_batch_norm_budget_f32(void)
{
    int64_t dx[4] = {2, 8, 5, 5}, dc[1] = {8};
    uint64_t s = 61;
    par_rt *in[5] = {rt_new(PAR_DTYPE_F32, 4, dx), rt_new(PAR_DTYPE_F32, 1, dc), rt_new(PAR_DTYPE_F32, 1, dc),
                     rt_new(PAR_DTYPE_F32, 1, dc), rt_new(PAR_DTYPE_F32, 1, dc)};
    for (int64_t i = 0; i < in[0]->numel; i++) in[0]->v[i] = rng_f(&s, -5, 5);
    for (int c = 0; c < 8; c++) {
        in[1]->v[c] = rng_f(&s, -2, 2), in[2]->v[c] = rng_f(&s, -1, 1);
        in[3]->v[c] = rng_f(&s, -3, 3), in[4]->v[c] = rng_f(&s, 0, 4);
    }
    par_attr a[1] = {par_a_float("eps", 1e-5)};
    par_rt *y;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_batch_norm, par_ref_batch_norm, "batch_norm", 5, in, a, 1, &y, &msg),
                          PAR_OK);
    ratio rf = {0, 0, 0}, rd = {0, 0, 0};
    int64_t caught = 0, n_big = 0;
    for (int64_t i = 0; i < y->numel; i++) {
        int c = (int)((i / 25) % 8);
        float w = (float)in[1]->v[c], b = (float)in[2]->v[c], m = (float)in[3]->v[c], v = (float)in[4]->v[c];
        float x = (float)in[0]->v[i], eps = 1e-5f;
        float sc = w / sqrtf(v + eps), t = b - m * sc;
        ratio_add(&rf, x * sc + t, y->v[i], y->e[i]);
        ratio_add(&rd, (x - m) / sqrtf(v + eps) * w + b, y->v[i], y->e[i]);
        if (fabs(y->v[i]) > 0.1) n_big++, caught += 0.01 * fabs(y->v[i]) > y->e[i];
    }
    ratio_report("batch_norm f32 folded", &rf);
    ratio_report("batch_norm f32 direct", &rd);
    CU_ASSERT_EQUAL(caught, n_big);
    rt_del(y);
    for (int i = 0; i < 5; i++) rt_del(in[i]);
}

/* ---- quantize / dequantize ---------------------------------------------------------------------------------- */

/* scale 1, zero point 0, qu8: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2 (ties to even), 1.2 -> 1, 300 -> 255, -3 -> 0
 * (saturation). qs8 scale 0.5 zp -10: 100 -> 200 - 10 saturates to 127, -100 -> -128, 1.25 -> round(2.5) - 10 = -8. */
static void test_quantize_ties_saturation(void)
{
    int64_t d[1] = {6}, d3[1] = {3};
    double xv[6] = {0.5, 1.5, 2.5, 1.2, 300, -3}, want[6] = {0, 2, 2, 1, 255, 0};
    double x8[3] = {100, -100, 1.25}, w8[3] = {127, -128, -8};
    par_rt *x = rt_of(1, d, xv), *xs = rt_of(1, d3, x8), *y;
    par_msg msg;
    qspec q = {PAR_DTYPE_QU8, 1.0f, 1.0f, 0, 0};
    par_rt *in[1] = {x};
    CU_ASSERT_EQUAL_FATAL(run_opq(par_infer_quantize, par_ref_quantize, "quantize", 1, in, NULL, 0, &F32, &q, &y, &msg),
                          PAR_OK);
    expect_values(y, want, 0);
    CU_ASSERT_EQUAL(y->e[0], 1); /* ties: either neighbour */
    CU_ASSERT_EQUAL(y->e[1], 1);
    CU_ASSERT_EQUAL(y->e[3], 0); /* 1.2: no doubt */
    CU_ASSERT_EQUAL(y->e[4], 0); /* saturated */
    rt_del(y);
    qspec q8 = {PAR_DTYPE_QS8, 0.5f, 1.0f, -10, 0};
    in[0] = xs;
    CU_ASSERT_EQUAL_FATAL(run_opq(par_infer_quantize, par_ref_quantize, "quantize", 1, in, NULL, 0, &F32, &q8, &y, &msg),
                          PAR_OK);
    expect_values(y, w8, 0);
    rt_del(y);
    /* A budget of 0.3 steps on x moves t over [0.9, 1.5] when x = 1.2: the interval reaches the tie, one step. */
    x->e[3] = 0.3;
    in[0] = x;
    CU_ASSERT_EQUAL_FATAL(run_opq(par_infer_quantize, par_ref_quantize, "quantize", 1, in, NULL, 0, &F32, &q, &y, &msg),
                          PAR_OK);
    CU_ASSERT_EQUAL(y->e[3], 1);
    rt_del(y), rt_del(x), rt_del(xs);
}

/* x * (1/scale) in f32 rounded with nearbyintf, and x / scale: within the budget in steps. */
static void test_quantize_budget_f32(void)
{
    int64_t d[1] = {5000};
    uint64_t s = 71;
    par_rt *x = rt_new(PAR_DTYPE_F32, 1, d), *y;
    const float scale = 0.0371f;
    for (int64_t i = 0; i < x->numel; i++)
        x->v[i] = i % 2 ? rng_f(&s, -6, 6) : (double)(float)(((double)(i % 200) - 100.5) * scale); /* near ties */
    qspec q = {PAR_DTYPE_QS8, scale, 1.0f, 3, 0};
    par_rt *in[1] = {x};
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(run_opq(par_infer_quantize, par_ref_quantize, "quantize", 1, in, NULL, 0, &F32, &q, &y, &msg),
                          PAR_OK);
    ratio r1 = {0, 0, 0}, r2 = {0, 0, 0};
    int64_t ties = 0;
    for (int64_t i = 0; i < x->numel; i++) {
        float a = nearbyintf((float)x->v[i] * (1.0f / scale)) + 3, b = nearbyintf((float)x->v[i] / scale) + 3;
        a = fminf(fmaxf(a, -128), 127), b = fminf(fmaxf(b, -128), 127);
        /* budgets are whole steps: compare with a half-step margin */
        ratio_add(&r1, a, y->v[i], y->e[i] + 0.5);
        ratio_add(&r2, b, y->v[i], y->e[i] + 0.5);
        ties += y->e[i] == 1;
    }
    ratio_report("quantize f32 x*(1/s)", &r1);
    ratio_report("quantize f32 x/s", &r2);
    CU_ASSERT(ties > x->numel / 3 && ties < 2 * x->numel / 3); /* the near-tie half, few others */
    rt_del(x), rt_del(y);
}

/* qu8 scale 0.5 zp 128: [0, 128, 255, 129] -> [-64, 0, 63.5, 0.5]; budget u|y| + u_s|y|. */
static void test_dequantize(void)
{
    int64_t d[1] = {4};
    double qv[4] = {0, 128, 255, 129}, want[4] = {-64, 0, 63.5, 0.5};
    par_rt *q = rt_new(PAR_DTYPE_QU8, 1, d), *y;
    for (int i = 0; i < 4; i++) q->v[i] = qv[i];
    qspec qs = {0, 1.0f, 0.5f, 0, 128};
    par_rt *in[1] = {q};
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(
        run_opq(par_infer_dequantize, par_ref_dequantize, "dequantize", 1, in, NULL, 0, &F32, &qs, &y, &msg), PAR_OK);
    CU_ASSERT_EQUAL(y->dtype, PAR_DTYPE_F32);
    expect_values(y, want, 0);
    CU_ASSERT_DOUBLE_EQUAL(y->e[0], 64 * 0x1p-24 + 0x1p-24 * 64 * (1 + 0x1p-24), 1e-20);
    CU_ASSERT_EQUAL(y->e[1], 0);
    rt_del(y);
    q->e[2] = 1; /* one step of budget: scale more */
    CU_ASSERT_EQUAL_FATAL(
        run_opq(par_infer_dequantize, par_ref_dequantize, "dequantize", 1, in, NULL, 0, &F32, &qs, &y, &msg), PAR_OK);
    CU_ASSERT(y->e[2] >= 0.5 && y->e[2] < 0.5 + 1e-5);
    rt_del(y), rt_del(q);
}

/* ---- shape inference errors --------------------------------------------------------------------------------- */

static void test_infer_errors(void)
{
    int64_t d23[2] = {2, 3}, d4[1] = {4}, d2[1] = {2}, dx[4] = {1, 3, 2, 2}, d3[1] = {3};
    par_rt *a = rt_new(PAR_DTYPE_F32, 2, d23), *b = rt_new(PAR_DTYPE_F32, 1, d4), *c2 = rt_new(PAR_DTYPE_F32, 1, d2);
    par_rt *x = rt_new(PAR_DTYPE_F32, 4, dx), *c3 = rt_new(PAR_DTYPE_F32, 1, d3), *bq = rt_new(PAR_DTYPE_QU8, 1, d4);
    par_msg msg;
    par_rt *ab[2] = {a, b};
    expect_error(run_op(par_infer_broadcast, NULL, "add", 2, ab, NULL, 0, NULL, &msg), &msg, "input 1 (b)");
    par_rt *aq[2] = {b, bq};
    expect_error(run_op(par_infer_broadcast, NULL, "add", 2, aq, NULL, 0, NULL, &msg), &msg, "dtype");
    par_rt *pr[2] = {x, c2};
    expect_error(run_op(par_infer_prelu, NULL, "prelu", 2, pr, NULL, 0, NULL, &msg), &msg, "input 1 (slope)");
    par_attr ht[2] = {par_a_float("min_val", 1), par_a_float("max_val", -1)};
    par_rt *xx[1] = {x};
    expect_error(run_op(par_infer_same, NULL, "hardtanh", 1, xx, ht, 2, NULL, &msg), &msg, "min_val");
    par_attr cl[2] = {par_a_float("min", 2), par_a_float("max", 1)};
    expect_error(run_op(par_infer_same, NULL, "clamp", 1, xx, cl, 2, NULL, &msg), &msg, "'min'");
    par_attr ax[1] = {par_a_int("axis", 4)};
    expect_error(run_op(par_infer_same, NULL, "softmax", 1, xx, ax, 1, NULL, &msg), &msg, "axis");
    par_attr axn[1] = {par_a_int("axis", -5)};
    expect_error(run_op(par_infer_same, NULL, "softmax", 1, xx, axn, 1, NULL, &msg), &msg, "axis");
    /* batch_norm: a parameter of the wrong length, and eps <= 0 */
    par_rt *bn[5] = {x, c3, c3, c2, c3};
    par_attr eps[1] = {par_a_float("eps", 1e-5)}, eps0[1] = {par_a_float("eps", 0)};
    expect_error(run_op(par_infer_batch_norm, NULL, "batch_norm", 5, bn, eps, 1, NULL, &msg), &msg,
                 "input 3 (running_mean)");
    bn[3] = c3;
    CU_ASSERT_EQUAL(run_op(par_infer_batch_norm, NULL, "batch_norm", 5, bn, eps, 1, NULL, &msg), PAR_OK);
    expect_error(run_op(par_infer_batch_norm, NULL, "batch_norm", 5, bn, eps0, 1, NULL, &msg), &msg, "eps");
    /* quantize: output not declared quantized; scale 0. dequantize: input not quantized. */
    qspec qf = {PAR_DTYPE_F32, 1.0f, 1.0f, 0, 0}, q0 = {PAR_DTYPE_QU8, 0.0f, 1.0f, 0, 0};
    expect_error(run_opq(par_infer_quantize, NULL, "quantize", 1, xx, NULL, 0, &F32, &qf, NULL, &msg), &msg,
                 "output 0");
    expect_error(run_opq(par_infer_quantize, NULL, "quantize", 1, xx, NULL, 0, &F32, &q0, NULL, &msg), &msg, "scale");
    expect_error(run_op(par_infer_dequantize, NULL, "dequantize", 1, xx, NULL, 0, NULL, &msg), &msg, "input 0 (x)");
    rt_del(a), rt_del(b), rt_del(c2), rt_del(x), rt_del(c3), rt_del(bq);
}

static const CU_TestInfo tests[] = {
    {"broadcast add values", test_broadcast_add_values},
    {"broadcast sub/mul/div values", test_broadcast_sub_mul_div_values},
    {"add vs sub of negation", test_add_vs_sub_of_negation},
    {"binary budgets f32", test_binary_budgets_f32},
    {"div interval through zero", test_div_interval_through_zero},
    {"clamp family", test_clamp_family},
    {"leaky_relu and prelu", test_leaky_prelu},
    {"hardswish and hardsigmoid", test_hard_activations},
    {"sigmoid, tanh, elu", test_smooth_activations},
    {"silu values", test_silu_values},
    {"mish values", test_mish_values},
    {"gelu values", test_gelu_values},
    {"activation budgets f32", test_activation_budgets_f32},
    {"softmax values", test_softmax_values},
    {"softmax of a masked row", test_softmax_masked_row},
    {"softmax vs exp(log_softmax)", test_softmax_vs_exp_log_softmax},
    {"softmax budgets f32", test_softmax_budgets_f32},
    {"softmax budget f16 storage", test_softmax_budget_f16_storage},
    {"batch_norm values", test_batch_norm_values},
    {"batch_norm budget f32", test_batch_norm_budget_f32},
    {"quantize ties and saturation", test_quantize_ties_saturation},
    {"quantize budget f32", test_quantize_budget_f32},
    {"dequantize", test_dequantize},
    {"shape inference errors", test_infer_errors},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("ref_elementwise", tests)
