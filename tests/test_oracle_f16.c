/*
 * test_oracle_f16.c - the bounds that keep deep graphs judged in f16 arithmetic (docs/oracle.md, rule 5, "Whole
 * models in f16"), each against a correct computation emulated in f16 and a planted error beyond it:
 *
 *   - two operands with disjoint error roots (a residual's branch and skip) combine by rule 5 (root-sum-square of
 *     their scales), and two with a common root (x + relu(x)) keep the sum;
 *   - the output of an op with a fixed range (sigmoid) is budgeted no wider than the range allows;
 *   - rms_norm's output is bounded directly, and layer_norm's reciprocal square root by eps (a correct backend's
 *     variance is never negative), where the inputs' budgets let the variance's interval reach 0;
 *   - layer_norm's held variance is bounded below by its first-order change alone (the second-order part is never
 *     negative), so inputs with wide budgets but small scales (deep in a model) keep 1 / sqrt bounded near r;
 *   - sdpa's probabilities take rule 5 over the scores' scales, as the softmax of the decomposed form does;
 *   - a product of x and clamp(x + c) (a decomposed hardswish) is bounded by the exact range of x clamp(x + c) over
 *     the held interval, not by the worst case of its two operands' budgets.
 *
 * The emulation rounds every operation to binary16 (round to nearest even, gradual underflow), in the order a simple
 * kernel takes; held inputs are drawn anywhere within their budgets.
 */
#include "core/graph.h"
#include "reference/reference.h"
#include "ref_helpers.h"
#include "tmain.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* x rounded to binary16 (11 significant bits, the subnormal quantum 2^-24; no overflow in these tests) */
static double f16r(double x)
{
    if (x == 0 || !isfinite(x)) return x;
    int ex;
    frexp(x, &ex);
    int q = ex - 11 < -24 ? -24 : ex - 11;
    return ldexp(nearbyint(ldexp(x, -q)), q);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static double urand(void) /* [-1, 1) */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) * 0x1p-52 - 1.0;
}

enum { N = 64, BLOCKS = 12 };

typedef struct chain {
    par_graph *g;
    float x[N];
    float w[BLOCKS][N * N], b[BLOCKS][N];
    par_ref_result *ref;
} chain;

/* x -> BLOCKS times: h = linear(x, W_i, b_i), x = add(h, x) (or add(x, relu(x)) after the last one when tail is
 * set); the output is the last add. Weights uniform with rows of l2 norm about 0.7. */
static int chain_build(chain *c, int tail)
{
    par_msg m = {{0}};
    memset(c, 0, sizeof *c);
    for (int i = 0; i < N; i++) c->x[i] = (float)urand();
    const double a = 0.7 * sqrt(3.0 / N);
    for (int k = 0; k < BLOCKS; k++) {
        for (int i = 0; i < N * N; i++) c->w[k][i] = (float)f16r(a * urand());
        for (int i = 0; i < N; i++) c->b[k][i] = (float)f16r(0.1 * urand());
    }
    c->g = par_graph_create("chain");
    int64_t xd[2] = {1, N}, wd[2] = {N, N}, bd[1] = {N};
    int32_t x = par_graph_add_input(c->g, "x", PAR_DTYPE_F32, 2, xd, &m);
    char name[32], hn[32];
    for (int k = 0; k < BLOCKS && x >= 0; k++) {
        snprintf(name, sizeof name, "w%d", k);
        int32_t in[3] = {x, par_graph_add_const(c->g, name, PAR_DTYPE_F32, 2, wd, c->w[k], &m), -1};
        snprintf(name, sizeof name, "b%d", k);
        in[2] = par_graph_add_const(c->g, name, PAR_DTYPE_F32, 1, bd, c->b[k], &m);
        snprintf(hn, sizeof hn, "h%d", k);
        par_out_spec os = {.name = hn};
        if (par_graph_add_node(c->g, "linear", hn, 3, in, 0, NULL, &os, &m) < 0) return -1;
        int32_t ab[2] = {par_graph_find_value(c->g, hn), x};
        snprintf(name, sizeof name, "x%d", k + 1);
        os.name = name;
        if (par_graph_add_node(c->g, "add", name, 2, ab, 0, NULL, &os, &m) < 0) return -1;
        x = par_graph_find_value(c->g, name);
    }
    if (tail) {
        par_out_spec os = {.name = "r"};
        if (par_graph_add_node(c->g, "relu", "r", 1, &x, 0, NULL, &os, &m) < 0) return -1;
        int32_t ab[2] = {x, par_graph_find_value(c->g, "r")};
        os.name = "y";
        if (par_graph_add_node(c->g, "add", "y", 2, ab, 0, NULL, &os, &m) < 0) return -1;
        x = par_graph_find_value(c->g, "y");
    }
    if (par_graph_mark_output(c->g, x, &m) != PAR_OK || par_graph_finalize(c->g, &m) != PAR_OK) {
        fprintf(stderr, "chain: %s\n", m.text);
        return -1;
    }
    par_prec p = par_prec_for(PAR_ARITH_F16);
    const void *inputs[1] = {c->x};
    if (par_ref_run(par_graph_desc_of(c->g), &p, inputs, &c->ref, &m) != PAR_OK) {
        fprintf(stderr, "chain: %s\n", m.text);
        return -1;
    }
    return 0;
}

static void chain_free(chain *c)
{
    par_ref_result_destroy(c->ref);
    par_graph_destroy(c->g);
}

static const par_rt *value(const chain *c, const char *name)
{
    return &c->ref->values[par_graph_find_value(c->g, name)];
}

/* The chain computed in f16: products and the running sum rounded (bias first), the residual add rounded; with
 * bug_k >= 0, block bug_k reads its weight matrix transposed (a planted layout bug). */
static void chain_f16(const chain *c, int bug_k, double *y)
{
    double x[N], h[N];
    for (int i = 0; i < N; i++) x[i] = f16r(c->x[i]);
    for (int k = 0; k < BLOCKS; k++) {
        for (int o = 0; o < N; o++) {
            double acc = c->b[k][o];
            for (int i = 0; i < N; i++)
                acc = f16r(acc + f16r((double)c->w[k][k == bug_k ? i * N + o : o * N + i] * x[i]));
            h[o] = acc;
        }
        for (int o = 0; o < N; o++) x[o] = f16r(h[o] + x[o]);
    }
    memcpy(y, x, sizeof x);
}

/* the largest |y - v| / e over the output; *n_unjudged: elements with an infinite budget */
static double worst_ratio(const par_rt *t, const double *y, int *n_unjudged)
{
    double w = 0;
    *n_unjudged = 0;
    for (int64_t i = 0; i < t->numel; i++) {
        if (!(t->e[i] < INFINITY)) (*n_unjudged)++;
        else w = fmax(w, fabs(y[i] - t->v[i]) / t->e[i]);
    }
    return w;
}

static void test_residual_chain(void)
{
    chain c;
    CU_ASSERT_FATAL(chain_build(&c, 0) == 0);
    const par_rt *y = value(&c, "x12"), *h = value(&c, "h11"), *x = value(&c, "x11");
    double got[N], bad[N];
    chain_f16(&c, -1, got);
    int unj = 0;
    double r_ok = worst_ratio(y, got, &unj);
    CU_ASSERT_EQUAL(unj, 0);
    CU_ASSERT(r_ok < 1);
    /* the residual's branch and skip have disjoint roots: rule 5 combines them, tighter than the sum of budgets */
    double tight = 0;
    for (int i = 0; i < N; i++) {
        double sum = h->e[i] + x->e[i];
        CU_ASSERT(y->e[i] < sum);
        tight = fmax(tight, y->e[i] / sum);
    }
    /* not vacuous: a value off by the midpoint of the new budget and the operands' sum (which the sum admitted)
     * fails at every element */
    int n_fail = 0;
    for (int i = 0; i < N; i++) {
        double planted = got[i] + (y->e[i] + h->e[i] + x->e[i]) / 2;
        if (fabs(planted - y->v[i]) > y->e[i]) n_fail++;
    }
    CU_ASSERT_EQUAL(n_fail, N);
    /* and a real bug, the weights of the block six before the output read transposed, fails there */
    chain_f16(&c, 6, bad);
    double r_bad = worst_ratio(y, bad, &unj);
    CU_ASSERT(r_bad > 1);
    PAR_TEST_NOTE("residual chain (12 blocks, f16): correct %.3g of the budget, budget at most %.2f of the operands' "
                  "sum, transposed weights %.3g", r_ok, tight, r_bad);
    chain_free(&c);
}

static void test_common_root_keeps_sum(void)
{
    chain c;
    CU_ASSERT_FATAL(chain_build(&c, 1) == 0);
    const par_rt *y = value(&c, "y"), *x = value(&c, "x12"), *r = value(&c, "r");
    /* x + relu(x): one error counted twice, so the sum of the budgets, no root-sum-square */
    for (int i = 0; i < N; i++) CU_ASSERT(y->e[i] >= x->e[i] + r->e[i]);
    chain_free(&c);
}


/* ---- one op after a budget as wide as the values ------------------------------------------------------------
 * x -> add(x, K) -> sub(., K) -> op: in f16 the two roundings at |x + K| ~ 1024 give a budget of about 1 on values
 * in [-1, 1] (the intervals reach 0), as deep in a model. */
enum { K_BIG = 1024 };

typedef struct wide {
    par_graph *g;
    float x[N], k;
    par_ref_result *ref;
    const par_rt *in, *out;
} wide;

static int wide_build(wide *w, const char *op)
{
    par_msg m = {{0}};
    memset(w, 0, sizeof *w);
    for (int i = 0; i < N; i++) w->x[i] = (float)urand();
    w->k = K_BIG;
    w->g = par_graph_create(op);
    int64_t xd[2] = {1, N}, kd[1] = {1};
    int32_t x = par_graph_add_input(w->g, "x", PAR_DTYPE_F32, 2, xd, &m);
    int32_t ab[2] = {x, par_graph_add_const(w->g, "k", PAR_DTYPE_F32, 1, kd, &w->k, &m)};
    par_out_spec os = {.name = "t"};
    if (par_graph_add_node(w->g, "add", "t", 2, ab, 0, NULL, &os, &m) < 0) return -1;
    ab[0] = par_graph_find_value(w->g, "t");
    os.name = "h";
    if (par_graph_add_node(w->g, "sub", "h", 2, ab, 0, NULL, &os, &m) < 0) return -1;
    int32_t h = par_graph_find_value(w->g, "h");
    par_attr at[1] = {{.name = "normalized_shape", .type = PAR_ATTR_INTS, .count = 1, .ints = (const int64_t[]){N}}};
    os.name = "y";
    if (par_graph_add_node(w->g, op, "y", 1, &h, strcmp(op, "sigmoid") ? 1 : 0, at, &os, &m) < 0 ||
        par_graph_mark_output(w->g, par_graph_find_value(w->g, "y"), &m) != PAR_OK ||
        par_graph_finalize(w->g, &m) != PAR_OK) {
        fprintf(stderr, "%s: %s\n", op, m.text);
        return -1;
    }
    par_prec p = par_prec_for(PAR_ARITH_F16);
    const void *inputs[1] = {w->x};
    if (par_ref_run(par_graph_desc_of(w->g), &p, inputs, &w->ref, &m) != PAR_OK) {
        fprintf(stderr, "%s: %s\n", op, m.text);
        return -1;
    }
    w->in = &w->ref->values[h];
    w->out = &w->ref->values[par_graph_find_value(w->g, "y")];
    return 0;
}

static void wide_free(wide *w)
{
    par_ref_result_destroy(w->ref);
    par_graph_destroy(w->g);
}

/* Held inputs: trial 0 the f16 computation itself, the others anywhere within the input's budgets. */
static void held_wide(const wide *w, int trial, double *xh)
{
    for (int i = 0; i < N; i++)
        xh[i] = trial == 0 ? f16r(f16r(w->x[i] + (double)K_BIG) - K_BIG) : f16r(w->in->v[i] + w->in->e[i] * urand());
}

static void test_sigmoid_range(void)
{
    wide w;
    CU_ASSERT_FATAL(wide_build(&w, "sigmoid") == 0);
    double worst = 0, xh[N];
    int n_bug_fail = 0;
    for (int i = 0; i < N; i++) { /* at most the distance to the range's far end, plus a few roundings */
        CU_ASSERT(w.in->e[i] > 0.25);
        CU_ASSERT(w.out->e[i] <= fmax(w.out->v[i], 1 - w.out->v[i]) + 0.01);
    }
    for (int trial = 0; trial < 20; trial++) {
        held_wide(&w, trial, xh);
        for (int i = 0; i < N; i++) { /* 1 / (1 + exp(-x)) in f16 */
            double y = f16r(1.0 / f16r(1.0 + f16r(exp(-xh[i]))));
            worst = fmax(worst, fabs(y - w.out->v[i]) / w.out->e[i]);
        }
    }
    /* a planted bug: tanh in place of sigmoid, which a budget of sup|f'| e (up to 0.25 of about 1) admitted */
    for (int i = 0; i < N; i++)
        if (fabs(f16r(tanh(w.x[i])) - w.out->v[i]) > w.out->e[i]) n_bug_fail++;
    CU_ASSERT(worst <= 1);
    CU_ASSERT(n_bug_fail > 0);
    PAR_TEST_NOTE("sigmoid after a budget of ~1: held inputs at %.3g of the budget; tanh in its place fails %d of %d",
                  worst, n_bug_fail, N);
    wide_free(&w);
}

/* ---- a product through a clamp of its own operand (the decomposed hardswish) ----------------------------------
 * x in [-12, 12) -> add(x, 8192) -> sub(., 8192): h, held to a multiple of 8 in f16, budget about 8 (the values
 * straddle hardswish's kinks -3 and 3 within their budgets); then t = add(h, 3), c = clamp(t, 0, 6), y = mul(h, c). */
enum { K_HSW = 8192 };

static double hsw_h(double z) { return z * fmin(fmax(z + 3, 0), 6); }

static void test_clamp_product(void)
{
    par_msg m = {{0}};
    float x[N], k = K_HSW, three = 3;
    for (int i = 0; i < N; i++) x[i] = (float)(12 * urand());
    par_graph *g = par_graph_create("hardswish_decomposed");
    int64_t xd[2] = {1, N}, kd[1] = {1};
    int32_t xin = par_graph_add_input(g, "x", PAR_DTYPE_F32, 2, xd, &m);
    int32_t ab[2] = {xin, par_graph_add_const(g, "k", PAR_DTYPE_F32, 1, kd, &k, &m)};
    par_out_spec os = {.name = "t0"};
    CU_ASSERT_FATAL(par_graph_add_node(g, "add", "t0", 2, ab, 0, NULL, &os, &m) >= 0);
    ab[0] = par_graph_find_value(g, "t0");
    os.name = "h";
    CU_ASSERT_FATAL(par_graph_add_node(g, "sub", "h", 2, ab, 0, NULL, &os, &m) >= 0);
    const int32_t h = par_graph_find_value(g, "h");
    int32_t ac[2] = {h, par_graph_add_const(g, "three", PAR_DTYPE_F32, 1, kd, &three, &m)};
    os.name = "t";
    CU_ASSERT_FATAL(par_graph_add_node(g, "add", "t", 2, ac, 0, NULL, &os, &m) >= 0);
    int32_t t = par_graph_find_value(g, "t");
    par_attr at[2] = {{.name = "min", .type = PAR_ATTR_FLOAT, .f = 0}, {.name = "max", .type = PAR_ATTR_FLOAT, .f = 6}};
    os.name = "c";
    CU_ASSERT_FATAL(par_graph_add_node(g, "clamp", "c", 1, &t, 2, at, &os, &m) >= 0);
    int32_t hc[2] = {h, par_graph_find_value(g, "c")};
    os.name = "y";
    CU_ASSERT_FATAL(par_graph_add_node(g, "mul", "y", 2, hc, 0, NULL, &os, &m) >= 0);
    CU_ASSERT_FATAL(par_graph_mark_output(g, par_graph_find_value(g, "y"), &m) == PAR_OK);
    CU_ASSERT_FATAL(par_graph_finalize(g, &m) == PAR_OK);
    par_prec p = par_prec_for(PAR_ARITH_F16);
    const void *inputs[1] = {x};
    par_ref_result *ref = NULL;
    CU_ASSERT_FATAL(par_ref_run(par_graph_desc_of(g), &p, inputs, &ref, &m) == PAR_OK);
    const par_rt *hv = &ref->values[h], *cv = &ref->values[hc[1]], *y = &ref->values[par_graph_find_value(g, "y")];
    double worst = 0, tight = 0, gain = 1;
    int n_bug_fail = 0, n_straddle = 0;
    for (int i = 0; i < N; i++) {
        const double xv = hv->v[i], e = hv->e[i];
        CU_ASSERT(e > 7.9 && e < 8.1);
        /* the exact range of h over the held interval, by dense sampling; the budget within it plus roundings */
        double sup = 0;
        for (int j = 0; j <= 4000; j++) sup = fmax(sup, fabs(hsw_h(xv - e + 2 * e * j / 4000.0) - hsw_h(xv)));
        CU_ASSERT(y->e[i] >= sup);
        CU_ASSERT(y->e[i] <= 1.01 * sup + 0.5);
        if (sup > 1) tight = fmax(tight, y->e[i] / sup);
        /* the product's worst case over its operands' budgets, what a common root kept before */
        const double old = fabs(cv->v[i]) * e + fabs(xv) * cv->e[i] + e * cv->e[i];
        CU_ASSERT(y->e[i] <= old + 3 * 0x1p-11 * (fabs(y->v[i]) + old) + 1e-7); /* + the product's roundings */
        if (xv - e < 3 && xv + e > 3) {
            n_straddle++;
            gain = fmin(gain, y->e[i] / old);
        }
        /* correct f16 computations: trial 0 the chain itself, the others held h anywhere within its budget, and at
         * the interval's ends and the kinks */
        for (int trial = 0; trial < 40; trial++) {
            double hh = trial == 0 ? f16r(f16r(x[i] + (double)K_HSW) - K_HSW)
                        : trial == 1 ? f16r(xv - e) : trial == 2 ? f16r(xv + e)
                        : trial == 3 ? fmin(fmax(3, xv - e), xv + e) : trial == 4 ? fmin(fmax(-3, xv - e), xv + e)
                        : f16r(xv + e * urand());
            double yy = f16r(hh * fmin(fmax(f16r(hh + 3), 0), 6));
            worst = fmax(worst, fabs(yy - y->v[i]) / y->e[i]);
        }
        /* planted: the clamp's upper bound left out (relu(x + 3)), above the kink the output grows as x^2 */
        double hh = f16r(f16r(x[i] + (double)K_HSW) - K_HSW);
        if (fabs(f16r(hh * fmax(f16r(hh + 3), 0)) - y->v[i]) > y->e[i]) n_bug_fail++;
    }
    CU_ASSERT(worst <= 1);
    CU_ASSERT(n_straddle > 0 && gain < 0.8);
    CU_ASSERT(n_bug_fail > 0);
    PAR_TEST_NOTE("x * clamp(x + 3, 0, 6) after budgets of ~8: correct f16 at %.3g of the budget, the budget at most "
                  "%.4g x the exact range; where the interval straddles the kink 3 (%d elements) down to %.3g of the "
                  "operands' worst case; relu in place of the clamp fails %d of %d", worst, tight, n_straddle, gain,
                  n_bug_fail, N);
    par_ref_result_destroy(ref);
    par_graph_destroy(g);
}

/* rms_norm (no weight) in f16: squares and a running sum rounded, / n, + eps, 1 / sqrt, the product */
static void rms_f16(const double *x, double *y, double scale_bug)
{
    double q = 0;
    for (int i = 0; i < N; i++) q = f16r(q + f16r(x[i] * x[i]));
    double r = f16r(1.0 / f16r(sqrt(f16r(f16r(q / N * scale_bug) + f16r(1e-5)))));
    for (int i = 0; i < N; i++) y[i] = f16r(x[i] * r);
}

/* layer_norm (no affine) in f16, two-pass */
static void ln_f16(const double *x, double *y)
{
    double s = 0, v = 0;
    for (int i = 0; i < N; i++) s = f16r(s + x[i]);
    double m = f16r(s / N);
    for (int i = 0; i < N; i++) v = f16r(v + f16r(f16r(x[i] - m) * f16r(x[i] - m)));
    double r = f16r(1.0 / f16r(sqrt(f16r(f16r(v / N) + f16r(1e-5)))));
    for (int i = 0; i < N; i++) y[i] = f16r(f16r(x[i] - m) * r);
}

static void test_norms_bounded(void)
{
    static const char *const ops[2] = {"rms_norm", "layer_norm"};
    for (int o = 0; o < 2; o++) {
        wide w;
        CU_ASSERT_FATAL(wide_build(&w, ops[o]) == 0);
        double xh[N], y[N], worst = 0, emax = 0;
        int unj = 0, n_bug_fail = 0;
        for (int i = 0; i < N; i++) {
            if (!(w.out->e[i] < INFINITY)) unj++;
            emax = fmax(emax, w.out->e[i]);
        }
        CU_ASSERT_EQUAL(unj, 0);
        for (int trial = 0; trial < 20; trial++) {
            held_wide(&w, trial, xh);
            if (o == 0) rms_f16(xh, y, 1);
            else ln_f16(xh, y);
            for (int i = 0; i < N; i++) worst = fmax(worst, fabs(y[i] - w.out->v[i]) / w.out->e[i]);
        }
        CU_ASSERT(worst <= 1);
        if (o == 0) { /* a planted bug: the mean square divided by n twice */
            held_wide(&w, 0, xh);
            rms_f16(xh, y, 1.0 / N);
            for (int i = 0; i < N; i++)
                if (fabs(y[i] - w.out->v[i]) > w.out->e[i]) n_bug_fail++;
            CU_ASSERT(n_bug_fail > 0);
            /* the direct bound: |y| <= sqrt(n / (1 - gamma)) and a few roundings */
            for (int i = 0; i < N; i++) CU_ASSERT(w.out->e[i] <= fabs(w.out->v[i]) + 8.5);
        }
        PAR_TEST_NOTE("%s after input budgets of ~1: budgets up to %.3g, held inputs at %.3g of them; the mean "
                      "square divided by n twice fails %d of %d", ops[o], emax, worst, n_bug_fail, N);
        wide_free(&w);
    }
}


/* layer_norm in f16 on held inputs xh (n of them): two-pass (form 0) or one-pass E[x^2] - m^2 clamped at 0 (form 1);
 * var_div: the variance's divisor (n; n * n plants a variance divided by n twice) */
static void ln_f16_n(const double *x, int n, int form, double var_div, double *y)
{
    double s = 0, v = 0, s2 = 0;
    for (int i = 0; i < n; i++) s = f16r(s + x[i]), s2 = f16r(s2 + f16r(x[i] * x[i]));
    double m = f16r(s / n);
    for (int i = 0; i < n; i++) v = f16r(v + f16r(f16r(x[i] - m) * f16r(x[i] - m)));
    v = form == 0 ? f16r(v / var_div) : fmax(0, f16r(f16r(s2 / var_div) - f16r(m * m)));
    double r = f16r(1.0 / f16r(sqrt(f16r(v + f16r(1e-5)))));
    for (int i = 0; i < n; i++) y[i] = f16r(f16r(x[i] - m) * r);
}

/* Inputs deep in an f16 model: budgets e = 1.2 on values of variance about 1 (the worst case of the errors behind
 * them), scales s = 0.05 (their root-sum-square). The held variance's second-order part, sum e^2 / n = 1.44, alone
 * passes the variance: before, the interval reached 0 and r was bounded only by 1 / sqrt(eps) = 316. Its first-order
 * part, at most 2 lambda sqrt(sum (d s)^2) / n = 0.075, keeps it near v. Held inputs: random within the scales, and
 * the one that shrinks every deviation as far as rule 5 allows (x' = x - t d, t lambda s / sqrt(sum d^2): the first
 * order at its bound, the variance (1 - t)^2 v). */
enum { LN_N = 64 };

static void test_layer_norm_held_variance(void)
{
    int64_t d[2] = {1, LN_N}, ns[1] = {LN_N};
    double x[LN_N], sc[LN_N], xh[LN_N], y[LN_N], mean = 0, ss = 0;
    for (int i = 0; i < LN_N; i++) mean += (x[i] = f16r(1.7 * urand())) / LN_N;
    for (int i = 0; i < LN_N; i++) ss += (x[i] - mean) * (x[i] - mean);
    par_rt *xt = rt_of(2, d, x), *out = NULL;
    for (int i = 0; i < LN_N; i++) xt->e[i] = 1.2, sc[i] = 0.05;
    xt->s = sc;
    par_attr a[2] = {par_a_ints("normalized_shape", 1, ns), par_a_float("eps", 1e-5)};
    par_rt *in[3] = {xt, NULL, NULL};
    par_prec p = par_prec_for(PAR_ARITH_F16);
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(run_opq(par_infer_layer_norm, par_ref_layer_norm, "layer_norm", 3, in, a, 2, &p, NULL, &out,
                                  &msg), PAR_OK);
    double emax = 0, worst = 0;
    for (int i = 0; i < LN_N; i++) emax = fmax(emax, out->e[i]);
    CU_ASSERT(budgets_ok(out));
    CU_ASSERT(emax < 4); /* about (e + E_m) r_hi + |x - m| (r_hi - r), r_hi near r = 1.0: not 316 |x - m| */
    const double t = PAR_PROP_LAMBDA * 0.05 / sqrt(ss);
    for (int trial = 0; trial < 40; trial++) {
        for (int i = 0; i < LN_N; i++)
            xh[i] = f16r(trial == 0 ? x[i] - t * (x[i] - mean) : x[i] + sc[i] * urand());
        for (int form = 0; form < 2; form++) {
            ln_f16_n(xh, LN_N, form, LN_N, y);
            for (int i = 0; i < LN_N; i++) worst = fmax(worst, fabs(y[i] - out->v[i]) / out->e[i]);
        }
    }
    CU_ASSERT(worst <= 1);
    /* a planted bug: the variance divided by n twice (r 8 times too large), which r <= 316 admitted */
    int n_bug_fail = 0;
    ln_f16_n(x, LN_N, 0, (double)LN_N * LN_N, y);
    for (int i = 0; i < LN_N; i++) n_bug_fail += fabs(y[i] - out->v[i]) > out->e[i];
    CU_ASSERT(n_bug_fail > LN_N / 2);
    PAR_TEST_NOTE("layer_norm, inputs held within 1.2 (scales 0.05) on variance %.2f: budgets up to %.3g, the f16 "
                  "two-pass and one-pass forms at %.3g of them; the variance divided by n twice fails %d of %d\n",
                  ss / LN_N, emax, worst, n_bug_fail, LN_N);
    xt->s = NULL;
    rt_del(xt), rt_del(out);
}

/* sdpa in f16 on held q, k, v ([1, 1, SQ, D]): scores q.k rounded after each product and sum, scaled, softmax (exp,
 * sum, division), then the probabilities' dot product with v; scale_bug multiplies the scale (a planted error). */
enum { SQ = 16, SD = 16 };

static void sdpa_f16(const double *q, const double *k, const double *v, double scale, double *y)
{
    for (int i = 0; i < SQ; i++) {
        double t[SQ], m = -INFINITY, sum = 0;
        for (int j = 0; j < SQ; j++) {
            double a = 0;
            for (int d = 0; d < SD; d++) a = f16r(a + f16r(q[i * SD + d] * k[j * SD + d]));
            t[j] = f16r(a * scale);
            m = fmax(m, t[j]);
        }
        for (int j = 0; j < SQ; j++) sum = f16r(sum + (t[j] = f16r(exp(f16r(t[j] - m)))));
        for (int d = 0; d < SD; d++) {
            double a = 0;
            for (int j = 0; j < SQ; j++) a = f16r(a + f16r(f16r(t[j] / sum) * v[j * SD + d]));
            y[i * SD + d] = a;
        }
    }
}

/* q, k, v deep in an f16 model: budgets 0.3 on values in [-2, 2] (the worst case of the errors behind them), scales
 * 0.03. Before, sdpa's softmax took every score's error in the worst case (its first-order bound had no scales) and
 * its probabilities' budgets stood in for their scales in the output's dot product: the speech encoder's second
 * block grew its budget from 5 to 82 there (values at most 2.2), and its last layer_norm's variance interval then
 * reached 0. Now each stage takes what the decomposed form's nodes take. */
static void test_sdpa_scales(void)
{
    int64_t d[4] = {1, 1, SQ, SD};
    double qv[SQ * SD], kv[SQ * SD], vv[SQ * SD], sc[3][SQ * SD], qh[SQ * SD], kh[SQ * SD], vh[SQ * SD], y[SQ * SD];
    for (int i = 0; i < SQ * SD; i++) qv[i] = f16r(2 * urand()), kv[i] = f16r(2 * urand()), vv[i] = f16r(2 * urand());
    par_rt *in[3] = {rt_of(4, d, qv), rt_of(4, d, kv), rt_of(4, d, vv)}, *out = NULL, *wide_out = NULL;
    for (int t = 0; t < 3; t++) {
        for (int i = 0; i < SQ * SD; i++) in[t]->e[i] = 0.3, sc[t][i] = 0.03;
        in[t]->s = sc[t];
    }
    par_attr a[2] = {par_a_int("is_causal", 0), par_a_float("scale", 0.25)};
    par_prec p = par_prec_for(PAR_ARITH_F16);
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(run_opq(par_infer_sdpa, par_ref_sdpa, "sdpa", 3, in, a, 2, &p, NULL, &out, &msg), PAR_OK);
    for (int t = 0; t < 3; t++) in[t]->s = NULL; /* scales read as the budgets: what the old propagation assumed */
    CU_ASSERT_EQUAL_FATAL(run_opq(par_infer_sdpa, par_ref_sdpa, "sdpa", 3, in, a, 2, &p, NULL, &wide_out, &msg),
                          PAR_OK);
    double emax = 0, wmax = 0, worst = 0;
    int n_bug_fail = 0;
    for (int i = 0; i < SQ * SD; i++) {
        emax = fmax(emax, out->e[i]), wmax = fmax(wmax, wide_out->e[i]);
        CU_ASSERT(out->e[i] <= wide_out->e[i]);
    }
    CU_ASSERT(budgets_ok(out));
    CU_ASSERT(emax < wmax / 2);
    for (int trial = 0; trial < 20; trial++) {
        for (int i = 0; i < SQ * SD; i++) { /* within the scales: the independent mean-zero errors of rule 5 */
            qh[i] = f16r(qv[i] + sc[0][i] * urand());
            kh[i] = f16r(kv[i] + sc[1][i] * urand());
            vh[i] = f16r(vv[i] + sc[2][i] * urand());
        }
        sdpa_f16(qh, kh, vh, 0.25, y);
        for (int i = 0; i < SQ * SD; i++) worst = fmax(worst, fabs(y[i] - out->v[i]) / out->e[i]);
    }
    CU_ASSERT(worst <= 1);
    sdpa_f16(qv, kv, vv, 1.0, y); /* a planted bug: the scale 1 / sqrt(D) left out */
    for (int i = 0; i < SQ * SD; i++) n_bug_fail += fabs(y[i] - out->v[i]) > out->e[i];
    CU_ASSERT(n_bug_fail > 0);
    PAR_TEST_NOTE("sdpa, inputs held within 0.3 (scales 0.03): budgets up to %.3g (%.3g with the scales read as the "
                  "budgets), f16 held inputs at %.3g of them; the scale left out fails %d of %d\n", emax, wmax, worst,
                  n_bug_fail, SQ * SD);
    for (int t = 0; t < 3; t++) rt_del(in[t]);
    rt_del(out), rt_del(wide_out);
}

static const CU_TestInfo tests[] = {
    {"residual chain: rule 5 across a residual add", test_residual_chain},
    {"common root: the sum", test_common_root_keeps_sum},
    {"sigmoid: no wider than its range", test_sigmoid_range},
    {"rms_norm and layer_norm: bounded where the variance may be 0", test_norms_bounded},
    {"layer_norm: the held variance's lower end is first order", test_layer_norm_held_variance},
    {"sdpa: the probabilities take rule 5 over the scores' scales", test_sdpa_scales},
    {"x * clamp(x + 3, 0, 6): the exact range of the product over the held interval", test_clamp_product},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("oracle_f16", tests)
