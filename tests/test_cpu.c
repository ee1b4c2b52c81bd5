/*
 * test_cpu.c - the cpu backend's planner: fusion decisions (batch_norm folded into a conv, clamps into conv and
 * linear epilogues, and the cases where fusing would be wrong), layout conversion at the graph boundary only for
 * rank-4 tensors, NHWC data movement checked against hand-computed NCHW results, knobs and describe, and the
 * accuracy of the vector sigmoid / tanh / exp against double precision. The kernel-dependent tests run once per ISA;
 * one for an ISA this CPU lacks is reported as skipped.
 * Deterministic inputs; no timing.
 */
#include <math.h>
#include <stdlib.h>

#include "backends/cpu/plan.h"
#include "core/graph.h"
#include "cpu_isa_tests.h"
#include "tmain.h"

const par_backend *par_backend_cpu(void);

static par_msg m;

/* ---- helpers ------------------------------------------------------------------------------------------------- */

static float det(int64_t i, int salt) /* deterministic values in [-2, 2] */
{
    uint32_t h = (uint32_t)(i * 2654435761u) ^ (uint32_t)(salt * 40503u);
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    return (float)(h % 4001u) / 1000.0f - 2.0f;
}

static void fill(float *p, int64_t n, int salt)
{
    for (int64_t i = 0; i < n; i++) p[i] = det(i, salt);
}

static int32_t out_of(par_graph *g, int32_t node)
{
    return node < 0 ? -1 : par_graph_desc_of(g)->nodes[node].outputs[0];
}

typedef struct runner {
    const par_backend *be;
    void *ctx;
    cpu_plan *plan;
} runner;

static par_status open_ctx(runner *r, const char *k1, const char *v1)
{
    memset(r, 0, sizeof *r);
    r->be = par_backend_cpu();
    if (r->be->init(&r->ctx, &m) != PAR_OK) return PAR_ERROR;
    if (k1) {
        par_set_knob_fn set = (par_set_knob_fn)r->be->get_proc(r->ctx, PAR_PROC_SET_KNOB);
        return set(r->ctx, k1, v1, &m);
    }
    return PAR_OK;
}

static par_status prepare_run(runner *r, par_graph *g, const void *const *ins, void *const *outs)
{
    void *prep = NULL;
    par_status st = r->be->prepare(r->ctx, par_graph_desc_of(g), &prep, &m);
    if (st != PAR_OK) return st;
    r->plan = prep;
    st = r->be->bind(r->ctx, prep, ins, outs, &m);
    if (st == PAR_OK) st = r->be->run(r->ctx, prep, &m);
    return st;
}

static void close_ctx(runner *r)
{
    r->be->release(r->ctx, r->plan);
    r->be->destroy(r->ctx);
}

static int count_label(const cpu_plan *p, const char *label)
{
    int n = 0;
    for (int32_t i = 0; i < cpu_plan_step_count(p); i++) n += strcmp(cpu_plan_step_label(p, i), label) == 0;
    return n;
}

/* NCHW reference conv (stride 1, pad 1, 3x3), then batch norm, then relu6, in double. */
static void ref_conv_bn_relu6(const float *x, const float *w, const float *b, const float *bn, int64_t C, int64_t O,
                              int64_t H, int64_t W, double *y)
{
    const float *gm = bn, *bt = bn + O, *mean = bn + 2 * O, *var = bn + 3 * O;
    for (int64_t o = 0; o < O; o++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t v = 0; v < W; v++) {
                double acc = b[o];
                for (int64_t c = 0; c < C; c++)
                    for (int64_t i = 0; i < 3; i++)
                        for (int64_t j = 0; j < 3; j++) {
                            const int64_t ih = h - 1 + i, iw = v - 1 + j;
                            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                            acc += (double)w[((o * C + c) * 3 + i) * 3 + j] * x[(c * H + ih) * W + iw];
                        }
                double t = (acc - mean[o]) / sqrt((double)var[o] + 1e-5) * gm[o] + bt[o];
                y[(o * H + h) * W + v] = t < 0 ? 0 : (t > 6 ? 6 : t);
            }
}

/* conv -> batch_norm -> relu6, with the conv's and bn's values used only there: one fused step. */
static par_graph *build_conv_bn_act(int conv_is_output, int bn_two_users, const char *act, float *x, float *w,
                                    float *b, float *bn, int32_t *final)
{
    const int64_t C = 3, O = 5, H = 6, W = 7;
    par_graph *g = par_graph_create("cbr");
    int32_t xi = par_graph_add_input(g, "x", PAR_DTYPE_F32, 4, (int64_t[]){1, C, H, W}, &m);
    fill(x, C * H * W, 1);
    fill(w, O * C * 9, 2);
    fill(b, O, 3);
    fill(bn, 4 * O, 4);
    for (int64_t o = 0; o < O; o++) bn[3 * O + o] = fabsf(bn[3 * O + o]) + 0.25f; /* var > 0 */
    int32_t wi = par_graph_add_const(g, "w", PAR_DTYPE_F32, 4, (int64_t[]){O, C, 3, 3}, w, &m);
    int32_t bi = par_graph_add_const(g, "b", PAR_DTYPE_F32, 1, (int64_t[]){O}, b, &m);
    int32_t p[4];
    const char *pn[4] = {"gamma", "beta", "mean", "var"};
    for (int k = 0; k < 4; k++) p[k] = par_graph_add_const(g, pn[k], PAR_DTYPE_F32, 1, (int64_t[]){O}, bn + k * O, &m);
    const int64_t pad[4] = {1, 1, 1, 1};
    par_attr ca = par_a_ints("padding", 4, pad);
    int32_t c = out_of(g, par_graph_add_node(g, "conv2d", "conv", 3, (int32_t[]){xi, wi, bi}, 1, &ca, NULL, &m));
    int32_t n = out_of(g, par_graph_add_node(g, "batch_norm", "bn", 5, (int32_t[]){c, p[0], p[1], p[2], p[3]}, 0, NULL,
                                             NULL, &m));
    int32_t a = out_of(g, par_graph_add_node(g, act, "act", 1, &n, 0, NULL, NULL, &m));
    CU_ASSERT_FATAL(a >= 0);
    par_graph_mark_output(g, a, &m);
    if (conv_is_output) par_graph_mark_output(g, c, &m);
    if (bn_two_users) {
        int32_t s = out_of(g, par_graph_add_node(g, "sigmoid", "side", 1, &n, 0, NULL, NULL, &m));
        par_graph_mark_output(g, s, &m);
    }
    CU_ASSERT_FATAL(par_graph_finalize(g, &m) == PAR_OK);
    *final = a;
    return g;
}

/* ---- fusion decisions ---------------------------------------------------------------------------------------- */
static void test_fuse_conv_bn_relu6(void)
{
    static float x[3 * 42], w[5 * 27], b[5], bn[20], y[5 * 42];
    static double want[5 * 42];
    int32_t fin;
    par_graph *g = build_conv_bn_act(0, 0, "relu6", x, w, b, bn, &fin);
    runner r;
    CU_ASSERT_FATAL(open_ctx(&r, NULL, NULL) == PAR_OK);
    CU_ASSERT_EQUAL_FATAL(prepare_run(&r, g, (const void *[]){x}, (void *[]){y}), PAR_OK);
    /* input conversion, one fused step, output conversion */
    CU_ASSERT_EQUAL(cpu_plan_step_count(r.plan), 3);
    CU_ASSERT_EQUAL(count_label(r.plan, "conv2d+batch_norm+relu6"), 1);
    CU_ASSERT_EQUAL(count_label(r.plan, "nchw_to_nhwc"), 1);
    CU_ASSERT_EQUAL(count_label(r.plan, "nhwc_to_nchw"), 1);
    ref_conv_bn_relu6(x, w, b, bn, 3, 5, 6, 7, want);
    int bad = 0, clamped = 0;
    for (int i = 0; i < 5 * 42; i++) {
        if (fabs(y[i] - want[i]) > 1e-5 * (1 + fabs(want[i]))) bad++;
        clamped += want[i] == 0.0 || want[i] == 6.0;
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(clamped > 0 && clamped < 5 * 42); /* both sides of the clamp are exercised */
    close_ctx(&r);
    par_graph_destroy(g);
}

static void test_no_fusion_when_intermediate_is_output(void)
{
    static float x[3 * 42], w[5 * 27], b[5], bn[20], y[5 * 42], yc[5 * 42];
    int32_t fin;
    par_graph *g = build_conv_bn_act(1, 0, "relu", x, w, b, bn, &fin);
    runner r;
    CU_ASSERT_FATAL(open_ctx(&r, NULL, NULL) == PAR_OK);
    CU_ASSERT_EQUAL_FATAL(prepare_run(&r, g, (const void *[]){x}, (void *[]){y, yc}), PAR_OK);
    /* the conv output is a graph output: no folding, no fusion */
    CU_ASSERT_EQUAL(count_label(r.plan, "conv2d"), 1);
    CU_ASSERT_EQUAL(count_label(r.plan, "batch_norm"), 1);
    CU_ASSERT_EQUAL(count_label(r.plan, "relu"), 1);
    CU_ASSERT_EQUAL(count_label(r.plan, "nhwc_to_nchw"), 2);
    int neg = 0;
    for (int i = 0; i < 5 * 42; i++) neg += yc[i] < 0.0f; /* the unclamped conv output is visible */
    CU_ASSERT(neg > 0);
    for (int i = 0; i < 5 * 42; i++) CU_ASSERT_FATAL(y[i] >= 0.0f);
    close_ctx(&r);
    par_graph_destroy(g);
}

static void test_no_clamp_fusion_with_two_users(void)
{
    static float x[3 * 42], w[5 * 27], b[5], bn[20], y[5 * 42], ys[5 * 42];
    int32_t fin;
    par_graph *g = build_conv_bn_act(0, 1, "hardtanh", x, w, b, bn, &fin);
    runner r;
    CU_ASSERT_FATAL(open_ctx(&r, NULL, NULL) == PAR_OK);
    CU_ASSERT_EQUAL_FATAL(prepare_run(&r, g, (const void *[]){x}, (void *[]){y, ys}), PAR_OK);
    /* bn folds (the conv output has one user) but its output feeds two nodes: the clamp stays separate */
    CU_ASSERT_EQUAL(count_label(r.plan, "conv2d+batch_norm"), 1);
    CU_ASSERT_EQUAL(count_label(r.plan, "hardtanh"), 1);
    CU_ASSERT_EQUAL(count_label(r.plan, "sigmoid"), 1);
    int outside = 0;
    for (int i = 0; i < 5 * 42; i++) {
        CU_ASSERT_FATAL(y[i] >= -1.0f && y[i] <= 1.0f);
        const float pre = logf(ys[i] / (1.0f - ys[i])); /* the sigmoid saw the unclamped value */
        outside += fabsf(pre) > 1.01f;
    }
    CU_ASSERT(outside > 0);
    close_ctx(&r);
    par_graph_destroy(g);
}

/* linear -> relu fuses; rank-2 tensors need no layout conversion at all */
static void test_linear_relu_no_conversion(void)
{
    enum { R = 3, K = 9, O = 17 };
    static float x[R * K], w[O * K], b[O], y[R * O];
    fill(x, R * K, 5);
    fill(w, O * K, 6);
    fill(b, O, 7);
    par_graph *g = par_graph_create("lin");
    int32_t xi = par_graph_add_input(g, "x", PAR_DTYPE_F32, 2, (int64_t[]){R, K}, &m);
    int32_t wi = par_graph_add_const(g, "w", PAR_DTYPE_F32, 2, (int64_t[]){O, K}, w, &m);
    int32_t bi = par_graph_add_const(g, "b", PAR_DTYPE_F32, 1, (int64_t[]){O}, b, &m);
    int32_t l = out_of(g, par_graph_add_node(g, "linear", "fc", 3, (int32_t[]){xi, wi, bi}, 0, NULL, NULL, &m));
    int32_t a = out_of(g, par_graph_add_node(g, "relu", "r", 1, &l, 0, NULL, NULL, &m));
    par_graph_mark_output(g, a, &m);
    CU_ASSERT_FATAL(par_graph_finalize(g, &m) == PAR_OK);
    runner r;
    CU_ASSERT_FATAL(open_ctx(&r, "kernels", "scalar") == PAR_OK);
    CU_ASSERT_EQUAL_FATAL(prepare_run(&r, g, (const void *[]){x}, (void *[]){y}), PAR_OK);
    CU_ASSERT_EQUAL(cpu_plan_step_count(r.plan), 1);
    CU_ASSERT_STRING_EQUAL(cpu_plan_step_label(r.plan, 0), "linear+relu");
    int zero = 0;
    for (int i = 0; i < R; i++)
        for (int o = 0; o < O; o++) {
            double acc = b[o];
            for (int k = 0; k < K; k++) acc += (double)x[i * K + k] * w[o * K + k];
            acc = acc > 0 ? acc : 0;
            zero += acc == 0;
            CU_ASSERT(fabs(y[i * O + o] - acc) <= 1e-5 * (1 + fabs(acc)));
        }
    CU_ASSERT(zero > 0);
    close_ctx(&r);
    par_graph_destroy(g);
}

/* ---- layouts: NHWC inside, NCHW at the boundary, bit-exact data movement -------------------------------------- */
static void test_nhwc_data_movement(void)
{
    /* x [2,3,4,5] -> permute(0,2,3,1) -> [2,4,5,3] (rank 4, NHWC inside) -> concat with itself on axis 3 ->
     * flatten(1) -> [2, 120] (row-major output, written in place) and slice on dim 2 of the permuted tensor */
    enum { N = 2, C = 3, H = 4, W = 5 };
    static float x[N * C * H * W], y[N * 120], ys[N * H * 2 * C];
    fill(x, N * C * H * W, 8);
    par_graph *g = par_graph_create("mv");
    int32_t xi = par_graph_add_input(g, "x", PAR_DTYPE_F32, 4, (int64_t[]){N, C, H, W}, &m);
    const int64_t perm[4] = {0, 2, 3, 1};
    par_attr pa = par_a_ints("perm", 4, perm);
    int32_t pv = out_of(g, par_graph_add_node(g, "permute", "p", 1, &xi, 1, &pa, NULL, &m));
    par_attr ax = par_a_int("axis", 3);
    int32_t cv = out_of(g, par_graph_add_node(g, "concat", "c", 2, (int32_t[]){pv, pv}, 1, &ax, NULL, &m));
    int32_t fv = out_of(g, par_graph_add_node(g, "flatten", "f", 1, &cv, 0, NULL, NULL, &m));
    par_attr sa[3] = {par_a_int("dim", 2), par_a_int("start", 1), par_a_int("step", 2)};
    int32_t sv = out_of(g, par_graph_add_node(g, "slice", "s", 1, &pv, 3, sa, NULL, &m));
    CU_ASSERT_FATAL(fv >= 0 && sv >= 0);
    par_graph_mark_output(g, fv, &m);
    par_graph_mark_output(g, sv, &m);
    CU_ASSERT_FATAL(par_graph_finalize(g, &m) == PAR_OK);
    runner r;
    CU_ASSERT_FATAL(open_ctx(&r, NULL, NULL) == PAR_OK);
    CU_ASSERT_EQUAL_FATAL(prepare_run(&r, g, (const void *[]){x}, (void *[]){y, ys}), PAR_OK);
    CU_ASSERT_EQUAL(count_label(r.plan, "nchw_to_nhwc"), 1);
    CU_ASSERT_EQUAL(count_label(r.plan, "nhwc_to_nchw"), 1); /* the slice output; the flatten writes in place */
    int bad = 0;
    for (int n = 0; n < N; n++)
        for (int h = 0; h < H; h++)
            for (int w = 0; w < W; w++)
                for (int k = 0; k < 2 * C; k++) {
                    const float want = x[((n * C + k % C) * H + h) * W + w];
                    bad += y[n * 120 + (h * W + w) * 2 * C + k] != want;
                }
    for (int n = 0; n < N; n++)
        for (int h = 0; h < H; h++)
            for (int j = 0; j < 2; j++)
                for (int c = 0; c < C; c++)
                    bad += ys[((n * H + h) * 2 + j) * C + c] != x[((n * C + c) * H + h) * W + 1 + 2 * j];
    CU_ASSERT_EQUAL(bad, 0);
    close_ctx(&r);
    par_graph_destroy(g);
}

/* broadcasting between an NHWC tensor and a row-major one: [N,C,H,W] * [C,1,1] and + [W] */
static void test_broadcast_mixed_layouts(void)
{
    enum { N = 2, C = 5, H = 3, W = 4 };
    static float x[N * C * H * W], s[C], t[W], y[N * C * H * W];
    fill(x, N * C * H * W, 9);
    fill(s, C, 10);
    fill(t, W, 11);
    par_graph *g = par_graph_create("bc");
    int32_t xi = par_graph_add_input(g, "x", PAR_DTYPE_F32, 4, (int64_t[]){N, C, H, W}, &m);
    int32_t si = par_graph_add_input(g, "s", PAR_DTYPE_F32, 3, (int64_t[]){C, 1, 1}, &m);
    int32_t ti = par_graph_add_const(g, "t", PAR_DTYPE_F32, 1, (int64_t[]){W}, t, &m);
    int32_t mv = out_of(g, par_graph_add_node(g, "mul", "m", 2, (int32_t[]){xi, si}, 0, NULL, NULL, &m));
    int32_t av = out_of(g, par_graph_add_node(g, "add", "a", 2, (int32_t[]){ti, mv}, 0, NULL, NULL, &m));
    par_graph_mark_output(g, av, &m);
    CU_ASSERT_FATAL(par_graph_finalize(g, &m) == PAR_OK);
    for (int k = (int)g_isa; k == (int)g_isa; k++) {
        runner r;
        if (open_ctx(&r, "kernels", cpu_isa_name((cpu_isa)k)) != PAR_OK) { /* run_for_isa checked that the CPU has it */
            CU_FAIL("kernels= refused for an ISA this CPU has");
            r.be->destroy(r.ctx);
            continue;
        }
        CU_ASSERT_EQUAL_FATAL(prepare_run(&r, g, (const void *[]){x, s}, (void *[]){y}), PAR_OK);
        int bad = 0;
        for (int i = 0; i < N * C * H * W; i++) {
            const int c = (i / (H * W)) % C, w = i % W;
            bad += y[i] != t[w] + x[i] * s[c]; /* one rounding each, in the same order: bit-exact */
        }
        CU_ASSERT_EQUAL(bad, 0);
        close_ctx(&r);
    }
    par_graph_destroy(g);
}

/* ---- threads: the same bits with 1 and 3 threads (every element computed by one task, reductions unsplit) ------ */
static void test_threads_same_bits(void)
{
    enum { C = 8, O = 16, H = 20, W = 18 };
    static float x[C * H * W], w[O * C * 9], y1[O * 10 * 9], y3[O * 10 * 9];
    fill(x, C * H * W, 12);
    fill(w, O * C * 9, 13);
    for (int i = 0; i < O * C * 9; i++) w[i] *= 0.1f;
    par_graph *g = par_graph_create("thr");
    int32_t xi = par_graph_add_input(g, "x", PAR_DTYPE_F32, 4, (int64_t[]){1, C, H, W}, &m);
    int32_t wi = par_graph_add_const(g, "w", PAR_DTYPE_F32, 4, (int64_t[]){O, C, 3, 3}, w, &m);
    const int64_t pad[4] = {1, 1, 1, 1}, k2[2] = {2, 2}, k3[2] = {3, 3}, s1[2] = {1, 1};
    par_attr ca = par_a_ints("padding", 4, pad);
    int32_t c = out_of(g, par_graph_add_node(g, "conv2d", "conv", 2, (int32_t[]){xi, wi}, 1, &ca, NULL, &m));
    int32_t sg = out_of(g, par_graph_add_node(g, "sigmoid", "sg", 1, &c, 0, NULL, NULL, &m));
    int32_t sw = out_of(g, par_graph_add_node(g, "mul", "swish", 2, (int32_t[]){c, sg}, 0, NULL, NULL, &m));
    par_attr mp[2] = {par_a_ints("kernel", 2, k2), par_a_ints("stride", 2, k2)};
    int32_t mx = out_of(g, par_graph_add_node(g, "max_pool2d", "mp", 1, &sw, 2, mp, NULL, &m));
    par_attr ap[3] = {par_a_ints("kernel", 2, k3), par_a_ints("stride", 2, s1), par_a_ints("padding", 4, pad)};
    int32_t av = out_of(g, par_graph_add_node(g, "avg_pool2d", "ap", 1, &mx, 3, ap, NULL, &m));
    par_attr sa = par_a_int("axis", 1);
    int32_t sm = out_of(g, par_graph_add_node(g, "softmax", "sm", 1, &av, 1, &sa, NULL, &m));
    CU_ASSERT_FATAL(sm >= 0);
    par_graph_mark_output(g, sm, &m);
    CU_ASSERT_FATAL(par_graph_finalize(g, &m) == PAR_OK);
    runner r1, r3;
    CU_ASSERT_FATAL(open_ctx(&r1, NULL, NULL) == PAR_OK);
    CU_ASSERT_FATAL(open_ctx(&r3, "threads", "3") == PAR_OK);
    memset(y1, 0, sizeof y1);
    memset(y3, 0xff, sizeof y3);
    CU_ASSERT_EQUAL_FATAL(prepare_run(&r1, g, (const void *[]){x}, (void *[]){y1}), PAR_OK);
    CU_ASSERT_EQUAL_FATAL(prepare_run(&r3, g, (const void *[]){x}, (void *[]){y3}), PAR_OK);
    CU_ASSERT_EQUAL(memcmp(y1, y3, sizeof y1), 0);
    /* softmax over channels: each pixel's probabilities sum to 1 */
    double worst = 0;
    for (int p = 0; p < 10 * 9; p++) {
        double s = 0;
        for (int o = 0; o < O; o++) s += y1[o * 90 + p];
        worst = fmax(worst, fabs(s - 1.0));
    }
    CU_ASSERT(worst < 1e-5);
    close_ctx(&r1);
    close_ctx(&r3);
    par_graph_destroy(g);
}

/* ---- row chains ------------------------------------------------------------------------------------------------ */
/* expand 1x1 (+ relu6) -> depthwise 3x3 (stride s) -> project 1x1 at 64x64 with 64 expanded channels (1 MiB, the
 * chain's threshold); mid_is_output: the expanded value is also a graph output. */
static par_graph *build_block(int64_t s, int mid_is_output, float *x, float *w1, float *w2, float *w3)
{
    const int64_t C = 8, M = 64, O = 8, H = 64, W = 64;
    par_graph *g = par_graph_create("block");
    int32_t xi = par_graph_add_input(g, "x", PAR_DTYPE_F32, 4, (int64_t[]){1, C, H, W}, &m);
    fill(x, C * H * W, 11);
    fill(w1, M * C, 12);
    fill(w2, M * 9, 13);
    fill(w3, O * M, 14);
    int32_t a = par_graph_add_const(g, "w1", PAR_DTYPE_F32, 4, (int64_t[]){M, C, 1, 1}, w1, &m);
    int32_t b = par_graph_add_const(g, "w2", PAR_DTYPE_F32, 4, (int64_t[]){M, 1, 3, 3}, w2, &m);
    int32_t c = par_graph_add_const(g, "w3", PAR_DTYPE_F32, 4, (int64_t[]){O, M, 1, 1}, w3, &m);
    const int64_t pad[4] = {1, 1, 1, 1}, st[2] = {s, s};
    par_attr da[3] = {par_a_ints("padding", 4, pad), par_a_ints("stride", 2, st), par_a_int("groups", M)};
    int32_t e = out_of(g, par_graph_add_node(g, "conv2d", "expand", 2, (int32_t[]){xi, a}, 0, NULL, NULL, &m));
    int32_t r = out_of(g, par_graph_add_node(g, "relu6", "act", 1, &e, 0, NULL, NULL, &m));
    int32_t d = out_of(g, par_graph_add_node(g, "conv2d", "dw", 2, (int32_t[]){r, b}, 3, da, NULL, &m));
    int32_t y = out_of(g, par_graph_add_node(g, "conv2d", "project", 2, (int32_t[]){d, c}, 0, NULL, NULL, &m));
    CU_ASSERT_FATAL(y >= 0);
    par_graph_mark_output(g, y, &m);
    if (mid_is_output) par_graph_mark_output(g, r, &m);
    CU_ASSERT_FATAL(par_graph_finalize(g, &m) == PAR_OK);
    return g;
}

static void test_conv_row_chain(void)
{
    static float x[8 * 64 * 64], w1[64 * 8], w2[64 * 9], w3[8 * 64], y0[8 * 64 * 64], y1[8 * 64 * 64];
    static float mid0[64 * 64 * 64], mid1[64 * 64 * 64];
    for (int64_t s = 1; s <= 2; s++) {
        const size_t ny = (size_t)(8 * (64 / s) * (64 / s));
        par_graph *g = build_block(s, 0, x, w1, w2, w3);
        runner r0, r1;
        CU_ASSERT_FATAL(open_ctx(&r0, "chain", "0") == PAR_OK);
        CU_ASSERT_FATAL(open_ctx(&r1, NULL, NULL) == PAR_OK);
        CU_ASSERT_EQUAL_FATAL(prepare_run(&r0, g, (const void *[]){x}, (void *[]){y0}), PAR_OK);
        CU_ASSERT_EQUAL_FATAL(prepare_run(&r1, g, (const void *[]){x}, (void *[]){y1}), PAR_OK);
        /* the three convolutions chain (the expanded tensor has 1 MiB; the depthwise output too at stride 1, and
         * at stride 2 the chain is still one: each link is judged by its own intermediate) */
        CU_ASSERT_EQUAL(count_label(r0.plan, "conv2d+relu6"), 1);
        CU_ASSERT_EQUAL(count_label(r1.plan, "conv2d+relu6 [chain 1/3]") + count_label(r1.plan, "conv2d+relu6 [chain 1/2]"),
                        1);
        CU_ASSERT_EQUAL(memcmp(y0, y1, sizeof(float) * ny), 0);
        close_ctx(&r0);
        close_ctx(&r1);
        par_graph_destroy(g);
    }
    /* the expanded value is a graph output: the expand convolution stays out of any chain, results unchanged */
    par_graph *g = build_block(1, 1, x, w1, w2, w3);
    runner r0, r1;
    CU_ASSERT_FATAL(open_ctx(&r0, "chain", "0") == PAR_OK);
    CU_ASSERT_FATAL(open_ctx(&r1, NULL, NULL) == PAR_OK);
    CU_ASSERT_EQUAL_FATAL(prepare_run(&r0, g, (const void *[]){x}, (void *[]){y0, mid0}), PAR_OK);
    CU_ASSERT_EQUAL_FATAL(prepare_run(&r1, g, (const void *[]){x}, (void *[]){y1, mid1}), PAR_OK);
    CU_ASSERT_EQUAL(count_label(r1.plan, "conv2d+relu6"), 1);
    CU_ASSERT_EQUAL(count_label(r1.plan, "conv2d [chain 1/2]"), 1);
    CU_ASSERT_EQUAL(memcmp(y0, y1, sizeof y0), 0);
    CU_ASSERT_EQUAL(memcmp(mid0, mid1, sizeof mid0), 0);
    close_ctx(&r0);
    close_ctx(&r1);
    par_graph_destroy(g);
}

/* ---- knobs --------------------------------------------------------------------------------------------------- */
static void test_knobs(void)
{
    runner r;
    CU_ASSERT_FATAL(open_ctx(&r, NULL, NULL) == PAR_OK);
    par_set_knob_fn set = (par_set_knob_fn)r.be->get_proc(r.ctx, PAR_PROC_SET_KNOB);
    par_describe_fn describe = (par_describe_fn)r.be->get_proc(r.ctx, PAR_PROC_DESCRIBE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(set);
    CU_ASSERT_PTR_NOT_NULL_FATAL(describe);
    CU_ASSERT_PTR_NOT_NULL(r.be->get_proc(r.ctx, PAR_PROC_MICROBENCH));
    CU_ASSERT_PTR_NULL(r.be->get_proc(r.ctx, "no_such_proc"));
    char buf[128];
    describe(r.ctx, buf, sizeof buf);
    CU_ASSERT(strncmp(buf, "threads=1;kernels=", 18) == 0);
    CU_ASSERT_EQUAL(set(r.ctx, "threads", "0", &m), PAR_ERROR);
    CU_ASSERT(strstr(m.text, "threads") != NULL);
    CU_ASSERT_EQUAL(set(r.ctx, "threads", "2x", &m), PAR_ERROR);
    CU_ASSERT_EQUAL(set(r.ctx, "kernels", "sse9", &m), PAR_ERROR);
    CU_ASSERT(strstr(m.text, "sse9") != NULL);
    /* an ISA this CPU lacks is UNSUPPORTED naming it (on x86 neon, on AArch64 avx2 and avx512), never a fallback */
    for (int i = 1; i <= 3; i++) {
        const cpu_isa isa = (cpu_isa)i;
        const par_status st = set(r.ctx, "kernels", cpu_isa_name(isa), &m);
        CU_ASSERT_EQUAL(st, cpu_isa_supported(isa) ? PAR_OK : PAR_UNSUPPORTED);
        if (st != PAR_OK) CU_ASSERT(strstr(m.text, "lacks") && strstr(m.text, cpu_isa_name(isa)));
    }
    CU_ASSERT_EQUAL(set(r.ctx, "tiles", "4", &m), PAR_ERROR);
    CU_ASSERT(strstr(m.text, "tiles") != NULL);
    CU_ASSERT_EQUAL(set(r.ctx, "threads", "2", &m), PAR_OK);
    CU_ASSERT_EQUAL(set(r.ctx, "kernels", "scalar", &m), PAR_OK);
    const size_t need = describe(r.ctx, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "threads=2;kernels=scalar");
    CU_ASSERT_EQUAL(need, strlen("threads=2;kernels=scalar"));
    /* after a prepare, knobs are refused */
    par_graph *g = par_graph_create("k");
    int32_t xi = par_graph_add_input(g, "x", PAR_DTYPE_F32, 2, (int64_t[]){2, 3}, &m);
    par_graph_mark_output(g, out_of(g, par_graph_add_node(g, "relu", "r", 1, &xi, 0, NULL, NULL, &m)), &m);
    CU_ASSERT_FATAL(par_graph_finalize(g, &m) == PAR_OK);
    float x[6] = {-1, 2, -3, 4, -5, 6}, y[6];
    CU_ASSERT_EQUAL_FATAL(prepare_run(&r, g, (const void *[]){x}, (void *[]){y}), PAR_OK);
    CU_ASSERT_EQUAL(y[0], 0.0f);
    CU_ASSERT_EQUAL(y[5], 6.0f);
    CU_ASSERT_EQUAL(set(r.ctx, "threads", "1", &m), PAR_ERROR);
    close_ctx(&r);
    par_graph_destroy(g);
}

/* non-f32 graphs are UNSUPPORTED with a reason, never an error */
static void test_unsupported_dtype(void)
{
    par_graph *g = par_graph_create("q");
    int32_t xi = par_graph_add_input(g, "x", PAR_DTYPE_F32, 2, (int64_t[]){2, 3}, &m);
    par_out_spec os = {"q", PAR_DTYPE_QU8, 0.1f, 128};
    int32_t q = out_of(g, par_graph_add_node(g, "quantize", "qz", 1, &xi, 0, NULL, &os, &m));
    CU_ASSERT_FATAL(q >= 0);
    par_graph_mark_output(g, q, &m);
    CU_ASSERT_FATAL(par_graph_finalize(g, &m) == PAR_OK);
    runner r;
    CU_ASSERT_FATAL(open_ctx(&r, NULL, NULL) == PAR_OK);
    CU_ASSERT_EQUAL(r.be->supports(r.ctx, par_graph_desc_of(g), 0, &m), PAR_UNSUPPORTED);
    CU_ASSERT(strstr(m.text, "quantize") != NULL);
    void *prep = NULL;
    CU_ASSERT_EQUAL(r.be->prepare(r.ctx, par_graph_desc_of(g), &prep, &m), PAR_UNSUPPORTED);
    CU_ASSERT_PTR_NULL(prep);
    close_ctx(&r);
    par_graph_destroy(g);
}

/* ---- vector elementary functions: within the oracle's 4 ULP (8u |y|) -------------------------------------------- */
static double ulps(float got, double want)
{
    const double a = fabs(want);
    if (a < 0x1p-126) return fabs(got - want) <= 0x1p-126 ? 0.0 : INFINITY; /* the absolute allowance */
    int e;
    frexp(a, &e);
    return fabs(got - want) / ldexp(1.0, e - 24);
}

static void test_vector_functions_accuracy(void)
{
    const cpu_vops *vs[4] = {cpu_vops_scalar(), NULL, NULL, NULL};
#if defined(__x86_64__)
    if (cpu_isa_supported(CPU_ISA_AVX2)) vs[1] = cpu_vops_avx2();
    if (cpu_isa_supported(CPU_ISA_AVX512)) vs[2] = cpu_vops_avx512();
#endif
#if defined(__aarch64__)
    if (cpu_isa_supported(CPU_ISA_NEON)) vs[3] = cpu_vops_neon();
#endif
    CU_ASSERT_PTR_NOT_NULL(vs[g_isa]);
    enum { NX = 1 << 18 };
    float *x = malloc(NX * sizeof(float)), *y = malloc(NX * sizeof(float));
    CU_ASSERT_FATAL(x && y);
    /* a dense sweep of [-100, 100] plus every binade's edges down to subnormals, and the branch points */
    for (int i = 0; i < NX - 64; i++) x[i] = -100.0f + 200.0f * (float)i / (float)(NX - 64);
    const float special[] = {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-45f, 0.5493061f, -0.5493061f, 0.54930615f, 9.0f, -9.0f,
                             -87.3365f, -87.33655f, -88.0f, 88.0f, 20.0f, -20.0f, 0.25f, 1e-4f, -1e-4f};
    for (int i = 0; i < 64; i++) x[NX - 64 + i] = special[i % (int)(sizeof special / sizeof special[0])];
    for (int k = (int)g_isa; k == (int)g_isa; k++) {
        if (!vs[k]) continue;
        double ws = 0, wt = 0, we = 0;
        vs[k]->sigmoid(NX, x, y);
        for (int i = 0; i < NX; i++) ws = fmax(ws, ulps(y[i], 1.0 / (1.0 + exp(-(double)x[i]))));
        vs[k]->tanh(NX, x, y);
        for (int i = 0; i < NX; i++) wt = fmax(wt, ulps(y[i], tanh((double)x[i])));
        for (int i = 0; i < NX; i++) x[i] = x[i] > 88.0f ? 88.0f : x[i];
        vs[k]->exp(NX, x, y);
        for (int i = 0; i < NX; i++) we = fmax(we, ulps(y[i], exp((double)x[i])));
        CU_ASSERT(ws <= 4.0);
        CU_ASSERT(wt <= 4.0);
        CU_ASSERT(we <= 4.0);
        if (ws > 4.0 || wt > 4.0 || we > 4.0)
            fprintf(stderr, "\n    isa %d: sigmoid %.2f, tanh %.2f, exp %.2f ULP\n", k, ws, wt, we);
    }
    /* tails: a length that is not a multiple of any vector width leaves the elements past it untouched */
    for (int k = (int)g_isa; k == (int)g_isa; k++) {
        if (!vs[k]) continue;
        for (int i = 0; i < 40; i++) y[i] = 42.0f;
        vs[k]->hardswish(37, x, y);
        CU_ASSERT_EQUAL(y[37], 42.0f);
        CU_ASSERT_EQUAL(y[39], 42.0f);
        CU_ASSERT(y[36] != 42.0f);
    }
    free(x);
    free(y);
}

PER_ISA(test_broadcast_mixed_layouts)
PER_ISA(test_vector_functions_accuracy)

static const CU_TestInfo tests[] = {
    {"conv + batch_norm + relu6 fuse into one step", test_fuse_conv_bn_relu6},
    {"no fusion when the intermediate is a graph output", test_no_fusion_when_intermediate_is_output},
    {"no clamp fusion when the value has two users", test_no_clamp_fusion_with_two_users},
    {"linear + relu fuse; rank 2 needs no conversion", test_linear_relu_no_conversion},
    {"NHWC data movement is bit-exact", test_nhwc_data_movement},
    ISA_TESTS("broadcasting across NHWC and row-major", test_broadcast_mixed_layouts),
    {"1 and 3 threads give the same bits", test_threads_same_bits},
    {"conv row chains: same bits as step by step", test_conv_row_chain},
    {"knobs and describe", test_knobs},
    {"quantized graphs are unsupported", test_unsupported_dtype},
    ISA_TESTS("vector sigmoid/tanh/exp within 4 ULP", test_vector_functions_accuracy),
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("cpu", tests)
