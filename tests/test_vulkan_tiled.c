/*
 * test_vulkan_tiled.c - the vulkan backend's tiled conv2d / depthwise / GEMM shaders and the conv epilogue fusion,
 * on a real device: small graphs whose data are small integers (and quarters), so every f32 result is exact in any
 * summation order and the expected values, computed here in double, must match bit for bit. Each test also checks
 * which shaders the prepared graph dispatches (the tiled one, the fused nodes absent), so a silent fallback to the
 * general shaders fails. Edge cases: channel counts not multiples of 4 (NC4HW4 padding lanes), K not a multiple of
 * the K tile, groups, stride and dilation, batch > 1, broadcast matmul batches, a NaN through a fused clamp, and a
 * conv whose output is also a graph output (no fusion); and MobileNetV2's prepared graph (one dispatch per conv, every
 * batch_norm and relu6 absorbed). Skipped, never passed, without a Vulkan device.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/case.h"
#include "tmain.h"

#if defined(__SANITIZE_ADDRESS__)
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "detect_leaks=0"; } /* the driver's unloaded modules (test_vulkan.c) */
#endif

#ifdef PAR_HAVE_VULKAN
#include "backends/vulkan/vk_internal.h"

const par_backend *par_backend_vulkan(void);

static par_msg m;

/* ---- A small graph builder ---- */
enum { MAXV = 16, MAXN = 8, MAXA = 8 };
typedef struct gb {
    par_value v[MAXV];
    par_node n[MAXN];
    int32_t io[MAXN][2][6];
    par_attr attrs[MAXN][MAXA];
    int32_t gin[4], gout[4];
    par_graph_desc g;
} gb;

static int value(gb *b, const char *name, int rank, const int64_t *dims, par_value_kind kind, const float *data)
{
    int k = b->g.n_values++;
    par_value *v = &b->v[k];
    memset(v, 0, sizeof *v);
    v->name = name;
    v->dtype = PAR_DTYPE_F32;
    v->rank = rank;
    v->numel = 1;
    for (int i = 0; i < rank; i++) {
        v->dims[i] = dims[i];
        v->numel *= dims[i];
    }
    v->kind = kind;
    v->producer = -1;
    v->data = data;
    v->quant_axis = -1;
    if (kind == PAR_VALUE_INPUT) b->gin[b->g.n_inputs++] = k;
    return k;
}

static par_attr *node(gb *b, const char *op, int n_in, const int *ins, int out)
{
    int k = b->g.n_nodes++;
    par_node *n = &b->n[k];
    memset(n, 0, sizeof *n);
    n->name = op;
    n->op = op;
    n->n_inputs = n_in;
    for (int i = 0; i < n_in; i++) b->io[k][0][i] = ins[i];
    b->io[k][1][0] = out;
    n->inputs = b->io[k][0];
    n->n_outputs = 1;
    n->outputs = b->io[k][1];
    n->attrs = b->attrs[k];
    b->v[out].producer = k;
    return b->attrs[k];
}

static void attr_ints(gb *b, const char *name, int count, const int64_t *ints)
{
    par_node *n = &b->n[b->g.n_nodes - 1];
    b->attrs[b->g.n_nodes - 1][n->n_attrs++] =
        (par_attr){.name = name, .type = PAR_ATTR_INTS, .count = count, .ints = ints};
}

static void attr_int(gb *b, const char *name, int64_t i)
{
    par_node *n = &b->n[b->g.n_nodes - 1];
    b->attrs[b->g.n_nodes - 1][n->n_attrs++] = (par_attr){.name = name, .type = PAR_ATTR_INT, .i = i};
}

static void attr_float(gb *b, const char *name, double f)
{
    par_node *n = &b->n[b->g.n_nodes - 1];
    b->attrs[b->g.n_nodes - 1][n->n_attrs++] = (par_attr){.name = name, .type = PAR_ATTR_FLOAT, .f = f};
}

static void finish(gb *b, int n_out, const int *outs)
{
    for (int i = 0; i < n_out; i++) b->gout[i] = outs[i];
    b->g.name = "tiled";
    b->g.values = b->v;
    b->g.nodes = b->n;
    b->g.inputs = b->gin;
    b->g.outputs = b->gout;
    b->g.n_outputs = n_out;
}

/* Small integers in [-r, r] from a counter (deterministic, no PRNG needed). */
static void ints(float *x, int64_t n, int r, int salt)
{
    for (int64_t i = 0; i < n; i++) x[i] = (float)((i * 7 + salt * 13 + (i / 5) * 3) % (2 * r + 1) - r);
}

/* The number of dispatches of the prepared graph that use `shader`. */
static int count_shader(void *prep, const char *shader)
{
    const vk_graph *vg = prep;
    int k = 0;
    for (int i = 0; i < vg->n_disp; i++) k += strcmp(vg->disp[i].shader, shader) == 0;
    return k;
}

/* Prepares, runs once with `ins`, and returns the prepared graph (NULL on failure, asserted). */
static void *prepare_run(const par_backend *be, void *ctx, gb *b, const void *const *ins, void *const *outs)
{
    for (int i = 0; i < b->g.n_nodes; i++) CU_ASSERT_EQUAL(be->supports(ctx, &b->g, i, &m), PAR_OK);
    void *prep = NULL;
    par_status st = be->prepare(ctx, &b->g, &prep, &m);
    CU_ASSERT_EQUAL(st, PAR_OK);
    if (st != PAR_OK) return NULL;
    CU_ASSERT_EQUAL(be->bind(ctx, prep, ins, outs, &m), PAR_OK);
    CU_ASSERT_EQUAL(be->run(ctx, prep, &m), PAR_OK);
    return prep;
}

/* conv2d reference in double: x [N, C, H, W], w [O, C/g, KH, KW]. */
static double conv_at(const float *x, const float *w, const float *bias, const int64_t xd[4], const int64_t wd[4],
                      int g, const int64_t s[2], const int64_t p[2], const int64_t d[2], int64_t n, int64_t o,
                      int64_t oh, int64_t ow)
{
    int64_t cg = xd[1] / g, og = wd[0] / g, g0 = (o / og) * cg;
    double acc = 0;
    for (int64_t ci = 0; ci < cg; ci++)
        for (int64_t kh = 0; kh < wd[2]; kh++)
            for (int64_t kw = 0; kw < wd[3]; kw++) {
                int64_t ih = oh * s[0] - p[0] + kh * d[0], iw = ow * s[1] - p[1] + kw * d[1];
                if (ih < 0 || ih >= xd[2] || iw < 0 || iw >= xd[3]) continue;
                acc += (double)x[((n * xd[1] + g0 + ci) * xd[2] + ih) * xd[3] + iw] *
                       w[((o * cg + ci) * wd[2] + kh) * wd[3] + kw];
            }
    return acc + (bias ? bias[o] : 0.0);
}

/* conv2d (grouped or depthwise) -> batch_norm (eps 0, var 4: scale w / 2 exact) -> relu6, fused into one dispatch;
 * a NaN in the input reaches some outputs through the clamp. */
static void conv_bn_relu6(int depthwise)
{
    const par_backend *be = par_backend_vulkan();
    void *ctx = NULL;
    if (be->init(&ctx, &m) != PAR_OK) PAR_TEST_SKIP(m.text);
    /* dense-grouped: x [2, 10, 9, 7], w [16, 5, 3, 3], groups 2, stride 1, pad 1, dilation 1 (K = 45: 3 K tiles);
     * depthwise: x [2, 6, 9, 7], w [6, 1, 3, 3], groups 6, stride 2, pad 2, dilation 2. */
    int64_t C = depthwise ? 6 : 10, O = depthwise ? 6 : 16, G = depthwise ? 6 : 2;
    int64_t xd[4] = {2, C, 9, 7}, wd[4] = {O, C / G, 3, 3};
    int64_t st[2] = {depthwise ? 2 : 1, depthwise ? 2 : 1}, pd[2] = {depthwise ? 2 : 1, depthwise ? 2 : 1};
    int64_t dl[2] = {depthwise ? 2 : 1, depthwise ? 2 : 1};
    int64_t pads[4] = {pd[0], pd[1], pd[0], pd[1]};
    int64_t OH = (xd[2] + 2 * pd[0] - dl[0] * 2 - 1) / st[0] + 1, OW = (xd[3] + 2 * pd[1] - dl[1] * 2 - 1) / st[1] + 1;
    int64_t yd[4] = {2, O, OH, OW}, od1[1] = {O};
    float *x = malloc(2 * C * 63 * sizeof *x), *w = malloc((size_t)(O * (C / G) * 9) * sizeof *w);
    float bias[16], bw[16], bb[16], bm[16], bv[16];
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    ints(x, 2 * C * 63, 3, 1);
    x[16] = NAN; /* (0, 0, 2, 2): reached by both geometries */
    ints(w, O * (C / G) * 9, 2, 2);
    for (int i = 0; i < O; i++) {
        bias[i] = (float)(i % 5) - 2.0f;
        bw[i] = (float)(i % 3) - 1.0f; /* scale bw / 2 */
        bb[i] = 0.25f * (float)(i % 4);
        bm[i] = (float)(i % 7) - 3.0f;
        bv[i] = 4.0f;
    }
    gb b;
    memset(&b, 0, sizeof b);
    int vx = value(&b, "x", 4, xd, PAR_VALUE_INPUT, NULL), vw = value(&b, "w", 4, wd, PAR_VALUE_CONST, w);
    int vb = value(&b, "b", 1, od1, PAR_VALUE_CONST, bias);
    int p1 = value(&b, "bw", 1, od1, PAR_VALUE_CONST, bw), p2 = value(&b, "bb", 1, od1, PAR_VALUE_CONST, bb);
    int p3 = value(&b, "bm", 1, od1, PAR_VALUE_CONST, bm), p4 = value(&b, "bv", 1, od1, PAR_VALUE_CONST, bv);
    int y = value(&b, "y", 4, yd, PAR_VALUE_NODE, NULL), z = value(&b, "z", 4, yd, PAR_VALUE_NODE, NULL);
    int r = value(&b, "r", 4, yd, PAR_VALUE_NODE, NULL);
    node(&b, "conv2d", 3, (int[]){vx, vw, vb}, y);
    attr_ints(&b, "stride", 2, st);
    attr_ints(&b, "padding", 4, pads);
    attr_ints(&b, "dilation", 2, dl);
    attr_int(&b, "groups", G);
    node(&b, "batch_norm", 5, (int[]){y, p1, p2, p3, p4}, z);
    attr_float(&b, "eps", 0.0);
    node(&b, "relu6", 1, (int[]){z}, r);
    finish(&b, 1, (int[]){r});
    int64_t ny = 2 * O * OH * OW;
    float *out = malloc((size_t)ny * sizeof *out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    for (int64_t i = 0; i < ny; i++) out[i] = -999.0f;
    void *prep = prepare_run(be, ctx, &b, (const void *[]){x}, (void *[]){out});
    if (prep) {
        /* in-copy, the fused conv, out-copy: batch_norm and relu6 lower to nothing */
        CU_ASSERT_EQUAL(count_shader(prep, depthwise ? "conv_dw" : "conv_gemm"), 1);
        CU_ASSERT_EQUAL(((vk_graph *)prep)->n_disp, 3);
        int bad = 0, nans = 0;
        for (int64_t n = 0; n < 2; n++)
            for (int64_t o = 0; o < O; o++)
                for (int64_t oh = 0; oh < OH; oh++)
                    for (int64_t ow = 0; ow < OW; ow++) {
                        double v = conv_at(x, w, bias, xd, wd, (int)G, st, pd, dl, n, o, oh, ow);
                        v = v * (bw[o] / 2.0) + (bb[o] - bm[o] * (bw[o] / 2.0));
                        if (!isnan(v)) v = v < 0 ? 0 : v > 6 ? 6 : v;
                        float got = out[((n * O + o) * OH + oh) * OW + ow];
                        nans += isnan(v);
                        bad += isnan(v) ? !isnan(got) : got != (float)v;
                    }
        CU_ASSERT_EQUAL(bad, 0);
        CU_ASSERT(nans > 0); /* the NaN reached the output through the fused clamp */
        be->release(ctx, prep);
    }
    free(x);
    free(w);
    free(out);
    be->destroy(ctx);
}

static void test_conv_gemm_fused(void)
{
    conv_bn_relu6(0);
}

static void test_conv_dw_fused(void)
{
    conv_bn_relu6(1);
}

/* A 1x1 conv (the plain-GEMM variant, O = 37 over two channel tiles) whose output is a graph output and also feeds
 * a relu: no fusion, both outputs right; then kernels=direct gives the same bits through the general shader. */
static void pointwise(int direct)
{
    const par_backend *be = par_backend_vulkan();
    void *ctx = NULL;
    if (be->init(&ctx, &m) != PAR_OK) PAR_TEST_SKIP(m.text);
    if (direct) {
        par_set_knob_fn knob = (par_set_knob_fn)be->get_proc(ctx, PAR_PROC_SET_KNOB);
        CU_ASSERT_EQUAL(knob(ctx, "kernels", "direct", &m), PAR_OK);
        CU_ASSERT_EQUAL(knob(ctx, "kernels", "fast", &m), PAR_ERROR);
    }
    int64_t xd[4] = {3, 19, 5, 6}, wd[4] = {37, 19, 1, 1}, yd[4] = {3, 37, 5, 6};
    static const int64_t one[2] = {1, 1}, zero[4] = {0, 0, 0, 0};
    float x[3 * 19 * 30], w[37 * 19], out_y[3 * 37 * 30], out_r[3 * 37 * 30];
    ints(x, 3 * 19 * 30, 4, 3);
    ints(w, 37 * 19, 3, 4);
    gb b;
    memset(&b, 0, sizeof b);
    int vx = value(&b, "x", 4, xd, PAR_VALUE_INPUT, NULL), vw = value(&b, "w", 4, wd, PAR_VALUE_CONST, w);
    int y = value(&b, "y", 4, yd, PAR_VALUE_NODE, NULL), r = value(&b, "r", 4, yd, PAR_VALUE_NODE, NULL);
    node(&b, "conv2d", 3, (int[]){vx, vw, -1}, y);
    attr_ints(&b, "stride", 2, one);
    attr_ints(&b, "padding", 4, zero);
    attr_ints(&b, "dilation", 2, one);
    attr_int(&b, "groups", 1);
    node(&b, "relu", 1, (int[]){y}, r);
    finish(&b, 2, (int[]){y, r});
    void *prep = prepare_run(be, ctx, &b, (const void *[]){x}, (void *[]){out_y, out_r});
    if (prep) {
        CU_ASSERT_EQUAL(count_shader(prep, "conv_gemm"), direct ? 0 : 1);
        CU_ASSERT_EQUAL(count_shader(prep, "conv2d"), direct ? 1 : 0);
        CU_ASSERT_EQUAL(count_shader(prep, "unary"), 4); /* in, relu, two outs */
        int bad = 0;
        for (int64_t n = 0; n < 3; n++)
            for (int64_t o = 0; o < 37; o++)
                for (int64_t p = 0; p < 30; p++) {
                    double v = conv_at(x, w, NULL, xd, wd, 1, one, zero, one, n, o, p / 6, p % 6);
                    int64_t i = (n * 37 + o) * 30 + p;
                    bad += out_y[i] != (float)v || out_r[i] != (float)(v > 0 ? v : 0);
                }
        CU_ASSERT_EQUAL(bad, 0);
        be->release(ctx, prep);
    }
    be->destroy(ctx);
}

static void test_pointwise_unfused(void)
{
    pointwise(0);
}

static void test_pointwise_direct(void)
{
    pointwise(1);
}

/* matmul a [2, 3, 33, 21] x b [3, 21, 35] (b's batch broadcast over a's first dim; M, N over two tiles, K = 21 not
 * a multiple of the K tile) and linear x [2, 3, 33, 21] . w [35, 21]^T + bias: both on gemm.comp. */
static void test_gemm(void)
{
    const par_backend *be = par_backend_vulkan();
    void *ctx = NULL;
    if (be->init(&ctx, &m) != PAR_OK) PAR_TEST_SKIP(m.text);
    enum { B0 = 2, B1 = 3, M = 33, K = 21, N = 35 };
    int64_t ad[4] = {B0, B1, M, K}, bd[3] = {B1, K, N}, od[4] = {B0, B1, M, N}, wd[2] = {N, K}, nd[1] = {N};
    static float a[B0 * B1 * M * K], bm[B1 * K * N], w[N * K], bias[N], o1[B0 * B1 * M * N], o2[B0 * B1 * M * N];
    ints(a, B0 * B1 * M * K, 3, 5);
    ints(bm, B1 * K * N, 2, 6);
    ints(w, N * K, 2, 7);
    ints(bias, N, 5, 8);
    gb b;
    memset(&b, 0, sizeof b);
    int va = value(&b, "a", 4, ad, PAR_VALUE_INPUT, NULL), vb = value(&b, "b", 3, bd, PAR_VALUE_INPUT, NULL);
    int vw = value(&b, "w", 2, wd, PAR_VALUE_CONST, w), vc = value(&b, "c", 1, nd, PAR_VALUE_CONST, bias);
    int y1 = value(&b, "y1", 4, od, PAR_VALUE_NODE, NULL), y2 = value(&b, "y2", 4, od, PAR_VALUE_NODE, NULL);
    node(&b, "matmul", 2, (int[]){va, vb}, y1);
    node(&b, "linear", 3, (int[]){va, vw, vc}, y2);
    finish(&b, 2, (int[]){y1, y2});
    void *prep = prepare_run(be, ctx, &b, (const void *[]){a, bm}, (void *[]){o1, o2});
    if (prep) {
        CU_ASSERT_EQUAL(count_shader(prep, "gemm"), 2);
        int bad = 0;
        for (int i0 = 0; i0 < B0; i0++)
            for (int i1 = 0; i1 < B1; i1++)
                for (int mm = 0; mm < M; mm++)
                    for (int nn = 0; nn < N; nn++) {
                        double s1 = 0, s2 = bias[nn];
                        for (int t = 0; t < K; t++) {
                            double av = a[((i0 * B1 + i1) * M + mm) * K + t];
                            s1 += av * bm[(i1 * K + t) * N + nn];
                            s2 += av * w[nn * K + t];
                        }
                        int i = ((i0 * B1 + i1) * M + mm) * N + nn;
                        bad += o1[i] != (float)s1 || o2[i] != (float)s2;
                    }
        CU_ASSERT_EQUAL(bad, 0);
        be->release(ctx, prep);
    }
    be->destroy(ctx);
}

/* MobileNetV2 (cases/models): every conv2d takes a tiled shader and absorbs its batch_norm and relu6, so the
 * prepared graph has one dispatch per conv plus the 10 adds, global_avg_pool2d, flatten, linear and the two edge
 * copies; and kernels=direct keeps every node. Prepare only (the model's numerics are `parity run`'s job). */
static void test_mobilenet_v2_dispatches(void)
{
    const par_backend *be = par_backend_vulkan();
    void *ctx = NULL;
    if (be->init(&ctx, &m) != PAR_OK) PAR_TEST_SKIP(m.text);
    par_case *c = par_case_load(PAR_SOURCE_DIR "/cases/models/mobilenet_v2.json", &m);
    CU_ASSERT_PTR_NOT_NULL(c);
    if (c) {
        const par_graph_desc *g = par_graph_desc_of(c->graph);
        CU_ASSERT_EQUAL(g->n_nodes, 152); /* 52 conv2d, 52 batch_norm, 35 relu6, 10 add, gap, flatten, linear */
        void *prep = NULL;
        CU_ASSERT_EQUAL(be->prepare(ctx, g, &prep, &m), PAR_OK);
        if (prep) {
            CU_ASSERT_EQUAL(count_shader(prep, "conv_gemm") + count_shader(prep, "conv_dw"), 52);
            CU_ASSERT_EQUAL(count_shader(prep, "conv_dw"), 17);
            CU_ASSERT_EQUAL(count_shader(prep, "gemm"), 0); /* the 1-row classifier: below GEMM_MIN_ROWS */
            CU_ASSERT_EQUAL(count_shader(prep, "matmul"), 1);
            CU_ASSERT_EQUAL(((vk_graph *)prep)->n_disp, 52 + 10 + 3 + 2);
            be->release(ctx, prep);
        }
    }
    be->destroy(ctx);
    ctx = NULL;
    if (c && be->init(&ctx, &m) == PAR_OK) {
        par_set_knob_fn knob = (par_set_knob_fn)be->get_proc(ctx, PAR_PROC_SET_KNOB);
        CU_ASSERT_EQUAL(knob(ctx, "kernels", "direct", &m), PAR_OK);
        void *prep = NULL;
        CU_ASSERT_EQUAL(be->prepare(ctx, par_graph_desc_of(c->graph), &prep, &m), PAR_OK);
        if (prep) {
            CU_ASSERT_EQUAL(count_shader(prep, "conv2d"), 52);
            CU_ASSERT_EQUAL(((vk_graph *)prep)->n_disp, 152 + 2);
            be->release(ctx, prep);
        }
        be->destroy(ctx);
    }
    par_case_destroy(c);
}

static const CU_TestInfo tests[] = {
    {"conv_gemm_fused", test_conv_gemm_fused},
    {"conv_dw_fused", test_conv_dw_fused},
    {"pointwise_unfused", test_pointwise_unfused},
    {"pointwise_direct", test_pointwise_direct},
    {"gemm", test_gemm},
    {"mobilenet_v2_dispatches", test_mobilenet_v2_dispatches},
    CU_TEST_INFO_NULL,
};
#else
static void test_not_built(void)
{
    PAR_TEST_SKIP("the vulkan backend is not built (no Vulkan headers or glslc)");
}
static const CU_TestInfo tests[] = {
    {"not_built", test_not_built},
    CU_TEST_INFO_NULL,
};
#endif

PAR_TEST_MAIN("vulkan_tiled", tests)
