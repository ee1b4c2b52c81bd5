/*
 * qnnpack.c - the qnnpack backend (built in): an int8 backend in the manner of QNNPACK and XNNPACK's qs8/qu8
 * operators, NHWC inside, weights packed at prepare with the zero-point corrections folded into the bias, indirection
 * GEMM micro-kernels for AVX-512 VNNI, AVX2, NEON dot product, NEON and scalar chosen at run time (knob
 * kernels=auto|vnni|avx2|neondot|neon|scalar),
 * requantization scheme fp32 (PAR_REQUANT_FP32). This file holds the backend table, the knobs, the plan (values,
 * layouts, steps), the graph boundary (inputs in, outputs out) and the micro-benchmarks; op lowering is in
 * qnn_conv.c and qnn_ops.c (named by the op table below), plan services in qnn_common.c, kernels in qnn_ukernel_*.c.
 *
 * It runs quantized graphs, and the f32 ops of a decoder whose linears are linear_8da4w (qnn_float.c): f32 tensors
 * appear as the input of `quantize`, the output of `dequantize`, around linear_dynamic and linear_8da4w, and in and
 * out of those f32 ops. Anything else is UNSUPPORTED with the reason. It must not write outside the bound outputs or into inputs.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "qnn_common.h"

#define QNN_VERSION "1.0"

/* ---------------------------------------------------------------------------------------------------------------
 * Graph boundary
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct io_op {
    int32_t index;  /* input or output index */
    uint8_t *q;     /* quantized buffer (logical) */
    const float *f; /* f32 source of an output */
    const int16_t *s; /* qs16 source of an output */
    size_t n;
    uint8_t x;      /* 0x80 for qs8, else 0 */
} io_op;

static void load_run(const void *opv, qnn_plan *p)
{
    const io_op *o = opv;
    const uint8_t *s = p->inputs[o->index];
    for (size_t i = 0; i < o->n; i++) o->q[i] = s[i] ^ o->x;
}

static void store_run(const void *opv, qnn_plan *p)
{
    const io_op *o = opv;
    if (o->f || o->s) {
        memcpy(p->outputs[o->index], o->f ? (const void *)o->f : (const void *)o->s,
               o->n * (o->f ? sizeof(float) : sizeof(int16_t)));
        return;
    }
    uint8_t *d = p->outputs[o->index];
    for (size_t i = 0; i < o->n; i++) d[i] = o->q[i] ^ o->x;
}

static int is_q(par_dtype t)
{
    return t == PAR_DTYPE_QU8 || t == PAR_DTYPE_QS8;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Context and knobs
 * ------------------------------------------------------------------------------------------------------------- */
static par_status qnn_init(void **ctx, par_msg *msg)
{
    qnn_ctx *c = calloc(1, sizeof *c);
    if (!c) return par_msgf(msg, PAR_ERROR, "init: out of memory");
    c->threads = 1;
    c->isa = par_qnn_ukernels_best()->isa;
    *ctx = c;
    return PAR_OK;
}

static void qnn_destroy(void *ctx)
{
    free(ctx);
}

static par_status qnn_set_knob(void *ctx, const char *key, const char *value, par_msg *msg)
{
    qnn_ctx *c = ctx;
    if (c->prepared) return par_knob_too_late(key, NULL, msg);
    if (strcmp(key, "threads") == 0) return par_knob_threads(value, &c->threads, msg);
    if (strcmp(key, "kernels") == 0) {
        static const struct {
            const char *name;
            qnn_isa isa;
        } K[] = {{"vnni", QNN_ISA_VNNI}, {"avx2", QNN_ISA_AVX2}, {"neondot", QNN_ISA_NEONDOT}, {"neon", QNN_ISA_NEON},
                 {"scalar", QNN_ISA_SCALAR}};
        if (strcmp(value, "auto") == 0) {
            c->isa = par_qnn_ukernels_best()->isa;
            c->forced = 0;
            return PAR_OK;
        }
        for (size_t i = 0; i < sizeof K / sizeof K[0]; i++)
            if (strcmp(value, K[i].name) == 0) {
                if (!par_qnn_ukernels(K[i].isa))
                    return par_knob_isa_missing(value, par_qnn_ukernels_best()->name, msg);
                c->isa = K[i].isa;
                c->forced = 1;
                return PAR_OK;
            }
        return par_msgf(msg, PAR_ERROR, "knob 'kernels': value '%s' is not one of auto, vnni, avx2, neondot, neon, "
                        "scalar", value);
    }
    return par_msgf(msg, PAR_ERROR, "unknown knob '%s' (qnnpack knobs: threads=N, "
                    "kernels=auto|vnni|avx2|neondot|neon|scalar)", key);
}

static size_t qnn_describe(void *ctx, char *buf, size_t len)
{
    const qnn_ctx *c = ctx;
    const qnn_ukernels *uk = par_qnn_ukernels(c->isa);
    int need = snprintf(buf, len, "threads=%d;kernels=%s%s;requant=fp32;gemm=%zux%zu%s;qb4w=%s", c->threads,
                        uk ? uk->name : "?", c->forced ? "" : "(auto)", uk ? uk->mr : 0, uk ? uk->nr : 0,
                        uk && uk->wfmt == QNN_WFMT_K1 ? "" : "c4", uk ? uk->qb4w_name : "?");
    return need < 0 ? 0 : (size_t)need;
}

static par_requant qnn_requant(void *ctx)
{
    (void)ctx;
    return PAR_REQUANT_FP32;
}

/* Every epilogue, lookup table and add formula uses core/requant.h's fp32 definitions, so the integers are the
 * scheme's exactly (tests/test_qnnpack.c checks it bit for bit): the strict oracle applies. */
static int qnn_requant_exact(void *ctx)
{
    (void)ctx;
    return 1;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Micro-benchmarks: "gemm" (the igemm micro-kernel of the selected set on M = N = 512, K = 1024, one thread, the
 * packed weights of one column block reused across all row tiles as a GEMM driver does) and "peak" (the throughput
 * of the selected set's multiply-accumulate with independent accumulators: vpdpbusd for vnni, vpmaddwd + vpaddd for
 * avx2; none for scalar).
 * ------------------------------------------------------------------------------------------------------------- */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int32_t bench_w(const void *ctx, size_t n, size_t t, size_t k)
{
    (void)ctx;
    (void)t;
    return (int32_t)((n * 7 + k * 13) % 255) - 127;
}

static par_status bench_gemm(const qnn_ukernels *uk, double *gops, par_msg *msg)
{
    enum { M = 512, N = 512, K = 1024 };
    size_t mr = uk->mr, nr = uk->nr, mt = (M + mr - 1) / mr, nb = (N + nr - 1) / nr;
    size_t bb = par_qnn_block_bytes(uk, 1, K);
    uint8_t *a = aligned_alloc(64, (size_t)M * K + QNN_SLACK), *cbuf = aligned_alloc(64, (size_t)M * N);
    uint8_t *w = aligned_alloc(64, bb * nb);
    const uint8_t **ind = malloc(sizeof *ind * mt * mr);
    float *scale = aligned_alloc(64, sizeof(float) * nr);
    int32_t *bias = calloc(nr, sizeof *bias);
    if (!a || !cbuf || !w || !ind || !scale || !bias) {
        free(a), free(cbuf), free(w), free(ind), free(scale), free(bias);
        return par_msgf(msg, PAR_ERROR, "microbench gemm: out of memory");
    }
    for (size_t i = 0; i < (size_t)M * K; i++) a[i] = (uint8_t)(i * 31 + 7);
    for (size_t i = 0; i < mt * mr; i++) ind[i] = a + (i < M ? i : M - 1) * K;
    for (size_t j = 0; j < nr; j++) scale[j] = 1e-4f;
    for (size_t b = 0; b < nb; b++) par_qnn_pack_gemm(uk, 1, K, K, b * nr, nr, bias, bench_w, NULL, w + b * bb);
    qnn_rq rq = {-128.0f, 127.0f, 128, 0, 0.0f, 0.0f, 1.0f, 1};
    double best = 1e30;
    for (int rep = 0; rep < 15; rep++) {
        double t0 = now_s();
        for (size_t b = 0; b < nb; b++)
            for (size_t m = 0; m < mt; m++)
                uk->igemm(mr, nr, K, 1, ind + m * mr, 0, NULL, w + b * bb, NULL, cbuf + m * mr * N + b * nr, N, scale,
                          &rq);
        double dt = now_s() - t0;
        if (dt < best) best = dt;
    }
    *gops = 2.0 * M * N * K / best * 1e-9;
    free(a), free(cbuf), free(w), free(ind), free(scale), free(bias);
    return PAR_OK;
}

/* "qb4w": the selected set's linear_8da4w kernel on a prefill of M = 32 tokens through 512 columns of a 4096-wide
 * projection, block 32, one thread, best of 31 short runs (as "gemm": the best run is the uncontended rate), GOP/s (2 ops per multiply-add of an int8 activation and an int4 weight); the
 * row quantization is left out (the layer's bench case, cases/bench/linear_8da4w_4096_prefill32.json, has it). */
static par_status bench_qb4w(const qnn_ukernels *uk, double *gops, par_msg *msg)
{
    enum { M = 32, N = 512, K = 4096, B = 32, MR = QNN_QB4W_MR, NR = QNN_QB4W_NR };
    size_t o_wsum, o_scale, o_bias, bb;
    par_qnn_qb4w_offsets(K, K / B, &o_wsum, &o_scale, &o_bias, &bb);
    uint8_t *a = aligned_alloc(64, (size_t)M * K), *w = malloc((size_t)N * K / 2);
    uint8_t *packed = aligned_alloc(64, bb * (N / NR));
    float *sc = malloc(sizeof(float) * N * (K / B)), *c = malloc(sizeof(float) * M * N), sx[M];
    int32_t zp[M];
    if (!a || !w || !packed || !sc || !c) {
        free(a), free(w), free(packed), free(sc), free(c);
        return par_msgf(msg, PAR_ERROR, "microbench qb4w: out of memory");
    }
    for (size_t i = 0; i < (size_t)M * K; i++) a[i] = (uint8_t)(i * 31 + 7);
    for (size_t i = 0; i < (size_t)N * K / 2; i++) w[i] = (uint8_t)(i * 13 + 5);
    for (size_t i = 0; i < (size_t)N * (K / B); i++) sc[i] = 1e-3f;
    for (size_t i = 0; i < M; i++) zp[i] = 128, sx[i] = 1e-2f;
    memset(packed, 0, bb * (N / NR));
    for (size_t j = 0; j < N / NR; j++) par_qnn_pack_qb4w(K, K, B, j * NR, NR, w, sc, NULL, packed + j * bb);
    double best = 1e30;
    for (int rep = 0; rep < 31; rep++) {
        double t0 = now_s();
        for (size_t j = 0; j < N / NR; j++)
            for (size_t m = 0; m < M; m += MR)
                uk->qb4w(MR, NR, K, B, a + m * K, K, zp + m, sx + m, packed + j * bb, c + m * N + j * NR, N);
        double dt = now_s() - t0;
        if (dt < best) best = dt;
    }
    *gops = 2.0 * M * N * K / best * 1e-9;
    free(a), free(w), free(packed), free(sc), free(c);
    return PAR_OK;
}

/* "s16": the selected set's 16a8w / 16a4w GEMM (qnn_s16.h; linear_16a4w runs it on its nibbles times their
 * multipliers, widened at prepare) on M = 32 rows through 512 columns of K = 4096, one thread, best of 31, GOP/s
 * (2 ops per multiply-add of an int16 activation and a weight). */
static par_status bench_s16(qnn_isa isa, double *gops, par_msg *msg)
{
    enum { M = 32, N = 512, K = 4096, MR = QNN_S16_MR, NR = QNN_S16_NR };
    const size_t bb = par_qnn_s16_block_bytes(K);
    int16_t *a = aligned_alloc(64, sizeof(int16_t) * M * K), *w = malloc(sizeof(int16_t) * N * K);
    int16_t *c = malloc(sizeof(int16_t) * M * N);
    uint8_t *packed = aligned_alloc(64, bb * (N / NR));
    float *sc = malloc(sizeof(float) * N);
    if (!a || !w || !c || !packed || !sc) {
        free(a), free(w), free(c), free(packed), free(sc);
        return par_msgf(msg, PAR_ERROR, "microbench s16: out of memory");
    }
    for (size_t i = 0; i < (size_t)M * K; i++) a[i] = (int16_t)(i * 31 + 7);
    for (size_t i = 0; i < (size_t)N * K; i++) w[i] = (int16_t)((int)((i * 13 + 5) % 16) - 8); /* int4 range */
    for (size_t i = 0; i < N; i++) sc[i] = 1e-6f;
    memset(packed, 0, bb * (N / NR));
    for (size_t j = 0; j < N / NR; j++) par_qnn_s16_pack(K, K, j * NR, NR, w, NULL, sc, packed + j * bb);
    const qnn_s16_gemm_fn fn = par_qnn_s16_kernel(isa);
    double best = 1e30;
    for (int rep = 0; rep < 31; rep++) {
        double t0 = now_s();
        for (size_t j = 0; j < N / NR; j++)
            for (size_t m = 0; m < M; m += MR) fn(MR, NR, K, a + m * K, K, packed + j * bb, c + m * N + j * NR, N);
        double dt = now_s() - t0;
        if (dt < best) best = dt;
    }
    *gops = 2.0 * M * N * K / best * 1e-9;
    free(a), free(w), free(c), free(packed), free(sc);
    return PAR_OK;
}

static par_status qnn_microbench(void *ctx, const char *name, double *value, char *unit, size_t unit_len,
                                 par_msg *msg)
{
    const qnn_ctx *c = ctx;
    snprintf(unit, unit_len, "GOP/s");
    if (strcmp(name, "gemm") == 0) {
        const qnn_ukernels *uk = par_qnn_ukernels(c->isa);
        if (!uk) return par_msgf(msg, PAR_UNSUPPORTED, "microbench gemm: kernel set unavailable");
        return bench_gemm(uk, value, msg);
    }
    if (strcmp(name, "qb4w") == 0) {
        const qnn_ukernels *uk = par_qnn_ukernels(c->isa);
        if (!uk) return par_msgf(msg, PAR_UNSUPPORTED, "microbench qb4w: kernel set unavailable");
        return bench_qb4w(uk, value, msg);
    }
    if (strcmp(name, "s16") == 0) {
        const qnn_ukernels *uk = par_qnn_ukernels(c->isa);
        if (!uk) return par_msgf(msg, PAR_UNSUPPORTED, "microbench s16: kernel set unavailable");
        return bench_s16(uk->isa, value, msg);
    }
    if (strcmp(name, "peak") == 0) {
        /* The peak of the selected set's instructions (vpdpbusd for vnni, vpmaddwd + vpaddd for avx2), so that
         * gemm/peak is the kernel's fraction of what its ISA can do. Short bursts, best of many: the two logical
         * CPUs here may share one core with other work, and the best burst is the uncontended rate (the gemm
         * figure is taken the same way). */
        const qnn_ukernels *uk = par_qnn_ukernels(c->isa);
        if (!uk || uk->isa == QNN_ISA_SCALAR)
            return par_msgf(msg, PAR_UNSUPPORTED, "microbench peak: no int8 peak loop for the %s kernel set",
                            uk ? uk->name : "selected");
        double best = 0;
        for (int i = 0; i < 100; i++) {
#if defined(__x86_64__)
            double v = uk->isa == QNN_ISA_VNNI ? par_qnn_vnni_peak(50000) : par_qnn_avx2_peak(100000);
#else
            double v = 0; /* unreachable: no VNNI or AVX2 kernels outside x86-64 */
#endif
            if (v > best) best = v;
        }
        *value = best;
        return PAR_OK;
    }
    return par_msgf(msg, PAR_UNSUPPORTED, "microbench '%s': qnnpack has 'gemm', 'qb4w', 's16' and 'peak'", name);
}

static void *qnn_get_proc(void *ctx, const char *name)
{
    (void)ctx;
    if (strcmp(name, PAR_PROC_SET_KNOB) == 0) return (void *)(par_set_knob_fn)qnn_set_knob;
    if (strcmp(name, PAR_PROC_DESCRIBE) == 0) return (void *)(par_describe_fn)qnn_describe;
    if (strcmp(name, PAR_PROC_REQUANT) == 0) return (void *)(par_requant_fn)qnn_requant;
    if (strcmp(name, PAR_PROC_REQUANT_EXACT) == 0) return (void *)(par_requant_exact_fn)qnn_requant_exact;
    if (strcmp(name, PAR_PROC_MICROBENCH) == 0) return (void *)(par_microbench_fn)qnn_microbench;
    return NULL;
}

/* ---------------------------------------------------------------------------------------------------------------
 * supports / prepare / bind / run / release
 * ------------------------------------------------------------------------------------------------------------- */
/* The op table: how each op is checked and lowered, and which variant of its lowering it is. An op absent here is
 * UNSUPPORTED. */
typedef struct qnn_op {
    const char *op;
    unsigned flags; /* QNN_OP_*: what its tensors must be */
    qnn_lower_fn lower;
    int variant;    /* qnn_variant */
} qnn_op;

static const qnn_op op_table[] = {
    {"conv2d", QNN_OP_WEIGHTS, par_qnn_lower_conv, QNN_V_CONV},
    {"conv_transpose2d", QNN_OP_WEIGHTS, par_qnn_lower_conv, QNN_V_CONV_T},
    {"linear", QNN_OP_WEIGHTS, par_qnn_lower_conv, QNN_V_LINEAR},
    {"matmul", 0, par_qnn_lower_matmul, QNN_V_NONE},
    {"linear_dynamic", QNN_OP_DYNAMIC, par_qnn_lower_dynamic, QNN_V_NONE},
    {"linear_8da4w", QNN_OP_Q4, par_qnn_lower_8da4w, QNN_V_NONE},
    {"linear_qd8", QNN_OP_QD8, par_qnn_lower_qd8, QNN_V_QD8_LINEAR},
    {"matmul_qd8", QNN_OP_QD8, par_qnn_lower_qd8, QNN_V_QD8_MATMUL},
    {"quantize", QNN_OP_F32_IN, par_qnn_lower_quantize, QNN_V_NONE},
    {"dequantize", QNN_OP_F32_OUT, par_qnn_lower_dequantize, QNN_V_NONE},
    {"relu", 0, par_qnn_lower_unary, QNN_V_RELU},
    {"relu6", 0, par_qnn_lower_unary, QNN_V_CLAMP},
    {"hardtanh", 0, par_qnn_lower_unary, QNN_V_CLAMP},
    {"clamp", 0, par_qnn_lower_unary, QNN_V_CLAMP},
    {"sigmoid", 0, par_qnn_lower_unary, QNN_V_SIGMOID},
    {"tanh", 0, par_qnn_lower_unary, QNN_V_TANH},
    {"hardswish", 0, par_qnn_lower_unary, QNN_V_HARDSWISH},
    {"hardsigmoid", 0, par_qnn_lower_unary, QNN_V_HARDSIGMOID},
    {"leaky_relu", 0, par_qnn_lower_unary, QNN_V_LEAKY_RELU},
    {"add", 0, par_qnn_lower_binary, QNN_V_ADD},
    {"mul", 0, par_qnn_lower_binary, QNN_V_MUL},
    {"max_pool2d", QNN_OP_RANK4, par_qnn_lower_pool, QNN_V_MAX_POOL},
    {"avg_pool2d", QNN_OP_RANK4, par_qnn_lower_pool, QNN_V_AVG_POOL},
    {"global_avg_pool2d", QNN_OP_RANK4, par_qnn_lower_pool, QNN_V_GLOBAL_AVG_POOL},
    {"adaptive_avg_pool2d", QNN_OP_RANK4, par_qnn_lower_avg, QNN_V_ADAPTIVE_AVG},
    {"mean", 0, par_qnn_lower_avg, QNN_V_MEAN},
    {"softmax", 0, par_qnn_lower_softmax, QNN_V_NONE},
    {"upsample_nearest2d", QNN_OP_RANK4, par_qnn_lower_resize, QNN_V_NEAREST},
    {"upsample_bilinear2d", QNN_OP_RANK4, par_qnn_lower_resize, QNN_V_BILINEAR},
    {"concat", 0, par_qnn_lower_concat, QNN_V_NONE},
    {"reshape", 0, par_qnn_lower_copy, QNN_V_NONE},
    {"flatten", 0, par_qnn_lower_copy, QNN_V_NONE},
    {"permute", 0, par_qnn_lower_permute, QNN_V_NONE},
    {"slice", 0, par_qnn_lower_slice, QNN_V_NONE},
};

static const qnn_op *op_find(const char *op)
{
    for (size_t i = 0; i < sizeof op_table / sizeof op_table[0]; i++)
        if (strcmp(op_table[i].op, op) == 0) return &op_table[i];
    return NULL;
}

static par_status qnn_supports(void *ctx, const par_graph_desc *g, int32_t node, par_msg *msg)
{
    (void)ctx;
    if (node < 0 || node >= g->n_nodes)
        return par_msgf(msg, PAR_ERROR, "supports: node index %d out of range [0, %d)", node, g->n_nodes);
    const par_node *n = &g->nodes[node];
    if (par_qnn_s16_node(g, n)) return par_qnn_check_s16(g, n, msg);
    if (par_qnn_float_op(g, n)) return par_qnn_check_float(g, n, msg);
    const qnn_op *e = op_find(n->op);
    if (!e) return par_msgf(msg, PAR_UNSUPPORTED, "op '%s' is not implemented by qnnpack", n->op);
    if (e->flags & QNN_OP_WEIGHTS) return par_qnn_check_conv(g, n, e->variant, msg);
    if (e->flags & QNN_OP_DYNAMIC) return par_qnn_check_dynamic(g, n, msg);
    if (e->flags & QNN_OP_Q4) return par_qnn_check_8da4w(g, n, msg);
    if (e->flags & QNN_OP_QD8) return par_qnn_check_qd8(g, n, msg);
    return par_qnn_check_op(g, n, e->flags, msg);
}

static void qnn_release(void *ctx, void *prepared)
{
    (void)ctx;
    qnn_plan *p = prepared;
    if (!p) return;
    if (p->pool) pthreadpool_destroy(p->pool);
    for (int32_t i = 0; i < p->n_allocs; i++) free(p->allocs[i]);
    free(p->allocs);
    free(p->steps);
    free(p->t);
    free(p->skip);
    free(p->variant);
    free(p->last_use);
    free(p->bufs);
    free(p);
}

static par_status init_tensors(qnn_plan *p, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    for (int32_t v = 0; v < g->n_values; v++) {
        const par_value *val = &g->values[v];
        qnn_tensor *t = &p->t[v];
        t->quant = is_q(val->dtype);
        t->xor80 = val->dtype == PAR_DTYPE_QS8;
        t->rank = val->rank;
        memcpy(t->dims, val->dims, sizeof t->dims);
        t->numel = val->numel;
        t->scale = val->scale;
        t->zp = val->zero_point + (t->xor80 ? 128 : 0);
        t->input_index = -1;
        t->fused = -1;
        /* A quantized constant used as an activation (an add operand, a concat input): stored once, here. Weights
         * of conv2d and linear are packed by their lowering instead; storing them too costs only memory. */
        if (val->kind == PAR_VALUE_CONST && t->quant && val->quant_axis < 0) {
            uint8_t *b = par_qnn_produce(p, v, QNN_LOGICAL, msg);
            if (!b) return PAR_ERROR;
            const uint8_t *s = val->data;
            for (int64_t i = 0; i < val->numel; i++) b[i] = s[i] ^ (t->xor80 ? 0x80 : 0);
        }
    }
    for (int32_t i = 0; i < g->n_inputs; i++) {
        int32_t v = g->inputs[i];
        qnn_tensor *t = &p->t[v];
        t->input_index = i;
        if (!t->quant) continue;
        io_op *o = par_qnn_alloc(p, sizeof *o);
        uint8_t *b = par_qnn_produce(p, v, QNN_LOGICAL, msg);
        if (!o || !b) return par_msgf(msg, PAR_ERROR, "prepare: out of memory");
        *o = (io_op){i, b, NULL, NULL, (size_t)t->numel, (uint8_t)(t->xor80 ? 0x80 : 0)};
        if (par_qnn_add_step(p, load_run, o, msg) != PAR_OK) return PAR_ERROR;
    }
    return PAR_OK;
}

static par_status qnn_prepare(void *ctx, const par_graph_desc *g, void **prepared, par_msg *msg)
{
    qnn_ctx *c = ctx;
    *prepared = NULL;
    c->prepared = 1;
    for (int32_t i = 0; i < g->n_nodes; i++)
        if (qnn_supports(ctx, g, i, msg) != PAR_OK) return PAR_UNSUPPORTED;
    qnn_plan *p = calloc(1, sizeof *p);
    if (!p) return par_msgf(msg, PAR_ERROR, "prepare: out of memory");
    p->g = g;
    p->ctx = c;
    p->uk = par_qnn_ukernels(c->isa);
    p->t = calloc((size_t)g->n_values + 1, sizeof *p->t);
    p->skip = calloc((size_t)g->n_nodes + 1, sizeof *p->skip);
    p->variant = calloc((size_t)g->n_nodes + 1, sizeof *p->variant);
    p->last_use = calloc((size_t)g->n_values + 1, sizeof *p->last_use);
    par_status st = PAR_OK;
    if (!p->uk) st = par_msgf(msg, PAR_UNSUPPORTED, "prepare: kernel set unavailable on this machine");
    else if (!p->t || !p->skip || !p->variant || !p->last_use) st = par_msgf(msg, PAR_ERROR, "prepare: out of memory");
    if (st == PAR_OK) {
        for (int32_t v = 0; v < g->n_values; v++)
            p->last_use[v] = g->values[v].kind == PAR_VALUE_CONST ? INT32_MAX : -1;
        for (int32_t i = 0; i < g->n_nodes; i++)
            for (int32_t k = 0; k < g->nodes[i].n_inputs; k++)
                if (g->nodes[i].inputs[k] >= 0 && p->last_use[g->nodes[i].inputs[k]] < i)
                    p->last_use[g->nodes[i].inputs[k]] = i;
        for (int32_t i = 0; i < g->n_outputs; i++) p->last_use[g->outputs[i]] = INT32_MAX;
        for (int32_t i = 0; i < g->n_nodes; i++) { /* all supported: an f32 op, a qs16 op or a row of op_table */
            const qnn_op *e = par_qnn_float_op(g, &g->nodes[i]) ? NULL : op_find(g->nodes[i].op);
            p->variant[i] = e ? e->variant : QNN_V_NONE;
        }
    }
    if (st == PAR_OK && c->threads > 1) {
        p->pool = pthreadpool_create((size_t)c->threads);
        if (!p->pool) st = par_msgf(msg, PAR_ERROR, "prepare: cannot create a pool of %d threads", c->threads);
    }
    if (st == PAR_OK) st = init_tensors(p, msg);
    for (int32_t i = 0; i < g->n_nodes && st == PAR_OK; i++) {
        const par_node *n = &g->nodes[i];
        if (p->skip[i]) st = PAR_OK;
        else if (par_qnn_s16_node(g, n)) st = par_qnn_lower_s16(p, i, msg);
        else if (par_qnn_float_op(g, n)) st = par_qnn_lower_float(p, i, msg);
        else st = op_find(n->op)->lower(p, i, p->variant[i], msg); /* every node passed qnn_supports */
        if (st != PAR_OK) {
            par_msg m = *msg;
            par_msgf(msg, st, "node '%s' (%s): %s", n->name, n->op, m.text);
        }
        par_qnn_release_dead(p, i);
    }
    for (int32_t i = 0; i < g->n_outputs && st == PAR_OK; i++) {
        int32_t v = g->outputs[i];
        qnn_tensor *t = &p->t[v];
        io_op *o = par_qnn_alloc(p, sizeof *o);
        if (!o) {
            st = par_msgf(msg, PAR_ERROR, "prepare: out of memory");
            break;
        }
        *o = (io_op){i, NULL, NULL, NULL, (size_t)t->numel, (uint8_t)(t->xor80 ? 0x80 : 0)};
        if (t->sbuf) {
            o->s = t->sbuf;
        } else if (t->quant) {
            o->q = (uint8_t *)par_qnn_need(p, v, QNN_LOGICAL, msg);
            if (!o->q) st = PAR_ERROR;
        } else if (t->fbuf) {
            o->f = t->fbuf;
        } else {
            st = par_msgf(msg, PAR_UNSUPPORTED, "output '%s' is an f32 graph input passed through",
                          g->values[v].name);
        }
        if (st == PAR_OK) st = par_qnn_add_step(p, store_run, o, msg);
    }
    if (st != PAR_OK) {
        qnn_release(ctx, p);
        return st;
    }
    *prepared = p;
    return PAR_OK;
}

static par_status qnn_bind(void *ctx, void *prepared, const void *const *inputs, void *const *outputs, par_msg *msg)
{
    (void)ctx;
    qnn_plan *p = prepared;
    if (!p) return par_msgf(msg, PAR_ERROR, "bind: no prepared graph");
    p->inputs = inputs;
    p->outputs = outputs;
    return PAR_OK;
}

static par_status qnn_run(void *ctx, void *prepared, par_msg *msg)
{
    (void)ctx;
    qnn_plan *p = prepared;
    if (!p || !p->outputs) return par_msgf(msg, PAR_ERROR, "run: graph not prepared and bound");
    for (int32_t i = 0; i < p->n_steps; i++) p->steps[i].run(p->steps[i].op, p);
    return PAR_OK;
}

static const par_backend QNN_BACKEND = {
    .api_version = PAR_BACKEND_API_VERSION,
    .struct_size = sizeof(par_backend),
    .name = "qnnpack",
    .description = "int8 (qu8/qs8) NHWC backend: indirection GEMM with AVX-512 VNNI / AVX2 / NEON dot product / NEON / "
                   "scalar micro-kernels, "
                   "fp32 requantization",
    .version = QNN_VERSION,
    .arith = PAR_ARITH_F32,
    .init = qnn_init,
    .destroy = qnn_destroy,
    .supports = qnn_supports,
    .prepare = qnn_prepare,
    .bind = qnn_bind,
    .run = qnn_run,
    .release = qnn_release,
    .get_proc = qnn_get_proc,
};

const par_backend *par_backend_qnnpack(void);
const par_backend *par_backend_qnnpack(void)
{
    return &QNN_BACKEND;
}
