/*
 * test_xnnpack.c - unit tests of the xnnpack backend's adapter (backends/xnnpack/): NCHW <-> NHWC conversion and
 * physical views, a small convolution with asymmetric padding against values computed here in double, the
 * conv2d + batch_norm + relu6 fusion (one XNNPACK operator), a broadcasting add whose constant needs a layout copy,
 * knobs, and the UNSUPPORTED reasons for parameters XNNPACK lacks. Quantized graphs: a qs8 convolution with
 * per-channel weights and a fused relu6 against the fp32 requantization computed here, a relu6 with its own scale
 * (XNNPACK's add with a zero) against requant.h's add formula, 1-byte layout conversion, the requantization scheme
 * declared, and the reasons for what XNNPACK's quantized operators lack. The knob profile=1: which node each step's
 * time is reported on (only that times are reported, never their values). Built without XNNPACK, it checks only
 * that the backend is absent.
 */
#include <math.h>
#include <stdlib.h>

#include "core/graph.h"
#include "exec/exec.h"
#include "backend_absent.h"
#include "tmain.h"

#ifdef PAR_HAVE_XNNPACK
#include "backends/xnnpack/xnnpack_internal.h"
#include "core/requant.h"

const par_backend *par_backend_xnnpack(void);

/* deterministic values in [-1, 1) */
static float val(int64_t i, int salt)
{
    uint32_t h = (uint32_t)(i * 2654435761u) ^ (uint32_t)(salt * 40503u);
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    return (float)(h % 2000u) / 1000.0f - 1.0f;
}

static void test_layout(void)
{
    enum { N = 2, C = 3, H = 4, W = 5 };
    float src[N * C * H * W], nhwc[N * C * H * W], back[N * C * H * W];
    for (int i = 0; i < N * C * H * W; i++) src[i] = (float)i;
    par_xnn_to_nhwc(src, nhwc, N, C, H * W);
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            for (int h = 0; h < H; h++)
                for (int w = 0; w < W; w++)
                    CU_ASSERT_EQUAL(nhwc[((n * H + h) * W + w) * C + c], src[((n * C + c) * H + h) * W + w]);
    par_xnn_to_nchw(nhwc, back, N, C, H * W);
    CU_ASSERT_EQUAL(memcmp(src, back, sizeof src), 0);

    par_value v = {.rank = 4, .dims = {N, C, H, W}};
    size_t d[4];
    par_xnn_phys_dims(&v, XA_NHWC, d);
    CU_ASSERT(d[0] == N && d[1] == H && d[2] == W && d[3] == C);
    par_xnn_phys_dims(&v, XA_LOGICAL, d);
    CU_ASSERT(d[0] == N && d[1] == C && d[2] == H && d[3] == W);
    CU_ASSERT_EQUAL(par_xnn_phys_axis(&v, XA_NHWC, 1), 3);
    CU_ASSERT_EQUAL(par_xnn_phys_axis(&v, XA_NHWC, -1), 2);
    CU_ASSERT_EQUAL(par_xnn_phys_axis(&v, XA_LOGICAL, 1), 1);

    /* 1-byte elements (qu8/qs8 activations) */
    uint8_t b8[N * C * H * W], n8[N * C * H * W], r8[N * C * H * W];
    for (int i = 0; i < N * C * H * W; i++) b8[i] = (uint8_t)(i * 7 + 1);
    par_xnn_transpose(b8, n8, N, C, H * W, 1, 1);
    int bad = 0;
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            for (int i = 0; i < H * W; i++) bad += n8[(n * H * W + i) * C + c] != b8[(n * C + c) * H * W + i];
    CU_ASSERT_EQUAL(bad, 0);
    par_xnn_transpose(n8, r8, N, C, H * W, 1, 0);
    CU_ASSERT_EQUAL(memcmp(b8, r8, sizeof b8), 0);
}

/* Prepare, bind, run g on the xnnpack backend; outputs into out (one output). Returns the prepared plan's step
 * count through *steps. */
static par_status run_graph(const par_graph_desc *g, const void *in, void *out, int32_t *steps, par_msg *msg)
{
    const par_backend *be = par_backend_xnnpack();
    void *ctx = NULL, *prep = NULL;
    par_status st = be->init(&ctx, msg);
    if (st != PAR_OK) return st;
    for (int32_t i = 0; i < g->n_nodes && st == PAR_OK; i++) st = be->supports(ctx, g, i, msg);
    if (st == PAR_OK) st = be->prepare(ctx, g, &prep, msg);
    const void *ins[1] = {in};
    void *outs[1] = {out};
    if (st == PAR_OK) st = be->bind(ctx, prep, ins, outs, msg);
    if (st == PAR_OK) st = be->run(ctx, prep, msg);
    if (st == PAR_OK && steps) *steps = ((xa_plan *)prep)->n_steps;
    be->release(ctx, prep);
    be->destroy(ctx);
    return st;
}

/* conv2d 1x2x4x5 -> 3 channels, 2x3 kernel, stride [1,2], padding [1,0,0,1] (top, left, bottom, right). */
static void test_conv_values(void)
{
    enum { C = 2, H = 4, W = 5, O = 3, KH = 2, KW = 3 };
    par_msg msg = {{0}};
    par_graph *gr = par_graph_create("conv");
    int64_t xd[4] = {1, C, H, W}, wd[4] = {O, C, KH, KW}, bd[1] = {O};
    float w[O * C * KH * KW], b[O], x[C * H * W];
    for (int i = 0; i < O * C * KH * KW; i++) w[i] = val(i, 1);
    for (int i = 0; i < O; i++) b[i] = val(i, 2);
    for (int i = 0; i < C * H * W; i++) x[i] = val(i, 3);
    int32_t vx = par_graph_add_input(gr, "x", PAR_DTYPE_F32, 4, xd, &msg);
    int32_t vw = par_graph_add_const(gr, "w", PAR_DTYPE_F32, 4, wd, w, &msg);
    int32_t vb = par_graph_add_const(gr, "b", PAR_DTYPE_F32, 1, bd, b, &msg);
    int64_t stride[2] = {1, 2}, pad[4] = {1, 0, 0, 1};
    par_attr at[2] = {par_a_ints("stride", 2, stride), par_a_ints("padding", 4, pad)};
    par_out_spec os = {.name = "y"};
    int32_t ins[3] = {vx, vw, vb};
    CU_ASSERT_FATAL(par_graph_add_node(gr, "conv2d", "conv", 3, ins, 2, at, &os, &msg) >= 0);
    CU_ASSERT_FATAL(par_graph_mark_output(gr, par_graph_find_value(gr, "y"), &msg) == PAR_OK);
    CU_ASSERT_FATAL(par_graph_finalize(gr, &msg) == PAR_OK);
    const par_graph_desc *g = par_graph_desc_of(gr);
    const par_value *y = &g->values[par_graph_find_value(gr, "y")];
    /* OH = (4 + 1 + 0 - 2) / 1 + 1 = 4, OW = (5 + 0 + 1 - 3) / 2 + 1 = 2 */
    CU_ASSERT_FATAL(y->dims[2] == 4 && y->dims[3] == 2);
    float out[O * 4 * 2];
    int32_t steps = 0;
    par_status st = run_graph(g, x, out, &steps, &msg);
    CU_ASSERT_EQUAL_FATAL(st, PAR_OK);
    CU_ASSERT_EQUAL(steps, 1);
    int bad = 0;
    for (int o = 0; o < O; o++)
        for (int oh = 0; oh < 4; oh++)
            for (int ow = 0; ow < 2; ow++) {
                double acc = b[o];
                for (int c = 0; c < C; c++)
                    for (int kh = 0; kh < KH; kh++)
                        for (int kw = 0; kw < KW; kw++) {
                            int ih = oh - 1 + kh, iw = ow * 2 + kw;
                            if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                                acc += (double)w[((o * C + c) * KH + kh) * KW + kw] * x[(c * H + ih) * W + iw];
                        }
                if (fabs(out[(o * 4 + oh) * 2 + ow] - acc) > 1e-5) bad++;
            }
    CU_ASSERT_EQUAL(bad, 0);
    par_graph_destroy(gr);
}

/* conv2d (no bias) -> batch_norm -> relu6: one XNNPACK convolution with the norm folded and the clamp fused. */
static void test_conv_bn_relu6_fused(void)
{
    enum { C = 3, H = 5, W = 5, O = 4 };
    par_msg msg = {{0}};
    par_graph *gr = par_graph_create("fused");
    int64_t xd[4] = {1, C, H, W}, wd[4] = {O, C, 3, 3}, cd[1] = {O};
    float w[O * C * 9], x[C * H * W], gam[O], bet[O], mu[O], var[O];
    for (int i = 0; i < O * C * 9; i++) w[i] = 2.0f * val(i, 4);
    for (int i = 0; i < C * H * W; i++) x[i] = 3.0f * val(i, 5);
    for (int i = 0; i < O; i++)
        gam[i] = 1.0f + val(i, 6), bet[i] = val(i, 7), mu[i] = val(i, 8), var[i] = 0.5f + 0.25f * (float)i;
    int32_t ins[5];
    ins[0] = par_graph_add_input(gr, "x", PAR_DTYPE_F32, 4, xd, &msg);
    ins[1] = par_graph_add_const(gr, "w", PAR_DTYPE_F32, 4, wd, w, &msg);
    ins[2] = -1;
    int64_t pad[4] = {1, 1, 1, 1};
    par_attr at[1] = {par_a_ints("padding", 4, pad)};
    par_out_spec o1 = {.name = "c"}, o2 = {.name = "n"}, o3 = {.name = "y"};
    CU_ASSERT_FATAL(par_graph_add_node(gr, "conv2d", "conv", 3, ins, 1, at, &o1, &msg) >= 0);
    int32_t bn_in[5] = {par_graph_find_value(gr, "c"), par_graph_add_const(gr, "g", PAR_DTYPE_F32, 1, cd, gam, &msg),
                        par_graph_add_const(gr, "be", PAR_DTYPE_F32, 1, cd, bet, &msg),
                        par_graph_add_const(gr, "mu", PAR_DTYPE_F32, 1, cd, mu, &msg),
                        par_graph_add_const(gr, "var", PAR_DTYPE_F32, 1, cd, var, &msg)};
    CU_ASSERT_FATAL(par_graph_add_node(gr, "batch_norm", "bn", 5, bn_in, 0, NULL, &o2, &msg) >= 0);
    int32_t r_in[1] = {par_graph_find_value(gr, "n")};
    CU_ASSERT_FATAL(par_graph_add_node(gr, "relu6", "act", 1, r_in, 0, NULL, &o3, &msg) >= 0);
    CU_ASSERT_FATAL(par_graph_mark_output(gr, par_graph_find_value(gr, "y"), &msg) == PAR_OK);
    CU_ASSERT_FATAL(par_graph_finalize(gr, &msg) == PAR_OK);
    float out[O * H * W];
    int32_t steps = 0;
    CU_ASSERT_EQUAL_FATAL(run_graph(par_graph_desc_of(gr), x, out, &steps, &msg), PAR_OK);
    CU_ASSERT_EQUAL(steps, 1);
    int bad = 0, clamped_lo = 0, clamped_hi = 0;
    for (int o = 0; o < O; o++)
        for (int oh = 0; oh < H; oh++)
            for (int ow = 0; ow < W; ow++) {
                double acc = 0;
                for (int c = 0; c < C; c++)
                    for (int kh = 0; kh < 3; kh++)
                        for (int kw = 0; kw < 3; kw++) {
                            int ih = oh - 1 + kh, iw = ow - 1 + kw;
                            if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                                acc += (double)w[((o * C + c) * 3 + kh) * 3 + kw] * x[(c * H + ih) * W + iw];
                        }
                double yv = (acc - mu[o]) / sqrt((double)var[o] + 1e-5) * gam[o] + bet[o];
                yv = yv < 0 ? 0 : yv > 6 ? 6 : yv;
                clamped_lo += yv == 0;
                clamped_hi += yv == 6;
                if (fabs(out[(o * H + oh) * W + ow] - yv) > 1e-4) bad++;
            }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(clamped_lo > 0); /* the data exercise both sides of the fused clamp */
    CU_ASSERT(clamped_hi > 0);
    par_graph_destroy(gr);
}

/* x [1,2,3,4] + c [2,3,4]: c is broadcast as [1,2,3,4], whose NHWC order differs: a layout copy made at prepare. */
static void test_broadcast_add_layout(void)
{
    par_msg msg = {{0}};
    par_graph *gr = par_graph_create("add");
    int64_t xd[4] = {1, 2, 3, 4}, cd[3] = {2, 3, 4};
    float x[24], c[24], out[24];
    for (int i = 0; i < 24; i++) x[i] = val(i, 9), c[i] = (float)(i * 100);
    int32_t ins[2] = {par_graph_add_input(gr, "x", PAR_DTYPE_F32, 4, xd, &msg),
                      par_graph_add_const(gr, "c", PAR_DTYPE_F32, 3, cd, c, &msg)};
    par_out_spec os = {.name = "y"};
    CU_ASSERT_FATAL(par_graph_add_node(gr, "add", "add", 2, ins, 0, NULL, &os, &msg) >= 0);
    CU_ASSERT_FATAL(par_graph_mark_output(gr, par_graph_find_value(gr, "y"), &msg) == PAR_OK);
    CU_ASSERT_FATAL(par_graph_finalize(gr, &msg) == PAR_OK);
    CU_ASSERT_EQUAL_FATAL(run_graph(par_graph_desc_of(gr), x, out, NULL, &msg), PAR_OK);
    int bad = 0;
    for (int i = 0; i < 24; i++) bad += out[i] != x[i] + c[i];
    CU_ASSERT_EQUAL(bad, 0);
    par_graph_destroy(gr);
}

/* supports() of a one-node graph: status and whether the message contains `needle`. */
static par_status supports_one(const char *op, int32_t n_attrs, const par_attr *attrs, const int64_t *xdims,
                               const char *needle, int *found)
{
    par_msg msg = {{0}};
    par_graph *gr = par_graph_create("one");
    int32_t x = par_graph_add_input(gr, "x", PAR_DTYPE_F32, 4, xdims, &msg);
    par_out_spec os = {.name = "y"};
    par_status st = PAR_ERROR;
    if (par_graph_add_node(gr, op, "n", 1, &x, n_attrs, attrs, &os, &msg) >= 0 &&
        par_graph_mark_output(gr, par_graph_find_value(gr, "y"), &msg) == PAR_OK &&
        par_graph_finalize(gr, &msg) == PAR_OK) {
        const par_backend *be = par_backend_xnnpack();
        void *ctx = NULL;
        if (be->init(&ctx, &msg) == PAR_OK) {
            msg.text[0] = 0;
            st = be->supports(ctx, par_graph_desc_of(gr), 0, &msg);
            be->destroy(ctx);
        }
    }
    *found = needle && strstr(msg.text, needle) != NULL;
    par_graph_destroy(gr);
    return st;
}

static void test_unsupported_reasons(void)
{
    int64_t xd[4] = {1, 3, 8, 8}, k2[2] = {2, 2}, k1[2] = {1, 1}, p1[4] = {1, 1, 1, 1};
    int found = 0;
    CU_ASSERT_EQUAL(supports_one("tanh", 0, NULL, xd, "tanh", &found), PAR_UNSUPPORTED);
    CU_ASSERT(found);
    CU_ASSERT_EQUAL(supports_one("log_softmax", 0, NULL, xd, "log_softmax", &found), PAR_UNSUPPORTED);
    CU_ASSERT(found);
    par_attr avg[4] = {par_a_ints("kernel", 2, k2), par_a_ints("stride", 2, k2), par_a_ints("padding", 4, p1),
                       par_a_int("count_include_pad", 1)};
    CU_ASSERT_EQUAL(supports_one("avg_pool2d", 4, avg, xd, "count_include_pad", &found), PAR_UNSUPPORTED);
    CU_ASSERT(found);
    avg[3] = par_a_int("count_include_pad", 0); /* the same pooling without counting the padding runs */
    CU_ASSERT_EQUAL(supports_one("avg_pool2d", 4, avg, xd, NULL, &found), PAR_OK);
    par_attr mp[2] = {par_a_ints("kernel", 2, k1), par_a_ints("stride", 2, k2)};
    CU_ASSERT_EQUAL(supports_one("max_pool2d", 2, mp, xd, "1x1", &found), PAR_UNSUPPORTED);
    CU_ASSERT(found);
    par_attr cl[2] = {par_a_float("min", 0.5), par_a_float("max", 0.5)};
    CU_ASSERT_EQUAL(supports_one("clamp", 2, cl, xd, "output_min < output_max", &found), PAR_UNSUPPORTED);
    CU_ASSERT(found);
    par_attr sm[1] = {par_a_int("axis", 2)};
    CU_ASSERT_EQUAL(supports_one("softmax", 1, sm, xd, "innermost", &found), PAR_UNSUPPORTED);
    CU_ASSERT(found);
    sm[0] = par_a_int("axis", 1); /* channels are innermost in NHWC */
    CU_ASSERT_EQUAL(supports_one("softmax", 1, sm, xd, NULL, &found), PAR_OK);
    CU_ASSERT_EQUAL(supports_one("hardswish", 0, NULL, xd, NULL, &found), PAR_OK);
}

/* rne((float)acc * scale) + zp, clamped: the fp32 scheme as a backend computes it (float product, half to even). */
static int32_t fp32_requant(int64_t acc, float scale, int32_t zp, int32_t lo, int32_t hi)
{
    float r = rintf((float)acc * scale) + (float)zp;
    return r < (float)lo ? lo : r > (float)hi ? hi : (int32_t)r;
}

static int32_t clampi(int32_t v, int32_t lo, int32_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* quantize (qs8, scale 1/64: exact) -> conv2d 3x3 pad 1 with per-channel qs8 weights and an i32 bias -> relu6 at
 * the conv's own params: two XNNPACK operators (convert, qc8 convolution with the relu6 as its integer clamp), and
 * every integer the fp32 requantization computed here. */
static void test_q8_conv_qc8_relu6(void)
{
    enum { C = 4, H = 5, W = 5, O = 6 };
    par_msg msg = {{0}};
    par_graph *gr = par_graph_create("qconv");
    int64_t xd[4] = {1, C, H, W}, wd[4] = {O, C, 3, 3}, bd[1] = {O};
    float x[C * H * W], ws[O];
    int8_t w[O * C * 9];
    int32_t b[O];
    for (int i = 0; i < C * H * W; i++) x[i] = 1.5f * val(i, 11);
    for (int i = 0; i < O * C * 9; i++) w[i] = (int8_t)(val(i, 12) * 127.0f);
    for (int o = 0; o < O; o++) ws[o] = 0.01f * (float)(o + 1), b[o] = (int32_t)(val(o, 13) * 500.0f);
    const float sx = 1.0f / 64, sy = 0.05f;
    const int32_t zx = 3, zy = -5;
    int32_t vx = par_graph_add_input(gr, "x", PAR_DTYPE_F32, 4, xd, &msg);
    int32_t vw = par_graph_add_const(gr, "w", PAR_DTYPE_QS8, 4, wd, w, &msg);
    CU_ASSERT_FATAL(par_graph_set_channel_quant(gr, vw, 0, ws, O, &msg) == PAR_OK);
    int32_t vb = par_graph_add_const(gr, "b", PAR_DTYPE_I32, 1, bd, b, &msg);
    CU_ASSERT_FATAL(par_graph_set_quant(gr, vb, sx * ws[0], 0, &msg) == PAR_OK);
    par_out_spec oq = {.name = "xq", .dtype = PAR_DTYPE_QS8, .scale = sx, .zero_point = zx};
    par_out_spec oc = {.name = "c", .dtype = PAR_DTYPE_QS8, .scale = sy, .zero_point = zy};
    par_out_spec or6 = {.name = "y", .dtype = PAR_DTYPE_QS8, .scale = sy, .zero_point = zy};
    CU_ASSERT_FATAL(par_graph_add_node(gr, "quantize", "q", 1, &vx, 0, NULL, &oq, &msg) >= 0);
    int64_t pad[4] = {1, 1, 1, 1};
    par_attr at[1] = {par_a_ints("padding", 4, pad)};
    int32_t ins[3] = {par_graph_find_value(gr, "xq"), vw, vb};
    CU_ASSERT_FATAL(par_graph_add_node(gr, "conv2d", "conv", 3, ins, 1, at, &oc, &msg) >= 0);
    int32_t r_in = par_graph_find_value(gr, "c");
    CU_ASSERT_FATAL(par_graph_add_node(gr, "relu6", "act", 1, &r_in, 0, NULL, &or6, &msg) >= 0);
    CU_ASSERT_FATAL(par_graph_mark_output(gr, par_graph_find_value(gr, "y"), &msg) == PAR_OK);
    CU_ASSERT_FATAL(par_graph_finalize(gr, &msg) == PAR_OK);
    int8_t out[O * H * W];
    int32_t steps = 0;
    CU_ASSERT_EQUAL_FATAL(run_graph(par_graph_desc_of(gr), x, out, &steps, &msg), PAR_OK);
    CU_ASSERT_EQUAL(steps, 2);
    int32_t qx[C * H * W], lo, hi;
    for (int i = 0; i < C * H * W; i++) qx[i] = clampi(zx + (int32_t)rintf(x[i] * 64.0f), -128, 127);
    par_requant_clamp_range(PAR_DTYPE_QS8, sy, zy, 0.0, 6.0, &lo, &hi);
    CU_ASSERT(lo == zy && hi == zy + 120);
    int bad = 0, at_lo = 0, at_hi = 0, mid = 0;
    for (int o = 0; o < O; o++)
        for (int oh = 0; oh < H; oh++)
            for (int ow = 0; ow < W; ow++) {
                int64_t acc = b[o];
                for (int c = 0; c < C; c++)
                    for (int kh = 0; kh < 3; kh++)
                        for (int kw = 0; kw < 3; kw++) {
                            int ih = oh - 1 + kh, iw = ow - 1 + kw;
                            if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                                acc += (int64_t)w[((o * C + c) * 3 + kh) * 3 + kw] * (qx[(c * H + ih) * W + iw] - zx);
                        }
                int32_t want = fp32_requant(acc, par_requant_scale_f32(sx, ws[o], sy), zy, lo, hi);
                at_lo += want == lo, at_hi += want == hi, mid += want > lo && want < hi;
                bad += out[(o * H + oh) * W + ow] != want;
            }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(at_lo > 0 && at_hi > 0 && mid > 20); /* both sides of the fused clamp, and values between */
    par_graph_destroy(gr);
}

/* relu6 with its own scale and zero point (a calibrated graph's): XNNPACK has no requantize operator in this
 * snapshot, so it is XNNPACK's add of x and a zero, whose integers are requant.h's add formula with rndnu rounding. */
static void test_q8_requantizing_relu6(void)
{
    enum { N = 200 };
    par_msg msg = {{0}};
    par_graph *gr = par_graph_create("qrelu6");
    int64_t xd[1] = {N};
    float x[N];
    for (int i = 0; i < N; i++) x[i] = 10.0f * val(i, 14);
    const float sx = 0.0625f, sy = 6.0f / 255.0f;
    int32_t vx = par_graph_add_input(gr, "x", PAR_DTYPE_F32, 1, xd, &msg);
    par_out_spec oq = {.name = "xq", .dtype = PAR_DTYPE_QS8, .scale = sx, .zero_point = 2};
    par_out_spec oy = {.name = "y", .dtype = PAR_DTYPE_QS8, .scale = sy, .zero_point = -128};
    CU_ASSERT_FATAL(par_graph_add_node(gr, "quantize", "q", 1, &vx, 0, NULL, &oq, &msg) >= 0);
    int32_t r_in = par_graph_find_value(gr, "xq");
    CU_ASSERT_FATAL(par_graph_add_node(gr, "relu6", "act", 1, &r_in, 0, NULL, &oy, &msg) >= 0);
    CU_ASSERT_FATAL(par_graph_mark_output(gr, par_graph_find_value(gr, "y"), &msg) == PAR_OK);
    CU_ASSERT_FATAL(par_graph_finalize(gr, &msg) == PAR_OK);
    int8_t out[N];
    int32_t steps = 0;
    CU_ASSERT_EQUAL_FATAL(run_graph(par_graph_desc_of(gr), x, out, &steps, &msg), PAR_OK);
    CU_ASSERT_EQUAL(steps, 2);
    int32_t lo, hi;
    par_requant_clamp_range(PAR_DTYPE_QS8, sy, -128, 0.0, 6.0, &lo, &hi);
    par_requant_add_params ap;
    CU_ASSERT_FATAL(par_requant_add_params_init(&ap, PAR_REQUANT_RNDNU, sx, 2, sx, 2, sy, -128, lo, hi, &msg) ==
                    PAR_OK);
    int bad = 0, distinct = 0;
    for (int i = 0; i < N; i++) {
        int32_t q = clampi(2 + (int32_t)rintf(x[i] * 16.0f), -128, 127);
        bad += out[i] != par_requant_add(q, 2, &ap);
        distinct += i > 0 && out[i] != out[0];
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(distinct > N / 2);
    par_graph_destroy(gr);
}

/* supports() of quantize -> op -> (graph output) with the op's input and output params given. */
static par_status supports_q8(const char *op, int32_t n_attrs, const par_attr *attrs, par_dtype dt, float sy,
                              int32_t zy, const char *needle, int *found)
{
    par_msg msg = {{0}};
    par_graph *gr = par_graph_create("q8");
    int64_t xd[4] = {1, 3, 8, 8};
    int32_t x = par_graph_add_input(gr, "x", PAR_DTYPE_F32, 4, xd, &msg);
    par_out_spec oq = {.name = "xq", .dtype = dt, .scale = 0.05f, .zero_point = 0};
    par_out_spec oy = {.name = "y", .dtype = dt, .scale = sy, .zero_point = zy};
    par_status st = PAR_ERROR;
    if (par_graph_add_node(gr, "quantize", "q", 1, &x, 0, NULL, &oq, &msg) >= 0) {
        int32_t xq = par_graph_find_value(gr, "xq");
        if (par_graph_add_node(gr, op, "n", 1, &xq, n_attrs, attrs, &oy, &msg) >= 0 &&
            par_graph_mark_output(gr, par_graph_find_value(gr, "y"), &msg) == PAR_OK &&
            par_graph_finalize(gr, &msg) == PAR_OK) {
            const par_backend *be = par_backend_xnnpack();
            void *ctx = NULL;
            if (be->init(&ctx, &msg) == PAR_OK) {
                msg.text[0] = 0;
                st = be->supports(ctx, par_graph_desc_of(gr), 1, &msg);
                be->destroy(ctx);
            }
        }
    }
    *found = needle && strstr(msg.text, needle) != NULL;
    par_graph_destroy(gr);
    return st;
}

static void test_q8_unsupported_reasons(void)
{
    int found = 0;
    int64_t k2[2] = {2, 2};
    par_attr pool[2] = {par_a_ints("kernel", 2, k2), par_a_ints("stride", 2, k2)};
    CU_ASSERT_EQUAL(supports_q8("avg_pool2d", 2, pool, PAR_DTYPE_QS8, 0.05f, 0, "qu8 only", &found), PAR_UNSUPPORTED);
    CU_ASSERT(found);
    CU_ASSERT_EQUAL(supports_q8("avg_pool2d", 2, pool, PAR_DTYPE_QU8, 0.05f, 0, NULL, &found), PAR_OK);
    /* XNNPACK's qu8 average pooling counts the padding (its f32 one does not): count_include_pad=1 only */
    int64_t p1[4] = {1, 1, 1, 1};
    par_attr padded[4] = {pool[0], pool[1], par_a_ints("padding", 4, p1), par_a_int("count_include_pad", 0)};
    CU_ASSERT_EQUAL(supports_q8("avg_pool2d", 4, padded, PAR_DTYPE_QU8, 0.05f, 0, "count_include_pad=0", &found),
                    PAR_UNSUPPORTED);
    CU_ASSERT(found);
    padded[3] = par_a_int("count_include_pad", 1);
    CU_ASSERT_EQUAL(supports_q8("avg_pool2d", 4, padded, PAR_DTYPE_QU8, 0.05f, 0, NULL, &found), PAR_OK);
    CU_ASSERT_EQUAL(supports_q8("max_pool2d", 2, pool, PAR_DTYPE_QS8, 0.1f, 0, "does not requantize", &found),
                    PAR_UNSUPPORTED);
    CU_ASSERT(found);
    CU_ASSERT_EQUAL(supports_q8("max_pool2d", 2, pool, PAR_DTYPE_QS8, 0.05f, 0, NULL, &found), PAR_OK);
    CU_ASSERT_EQUAL(supports_q8("sigmoid", 0, NULL, PAR_DTYPE_QS8, 1.0f / 255, -128, "requires scale", &found),
                    PAR_UNSUPPORTED);
    CU_ASSERT(found);
    CU_ASSERT_EQUAL(supports_q8("sigmoid", 0, NULL, PAR_DTYPE_QS8, 1.0f / 256, -128, NULL, &found), PAR_OK);
    CU_ASSERT_EQUAL(supports_q8("hardswish", 0, NULL, PAR_DTYPE_QU8, 0.05f, 0, "hardswish", &found), PAR_UNSUPPORTED);
    CU_ASSERT(found);
    CU_ASSERT_EQUAL(supports_q8("relu6", 0, NULL, PAR_DTYPE_QU8, 6.0f / 255, 0, NULL, &found), PAR_OK);
    /* qu8 activations with per-channel weights: XNNPACK's qc8 operators are qs8-only */
    par_msg msg = {{0}};
    par_graph *gr = par_graph_create("qu8pc");
    int64_t xd[4] = {1, 2, 4, 4}, wd[4] = {2, 2, 1, 1};
    int8_t w[4] = {1, -2, 3, -4};
    float ws[2] = {0.1f, 0.2f};
    int32_t x = par_graph_add_input(gr, "x", PAR_DTYPE_F32, 4, xd, &msg);
    int32_t vw = par_graph_add_const(gr, "w", PAR_DTYPE_QS8, 4, wd, w, &msg);
    CU_ASSERT_FATAL(par_graph_set_channel_quant(gr, vw, 0, ws, 2, &msg) == PAR_OK);
    par_out_spec oq = {.name = "xq", .dtype = PAR_DTYPE_QU8, .scale = 0.05f, .zero_point = 128};
    par_out_spec oy = {.name = "y", .dtype = PAR_DTYPE_QU8, .scale = 0.1f, .zero_point = 128};
    CU_ASSERT_FATAL(par_graph_add_node(gr, "quantize", "q", 1, &x, 0, NULL, &oq, &msg) >= 0);
    int32_t ins[3] = {par_graph_find_value(gr, "xq"), vw, -1};
    CU_ASSERT_FATAL(par_graph_add_node(gr, "conv2d", "conv", 3, ins, 0, NULL, &oy, &msg) >= 0);
    CU_ASSERT_FATAL(par_graph_mark_output(gr, par_graph_find_value(gr, "y"), &msg) == PAR_OK);
    CU_ASSERT_FATAL(par_graph_finalize(gr, &msg) == PAR_OK);
    const par_backend *be = par_backend_xnnpack();
    void *ctx = NULL;
    CU_ASSERT_FATAL(be->init(&ctx, &msg) == PAR_OK);
    CU_ASSERT_EQUAL(be->supports(ctx, par_graph_desc_of(gr), 1, &msg), PAR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "qc8"));
    par_requant_fn rq = (par_requant_fn)be->get_proc(ctx, PAR_PROC_REQUANT);
    CU_ASSERT_FATAL(rq != NULL);
    CU_ASSERT_EQUAL(rq(ctx), PAR_REQUANT_FP32);
    be->destroy(ctx);
    par_graph_destroy(gr);
}

static void test_knobs(void)
{
    const par_backend *be = par_backend_xnnpack();
    void *ctx = NULL;
    par_msg msg = {{0}};
    CU_ASSERT_EQUAL_FATAL(be->init(&ctx, &msg), PAR_OK);
    par_set_knob_fn knob = (par_set_knob_fn)be->get_proc(ctx, PAR_PROC_SET_KNOB);
    par_describe_fn describe = (par_describe_fn)be->get_proc(ctx, PAR_PROC_DESCRIBE);
    CU_ASSERT_FATAL(knob && describe);
    CU_ASSERT_EQUAL(knob(ctx, "threads", "0", &msg), PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "threads"));
    CU_ASSERT_EQUAL(knob(ctx, "threads", "2x", &msg), PAR_ERROR);
    CU_ASSERT_EQUAL(knob(ctx, "kernels", "scalar", &msg), PAR_ERROR);
    CU_ASSERT_EQUAL(knob(ctx, "threads", "2", &msg), PAR_OK);
    char buf[256];
    size_t need = describe(ctx, buf, sizeof buf);
    CU_ASSERT(need > 0 && need < sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "threads=2"));
    CU_ASSERT_PTR_NULL(be->get_proc(ctx, "no_such_proc"));
    be->destroy(ctx);
    be->destroy(NULL);
}

/* profile=1: conv2d -> relu (fused: one operator) -> flatten (a conversion to NCHW and a copy, both flatten's). The
 * device time is reported per node as the sum of the steps its lowering made: the conv and the flatten are timed,
 * the fused relu is not (-1), and the total covers them; without the knob there is no device time. */
static void test_profile(void)
{
    enum { C = 3, H = 4, W = 4, O = 5 };
    par_msg msg = {{0}};
    par_graph *gr = par_graph_create("profile");
    int64_t xd[4] = {1, C, H, W}, wd[4] = {O, C, 1, 1};
    float w[O * C], x[C * H * W], y[O * H * W];
    for (int i = 0; i < O * C; i++) w[i] = val(i, 9);
    for (int i = 0; i < C * H * W; i++) x[i] = val(i, 10);
    int32_t ins[3] = {par_graph_add_input(gr, "x", PAR_DTYPE_F32, 4, xd, &msg),
                      par_graph_add_const(gr, "w", PAR_DTYPE_F32, 4, wd, w, &msg), -1};
    par_out_spec oc = {.name = "c"}, orl = {.name = "r"}, of = {.name = "f"};
    CU_ASSERT_FATAL(par_graph_add_node(gr, "conv2d", "conv", 3, ins, 0, NULL, &oc, &msg) >= 0);
    int32_t r_in[1] = {par_graph_find_value(gr, "c")};
    CU_ASSERT_FATAL(par_graph_add_node(gr, "relu", "act", 1, r_in, 0, NULL, &orl, &msg) >= 0);
    int32_t f_in[1] = {par_graph_find_value(gr, "r")};
    CU_ASSERT_FATAL(par_graph_add_node(gr, "flatten", "flat", 1, f_in, 0, NULL, &of, &msg) >= 0);
    CU_ASSERT_FATAL(par_graph_mark_output(gr, par_graph_find_value(gr, "f"), &msg) == PAR_OK);
    CU_ASSERT_FATAL(par_graph_finalize(gr, &msg) == PAR_OK);
    const par_graph_desc *g = par_graph_desc_of(gr);
    const par_backend *be = par_backend_xnnpack();
    for (int profile = 0; profile <= 1; profile++) {
        void *ctx = NULL, *prep = NULL;
        CU_ASSERT_EQUAL_FATAL(be->init(&ctx, &msg), PAR_OK);
        par_set_knob_fn knob = (par_set_knob_fn)be->get_proc(ctx, PAR_PROC_SET_KNOB);
        CU_ASSERT_EQUAL(knob(ctx, "profile", "2", &msg), PAR_ERROR);
        CU_ASSERT_EQUAL(knob(ctx, "profile", profile ? "1" : "0", &msg), PAR_OK);
        par_device_time_fn dt = (par_device_time_fn)be->get_proc(ctx, PAR_PROC_DEVICE_TIME);
        CU_ASSERT_EQUAL(dt != NULL, profile);
        const void *in[1] = {x};
        void *out[1] = {y};
        CU_ASSERT_EQUAL_FATAL(be->prepare(ctx, g, &prep, &msg), PAR_OK);
        CU_ASSERT_EQUAL_FATAL(be->bind(ctx, prep, in, out, &msg), PAR_OK);
        CU_ASSERT_EQUAL_FATAL(be->run(ctx, prep, &msg), PAR_OK);
        if (dt) {
            double total = -1, node_ms[3] = {-2, -2, -2};
            CU_ASSERT_EQUAL(dt(ctx, prep, &total, node_ms, 3), 1);
            CU_ASSERT(node_ms[0] >= 0);
            CU_ASSERT_EQUAL(node_ms[1], -1);
            CU_ASSERT(node_ms[2] >= 0);
            CU_ASSERT(total >= node_ms[0] + node_ms[2]);
            char buf[256];
            ((par_describe_fn)be->get_proc(ctx, PAR_PROC_DESCRIBE))(ctx, buf, sizeof buf);
            CU_ASSERT_PTR_NOT_NULL(strstr(buf, ";profile=1"));
        }
        be->release(ctx, prep);
        be->destroy(ctx);
    }
    par_graph_destroy(gr);
}

static const CU_TestInfo tests[] = {
    {"layout conversion and physical views", test_layout},
    {"conv2d with asymmetric padding against double", test_conv_values},
    {"conv2d + batch_norm + relu6 fused into one operator", test_conv_bn_relu6_fused},
    {"broadcast add with a layout copy of the constant", test_broadcast_add_layout},
    {"UNSUPPORTED reasons", test_unsupported_reasons},
    {"qs8 conv2d with per-channel weights and a fused relu6, bit-exact", test_q8_conv_qc8_relu6},
    {"relu6 with its own scale: XNNPACK's add with a zero", test_q8_requantizing_relu6},
    {"quantized UNSUPPORTED reasons and the requantization scheme", test_q8_unsupported_reasons},
    {"knobs and describe", test_knobs},
    {"profile=1: device time per node", test_profile},
    CU_TEST_INFO_NULL,
};
#else
PAR_TEST_BACKEND_ABSENT("xnnpack", "built without XNNPACK (make deps installs libxnnpack-dev)")
#endif

PAR_TEST_MAIN("xnnpack", tests)
