/*
 * test_qnnpack.c - unit tests of the qnnpack int8 backend (backends/qnnpack/) through its backend table (its
 * micro-kernels are test_qnnpack_kernels.c's):
 *   - whole quantized graphs (conv2d dense / grouped / depthwise with per-tensor qu8 weights at odd zero points and
 *     per-channel qs8 weights, padding, a fused relu; linear; add) through the backend table, equal to the
 *     reference's integers under the fp32 scheme, with every kernel set;
 *   - knobs, describe, the requant declaration, the micro-benchmarks' names;
 *   - quantize at exact ties with odd zero points;
 *   - a guard: a test whose outputs are all equal proves nothing and fails.
 * Deterministic seeds; no timing is asserted.
 */
#include <math.h>
#include <stdlib.h>

#include "core/graph.h"
#include "reference/reference.h"
#include "qnnpack_test_helpers.h"
#include "tmain.h"

const par_backend *par_backend_qnnpack(void);

/* ---------------------------------------------------------------------------------------------------------------
 * Whole graphs through the backend table, against the reference's integers (fp32 scheme)
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct gspec {
    par_dtype xdt, wdt, ydt;
    int64_t n, c, h, w, o, kh, kw, groups, stride, pad;
    int32_t wzp;      /* per-tensor weight zero point (qu8: any; qs8: 0 or not) */
    int per_channel;  /* qs8 weights with per-channel scales */
    int relu;         /* 1: a relu after the conv (same quantization); 2: a relu6 with its own (both fused) */
    int linear;       /* linear instead of conv2d: x [n, c], w [o, c] */
    int add;          /* add a second input of the output's shape after the conv */
} gspec;

static par_graph *build(const gspec *s, par_msg *msg)
{
    par_graph *g = par_graph_create("qnn_test");
    int64_t xd[4] = {s->n, s->c, s->h, s->w}, wd[4] = {s->o, s->c / s->groups, s->kh, s->kw}, bd[1] = {s->o};
    int32_t xr = s->linear ? 2 : 4, wr = s->linear ? 2 : 4;
    if (s->linear) wd[1] = s->c;
    int32_t x = par_graph_add_input(g, "x", s->xdt, xr, xd, msg);
    int32_t qx0 = s->xdt == PAR_DTYPE_QS8 ? 3 : 131;
    par_graph_set_quant(g, x, 0.02f, qx0, msg);
    int64_t wn = par_shape_numel(wr, wd);
    uint8_t *wdata = malloc((size_t)wn);
    for (int64_t i = 0; i < wn; i++)
        wdata[i] = s->wdt == PAR_DTYPE_QU8 ? (uint8_t)rint_in(0, 255) : (uint8_t)(int8_t)rint_in(-127, 127);
    int32_t w = par_graph_add_const(g, "w", s->wdt, wr, wd, wdata, msg);
    free(wdata);
    int64_t fan = par_shape_numel(wr, wd) / s->o;
    float ws = (float)(1.0 / (100.0 * sqrt((double)fan)));
    if (s->per_channel) {
        float cs[256];
        for (int64_t o = 0; o < s->o; o++) cs[o] = ws * (0.5f + (float)(rng() % 100) / 100.0f);
        par_graph_set_channel_quant(g, w, 0, cs, s->o, msg);
    } else {
        par_graph_set_quant(g, w, ws, s->wzp, msg);
    }
    int32_t bias[256];
    for (int64_t o = 0; o < s->o; o++) bias[o] = rint_in(-2000, 2000);
    int32_t b = par_graph_add_const(g, "b", PAR_DTYPE_I32, 1, bd, bias, msg);
    par_graph_set_quant(g, b, 0.02f * ws, 0, msg);
    int32_t in[3] = {x, w, b};
    par_out_spec o = {"y", s->ydt, 0.05f, s->ydt == PAR_DTYPE_QS8 ? -5 : 120};
    int32_t node;
    if (s->linear) {
        node = par_graph_add_node(g, "linear", NULL, 3, in, 0, NULL, &o, msg);
    } else {
        int64_t st[2] = {s->stride, s->stride}, pd[4] = {s->pad, s->pad, s->pad, s->pad};
        par_attr at[3] = {par_a_ints("stride", 2, st), par_a_ints("padding", 4, pd), par_a_int("groups", s->groups)};
        node = par_graph_add_node(g, "conv2d", NULL, 3, in, 3, at, &o, msg);
    }
    if (node < 0) {
        par_graph_destroy(g);
        return NULL;
    }
    int32_t y = par_graph_desc_of(g)->nodes[node].outputs[0];
    if (s->relu) {
        par_out_spec ro = o;
        ro.name = "r";
        if (s->relu == 2) { /* relu6 with its own quantization: fused as a second requantization stage */
            ro.scale = 0.0273f;
            ro.zero_point = s->ydt == PAR_DTYPE_QS8 ? -100 : 27;
        }
        int32_t rn = par_graph_add_node(g, s->relu == 2 ? "relu6" : "relu", NULL, 1, &y, 0, NULL, &ro, msg);
        y = par_graph_desc_of(g)->nodes[rn].outputs[0];
    }
    if (s->add) {
        const par_value *yv = &par_graph_desc_of(g)->values[y];
        int32_t z = par_graph_add_input(g, "z", s->ydt, yv->rank, yv->dims, msg);
        par_graph_set_quant(g, z, 0.03f, s->ydt == PAR_DTYPE_QS8 ? 10 : 100, msg);
        int32_t ai[2] = {y, z};
        par_out_spec ao = {"s", s->ydt, 0.07f, s->ydt == PAR_DTYPE_QS8 ? 0 : 128};
        int32_t an = par_graph_add_node(g, "add", NULL, 2, ai, 0, NULL, &ao, msg);
        y = par_graph_desc_of(g)->nodes[an].outputs[0];
    }
    par_graph_mark_output(g, y, msg);
    if (par_graph_finalize(g, msg) != PAR_OK) {
        par_graph_destroy(g);
        return NULL;
    }
    return g;
}

/* Run g on qnnpack with `kernels`, compare with the reference: returns the number of differing elements. */
static int64_t run_compare(const par_graph_desc *d, const char *kernels, uint8_t *got_out)
{
    const par_backend *be = par_backend_qnnpack();
    par_msg m = {{0}};
    void *ctx = NULL, *prep = NULL;
    CU_ASSERT_FATAL(be->init(&ctx, &m) == PAR_OK);
    par_set_knob_fn knob = (par_set_knob_fn)be->get_proc(ctx, PAR_PROC_SET_KNOB);
    if (knob(ctx, "kernels", kernels, &m) != PAR_OK) {
        be->destroy(ctx);
        return -1; /* not on this machine */
    }
    void *inputs[4];
    for (int32_t i = 0; i < d->n_inputs; i++) {
        const par_value *v = &d->values[d->inputs[i]];
        uint8_t *buf = malloc((size_t)v->numel);
        for (int64_t k = 0; k < v->numel; k++) buf[k] = (uint8_t)rng();
        inputs[i] = buf;
    }
    const par_value *ov = &d->values[d->outputs[0]];
    uint8_t *out = malloc((size_t)ov->numel);
    int64_t diff = -2;
    par_status st = be->prepare(ctx, d, &prep, &m);
    CU_ASSERT_EQUAL(st, PAR_OK);
    if (st == PAR_OK) {
        void *outs[1] = {out};
        CU_ASSERT_EQUAL(be->bind(ctx, prep, (const void *const *)inputs, outs, &m), PAR_OK);
        CU_ASSERT_EQUAL(be->run(ctx, prep, &m), PAR_OK);
        par_prec p = par_prec_for(PAR_ARITH_F32);
        p.requant = PAR_REQUANT_FP32;
        par_ref_result *r = NULL;
        CU_ASSERT_FATAL(par_ref_run(d, &p, (const void *const *)inputs, &r, &m) == PAR_OK);
        const par_rt *ref = &r->values[d->outputs[0]];
        diff = 0;
        for (int64_t k = 0; k < ov->numel; k++) {
            double g = ov->dtype == PAR_DTYPE_QS8 ? (double)(int8_t)out[k] : (double)out[k];
            diff += g != ref->v[k];
        }
        CU_ASSERT(varied(out, (size_t)ov->numel));
        if (got_out) memcpy(got_out, out, (size_t)ov->numel);
        par_ref_result_destroy(r);
        be->release(ctx, prep);
    }
    for (int32_t i = 0; i < d->n_inputs; i++) free(inputs[i]);
    free(out);
    be->destroy(ctx);
    return diff;
}

static void graphs(const gspec *specs, size_t n)
{
    static const char *const SETS[] = {"scalar", "avx2", "vnni", "neon", "neondot"};
    for (size_t i = 0; i < n; i++) {
        par_msg m = {{0}};
        rng_seed(300 + i);
        par_graph *g = build(&specs[i], &m);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g);
        const par_graph_desc *d = par_graph_desc_of(g);
        int64_t numel = d->values[d->outputs[0]].numel;
        uint8_t *first = malloc((size_t)numel), *other = malloc((size_t)numel);
        int have_first = 0;
        for (size_t s = 0; s < sizeof SETS / sizeof SETS[0]; s++) {
            rng_seed(1000 + i); /* the same inputs for every kernel set */
            int64_t diff = run_compare(d, SETS[s], have_first ? other : first);
            if (diff == -1) continue;
            if (diff != 0)
                fprintf(stderr, "\n  graph %zu, kernels=%s: %lld elements differ\n", i, SETS[s], (long long)diff);
            CU_ASSERT_EQUAL(diff, 0);
            if (have_first) CU_ASSERT_EQUAL(memcmp(first, other, (size_t)numel), 0);
            have_first = 1;
        }
        free(first), free(other);
        par_graph_destroy(g);
    }
}

static void test_graph_conv(void)
{
    const gspec S[] = {
        /* xdt, wdt, ydt, n, c, h, w, o, kh, kw, groups, stride, pad, wzp, per_channel, relu, linear, add */
        {PAR_DTYPE_QU8, PAR_DTYPE_QU8, PAR_DTYPE_QU8, 1, 3, 9, 8, 5, 3, 3, 1, 1, 1, 128, 0, 0, 0, 0},
        {PAR_DTYPE_QU8, PAR_DTYPE_QU8, PAR_DTYPE_QU8, 2, 7, 7, 7, 33, 3, 3, 1, 2, 1, 97, 0, 1, 0, 0},  /* zw != 0 */
        {PAR_DTYPE_QS8, PAR_DTYPE_QS8, PAR_DTYPE_QS8, 1, 16, 6, 5, 40, 1, 1, 1, 1, 0, 0, 1, 0, 0, 0},
        {PAR_DTYPE_QS8, PAR_DTYPE_QS8, PAR_DTYPE_QU8, 1, 17, 5, 9, 9, 5, 5, 1, 1, 2, 0, 1, 1, 0, 0},
        {PAR_DTYPE_QS8, PAR_DTYPE_QS8, PAR_DTYPE_QS8, 1, 8, 8, 8, 12, 3, 3, 4, 1, 1, 0, 1, 0, 0, 0}, /* groups */
        {PAR_DTYPE_QU8, PAR_DTYPE_QU8, PAR_DTYPE_QU8, 1, 6, 7, 7, 9, 3, 3, 3, 2, 1, 200, 0, 0, 0, 0}, /* groups, zw */
        {PAR_DTYPE_QS8, PAR_DTYPE_QS8, PAR_DTYPE_QS8, 1, 24, 9, 9, 24, 3, 3, 24, 1, 1, 0, 1, 1, 0, 0}, /* depthwise */
        {PAR_DTYPE_QU8, PAR_DTYPE_QU8, PAR_DTYPE_QU8, 2, 19, 8, 6, 19, 3, 3, 19, 2, 1, 77, 0, 0, 0, 0}, /* dw, zw */
        {PAR_DTYPE_QU8, PAR_DTYPE_QS8, PAR_DTYPE_QS8, 1, 32, 7, 7, 64, 1, 1, 1, 1, 0, 0, 1, 1, 0, 1},   /* + add */
        {PAR_DTYPE_QU8, PAR_DTYPE_QU8, PAR_DTYPE_QU8, 5, 70, 1, 1, 37, 1, 1, 1, 1, 0, 140, 0, 0, 1, 0}, /* linear */
        {PAR_DTYPE_QS8, PAR_DTYPE_QS8, PAR_DTYPE_QS8, 9, 33, 1, 1, 65, 1, 1, 1, 1, 0, 0, 1, 0, 1, 0},
        {PAR_DTYPE_QU8, PAR_DTYPE_QS8, PAR_DTYPE_QU8, 1, 16, 9, 9, 40, 3, 3, 1, 1, 1, 0, 1, 2, 0, 0},  /* relu6 */
        {PAR_DTYPE_QS8, PAR_DTYPE_QS8, PAR_DTYPE_QS8, 1, 48, 7, 7, 48, 3, 3, 48, 2, 1, 0, 1, 2, 0, 0}, /* dw, relu6 */
        {PAR_DTYPE_QU8, PAR_DTYPE_QU8, PAR_DTYPE_QU8, 3, 40, 1, 1, 70, 1, 1, 1, 1, 0, 128, 0, 2, 1, 1}, /* fc */
    };
    graphs(S, sizeof S / sizeof S[0]);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Knobs, describe, declarations
 * ------------------------------------------------------------------------------------------------------------- */
static void test_knobs(void)
{
    const par_backend *be = par_backend_qnnpack();
    CU_ASSERT_STRING_EQUAL(be->name, "qnnpack");
    void *ctx = NULL;
    par_msg m = {{0}};
    CU_ASSERT_FATAL(be->init(&ctx, &m) == PAR_OK);
    par_set_knob_fn knob = (par_set_knob_fn)be->get_proc(ctx, PAR_PROC_SET_KNOB);
    par_describe_fn desc = (par_describe_fn)be->get_proc(ctx, PAR_PROC_DESCRIBE);
    par_requant_fn rq = (par_requant_fn)be->get_proc(ctx, PAR_PROC_REQUANT);
    par_microbench_fn mb = (par_microbench_fn)be->get_proc(ctx, PAR_PROC_MICROBENCH);
    CU_ASSERT_PTR_NOT_NULL_FATAL(knob);
    CU_ASSERT_PTR_NOT_NULL_FATAL(desc);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rq);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mb);
    CU_ASSERT_EQUAL(rq(ctx), PAR_REQUANT_FP32);
    CU_ASSERT_EQUAL(knob(ctx, "threads", "0", &m), PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "threads"));
    CU_ASSERT_EQUAL(knob(ctx, "threads", "2x", &m), PAR_ERROR);
    CU_ASSERT_EQUAL(knob(ctx, "threads", "2", &m), PAR_OK);
    CU_ASSERT_EQUAL(knob(ctx, "kernels", "sse9", &m), PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "kernels"));
    CU_ASSERT_EQUAL(knob(ctx, "color", "red", &m), PAR_ERROR);
    CU_ASSERT_EQUAL(knob(ctx, "kernels", "scalar", &m), PAR_OK);
    char buf[256];
    size_t need = desc(ctx, buf, sizeof buf);
    CU_ASSERT(need > 0 && need < sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "threads=2"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "kernels=scalar"));
    double v = 0;
    char unit[16];
    CU_ASSERT_EQUAL(mb(ctx, "nosuch", &v, unit, sizeof unit, &m), PAR_UNSUPPORTED);
    be->destroy(ctx);
    be->destroy(NULL);
    be->release(NULL, NULL);
}

static void test_unsupported(void)
{
    /* An f32 conv is UNSUPPORTED with a reason naming the dtype. */
    par_msg m = {{0}};
    par_graph *g = par_graph_create("f32");
    int64_t xd[4] = {1, 2, 4, 4}, wd[4] = {2, 2, 1, 1};
    float wv[4] = {1, 2, 3, 4};
    int32_t in[2] = {par_graph_add_input(g, "x", PAR_DTYPE_F32, 4, xd, &m),
                     par_graph_add_const(g, "w", PAR_DTYPE_F32, 4, wd, wv, &m)};
    par_out_spec o = {"y", PAR_DTYPE_F32, 0, 0};
    int32_t n = par_graph_add_node(g, "conv2d", NULL, 2, in, 0, NULL, &o, &m);
    par_graph_mark_output(g, par_graph_desc_of(g)->nodes[n].outputs[0], &m);
    CU_ASSERT_FATAL(par_graph_finalize(g, &m) == PAR_OK);
    const par_backend *be = par_backend_qnnpack();
    void *ctx = NULL;
    be->init(&ctx, &m);
    CU_ASSERT_EQUAL(be->supports(ctx, par_graph_desc_of(g), 0, &m), PAR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "f32"));
    CU_ASSERT_EQUAL(be->supports(ctx, par_graph_desc_of(g), 7, &m), PAR_ERROR);
    be->destroy(ctx);
    par_graph_destroy(g);
}

/* quantize -> dequantize round trip at exact ties (x = (k + 1/2) scale) with an odd zero point: round half to even
 * applies to x / scale before the zero point is added, so the parity of the zero point must not matter. */
static void test_quantize_ties(void)
{
    static const struct {
        par_dtype dt;
        float scale;
        int32_t zp;
    } Q[] = {{PAR_DTYPE_QS8, 0.25f, 33}, {PAR_DTYPE_QS8, 0.03125f, -7}, {PAR_DTYPE_QU8, 0.5f, 131},
             {PAR_DTYPE_QU8, 0.1f, 0}};
    for (size_t qi = 0; qi < sizeof Q / sizeof Q[0]; qi++) {
        enum { N = 600 };
        par_msg m = {{0}};
        par_graph *g = par_graph_create("qties");
        int64_t d[1] = {N};
        int32_t x = par_graph_add_input(g, "x", PAR_DTYPE_F32, 1, d, &m);
        par_out_spec qo = {"q", Q[qi].dt, Q[qi].scale, Q[qi].zp};
        int32_t qn = par_graph_add_node(g, "quantize", NULL, 1, &x, 0, NULL, &qo, &m);
        par_graph_mark_output(g, par_graph_desc_of(g)->nodes[qn].outputs[0], &m);
        CU_ASSERT_FATAL(par_graph_finalize(g, &m) == PAR_OK);
        float in[N];
        for (int i = 0; i < N; i++) /* ties, near-ties, saturation at both ends, NaN-free */
            in[i] = (float)(((i % 3 == 0) ? (i - 300) / 2.0 + 0.5 : (i - 300) * 0.37) * Q[qi].scale);
        uint8_t out[N];
        const par_backend *be = par_backend_qnnpack();
        void *ctx = NULL, *prep = NULL;
        CU_ASSERT_FATAL(be->init(&ctx, &m) == PAR_OK);
        CU_ASSERT_FATAL(be->prepare(ctx, par_graph_desc_of(g), &prep, &m) == PAR_OK);
        const void *ins[1] = {in};
        void *outs[1] = {out};
        CU_ASSERT(be->bind(ctx, prep, ins, outs, &m) == PAR_OK);
        CU_ASSERT(be->run(ctx, prep, &m) == PAR_OK);
        int lo = Q[qi].dt == PAR_DTYPE_QS8 ? -128 : 0, hi = Q[qi].dt == PAR_DTYPE_QS8 ? 127 : 255, bad = 0;
        for (int i = 0; i < N; i++) {
            double t = (double)in[i] / Q[qi].scale;
            double r = t - remainder(t, 1.0) + Q[qi].zp;
            int want = r < lo ? lo : r > hi ? hi : (int)r;
            int got = Q[qi].dt == PAR_DTYPE_QS8 ? (int8_t)out[i] : out[i];
            bad += got != want;
        }
        CU_ASSERT_EQUAL(bad, 0);
        CU_ASSERT(varied(out, N));
        be->release(ctx, prep);
        be->destroy(ctx);
        par_graph_destroy(g);
    }
}

static void test_guard(void)
{
    const uint8_t same[4] = {7, 7, 7, 7}, diff[4] = {7, 7, 8, 7};
    CU_ASSERT_FALSE(varied(same, 4));
    CU_ASSERT_TRUE(varied(diff, 4));
}

static const CU_TestInfo tests[] = {
    {"graphs vs reference integers, every kernel set", test_graph_conv},
    {"knobs, describe, requant, microbench names", test_knobs},
    {"f32 graphs unsupported with a reason", test_unsupported},
    {"quantize ties with odd zero points", test_quantize_ties},
    {"all-equal outputs guard", test_guard},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("qnnpack", tests)
