/*
 * test_oracle_hazard.c - soundness of the oracle on hazard data (docs/oracle.md, "NaN and Inf policy" and "Flushed
 * subnormals"): for each hazard and op family, results that a correct f32 backend may give (computed here in f32 by
 * plain loops, in more than one order where the order matters) pass, and deliberately wrong ones fail. The reference
 * and the oracle are run as the runner runs them: par_ref_run, then par_oracle_compare on the graph's output.
 */
#include <CUnit/CUnit.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/graph.h"
#include "oracle/oracle.h"
#include "reference/reference.h"
#include "tmain.h"

/* A graph of one node over f32 inputs a (and b) of the given shapes, attributes at, output y. */
static par_graph *one_node(const char *op, int n_in, const int64_t dims[][4], const int32_t *ranks, int32_t na,
                           const par_attr *at)
{
    par_msg m = {{0}};
    par_graph *g = par_graph_create(op);
    static const char *const names[2] = {"a", "b"};
    int32_t in[2];
    for (int i = 0; i < n_in; i++) in[i] = par_graph_add_input(g, names[i], PAR_DTYPE_F32, ranks[i], dims[i], &m);
    par_out_spec os = {.name = "y"};
    if (par_graph_add_node(g, op, "n0", n_in, in, na, at, &os, &m) < 0 ||
        par_graph_mark_output(g, par_graph_find_value(g, "y"), &m) != PAR_OK || par_graph_finalize(g, &m) != PAR_OK) {
        fprintf(stderr, "%s graph: %s\n", op, m.text);
        par_graph_destroy(g);
        return NULL;
    }
    return g;
}

/* Judge got against the reference of g on inputs: the oracle's count of bad elements (-1 when the reference
 * failed); *m receives the metrics. */
static int64_t judge(const par_graph *g, const void *const *inputs, const float *got, par_metrics *m)
{
    par_msg msg = {{0}};
    par_prec p = par_prec_for(PAR_ARITH_F32);
    const par_graph_desc *d = par_graph_desc_of(g);
    par_ref_result *r = NULL;
    if (par_ref_run(d, &p, inputs, &r, &msg) != PAR_OK) {
        fprintf(stderr, "reference: %s\n", msg.text);
        return -1;
    }
    const par_rt *y = &r->values[d->outputs[0]];
    for (int64_t i = 0; i < y->numel; i++) CU_ASSERT(y->e[i] >= 0); /* never a NaN budget */
    int64_t bad = par_oracle_compare(y, got, m);
    par_ref_result_destroy(r);
    return bad;
}

static const int64_t D1[2][4] = {{4}, {4}};
static const int32_t R1[2] = {1, 1};

/* Signed zeros: -0 where the reference says +0 (and the other way round) is no error. */
static void test_signed_zero(void)
{
    par_graph *g = one_node("add", 2, D1, R1, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    const float a[4] = {-0.0f, 0.0f, -0.0f, 1.0f}, b[4] = {0.0f, -0.0f, -0.0f, -1.0f};
    const void *in[2] = {a, b};
    const float ieee[4] = {a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]}; /* +0 +0 -0 +0 */
    const float flipped[4] = {-0.0f, -0.0f, 0.0f, -0.0f};
    const float wrong[4] = {0.0f, 0.0f, 0.0f, 0x1p-149f};
    par_metrics m;
    CU_ASSERT_EQUAL(judge(g, in, ieee, &m), 0);
    CU_ASSERT_EQUAL(judge(g, in, flipped, &m), 0);
    CU_ASSERT(judge(g, in, wrong, &m) > 0); /* even the smallest subnormal is more than an exact 0 allows */
    par_graph_destroy(g);
    /* a quotient by a zero takes the zero's sign, which is not pinned: either infinity passes; 0 / 0 is NaN */
    g = one_node("div", 2, D1, R1, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    const float n[4] = {1, 1, 0, 2}, z[4] = {0.0f, -0.0f, 0.0f, 4};
    const void *dz[2] = {n, z};
    const float y1[4] = {INFINITY, -INFINITY, NAN, 0.5f}, y2[4] = {-INFINITY, INFINITY, NAN, 0.5f};
    const float y3[4] = {INFINITY, INFINITY, 0, 0.5f};
    CU_ASSERT_EQUAL(judge(g, dz, y1, &m), 0);
    CU_ASSERT_EQUAL(judge(g, dz, y2, &m), 0);
    CU_ASSERT_EQUAL(m.n_unbounded, 2);
    CU_ASSERT_EQUAL(judge(g, dz, y3, &m), 1);
    par_graph_destroy(g);
}

/* An "anything" element (hardswish of 1e38: x * 6 may overflow in f32, so the reference's value is NaN with an
 * infinite budget) passes whatever the backend gives, but the metrics still show what it gave, measured against the
 * ideal value (the reference in exact arithmetic), and the record can say where the unjudged element comes from. */
static void test_anything_metrics(void)
{
    par_graph *g = one_node("hardswish", 1, D1, R1, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    const float x[4] = {1, 2, 1e38f, 3};
    const void *in[1] = {x};
    const float got[4] = {2.0f / 3, 5.0f / 3, 5e37f, 3};
    par_msg msg = {{0}};
    const par_graph_desc *d = par_graph_desc_of(g);
    par_prec p = par_prec_for(PAR_ARITH_F32), q = par_prec_ideal();
    par_ref_result *r = NULL, *ideal = NULL;
    CU_ASSERT_EQUAL_FATAL(par_ref_run(d, &p, in, &r, &msg), PAR_OK);
    CU_ASSERT_EQUAL_FATAL(par_ref_run(d, &q, in, &ideal, &msg), PAR_OK);
    const par_rt *y = &r->values[d->outputs[0]], *yi = &ideal->values[d->outputs[0]];
    CU_ASSERT(isnan(y->v[2]) && isinf(y->e[2]));
    CU_ASSERT_DOUBLE_EQUAL(yi->v[2], (double)1e38f, 1e25); /* exact arithmetic: x (x + 3 clamped) / 6 = x */
    par_metrics m;
    CU_ASSERT_EQUAL(par_oracle_compare(y, got, &m), 0);
    CU_ASSERT_EQUAL(m.n_unbounded, 1);
    CU_ASSERT(m.max_abs < 1e-6); /* without the ideal values, the unjudged element is not in the metrics */
    CU_ASSERT_EQUAL(par_oracle_compare_ideal(y, yi, got, &m), 0);
    CU_ASSERT_EQUAL(m.n_unbounded, 1);
    CU_ASSERT_DOUBLE_EQUAL(m.max_abs, (double)1e38f - (double)5e37f, 1e25);
    CU_ASSERT(m.nmse > 0.2 && m.nmse < 0.3); /* (5e37)^2 / (1e38^2 + ...) = 0.25 */
    /* a backend that writes NaN (or Inf) there still passes, but its metrics say so: nmse, max_abs infinite, SQNR
     * -inf dB, where leaving the element out read nmse 0 */
    const float nan_got[4] = {2.0f / 3, 5.0f / 3, NAN, 3}, inf_got[4] = {2.0f / 3, 5.0f / 3, -INFINITY, 3};
    const float *bad_got[2] = {nan_got, inf_got};
    for (int k = 0; k < 2; k++) {
        CU_ASSERT_EQUAL(par_oracle_compare_ideal(y, yi, bad_got[k], &m), 0);
        CU_ASSERT_EQUAL(m.n_unbounded, 1);
        CU_ASSERT(isinf(m.max_abs) && isinf(m.nmse) && m.nmse > 0);
        CU_ASSERT(isinf(m.sqnr_db) && m.sqnr_db < 0);
    }
    char why[256];
    CU_ASSERT_EQUAL(par_unjudged_origin(d, r, why, sizeof why), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "node 'n0' (hardswish): 1 of 4 elements anything"));
    CU_ASSERT_EQUAL(par_unjudged_origin(d, ideal, why, sizeof why), 0);
    CU_ASSERT_STRING_EQUAL(why, "");
    par_ref_result_destroy(r);
    par_ref_result_destroy(ideal);
    par_graph_destroy(g);
}

/* rms_norm of values 1e-3 with eps 1e-5 in f16: the squares (1e-6) and eps lie below f16's smallest normal
 * (6.1e-5), so a backend that flushes subnormals may compute 1 / sqrt(0): every element is unbounded, and the record
 * says that eps may read as 0; without flushing eps gives r a floor and every element is judged. */
static void test_unbounded_eps_flushed(void)
{
    par_attr at[2] = {{.name = "normalized_shape", .type = PAR_ATTR_INTS, .count = 1, .ints = (const int64_t[]){4}},
                      {.name = "eps", .type = PAR_ATTR_FLOAT, .f = 1e-5}};
    par_graph *g = one_node("rms_norm", 1, D1, R1, 2, at);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    const float x[4] = {1e-3f, -1e-3f, 1e-3f, 1e-3f};
    const void *in[1] = {x};
    par_msg msg = {{0}};
    const par_graph_desc *d = par_graph_desc_of(g);
    par_prec fl = par_prec_for(PAR_ARITH_F16), gr = par_prec_for(PAR_ARITH_F16);
    par_prec_set_flush(&fl, 1);
    par_ref_result *r = NULL, *rg = NULL;
    CU_ASSERT_EQUAL_FATAL(par_ref_run(d, &fl, in, &r, &msg), PAR_OK);
    CU_ASSERT_EQUAL_FATAL(par_ref_run(d, &gr, in, &rg, &msg), PAR_OK);
    const par_rt *y = &r->values[d->outputs[0]], *yg = &rg->values[d->outputs[0]];
    for (int i = 0; i < 4; i++) {
        CU_ASSERT(isfinite(y->v[i]) && isinf(y->e[i]));
        CU_ASSERT(isfinite(yg->e[i]));
    }
    char why[1024];
    CU_ASSERT_EQUAL(par_unjudged_origin(d, r, why, sizeof why), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "4 of 4 elements unbounded: eps lies below the arithmetic's smallest normal, so "
                                       "a backend that flushes subnormals may read it as 0"));
    CU_ASSERT_EQUAL(par_unjudged_origin(d, rg, why, sizeof why), 0);
    par_ref_result_destroy(r);
    par_ref_result_destroy(rg);
    par_graph_destroy(g);
}

/* NaN and Inf through elementwise ops, clamps and max pooling (PyTorch's rules, docs/ops.md). */
static void test_nan_inf_elementwise(void)
{
    par_graph *g = one_node("add", 2, D1, R1, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    const float a[4] = {INFINITY, INFINITY, NAN, 1}, b[4] = {1, -INFINITY, 1, -INFINITY};
    const void *in[2] = {a, b};
    par_metrics m;
    const float ok[4] = {INFINITY, NAN, -NAN, -INFINITY}; /* any NaN payload or sign */
    CU_ASSERT_EQUAL(judge(g, in, ok, &m), 0);
    const float w1[4] = {FLT_MAX, NAN, NAN, -INFINITY}, w2[4] = {INFINITY, INFINITY, NAN, -INFINITY};
    const float w3[4] = {INFINITY, NAN, 0, -INFINITY}, w4[4] = {-INFINITY, NAN, NAN, -INFINITY};
    CU_ASSERT_EQUAL(judge(g, in, w1, &m), 1);
    CU_ASSERT_EQUAL(judge(g, in, w2, &m), 1);
    CU_ASSERT_EQUAL(judge(g, in, w3, &m), 1);
    CU_ASSERT_EQUAL(judge(g, in, w4, &m), 1);
    par_graph_destroy(g);

    /* relu, clamp and sigmoid propagate NaN; infinities saturate */
    static const char *const ops[3] = {"relu", "clamp", "sigmoid"};
    par_attr cl[2] = {par_a_float("min", -1), par_a_float("max", 1)};
    for (int k = 0; k < 3; k++) {
        g = one_node(ops[k], 1, D1, R1, k == 1 ? 2 : 0, cl);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g);
        const float x[4] = {NAN, INFINITY, -INFINITY, 0.5f};
        const void *xi[1] = {x};
        float y[4];
        y[0] = NAN;
        y[1] = k == 0 ? INFINITY : 1;
        y[2] = k == 2 ? 0 : k == 1 ? -1 : 0;
        y[3] = k == 2 ? (float)(1 / (1 + exp(-0.5))) : 0.5f;
        CU_ASSERT_EQUAL(judge(g, xi, y, &m), 0);
        float w[4];
        memcpy(w, y, sizeof w);
        w[0] = k == 1 ? -1 : 0; /* a NaN turned into a bound: what maxps/minps do with the operands swapped */
        CU_ASSERT_EQUAL(judge(g, xi, w, &m), 1);
        par_graph_destroy(g);
    }

    /* max_pool2d: a NaN in the window wins */
    const int64_t dp[1][4] = {{1, 1, 2, 4}};
    const int32_t rp[1] = {4};
    const int64_t k2[2] = {2, 2};
    par_attr pa[2] = {par_a_ints("kernel", 2, k2), par_a_ints("stride", 2, k2)};
    g = one_node("max_pool2d", 1, dp, rp, 2, pa);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    const float x[8] = {1, NAN, 5, -INFINITY, 2, 3, -INFINITY, -INFINITY};
    const void *xi[1] = {x};
    const float y_ok[2] = {NAN, 5}, y_bad[2] = {3, 5};
    CU_ASSERT_EQUAL(judge(g, xi, y_ok, &m), 0);
    CU_ASSERT_EQUAL(judge(g, xi, y_bad, &m), 1);
    par_graph_destroy(g);
}

/* Overflow of the stored result: 3e38 + 3e38 is +Inf in every correct f32 backend; FLT_MAX + 2^103 lies on the
 * threshold of rounding to Inf, where either passes; a NaN never. */
static void test_result_overflow(void)
{
    par_graph *g = one_node("add", 2, D1, R1, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    const float a[4] = {3e38f, FLT_MAX, -3e38f, 1e38f}, b[4] = {3e38f, 0x1p103f, -3e38f, 1e38f};
    const void *in[2] = {a, b};
    float ieee[4];
    for (int i = 0; i < 4; i++) ieee[i] = a[i] + b[i];
    CU_ASSERT(isinf(ieee[0]) && isinf(ieee[1]) && isinf(ieee[2]) && isfinite(ieee[3]));
    par_metrics m;
    CU_ASSERT_EQUAL(judge(g, in, ieee, &m), 0);
    const float other[4] = {INFINITY, FLT_MAX, -INFINITY, 2e38f}; /* FLT_MAX at the threshold: another order */
    CU_ASSERT_EQUAL(judge(g, in, other, &m), 0);
    CU_ASSERT_EQUAL(m.n_unbounded, 1);
    const float w[4] = {FLT_MAX, NAN, -FLT_MAX, INFINITY};
    CU_ASSERT_EQUAL(judge(g, in, w, &m), 4);
    par_graph_destroy(g);
}

/* An intermediate that may overflow while the ideal is finite: the sum of [3e38, 3e38, -3e38, -3e38] is 0, but in f32
 * left to right it is +Inf (Inf - 3e38 stays Inf), pairwise (3e38 + 3e38) + (-3e38 + -3e38) = Inf - Inf = NaN, and
 * the order 3e38 - 3e38 + 3e38 - 3e38 gives 0: any value passes there, counted unbounded. The row of ordinary values
 * beside it keeps its budget. */
static void test_intermediate_overflow(void)
{
    const int64_t d[1][4] = {{2, 4}};
    const int32_t r[1] = {2};
    const int64_t ax[1] = {1};
    par_attr at[1] = {par_a_ints("axes", 1, ax)};
    par_graph *g = one_node("sum", 1, d, r, 1, at);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    const float x[8] = {3e38f, 3e38f, -3e38f, -3e38f, 1, 2, 3, 4};
    const void *in[1] = {x};
    par_metrics m;
    float seq = 0;
    for (int i = 0; i < 4; i++) seq += x[i];
    const float pair = (x[0] + x[1]) + (x[2] + x[3]);
    CU_ASSERT(seq == INFINITY && isnan(pair));
    const float y1[2] = {seq, 10}, y2[2] = {pair, 10};
    CU_ASSERT_EQUAL(judge(g, in, y1, &m), 0);
    CU_ASSERT_EQUAL(m.n_unbounded, 1);
    CU_ASSERT_EQUAL(judge(g, in, y2, &m), 0);
    const float w[2] = {NAN, NAN}, w2[2] = {0, 10.5f};
    CU_ASSERT_EQUAL(judge(g, in, w, &m), 1);
    CU_ASSERT_EQUAL(judge(g, in, w2, &m), 1);
    par_graph_destroy(g);

    /* linear: an Inf input gives the same Inf in any order when no finite partial sum can overflow; Inf - Inf is
     * NaN in every order */
    const int64_t dl[2][4] = {{2, 2}, {2, 2}};
    const int32_t rl[2] = {2, 2};
    g = one_node("linear", 2, dl, rl, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    const float xl[4] = {INFINITY, 1, INFINITY, INFINITY}, wl[4] = {1, 1, 1, -1};
    const void *il[2] = {xl, wl};
    const float yl[4] = {INFINITY, INFINITY, INFINITY, NAN};
    CU_ASSERT_EQUAL(judge(g, il, yl, &m), 0);
    const float wl1[4] = {NAN, INFINITY, INFINITY, NAN}, wl2[4] = {INFINITY, INFINITY, INFINITY, INFINITY};
    CU_ASSERT_EQUAL(judge(g, il, wl1, &m), 1);
    CU_ASSERT_EQUAL(judge(g, il, wl2, &m), 1);
    par_graph_destroy(g);
}

/* Softmax of huge logits: the reference is exact where f32 would overflow without the max subtraction;
 * log_softmax's -6e38 is -Inf once stored. A row holding NaN is NaN everywhere, its -inf included. */
static void test_softmax_huge_and_nan(void)
{
    const int64_t d[1][4] = {{2, 3}};
    const int32_t r[1] = {2};
    par_graph *g = one_node("softmax", 1, d, r, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    const float x[6] = {3e38f, -3e38f, 0, NAN, -INFINITY, 1};
    const void *in[1] = {x};
    par_metrics m;
    const float ok[6] = {1, 0, 0, NAN, NAN, NAN};
    CU_ASSERT_EQUAL(judge(g, in, ok, &m), 0);
    const float bad[6] = {NAN, 0, 0, NAN, 0, NAN}; /* exp(3e38) overflowed; the masked element kept 0 */
    CU_ASSERT_EQUAL(judge(g, in, bad, &m), 2);
    par_graph_destroy(g);
    g = one_node("log_softmax", 1, d, r, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    const float lok[6] = {0, -INFINITY, -3e38f, NAN, NAN, NAN};
    CU_ASSERT_EQUAL(judge(g, in, lok, &m), 0);
    const float lbad[6] = {0, -FLT_MAX, -3e38f, NAN, -INFINITY, NAN};
    CU_ASSERT_EQUAL(judge(g, in, lbad, &m), 2);
    par_graph_destroy(g);
}

/* Gradual underflow: a product rounded to the subnormal grid passes (its error is up to half the smallest
 * subnormal, far beyond u |v|); a flushed result fails. */
static void test_subnormal(void)
{
    par_graph *g = one_node("mul", 2, D1, R1, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    const float a[4] = {1e-40f, -3e-42f, 0x1p-149f, 1e-20f}, b[4] = {0.7f, 0.3f, 0.5f, 1e-20f};
    const void *in[2] = {a, b};
    float ieee[4];
    for (int i = 0; i < 4; i++) ieee[i] = a[i] * b[i];
    par_metrics m;
    CU_ASSERT_EQUAL(judge(g, in, ieee, &m), 0);
    const float flushed[4] = {0, 0, 0, 0};
    CU_ASSERT_EQUAL(judge(g, in, flushed, &m), 3); /* 7e-41, -9e-43 and 1e-40 flushed; 2^-150 rounds to 0 anyway */
    par_graph_destroy(g);
}

/* All-equal data and cancelling sums: the rounding errors of a sequential f32 sum of equal terms are correlated
 * (every addition rounds the same way), and cancelling pairs leave the small terms; both stay within the worst-case
 * own budget, in every order tried; an answer one budget off fails. */
static void test_all_equal_and_cancel(void)
{
    enum { K = 4096 };
    const int64_t d[1][4] = {{2, K}};
    const int32_t r[1] = {2};
    const int64_t ax[1] = {1};
    par_attr at[1] = {par_a_ints("axes", 1, ax)};
    static const char *const ops[2] = {"sum", "mean"};
    float *x = malloc(sizeof(float) * 2 * K);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    for (int i = 0; i < K; i++) x[i] = 0.1f;
    for (int i = 0; i < K; i += 4) x[K + i] = 1e6f, x[K + i + 1] = 0.3f, x[K + i + 2] = -1e6f, x[K + i + 3] = 0.7f;
    const void *in[1] = {x};
    for (int k = 0; k < 2; k++) {
        par_graph *g = one_node(ops[k], 1, d, r, 1, at);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g);
        float fwd[2] = {0, 0}, bwd[2] = {0, 0};
        for (int row = 0; row < 2; row++)
            for (int i = 0; i < K; i++) fwd[row] += x[row * K + i], bwd[row] += x[row * K + K - 1 - i];
        if (k == 1)
            for (int row = 0; row < 2; row++) fwd[row] /= K, bwd[row] /= K;
        par_metrics m;
        CU_ASSERT_EQUAL(judge(g, in, fwd, &m), 0);
        PAR_TEST_NOTE("%s all-equal / cancelling, sequential f32: max error/budget %.3g\n", ops[k], m.max_ratio);
        CU_ASSERT(m.max_abs > 0); /* the sequential sums are inexact: the check can fail */
        CU_ASSERT_EQUAL(judge(g, in, bwd, &m), 0);
        /* one step beyond the worst case: 2^-9 relative on the all-equal row (its budget is gamma_K sum |x|,
         * 2^-12 relative), and 1e7 on the cancelling row (its budget is gamma_K 2^10 (2e6 + 1), about 5e5) */
        const double ideal[2] = {K * (double)0.1f, K / 4 * (0.3 + 0.7)};
        float off[2] = {(float)(ideal[0] * (1 + 0x1p-9)), (float)(ideal[1] + 1e7)};
        if (k) off[0] /= K, off[1] /= K;
        CU_ASSERT_EQUAL(judge(g, in, off, &m), 2);
        par_graph_destroy(g);
    }
    free(x);
}

static const CU_TestInfo tests[] = {
    {"anything_metrics", test_anything_metrics},
    {"unbounded: eps that a flushing backend may read as 0", test_unbounded_eps_flushed},
    {"signed zero", test_signed_zero},
    {"NaN and Inf: elementwise, clamps, max pooling", test_nan_inf_elementwise},
    {"overflow of the stored result", test_result_overflow},
    {"overflow of an intermediate", test_intermediate_overflow},
    {"softmax: huge logits, NaN rows", test_softmax_huge_and_nan},
    {"gradual underflow", test_subnormal},
    {"all equal and cancelling sums", test_all_equal_and_cancel},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("oracle_hazard", tests)
