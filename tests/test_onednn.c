/*
 * test_onednn.c - unit tests of the onednn backend's adapter (backends/onednn/): knobs, describe and the
 * declarations (fpmath=bf16 declares PAR_ARITH_BF16, requantization fp32); a 16-channel convolution that oneDNN runs
 * in its blocked layouts (reorders around it) on small-integer data whose exact result is computed here, with a
 * fused relu and a fused add (sum post-op); a qu8 x qs8 convolution with per-channel scales, zero points and bias
 * whose output integers are computed here by hand (fp32 ratio, round half to even); a conv -> relu -> conv chain kept
 * in oneDNN's blocked layout between the two (fewer reorders than layout=plain, the same exact integers); and the
 * UNSUPPORTED reasons for what oneDNN 2.6 lacks. Built without oneDNN, it checks only that the backend is absent. No timing here.
 */
#include <math.h>
#include <stdlib.h>

#include "core/graph.h"
#include "exec/exec.h"
#include "backend_absent.h"
#include "tmain.h"

#ifdef PAR_HAVE_ONEDNN
#include "backends/onednn/onednn_internal.h"

const par_backend *par_backend_onednn(void);

typedef struct run_info {
    int n_steps, n_reorders;
    int32_t fused[8];
    char note[320];
} run_info;

/* init, knobs (key=value pairs, NULL-terminated), supports, prepare, bind, run, release, destroy */
static par_status run_graph(const par_graph_desc *g, const char *const *knobs, const void *const *in, void *out,
                            run_info *info, par_msg *msg)
{
    const par_backend *be = par_backend_onednn();
    void *ctx = NULL, *prep = NULL;
    par_status st = be->init(&ctx, msg);
    if (st != PAR_OK) return st;
    par_set_knob_fn set = (par_set_knob_fn)be->get_proc(ctx, PAR_PROC_SET_KNOB);
    for (int k = 0; knobs && knobs[k] && st == PAR_OK; k += 2) st = set(ctx, knobs[k], knobs[k + 1], msg);
    for (int32_t i = 0; i < g->n_nodes && st == PAR_OK; i++) st = be->supports(ctx, g, i, msg);
    if (st == PAR_OK) st = be->prepare(ctx, g, &prep, msg);
    void *outs[1] = {out};
    if (st == PAR_OK) st = be->bind(ctx, prep, in, outs, msg);
    if (st == PAR_OK) st = be->run(ctx, prep, msg);
    if (st == PAR_OK && info) {
        const dn_plan *p = prep;
        info->n_steps = p->n_steps;
        info->n_reorders = 0;
        for (int i = 0; i < p->n_steps; i++) {
            const_dnnl_primitive_desc_t pd = NULL;
            dnnl_primitive_kind_t kind = dnnl_undefined_primitive;
            if (p->steps[i].prim && dnnl_primitive_get_primitive_desc(p->steps[i].prim, &pd) == dnnl_success)
                dnnl_primitive_desc_query(pd, dnnl_query_primitive_kind, 0, &kind);
            info->n_reorders += kind == dnnl_reorder;
        }
        for (int32_t i = 0; i < g->n_nodes && i < 8; i++) info->fused[i] = p->fused_into[i];
        snprintf(info->note, sizeof info->note, "%s", p->note);
    }
    be->release(ctx, prep);
    be->destroy(ctx);
    return st;
}

static void test_knobs(void)
{
    const par_backend *be = par_backend_onednn();
    par_msg msg = {{0}};
    void *ctx = NULL;
    CU_ASSERT_EQUAL_FATAL(be->init(&ctx, &msg), PAR_OK);
    par_set_knob_fn set = (par_set_knob_fn)be->get_proc(ctx, PAR_PROC_SET_KNOB);
    par_describe_fn desc = (par_describe_fn)be->get_proc(ctx, PAR_PROC_DESCRIBE);
    par_arith_fn arith = (par_arith_fn)be->get_proc(ctx, PAR_PROC_ARITH);
    par_requant_fn rq = (par_requant_fn)be->get_proc(ctx, PAR_PROC_REQUANT);
    CU_ASSERT_FATAL(set && desc && arith && rq && be->get_proc(ctx, PAR_PROC_NOTE));
    CU_ASSERT_PTR_NULL(be->get_proc(ctx, "no_such_proc"));
    CU_ASSERT_EQUAL(arith(ctx), PAR_ARITH_F32);
    CU_ASSERT_EQUAL(rq(ctx), PAR_REQUANT_FP32);
    CU_ASSERT_EQUAL(set(ctx, "threads", "0", &msg), PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "threads"));
    CU_ASSERT_EQUAL(set(ctx, "threads", "2x", &msg), PAR_ERROR);
    CU_ASSERT_EQUAL(set(ctx, "fpmath", "f16", &msg), PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "strict or bf16"));
    CU_ASSERT_EQUAL(set(ctx, "isa", "avx2", &msg), PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "unknown knob 'isa'"));
    CU_ASSERT_EQUAL(set(ctx, "threads", "2", &msg), PAR_OK);
    CU_ASSERT_EQUAL(set(ctx, "fpmath", "bf16", &msg), PAR_OK);
    CU_ASSERT_EQUAL(arith(ctx), PAR_ARITH_BF16);
    char buf[256];
    size_t need = desc(ctx, buf, sizeof buf);
    CU_ASSERT(need > 0 && need < sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "threads=2;fpmath=bf16;layout=blocked;library=oneDNN 2."));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "runtime=omp"));
    CU_ASSERT_EQUAL(set(ctx, "layout", "nhwc", &msg), PAR_ERROR);
    CU_ASSERT_EQUAL(set(ctx, "layout", "plain", &msg), PAR_OK);
    desc(ctx, buf, sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "layout=plain"));
    CU_ASSERT_EQUAL(set(ctx, "fpmath", "strict", &msg), PAR_OK);
    CU_ASSERT_EQUAL(arith(ctx), PAR_ARITH_F32);
    be->destroy(ctx);
    be->destroy(NULL);
}

/* conv2d 1x16x5x5 -> 16x5x5, 3x3, padding [1, 0, 1, 2] (asymmetric), on integers in [-2, 2] and weights in {-1, 0, 1}:
 * every product and sum is an exact integer in f32, so the result is known exactly whatever the summation order.
 * Then relu and an add of a constant of the output's shape: both fuse as post-ops. 16 channels make oneDNN choose a blocked layout, so reorders run around the convolution. */
static void test_conv_blocked_exact(void)
{
    enum { C = 16, H = 5, W = 5, O = 16, K = 3, OH = 5, OW = 5 };
    static float x[C * H * W], w[O * C * K * K], bias[O], addend[O * OH * OW], out[O * OH * OW];
    for (int i = 0; i < C * H * W; i++) x[i] = (float)((i * 7) % 5 - 2);
    for (int i = 0; i < O * C * K * K; i++) w[i] = (float)((i * 11) % 3 - 1);
    for (int i = 0; i < O; i++) bias[i] = (float)(i % 4 - 2);
    for (int i = 0; i < O * OH * OW; i++) addend[i] = (float)(i % 9 - 4);
    par_msg msg = {{0}};
    par_graph *gr = par_graph_create("conv");
    int64_t xd[4] = {1, C, H, W}, wd[4] = {O, C, K, K}, bd[1] = {O}, yd[4] = {1, O, OH, OW};
    int32_t ins[3] = {par_graph_add_input(gr, "x", PAR_DTYPE_F32, 4, xd, &msg),
                      par_graph_add_const(gr, "w", PAR_DTYPE_F32, 4, wd, w, &msg),
                      par_graph_add_const(gr, "b", PAR_DTYPE_F32, 1, bd, bias, &msg)};
    int32_t va = par_graph_add_const(gr, "a", PAR_DTYPE_F32, 4, yd, addend, &msg);
    int64_t pad[4] = {1, 0, 1, 2};
    par_attr at[1] = {par_a_ints("padding", 4, pad)};
    par_out_spec o1 = {.name = "c"}, o2 = {.name = "r"}, o3 = {.name = "y"};
    CU_ASSERT_FATAL(par_graph_add_node(gr, "conv2d", "conv", 3, ins, 1, at, &o1, &msg) >= 0);
    int32_t r_in[1] = {par_graph_find_value(gr, "c")};
    CU_ASSERT_FATAL(par_graph_add_node(gr, "relu", "act", 1, r_in, 0, NULL, &o2, &msg) >= 0);
    int32_t a_in[2] = {va, par_graph_find_value(gr, "r")};
    CU_ASSERT_FATAL(par_graph_add_node(gr, "add", "plus", 2, a_in, 0, NULL, &o3, &msg) >= 0);
    CU_ASSERT_FATAL(par_graph_mark_output(gr, par_graph_find_value(gr, "y"), &msg) == PAR_OK);
    CU_ASSERT_FATAL(par_graph_finalize(gr, &msg) == PAR_OK);
    const void *in[1] = {x};
    run_info info;
    par_status st = run_graph(par_graph_desc_of(gr), NULL, in, out, &info, &msg);
    CU_ASSERT_EQUAL_FATAL(st, PAR_OK);
    /* relu and add are post-ops of the convolution: no steps of their own */
    CU_ASSERT_EQUAL(info.fused[0], -1);
    CU_ASSERT_EQUAL(info.fused[1], 0);
    CU_ASSERT_EQUAL(info.fused[2], 0);
    /* blocked layouts: the source reorder, the addend into the destination, the destination back */
    CU_ASSERT(info.n_reorders >= 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(info.note, "conv:"));
    int bad = 0, zeros = 0;
    for (int o = 0; o < O; o++)
        for (int oh = 0; oh < OH; oh++)
            for (int ow = 0; ow < OW; ow++) {
                long acc = (long)bias[o];
                for (int c = 0; c < C; c++)
                    for (int kh = 0; kh < K; kh++)
                        for (int kw = 0; kw < K; kw++) {
                            int ih = oh - 1 + kh, iw = ow + kw;
                            if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                                acc += (long)w[((o * C + c) * K + kh) * K + kw] * (long)x[(c * H + ih) * W + iw];
                        }
                zeros += acc <= 0;
                long want = (acc > 0 ? acc : 0) + (long)addend[(o * OH + oh) * OW + ow];
                bad += out[(o * OH + oh) * OW + ow] != (float)want;
            }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(zeros > 0 && zeros < O * OH * OW); /* the relu cuts some, not all */
    par_graph_destroy(gr);
}

/* qu8 x [1,4,3,3] (scale 0.5, zero point 3) * qs8 w [8,4,1,1] per channel (scales 1/64 .. 8/64) + i32 bias ->
 * qu8 y (scale 0.25, zero point 10). Ratio r[o] = 0.5 * s_w[o] / 0.25 = (o + 1) / 32, exact in float, so
 * y = clamp(10 + rne(acc * r[o])) is known here exactly; acc = sum (q_x - 3) q_w + bias. */
static void test_int8_conv_exact(void)
{
    enum { C = 4, H = 3, W = 3, O = 8 };
    uint8_t x[C * H * W], out[O * H * W];
    int8_t w[O * C];
    int32_t bias[O];
    float ws[O];
    for (int i = 0; i < C * H * W; i++) x[i] = (uint8_t)((i * 37) % 64);
    for (int i = 0; i < O * C; i++) w[i] = (int8_t)((i * 53) % 17 - 8);
    for (int o = 0; o < O; o++) bias[o] = (o - 4) * 100, ws[o] = (float)(o + 1) / 64.0f;
    par_msg msg = {{0}};
    par_graph *gr = par_graph_create("qconv");
    int64_t xd[4] = {1, C, H, W}, wd[4] = {O, C, 1, 1}, bd[1] = {O};
    int32_t ins[3] = {par_graph_add_input(gr, "x", PAR_DTYPE_QU8, 4, xd, &msg),
                      par_graph_add_const(gr, "w", PAR_DTYPE_QS8, 4, wd, w, &msg),
                      par_graph_add_const(gr, "b", PAR_DTYPE_I32, 1, bd, bias, &msg)};
    CU_ASSERT_FATAL(ins[0] >= 0 && ins[1] >= 0 && ins[2] >= 0);
    CU_ASSERT_FATAL(par_graph_set_quant(gr, ins[0], 0.5f, 3, &msg) == PAR_OK);
    CU_ASSERT_FATAL(par_graph_set_channel_quant(gr, ins[1], 0, ws, O, &msg) == PAR_OK);
    par_out_spec os = {.name = "y", .dtype = PAR_DTYPE_QU8, .scale = 0.25f, .zero_point = 10};
    CU_ASSERT_FATAL(par_graph_add_node(gr, "conv2d", "conv", 3, ins, 0, NULL, &os, &msg) >= 0);
    CU_ASSERT_FATAL(par_graph_mark_output(gr, par_graph_find_value(gr, "y"), &msg) == PAR_OK);
    CU_ASSERT_FATAL(par_graph_finalize(gr, &msg) == PAR_OK);
    const void *in[1] = {x};
    par_status st = run_graph(par_graph_desc_of(gr), NULL, in, out, NULL, &msg);
    CU_ASSERT_EQUAL_FATAL(st, PAR_OK);
    int bad = 0, ties = 0, lo = 0, hi = 0, mid = 0;
    for (int o = 0; o < O; o++)
        for (int i = 0; i < H * W; i++) {
            long acc = bias[o];
            for (int c = 0; c < C; c++) acc += (long)(x[c * H * W + i] - 3) * w[o * C + c];
            double t = (double)acc * (o + 1) / 32.0;
            ties += t - floor(t) == 0.5;
            double q = 10 + nearbyint(t); /* the default rounding mode: half to even */
            q = q < 0 ? 0 : q > 255 ? 255 : q;
            lo += q == 0, hi += q == 255, mid += q > 0 && q < 255;
            bad += out[o * H * W + i] != (uint8_t)q;
        }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(ties > 0); /* some products land exactly on a half: their rounding is checked too */
    PAR_TEST_NOTE("int8 conv: %d ties, %d at 0, %d at 255, %d between\n", ties, lo, hi, mid);
    CU_ASSERT(mid > 0 && lo + hi > 0);
    par_graph_destroy(gr);
}

/* conv 3x3 -> relu -> conv 1x1, 16 channels, exact on integers: with layout=blocked the value between the two
 * convolutions stays in oneDNN's blocked layout (fewer reorders than layout=plain), and both give the integers
 * computed here. */
static void test_blocked_chain(void)
{
    enum { C = 16, H = 4, W = 4 };
    static float x[C * H * W], w1[C * C * 9], w2[C * C], out[2][C * H * W];
    for (int i = 0; i < C * H * W; i++) x[i] = (float)((i * 7) % 5 - 2);
    for (int i = 0; i < C * C * 9; i++) w1[i] = (float)((i * 11) % 3 - 1);
    for (int i = 0; i < C * C; i++) w2[i] = (float)((i * 5) % 3 - 1);
    par_msg msg = {{0}};
    par_graph *gr = par_graph_create("chain");
    int64_t xd[4] = {1, C, H, W}, w1d[4] = {C, C, 3, 3}, w2d[4] = {C, C, 1, 1}, pad[4] = {1, 1, 1, 1};
    int32_t in1[3] = {par_graph_add_input(gr, "x", PAR_DTYPE_F32, 4, xd, &msg),
                      par_graph_add_const(gr, "w1", PAR_DTYPE_F32, 4, w1d, w1, &msg), -1};
    par_attr at[1] = {par_a_ints("padding", 4, pad)};
    par_out_spec o1 = {.name = "c1"}, o2 = {.name = "r"}, o3 = {.name = "y"};
    CU_ASSERT_FATAL(par_graph_add_node(gr, "conv2d", "conv1", 3, in1, 1, at, &o1, &msg) >= 0);
    int32_t rin[1] = {par_graph_find_value(gr, "c1")};
    CU_ASSERT_FATAL(par_graph_add_node(gr, "relu", "act", 1, rin, 0, NULL, &o2, &msg) >= 0);
    int32_t in2[3] = {par_graph_find_value(gr, "r"), par_graph_add_const(gr, "w2", PAR_DTYPE_F32, 4, w2d, w2, &msg), -1};
    CU_ASSERT_FATAL(par_graph_add_node(gr, "conv2d", "conv2", 3, in2, 0, NULL, &o3, &msg) >= 0);
    CU_ASSERT_FATAL(par_graph_mark_output(gr, par_graph_find_value(gr, "y"), &msg) == PAR_OK);
    CU_ASSERT_FATAL(par_graph_finalize(gr, &msg) == PAR_OK);
    static const char *const plain[] = {"layout", "plain", NULL};
    const void *in[1] = {x};
    run_info blocked_info, plain_info;
    CU_ASSERT_EQUAL_FATAL(run_graph(par_graph_desc_of(gr), NULL, in, out[0], &blocked_info, &msg), PAR_OK);
    CU_ASSERT_EQUAL_FATAL(run_graph(par_graph_desc_of(gr), plain, in, out[1], &plain_info, &msg), PAR_OK);
    PAR_TEST_NOTE("chain: %d reorders blocked, %d plain\n", blocked_info.n_reorders, plain_info.n_reorders);
    CU_ASSERT(blocked_info.n_reorders < plain_info.n_reorders);
    static long mid[C * H * W];
    for (int o = 0; o < C; o++)
        for (int h = 0; h < H; h++)
            for (int w = 0; w < W; w++) {
                long acc = 0;
                for (int c = 0; c < C; c++)
                    for (int kh = 0; kh < 3; kh++)
                        for (int kw = 0; kw < 3; kw++) {
                            int ih = h - 1 + kh, iw = w - 1 + kw;
                            if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                                acc += (long)w1[((o * C + c) * 3 + kh) * 3 + kw] * (long)x[(c * H + ih) * W + iw];
                        }
                mid[(o * H + h) * W + w] = acc > 0 ? acc : 0;
            }
    int bad = 0, nonzero = 0;
    for (int o = 0; o < C; o++)
        for (int i = 0; i < H * W; i++) {
            long acc = 0;
            for (int c = 0; c < C; c++) acc += (long)w2[o * C + c] * mid[c * H * W + i];
            nonzero += acc != 0;
            bad += out[0][o * H * W + i] != (float)acc || out[1][o * H * W + i] != (float)acc;
        }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(nonzero > 0);
    par_graph_destroy(gr);
}

static par_status supports_one(par_graph *gr, par_msg *msg)
{
    const par_backend *be = par_backend_onednn();
    void *ctx = NULL;
    par_status st = be->init(&ctx, msg);
    const par_graph_desc *g = par_graph_desc_of(gr);
    for (int32_t i = 0; i < g->n_nodes && st == PAR_OK; i++) st = be->supports(ctx, g, i, msg);
    be->destroy(ctx);
    return st;
}

static void test_unsupported_reasons(void)
{
    par_msg msg = {{0}};
    int64_t xd[4] = {1, 2, 3, 4}, cd[2] = {1, 4};
    /* hardsigmoid: no eltwise in oneDNN 2.6 */
    par_graph *gr = par_graph_create("hs");
    int32_t x = par_graph_add_input(gr, "x", PAR_DTYPE_F32, 4, xd, &msg);
    par_out_spec os = {.name = "y"};
    CU_ASSERT_FATAL(par_graph_add_node(gr, "hardsigmoid", "hs", 1, &x, 0, NULL, &os, &msg) >= 0);
    par_graph_mark_output(gr, par_graph_find_value(gr, "y"), &msg);
    CU_ASSERT_FATAL(par_graph_finalize(gr, &msg) == PAR_OK);
    CU_ASSERT_EQUAL(supports_one(gr, &msg), PAR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "hardsigmoid"));
    par_graph_destroy(gr);
    /* div with the first input broadcast: oneDNN's binary broadcasts only src1, and div does not commute */
    gr = par_graph_create("div");
    static const float c[4] = {1, 2, 3, 4};
    int32_t ins[2] = {par_graph_add_const(gr, "c", PAR_DTYPE_F32, 2, cd, c, &msg),
                      par_graph_add_input(gr, "x", PAR_DTYPE_F32, 4, xd, &msg)};
    CU_ASSERT_FATAL(par_graph_add_node(gr, "div", "d", 2, ins, 0, NULL, &os, &msg) >= 0);
    par_graph_mark_output(gr, par_graph_find_value(gr, "y"), &msg);
    CU_ASSERT_FATAL(par_graph_finalize(gr, &msg) == PAR_OK);
    CU_ASSERT_EQUAL(supports_one(gr, &msg), PAR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "second source"));
    par_graph_destroy(gr);
    /* a qu8 weight tensor: oneDNN's int8 convolution takes s8 weights */
    gr = par_graph_create("qw");
    int64_t wd[4] = {3, 2, 1, 1};
    static const uint8_t wq[6] = {1, 2, 3, 4, 5, 6};
    int32_t qi[2] = {par_graph_add_input(gr, "x", PAR_DTYPE_QU8, 4, xd, &msg),
                     par_graph_add_const(gr, "w", PAR_DTYPE_QU8, 4, wd, wq, &msg)};
    par_graph_set_quant(gr, qi[0], 0.5f, 1, &msg);
    par_graph_set_quant(gr, qi[1], 0.25f, 2, &msg);
    par_out_spec qs = {.name = "y", .dtype = PAR_DTYPE_QU8, .scale = 1.0f, .zero_point = 0};
    CU_ASSERT_FATAL(par_graph_add_node(gr, "conv2d", "conv", 2, qi, 0, NULL, &qs, &msg) >= 0);
    par_graph_mark_output(gr, par_graph_find_value(gr, "y"), &msg);
    CU_ASSERT_FATAL(par_graph_finalize(gr, &msg) == PAR_OK);
    CU_ASSERT_EQUAL(supports_one(gr, &msg), PAR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "s8 weights"));
    par_graph_destroy(gr);
}

/* the backend is registered and its table is complete */
static void test_registered(void)
{
    int32_t n = 0;
    const par_backend *const *b = par_builtin_backends(&n);
    const par_backend *found = NULL;
    for (int32_t i = 0; i < n; i++)
        if (strcmp(b[i]->name, "onednn") == 0) found = b[i];
    CU_ASSERT_PTR_NOT_NULL_FATAL(found);
    CU_ASSERT_EQUAL(found->api_version, PAR_BACKEND_API_VERSION);
    CU_ASSERT(found->init && found->destroy && found->supports && found->prepare && found->bind && found->run &&
              found->release && found->get_proc);
}

static const CU_TestInfo tests[] = {
    {"registered with a complete table", test_registered},
    {"knobs, describe, arith (fpmath=bf16: PAR_ARITH_BF16) and requant", test_knobs},
    {"blocked-layout conv with fused relu and add, exact on integers", test_conv_blocked_exact},
    {"conv -> relu -> conv kept blocked between, and plain: the same exact integers", test_blocked_chain},
    {"qu8 x qs8 per-channel conv: output integers known by hand", test_int8_conv_exact},
    {"UNSUPPORTED reasons", test_unsupported_reasons},
    CU_TEST_INFO_NULL,
};

#else
PAR_TEST_BACKEND_ABSENT("onednn", "built without oneDNN (make deps installs libdnnl-dev)")
#endif

PAR_TEST_MAIN("onednn", tests)
