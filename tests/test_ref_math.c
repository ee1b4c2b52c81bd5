/*
 * test_ref_math.c - tests of the reference unary math ops (reference/math.c): abs, neg, floor, ceil, round, sign,
 * exp, log, reciprocal, softplus, softsign, erf, sin, cos; and of the binary minimum, maximum and pow
 * (reference/elementwise.c). Hand-computed values and special values (derived in the
 * comments, never from the code under test), budgets derived by hand at chosen points, the budgets of the step
 * functions where a held input straddles a step, and the budgets' soundness against the float32 C library functions
 * on held inputs (and tightness: a 1% error on elements above 0.1 in magnitude exceeds them).
 *
 * Kernels are called directly on a one-node graph view (tests/ref_helpers.h), so budgets of inputs can be set at will.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/graph.h"
#include "reference/reference.h"
#include "ref_helpers.h"
#include "tmain.h"

static par_status unop(ref_fn ref, const char *op, par_rt *x, par_rt **y, par_msg *msg)
{
    par_rt *in[1] = {x};
    return run_op(par_infer_same, ref, op, 1, in, NULL, 0, y, msg);
}

/* Run ref on xv (n values, budget e each) and return the output (the caller frees it). */
static par_rt *run_on(ref_fn ref, const char *op, int n, const double *xv, double e)
{
    int64_t d[1] = {n};
    par_rt *x = rt_of(1, d, xv), *y = NULL;
    for (int i = 0; i < n; i++) x->e[i] = e;
    par_msg msg;
    CU_ASSERT_EQUAL(unop(ref, op, x, &y, &msg), PAR_OK);
    rt_del(x);
    return y;
}

/* Values equal (== compares, so infinities match; NaN wanted matches NaN) and, for exact inputs, budgets 0. */
static void expect_same(const par_rt *y, const double *want, int n, int zero_budget)
{
    CU_ASSERT_FATAL(y != NULL);
    for (int i = 0; i < n; i++) {
        int ok = isnan(want[i]) ? isnan(y->v[i]) : y->v[i] == want[i];
        if (!ok) fprintf(stderr, "\n  element %d: got %.17g, want %.17g", i, y->v[i], want[i]);
        CU_ASSERT(ok);
        if (zero_budget && !isnan(want[i])) CU_ASSERT_EQUAL(y->e[i], 0);
    }
}

/* ---- exact ops ------------------------------------------------------------------------------------------------ */

/* x = 2.5, -2.5, 1.5, -1.5, 0.5, -0.5, 2.7, -2.7, 0, -0, inf, -inf:
 *   floor: the integer at or below:  2, -3, 1, -2, 0, -1, 2, -3, 0, -0, inf, -inf
 *   ceil:  the integer at or above:  3, -2, 2, -1, 1, -0, 3, -2, 0, -0, inf, -inf
 *   round: nearest, ties to the even neighbour: 2.5 -> 2, 1.5 -> 2, 0.5 -> 0 (not half away from zero, which gives
 *          3, 2, 1): 2, -2, 2, -2, 0, -0, 3, -3, 0, -0, inf, -inf
 *   sign:  1, -1, 1, -1, 1, -1, 1, -1, 0, -0, 1, -1;  abs and neg: |x| and -x.
 * Every budget is 0: the inputs are exact. NaN propagates (budget left to the interpreter's NaN rule). */
static void test_exact_values(void)
{
    enum { N = 13 };
    const double I = INFINITY;
    double x[N] = {2.5, -2.5, 1.5, -1.5, 0.5, -0.5, 2.7, -2.7, 0, -0.0, I, -I, NAN};
    double fl[N] = {2, -3, 1, -2, 0, -1, 2, -3, 0, -0.0, I, -I, NAN};
    double ce[N] = {3, -2, 2, -1, 1, -0.0, 3, -2, 0, -0.0, I, -I, NAN};
    double ro[N] = {2, -2, 2, -2, 0, -0.0, 3, -3, 0, -0.0, I, -I, NAN};
    double sg[N] = {1, -1, 1, -1, 1, -1, 1, -1, 0, -0.0, 1, -1, NAN};
    double ab[N] = {2.5, 2.5, 1.5, 1.5, 0.5, 0.5, 2.7, 2.7, 0, 0, I, I, NAN};
    double ng[N] = {-2.5, 2.5, -1.5, 1.5, -0.5, 0.5, -2.7, 2.7, -0.0, 0, -I, I, NAN};
    struct {
        ref_fn ref;
        const char *op;
        const double *want;
    } t[] = {{par_ref_floor, "floor", fl}, {par_ref_ceil, "ceil", ce}, {par_ref_round, "round", ro},
             {par_ref_sign, "sign", sg},   {par_ref_abs, "abs", ab},    {par_ref_neg, "neg", ng}};
    for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
        par_rt *y = run_on(t[k].ref, t[k].op, N, x, 0);
        expect_same(y, t[k].want, N, 1);
        CU_ASSERT(signbit(y->v[9]) == signbit(t[k].want[9])); /* -0 where the rule gives it */
        rt_del(y);
    }
}

/* A held input anywhere in [x - e, x + e]: the step functions' results lie between f(x - e) and f(x + e), so the
 * budget is the larger distance from y to those two:
 *   floor(3), e = 1e-6:   floor(2.999999) = 2, floor(3.000001) = 3, y = 3: budget 1
 *   floor(2.5), e = 0.1:  2 at both ends: 0 (no step inside)
 *   ceil(-1), e = 1e-3:   ceil(-1.001) = -1, ceil(-0.999) = -0, y = -1: budget 1
 *   round(2.5), e = 0.1:  rint(2.4) = 2, rint(2.6) = 3, y = 2 (the tie to even): budget 1
 *   round(0.75), e = 0.5: rint(0.25) = 0, rint(1.25) = 1, y = 1: budget 1
 *   sign(0), e = 1e-3:    -1 and 1 around y = 0: budget 1
 *   sign(1e-3), e = 2e-3: sign(-1e-3) = -1, y = 1: budget 2
 *   abs(-1), neg(-1), e = 0.25: the input's budget, 0.25 (1-Lipschitz, exact). */
static void test_step_straddle(void)
{
    struct {
        ref_fn ref;
        const char *op;
        double x, e, y, budget;
    } t[] = {
        {par_ref_floor, "floor", 3, 1e-6, 3, 1},   {par_ref_floor, "floor", 2.5, 0.1, 2, 0},
        {par_ref_ceil, "ceil", -1, 1e-3, -1, 1},   {par_ref_round, "round", 2.5, 0.1, 2, 1},
        {par_ref_round, "round", 0.75, 0.5, 1, 1}, {par_ref_sign, "sign", 0, 1e-3, 0, 1},
        {par_ref_sign, "sign", 1e-3, 2e-3, 1, 2},  {par_ref_abs, "abs", -1, 0.25, 1, 0.25},
        {par_ref_neg, "neg", -1, 0.25, 1, 0.25},
    };
    for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
        par_rt *y = run_on(t[k].ref, t[k].op, 1, &t[k].x, t[k].e);
        CU_ASSERT_FATAL(y != NULL);
        CU_ASSERT_EQUAL(y->v[0], t[k].y);
        if (y->e[0] != t[k].budget)
            fprintf(stderr, "\n  %s(%g) e=%g: budget %.17g, want %g", t[k].op, t[k].x, t[k].e, y->e[0], t[k].budget);
        CU_ASSERT_EQUAL(y->e[0], t[k].budget);
        rt_del(y);
    }
}

/* ---- transcendental ops ----------------------------------------------------------------------------------------- */

/* Hand values (ln 2 = 0.69314718055994531, ln 3 = 1.0986122886681098, e = 2.7182818284590452,
 * erf(1) = 0.84270079294971487 from tables):
 *   exp:  exp(0) = 1, exp(1) = e, exp(-ln 2) = 1/2, exp(ln 3) = 3
 *   log:  log(1) = 0, log(e) = 1, log(1/2) = -ln 2, log(8) = 3 ln 2
 *   reciprocal: 1/4 = 0.25, 1/-0.5 = -2, 1/3
 *   softplus: log(1 + e^x): x = 0: ln 2; x = ln 3: ln 4 = 2 ln 2; x = -ln 3: ln(4/3) = 2 ln 2 - ln 3
 *   softsign: x / (1 + |x|): 1 -> 1/2, -3 -> -3/4, 0 -> 0
 *   erf:  0 -> 0, 1 -> 0.84270079294971487, -1 -> -0.84270079294971487
 *   sin:  0 -> 0, pi/6 -> 1/2, pi/2 -> 1, -pi/2 -> -1;  cos: 0 -> 1, pi/3 -> 1/2, pi -> -1. */
static void test_transcendental_values(void)
{
    const double l2 = 0.69314718055994531, l3 = 1.0986122886681098, e1 = 2.7182818284590452;
    const double erf1 = 0.84270079294971487, pi = 3.14159265358979323846;
    struct {
        ref_fn ref;
        const char *op;
        int n;
        double x[4], want[4];
    } t[] = {
        {par_ref_exp, "exp", 4, {0, 1, -l2, l3}, {1, e1, 0.5, 3}},
        {par_ref_log, "log", 4, {1, e1, 0.5, 8}, {0, 1, -l2, 3 * l2}},
        {par_ref_reciprocal, "reciprocal", 3, {4, -0.5, 3}, {0.25, -2, 1.0 / 3}},
        {par_ref_softplus, "softplus", 3, {0, l3, -l3}, {l2, 2 * l2, 2 * l2 - l3}},
        {par_ref_softsign, "softsign", 3, {1, -3, 0}, {0.5, -0.75, 0}},
        {par_ref_erf, "erf", 3, {0, 1, -1}, {0, erf1, -erf1}},
        {par_ref_sin, "sin", 4, {0, pi / 6, pi / 2, -pi / 2}, {0, 0.5, 1, -1}},
        {par_ref_cos, "cos", 3, {0, pi / 3, pi}, {1, 0.5, -1}},
    };
    for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
        par_rt *y = run_on(t[k].ref, t[k].op, t[k].n, t[k].x, 0);
        CU_ASSERT_FATAL(y != NULL);
        for (int i = 0; i < t[k].n; i++) {
            double w = t[k].want[i];
            if (!(fabs(y->v[i] - w) <= 4e-16 * fmax(1, fabs(w))))
                fprintf(stderr, "\n  %s(%.17g) = %.17g, want %.17g", t[k].op, t[k].x[i], y->v[i], w);
            CU_ASSERT(fabs(y->v[i] - w) <= 4e-16 * fmax(1, fabs(w)));
            /* an exact input: the function's own allowance and storage only, a few ulps of y (softplus: and the
             * absolute u of 1 + e^x) */
            CU_ASSERT(y->e[i] >= 0 && y->e[i] <= (20 * fabs(w) + 2) * 0x1p-24);
        }
        rt_del(y);
    }
}

/* The special values (docs/ops.md): exp(-inf) = 0, exp(inf) = inf; log(0) = log(-0) = -inf, log(-1) = NaN,
 * log(inf) = inf; reciprocal(inf) = 0, reciprocal(-inf) = -0; softplus(-inf) = 0, softplus(inf) = inf; softsign(+-inf)
 * = +-1 (the limits; the formula's inf / inf would be NaN); erf(+-inf) = +-1; sin and cos of +-inf are NaN. */
static void test_special_values(void)
{
    const double I = INFINITY;
    struct {
        ref_fn ref;
        const char *op;
        int n;
        double x[4], want[4];
    } t[] = {
        {par_ref_exp, "exp", 3, {-I, I, NAN}, {0, I, NAN}},
        {par_ref_log, "log", 4, {0, -0.0, -1, I}, {-I, -I, NAN, I}},
        {par_ref_reciprocal, "reciprocal", 2, {I, -I}, {0, -0.0}},
        {par_ref_softplus, "softplus", 2, {-I, I}, {0, I}},
        {par_ref_softsign, "softsign", 3, {I, -I, NAN}, {1, -1, NAN}},
        {par_ref_erf, "erf", 2, {I, -I}, {1, -1}},
        {par_ref_sin, "sin", 2, {I, -I}, {NAN, NAN}},
        {par_ref_cos, "cos", 2, {I, -I}, {NAN, NAN}},
    };
    for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
        par_rt *y = run_on(t[k].ref, t[k].op, t[k].n, t[k].x, 0);
        expect_same(y, t[k].want, t[k].n, 0);
        /* finite results of exact inputs carry a zero budget (the limits are exact) */
        for (int i = 0; i < t[k].n; i++)
            if (isfinite(t[k].want[i])) CU_ASSERT_EQUAL(y->e[i], 0);
        rt_del(y);
    }
}

/* Budgets derived by hand (u = 2^-24 = 5.9604645e-8, fn = 8u = 4.7683716e-7):
 *   exp(1), e = 1e-3: P = e^1 (e^0.001 - 1) = 2.7182818 * 1.0005002e-3 = 2.7196414e-3; own fn (y + P) =
 *     4.7683716e-7 * 2.7210015 = 1.2974737e-6; storage u (y + P + own) = 1.6218e-7: 2.7211009e-3.
 *   log(2), e = 1e-3: P = log 2 - log 1.999 = -log1p(-5e-4) = 5.0012504e-4; own fn (ln 2 + P) = 3.3075729e-7;
 *     storage 4.13447e-8: 5.0049714e-4.
 *   sin(0), e = 1e-3: |cos| <= 1 on the interval: P = 1e-3; own fn P = 4.77e-10, storage 6.0e-11: 1.00000054e-3.
 *   reciprocal(2), e = 0.5: P = 1/1.5 - 1/2 = 1/6 (the exact sup); own u (1/2 + 1/6) = 3.9736e-8, storage the same
 *     again: 0.16666675.
 *   softsign(0), e = 0.5: f' <= 1 at 0: P = 0.5 (the true change is 1/3: a bound); own 2u P = 5.96e-8, storage
 *     2.98e-8: 0.50000009.
 *   erf(0), e = 1e-3: erf'(0) = 2 / sqrt(pi) = 1.1283792: P = 1.1283792e-3; own fn P = 5.38e-10, storage 6.7e-11:
 *     1.12837976e-3.
 *   sin(0.5) with an unbounded input (e = inf): |sin| <= 1 bounds the change by 1 + |sin 0.5| = 1.4794255; then
 *     own and storage: about 1.4794264: a finite budget. */
static void test_budgets_by_hand(void)
{
    struct {
        ref_fn ref;
        const char *op;
        double x, e, lo, hi;
    } t[] = {
        {par_ref_exp, "exp", 1, 1e-3, 2.72105e-3, 2.72115e-3},
        {par_ref_log, "log", 2, 1e-3, 5.00492e-4, 5.00502e-4},
        {par_ref_sin, "sin", 0, 1e-3, 1.0000005e-3, 1.0000006e-3},
        {par_ref_reciprocal, "reciprocal", 2, 0.5, 0.1666667, 0.1666668},
        {par_ref_softsign, "softsign", 0, 0.5, 0.50000005, 0.5000001},
        {par_ref_erf, "erf", 0, 1e-3, 1.1283797e-3, 1.1283798e-3},
        {par_ref_sin, "sin", 0.5, INFINITY, 1.4794255, 1.47943},
    };
    for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
        par_rt *y = run_on(t[k].ref, t[k].op, 1, &t[k].x, t[k].e);
        CU_ASSERT_FATAL(y != NULL);
        if (!(y->e[0] > t[k].lo && y->e[0] < t[k].hi))
            fprintf(stderr, "\n  %s(%g) e=%g: budget %.9g not in (%.9g, %.9g)", t[k].op, t[k].x, t[k].e, y->e[0],
                    t[k].lo, t[k].hi);
        CU_ASSERT(y->e[0] > t[k].lo && y->e[0] < t[k].hi);
        rt_del(y);
    }
}

/* log of an input whose interval reaches 0 (a held 0 or negative gives -inf or NaN): unbounded; wholly below 0:
 * NaN, exact; reciprocal of an interval through 0: unbounded. */
static void test_domain_edges(void)
{
    double xs[3] = {1e-3, -1, 0.25};
    par_rt *y = run_on(par_ref_log, "log", 2, xs, 2e-3);
    CU_ASSERT_FATAL(y != NULL);
    CU_ASSERT(y->e[0] == INFINITY);
    CU_ASSERT(isnan(y->v[1]));
    rt_del(y);
    y = run_on(par_ref_reciprocal, "reciprocal", 3, xs, 0.5);
    CU_ASSERT_FATAL(y != NULL);
    CU_ASSERT(y->e[0] == INFINITY && y->e[2] == INFINITY); /* [-0.25, 0.75] holds 0 */
    CU_ASSERT(isfinite(y->e[1]) && y->e[1] > 0.5);        /* 1/-1.5 .. 1/-0.5: P = 1 */
    rt_del(y);
}

/* ---- soundness against float32 libm ----------------------------------------------------------------------------- */

static float f_neg(float x) { return -x; }
static float f_sign(float x) { return x > 0 ? 1.0f : x < 0 ? -1.0f : x; }
static float f_recip(float x) { return 1.0f / x; }
static float f_softplus_a(float x) { return x > 0 ? x + log1pf(expf(-x)) : log1pf(expf(x)); }
static float f_softplus_b(float x) { return x > 0 ? x + logf(1.0f + expf(-x)) : logf(1.0f + expf(x)); } /* ONNX */
static float f_softplus_c(float x) { return x > 20.0f ? x : log1pf(expf(x)); }                    /* PyTorch */
static float f_softsign(float x) { return x / (1.0f + fabsf(x)); }

static void test_budgets_f32(void)
{
    static const struct {
        const char *name;
        ref_fn ref;
        float (*f)(float);
        double lo, hi; /* input range */
        int smooth;    /* a 1% error on |y| > 0.1 must exceed the budget (2: unperturbed only, the wide ranges,
                        * whose inputs' budgets of 2^-20 |x| move sin and cos by more than 1%) */
    } cases[] = {
        {"abs", par_ref_abs, fabsf, -4, 4, 0},
        {"neg", par_ref_neg, f_neg, -4, 4, 0},
        {"floor", par_ref_floor, floorf, -4, 4, 0},
        {"ceil", par_ref_ceil, ceilf, -4, 4, 0},
        {"round", par_ref_round, nearbyintf, -4, 4, 0},
        {"sign", par_ref_sign, f_sign, -4, 4, 0},
        {"exp", par_ref_exp, expf, -20, 20, 1},
        {"log", par_ref_log, logf, 1e-3, 100, 1},
        {"reciprocal", par_ref_reciprocal, f_recip, -4, 4, 1},
        {"softplus", par_ref_softplus, f_softplus_a, -30, 30, 1},
        {"softplus", par_ref_softplus, f_softplus_b, -30, 30, 1},
        {"softplus", par_ref_softplus, f_softplus_c, -30, 30, 1},
        {"softsign", par_ref_softsign, f_softsign, -10, 10, 1},
        {"erf", par_ref_erf, erff, -4, 4, 1},
        {"sin", par_ref_sin, sinf, -10, 10, 1},
        {"sin", par_ref_sin, sinf, -1e4, 1e4, 2},
        {"cos", par_ref_cos, cosf, -10, 10, 1},
        {"cos", par_ref_cos, cosf, -1e4, 1e4, 2},
    };
    int64_t d[1] = {4000};
    uint64_t s = 77;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        for (int with_e = 0; with_e < 2; with_e++) {
            par_rt *x = rt_new(PAR_DTYPE_F32, 1, d), *y;
            for (int64_t i = 0; i < x->numel; i++) {
                /* every 8th point near an integer or a half (the steps and ties of the exact ops) */
                double v = rng_f(&s, cases[k].lo, cases[k].hi);
                if (i % 8 == 0) v = 0.5 * nearbyint(2 * v) + (i % 16 ? 0 : rng_f(&s, -1e-6, 1e-6));
                x->v[i] = (double)(float)v;
                x->e[i] = with_e ? (fabs(x->v[i]) + 1) * 0x1p-20 : 0;
            }
            par_msg msg;
            CU_ASSERT_EQUAL_FATAL(unop(cases[k].ref, cases[k].name, x, &y, &msg), PAR_OK);
            ratio r = {0, 0, 0};
            int64_t caught = 0, n_wrong = 0;
            for (int64_t i = 0; i < x->numel; i++) {
                if (!isfinite(y->e[i])) continue; /* an interval through a pole or out of the domain */
                ratio_add(&r, cases[k].f(held(&s, x->v[i], x->e[i])), y->v[i], y->e[i]);
                /* (where the input itself is held within 0.1%: reciprocal near 0 may move by more) */
                if ((cases[k].smooth == 1 || (cases[k].smooth && !with_e)) && fabs(y->v[i]) > 0.1 &&
                    x->e[i] <= 1e-3 * fabs(x->v[i])) {
                    n_wrong++;
                    caught += fabs(0.01 * y->v[i]) > y->e[i];
                }
            }
            char what[64];
            snprintf(what, sizeof what, "%s f32 #%d%s", cases[k].name, (int)k, with_e ? " (perturbed)" : "");
            if (cases[k].smooth) {
                ratio_report(what, &r);
            } else {
                /* a step function held across its step differs from y by exactly the budget (the other answer) */
                PAR_TEST_NOTE("\n  %-34s max error/budget %.3f over %lld elements", what, r.max, (long long)r.n);
                CU_ASSERT_EQUAL(r.over, 0);
                CU_ASSERT(with_e ? r.max > 0.5 : r.max == 0);
            }
            CU_ASSERT(r.n > 3900);
            if (cases[k].smooth == 1 || (cases[k].smooth && !with_e)) {
                CU_ASSERT(n_wrong > 100);
                CU_ASSERT_EQUAL(caught, n_wrong);
            }
            rt_del(x), rt_del(y);
        }
    }
}

/* ---- minimum, maximum, pow ------------------------------------------------------------------------------------ */

static par_rt *run_bin(ref_fn ref, const char *op, int n, const double *av, double ea, const double *bv, double eb)
{
    int64_t d[1] = {n};
    par_rt *a = rt_of(1, d, av), *b = rt_of(1, d, bv), *y = NULL;
    for (int i = 0; i < n; i++) a->e[i] = ea, b->e[i] = eb;
    par_rt *in[2] = {a, b};
    par_msg msg;
    CU_ASSERT_EQUAL(run_op(par_infer_broadcast, ref, op, 2, in, NULL, 0, &y, &msg), PAR_OK);
    rt_del(a), rt_del(b);
    return y;
}

/* minimum / maximum of (1, 2), (-2, -3), (NaN, 1), (3, NaN), (-0, 0): 1 / 2, -3 / -2, NaN (propagated, unlike
 * fmin / fmax), NaN, a zero of either sign. Exact inputs: budget 0.
 * Budgets over the box: min(1 +- 0.1, 1.05 +- 0.01) lies in [min(0.9, 1.04), min(1.1, 1.06)] = [0.9, 1.06], y = 1:
 * 0.1; max of the same in [1.04, 1.1], y = 1.05: 0.05 (the operands' intervals cross). */
static void test_minmax(void)
{
    double a[5] = {1, -2, NAN, 3, -0.0}, b[5] = {2, -3, 1, NAN, 0};
    double wmin[5] = {1, -3, NAN, NAN, 0}, wmax[5] = {2, -2, NAN, NAN, 0};
    par_rt *y = run_bin(par_ref_minimum, "minimum", 5, a, 0, b, 0);
    expect_same(y, wmin, 5, 1);
    rt_del(y);
    y = run_bin(par_ref_maximum, "maximum", 5, a, 0, b, 0);
    expect_same(y, wmax, 5, 1);
    rt_del(y);
    double a1[1] = {1}, b1[1] = {1.05};
    int64_t d[1] = {1};
    par_rt *ta = rt_of(1, d, a1), *tb = rt_of(1, d, b1), *in[2] = {ta, tb};
    ta->e[0] = 0.1, tb->e[0] = 0.01;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_broadcast, par_ref_minimum, "minimum", 2, in, NULL, 0, &y, &msg), PAR_OK);
    CU_ASSERT(y->v[0] == 1 && fabs(y->e[0] - 0.1) < 1e-15);
    rt_del(y);
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_broadcast, par_ref_maximum, "maximum", 2, in, NULL, 0, &y, &msg), PAR_OK);
    CU_ASSERT(y->v[0] == 1.05 && fabs(y->e[0] - 0.05) < 1e-15);
    rt_del(y), rt_del(ta), rt_del(tb);
}

/* pow: 2^10 = 1024, 4^0.5 = 2, 9^-0.5 = 1/3, (-2)^3 = -8, 2^-1 = 1/2, 0^2 = 0 (finite results of exact operands: a
 * few ulps of budget); (-2)^0.5 = NaN (a negative base, a fractional power), pow(NaN, 0) = 1 and pow(1, NaN) = 1
 * (C99 Annex F, torch.pow), 0^-2 = +inf.
 * Budgets by hand (fn = 8u = 4.7683716e-7): pow(2 +- 1e-3, 3): the box's corners 1.999^3 = 7.988005999 and
 * 2.001^3 = 8.012006001: P = 0.012006001; own fn (8 + P) = 3.8204e-6, storage u (8.0158) = 4.78e-7: 0.0120103.
 * pow(2, 3 +- 1e-3): 8 * 2^+-0.001, P = 8 (2^0.001 - 1) = 5.547096e-3; own 3.81734e-6, storage 4.7717e-7:
 * 5.551391e-3. */
static void test_pow_values(void)
{
    double a[10] = {2, 4, 9, -2, 2, 0, -2, NAN, 1, 0}, b[10] = {10, 0.5, -0.5, 3, -1, 2, 0.5, 0, NAN, -2};
    double w[10] = {1024, 2, 1.0 / 3, -8, 0.5, 0, NAN, 1, 1, INFINITY};
    par_rt *y = run_bin(par_ref_pow, "pow", 10, a, 0, b, 0);
    CU_ASSERT_FATAL(y != NULL);
    for (int i = 0; i < 10; i++) {
        CU_ASSERT(isnan(w[i]) ? isnan(y->v[i]) : y->v[i] == w[i] || fabs(y->v[i] - w[i]) <= 4e-16 * fabs(w[i]));
        if (isfinite(w[i])) CU_ASSERT(y->e[i] <= 10 * 0x1p-24 * fabs(w[i]) + 1e-37);
    }
    rt_del(y);
    double a2[1] = {2}, b3[1] = {3};
    y = run_bin(par_ref_pow, "pow", 1, a2, 1e-3, b3, 0);
    CU_ASSERT(y->e[0] > 0.0120102 && y->e[0] < 0.0120104);
    rt_del(y);
    y = run_bin(par_ref_pow, "pow", 1, a2, 0, b3, 1e-3);
    CU_ASSERT(y->e[0] > 5.5513e-3 && y->e[0] < 5.5515e-3);
    rt_del(y);
    /* a base held on both sides of 0 with a fractional power: NaN or a number, unbounded; a negative base held
     * below 0 with a fractional power: NaN, required */
    double an[2] = {1e-3, -1}, bh[2] = {0.5, 0.5};
    y = run_bin(par_ref_pow, "pow", 2, an, 2e-3, bh, 0);
    CU_ASSERT(y->e[0] == INFINITY);
    CU_ASSERT(isnan(y->v[1]));
    rt_del(y);
}

/* The budgets against float32 powf, minimum and maximum on held operands; a 1% error on |y| > 0.1 exceeds pow's. */
static float f_min(float a, float b) { return a < b || a != a ? a : b; }
static float f_max(float a, float b) { return a > b || a != a ? a : b; }

static void test_binary_budgets_f32(void)
{
    static const struct {
        const char *name;
        ref_fn ref;
        float (*f)(float, float);
        double alo, ahi, blo, bhi;
        int int_b; /* the exponent an exact integer in [-3, 3] */
    } cases[] = {
        {"minimum", par_ref_minimum, f_min, -2, 2, -2, 2, 0},
        {"maximum", par_ref_maximum, f_max, -2, 2, -2, 2, 0},
        {"pow", par_ref_pow, powf, 0.5, 2, -3, 3, 0},
        {"pow", par_ref_pow, powf, -2, 2, -3, 3, 1},
    };
    int64_t d[1] = {4000};
    uint64_t s = 91;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        for (int with_e = 0; with_e < 2; with_e++) {
            par_rt *a = rt_new(PAR_DTYPE_F32, 1, d), *b = rt_new(PAR_DTYPE_F32, 1, d), *y;
            for (int64_t i = 0; i < a->numel; i++) {
                a->v[i] = (double)(float)rng_f(&s, cases[k].alo, cases[k].ahi);
                b->v[i] = cases[k].int_b ? (double)rng_int(&s, -3, 3)
                                         : (double)(float)rng_f(&s, cases[k].blo, cases[k].bhi);
                if (i % 5 == 0 && !cases[k].int_b) b->v[i] = a->v[i]; /* equal operands: min / max ties */
                a->e[i] = with_e ? (fabs(a->v[i]) + 1) * 0x1p-20 : 0;
                b->e[i] = with_e && !cases[k].int_b ? (fabs(b->v[i]) + 1) * 0x1p-20 : 0;
            }
            par_rt *in[2] = {a, b};
            par_msg msg;
            CU_ASSERT_EQUAL_FATAL(run_op(par_infer_broadcast, cases[k].ref, cases[k].name, 2, in, NULL, 0, &y, &msg),
                                  PAR_OK);
            ratio r = {0, 0, 0};
            int64_t caught = 0, n_wrong = 0;
            for (int64_t i = 0; i < a->numel; i++) {
                if (!isfinite(y->e[i])) continue; /* a base held through 0 */
                ratio_add(&r, cases[k].f(held(&s, a->v[i], a->e[i]), held(&s, b->v[i], b->e[i])), y->v[i], y->e[i]);
                if (!(cases[k].ref == par_ref_pow) || fabs(y->v[i]) <= 0.1 || a->e[i] > 1e-3 * fabs(a->v[i])) continue;
                n_wrong++;
                caught += fabs(0.01 * y->v[i]) > y->e[i];
            }
            char what[64];
            snprintf(what, sizeof what, "%s f32 #%d%s", cases[k].name, (int)k, with_e ? " (perturbed)" : "");
            PAR_TEST_NOTE("\n  %-34s max error/budget %.3f over %lld elements", what, r.max, (long long)r.n);
            CU_ASSERT_EQUAL(r.over, 0);
            CU_ASSERT(r.n > 3500);
            if (cases[k].ref == par_ref_pow) {
                CU_ASSERT(r.max < 1.0);
                CU_ASSERT(n_wrong > 100);
                CU_ASSERT_EQUAL(caught, n_wrong);
            } else {
                CU_ASSERT(with_e ? r.max > 0.5 : r.max == 0); /* exact selection; held operands move it */
            }
            rt_del(a), rt_del(b), rt_del(y);
        }
}

static const CU_TestInfo tests[] = {
    {"exact ops: values", test_exact_values},
    {"step functions: straddled steps", test_step_straddle},
    {"transcendental values", test_transcendental_values},
    {"special values", test_special_values},
    {"budgets by hand", test_budgets_by_hand},
    {"domain edges", test_domain_edges},
    {"budgets f32", test_budgets_f32},
    {"minimum and maximum", test_minmax},
    {"pow values and budgets", test_pow_values},
    {"binary budgets f32", test_binary_budgets_f32},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("ref_math", tests)
