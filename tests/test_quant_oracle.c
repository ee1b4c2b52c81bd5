/*
 * test_quant_oracle.c - the integer oracle (docs/quantization.md): a correct integer result passes exactly; a result
 * computed under another requantization scheme passes with its one-step differences labelled; a two-step difference
 * fails, and so does a one-step difference no scheme or tie explains; a systematic +1 bias over many elements fails
 * even when every element is within its own range; ties of the declared scheme's arithmetic rounded by another rule
 * fail although their steps are labelled (docs/quantization.md, "Ties"). The "backends" here are integer convolutions written in this
 * file (direct loops), requantized by an independent fp32 model or by the requant.c schemes. Last, the quantized
 * twin of a float case (oracle/quantize.c).
 */
#include <math.h>
#include <stdlib.h>

#include "core/graph.h"
#include "oracle/oracle.h"
#include "core/prng.h"
#include "oracle/quantize.h"
#include "core/requant.h"
#include "tmain.h"

enum { C = 4, H = 10, W = 10, O = 6, K = 3, NOUT = O * H * W };

/* Power-of-two scales make the ratios s_x s_w / s_out powers of two: ties (acc * r = k + 1/2) are frequent, which is
 * what this test needs. Ratios: 1/32, 1/16, 1/64, 1/32, 1/16, 1/128. */
static const float SX = 0.5f, SO = 4.0f;
static const int32_t ZX = 3, ZO = 128;
static const float WS[O] = {0.25f, 0.5f, 0.125f, 0.25f, 0.5f, 0.0625f};

typedef struct fixture {
    uint8_t x[C * H * W];
    int8_t w[O * C * K * K], w2[O * O * K * K];
    int32_t b[O], b2[O];
    par_graph *g;
    int32_t y1; /* value index of conv1's output */
} fixture;

static void fill(fixture *f, uint64_t seed)
{
    par_prng r;
    par_prng_seed(&r, seed);
    for (int i = 0; i < C * H * W; i++) f->x[i] = (uint8_t)(par_prng_uniform(&r) * 16);
    for (int i = 0; i < O * C * K * K; i++) f->w[i] = (int8_t)((int)(par_prng_uniform(&r) * 9) - 4);
    for (int i = 0; i < O * O * K * K; i++) f->w2[i] = (int8_t)((int)(par_prng_uniform(&r) * 9) - 4);
    for (int i = 0; i < O; i++) f->b[i] = (int32_t)(par_prng_uniform(&r) * 100) - 50;
    for (int i = 0; i < O; i++) f->b2[i] = (int32_t)(par_prng_uniform(&r) * 100) - 50;
}

/* x (qu8) -> conv1 (qs8 per-channel weights, i32 bias, pad 1) -> y1 (qu8), and with two_layers -> conv2 (qs8
 * per-tensor 1/4 weights) -> y2 (qu8, scale 16: an input step moves it by at most a quarter step per tap). */
static void build(fixture *f, int two_layers) /* 2: one layer, then dequantize */
{
    par_msg m = {{0}};
    f->g = par_graph_create("qconv");
    int32_t x = par_graph_add_input(f->g, "x", PAR_DTYPE_QU8, 4, (int64_t[]){1, C, H, W}, &m);
    CU_ASSERT_FATAL(par_graph_set_quant(f->g, x, SX, ZX, &m) == PAR_OK);
    int32_t w = par_graph_add_const(f->g, "w", PAR_DTYPE_QS8, 4, (int64_t[]){O, C, K, K}, f->w, &m);
    CU_ASSERT_FATAL(par_graph_set_channel_quant(f->g, w, 0, WS, O, &m) == PAR_OK);
    int32_t b = par_graph_add_const(f->g, "b", PAR_DTYPE_I32, 1, (int64_t[]){O}, f->b, &m);
    par_attr a[] = {par_a_ints("padding", 4, (int64_t[]){1, 1, 1, 1})};
    par_out_spec o1 = {"y1", PAR_DTYPE_QU8, SO, ZO};
    int32_t n1 = par_graph_add_node(f->g, "conv2d", "conv1", 3, (int32_t[]){x, w, b}, 1, a, &o1, &m);
    CU_ASSERT_FATAL(n1 >= 0);
    f->y1 = par_graph_desc_of(f->g)->nodes[n1].outputs[0];
    int32_t out = f->y1;
    if (two_layers == 2) {
        int32_t nd = par_graph_add_node(f->g, "dequantize", "deq", 1, &f->y1, 0, NULL, NULL, &m);
        CU_ASSERT_FATAL(nd >= 0);
        out = par_graph_desc_of(f->g)->nodes[nd].outputs[0];
    } else if (two_layers) {
        int32_t w2 = par_graph_add_const(f->g, "w2", PAR_DTYPE_QS8, 4, (int64_t[]){O, O, K, K}, f->w2, &m);
        CU_ASSERT_FATAL(par_graph_set_quant(f->g, w2, 0.25f, 0, &m) == PAR_OK);
        int32_t b2 = par_graph_add_const(f->g, "b2", PAR_DTYPE_I32, 1, (int64_t[]){O}, f->b2, &m);
        par_out_spec o2 = {"y2", PAR_DTYPE_QU8, 16.0f, 128};
        int32_t n2 = par_graph_add_node(f->g, "conv2d", "conv2", 3, (int32_t[]){f->y1, w2, b2}, 1, a, &o2, &m);
        CU_ASSERT_FATAL(n2 >= 0);
        out = par_graph_desc_of(f->g)->nodes[n2].outputs[0];
    }
    CU_ASSERT_FATAL(par_graph_mark_output(f->g, out, &m) == PAR_OK);
    CU_ASSERT_FATAL(par_graph_finalize(f->g, &m) == PAR_OK);
}

static par_ref_result *reference(fixture *f, par_requant scheme)
{
    par_prec p = par_prec_for(PAR_ARITH_F32);
    p.requant = scheme;
    const void *ins[] = {f->x};
    par_ref_result *r = NULL;
    par_msg m = {{0}};
    CU_ASSERT_FATAL(par_ref_run(par_graph_desc_of(f->g), &p, ins, &r, &m) == PAR_OK);
    return r;
}

/* Requantization models of the test's backends. INDEP_FP32 is written here from XNNPACK's definition, independent of
 * requant.c: a float ratio, a float product, round half to even. */
enum { INDEP_FP32 = 10 };

static int32_t requant(int scheme, int64_t acc, float sx, float ws, float so, int32_t zo)
{
    int32_t v;
    if (scheme == INDEP_FP32) {
        float r = sx * ws / so;
        v = (int32_t)nearbyintf((float)acc * r) + zo;
    } else {
        par_requant_params p;
        par_msg m = {{0}};
        CU_ASSERT_FATAL(par_requant_params_for(&p, (par_requant)scheme, sx, ws, so, zo, 0, 255, &m) == PAR_OK);
        return par_requant_apply(acc, &p);
    }
    return v < 0 ? 0 : v > 255 ? 255 : v;
}

/* 3x3, pad 1, stride 1 integer convolution of a qu8 NCHW tensor with qs8 OIHW weights, then requantization. */
static void conv_q(int scheme, const uint8_t *x, int32_t zx, float sx, int cin, const int8_t *w, const float *ws,
                   const int32_t *b, float so, int32_t zo, uint8_t *y)
{
    for (int o = 0; o < O; o++)
        for (int i = 0; i < H; i++)
            for (int j = 0; j < W; j++) {
                int64_t acc = b[o];
                for (int c = 0; c < cin; c++)
                    for (int ki = 0; ki < K; ki++)
                        for (int kj = 0; kj < K; kj++) {
                            int ii = i + ki - 1, jj = j + kj - 1;
                            if (ii < 0 || ii >= H || jj < 0 || jj >= W) continue;
                            acc += (int64_t)(x[(c * H + ii) * W + jj] - zx) * w[((o * cin + c) * K + ki) * K + kj];
                        }
                y[(o * H + i) * W + j] = (uint8_t)requant(scheme, acc, sx, ws[o], so, zo);
            }
}

static void backend1(const fixture *f, int scheme, uint8_t *y)
{
    conv_q(scheme, f->x, ZX, SX, C, f->w, WS, f->b, SO, ZO, y);
}

static void backend2(const fixture *f, int scheme, uint8_t *y)
{
    uint8_t y1[NOUT];
    const float ws2[O] = {0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f};
    conv_q(scheme, f->x, ZX, SX, C, f->w, WS, f->b, SO, ZO, y1);
    conv_q(scheme, y1, ZO, SO, O, f->w2, ws2, f->b2, 16.0f, 128, y);
}

static const par_rt *out_ref(const fixture *f, const par_ref_result *r)
{
    return &r->values[par_graph_desc_of(f->g)->outputs[0]];
}

/* The guard: a comparison over outputs that are all equal proves nothing. */
static void assert_varied(const uint8_t *y, int n)
{
    int lo = 255, hi = 0;
    for (int i = 0; i < n; i++) {
        lo = y[i] < lo ? y[i] : lo;
        hi = y[i] > hi ? y[i] : hi;
    }
    CU_ASSERT(hi - lo >= 8);
}

static void test_exact(void)
{
    fixture f;
    fill(&f, 11);
    build(&f, 0);
    uint8_t y[NOUT];
    backend1(&f, INDEP_FP32, y);
    assert_varied(y, NOUT);
    par_ref_result *r = reference(&f, PAR_REQUANT_FP32);
    par_metrics m;
    CU_ASSERT_EQUAL(par_oracle_compare(out_ref(&f, r), y, &m), 0);
    CU_ASSERT_EQUAL(m.n, NOUT);
    CU_ASSERT_EQUAL(m.n_exact, NOUT);
    CU_ASSERT_EQUAL(m.n_labelled, 0);
    CU_ASSERT_EQUAL(m.hist[PAR_HIST_ZERO], NOUT);
    CU_ASSERT(m.quant == 1 && m.bias == 0 && !m.bias_over);
    /* the reference's integers under every scheme sit inside every scheme's labelled range */
    const par_rt *t = out_ref(&f, r);
    int64_t n_tie = 0;
    for (int64_t i = 0; i < t->numel; i++) {
        CU_ASSERT(t->ql[i] <= t->v[i] && t->v[i] <= t->qh[i]);
        CU_ASSERT(t->qh[i] - t->ql[i] <= 1);
        CU_ASSERT_EQUAL(t->e[i], 0); /* exact inputs: nothing propagated */
        n_tie += t->qh[i] > t->ql[i];
    }
    CU_ASSERT(n_tie > 10); /* the power-of-two ratios make ties frequent */
    CU_ASSERT(m.tie_n > 10 && m.tie_n <= n_tie); /* the fp32 product's exact ties, each rounded half to even */
    CU_ASSERT_EQUAL(m.tie_rule_n[PAR_TIE_EVEN], m.tie_n);
    CU_ASSERT(m.tie_rule_n[PAR_TIE_UP] < m.tie_n && m.tie_rule_n[PAR_TIE_DOWN] < m.tie_n); /* ties of both parities */
    CU_ASSERT(m.tie_declared == PAR_TIE_EVEN && !m.tie_over && m.tie_other == 0);
    par_ref_result_destroy(r);
    /* a reference declared rndnu (rndna) against a rndnu (rndna) backend: exact too, every tie the declared rule's */
    const int same[] = {PAR_REQUANT_RNDNU, PAR_REQUANT_RNDNA, PAR_REQUANT_PYTORCH_QNNP};
    const par_tie_rule rule[] = {PAR_TIE_UP, PAR_TIE_AWAY, PAR_TIE_EVEN};
    for (int k = 0; k < 3; k++) {
        backend1(&f, same[k], y);
        r = reference(&f, (par_requant)same[k]);
        CU_ASSERT_EQUAL(par_oracle_compare(out_ref(&f, r), y, &m), 0);
        CU_ASSERT_EQUAL(m.n_exact, NOUT);
        CU_ASSERT(m.tie_n > 10 && m.tie_rule_n[rule[k]] == m.tie_n && m.tie_declared == (int32_t)rule[k]);
        CU_ASSERT(!m.tie_over);
        par_ref_result_destroy(r);
    }
    par_graph_destroy(f.g);
}

static void test_other_scheme_labelled(void)
{
    fixture f;
    fill(&f, 12);
    build(&f, 0);
    par_ref_result *r = reference(&f, PAR_REQUANT_FP32);
    /* every element within its labelled range; but at the fp32 product's exact ties each rounds by its own rule,
     * which contradicts the declared half to even: the comparison fails on the ties alone */
    const int others[] = {PAR_REQUANT_RNDNU, PAR_REQUANT_GEMMLOWP, PAR_REQUANT_RNDNA};
    const par_tie_rule rule[] = {PAR_TIE_UP, PAR_TIE_AWAY, PAR_TIE_AWAY};
    for (int k = 0; k < 3; k++) {
        uint8_t y[NOUT];
        backend1(&f, others[k], y);
        assert_varied(y, NOUT);
        par_metrics m;
        CU_ASSERT_EQUAL(par_oracle_compare(out_ref(&f, r), y, &m), 1);
        CU_ASSERT_EQUAL(m.n_over, 0);
        CU_ASSERT(m.tie_over == 1 && m.tie_declared == PAR_TIE_EVEN);
        CU_ASSERT(m.tie_n > 10 && m.tie_rule_n[rule[k]] == m.tie_n && m.tie_rule_n[PAR_TIE_EVEN] < m.tie_n);
        CU_ASSERT(m.n_labelled > 0);
        CU_ASSERT_EQUAL(m.n_exact + m.n_labelled, NOUT);
        CU_ASSERT_EQUAL(m.hist[PAR_HIST_ZERO - 1] + m.hist[PAR_HIST_ZERO + 1], m.n_labelled);
        CU_ASSERT(fabs(m.bias) <= m.bias_bound && !m.bias_over);
        CU_ASSERT(m.max_abs == 1);
    }
    par_ref_result_destroy(r);
    par_graph_destroy(f.g);
}

static void test_steps_fail(void)
{
    fixture f;
    fill(&f, 13);
    build(&f, 0);
    par_ref_result *r = reference(&f, PAR_REQUANT_FP32);
    const par_rt *t = out_ref(&f, r);
    uint8_t y[NOUT], z[NOUT];
    backend1(&f, INDEP_FP32, y);
    /* two steps on one element in mid-range: FAIL, that element only */
    int64_t mid = -1, plain = -1;
    for (int64_t i = 0; i < NOUT; i++) {
        if (mid < 0 && y[i] > 10 && y[i] < 245) mid = i;
        if (plain < 0 && y[i] > 10 && y[i] < 245 && t->qh[i] == t->v[i] && t->ql[i] == t->v[i]) plain = i;
    }
    CU_ASSERT_FATAL(mid >= 0 && plain >= 0);
    memcpy(z, y, sizeof z);
    z[mid] += 2;
    par_metrics m;
    CU_ASSERT(par_oracle_compare(t, z, &m) >= 1);
    CU_ASSERT_EQUAL(m.n_over, 1);
    CU_ASSERT_EQUAL(m.worst_index, mid);
    CU_ASSERT_EQUAL(m.hist[PAR_HIST_ZERO + 2], 1);
    /* one step where no scheme and no tie explains it: FAIL */
    memcpy(z, y, sizeof z);
    z[plain] -= 1;
    CU_ASSERT(par_oracle_compare(t, z, &m) >= 1);
    CU_ASSERT_EQUAL(m.n_over, 1);
    CU_ASSERT(isinf(m.max_ratio));
    /* the other side of a labelled range: a tie element whose label is up, moved down: FAIL */
    int64_t up = -1;
    for (int64_t i = 0; i < NOUT && up < 0; i++)
        if (t->qh[i] > t->v[i] && t->ql[i] == t->v[i] && y[i] > 0) up = i;
    CU_ASSERT_FATAL(up >= 0);
    memcpy(z, y, sizeof z);
    z[up] -= 1;
    CU_ASSERT(par_oracle_compare(t, z, &m) >= 1);
    z[up] += 2; /* and up by one: labelled, but an exact tie of the fp32 product rounded against half to even */
    CU_ASSERT_EQUAL(par_oracle_compare(t, z, &m), 1);
    CU_ASSERT_EQUAL(m.n_labelled, 1);
    CU_ASSERT(m.n_over == 0 && m.tie_over == 1 && m.tie_rule_n[PAR_TIE_EVEN] == m.tie_n - 1);
    par_ref_result_destroy(r);
    par_graph_destroy(f.g);
}

/* Two layers: conv1's ties give conv2 a propagated budget of a step on most elements. A rndnu backend passes; one
 * that adds +1 wherever an element's own range allows it passes element by element but shows a bias beyond what
 * rounding explains: FAIL. */
static void test_bias(void)
{
    fixture f;
    fill(&f, 14);
    build(&f, 1);
    par_ref_result *r = reference(&f, PAR_REQUANT_FP32);
    const par_rt *t = out_ref(&f, r);
    uint8_t y[NOUT], z[NOUT];
    backend2(&f, INDEP_FP32, y);
    assert_varied(y, NOUT);
    par_metrics m;
    CU_ASSERT_EQUAL(par_oracle_compare(t, y, &m), 0);
    CU_ASSERT_EQUAL(m.n_exact, NOUT);
    CU_ASSERT(!m.tie_over);
    backend2(&f, PAR_REQUANT_RNDNU, z);
    /* in range and unbiased; conv2's ties with exact inputs (if any) show rndnu's rule */
    CU_ASSERT_EQUAL(par_oracle_compare(t, z, &m), m.tie_over);
    CU_ASSERT(m.n_over == 0 && !m.bias_over);
    CU_ASSERT_EQUAL(m.tie_rule_n[PAR_TIE_UP], m.tie_n);
    int64_t n_prop = 0, n_up = 0;
    for (int64_t i = 0; i < NOUT; i++) {
        n_prop += t->e[i] >= 1;
        z[i] = y[i];
        if (t->qh[i] + t->e[i] >= t->v[i] + 1 && y[i] < 255) {
            z[i] = (uint8_t)(y[i] + 1);
            n_up++;
        }
    }
    CU_ASSERT(n_prop > NOUT / 2); /* the propagated budget reaches most elements */
    int64_t bad = par_oracle_compare(t, z, &m);
    CU_ASSERT_EQUAL(m.n_over, 0);            /* every element within its own range */
    CU_ASSERT_EQUAL(m.hist[PAR_HIST_ZERO + 1], n_up);
    CU_ASSERT(m.bias_over == 1);             /* but the bias is beyond rounding */
    CU_ASSERT(m.bias > m.bias_bound);
    CU_ASSERT_EQUAL(bad, 1 + m.tie_over);
    par_ref_result_destroy(r);
    par_graph_destroy(f.g);
}

/* Through a dequantize: the float output's budget carries the labelled range, so another scheme's integers are
 * within the float oracle's budget; two steps off are not. The ties come through too: read back from the floats,
 * rndnu's integers round the fp32 product's exact ties half up, which fails the declared fp32. */
static void test_dequantized(void)
{
    fixture f;
    fill(&f, 16);
    build(&f, 2);
    par_ref_result *r = reference(&f, PAR_REQUANT_FP32);
    const par_rt *t = out_ref(&f, r);
    uint8_t y[NOUT];
    float z[NOUT];
    backend1(&f, PAR_REQUANT_RNDNU, y);
    int64_t n_diff = 0;
    const par_rt *q = &r->values[f.y1];
    for (int i = 0; i < NOUT; i++) {
        z[i] = SO * (float)(y[i] - ZO);
        n_diff += y[i] != q->v[i];
    }
    CU_ASSERT(n_diff > 0);
    par_metrics m;
    CU_ASSERT_EQUAL(par_oracle_compare(t, z, &m), 1);
    CU_ASSERT(m.quant == 0 && m.max_abs == SO && m.n_over == 0);
    CU_ASSERT(m.tie_over == 1 && m.tie_n > 10 && m.tie_rule_n[PAR_TIE_UP] == m.tie_n);
    /* the fp32 integers through the same dequantize: no contradiction */
    float zf[NOUT];
    for (int i = 0; i < NOUT; i++) zf[i] = SO * (float)(q->v[i] - ZO);
    CU_ASSERT_EQUAL(par_oracle_compare(t, zf, &m), 0);
    CU_ASSERT(m.tie_n > 10 && m.tie_rule_n[PAR_TIE_EVEN] == m.tie_n && !m.tie_over);
    int64_t mid = -1;
    for (int i = 0; i < NOUT && mid < 0; i++)
        if (y[i] > 10 && y[i] < 245 && y[i] == q->v[i]) mid = i;
    CU_ASSERT_FATAL(mid >= 0);
    z[mid] += 2 * SO;
    CU_ASSERT_EQUAL(par_oracle_compare(t, z, &m), 2); /* the element over budget, and the ties */
    CU_ASSERT_EQUAL(m.n_over, 1);
    par_ref_result_destroy(r);
    par_graph_destroy(f.g);
}

/* Every labelled element rounded up: the bias is the whole difference and still explained by the labels, but the
 * exact ties among them now contradict half to even. */
static void test_bias_single_tie(void)
{
    fixture f;
    fill(&f, 15);
    build(&f, 0);
    par_ref_result *r = reference(&f, PAR_REQUANT_FP32);
    const par_rt *t = out_ref(&f, r);
    uint8_t y[NOUT];
    backend1(&f, INDEP_FP32, y);
    int64_t n_up = 0;
    for (int64_t i = 0; i < NOUT; i++)
        if (t->qh[i] > t->v[i] && y[i] < 255) {
            y[i]++;
            n_up++;
        }
    CU_ASSERT(n_up > 0);
    par_metrics m;
    CU_ASSERT_EQUAL(par_oracle_compare(t, y, &m), 1); /* every tie up: the largest bias rounding causes */
    CU_ASSERT(m.bias > 0 && m.bias <= m.bias_bound && !m.bias_over && m.n_over == 0);
    CU_ASSERT(m.tie_over && m.tie_rule_n[PAR_TIE_UP] == m.tie_n);
    CU_ASSERT_EQUAL(m.n_labelled, n_up);
    par_ref_result_destroy(r);
    par_graph_destroy(f.g);
}

/* The quantized twin of a float case: batch_norm folded, qs8 per-channel weights with an i32 bias, qu8 activations,
 * quantize/dequantize at the edges; its reference output close to the float one (8-bit quantization error). */
static par_case *float_case(void)
{
    par_case *c = par_case_create("twin", 3);
    int32_t x = par_case_input(c, "x", PAR_DTYPE_F32, 4, (int64_t[]){1, 3, 8, 8}, (par_gen){.dist = PAR_DIST_UNIFORM, .a = -1, .b = 1});
    int32_t w = par_case_const(c, "w", PAR_DTYPE_F32, 4, (int64_t[]){8, 3, 3, 3}, (par_gen){.dist = PAR_DIST_NORMAL, .a = 0, .b = 1, .fan_in = 1});
    int32_t b = par_case_const(c, "b", PAR_DTYPE_F32, 1, (int64_t[]){8}, (par_gen){.dist = PAR_DIST_UNIFORM, .a = -0.1, .b = 0.1});
    int32_t ga = par_case_const(c, "ga", PAR_DTYPE_F32, 1, (int64_t[]){8}, (par_gen){.dist = PAR_DIST_UNIFORM, .a = 0.5, .b = 1.5});
    int32_t be = par_case_const(c, "be", PAR_DTYPE_F32, 1, (int64_t[]){8}, (par_gen){.dist = PAR_DIST_UNIFORM, .a = -0.1, .b = 0.1});
    int32_t mu = par_case_const(c, "mu", PAR_DTYPE_F32, 1, (int64_t[]){8}, (par_gen){.dist = PAR_DIST_UNIFORM, .a = -0.1, .b = 0.1});
    int32_t va = par_case_const(c, "va", PAR_DTYPE_F32, 1, (int64_t[]){8}, (par_gen){.dist = PAR_DIST_UNIFORM, .a = 0.5, .b = 1.5});
    int32_t l = par_case_const(c, "l", PAR_DTYPE_F32, 2, (int64_t[]){10, 8}, (par_gen){.dist = PAR_DIST_NORMAL, .a = 0, .b = 1, .fan_in = 1});
    par_attr a[] = {par_a_ints("padding", 4, (int64_t[]){1, 1, 1, 1})};
    int32_t y = par_case_node(c, "conv2d", 3, (int32_t[]){x, w, b}, 1, a, NULL);
    y = par_case_node(c, "batch_norm", 5, (int32_t[]){y, ga, be, mu, va}, 0, NULL, NULL);
    y = par_case_node(c, "relu6", 1, &y, 0, NULL, NULL);
    y = par_case_node(c, "global_avg_pool2d", 1, &y, 0, NULL, NULL);
    y = par_case_node(c, "flatten", 1, &y, 0, NULL, NULL);
    y = par_case_node(c, "linear", 2, (int32_t[]){y, l}, 0, NULL, NULL);
    par_case_output(c, y);
    CU_ASSERT_FATAL(par_case_finish(c) == PAR_OK);
    return c;
}

static const par_rt *run_case(const par_case *c, par_ref_result **r)
{
    void **bufs = NULL;
    par_msg m = {{0}};
    par_prec p = par_prec_for(PAR_ARITH_F32);
    CU_ASSERT_FATAL(par_case_make_inputs(c, &bufs, &m) == PAR_OK);
    CU_ASSERT_FATAL(par_ref_run(par_graph_desc_of(c->graph), &p, (const void *const *)bufs, r, &m) == PAR_OK);
    par_case_free_inputs(c, bufs);
    return &(*r)->values[par_graph_desc_of(c->graph)->outputs[0]];
}

/* The twin's text round-trips through the case reader. */
static void expect_text_roundtrip(const par_case *q, const char *origin)
{
    par_msg m = {{0}};
    char *text = par_case_to_json(q, 0);
    CU_ASSERT_FATAL(text != NULL);
    par_case *back = par_case_parse(text, strlen(text), origin, &m);
    CU_ASSERT(back != NULL);
    par_case_destroy(back);
    free(text);
}

static void test_twin(void)
{
    par_case *f = float_case();
    par_msg m = {{0}};
    for (int seeded = 0; seeded <= 1; seeded++) {
        par_quant_opts o = {.act = PAR_DTYPE_QU8, .per_channel = 1, .seeded = seeded, .id = NULL};
        par_case *q = par_case_quantize(f, &o, &m);
        CU_ASSERT_FATAL(q != NULL);
        const par_graph_desc *g = par_graph_desc_of(q->graph);
        int n_bn = 0, n_conv = 0, n_quant = 0, n_deq = 0;
        for (int32_t i = 0; i < g->n_nodes; i++) {
            n_bn += !strcmp(g->nodes[i].op, "batch_norm");
            n_quant += !strcmp(g->nodes[i].op, "quantize");
            n_deq += !strcmp(g->nodes[i].op, "dequantize");
            if (!strcmp(g->nodes[i].op, "conv2d")) {
                n_conv++;
                const par_value *w = &g->values[g->nodes[i].inputs[1]], *b = &g->values[g->nodes[i].inputs[2]];
                CU_ASSERT(w->dtype == PAR_DTYPE_QS8 && w->quant_axis == 0 && w->channel_scales != NULL);
                CU_ASSERT(b->dtype == PAR_DTYPE_I32);
                CU_ASSERT(g->values[g->nodes[i].outputs[0]].dtype == PAR_DTYPE_QU8);
                int seeded_src = 0;
                for (int32_t k = 0; k < q->n_srcs; k++)
                    if (q->srcs[k].value == g->nodes[i].inputs[1]) seeded_src = q->srcs[k].kind == PAR_SRC_GEN;
                CU_ASSERT_EQUAL(seeded_src, seeded);
            }
        }
        CU_ASSERT(n_bn == 0 && n_conv == 1 && n_quant == 1 && n_deq == 1);
        CU_ASSERT(strcmp(q->id, "twin_qu8") == 0);
        if (!seeded) {
            /* the exact twin: the float network within its 8-bit quantization error */
            par_ref_result *rf = NULL, *rq = NULL;
            const par_rt *yf = run_case(f, &rf), *yq = run_case(q, &rq);
            double mx = 0, md = 0;
            for (int64_t i = 0; i < yf->numel; i++) {
                mx = fmax(mx, fabs(yf->v[i]));
                md = fmax(md, fabs(yf->v[i] - yq->v[i]));
            }
            CU_ASSERT(mx > 0.05);
            CU_ASSERT(md < 0.05 * mx);
            CU_ASSERT(md > 0); /* it is quantized: not bit-identical to the float network */
            par_ref_result_destroy(rf);
            par_ref_result_destroy(rq);
        }
        expect_text_roundtrip(q, "twin");
        par_case_destroy(q);
    }
    /* refusals name the reason */
    par_quant_opts bad = {.act = PAR_DTYPE_F32, .per_channel = 0, .seeded = 0, .id = NULL};
    CU_ASSERT(par_case_quantize(f, &bad, &m) == NULL);
    CU_ASSERT(strstr(m.text, "qu8, qs8 or qs16") != NULL);
    par_case_destroy(f);
}

/* --dtype qs16 (16a8w): conv2d and linear on qs16 with qs8 weights, every other op float between a dequantize and
 * a quantize; closer to the float network than the qu8 twin with the same weights (the activations carry 16 bits). */
static void test_twin_16a8w(void)
{
    par_case *f = float_case();
    par_msg m = {{0}};
    double md[2] = {0, 0}, mx = 0;
    for (int k = 0; k < 2; k++) {
        par_quant_opts o = {.act = k ? PAR_DTYPE_QS16 : PAR_DTYPE_QU8, .per_channel = 1, .seeded = 0, .id = NULL};
        par_case *q = par_case_quantize(f, &o, &m);
        CU_ASSERT_FATAL(q != NULL);
        const par_graph_desc *g = par_graph_desc_of(q->graph);
        int n_acc = 0, n_s16 = 0;
        for (int32_t i = 0; i < g->n_nodes; i++) {
            const par_value *y = &g->values[g->nodes[i].outputs[0]];
            const int acc = !strcmp(g->nodes[i].op, "conv2d") || !strcmp(g->nodes[i].op, "linear");
            n_acc += acc;
            if (k && y->dtype == PAR_DTYPE_QS16) {
                n_s16++;
                CU_ASSERT(y->zero_point == 0);
                CU_ASSERT(acc || !strcmp(g->nodes[i].op, "quantize"));
                if (acc) CU_ASSERT(g->values[g->nodes[i].inputs[1]].dtype == PAR_DTYPE_QS8);
            }
        }
        if (k) CU_ASSERT(n_s16 >= 2 * n_acc && n_acc == 2); /* each conv2d / linear and its input's quantize */
        par_ref_result *rf = NULL, *rq = NULL;
        const par_rt *yf = run_case(f, &rf), *yq = run_case(q, &rq);
        for (int64_t i = 0; i < yf->numel; i++) {
            mx = fmax(mx, fabs(yf->v[i]));
            md[k] = fmax(md[k], fabs(yf->v[i] - yq->v[i]));
        }
        par_ref_result_destroy(rf);
        par_ref_result_destroy(rq);
        expect_text_roundtrip(q, "twin16");
        par_case_destroy(q);
    }
    CU_ASSERT(mx > 0.05);
    CU_ASSERT(md[1] > 0 && md[1] < md[0]);
    par_case_destroy(f);
}

/* A small constant added to a wide tensor: calibrated as they are, the constant's scale (1/255 of its width 1) is
 * 1/7.8 of 2^-10 of the sum's (2,000 / 255), which no integer add accepts; the twin widens it and runs. */
static void test_twin_narrow_add(void)
{
    par_case *f = par_case_create("narrow_add", 1);
    int32_t x = par_case_input(f, "x", PAR_DTYPE_F32, 2, (int64_t[]){1, 12},
                               (par_gen){.dist = PAR_DIST_UNIFORM, .a = -1000, .b = 1000});
    int32_t k = par_case_const(f, "c", PAR_DTYPE_F32, 1, (int64_t[]){1},
                               (par_gen){.dist = PAR_DIST_UNIFORM, .a = 0, .b = 0.001});
    int32_t y = par_case_node(f, "add", 2, (int32_t[]){x, k}, 0, NULL, NULL);
    par_case_output(f, y);
    CU_ASSERT_FATAL(par_case_finish(f) == PAR_OK);
    par_msg m = {{0}};
    par_quant_opts o = {.act = PAR_DTYPE_QU8, .per_channel = 0, .seeded = 0, .id = NULL};
    par_case *q = par_case_quantize(f, &o, &m);
    CU_ASSERT_FATAL(q != NULL);
    const par_graph_desc *g = par_graph_desc_of(q->graph);
    for (int32_t i = 0; i < g->n_nodes; i++) {
        if (strcmp(g->nodes[i].op, "add") != 0) continue;
        const double so = g->values[g->nodes[i].outputs[0]].scale;
        for (int j = 0; j < 2; j++) {
            const double r = g->values[g->nodes[i].inputs[j]].scale / so;
            CU_ASSERT(r >= 0x1p-10 && r < 0x1p8);
        }
    }
    par_ref_result *rq = NULL;
    run_case(q, &rq); /* the reference accepts the twin's add */
    par_ref_result_destroy(rq);
    par_case_destroy(q);
    par_case_destroy(f);
}

static const CU_TestInfo tests[] = {
    {"correct integers pass exactly", test_exact},
    {"another scheme passes labelled", test_other_scheme_labelled},
    {"two steps, unexplained steps fail", test_steps_fail},
    {"systematic +1 bias fails", test_bias},
    {"all ties up is within the bias bound", test_bias_single_tie},
    {"dequantized output of another scheme", test_dequantized},
    {"quantized twin of a float case", test_twin},
    {"a twin's add keeps its scale ratios", test_twin_narrow_add},
    {"16a8w twin: conv2d and linear on qs16, closer to the float network than the qu8 twin", test_twin_16a8w},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("quant_oracle", tests)
