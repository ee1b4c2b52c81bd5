/*
 * test_ref_elementwise.c - tests of the reference elementwise binary ops, softmax, batch_norm and
 * quantize/dequantize (reference/elementwise.c, softmax.c, norm.c, quant.c; the activations are
 * test_ref_activation.c's): hand-computed values, independent formulations (add vs sub of the negation, softmax vs
 * exp(log_softmax)), error budgets (sound against float32 computations of the obvious formulas, with and without
 * perturbed inputs, and tight enough that a 1% error exceeds them), and shape-inference errors naming the attribute
 * or input.
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

/* ---- softmax ------------------------------------------------------------------------------------------------ */

static par_status softmax_op(ref_fn ref, const char *op, par_rt *x, int64_t axis, par_rt **y, par_msg *msg)
{
    par_attr a[1] = {par_a_int("axis", axis)};
    par_rt *in[1] = {x};
    return run_op(par_infer_same, ref, op, 1, in, a, 1, y, msg);
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

/* Inputs with budgets e_j = 0.3 (no scales: the worst case of the first-order bound, softmax.c first_order): every
 * perturbation dx with |dx_j| <= e_j (the vertices +-e_j and uniform draws) moves each output by at most its budget,
 * and a row with one dominant element (x = [8, 0, ..., 0], y_0 = 0.996) gets about y_0 (exp(E^2 / 2 + 0.0047) - 1)
 * = 0.05 there, where the interval's sensitivity gave at least e_0 = 0.3. */
static void test_softmax_first_order(void)
{
    enum { R = 9, N = 12 };
    int64_t d[2] = {R, N};
    uint64_t s = 71;
    par_rt *x = rt_new(PAR_DTYPE_F32, 2, d), *y;
    for (int64_t i = 0; i < x->numel; i++) {
        x->v[i] = i / N == R - 1 ? (i % N == 0 ? 8 : 0) : rng_f(&s, -4, 4);
        x->e[i] = 0.3;
    }
    par_attr a[1] = {par_a_int("axis", 1)};
    par_rt *in[1] = {x};
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_same, par_ref_softmax, "softmax", 1, in, a, 1, &y, &msg), PAR_OK);
    double worst = 0;
    for (int64_t row = 0; row < R; row++)
        for (int t = 0; t < 4000; t++) {
            double xp[N], m = -INFINITY, sum = 0;
            for (int j = 0; j < N; j++) {
                double dx = t < 2000 ? (rng_f(&s, -1, 1) < 0 ? -0.3 : 0.3) : rng_f(&s, -0.3, 0.3);
                xp[j] = x->v[row * N + j] + dx;
                m = fmax(m, xp[j]);
            }
            for (int j = 0; j < N; j++) sum += exp(xp[j] - m);
            for (int j = 0; j < N; j++) {
                int64_t k = row * N + j;
                worst = fmax(worst, fabs(exp(xp[j] - m) / sum - y->v[k]) / y->e[k]);
            }
        }
    printf("\n  softmax first order: worst |y' - y| / budget over 36,000 perturbations %.3f\n", worst);
    CU_ASSERT(worst <= 1.0);
    CU_ASSERT(y->v[(R - 1) * N] > 0.99);
    CU_ASSERT(y->e[(R - 1) * N] < 0.06);
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
    {"softmax values", test_softmax_values},
    {"softmax of a masked row", test_softmax_masked_row},
    {"softmax vs exp(log_softmax)", test_softmax_vs_exp_log_softmax},
    {"softmax budgets f32", test_softmax_budgets_f32},
    {"softmax budget f16 storage", test_softmax_budget_f16_storage},
    {"softmax first order", test_softmax_first_order},
    {"batch_norm values", test_batch_norm_values},
    {"batch_norm budget f32", test_batch_norm_budget_f32},
    {"quantize ties and saturation", test_quantize_ties_saturation},
    {"quantize budget f32", test_quantize_budget_f32},
    {"dequantize", test_dequantize},
    {"shape inference errors", test_infer_errors},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("ref_elementwise", tests)
