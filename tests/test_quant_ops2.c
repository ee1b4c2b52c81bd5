/*
 * test_quant_ops2.c - hand-computed integers of the quantized forms added to hardsigmoid, leaky_relu (LUT), mean and
 * adaptive_avg_pool2d (AVG), conv_transpose2d (ACC_AXIS1, per-channel scales on weight axis 1), matmul of two
 * activations (MUL), and of linear_dynamic (docs/quantization.md). Each graph is one node on quantized inputs given
 * as data; the reference (fp32 scheme, strict) and the qnnpack backend must both give the integers derived in the
 * comments from the definitions, never from the code under test. Ties are chosen so that round-half-to-even is
 * visible (a rounding rule that differs fails). Last, `parity quantize` on these forms: the static twin of a float
 * case using all of them runs on integers end to end (qnnpack bit-exact), and the dynamic twin turns linears into
 * linear_dynamic.
 */
#include <math.h>
#include <stdlib.h>

#include "core/case.h"
#include "core/graph.h"
#include "core/requant.h"
#include "oracle/quantize.h"
#include "reference/reference.h"
#include "tmain.h"

const par_backend *par_backend_qnnpack(void);

typedef struct tin {
    const char *name;
    par_dtype dt;
    int32_t rank;
    int64_t dims[4];
    float scale;
    int32_t zp;
    const void *data;
} tin;

/* One node `op` on graph inputs in[] (n_in of them) and constants cin[] (n_c), output spec o. */
static par_graph *one_node(const char *op, const tin *in, int n_in, const tin *cin, int n_c, const par_attr *at,
                           int n_at, par_out_spec o, const float *wcs, int32_t wcs_axis, int64_t wcs_n)
{
    par_msg m = {{0}};
    par_graph *g = par_graph_create("t");
    int32_t ids[8];
    for (int i = 0; i < n_in; i++) {
        ids[i] = par_graph_add_input(g, in[i].name, in[i].dt, in[i].rank, in[i].dims, &m);
        if (in[i].dt != PAR_DTYPE_F32) par_graph_set_quant(g, ids[i], in[i].scale, in[i].zp, &m);
    }
    for (int i = 0; i < n_c; i++) {
        int32_t k = par_graph_add_const(g, cin[i].name, cin[i].dt, cin[i].rank, cin[i].dims, cin[i].data, &m);
        if (i == 0 && wcs)
            par_graph_set_channel_quant(g, k, wcs_axis, wcs, wcs_n, &m);
        else if (cin[i].dt != PAR_DTYPE_F32)
            par_graph_set_quant(g, k, cin[i].scale, cin[i].zp, &m);
        ids[n_in + i] = k;
    }
    int32_t nd = par_graph_add_node(g, op, NULL, n_in + n_c, ids, n_at, at, &o, &m);
    CU_ASSERT_FATAL(nd >= 0);
    par_graph_mark_output(g, par_graph_desc_of(g)->nodes[nd].outputs[0], &m);
    if (par_graph_finalize(g, &m) != PAR_OK) fprintf(stderr, "\n  %s\n", m.text);
    CU_ASSERT_FATAL(m.text[0] == 0);
    return g;
}

/* The reference's output (strict fp32 scheme) and qnnpack's, both as doubles (integers, or f32 values). */
static void run_both(const par_graph *gr, const void *const *inputs, double *ref, double *bud, double *qnn)
{
    const par_graph_desc *d = par_graph_desc_of(gr);
    const par_value *ov = &d->values[d->outputs[0]];
    par_msg m = {{0}};
    par_prec p = par_prec_for(PAR_ARITH_F32);
    p.requant = PAR_REQUANT_FP32;
    p.requant_exact = 1;
    par_ref_result *r = NULL;
    CU_ASSERT_FATAL(par_ref_run(d, &p, inputs, &r, &m) == PAR_OK);
    for (int64_t i = 0; i < ov->numel; i++) {
        ref[i] = r->values[d->outputs[0]].v[i];
        if (bud) bud[i] = r->values[d->outputs[0]].e[i];
    }
    par_ref_result_destroy(r);

    const par_backend *be = par_backend_qnnpack();
    void *ctx = NULL, *prep = NULL;
    CU_ASSERT_FATAL(be->init(&ctx, &m) == PAR_OK);
    CU_ASSERT_FATAL(be->supports(ctx, d, 0, &m) == PAR_OK);
    CU_ASSERT_FATAL(be->prepare(ctx, d, &prep, &m) == PAR_OK);
    size_t es = ov->dtype == PAR_DTYPE_F32 ? 4 : 1;
    unsigned char *out = malloc(es * (size_t)ov->numel);
    void *outs[1] = {out};
    CU_ASSERT_EQUAL(be->bind(ctx, prep, inputs, outs, &m), PAR_OK);
    CU_ASSERT_EQUAL(be->run(ctx, prep, &m), PAR_OK);
    for (int64_t i = 0; i < ov->numel; i++)
        qnn[i] = ov->dtype == PAR_DTYPE_F32   ? (double)((float *)out)[i]
                 : ov->dtype == PAR_DTYPE_QS8 ? (double)(int8_t)out[i]
                                              : (double)out[i];
    free(out);
    be->release(ctx, prep);
    be->destroy(ctx);
}

static void expect_ints(const par_graph *g, const void *const *inputs, const double *want, int64_t n)
{
    double ref[64], qnn[64];
    run_both(g, inputs, ref, NULL, qnn);
    for (int64_t i = 0; i < n; i++) {
        if (ref[i] != want[i] || qnn[i] != want[i])
            fprintf(stderr, "\n  element %lld: want %g, reference %g, qnnpack %g\n", (long long)i, want[i], ref[i],
                    qnn[i]);
        CU_ASSERT_EQUAL(ref[i], want[i]);
        CU_ASSERT_EQUAL(qnn[i], want[i]);
    }
}

/* hardsigmoid: table[q] = clamp(z_out + rne(f(s_in (q - z_in)) / s_out)), f(x) = min(max(x + 3, 0), 6) / 6.
 * s_in = 0.05 (float: 0.0500000007), z_in = 128; output [0, 1] at 1/256, zero point 0.
 *   q = 128: x = 0, f = 0.5, 128                   q = 188: x = 3.0000000447, f = 1, 256 -> clamp 255
 *   q = 68: x = -3.0000000447, f = 0, 0            q = 138: x = 0.5000000075, f = 0.5833333346, 149.33 -> 149
 *   q = 98: x = -1.5000000224, f = 0.2499999963, 63.99999905 -> 64 */
static void test_hardsigmoid(void)
{
    static const uint8_t x[5] = {128, 188, 68, 138, 98};
    tin in = {"x", PAR_DTYPE_QU8, 2, {1, 5}, 0.05f, 128, x};
    par_graph *g = one_node("hardsigmoid", &in, 1, NULL, 0, NULL, 0, (par_out_spec){"y", PAR_DTYPE_QU8, 1.0f / 256, 0},
                            NULL, 0, 0);
    const void *inputs[1] = {x};
    static const double want[5] = {128, 255, 0, 149, 64};
    expect_ints(g, inputs, want, 5);
    par_graph_destroy(g);
}

/* leaky_relu, slope 0.1: s_in = 0.1, z_in = 100; s_out = 0.05, z_out = 50 (qu8).
 *   q = 100: x = 0 -> 50                    q = 120: x = 2 -> 2 / 0.05 = 40 -> 90
 *   q = 0: x = -10 -> -1 -> -20 -> 30        q = 50: x = -5 -> -0.5 -> -10 -> 40
 *   q = 255: x = 15.5 -> 310 -> 360 -> 255   q = 97: x = -0.3 -> -0.03 -> -0.6 -> -1 -> 49 */
static void test_leaky_relu(void)
{
    static const uint8_t x[6] = {100, 120, 0, 50, 255, 97};
    tin in = {"x", PAR_DTYPE_QU8, 2, {1, 6}, 0.1f, 100, x};
    par_attr at[1] = {par_a_float("negative_slope", 0.1)};
    par_graph *g = one_node("leaky_relu", &in, 1, NULL, 0, at, 1, (par_out_spec){"y", PAR_DTYPE_QU8, 0.05f, 50}, NULL,
                            0, 0);
    const void *inputs[1] = {x};
    static const double want[6] = {50, 90, 30, 40, 255, 49};
    expect_ints(g, inputs, want, 6);
    par_graph_destroy(g);
}

/* mean over the last axis of [1, 1, 2, 3], s_in = 0.5, z_in = 10; s_out = 0.25, z_out = 0 (qu8); ratio
 * 0.5 / (0.25 * 3) = 2/3.  Row 0: q - z = 0, 3, 7: acc 10, 6.67 -> 7.  Row 1: 10, 10, 11: acc 31, 20.67 -> 21.
 * As qs8 (z_in = -118, z_out = -128): the same differences, outputs -121 and -107. */
static void test_mean(void)
{
    static const uint8_t xu[6] = {10, 13, 17, 20, 20, 21};
    int8_t xs[6];
    for (int i = 0; i < 6; i++) xs[i] = (int8_t)(xu[i] - 128);
    int64_t ax[1] = {3};
    par_attr at[2] = {par_a_ints("axes", 1, ax), par_a_int("keepdims", 0)};
    for (int s = 0; s < 2; s++) {
        tin in = {"x", s ? PAR_DTYPE_QS8 : PAR_DTYPE_QU8, 4, {1, 1, 2, 3}, 0.5f, s ? -118 : 10, s ? (void *)xs : xu};
        par_graph *g = one_node("mean", &in, 1, NULL, 0, at, 2,
                                (par_out_spec){"y", in.dt, 0.25f, s ? -128 : 0}, NULL, 0, 0);
        const void *inputs[1] = {in.data};
        double want[2] = {s ? -121 : 7, s ? -107 : 21};
        expect_ints(g, inputs, want, 2);
        par_graph_destroy(g);
    }
}

/* adaptive_avg_pool2d [1, 1, 5, 1] -> [3, 1]: row windows [floor(o 5 / 3), ceil((o + 1) 5 / 3)) = [0, 2), [1, 4),
 * [3, 5): divisors 2, 3, 2. Scales 1, zero points 0, data 2 3 4 5 7:
 *   o = 0: (2 + 3) / 2 = 2.5 -> 2 (half to even)   o = 1: (3 + 4 + 5) / 3 = 4   o = 2: (5 + 7) / 2 = 6 */
static void test_adaptive_avg_pool2d(void)
{
    static const uint8_t x[5] = {2, 3, 4, 5, 7};
    tin in = {"x", PAR_DTYPE_QU8, 4, {1, 1, 5, 1}, 1.0f, 0, x};
    int64_t os[2] = {3, 1};
    par_attr at[1] = {par_a_ints("output_size", 2, os)};
    par_graph *g = one_node("adaptive_avg_pool2d", &in, 1, NULL, 0, at, 1,
                            (par_out_spec){"y", PAR_DTYPE_QU8, 1.0f, 0}, NULL, 0, 0);
    const void *inputs[1] = {x};
    static const double want[3] = {2, 4, 6};
    expect_ints(g, inputs, want, 3);
    par_graph_destroy(g);
}

/* conv_transpose2d, stride 2, kernel 2x2: y[2i + a, 2j + b] = x[i, j] w[a, b] (+ bias). x qu8 [1, 1, 2, 2], s 0.5,
 * z 2, data 3 4 2 6 (x - z = 1 2 0 4). Weights qs8 [C = 1, O = 2, 2, 2], per-channel scales on axis 1: channel 0
 * 0.25 with 1 -1 2 3, channel 1 0.5 with 1 1 1 1; i32 bias 4, -1. Output qu8 s 0.125, z 10: ratios
 * 0.5 * 0.25 / 0.125 = 1 and 0.5 * 0.5 / 0.125 = 2.
 * Channel 0, acc = (x - z) w + 4, y = 10 + acc:   Channel 1, acc = (x - z) - 1, y = 10 + 2 acc:
 *   15 13 16 12                                    10 10 12 12
 *   16 17 18 20                                    10 10 12 12
 *   14 14 18 10                                     8  8 16 16
 *   14 14 22 26                                     8  8 16 16 */
static void test_conv_transpose2d(void)
{
    static const uint8_t x[4] = {3, 4, 2, 6};
    static const int8_t w[8] = {1, -1, 2, 3, 1, 1, 1, 1};
    static const int32_t b[2] = {4, -1};
    static const float wcs[2] = {0.25f, 0.5f};
    tin in = {"x", PAR_DTYPE_QU8, 4, {1, 1, 2, 2}, 0.5f, 2, x};
    tin cs[2] = {{"w", PAR_DTYPE_QS8, 4, {1, 2, 2, 2}, 0, 0, w}, {"b", PAR_DTYPE_I32, 1, {2}, 0.125f, 0, b}};
    int64_t st[2] = {2, 2};
    par_attr at[1] = {par_a_ints("stride", 2, st)};
    par_graph *g = one_node("conv_transpose2d", &in, 1, cs, 2, at, 1, (par_out_spec){"y", PAR_DTYPE_QU8, 0.125f, 10},
                            wcs, 1, 2);
    const void *inputs[1] = {x};
    static const double want[32] = {15, 13, 16, 12, 16, 17, 18, 20, 14, 14, 18, 10, 14, 14, 22, 26,
                                    10, 10, 12, 12, 10, 10, 12, 12, 8,  8,  16, 16, 8,  8,  16, 16};
    expect_ints(g, inputs, want, 32);
    par_graph_destroy(g);
}

/* matmul of two quantized activations, both zero points non-zero: a qu8 [2, 2] s 0.5 z 3 data 4 5 3 1 (a - za =
 * 1 2 / 0 -2), b qu8 [2, 2] s 0.25 z 8 data 9 8 7 12 (b - zb = 1 0 / -1 4); output s 0.25 z 100: ratio 0.5.
 *   y00 = 1*1 + 2*(-1) = -1 -> -0.5 -> -0 (half to even) -> 100     y01 = 1*0 + 2*4 = 8 -> 4 -> 104
 *   y10 = 0*1 + (-2)(-1) = 2 -> 1 -> 101                            y11 = 0*0 + (-2)*4 = -8 -> -4 -> 96 */
static void test_matmul(void)
{
    static const uint8_t a[4] = {4, 5, 3, 1}, b[4] = {9, 8, 7, 12};
    tin in[2] = {{"a", PAR_DTYPE_QU8, 2, {2, 2}, 0.5f, 3, a}, {"b", PAR_DTYPE_QU8, 2, {2, 2}, 0.25f, 8, b}};
    par_graph *g = one_node("matmul", in, 2, NULL, 0, NULL, 0, (par_out_spec){"y", PAR_DTYPE_QU8, 0.25f, 100}, NULL, 0,
                            0);
    const void *inputs[2] = {a, b};
    static const double want[4] = {100, 104, 101, 96};
    expect_ints(g, inputs, want, 4);
    par_graph_destroy(g);
}

/* linear_dynamic: x f32 [1, 3] = -1, 0.5, 2; range [-1, 2] -> scale 3 / 255 (double), sx = (float)(3 / 255); zero
 * point from the min, 0 - (-1) / (3 / 255) = 85 (its error term -85 is below the max's 85): zx = 85.
 * qx = 85 + rne(x / sx): -1 / sx = -84.9999996 -> 0; 0.5 / sx = 42.4999998 -> 127 (within 2^-20 (42.5 + 85 + 1)
 * of a tie: a backend may give 128); 2 / sx = 169.9999993 -> 255.
 * Weights qs8 [2, 3] scale 0.5, zero point 0: 1 2 3 / -4 0 4; bias 0.25, -1.
 *   acc0 = -85 * 1 + 42 * 2 + 170 * 3 = 509    y0 = 509 * sx * 0.5 + 0.25
 *   acc1 = -85 * -4 + 42 * 0 + 170 * 4 = 1020  y1 = 1020 * sx * 0.5 - 1
 * Budgets: y0 carries the tie of x[1] through its weight: sx * 0.5 * 2 = sx, plus the f32 epilogue's few 1e-7;
 * y1's weight on x[1] is 0, so only the epilogue. */
static void test_linear_dynamic(void)
{
    static const float x[3] = {-1.0f, 0.5f, 2.0f}, b[2] = {0.25f, -1.0f};
    static const int8_t w[6] = {1, 2, 3, -4, 0, 4};
    tin in = {"x", PAR_DTYPE_F32, 2, {1, 3}, 0, 0, x};
    tin cs[2] = {{"w", PAR_DTYPE_QS8, 2, {2, 3}, 0.5f, 0, w}, {"b", PAR_DTYPE_F32, 1, {2}, 0, 0, b}};
    par_graph *g = one_node("linear_dynamic", &in, 1, cs, 2, NULL, 0, (par_out_spec){"y", PAR_DTYPE_F32, 0, 0}, NULL,
                            0, 0);
    const void *inputs[1] = {x};
    double ref[2], bud[2], qnn[2];
    run_both(g, inputs, ref, bud, qnn);
    const double sx = (double)(float)(3.0 / 255.0);
    const double want[2] = {509 * sx * 0.5 + 0.25, 1020 * sx * 0.5 - 1};
    for (int i = 0; i < 2; i++) {
        CU_ASSERT(fabs(ref[i] - want[i]) <= 1e-12);
        CU_ASSERT(fabs(qnn[i] - ref[i]) <= bud[i]);
    }
    CU_ASSERT(bud[0] >= sx && bud[0] <= sx + 1e-5);
    CU_ASSERT(bud[1] > 0 && bud[1] <= 1e-5);
    par_graph_destroy(g);
}

/* ---- parity quantize on the new forms ---------------------------------------------------------------------- */

static const par_rt *ref_out(const par_case *c, par_ref_result **r, void ***bufs)
{
    par_msg m = {{0}};
    par_prec p = par_prec_for(PAR_ARITH_F32);
    p.requant_exact = 1;
    CU_ASSERT_FATAL(par_case_make_inputs(c, bufs, &m) == PAR_OK);
    CU_ASSERT_FATAL(par_ref_run(par_graph_desc_of(c->graph), &p, (const void *const *)*bufs, r, &m) == PAR_OK);
    return &(*r)->values[par_graph_desc_of(c->graph)->outputs[0]];
}

/* qnnpack's f32 output of case c on inputs bufs. */
static void qnn_out(const par_case *c, void **bufs, float *out)
{
    const par_graph_desc *d = par_graph_desc_of(c->graph);
    const par_backend *be = par_backend_qnnpack();
    par_msg m = {{0}};
    void *ctx = NULL, *prep = NULL;
    CU_ASSERT_FATAL(be->init(&ctx, &m) == PAR_OK);
    for (int32_t i = 0; i < d->n_nodes; i++) CU_ASSERT(be->supports(ctx, d, i, &m) == PAR_OK);
    CU_ASSERT_FATAL(be->prepare(ctx, d, &prep, &m) == PAR_OK);
    void *outs[1] = {out};
    CU_ASSERT_EQUAL(be->bind(ctx, prep, (const void *const *)bufs, outs, &m), PAR_OK);
    CU_ASSERT_EQUAL(be->run(ctx, prep, &m), PAR_OK);
    be->release(ctx, prep);
    be->destroy(ctx);
}

/* x -> conv_transpose2d -> leaky_relu -> adaptive_avg_pool2d -> hardsigmoid -> mean -> matmul(y, y): the twin runs
 * every node on integers (one quantize, one dequantize), gives conv_transpose2d per-channel weights on axis 1 and
 * hardsigmoid the fixed [0, 1] params, stays within 8-bit error of the float network, and qnnpack reproduces the
 * reference's output bit for bit (the integers are exact; the dequantize is one f32 multiply in both). */
static void test_twin_static(void)
{
    par_case *c = par_case_create("nf", 5);
    int32_t x = par_case_input(c, "x", PAR_DTYPE_F32, 4, (int64_t[]){1, 4, 5, 5},
                               (par_gen){.dist = PAR_DIST_UNIFORM, .a = -1, .b = 1});
    int32_t w = par_case_const(c, "w", PAR_DTYPE_F32, 4, (int64_t[]){4, 3, 2, 2}, (par_gen){.dist = PAR_DIST_NORMAL, .a = 0, .b = 1, .fan_in = 1});
    int32_t b = par_case_const(c, "b", PAR_DTYPE_F32, 1, (int64_t[]){3}, (par_gen){.dist = PAR_DIST_UNIFORM, .a = -0.1, .b = 0.1});
    par_attr st[1] = {par_a_ints("stride", 2, (int64_t[]){2, 2})};
    int32_t y = par_case_node(c, "conv_transpose2d", 3, (int32_t[]){x, w, b}, 1, st, NULL);
    par_attr sl[1] = {par_a_float("negative_slope", 0.2)};
    y = par_case_node(c, "leaky_relu", 1, &y, 1, sl, NULL);
    par_attr os[1] = {par_a_ints("output_size", 2, (int64_t[]){3, 3})};
    y = par_case_node(c, "adaptive_avg_pool2d", 1, &y, 1, os, NULL);
    y = par_case_node(c, "hardsigmoid", 1, &y, 0, NULL, NULL);
    par_attr ax[2] = {par_a_ints("axes", 1, (int64_t[]){0}), par_a_int("keepdims", 0)};
    y = par_case_node(c, "mean", 1, &y, 2, ax, NULL);
    y = par_case_node(c, "matmul", 2, (int32_t[]){y, y}, 0, NULL, NULL);
    par_case_output(c, y);
    CU_ASSERT_FATAL(par_case_finish(c) == PAR_OK);
    par_msg m = {{0}};
    par_quant_opts o = {.act = PAR_DTYPE_QU8, .per_channel = 1, .seeded = 0, .id = NULL};
    par_case *q = par_case_quantize(c, &o, &m);
    CU_ASSERT_FATAL(q != NULL);
    const par_graph_desc *g = par_graph_desc_of(q->graph);
    int n_quant = 0, n_deq = 0, n_int = 0;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const par_node *n = &g->nodes[i];
        n_quant += !strcmp(n->op, "quantize");
        n_deq += !strcmp(n->op, "dequantize");
        const par_value *ov = &g->values[n->outputs[0]];
        n_int += ov->dtype == PAR_DTYPE_QU8 && strcmp(n->op, "quantize") != 0;
        if (!strcmp(n->op, "conv_transpose2d")) {
            const par_value *wv = &g->values[n->inputs[1]];
            CU_ASSERT(wv->dtype == PAR_DTYPE_QS8 && wv->quant_axis == 1 && wv->channel_scales != NULL);
            CU_ASSERT(g->values[n->inputs[2]].dtype == PAR_DTYPE_I32);
        }
        if (!strcmp(n->op, "hardsigmoid")) CU_ASSERT(ov->scale == 1.0f / 256 && ov->zero_point == 0);
    }
    CU_ASSERT(n_quant == 1 && n_deq == 1 && n_int == 6);
    par_ref_result *rf = NULL, *rq = NULL;
    void **bf = NULL, **bq = NULL;
    const par_rt *yf = ref_out(c, &rf, &bf), *yq = ref_out(q, &rq, &bq);
    double mx = 0, md = 0;
    float got[27]; /* mean over axis 0 of [1,3,3,3] is [3,3,3]; matmul of it with itself is [3,3,3] */
    CU_ASSERT_EQUAL_FATAL(yq->numel, 27);
    qnn_out(q, bq, got);
    for (int64_t i = 0; i < yf->numel; i++) {
        mx = fmax(mx, fabs(yf->v[i]));
        md = fmax(md, fabs(yf->v[i] - yq->v[i]));
        CU_ASSERT_EQUAL((double)got[i], (double)(float)yq->v[i]);
    }
    CU_ASSERT(mx > 0.1 && md > 0 && md < 0.05 * mx);
    par_case_free_inputs(c, bf);
    par_case_free_inputs(q, bq);
    par_ref_result_destroy(rf);
    par_ref_result_destroy(rq);
    par_case_destroy(q);
    par_case_destroy(c);
}

/* --dynamic: x -> linear(16 -> 8, bias) -> linear(8 -> 4): two linear_dynamic with qs8 per-channel weights (8 and 4
 * scales on axis 0), the f32 bias kept, no quantize or dequantize node, the id "<id>_dynamic"; its output within 8-bit
 * error of the float network; qnnpack's within the reference's budget at every element, the second layer's input
 * carrying the first layer's budget. With a relu between the linears, the relu stays f32. */
static void test_twin_dynamic(void)
{
    for (int relu = 0; relu < 2; relu++) {
        par_case *c = par_case_create("mlp", 7);
        int32_t x = par_case_input(c, "x", PAR_DTYPE_F32, 2, (int64_t[]){3, 16}, (par_gen){.dist = PAR_DIST_UNIFORM, .a = -1, .b = 1});
        int32_t w1 = par_case_const(c, "w1", PAR_DTYPE_F32, 2, (int64_t[]){8, 16}, (par_gen){.dist = PAR_DIST_NORMAL, .a = 0, .b = 1, .fan_in = 1});
        int32_t b1 = par_case_const(c, "b1", PAR_DTYPE_F32, 1, (int64_t[]){8}, (par_gen){.dist = PAR_DIST_UNIFORM, .a = -0.1, .b = 0.1});
        int32_t w2 = par_case_const(c, "w2", PAR_DTYPE_F32, 2, (int64_t[]){4, 8}, (par_gen){.dist = PAR_DIST_NORMAL, .a = 0, .b = 1, .fan_in = 1});
        int32_t y = par_case_node(c, "linear", 3, (int32_t[]){x, w1, b1}, 0, NULL, NULL);
        if (relu) y = par_case_node(c, "relu", 1, &y, 0, NULL, NULL);
        y = par_case_node(c, "linear", 2, (int32_t[]){y, w2}, 0, NULL, NULL);
        par_case_output(c, y);
        CU_ASSERT_FATAL(par_case_finish(c) == PAR_OK);
        par_msg m = {{0}};
        par_quant_opts o = {.act = PAR_DTYPE_INVALID, .per_channel = 1, .seeded = 0, .id = NULL, .dynamic = 1};
        par_case *q = par_case_quantize(c, &o, &m);
        CU_ASSERT_FATAL(q != NULL);
        CU_ASSERT(strcmp(q->id, "mlp_dynamic") == 0);
        const par_graph_desc *g = par_graph_desc_of(q->graph);
        int n_ld = 0, n_relu = 0, n_other = 0;
        for (int32_t i = 0; i < g->n_nodes; i++) {
            const par_node *n = &g->nodes[i];
            if (!strcmp(n->op, "linear_dynamic")) {
                const par_value *wv = &g->values[n->inputs[1]];
                CU_ASSERT(wv->dtype == PAR_DTYPE_QS8 && wv->quant_axis == 0 && wv->channel_scales != NULL);
                CU_ASSERT(wv->dims[0] == (n_ld ? 4 : 8));
                CU_ASSERT(n->n_inputs == (n_ld ? 2 : 3));
                if (n->n_inputs == 3) CU_ASSERT(g->values[n->inputs[2]].dtype == PAR_DTYPE_F32);
                n_ld++;
            } else if (!strcmp(n->op, "relu")) {
                CU_ASSERT(g->values[n->outputs[0]].dtype == PAR_DTYPE_F32);
                n_relu++;
            } else {
                n_other++;
            }
        }
        CU_ASSERT(n_ld == 2 && n_relu == relu && n_other == 0);
        par_ref_result *rf = NULL, *rq = NULL;
        void **bf = NULL, **bq = NULL;
        const par_rt *yf = ref_out(c, &rf, &bf), *yq = ref_out(q, &rq, &bq);
        double mx = 0, md = 0;
        for (int64_t i = 0; i < yf->numel; i++) {
            mx = fmax(mx, fabs(yf->v[i]));
            md = fmax(md, fabs(yf->v[i] - yq->v[i]));
        }
        CU_ASSERT(mx > 0.1 && md > 0 && md < 0.05 * mx);
        if (!relu) { /* qnnpack runs f32 only into and out of linear_dynamic: the chain without the relu */
            float got[12];
            qnn_out(q, bq, got);
            for (int64_t i = 0; i < yq->numel; i++) CU_ASSERT(fabs(got[i] - yq->v[i]) <= yq->e[i]);
        }
        par_case_free_inputs(c, bf);
        par_case_free_inputs(q, bq);
        par_ref_result_destroy(rf);
        par_ref_result_destroy(rq);
        par_case_destroy(q);
        par_case_destroy(c);
    }
}

/* qnnpack's rank-4 broadcasts in NHWC (the squeeze-excitation multiply after a conv, and an add broadcast over
 * channels): x -> conv2d 1x1 -> y [1, 6, 4, 5]; mul(y, s [1, 6, 1, 1]) and add(y, t [1, 1, 4, 5]). The integers must
 * equal the reference's (strict fp32) for every element, on random inputs; a wrong stride would pair elements of
 * other channels or pixels. */
static void test_broadcast_nhwc(void)
{
    for (int op = 0; op < 2; op++) {
        par_msg m = {{0}};
        par_graph *g = par_graph_create("bc");
        int32_t x = par_graph_add_input(g, "x", PAR_DTYPE_QU8, 4, (int64_t[]){1, 3, 4, 5}, &m);
        par_graph_set_quant(g, x, 0.02f, 120, &m);
        int8_t wd[18];
        for (int i = 0; i < 18; i++) wd[i] = (int8_t)((i * 37) % 201 - 100);
        int32_t w = par_graph_add_const(g, "w", PAR_DTYPE_QS8, 4, (int64_t[]){6, 3, 1, 1}, wd, &m);
        par_graph_set_quant(g, w, 0.01f, 0, &m);
        par_out_spec yo = {"y", PAR_DTYPE_QU8, 0.01f, 128};
        int32_t cn = par_graph_add_node(g, "conv2d", NULL, 2, (int32_t[]){x, w}, 0, NULL, &yo, &m);
        int32_t y = par_graph_desc_of(g)->nodes[cn].outputs[0];
        int32_t z = par_graph_add_input(g, "z", PAR_DTYPE_QU8, 4, op ? (int64_t[]){1, 1, 4, 5} : (int64_t[]){1, 6, 1, 1},
                                        &m);
        par_graph_set_quant(g, z, 0.004f, 10, &m);
        par_out_spec oo = {"o", PAR_DTYPE_QU8, op ? 0.012f : 0.003f, 100};
        int32_t on = par_graph_add_node(g, op ? "add" : "mul", NULL, 2, (int32_t[]){y, z}, 0, NULL, &oo, &m);
        CU_ASSERT_FATAL(on >= 0);
        par_graph_mark_output(g, par_graph_desc_of(g)->nodes[on].outputs[0], &m);
        CU_ASSERT_FATAL(par_graph_finalize(g, &m) == PAR_OK);
        uint8_t xin[60], zin[20];
        for (int i = 0; i < 60; i++) xin[i] = (uint8_t)((i * 73 + 11) % 256);
        for (int i = 0; i < 20; i++) zin[i] = (uint8_t)((i * 151 + 7) % 256);
        const void *inputs[2] = {xin, zin};
        double ref[120], qnn[120];
        run_both(g, inputs, ref, NULL, qnn);
        int diff = 0, distinct = 0;
        for (int i = 0; i < 120; i++) {
            diff += ref[i] != qnn[i];
            distinct += i > 0 && ref[i] != ref[0];
        }
        CU_ASSERT_EQUAL(diff, 0);
        CU_ASSERT(distinct > 60); /* the outputs vary: the comparison can see a wrong pairing */
        par_graph_destroy(g);
    }
}

static const CU_TestInfo tests[] = {
    {"hardsigmoid", test_hardsigmoid},
    {"leaky_relu", test_leaky_relu},
    {"mean", test_mean},
    {"adaptive_avg_pool2d", test_adaptive_avg_pool2d},
    {"conv_transpose2d", test_conv_transpose2d},
    {"matmul", test_matmul},
    {"linear_dynamic", test_linear_dynamic},
    {"static twin of the new forms", test_twin_static},
    {"dynamic twin", test_twin_dynamic},
    {"qnnpack broadcast in NHWC", test_broadcast_nhwc},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("quant_ops2", tests)
