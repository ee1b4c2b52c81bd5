/*
 * test_ref_attention.c - tests of the reference kernels of the decoder-block ops (reference/attention.c): rope in
 * both pair layouts, sdpa (plain, causal, an additive mask equal to the causal one, grouped-query heads sharing a
 * key/value head, a row of masked keys only), slice_scatter, with every expected value worked out by hand in the
 * comments; the budgets checked sound against float32 implementations of the forms they claim to cover (rope's
 * products and sum; sdpa's stored-scores softmax and the streaming online-softmax form) and not vacuous (the
 * pair layout confused, the causal mask off by one, the last key dropped fail by far); the shape errors name the
 * input or attribute.
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

static par_status rope(int inter, par_rt *x, par_rt *c, par_rt *s, par_rt **y, par_msg *msg)
{
    par_attr a[1] = {par_a_int("interleaved", inter)};
    par_rt *in[3] = {x, c, s};
    return run_op(par_infer_rope, par_ref_rope, "rope", 3, in, a, 1, y, msg);
}

static par_status sdpa(int causal, double scale, par_rt *q, par_rt *k, par_rt *v, par_rt *m, par_rt **y,
                       par_msg *msg)
{
    par_attr a[2] = {par_a_int("is_causal", causal), par_a_float("scale", scale)};
    par_rt *in[4] = {q, k, v, m};
    return run_op(par_infer_sdpa, par_ref_sdpa, "sdpa", m ? 4 : 3, in, a, 2, y, msg);
}

/* x [1,1,1,4] = [1, 2, 3, 4], cos [1,2] = [0, 1], sin [1,2] = [1, 0]: pair 0 turns by 90 degrees, pair 1 by 0.
 * Half-split pairs (x0, x2) = (1, 3) and (x1, x3) = (2, 4): y0 = 1 * 0 - 3 * 1 = -3, y2 = 3 * 0 + 1 * 1 = 1,
 * y1 = 2, y3 = 4: [-3, 2, 1, 4]. Interleaved pairs (x0, x1) = (1, 2), (x2, x3) = (3, 4): y0 = -2, y1 = 1, y2 = 3,
 * y3 = 4: [-2, 1, 3, 4]. */
static void test_rope_values(void)
{
    int64_t xd[4] = {1, 1, 1, 4}, td[2] = {1, 2};
    par_rt *x = rt_of(4, xd, (const double[]){1, 2, 3, 4});
    par_rt *c = rt_of(2, td, (const double[]){0, 1}), *s = rt_of(2, td, (const double[]){1, 0}), *y = NULL;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(rope(0, x, c, s, &y, &msg), PAR_OK);
    expect_values(y, (const double[]){-3, 2, 1, 4}, 0);
    rt_del(y);
    CU_ASSERT_EQUAL_FATAL(rope(1, x, c, s, &y, &msg), PAR_OK);
    expect_values(y, (const double[]){-2, 1, 3, 4}, 0);
    rt_del(y);
    /* IEEE 754 on the ideal operands: x = [inf, 1, 2, NaN] with pair 0's (c, s) = (1, 0) and pair 1's (0, 1),
     * half-split pairs (inf, 2) and (1, NaN): y0 = inf * 1 - 2 * 0 = inf, y2 = 2 * 1 + inf * 0 = NaN, pair 1 NaN */
    par_rt *xn = rt_of(4, xd, (const double[]){INFINITY, 1, 2, NAN});
    par_rt *cn = rt_of(2, td, (const double[]){1, 0}), *sn = rt_of(2, td, (const double[]){0, 1});
    CU_ASSERT_EQUAL_FATAL(rope(0, xn, cn, sn, &y, &msg), PAR_OK);
    CU_ASSERT(isinf(y->v[0]) && y->v[0] > 0 && isnan(y->v[1]) && isnan(y->v[2]) && isnan(y->v[3]));
    rt_del(y), rt_del(xn), rt_del(cn), rt_del(sn);
    int64_t bad[2] = {1, 3}, xo[4] = {1, 1, 1, 3};
    par_rt *c3 = rt_of(2, bad, (const double[]){0, 0, 0}), *x3 = rt_of(4, xo, (const double[]){1, 2, 3});
    expect_error(rope(0, x, c3, s, NULL, &msg), &msg, "input 1 (cos)");
    expect_error(rope(0, x3, c, s, NULL, &msg), &msg, "even");
    rt_del(x), rt_del(c), rt_del(s), rt_del(c3), rt_del(x3);
}

/* q [1,1,2,1] = [1, 0], k [1,1,2,1] = [0, ln 3], v [1,1,2,1] = [4, 8], scale 1. Row 0: t = [0, ln 3], p = [1/4, 3/4],
 * o = 1 + 6 = 7. Row 1: t = [0, 0], p = [1/2, 1/2], o = 6. Causal: row 0 sees key 0 only, o = 4; row 1 both, 6.
 * The additive mask [[0, -inf], [0, 0]] is the causal mask: [4, 6] again. */
static void test_sdpa_values(void)
{
    int64_t d[4] = {1, 1, 2, 1}, md[2] = {2, 2};
    par_rt *q = rt_of(4, d, (const double[]){1, 0}), *k = rt_of(4, d, (const double[]){0, log(3.0)});
    par_rt *v = rt_of(4, d, (const double[]){4, 8}), *m = rt_of(2, md, (const double[]){0, -INFINITY, 0, 0});
    par_rt *y = NULL;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(sdpa(0, 1, q, k, v, NULL, &y, &msg), PAR_OK);
    expect_values(y, (const double[]){7, 6}, 1e-14);
    rt_del(y);
    CU_ASSERT_EQUAL_FATAL(sdpa(1, 1, q, k, v, NULL, &y, &msg), PAR_OK);
    expect_values(y, (const double[]){4, 6}, 1e-14);
    CU_ASSERT(y->e[0] > 0 && y->e[0] < 1e-5);
    rt_del(y);
    CU_ASSERT_EQUAL_FATAL(sdpa(0, 1, q, k, v, m, &y, &msg), PAR_OK);
    expect_values(y, (const double[]){4, 6}, 1e-14);
    CU_ASSERT(y->e[0] < 1e-5); /* the -inf key is an exact 0 term, not an unbounded one */
    rt_del(y);
    rt_del(q), rt_del(k), rt_del(v), rt_del(m);
}

/* Grouped-query heads: q [1,2,1,1] = [1, 0] (heads 0 and 1), one key/value head k = [0, ln 3], v = [4, 8]: head 0
 * is row 0 above (7), head 1 row 1 (6). Two kv heads for three query heads is refused; so is a mask that does not
 * broadcast. A row whose keys are all masked is NaN. */
static void test_sdpa_gqa_and_errors(void)
{
    int64_t qd[4] = {1, 2, 1, 1}, kd[4] = {1, 1, 2, 1}, q3d[4] = {1, 3, 1, 1}, k2d[4] = {1, 2, 2, 1}, md[2] = {1, 3};
    par_rt *q = rt_of(4, qd, (const double[]){1, 0}), *k = rt_of(4, kd, (const double[]){0, log(3.0)});
    par_rt *v = rt_of(4, kd, (const double[]){4, 8}), *q3 = rt_of(4, q3d, (const double[]){1, 0, 1});
    par_rt *k2 = rt_of(4, k2d, (const double[]){0, 0, 0, 0}), *m3 = rt_of(2, md, (const double[]){0, 0, 0});
    int64_t ad[2] = {1, 2};
    par_rt *mall = rt_of(2, ad, (const double[]){-INFINITY, -INFINITY}), *y = NULL;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(sdpa(0, 1, q, k, v, NULL, &y, &msg), PAR_OK);
    expect_values(y, (const double[]){7, 6}, 1e-14);
    rt_del(y);
    expect_error(sdpa(0, 1, q3, k2, k2, NULL, NULL, &msg), &msg, "multiple");
    expect_error(sdpa(0, 1, q, k, v, m3, NULL, &msg), &msg, "input 3 (mask)");
    expect_error(sdpa(0, -1, q, k, v, NULL, NULL, &msg), &msg, "scale");
    CU_ASSERT_EQUAL_FATAL(sdpa(0, 1, q, k, v, mall, &y, &msg), PAR_OK);
    CU_ASSERT(isnan(y->v[0]) && isnan(y->v[1]));
    rt_del(y);
    rt_del(q), rt_del(k), rt_del(v), rt_del(q3), rt_del(k2), rt_del(m3), rt_del(mall);
}

/* x [2,3] = [[1, 2, 3], [4, 5, 6]], src [2,1] = [10, 20], dim 1, start 2: [[1, 2, 10], [4, 5, 20]]; dim -2 (0) with
 * src [1,3] = [7, 8, 9] at start 1: [[1, 2, 3], [7, 8, 9]]. Start 3 does not fit. Budgets travel with elements. */
static void test_slice_scatter_values(void)
{
    int64_t xd[2] = {2, 3}, sd[2] = {2, 1}, s0[2] = {1, 3};
    par_rt *x = rt_of(2, xd, (const double[]){1, 2, 3, 4, 5, 6}), *src = rt_of(2, sd, (const double[]){10, 20});
    par_rt *row = rt_of(2, s0, (const double[]){7, 8, 9}), *y = NULL;
    src->e[1] = 0.25;
    par_msg msg;
    par_attr a[2] = {par_a_int("dim", 1), par_a_int("start", 2)};
    par_rt *in[2] = {x, src};
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_slice_scatter, par_ref_slice_scatter, "slice_scatter", 2, in, a, 2, &y,
                                 &msg), PAR_OK);
    expect_values(y, (const double[]){1, 2, 10, 4, 5, 20}, 0);
    CU_ASSERT_EQUAL(y->e[5], 0.25);
    CU_ASSERT_EQUAL(y->e[0], 0);
    rt_del(y);
    par_attr b[2] = {par_a_int("dim", -2), par_a_int("start", 1)};
    in[1] = row;
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_slice_scatter, par_ref_slice_scatter, "slice_scatter", 2, in, b, 2, &y,
                                 &msg), PAR_OK);
    expect_values(y, (const double[]){1, 2, 3, 7, 8, 9}, 0);
    rt_del(y);
    par_attr e[2] = {par_a_int("dim", 1), par_a_int("start", 3)};
    in[1] = src;
    expect_error(run_op(par_infer_slice_scatter, NULL, "slice_scatter", 2, in, e, 2, NULL, &msg), &msg, "start");
    rt_del(x), rt_del(src), rt_del(row);
}

/* rope over rows [rows, D] at positions 0..rows-1 with the real frequencies, x uniform in [-1, 1) held within
 * held_e |x|: the f32 forms (two products and a sum; a product and a fused multiply-add) within the budget; returns
 * the worst error/budget of the mutation (0 none, 1 the other pair layout). */
static double rope_check(int64_t rows, int64_t D, int inter, double held_e, int mu, const char *what)
{
    const int64_t half = D / 2;
    int64_t xd[2] = {rows, D}, td[2] = {rows, half};
    uint64_t seed = 99 + (uint64_t)D;
    par_rt *x = rt_new(PAR_DTYPE_F32, 2, xd), *c = rt_new(PAR_DTYPE_F32, 2, td), *s = rt_new(PAR_DTYPE_F32, 2, td);
    for (int64_t i = 0; i < x->numel; i++) x->v[i] = (float)rng_f(&seed, -1, 1), x->e[i] = held_e * fabs(x->v[i]);
    for (int64_t p = 0; p < rows; p++)
        for (int64_t i = 0; i < half; i++) {
            double th = (double)p * pow(10000.0, -2.0 * (double)i / (double)D);
            c->v[p * half + i] = (float)cos(th), s->v[p * half + i] = (float)sin(th);
        }
    par_rt *y = NULL;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(rope(inter, x, c, s, &y, &msg), PAR_OK);
    ratio r = {0};
    double worst = 0;
    for (int64_t p = 0; p < rows; p++)
        for (int64_t i = 0; i < half; i++) {
            const int lay = mu ? !inter : inter;
            const int64_t a = p * D + (lay ? 2 * i : i), b = p * D + (lay ? 2 * i + 1 : i + half);
            const float xa = held(&seed, x->v[a], x->e[a]), xb = held(&seed, x->v[b], x->e[b]);
            const float cv = (float)c->v[p * half + i], sv = (float)s->v[p * half + i];
            const float got[2][2] = {{xa * cv - xb * sv, xb * cv + xa * sv},
                                     {fmaf(xa, cv, -(xb * sv)), fmaf(xb, cv, xa * sv)}};
            const int64_t ra = p * D + (inter ? 2 * i : i), rb = p * D + (inter ? 2 * i + 1 : i + half);
            for (int f = 0; f < 2; f++) {
                double qa = fabs(got[f][0] - y->v[ra]) / y->e[ra], qb = fabs(got[f][1] - y->v[rb]) / y->e[rb];
                worst = fmax(worst, fmax(qa, qb));
                if (!mu) ratio_add(&r, got[f][0], y->v[ra], y->e[ra]), ratio_add(&r, got[f][1], y->v[rb], y->e[rb]);
            }
        }
    if (!mu) ratio_report(what, &r);
    rt_del(x), rt_del(c), rt_del(s), rt_del(y);
    return worst;
}

static void test_rope_budget(void)
{
    CU_ASSERT(rope_check(32, 64, 0, 0, 0, "rope D=64 half-split") <= 1);
    CU_ASSERT(rope_check(32, 64, 1, 0, 0, "rope D=64 interleaved") <= 1);
    CU_ASSERT(rope_check(17, 128, 0, 1e-4, 0, "rope D=128 held 1e-4") <= 1);
    double q = rope_check(32, 64, 0, 0, 1, NULL);
    PAR_TEST_NOTE("\n  rope pair layout confused: error/budget %.3g", q);
    CU_ASSERT(q > 100);
}

/* The f32 forms of one sdpa query row the budget claims to cover, over q [Sq, D], k [Skv, D], v [Skv, Dv] of one
 * head (held inputs already drawn) and an additive mask row m (or NULL): form 0 stores the scores, normalizes them
 * and takes the products (a decomposed graph, the cpu backend); form 1 streams (online softmax, the example
 * backend). mu: 1 the causal mask one key late (key i + 1 visible to query i), 2 the last key dropped. */
static void sdpa_row_f32(int form, int mu, int causal, const float *qi, const float *k, const float *v,
                         const float *m, int64_t i, int64_t Skv, int64_t D, int64_t Dv, float scale, float *o)
{
    float t[64], mx = -INFINITY, l = 0.0f;
    int64_t n = causal ? (i + 1 + (mu == 1) < Skv ? i + 1 + (mu == 1) : Skv) : Skv;
    if (mu == 2) n--;
    for (int64_t d = 0; d < Dv; d++) o[d] = 0.0f;
    for (int64_t j = 0; j < n; j++) {
        float a = 0.0f;
        for (int64_t d = 0; d < D; d++) a += qi[d] * k[j * D + d];
        t[j] = a * scale + (m ? m[j] : 0.0f);
        if (form == 1) {
            if (t[j] > mx) {
                const float c = expf(mx - t[j]);
                l *= c;
                for (int64_t d = 0; d < Dv; d++) o[d] *= c;
                mx = t[j];
            }
            const float w = expf(t[j] - mx);
            l += w;
            for (int64_t d = 0; d < Dv; d++) o[d] += w * v[j * Dv + d];
        }
        mx = t[j] > mx ? t[j] : mx;
    }
    if (form == 1) {
        for (int64_t d = 0; d < Dv; d++) o[d] /= l;
        return;
    }
    for (int64_t j = 0; j < n; j++) l += (t[j] = expf(t[j] - mx));
    for (int64_t j = 0; j < n; j++) t[j] /= l;
    for (int64_t j = 0; j < n; j++)
        for (int64_t d = 0; d < Dv; d++) o[d] += t[j] * v[j * Dv + d];
}

/* sdpa of one batch, Hq query heads over Hkv key/value heads, Sq = Skv = S, inputs U[-a, a) (a = 2: peaked
 * softmax rows) held within held_e |x|, causal or an additive mask U[-2, 0): both f32 forms within the budget;
 * returns the worst error/budget of mutation mu (0: none). */
static double sdpa_check(int64_t Hq, int64_t Hkv, int64_t S, int64_t D, int causal, int masked, double held_e, int mu,
                         const char *what)
{
    int64_t qd[4] = {1, Hq, S, D}, kd[4] = {1, Hkv, S, D}, md[2] = {S, S};
    uint64_t seed = 7 + (uint64_t)(S * D + Hq);
    par_rt *q = rt_new(PAR_DTYPE_F32, 4, qd), *k = rt_new(PAR_DTYPE_F32, 4, kd), *v = rt_new(PAR_DTYPE_F32, 4, kd);
    par_rt *m = masked ? rt_new(PAR_DTYPE_F32, 2, md) : NULL;
    par_rt *all[4] = {q, k, v, m};
    for (int t = 0; t < 4; t++)
        for (int64_t i = 0; all[t] && i < all[t]->numel; i++) {
            all[t]->v[i] = (float)(t == 3 ? rng_f(&seed, -2, 0) : rng_f(&seed, -2, 2));
            all[t]->e[i] = t == 3 ? 0 : held_e * fabs(all[t]->v[i]);
        }
    par_rt *y = NULL;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(sdpa(causal, 0, q, k, v, m, &y, &msg), PAR_OK);
    const float scale = (float)(1.0 / sqrt((double)D));
    float *hq = malloc(sizeof(float) * (size_t)(D)), *hk = malloc(sizeof(float) * (size_t)(S * D));
    float *hv = malloc(sizeof(float) * (size_t)(S * D)), *hm = malloc(sizeof(float) * (size_t)S), o[64];
    ratio r = {0};
    double worst = 0;
    for (int64_t h = 0; h < Hq; h++)
        for (int64_t i = 0; i < S; i++) {
            const int64_t hk0 = (h / (Hq / Hkv)) * S * D, q0 = (h * S + i) * D;
            for (int64_t d = 0; d < D; d++) hq[d] = held(&seed, q->v[q0 + d], q->e[q0 + d]);
            for (int64_t j = 0; j < S * D; j++)
                hk[j] = held(&seed, k->v[hk0 + j], k->e[hk0 + j]), hv[j] = held(&seed, v->v[hk0 + j], v->e[hk0 + j]);
            for (int64_t j = 0; m && j < S; j++) hm[j] = (float)m->v[i * S + j];
            for (int form = 0; form < 2; form++) {
                sdpa_row_f32(form, mu, causal, hq, hk, hv, m ? hm : NULL, i, S, D, D, scale, o);
                for (int64_t d = 0; d < D; d++) {
                    const int64_t yi = (h * S + i) * D + d;
                    worst = fmax(worst, fabs(o[d] - y->v[yi]) / y->e[yi]);
                    if (!mu) ratio_add(&r, o[d], y->v[yi], y->e[yi]);
                }
            }
        }
    if (!mu) ratio_report(what, &r);
    free(hq), free(hk), free(hv), free(hm);
    rt_del(q), rt_del(k), rt_del(v), rt_del(m), rt_del(y);
    return worst;
}

static void test_sdpa_budget(void)
{
    CU_ASSERT(sdpa_check(4, 2, 16, 32, 1, 0, 0, 0, "sdpa GQA 4:2 causal") <= 1);
    CU_ASSERT(sdpa_check(2, 1, 24, 64, 0, 1, 0, 0, "sdpa MQA 2:1 additive mask") <= 1);
    CU_ASSERT(sdpa_check(2, 2, 16, 16, 1, 0, 1e-4, 0, "sdpa causal held 1e-4") <= 1);
    double late = sdpa_check(4, 2, 16, 32, 1, 0, 0, 1, NULL), drop = sdpa_check(2, 1, 24, 64, 0, 1, 0, 2, NULL);
    PAR_TEST_NOTE("\n  sdpa causal mask one key late: error/budget %.3g; last key dropped: %.3g", late, drop);
    CU_ASSERT(late > 100);
    CU_ASSERT(drop > 100);
}

static const CU_TestInfo tests[] = {
    {"rope values, both layouts, errors", test_rope_values},
    {"sdpa values, causal, additive mask", test_sdpa_values},
    {"sdpa grouped-query heads, errors, all masked", test_sdpa_gqa_and_errors},
    {"slice_scatter values and errors", test_slice_scatter_values},
    {"rope budget sound vs f32 forms, not vacuous", test_rope_budget},
    {"sdpa budget sound vs stored and streaming forms, not vacuous", test_sdpa_budget},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("ref_attention", tests)
