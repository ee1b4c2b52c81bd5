/*
 * qnn_16a8w.c - the int16 activations of the qnnpack backend (docs/quantization.md, "16a8w" and "16a4w"): linear
 * with qs16 x (zero point 0), qs8 weights (symmetric, per tensor or per output channel), an i32 bias and a qs16
 * output, and linear_16a4w (packed int4 weights with integer block multipliers and per-channel scales), both on the
 * GEMM of qnn_s16.h; quantize f32 -> qs16 and dequantize qs16 -> f32. A qs16 value lives in its own int16 buffer
 * (qnn_tensor.sbuf), or is read from the bound buffer when it is a graph input; no other op takes one.
 *
 * linear_16a4w is packed at prepare as int16 weights nibble x multiplier (|w m| <= 8 x 128), so it runs the 16a8w
 * kernels unchanged: sum_k x_k (m_b w_k) is sum_b m_b sum_{k in b} x_k w_k exactly in wrapping int32, the op's
 * accumulator; its packed weights take 4 bytes per pair of k's and column, as 16a8w's (no nibble-reading kernel).
 *
 * Numerics. The requantization is the fp32 scheme of core/requant.h with the ratio par_requant_scale_f32 computes
 * (s_x s_w / s_out in float, left to right), clamped to [-32768, 32767]: the reference's integers bit for bit, ties
 * half to even, as the backend promises (PAR_PROC_REQUANT_EXACT). The accumulator is int32 and wraps; it is exact
 * for every graph the reference accepts (which refuses one whose sum overflows int32). quantize is rint(x / s) in
 * double, clamped (the reference's rule); dequantize s q in double, rounded once to f32. Memory is taken at
 * prepare; run allocates nothing.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/requant.h"
#include "core/shape.h"
#include "qnn_common.h"
#include "qnn_s16.h"

static int is_s16(const par_value *v) { return v && v->dtype == PAR_DTYPE_QS16; }

int par_qnn_s16_node(const par_graph_desc *g, const par_node *n)
{
    for (int32_t i = 0; i < n->n_inputs; i++)
        if (is_s16(par_node_input(g, n, i))) return 1;
    for (int32_t i = 0; i < n->n_outputs; i++)
        if (is_s16(par_node_output(g, n, i))) return 1;
    return 0;
}

/* linear_16a4w (docs/quantization.md, "16a4w"): what the reference accepts, and constants. */
static par_status check_16a4w(const par_graph_desc *g, const par_node *n, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0), *w = par_node_input(g, n, 1), *s = par_node_input(g, n, 2),
                    *b = par_node_input(g, n, 3), *y = par_node_output(g, n, 0);
    int32_t yr;
    int64_t yd[PAR_MAX_RANK];
    if (!x || !w || !s || !y) return par_msgf(msg, PAR_ERROR, "linear_16a4w: inputs 0-2 and output 0 are required");
    if (par_8da4w_shape(g, n, &yr, yd, msg) != PAR_OK) return PAR_ERROR;
    if (!is_s16(x) || !is_s16(y))
        return par_msgf(msg, PAR_UNSUPPORTED, "linear_16a4w: qs16 in and out only (x %s, y %s)",
                        par_dtype_name(x->dtype), par_dtype_name(y->dtype));
    if (w->dtype != PAR_DTYPE_QU8 || w->kind != PAR_VALUE_CONST || w->scale != 1.0f || w->zero_point != 0)
        return par_msgf(msg, PAR_UNSUPPORTED, "linear_16a4w: weight '%s' must be a constant of packed nibbles (qu8, "
                        "scale 1, zero point 0)", w->name);
    if (s->dtype != PAR_DTYPE_QS8 || s->kind != PAR_VALUE_CONST || s->quant_axis != 0 || !s->channel_scales)
        return par_msgf(msg, PAR_UNSUPPORTED, "linear_16a4w: block scales '%s' must be a qs8 constant with "
                        "per-channel scales on axis 0", s->name);
    if (b && (b->dtype != PAR_DTYPE_I32 || b->kind != PAR_VALUE_CONST))
        return par_msgf(msg, PAR_UNSUPPORTED, "linear_16a4w: bias '%s' must be an i32 constant", b->name);
    return PAR_OK;
}

par_status par_qnn_check_s16(const par_graph_desc *g, const par_node *n, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0), *y = par_node_output(g, n, 0);
    if (!x || !y) return par_msgf(msg, PAR_ERROR, "%s: missing input or output", n->op);
    if (strcmp(n->op, "quantize") == 0) {
        if (x->dtype != PAR_DTYPE_F32 || !is_s16(y))
            return par_msgf(msg, PAR_UNSUPPORTED, "quantize: %s -> %s (qs16 only from f32)", par_dtype_name(x->dtype),
                            par_dtype_name(y->dtype));
        return PAR_OK;
    }
    if (strcmp(n->op, "dequantize") == 0) {
        if (!is_s16(x) || y->dtype != PAR_DTYPE_F32)
            return par_msgf(msg, PAR_UNSUPPORTED, "dequantize: %s -> %s (qs16 only to f32)", par_dtype_name(x->dtype),
                            par_dtype_name(y->dtype));
        return PAR_OK;
    }
    if (strcmp(n->op, "linear_16a4w") == 0) return check_16a4w(g, n, msg);
    if (strcmp(n->op, "linear") != 0)
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: qnnpack takes qs16 operands only into linear, linear_16a4w, "
                        "quantize and dequantize", n->op);
    const par_value *w = par_node_input(g, n, 1), *b = par_node_input(g, n, 2);
    if (!is_s16(x) || !is_s16(y))
        return par_msgf(msg, PAR_UNSUPPORTED, "linear: input '%s' is %s and output '%s' is %s; the 16a8w linear is "
                        "qs16 in and out", x->name, par_dtype_name(x->dtype), y->name, par_dtype_name(y->dtype));
    if (!w || w->dtype != PAR_DTYPE_QS8 || w->kind != PAR_VALUE_CONST || w->rank != 2)
        return par_msgf(msg, PAR_UNSUPPORTED, "linear: 16a8w weights must be a qs8 constant [O, K]");
    if ((w->quant_axis >= 0 && (w->quant_axis != 0 || !w->channel_scales)) || (w->quant_axis < 0 && w->zero_point))
        return par_msgf(msg, PAR_UNSUPPORTED, "linear: 16a8w weights '%s' must be symmetric, per tensor or per "
                        "output channel (axis 0)", w->name);
    if (b && (b->dtype != PAR_DTYPE_I32 || b->kind != PAR_VALUE_CONST))
        return par_msgf(msg, PAR_UNSUPPORTED, "linear: bias '%s' must be an i32 constant", b->name);
    return PAR_OK;
}

/* ---- linear ---------------------------------------------------------------------------------------------------- */
typedef struct s16_lin {
    int32_t input_index; /* x is a graph input: read the bound buffer; else xs */
    const int16_t *xs;
    int16_t *pad;        /* odd K: rows x kc, the rows copied with a zero k appended */
    int16_t *y;
    size_t rows, k, kc, o, ncb, mtiles, bb;
    const uint8_t *packed;
    qnn_s16_gemm_fn fn;
    const int16_t *a; /* set per run */
} s16_lin;

static void s16_tile(void *opv, size_t j, size_t i)
{
    const s16_lin *o = opv;
    const size_t r0 = i * QNN_S16_MR, mr = o->rows - r0 < QNN_S16_MR ? o->rows - r0 : QNN_S16_MR;
    const size_t n0 = j * QNN_S16_NR, nc = o->o - n0 < QNN_S16_NR ? o->o - n0 : QNN_S16_NR;
    o->fn(mr, nc, o->kc, o->a + r0 * o->kc, o->kc, o->packed + j * o->bb, o->y + r0 * o->o + n0, o->o);
}

static void s16_lin_run(const void *opv, qnn_plan *p)
{
    s16_lin *o = (s16_lin *)opv;
    const int16_t *x = o->input_index >= 0 ? p->inputs[o->input_index] : o->xs;
    if (o->pad) {
        for (size_t r = 0; r < o->rows; r++) memcpy(o->pad + r * o->kc, x + r * o->k, o->k * sizeof *x);
        x = o->pad;
    }
    o->a = x;
    pthreadpool_parallelize_2d(p->pool, s16_tile, o, o->ncb, o->mtiles, 0);
}

qnn_s16_gemm_fn par_qnn_s16_kernel(qnn_isa isa)
{
#if defined(__x86_64__)
    if (isa == QNN_ISA_VNNI) return par_qnn_s16_gemm_4x16c2__avx512vnni;
    if (isa == QNN_ISA_AVX2) return par_qnn_s16_gemm_4x16c2__avx2;
#endif
#if defined(__aarch64__)
    if (isa == QNN_ISA_NEON || isa == QNN_ISA_NEONDOT) return par_qnn_s16_gemm_4x16__neon;
#endif
    (void)isa;
    return par_qnn_s16_gemm_4x16__scalar;
}

/* The int16 weights [O][K] the GEMM packs (malloc'ed; NULL when out of memory): 16a8w's int8 weights, or 16a4w's
 * weights (the nibbles read as the node declares, par_int4_form: any code, zero point and order) times their block's
 * multiplier. */
static int16_t *s16_weights(const par_graph_desc *g, const par_node *n, int a4w, size_t o, size_t k)
{
    int16_t *w16 = malloc(sizeof *w16 * (o * k + 1));
    if (!w16) return NULL;
    const par_value *wv = par_node_input(g, n, 1);
    if (!a4w) {
        const int8_t *w = wv->data;
        for (size_t i = 0; i < o * k; i++) w16[i] = w[i];
        return w16;
    }
    const uint8_t *w = wv->data;
    const int8_t *m = par_node_input(g, n, 2)->data;
    const size_t blk = (size_t)par_attr_int(n, "block", 32), nb = k / blk;
    par_int4 f;
    par_int4_form(n, &f); /* any form: |w m| <= 15 x 128 */
    for (size_t j = 0; j < o; j++)
        for (size_t kk = 0; kk < k; kk++)
            w16[j * k + kk] = (int16_t)(par_int4_of(&f, w[j * (k / 2) + kk / 2], (int64_t)kk) * m[j * nb + kk / blk]);
    return w16;
}

static par_status lower_linear(qnn_plan *p, const par_node *n, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const int a4w = strcmp(n->op, "linear_16a4w") == 0;
    /* the value carrying the weights' scales (16a4w: the channel scales of its block scales), and the bias */
    const par_value *xv = par_node_input(g, n, 0), *wv = par_node_input(g, n, a4w ? 2 : 1),
                    *bv = par_node_input(g, n, a4w ? 3 : 2);
    const par_value *yv = par_node_output(g, n, 0);
    qnn_tensor *xt = &p->t[n->inputs[0]], *yt = &p->t[n->outputs[0]];
    s16_lin *o = par_qnn_alloc(p, sizeof *o);
    if (!o) return par_msgf(msg, PAR_ERROR, "out of memory");
    o->input_index = xt->input_index;
    o->xs = xt->sbuf;
    if (o->input_index < 0 && !o->xs)
        return par_msgf(msg, PAR_UNSUPPORTED, "linear of a qs16 value qnnpack does not produce");
    o->k = (size_t)xv->dims[xv->rank - 1], o->o = (size_t)wv->dims[0];
    o->kc = (o->k + 1) & ~(size_t)1;
    o->rows = o->k ? (size_t)xv->numel / o->k : 0;
    o->ncb = (o->o + QNN_S16_NR - 1) / QNN_S16_NR;
    o->mtiles = (o->rows + QNN_S16_MR - 1) / QNN_S16_MR;
    o->bb = par_qnn_s16_block_bytes(o->kc);
    o->fn = par_qnn_s16_kernel(p->uk->isa);
    uint8_t *packed = par_qnn_alloc(p, o->bb * o->ncb);
    float *scale = par_qnn_alloc(p, sizeof(float) * o->o);
    o->y = yt->sbuf = par_qnn_alloc(p, sizeof(int16_t) * ((size_t)yt->numel + 1));
    if (o->kc != o->k) o->pad = par_qnn_alloc(p, sizeof(int16_t) * (o->rows * o->kc + 1));
    if (!packed || !scale || !o->y || (o->kc != o->k && !o->pad)) return par_msgf(msg, PAR_ERROR, "out of memory");
    for (size_t j = 0; j < o->o; j++) {
        const float ws = wv->quant_axis >= 0 ? wv->channel_scales[j] : wv->scale;
        scale[j] = par_requant_scale_f32(xv->scale, ws, yv->scale);
        /* the ratio core/requant.h's fp32 scheme accepts (the reference refuses the graph otherwise) */
        par_requant_params rp;
        if (par_requant_params_init(&rp, PAR_REQUANT_FP32, scale[j], 0, -32768, 32767, msg) != PAR_OK)
            return PAR_UNSUPPORTED;
    }
    int16_t *w16 = s16_weights(g, n, a4w, o->o, o->k);
    if (!w16) return par_msgf(msg, PAR_ERROR, "out of memory");
    for (size_t j = 0; j < o->ncb; j++) {
        const size_t n0 = j * QNN_S16_NR, nc = o->o - n0 < QNN_S16_NR ? o->o - n0 : QNN_S16_NR;
        par_qnn_s16_pack(o->k, o->kc, n0, nc, w16, bv ? bv->data : NULL, scale, packed + j * o->bb);
    }
    free(w16);
    o->packed = packed;
    return par_qnn_add_step(p, s16_lin_run, o, msg);
}

/* ---- quantize, dequantize -------------------------------------------------------------------------------------- */
typedef struct s16_cvt {
    int32_t input_index; /* a graph input: the bound buffer */
    const float *xf;
    const int16_t *xs;
    float *yf;
    int16_t *ys;
    size_t n;
    double scale;
} s16_cvt;

static void s16_quantize_run(const void *opv, qnn_plan *p)
{
    const s16_cvt *o = opv;
    const float *x = o->input_index >= 0 ? p->inputs[o->input_index] : o->xf;
    for (size_t i = 0; i < o->n; i++) {
        double t = (double)x[i] / o->scale;
        t = t > -32768.0 ? t : -32768.0; /* NaN too */
        t = t < 32767.0 ? t : 32767.0;
        o->ys[i] = (int16_t)rint(t);
    }
}

static void s16_dequantize_run(const void *opv, qnn_plan *p)
{
    const s16_cvt *o = opv;
    const int16_t *x = o->input_index >= 0 ? p->inputs[o->input_index] : o->xs;
    for (size_t i = 0; i < o->n; i++) o->yf[i] = (float)(o->scale * (double)x[i]);
}

par_status par_qnn_lower_s16(qnn_plan *p, int32_t node, par_msg *msg)
{
    const par_node *n = &p->g->nodes[node];
    if (strcmp(n->op, "linear") == 0 || strcmp(n->op, "linear_16a4w") == 0) return lower_linear(p, n, msg);
    const int quant = strcmp(n->op, "quantize") == 0;
    qnn_tensor *xt = &p->t[n->inputs[0]], *yt = &p->t[n->outputs[0]];
    s16_cvt *o = par_qnn_alloc(p, sizeof *o);
    if (!o) return par_msgf(msg, PAR_ERROR, "out of memory");
    o->input_index = xt->input_index;
    o->xf = xt->fbuf;
    o->xs = xt->sbuf;
    o->n = (size_t)yt->numel;
    o->scale = quant ? p->g->values[n->outputs[0]].scale : p->g->values[n->inputs[0]].scale;
    if (o->input_index < 0 && !(quant ? (const void *)o->xf : (const void *)o->xs))
        return par_msgf(msg, PAR_UNSUPPORTED, "%s of a value qnnpack does not produce", n->op);
    if (quant) o->ys = yt->sbuf = par_qnn_alloc(p, sizeof(int16_t) * (o->n + 1));
    else o->yf = yt->fbuf = par_qnn_alloc(p, sizeof(float) * (o->n + 1));
    if (quant ? !o->ys : !o->yf) return par_msgf(msg, PAR_ERROR, "out of memory");
    return par_qnn_add_step(p, quant ? s16_quantize_run : s16_dequantize_run, o, msg);
}
