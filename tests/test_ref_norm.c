/*
 * test_ref_norm.c - tests of the reference kernels of sqrt and rsqrt (reference/elementwise.c), sum, amax, amin
 * (reference/pool.c), and layer_norm, group_norm, instance_norm and rms_norm (reference/norm.c): values derived by hand in
 * the comments (PyTorch's rules, docs/ops.md), IEEE special values, the budgets checked sound against float32
 * implementations of every form the budget claims to cover (two-pass, Welford, E[x^2] - mean^2; direct and folded
 * output; inputs held anywhere within their budgets) and not vacuous (mutations of a correct implementation: eps
 * dropped, the unbiased variance, an element skipped, an unrefined rsqrt estimate, exceed it), and the shape
 * inference errors.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/graph.h"
#include "core/shape.h"
#include "reference/reference.h"
#include "ref_helpers.h"
#include "tmain.h"

static const double U = 0x1p-24;

/* ---- runners --------------------------------------------------------------------------------------------------- */

static par_status unary(int rs, par_rt *x, par_rt **y, par_msg *msg)
{
    return run_op(par_infer_same, rs ? par_ref_rsqrt : par_ref_sqrt, rs ? "rsqrt" : "sqrt", 1, &x, NULL, 0, y, msg);
}

static par_status reduce(int amax, int32_t n_axes, const int64_t *axes, int64_t keep, par_rt *x, par_rt **y,
                         par_msg *msg)
{
    par_attr a[2] = {par_a_ints("axes", n_axes, axes), par_a_int("keepdims", keep)};
    return run_op(par_infer_mean, amax ? par_ref_amax : par_ref_sum, amax ? "amax" : "sum", 1, &x, a, 2, y, msg);
}

static par_status layer_norm(int32_t k, const int64_t *ns, double eps, par_rt *x, par_rt *w, par_rt *b, par_rt **y,
                             par_msg *msg)
{
    par_attr a[2] = {par_a_ints("normalized_shape", k, ns), par_a_float("eps", eps)};
    par_rt *in[3] = {x, w, b};
    return run_op(par_infer_layer_norm, par_ref_layer_norm, "layer_norm", 3, in, a, 2, y, msg);
}

static par_status group_norm(int64_t groups, double eps, par_rt *x, par_rt *w, par_rt *b, par_rt **y, par_msg *msg)
{
    par_attr a[2] = {par_a_int("num_groups", groups), par_a_float("eps", eps)};
    par_rt *in[3] = {x, w, b};
    return run_op(par_infer_group_norm, par_ref_group_norm, "group_norm", 3, in, a, 2, y, msg);
}

static par_status instance_norm(double eps, par_rt *x, par_rt *w, par_rt *b, par_rt **y, par_msg *msg)
{
    par_attr a[1] = {par_a_float("eps", eps)};
    par_rt *in[3] = {x, w, b};
    return run_op(par_infer_instance_norm, par_ref_instance_norm, "instance_norm", 3, in, a, 1, y, msg);
}

static par_status rms_norm(int32_t k, const int64_t *ns, double eps, par_rt *x, par_rt *w, par_rt **y, par_msg *msg)
{
    par_attr a[2] = {par_a_ints("normalized_shape", k, ns), par_a_float("eps", eps)};
    par_rt *in[2] = {x, w};
    return run_op(par_infer_rms_norm, par_ref_rms_norm, "rms_norm", 2, in, a, 2, y, msg);
}

/* ---- sqrt, rsqrt ------------------------------------------------------------------------------------------------ */

/* sqrt: 4 -> 2, 2.25 -> 1.5, 0 -> 0, -0 -> -0 (IEEE), -1 -> NaN, inf -> inf.
 * rsqrt: 4 -> 0.5, 0.25 -> 2, 0 -> +inf, -0 -> -inf (1 / -0), -4 -> NaN, inf -> +0.
 * Budgets of exact inputs: sqrt(4) = 2 is p = 0, own u |y| = 2u, storage u (2 + 2u): 4u + 2u^2. rsqrt(4) = 0.5:
 * own (fn_ulps + 2) u |y| = 10u * 0.5 = 5u, storage u (0.5 + 5u): 5.5u + 5u^2. The specials are exact: budget 0. */
static void test_sqrt_values(void)
{
    int64_t d[1] = {6};
    const double xs[6] = {4, 2.25, 0, -0.0, -1, INFINITY}, xr[6] = {4, 0.25, 0, -0.0, -4, INFINITY};
    par_rt *a = rt_of(1, d, xs), *b = rt_of(1, d, xr), *y = NULL, *z = NULL;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(unary(0, a, &y, &msg), PAR_OK);
    CU_ASSERT_EQUAL_FATAL(unary(1, b, &z, &msg), PAR_OK);
    CU_ASSERT_EQUAL(y->v[0], 2.0);
    CU_ASSERT_EQUAL(y->v[1], 1.5);
    CU_ASSERT(y->v[2] == 0 && !signbit(y->v[2]));
    CU_ASSERT(y->v[3] == 0 && signbit(y->v[3]));
    CU_ASSERT(isnan(y->v[4]));
    CU_ASSERT(isinf(y->v[5]) && y->v[5] > 0);
    CU_ASSERT(fabs(y->e[0] - (4 * U + 2 * U * U)) <= 1e-3 * U);
    CU_ASSERT(y->e[2] == 0 && y->e[3] == 0 && y->e[5] == 0);
    CU_ASSERT_EQUAL(z->v[0], 0.5);
    CU_ASSERT_EQUAL(z->v[1], 2.0);
    CU_ASSERT(isinf(z->v[2]) && z->v[2] > 0);
    CU_ASSERT(isinf(z->v[3]) && z->v[3] < 0);
    CU_ASSERT(isnan(z->v[4]));
    CU_ASSERT(z->v[5] == 0 && !signbit(z->v[5]));
    CU_ASSERT(fabs(z->e[0] - (5.5 * U + 5 * U * U)) <= 1e-3 * U);
    CU_ASSERT(z->e[2] == 0 && z->e[3] == 0 && z->e[5] == 0);
    rt_del(a), rt_del(b), rt_del(y), rt_del(z);
}

/* Input budgets: sqrt(1) with e = 0.19: p = 1 - sqrt(0.81) = 0.1 (the lower end of the interval);
 * rsqrt(1) with e = 0.75: p = 1 / sqrt(0.25) - 1 = 1; with e = 1 the held x' may be 0: unbounded. */
static void test_sqrt_propagation(void)
{
    int64_t d[1] = {1};
    const double one[1] = {1};
    par_rt *a = rt_of(1, d, one), *y = NULL;
    par_msg msg;
    a->e[0] = 0.19;
    CU_ASSERT_EQUAL_FATAL(unary(0, a, &y, &msg), PAR_OK);
    CU_ASSERT(y->e[0] >= 0.1 && y->e[0] < 0.1 + 4 * U);
    rt_del(y);
    a->e[0] = 0.75;
    CU_ASSERT_EQUAL_FATAL(unary(1, a, &y, &msg), PAR_OK);
    CU_ASSERT(y->e[0] >= 1 && y->e[0] < 1 + 30 * U);
    rt_del(y);
    a->e[0] = 1;
    CU_ASSERT_EQUAL_FATAL(unary(1, a, &y, &msg), PAR_OK);
    CU_ASSERT(isinf(y->e[0]));
    rt_del(y), rt_del(a);
}

/* Sound against float32 sqrtf and 1 / sqrtf over six decades; not vacuous: sqrtf off by 4 ULPs, and the 12-bit
 * rsqrt estimate without its Newton step (relative error up to 2^-12, modelled as 1 / sqrtf (1 + 2^-13)), exceed. */
static void test_sqrt_vs_f32(void)
{
    int64_t d[1] = {4000};
    uint64_t seed = 11;
    par_rt *x = rt_new(PAR_DTYPE_F32, 1, d), *y = NULL, *z = NULL;
    for (int64_t i = 0; i < x->numel; i++) x->v[i] = (double)(float)pow(10.0, rng_f(&seed, -3, 3));
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(unary(0, x, &y, &msg), PAR_OK);
    CU_ASSERT_EQUAL_FATAL(unary(1, x, &z, &msg), PAR_OK);
    ratio rs = {0}, rr = {0};
    int over_s = 0, over_r = 0;
    for (int64_t i = 0; i < x->numel; i++) {
        float xf = (float)x->v[i];
        ratio_add(&rs, sqrtf(xf), y->v[i], y->e[i]);
        ratio_add(&rr, 1.0f / sqrtf(xf), z->v[i], z->e[i]);
        float bad_s = nextafterf(nextafterf(nextafterf(nextafterf(sqrtf(xf), INFINITY), INFINITY), INFINITY), INFINITY);
        over_s += fabs(bad_s - y->v[i]) > y->e[i];
        over_r += fabs((1.0f / sqrtf(xf)) * (1.0f + 0x1p-13f) - z->v[i]) > z->e[i];
    }
    ratio_report("sqrt vs sqrtf", &rs);
    ratio_report("rsqrt vs 1 / sqrtf", &rr);
    CU_ASSERT_EQUAL(over_s, x->numel);
    CU_ASSERT_EQUAL(over_r, x->numel);
    rt_del(x), rt_del(y), rt_del(z);
}

/* ---- sum, amax -------------------------------------------------------------------------------------------------- */

/* x [2,3] = [[1,2,3],[4,5,6]].
 * sum axes [1]: [6, 15]; budget of 6: k = 3 terms, gamma(2) * (1 + 2 + 3) = 12u / (1 - 2u), plus storage
 *   u (6 + that).
 * sum axes [0] keepdims: [[5, 7, 9]], shape [1, 3].
 * amax axes [-1]: [3, 6]; axes [0, 1]: 6 (rank 0); exact inputs: budget 0. */
static void test_sum_amax_values(void)
{
    int64_t d[2] = {2, 3}, a1[1] = {1}, a0[1] = {0}, am[1] = {-1}, a01[2] = {0, 1};
    const double v[6] = {1, 2, 3, 4, 5, 6};
    par_rt *x = rt_of(2, d, v), *y = NULL;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(reduce(0, 1, a1, 0, x, &y, &msg), PAR_OK);
    int64_t d1[1] = {2};
    expect_exact(y, 1, d1, (const double[]){6, 15});
    double g2 = 2 * U / (1 - 2 * U);
    CU_ASSERT(fabs(y->e[0] - (g2 * 6 + U * (6 + g2 * 6))) <= 1e-9 * U);
    rt_del(y);
    CU_ASSERT_EQUAL_FATAL(reduce(0, 1, a0, 1, x, &y, &msg), PAR_OK);
    int64_t d13[2] = {1, 3};
    expect_exact(y, 2, d13, (const double[]){5, 7, 9});
    rt_del(y);
    CU_ASSERT_EQUAL_FATAL(reduce(1, 1, am, 0, x, &y, &msg), PAR_OK);
    expect_exact(y, 1, d1, (const double[]){3, 6});
    CU_ASSERT(y->e[0] == 0 && y->e[1] == 0);
    rt_del(y);
    CU_ASSERT_EQUAL_FATAL(reduce(1, 2, a01, 0, x, &y, &msg), PAR_OK);
    expect_exact(y, 0, NULL, (const double[]){6});
    rt_del(y), rt_del(x);
}

/* amax propagates NaN (PyTorch): x [2,3] = [[1, NaN, 3], [-1, -5, -2]]; axes [1]: [NaN, -1]; axes [0]:
 * [1, NaN, 3]. Candidates: x = [1.0 (e 0.1), 0.95 (e 0.2), 0.5 (e 0.1)]: the backend's max is at least
 * max(v - e) = 0.9; 1.0 + 0.1 and 0.95 + 0.2 reach it, 0.5 + 0.1 does not: budget 0.2, the largest candidate's. */
static void test_amax_nan_and_candidates(void)
{
    int64_t d[2] = {2, 3}, a1[1] = {1}, a0[1] = {0}, d3[1] = {3}, a00[1] = {0};
    const double v[6] = {1, NAN, 3, -1, -5, -2};
    par_rt *x = rt_of(2, d, v), *y = NULL;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(reduce(1, 1, a1, 0, x, &y, &msg), PAR_OK);
    CU_ASSERT(isnan(y->v[0]) && y->v[1] == -1);
    rt_del(y);
    CU_ASSERT_EQUAL_FATAL(reduce(1, 1, a0, 0, x, &y, &msg), PAR_OK);
    CU_ASSERT(y->v[0] == 1 && isnan(y->v[1]) && y->v[2] == 3);
    rt_del(y), rt_del(x);
    x = rt_of(1, d3, (const double[]){1.0, 0.95, 0.5});
    x->e[0] = 0.1, x->e[1] = 0.2, x->e[2] = 0.1;
    CU_ASSERT_EQUAL_FATAL(reduce(1, 1, a00, 0, x, &y, &msg), PAR_OK);
    CU_ASSERT_EQUAL(y->v[0], 1.0);
    CU_ASSERT_EQUAL(y->e[0], 0.2);
    rt_del(y), rt_del(x);
}

/* amin, the mirror of amax: x [2,3] = [[1, NaN, 3], [-1, -5, -2]]; axes [1]: [NaN, -5] (NaN propagates); axes [0]:
 * [-1, NaN, -2]; axes [0, 1], keepdims 1: [[NaN]]. Exact inputs: budget 0. Candidates: x = [-1.0 (e 0.1),
 * -0.95 (e 0.2), -0.5 (e 0.1)]: the backend's min is at most min(v + e) = -0.9; -1.0 - 0.1 and -0.95 - 0.2 reach
 * below it, -0.5 - 0.1 does not: budget 0.2, the largest candidate's; the value -1. */
static void test_amin_values_and_candidates(void)
{
    int64_t d[2] = {2, 3}, a1[1] = {1}, a0[1] = {0}, a01[2] = {0, 1}, d3[1] = {3}, a00[1] = {0};
    const double v[6] = {1, NAN, 3, -1, -5, -2};
    par_rt *x = rt_of(2, d, v), *y = NULL;
    par_attr at[2];
    par_msg msg;
    at[0] = par_a_ints("axes", 1, a1), at[1] = par_a_int("keepdims", 0);
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_mean, par_ref_amin, "amin", 1, &x, at, 2, &y, &msg), PAR_OK);
    CU_ASSERT(isnan(y->v[0]) && y->v[1] == -5 && y->e[1] == 0);
    rt_del(y);
    at[0] = par_a_ints("axes", 1, a0);
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_mean, par_ref_amin, "amin", 1, &x, at, 2, &y, &msg), PAR_OK);
    CU_ASSERT(y->v[0] == -1 && isnan(y->v[1]) && y->v[2] == -2);
    rt_del(y);
    at[0] = par_a_ints("axes", 2, a01), at[1] = par_a_int("keepdims", 1);
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_mean, par_ref_amin, "amin", 1, &x, at, 2, &y, &msg), PAR_OK);
    CU_ASSERT(y->rank == 2 && y->dims[0] == 1 && y->dims[1] == 1 && isnan(y->v[0]));
    rt_del(y), rt_del(x);
    x = rt_of(1, d3, (const double[]){-1.0, -0.95, -0.5});
    x->e[0] = 0.1, x->e[1] = 0.2, x->e[2] = 0.1;
    at[0] = par_a_ints("axes", 1, a00), at[1] = par_a_int("keepdims", 0);
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_mean, par_ref_amin, "amin", 1, &x, at, 2, &y, &msg), PAR_OK);
    CU_ASSERT_EQUAL(y->v[0], -1.0);
    CU_ASSERT_EQUAL(y->e[0], 0.2);
    rt_del(y), rt_del(x);
}

/* Propagation: sum of [1, 2] with budgets [0.1, 0.2] (scales the same): the worst case 0.3 is below the
 * probabilistic 6 sqrt(0.1^2 + 0.2^2) = 1.34, so P = 0.3; the rounding gamma(1) (1.1 + 2.2) = 3.3u / (1 - u);
 * storage u (3 + P + R). With 40 terms of budget 0.1 each, P = min(4, 6 sqrt(40 * 0.01) = 3.79) = 3.79. */
static void test_sum_propagation(void)
{
    int64_t d[1] = {2}, a0[1] = {0}, d40[1] = {40};
    par_rt *x = rt_of(1, d, (const double[]){1, 2}), *y = NULL;
    x->e[0] = 0.1, x->e[1] = 0.2;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(reduce(0, 1, a0, 0, x, &y, &msg), PAR_OK);
    double r = 3.3 * U / (1 - U), want = 0.3 + r + U * (3 + 0.3 + r);
    CU_ASSERT(fabs(y->e[0] - want) <= 1e-12);
    rt_del(y), rt_del(x);
    x = rt_new(PAR_DTYPE_F32, 1, d40);
    for (int i = 0; i < 40; i++) x->e[i] = 0.1;
    CU_ASSERT_EQUAL_FATAL(reduce(0, 1, a0, 0, x, &y, &msg), PAR_OK);
    /* values 0: R = gamma(39) * 40 * 0.1 = 4 * 39u / (1 - 39u) */
    r = 4 * 39 * U / (1 - 39 * U);
    want = 6 * sqrt(0.4) + r + U * (6 * sqrt(0.4) + r);
    CU_ASSERT(fabs(y->e[0] - want) <= 1e-12);
    rt_del(y), rt_del(x);
}

/* Sums of 1000 terms in [-1, 1): float32 sequential and eight-lane sums within the budget; leaving out the row's
 * largest element (the mutation, |x| near 1) exceeds it in every row: the budget is gamma(999) sum |x| ~ 6e-5 *
 * 500 = 0.03. */
static void test_sum_vs_f32(void)
{
    int64_t d[2] = {20, 1000}, a1[1] = {1};
    uint64_t seed = 5;
    par_rt *x = rt_rand(2, d, &seed), *y = NULL;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(reduce(0, 1, a1, 0, x, &y, &msg), PAR_OK);
    ratio r = {0};
    int over = 0;
    for (int64_t i = 0; i < 20; i++) {
        const double *row = x->v + i * 1000;
        float seq = 0, part[8] = {0};
        for (int j = 0; j < 1000; j++) seq += (float)row[j], part[j % 8] += (float)row[j];
        float pw = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
        ratio_add(&r, seq, y->v[i], y->e[i]);
        ratio_add(&r, pw, y->v[i], y->e[i]);
        int big = 0; /* the mutation leaves out the row's largest element */
        for (int j = 1; j < 1000; j++) big = fabs(row[j]) > fabs(row[big]) ? j : big;
        over += fabs((double)(seq - (float)row[big]) - y->v[i]) > y->e[i];
    }
    ratio_report("sum of 1000 vs f32", &r);
    CU_ASSERT_EQUAL(over, 20);
    rt_del(x), rt_del(y);
}

/* ---- norms: hand-computed values ------------------------------------------------------------------------------- */

/* layer_norm x [1,4] = [1,2,3,4], normalized_shape [4], eps 2.75: mean 2.5, var (2.25 + 0.25 + 0.25 + 2.25) / 4 =
 * 1.25 (biased), var + eps = 4, r = 0.5: x_hat = [-0.75, -0.25, 0.25, 0.75]. With weight [1,2,3,4] and bias
 * [0.5,0,0,0]: [-0.25, -0.5, 0.75, 3]. Weight only: [-0.75, -0.5, 0.75, 3]. Bias only (weight absent):
 * [-0.25, -0.25, 0.25, 0.75]. */
static void test_layer_norm_values(void)
{
    int64_t d[2] = {1, 4}, w4[1] = {4}, ns[1] = {4};
    par_rt *x = rt_of(2, d, (const double[]){1, 2, 3, 4});
    par_rt *w = rt_of(1, w4, (const double[]){1, 2, 3, 4}), *b = rt_of(1, w4, (const double[]){0.5, 0, 0, 0});
    par_rt *y = NULL;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(layer_norm(1, ns, 2.75, x, NULL, NULL, &y, &msg), PAR_OK);
    expect_values(y, (const double[]){-0.75, -0.25, 0.25, 0.75}, 1e-15);
    rt_del(y);
    CU_ASSERT_EQUAL_FATAL(layer_norm(1, ns, 2.75, x, w, b, &y, &msg), PAR_OK);
    expect_values(y, (const double[]){-0.25, -0.5, 0.75, 3}, 1e-15);
    rt_del(y);
    CU_ASSERT_EQUAL_FATAL(layer_norm(1, ns, 2.75, x, w, NULL, &y, &msg), PAR_OK);
    expect_values(y, (const double[]){-0.75, -0.5, 0.75, 3}, 1e-15);
    rt_del(y);
    CU_ASSERT_EQUAL_FATAL(layer_norm(1, ns, 2.75, x, NULL, b, &y, &msg), PAR_OK);
    expect_values(y, (const double[]){-0.25, -0.25, 0.25, 0.75}, 1e-15);
    rt_del(y), rt_del(x), rt_del(w), rt_del(b);
}

/* Inputs whose budgets exceed their spread (x = [1, 2, 3, 4] each within 10, with weight and bias): the variance
 * may be 0 for all the budgets know, so r = 1 / sqrt(var + eps) is unbounded only through eps; the budget must be a
 * number (finite or +inf), never NaN: a NaN budget would make the record an ERROR of the reference. */
static void test_layer_norm_huge_input_budgets(void)
{
    int64_t d[2] = {1, 4}, w4[1] = {4}, ns[1] = {4};
    par_rt *x = rt_of(2, d, (const double[]){1, 2, 3, 4});
    par_rt *w = rt_of(1, w4, (const double[]){1, 2, 3, 4}), *b = rt_of(1, w4, (const double[]){0.5, 0, 0, 0});
    for (int i = 0; i < 4; i++) x->e[i] = 10;
    par_rt *y = NULL;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(layer_norm(1, ns, 1e-5, x, w, b, &y, &msg), PAR_OK);
    for (int i = 0; i < 4; i++) CU_ASSERT(!isnan(y->e[i]) && y->e[i] > 1);
    rt_del(y), rt_del(x), rt_del(w), rt_del(b);
}

/* layer_norm over two trailing dims: x [2,2,2] = [[[0,2],[4,6]], [[1,1],[1,1]]], normalized_shape [2,2], eps 4:
 * first sample mean 3, var (9 + 1 + 1 + 9) / 4 = 5, r = 1/3: [-1, -1/3, 1/3, 1]; second sample constant: var 0,
 * x - mean = 0: [0, 0, 0, 0].
 * group_norm x [1,4,2] with the same numbers (channels [0,2], [4,6], [1,1], [1,1]), 2 groups, eps 4, weight
 * [1,1,2,2], bias [0,0,1,-1]: group 0 = channels 0-1 as above, group 1: x_hat 0, y = bias: [1,1,-1,-1]. */
static void test_layer2_group_norm_values(void)
{
    const double v[8] = {0, 2, 4, 6, 1, 1, 1, 1};
    int64_t d3[3] = {2, 2, 2}, ns[2] = {2, 2}, g3[3] = {1, 4, 2}, c4[1] = {4};
    par_rt *x = rt_of(3, d3, v), *y = NULL;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(layer_norm(2, ns, 4, x, NULL, NULL, &y, &msg), PAR_OK);
    expect_values(y, (const double[]){-1, -1.0 / 3, 1.0 / 3, 1, 0, 0, 0, 0}, 1e-15);
    rt_del(y), rt_del(x);
    x = rt_of(3, g3, v);
    par_rt *w = rt_of(1, c4, (const double[]){1, 1, 2, 2}), *b = rt_of(1, c4, (const double[]){0, 0, 1, -1});
    CU_ASSERT_EQUAL_FATAL(group_norm(2, 4, x, w, b, &y, &msg), PAR_OK);
    expect_values(y, (const double[]){-1, -1.0 / 3, 1.0 / 3, 1, 1, 1, -1, -1}, 1e-15);
    rt_del(y);
    /* one group over all 8 elements: mean 2, var (4+0+4+16+1+1+1+1)/8 = 3.5, eps 0.5: r = 1/2;
     * x_hat = [-1, 0, 1, 2, -0.5, -0.5, -0.5, -0.5] */
    CU_ASSERT_EQUAL_FATAL(group_norm(1, 0.5, x, NULL, NULL, &y, &msg), PAR_OK);
    expect_values(y, (const double[]){-1, 0, 1, 2, -0.5, -0.5, -0.5, -0.5}, 1e-15);
    rt_del(y), rt_del(x), rt_del(w), rt_del(b);
}

/* instance_norm x [1,2,3] = [[1,2,3],[10,12,14]], eps 1/3: channel 0 mean 2, var 2/3, var + eps = 1:
 * [-1, 0, 1]; channel 1 mean 12, var 8/3, var + eps = 3: [-2/sqrt 3, 0, 2/sqrt 3]. Weight [2, 1], bias [0, 1]:
 * [-2, 0, 2, 1 - 2/sqrt 3, 1, 1 + 2/sqrt 3]. */
static void test_instance_norm_values(void)
{
    int64_t d[3] = {1, 2, 3}, c2[1] = {2};
    par_rt *x = rt_of(3, d, (const double[]){1, 2, 3, 10, 12, 14});
    par_rt *w = rt_of(1, c2, (const double[]){2, 1}), *b = rt_of(1, c2, (const double[]){0, 1}), *y = NULL;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(instance_norm(1.0 / 3, x, w, b, &y, &msg), PAR_OK);
    const double k = 2 / sqrt(3.0);
    expect_values(y, (const double[]){-2, 0, 2, 1 - k, 1, 1 + k}, 1e-14);
    rt_del(y), rt_del(x), rt_del(w), rt_del(b);
}

/* ---- norms: budgets against float32 ------------------------------------------------------------------------------ */

typedef enum var_form { V_TWO_PASS, V_WELFORD, V_ONE_PASS } var_form;
typedef enum mutation { M_NONE, M_NO_EPS, M_UNBIASED, M_SKIP } mutation;

/* Normalize one group of n floats in float32: the variance by form f, the output directly ((x - m) r w + b) or
 * folded (x s + t), with an optional mutation. */
static void f32_norm(const float *x, int64_t n, const float *w, const float *b, float eps, var_form f, int folded,
                     mutation mu, float *y)
{
    float mean = 0, var = 0;
    int64_t cnt = mu == M_SKIP ? n - 1 : n; /* M_SKIP: the last element left out of the statistics */
    if (f == V_WELFORD) {
        float m2 = 0;
        for (int64_t j = 0; j < cnt; j++) {
            float d = x[j] - mean;
            mean += d / (float)(j + 1);
            m2 += d * (x[j] - mean);
        }
        var = m2 / (float)(mu == M_UNBIASED ? cnt - 1 : cnt);
    } else {
        float s1 = 0, s2 = 0;
        for (int64_t j = 0; j < cnt; j++) s1 += x[j], s2 += x[j] * x[j];
        mean = s1 / (float)cnt;
        if (f == V_TWO_PASS) {
            s2 = 0;
            for (int64_t j = 0; j < cnt; j++) s2 += (x[j] - mean) * (x[j] - mean);
            var = s2 / (float)(mu == M_UNBIASED ? cnt - 1 : cnt);
        } else {
            var = s2 / (float)cnt - mean * mean;
            if (mu == M_UNBIASED) var = var * (float)cnt / (float)(cnt - 1);
            if (var < 0) var = 0;
        }
    }
    float r = 1.0f / sqrtf(var + (mu == M_NO_EPS ? 0.0f : eps));
    for (int64_t j = 0; j < n; j++) {
        if (folded) {
            float s = r * w[j], t = b[j] - mean * s;
            y[j] = x[j] * s + t;
        } else {
            y[j] = (x[j] - mean) * r * w[j] + b[j];
        }
    }
}

/* layer_norm over rows of n elements with data uniform in [lo, hi): every f32 form within the budget (ratio
 * reported), and the largest error/budget of the mutation m (M_NONE: of the correct forms) returned. held_e > 0:
 * the inputs carry budgets held_e |x| and the f32 forms run on values moved within them. */
static double ln_check(int64_t rows, int64_t n, double lo, double hi, double eps, double held_e, mutation mu,
                       const char *what)
{
    int64_t d[2] = {rows, n}, wd[1] = {n}, ns[1] = {n};
    uint64_t seed = 1234 + (uint64_t)n;
    par_rt *x = rt_new(PAR_DTYPE_F32, 2, d), *w = rt_new(PAR_DTYPE_F32, 1, wd), *b = rt_new(PAR_DTYPE_F32, 1, wd);
    for (int64_t i = 0; i < x->numel; i++) {
        x->v[i] = rng_f(&seed, lo, hi);
        x->e[i] = held_e * fabs(x->v[i]);
    }
    for (int64_t j = 0; j < n; j++) w->v[j] = rng_f(&seed, 0.5, 1.5), b->v[j] = rng_f(&seed, -0.5, 0.5);
    par_rt *y = NULL;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(layer_norm(1, ns, eps, x, w, b, &y, &msg), PAR_OK);
    float *xf = malloc((size_t)n * sizeof(float)), *wf = malloc((size_t)n * sizeof(float));
    float *bf = malloc((size_t)n * sizeof(float)), *yf = malloc((size_t)n * sizeof(float));
    for (int64_t j = 0; j < n; j++) wf[j] = (float)w->v[j], bf[j] = (float)b->v[j];
    ratio r = {0};
    double worst = 0;
    for (int64_t i = 0; i < rows; i++) {
        for (int64_t j = 0; j < n; j++) xf[j] = held(&seed, x->v[i * n + j], x->e[i * n + j]);
        for (int f = 0; f < 3; f++)
            for (int folded = 0; folded < 2; folded++) {
                f32_norm(xf, n, wf, bf, (float)eps, (var_form)f, folded, mu, yf);
                for (int64_t j = 0; j < n; j++) {
                    double q = fabs(yf[j] - y->v[i * n + j]) / y->e[i * n + j];
                    if (q > worst) worst = q;
                    if (mu == M_NONE) ratio_add(&r, yf[j], y->v[i * n + j], y->e[i * n + j]);
                }
            }
    }
    if (mu == M_NONE) ratio_report(what, &r);
    free(xf), free(wf), free(bf), free(yf);
    rt_del(x), rt_del(w), rt_del(b), rt_del(y);
    return worst;
}

/* Sound: centred data (transformer widths 64, 96, 768 and an odd 33), offset data (mean 5: E[x^2] - mean^2 cancels
 * 75-fold), small spread (var 3e-7, far below eps), inputs held within budgets. */
static void test_norm_budget_sound(void)
{
    ln_check(8, 64, -1, 1, 1e-5, 0, M_NONE, "layer_norm n=64 unit");
    ln_check(8, 33, -1, 1, 1e-5, 0, M_NONE, "layer_norm n=33 unit");
    ln_check(4, 768, -1, 1, 1e-5, 0, M_NONE, "layer_norm n=768 unit");
    ln_check(8, 96, 4, 6, 1e-5, 0, M_NONE, "layer_norm n=96 offset");
    ln_check(4, 768, 4, 6, 1e-5, 0, M_NONE, "layer_norm n=768 offset");
    ln_check(8, 64, -1e-3, 1e-3, 1e-5, 0, M_NONE, "layer_norm n=64 small");
    ln_check(8, 64, -1, 1, 0.1, 0, M_NONE, "layer_norm n=64 eps 0.1");
    ln_check(8, 64, -1, 1, 1e-5, 1e-4, M_NONE, "layer_norm n=64 held 1e-4");
    ln_check(8, 64, 4, 6, 1e-5, 1e-3, M_NONE, "layer_norm n=64 offset held 1e-3");
}

/* Not vacuous: each mutation of a correct implementation fails by a clear margin. eps dropped matters where the
 * variance is comparable to eps (spread 1e-3: var 3.3e-7, eps 1e-5, r changes ~5.5-fold); the unbiased variance
 * (n - 1) changes r by 1/(2n) = 0.8% at n = 64; one element left out of the statistics moves mean and variance by
 * O(1/n). */
static void test_norm_budget_not_vacuous(void)
{
    double q;
    q = ln_check(4, 64, -1e-3, 1e-3, 1e-5, 0, M_NO_EPS, NULL);
    PAR_TEST_NOTE("\n  eps dropped: error/budget %.3g", q);
    CU_ASSERT(q > 10);
    q = ln_check(4, 64, -1, 1, 1e-5, 0, M_UNBIASED, NULL);
    PAR_TEST_NOTE("\n  unbiased variance: error/budget %.3g", q);
    CU_ASSERT(q > 10);
    q = ln_check(4, 64, -1, 1, 1e-5, 0, M_SKIP, NULL);
    PAR_TEST_NOTE("\n  one element skipped: error/budget %.3g", q);
    CU_ASSERT(q > 10);
    q = ln_check(4, 768, -1, 1, 1e-5, 0, M_UNBIASED, NULL);
    PAR_TEST_NOTE("\n  unbiased variance n=768: error/budget %.3g", q);
    CU_ASSERT(q > 2);
}

/* group_norm and instance_norm reach the same groups: with C = 6, 3 groups of 2 channels of 8 elements and the
 * weight per channel, the group_norm result equals a layer_norm over [2, 8] of each group with the weight
 * repeated per element; instance_norm equals group_norm with C groups. */
static void test_group_instance_consistent(void)
{
    int64_t d[3] = {2, 6, 8}, c6[1] = {6}, d2[2] = {6, 16}, ns[1] = {16};
    uint64_t seed = 77;
    par_rt *x = rt_rand(3, d, &seed), *w = rt_rand(1, c6, &seed), *b = rt_rand(1, c6, &seed);
    par_rt *yg = NULL, *yl = NULL, *yi = NULL, *yc = NULL;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(group_norm(3, 1e-5, x, w, b, &yg, &msg), PAR_OK);
    par_rt *xl = rt_of(2, d2, x->v);
    CU_ASSERT_EQUAL_FATAL(layer_norm(1, ns, 1e-5, xl, NULL, NULL, &yl, &msg), PAR_OK);
    int bad = 0;
    for (int64_t i = 0; i < yg->numel; i++) {
        int64_t ch = (i / 8) % 6;
        double want = yl->v[i] * w->v[ch] + b->v[ch];
        bad += !(fabs(yg->v[i] - want) <= 1e-12);
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL_FATAL(group_norm(6, 1e-5, x, w, b, &yc, &msg), PAR_OK);
    CU_ASSERT_EQUAL_FATAL(instance_norm(1e-5, x, w, b, &yi, &msg), PAR_OK);
    for (int64_t i = 0; i < yi->numel; i++) bad += yi->v[i] != yc->v[i] || yi->e[i] != yc->e[i];
    CU_ASSERT_EQUAL(bad, 0);
    rt_del(x), rt_del(w), rt_del(b), rt_del(xl), rt_del(yg), rt_del(yl), rt_del(yi), rt_del(yc);
}

/* ---- shape inference errors ----------------------------------------------------------------------------------- */
static void test_norm_shape_errors(void)
{
    int64_t d2[2] = {2, 4}, d3[3] = {2, 6, 5}, d31[3] = {2, 6, 1}, c5[1] = {5}, c6[1] = {6};
    int64_t ns5[1] = {5}, ns4[1] = {4}, ax[1] = {2};
    par_rt *x2 = rt_new(PAR_DTYPE_F32, 2, d2), *x3 = rt_new(PAR_DTYPE_F32, 3, d3), *x31 = rt_new(PAR_DTYPE_F32, 3, d31);
    par_rt *w5 = rt_new(PAR_DTYPE_F32, 1, c5), *w6 = rt_new(PAR_DTYPE_F32, 1, c6);
    par_msg msg;
    expect_error(layer_norm(1, ns5, 1e-5, x2, NULL, NULL, NULL, &msg), &msg, "normalized_shape");
    expect_error(layer_norm(0, ns5, 1e-5, x2, NULL, NULL, NULL, &msg), &msg, "normalized_shape");
    expect_error(layer_norm(1, ns4, 1e-5, x2, w5, NULL, NULL, &msg), &msg, "input 1 (weight)");
    expect_error(layer_norm(1, ns4, 0, x2, NULL, NULL, NULL, &msg), &msg, "eps");
    expect_error(group_norm(4, 1e-5, x3, NULL, NULL, NULL, &msg), &msg, "num_groups");
    expect_error(group_norm(0, 1e-5, x3, NULL, NULL, NULL, &msg), &msg, "num_groups");
    expect_error(group_norm(3, 1e-5, x3, w6, w5, NULL, &msg), &msg, "input 2 (bias)");
    expect_error(instance_norm(1e-5, x2, NULL, NULL, NULL, &msg), &msg, "rank");
    expect_error(instance_norm(1e-5, x31, NULL, NULL, NULL, &msg), &msg, "spatial");
    expect_error(reduce(0, 1, ax, 0, x2, NULL, &msg), &msg, "axes");
    CU_ASSERT_EQUAL(group_norm(3, 1e-5, x3, w6, w6, NULL, &msg), PAR_OK);
    rt_del(x2), rt_del(x3), rt_del(x31), rt_del(w5), rt_del(w6);
}

/* ---- rms_norm --------------------------------------------------------------------------------------------------- */

/* rms_norm x [2,2] = [[1, 7], [0, 0]], normalized_shape [2], eps 11: row 0 mean square (1 + 49) / 2 = 25, + eps = 36,
 * r = 1/6: [1/6, 7/6]; with weight [6, 3]: [1, 3.5]. Row 1 is all zeros: r = 1 / sqrt(11), y = [0, 0] exactly. The
 * budget of an exact 0 output is only the storage of nothing: 0 * r is exact, so it must be tiny (< 1e-30). */
static void test_rms_norm_values(void)
{
    int64_t d[2] = {2, 2}, w2[1] = {2}, ns[1] = {2};
    par_rt *x = rt_of(2, d, (const double[]){1, 7, 0, 0}), *w = rt_of(1, w2, (const double[]){6, 3});
    par_rt *y = NULL;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(rms_norm(1, ns, 11, x, NULL, &y, &msg), PAR_OK);
    expect_values(y, (const double[]){1.0 / 6, 7.0 / 6, 0, 0}, 1e-15);
    rt_del(y);
    CU_ASSERT_EQUAL_FATAL(rms_norm(1, ns, 11, x, w, &y, &msg), PAR_OK);
    expect_values(y, (const double[]){1, 3.5, 0, 0}, 1e-15);
    CU_ASSERT(y->e[0] > 0 && y->e[0] < 1e-5 && y->e[2] < 1e-30);
    rt_del(y);
    int64_t ns3[1] = {3};
    expect_error(rms_norm(1, ns3, 1e-6, x, NULL, NULL, &msg), &msg, "normalized_shape");
    expect_error(rms_norm(1, ns, 0, x, NULL, NULL, &msg), &msg, "eps");
    rt_del(x), rt_del(w);
}

/* rms_norm rows of n floats uniform in [lo, hi) with weights in [0.5, 1.5): the f32 forms (a plain sum or eight
 * partial sums of the squares; x r w or x (r w)) within the budget, inputs held within budgets held_e |x|; returns
 * the worst error/budget of the mutation: 1 the divisor n - 1, 2 eps dropped (0 the correct forms). */
static double rms_check(int64_t rows, int64_t n, double lo, double hi, double eps, double held_e, int mu,
                        const char *what)
{
    int64_t d[2] = {rows, n}, wd[1] = {n}, ns[1] = {n};
    uint64_t seed = 4321 + (uint64_t)n;
    par_rt *x = rt_new(PAR_DTYPE_F32, 2, d), *w = rt_new(PAR_DTYPE_F32, 1, wd), *y = NULL;
    for (int64_t i = 0; i < x->numel; i++) x->v[i] = rng_f(&seed, lo, hi), x->e[i] = held_e * fabs(x->v[i]);
    for (int64_t j = 0; j < n; j++) w->v[j] = (float)rng_f(&seed, 0.5, 1.5);
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(rms_norm(1, ns, eps, x, w, &y, &msg), PAR_OK);
    float *xf = malloc((size_t)n * sizeof(float));
    ratio r = {0};
    double worst = 0;
    for (int64_t i = 0; i < rows; i++) {
        for (int64_t j = 0; j < n; j++) xf[j] = held(&seed, x->v[i * n + j], x->e[i * n + j]);
        for (int form = 0; form < 4; form++) {
            float acc[8] = {0};
            for (int64_t j = 0; j < n; j++) acc[form & 1 ? j % 8 : 0] += xf[j] * xf[j];
            float ss = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
            float rr = 1.0f / sqrtf(ss / (float)(mu == 1 ? n - 1 : n) + (mu == 2 ? 0.0f : (float)eps));
            for (int64_t j = 0; j < n; j++) {
                float yf = form & 2 ? xf[j] * (rr * (float)w->v[j]) : xf[j] * rr * (float)w->v[j];
                double q = fabs(yf - y->v[i * n + j]) / y->e[i * n + j];
                if (q > worst) worst = q;
                if (!mu) ratio_add(&r, yf, y->v[i * n + j], y->e[i * n + j]);
            }
        }
    }
    if (!mu) ratio_report(what, &r);
    free(xf);
    rt_del(x), rt_del(w), rt_del(y);
    return worst;
}

/* Sound on unit, offset and small data (mean square 3.3e-7 against eps 1e-5), widths 64, 33, 768, held inputs; not
 * vacuous: the divisor n - 1 changes r by 1/(2n) (0.8% at n = 64), eps dropped where it dominates 5.5-fold. */
static void test_rms_norm_budget(void)
{
    CU_ASSERT(rms_check(8, 64, -1, 1, 1e-5, 0, 0, "rms_norm n=64 unit") <= 1);
    CU_ASSERT(rms_check(8, 33, -1, 1, 1e-5, 0, 0, "rms_norm n=33 unit") <= 1);
    CU_ASSERT(rms_check(4, 768, 4, 6, 1e-5, 0, 0, "rms_norm n=768 offset") <= 1);
    CU_ASSERT(rms_check(8, 64, -1e-3, 1e-3, 1e-5, 0, 0, "rms_norm n=64 small") <= 1);
    CU_ASSERT(rms_check(8, 64, -1, 1, 1e-5, 1e-4, 0, "rms_norm n=64 held 1e-4") <= 1);
    double q = rms_check(4, 64, -1, 1, 1e-5, 0, 1, NULL);
    PAR_TEST_NOTE("\n  rms_norm divisor n - 1: error/budget %.3g", q);
    CU_ASSERT(q > 10);
    q = rms_check(4, 64, -1e-3, 1e-3, 1e-5, 0, 2, NULL);
    PAR_TEST_NOTE("\n  rms_norm eps dropped: error/budget %.3g", q);
    CU_ASSERT(q > 10);
}

static const CU_TestInfo tests[] = {
    {"sqrt and rsqrt values and specials", test_sqrt_values},
    {"sqrt and rsqrt propagation", test_sqrt_propagation},
    {"sqrt and rsqrt budgets vs f32", test_sqrt_vs_f32},
    {"sum and amax values", test_sum_amax_values},
    {"amax NaN and candidates", test_amax_nan_and_candidates},
    {"amin values and candidates", test_amin_values_and_candidates},
    {"sum budget vs f32", test_sum_vs_f32},
    {"sum budget propagation", test_sum_propagation},
    {"layer_norm values", test_layer_norm_values},
    {"layer_norm with input budgets beyond the spread", test_layer_norm_huge_input_budgets},
    {"layer_norm 2 dims, group_norm values", test_layer2_group_norm_values},
    {"instance_norm values", test_instance_norm_values},
    {"norm budget sound vs f32 forms", test_norm_budget_sound},
    {"norm budget not vacuous", test_norm_budget_not_vacuous},
    {"group and instance norm consistent", test_group_instance_consistent},
    {"shape inference errors", test_norm_shape_errors},
    {"rms_norm values and errors", test_rms_norm_values},
    {"rms_norm budget sound vs f32 forms, not vacuous", test_rms_norm_budget},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("ref_norm", tests)
