/*
 * int4.c - a test plugin of tests/report/test_int4.sh: the example backend (backends/example/, linked in whole, its
 * entry renamed by plugins.mk; ex_wrap.h) plus a plain C linear_8da4w (docs/quantization.md: XNNPACK's qd8
 * activations per row, signed int4 weights packed low nibble first, f32 scales per column and block) with one
 * planted bug, chosen by the knob bug=:
 *   nibble   the two nibbles of a byte swapped: weight 2j read from bits 4-7, weight 2j + 1 from bits 0-3;
 *   block    the scale of block b + 1 (the first block's for the last) applied to block b;
 *   sign     negative nibbles not sign-extended: 8..15 taken as 8..15, not -8..-1;
 *   tieaway  the activations' exact ties rounded half away from zero (roundf), not half to even;
 *   zp       the zero point of unsigned nibbles (w4 = u4, w4_zp) ignored: the code taken as the weight;
 *   order    the declared nibble order ignored: weight 2j always read from bits 0-3 (as if nibbles = lo);
 *   off      no bug (the default).
 * The weights are read as the node's attributes declare (docs/quantization.md, "4-bit weights"): w4 = s4 (two's
 * complement) or u4 (unsigned), minus w4_zp; nibbles = lo (weight 2j in bits 0-3) or hi (in bits 4-7).
 * and a plain C 16a8w linear (qs16 x and output, zero point 0; symmetric qs8 weights per tensor or per channel; an
 * i32 bias; the fp32 requantization to [-32768, 32767]: docs/quantization.md, "16a8w") with its own bugs:
 *   tie16    the requantization's exact ties rounded half away from zero (roundf), not half to even;
 *   wrap16   the requantized value not clamped to int16 but wrapped (its low 16 bits stored);
 *   chan16   per-channel weights all requantized with channel 0's scale.
 * and a plain C linear_qd8 / matmul_qd8 (docs/quantization.md, "Dynamic int8 activations (qd8)": the same qd8
 * parameters per row or per tensor, symmetric qs8 weights per channel or per tensor, f32 out) with its own bugs:
 *   qd8tie   the activations' exact ties rounded half away from zero (roundf), not half to even;
 *   qd8per   the declared granularity swapped: per = token quantized per tensor, per = tensor per row;
 *   qd8zp    the activations' zero point not subtracted: acc = sum q w;
 *   qd8trans matmul_qd8's b [K, N] read as if it were [N, K] (its bytes in linear's order).
 * quantize to qs16 and dequantize from it (the boundary of a 16a8w graph, which the fuzzer's quantized graphs have)
 * are plain float code here. The knob strict=1 declares PAR_PROC_REQUANT_EXACT (the scheme's integers exactly), as qnnpack does: the reference
 * then gives the activations' ties no window, which is how the tie rule is measured (test_int4.sh). Every other op
 * and knob is the example's. Like every plugin it sees only the public header, so the qd8 parameters are written
 * out here again from docs/quantization.md.
 */
#include "ex_wrap.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { BUG_OFF, BUG_NIBBLE, BUG_BLOCK, BUG_SIGN, BUG_TIEAWAY, BUG_TIE16, BUG_WRAP16, BUG_CHAN16, BUG_ZP, BUG_ORDER,
       BUG_QD8TIE, BUG_QD8PER, BUG_QD8ZP, BUG_QD8TRANS, N_BUGS };
static const char *const BUG_NAMES[N_BUGS] = {"off",    "nibble", "block",  "sign",  "tieaway", "tie16",  "wrap16",
                                              "chan16", "zp",     "order",  "qd8tie", "qd8per", "qd8zp", "qd8trans"};

typedef struct i4_ctx {
    void *inner; /* the example backend's context */
    int bug;     /* BUG_* */
    int strict;  /* knob strict=0|1 */
} i4_ctx;

/* XNNPACK's qd8 parameters of one row, in f32 (docs/quantization.md, "linear_8da4w"); 0 when it has none. */
static int qd8_params(const float *x, int64_t k, float *inv, int32_t *zp)
{
    float lo = 0.0f, hi = 0.0f;
    for (int64_t i = 0; i < k; i++) {
        if (!isfinite(x[i])) return 0;
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    const float s = lo == hi ? 1.0f : 255.0f / (hi - lo);
    if (!isfinite(s) || s == 0.0f || !isfinite(1.0f / s)) return 0;
    const float lo_s = lo * s, hi_s = hi * s;
    float z = (-128.0f + lo_s) + (127.0f + hi_s) > 0 ? -128.0f - lo_s : 127.0f - hi_s;
    z = z < -128.0f ? -128.0f : z > 127.0f ? 127.0f : z;
    *inv = s;
    *zp = (int32_t)rintf(z);
    return 1;
}

static void i4_linear(const ex_plan *p, const par_node *n, int bug)
{
    const par_value *xv = ex_in_value(p, n, 0), *wv = ex_in_value(p, n, 1);
    const float *x = ex_in(p, n, 0), *sw = ex_in(p, n, 2), *bias = ex_in(p, n, 3);
    const uint8_t *w = ex_in_raw(p, n, 1);
    float *y = ex_out(p, n);
    const int64_t k = xv->dims[xv->rank - 1], o = wv->dims[0], blk = par_attr_int(n, "block", 32), nb = k / blk;
    const int64_t rows = xv->numel / k;
    const int u4 = strcmp(par_attr_str(n, "w4", "s4"), "u4") == 0, hi_first = strcmp(par_attr_str(n, "nibbles", "lo"), "hi") == 0;
    const int wzp = bug == BUG_ZP ? 0 : (int)par_attr_int(n, "w4_zp", 0);
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * k;
        float inv;
        int32_t zp;
        if (!qd8_params(xr, k, &inv, &zp)) {
            for (int64_t j = 0; j < o; j++) y[r * o + j] = NAN;
            continue;
        }
        const float sx = 1.0f / inv;
        for (int64_t j = 0; j < o; j++) {
            const uint8_t *wr = w + j * (k / 2);
            float f = 0.0f;
            for (int64_t b = 0; b < nb; b++) {
                int32_t acc = 0;
                for (int64_t i = b * blk; i < (b + 1) * blk; i++) {
                    const float t = xr[i] * inv, rt = bug == BUG_TIEAWAY ? roundf(t) : rintf(t);
                    float q = rt + (float)zp;
                    q = q < -128.0f ? -128.0f : q > 127.0f ? 127.0f : q;
                    const int hi = ((i % 2 == 1) != (bug == BUG_NIBBLE)) != (hi_first && bug != BUG_ORDER);
                    const int nib = hi ? wr[i / 2] >> 4 : wr[i / 2] & 15;
                    const int wk = (u4 || bug == BUG_SIGN ? nib : nib >= 8 ? nib - 16 : nib) - wzp;
                    acc += ((int32_t)q - zp) * wk;
                }
                const int64_t sb = bug == BUG_BLOCK ? (b + 1) % nb : b;
                f += (float)acc * sw[j * nb + sb];
            }
            y[r * o + j] = f * sx + (bias ? bias[j] : 0.0f);
        }
    }
}

/* The 16a8w linear: acc = bias + sum x w exactly (int64 here), f = (float)acc * (s_x s_w / s_out, in float left to
 * right), clamped to [-32768, 32767] in float and rounded half to even. */
static void s16_linear(const ex_plan *p, const par_node *n, int bug)
{
    const par_value *xv = ex_in_value(p, n, 0), *wv = ex_in_value(p, n, 1), *yv = ex_out_value(p, n);
    const int16_t *x = ex_in_raw(p, n, 0);
    const int8_t *w = ex_in_raw(p, n, 1);
    const int32_t *bias = ex_in_raw(p, n, 2);
    int16_t *y = (int16_t *)ex_out(p, n);
    const int64_t k = xv->dims[xv->rank - 1], o = wv->dims[0], rows = xv->numel / k;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < o; j++) {
            int64_t acc = bias ? bias[j] : 0;
            for (int64_t i = 0; i < k; i++) acc += (int64_t)x[r * k + i] * w[j * k + i];
            const int64_t ch = bug == BUG_CHAN16 ? 0 : j;
            const float sw = wv->quant_axis >= 0 ? wv->channel_scales[ch] : wv->scale;
            const float t = xv->scale * sw, ratio = t / yv->scale;
            float f = (float)acc * ratio;
            if (bug != BUG_WRAP16) {
                f = f < -32768.0f ? -32768.0f : f;
                f = f > 32767.0f ? 32767.0f : f;
            }
            const float q = bug == BUG_TIE16 ? roundf(f) : rintf(f);
            y[r * o + j] = (int16_t)(uint16_t)(uint32_t)(int64_t)q;
        }
}

/* linear_qd8 (w [O, K], bias) and matmul_qd8 (b [K, N]): x quantized per row or per tensor with the qd8 parameters,
 * acc = sum (q - zp) w in int32, y = (float)acc * s_x * s_w[o] + bias in f32. */
static void qd8_linear(const ex_plan *p, const par_node *n, int bug)
{
    const int mm = strcmp(n->op, "matmul_qd8") == 0;
    const par_value *xv = ex_in_value(p, n, 0), *wv = ex_in_value(p, n, 1);
    const float *x = ex_in(p, n, 0), *bias = mm ? NULL : ex_in(p, n, 2);
    const int8_t *w = ex_in_raw(p, n, 1);
    float *y = ex_out(p, n);
    const int64_t k = xv->dims[xv->rank - 1], o = mm ? wv->dims[1] : wv->dims[0], rows = xv->numel / k;
    const int per_tensor = (strcmp(par_attr_str(n, "per", "token"), "tensor") == 0) != (bug == BUG_QD8PER);
    const int64_t group = per_tensor ? rows : 1;
    for (int64_t r0 = 0; r0 < rows; r0 += group) {
        float inv;
        int32_t zp;
        if (!qd8_params(x + r0 * k, group * k, &inv, &zp)) {
            for (int64_t i = r0 * o; i < (r0 + group) * o; i++) y[i] = NAN;
            continue;
        }
        const float sx = 1.0f / inv;
        for (int64_t r = r0; r < r0 + group; r++)
            for (int64_t j = 0; j < o; j++) {
                int32_t acc = 0;
                for (int64_t i = 0; i < k; i++) {
                    const float t = x[r * k + i] * inv, rt = bug == BUG_QD8TIE ? roundf(t) : rintf(t);
                    float q = rt + (float)zp;
                    q = q < -128.0f ? -128.0f : q > 127.0f ? 127.0f : q;
                    const int wk = !mm || bug == BUG_QD8TRANS ? w[j * k + i] : w[i * o + j];
                    acc += ((int32_t)q - (bug == BUG_QD8ZP ? 0 : zp)) * wk;
                }
                const float sw = wv->quant_axis >= 0 ? wv->channel_scales[j] : wv->scale;
                const float v = (float)acc * sx * sw;
                y[r * o + j] = bias ? v + bias[j] : v;
            }
    }
}

/* quantize f32 -> qs16 and dequantize qs16 -> f32 (the boundary of a 16a8w graph, which the example takes only for
 * qu8 / qs8): q = clamp(round_half_even(x / scale) + zero_point, -32768, 32767), x = scale (q - zero_point). */
static void q16_quantize(const ex_plan *p, const par_node *n)
{
    const par_value *yv = ex_out_value(p, n);
    const float *x = ex_in(p, n, 0);
    int16_t *y = (int16_t *)ex_out(p, n);
    for (int64_t i = 0; i < yv->numel; i++) {
        float q = nearbyintf(x[i] / yv->scale) + (float)yv->zero_point;
        q = q < -32768.0f ? -32768.0f : q > 32767.0f ? 32767.0f : q;
        y[i] = (int16_t)q;
    }
}

static void q16_dequantize(const ex_plan *p, const par_node *n)
{
    const par_value *xv = ex_in_value(p, n, 0);
    const int16_t *x = ex_in_raw(p, n, 0);
    float *y = ex_out(p, n);
    for (int64_t i = 0; i < xv->numel; i++) y[i] = xv->scale * (float)((int32_t)x[i] - xv->zero_point);
}

static void i4_off(const ex_plan *p, const par_node *n) { i4_linear(p, n, BUG_OFF); }
static void i4_nibble(const ex_plan *p, const par_node *n) { i4_linear(p, n, BUG_NIBBLE); }
static void i4_block(const ex_plan *p, const par_node *n) { i4_linear(p, n, BUG_BLOCK); }
static void i4_sign(const ex_plan *p, const par_node *n) { i4_linear(p, n, BUG_SIGN); }
static void i4_tieaway(const ex_plan *p, const par_node *n) { i4_linear(p, n, BUG_TIEAWAY); }
static void s16_off(const ex_plan *p, const par_node *n) { s16_linear(p, n, BUG_OFF); }
static void s16_tie(const ex_plan *p, const par_node *n) { s16_linear(p, n, BUG_TIE16); }
static void s16_wrap(const ex_plan *p, const par_node *n) { s16_linear(p, n, BUG_WRAP16); }
static void s16_chan(const ex_plan *p, const par_node *n) { s16_linear(p, n, BUG_CHAN16); }
/* Per bug: the linear_8da4w kernel and the 16a8w one (each bug is planted in one of them). */
static void i4_zp(const ex_plan *p, const par_node *n) { i4_linear(p, n, BUG_ZP); }
static void i4_order(const ex_plan *p, const par_node *n) { i4_linear(p, n, BUG_ORDER); }
static void qd8_off(const ex_plan *p, const par_node *n) { qd8_linear(p, n, BUG_OFF); }
static void qd8_tie(const ex_plan *p, const par_node *n) { qd8_linear(p, n, BUG_QD8TIE); }
static void qd8_per(const ex_plan *p, const par_node *n) { qd8_linear(p, n, BUG_QD8PER); }
static void qd8_zp(const ex_plan *p, const par_node *n) { qd8_linear(p, n, BUG_QD8ZP); }
static void qd8_trans(const ex_plan *p, const par_node *n) { qd8_linear(p, n, BUG_QD8TRANS); }
static const ex_kernel_fn KERNELS[N_BUGS] = {i4_off, i4_nibble, i4_block, i4_sign, i4_tieaway, i4_off, i4_off,
                                             i4_off, i4_zp,     i4_order, i4_off,  i4_off,      i4_off, i4_off};
static const ex_kernel_fn KERNELS16[N_BUGS] = {s16_off, s16_off,  s16_off, s16_off, s16_off, s16_tie, s16_wrap,
                                               s16_chan, s16_off, s16_off, s16_off, s16_off, s16_off, s16_off};
static const ex_kernel_fn KERNELS_QD8[N_BUGS] = {qd8_off, qd8_off, qd8_off, qd8_off, qd8_off, qd8_off, qd8_off,
                                                 qd8_off, qd8_off, qd8_off, qd8_tie, qd8_per, qd8_zp,  qd8_trans};

static int is_q4(const par_node *n)
{
    return strcmp(n->op, "linear_8da4w") == 0;
}

/* 1: quantize to qs16, 2: dequantize from qs16, 0: neither. */
static int is_q16io(const par_graph_desc *g, const par_node *n)
{
    const par_value *x = par_node_input(g, n, 0), *y = par_node_output(g, n, 0);
    if (!x || !y) return 0;
    if (strcmp(n->op, "quantize") == 0 && x->dtype == PAR_DTYPE_F32 && y->dtype == PAR_DTYPE_QS16) return 1;
    if (strcmp(n->op, "dequantize") == 0 && x->dtype == PAR_DTYPE_QS16 && y->dtype == PAR_DTYPE_F32) return 2;
    return 0;
}

/* 1: linear_qd8, 2: matmul_qd8, 0: neither. */
static int is_qd8(const par_node *n)
{
    return strcmp(n->op, "linear_qd8") == 0 ? 1 : strcmp(n->op, "matmul_qd8") == 0 ? 2 : 0;
}

/* A 16a8w linear: qs16 x and output. */
static int is_s16(const par_graph_desc *g, const par_node *n)
{
    const par_value *x = par_node_input(g, n, 0), *y = par_node_output(g, n, 0);
    return strcmp(n->op, "linear") == 0 && x && y && x->dtype == PAR_DTYPE_QS16 && y->dtype == PAR_DTYPE_QS16;
}

static par_status i4_init(void **ctx, par_msg *msg)
{
    return exw_init(sizeof(i4_ctx), ctx, msg);
}

static par_status i4_set_knob(void *ctx, const char *key, const char *value, par_msg *msg)
{
    i4_ctx *c = ctx;
    if (strcmp(key, "bug") == 0) {
        for (int i = 0; i < N_BUGS; i++)
            if (strcmp(value, BUG_NAMES[i]) == 0) {
                c->bug = i;
                return PAR_OK;
            }
        return par_msgf(msg, PAR_ERROR, "knob 'bug': '%s' is not off, nibble, block, sign, tieaway, tie16, wrap16, "
                        "chan16, zp, order, qd8tie, qd8per, qd8zp or qd8trans", value);
    }
    if (strcmp(key, "strict") == 0) return par_knob_bool(key, value, &c->strict, msg);
    return exw_knob(ctx, key, value, msg);
}

static size_t i4_describe(void *ctx, char *buf, size_t len)
{
    const i4_ctx *c = ctx;
    int need = snprintf(buf, len, "bug=%s;strict=%d", BUG_NAMES[c->bug], c->strict);
    return need < 0 ? 0 : (size_t)need;
}

static int i4_requant_exact(void *ctx)
{
    return ((const i4_ctx *)ctx)->strict;
}

static void *i4_get_proc(void *ctx, const char *name)
{
    if (strcmp(name, PAR_PROC_SET_KNOB) == 0) return (void *)(par_set_knob_fn)i4_set_knob;
    if (strcmp(name, PAR_PROC_DESCRIBE) == 0) return (void *)(par_describe_fn)i4_describe;
    if (strcmp(name, PAR_PROC_REQUANT_EXACT) == 0) return (void *)(par_requant_exact_fn)i4_requant_exact;
    (void)ctx;
    return NULL;
}

static par_status i4_supports(void *ctx, const par_graph_desc *g, int32_t node, par_msg *msg)
{
    if (node >= 0 && node < g->n_nodes && is_q4(&g->nodes[node])) {
        const par_node *n = &g->nodes[node];
        const par_value *x = par_node_input(g, n, 0), *w = par_node_input(g, n, 1), *s = par_node_input(g, n, 2);
        const par_value *b = par_node_input(g, n, 3);
        if (!x || !w || !s || x->dtype != PAR_DTYPE_F32 || w->dtype != PAR_DTYPE_QU8 || s->dtype != PAR_DTYPE_F32 ||
            (b && b->dtype != PAR_DTYPE_F32))
            return par_msgf(msg, PAR_UNSUPPORTED, "linear_8da4w: f32 x, scales and bias and qu8 packed weights only");
        return PAR_OK;
    }
    if (node >= 0 && node < g->n_nodes && is_q16io(g, &g->nodes[node])) {
        const par_value *v = is_q16io(g, &g->nodes[node]) == 1 ? par_node_output(g, &g->nodes[node], 0)
                                                                : par_node_input(g, &g->nodes[node], 0);
        if (v->quant_axis >= 0) return par_msgf(msg, PAR_UNSUPPORTED, "qs16 per channel");
        return PAR_OK;
    }
    if (node >= 0 && node < g->n_nodes && is_qd8(&g->nodes[node])) {
        const par_node *n = &g->nodes[node];
        const par_value *x = par_node_input(g, n, 0), *w = par_node_input(g, n, 1), *b = par_node_input(g, n, 2);
        if (!x || !w || x->dtype != PAR_DTYPE_F32 || w->dtype != PAR_DTYPE_QS8 || (b && b->dtype != PAR_DTYPE_F32))
            return par_msgf(msg, PAR_UNSUPPORTED, "%s: f32 x and bias and qs8 weights only", n->op);
        return PAR_OK;
    }
    if (node >= 0 && node < g->n_nodes && is_s16(g, &g->nodes[node])) {
        const par_node *n = &g->nodes[node];
        const par_value *w = par_node_input(g, n, 1), *b = par_node_input(g, n, 2);
        if (!w || w->dtype != PAR_DTYPE_QS8 || w->rank != 2 || (w->quant_axis < 0 && w->zero_point) ||
            (w->quant_axis >= 0 && w->quant_axis != 0) || (b && b->dtype != PAR_DTYPE_I32))
            return par_msgf(msg, PAR_UNSUPPORTED, "16a8w linear: symmetric qs8 weights and an i32 bias only");
        return PAR_OK;
    }
    return exw_supports(ctx, g, node, msg);
}

/* The example plans the graph with every linear_8da4w and linear_qd8 node seen as a linear, matmul_qd8 as a matmul
 * (their buffers are the same: one f32 output), then those nodes get this file's kernel and the plan the real graph
 * back. */
static par_status i4_prepare(void *ctx, const par_graph_desc *g, void **prepared, par_msg *msg)
{
    i4_ctx *c = ctx;
    par_node *nodes = malloc(sizeof *nodes * (size_t)(g->n_nodes > 0 ? g->n_nodes : 1));
    if (!nodes) return par_msgf(msg, PAR_ERROR, "prepare: out of memory");
    memcpy(nodes, g->nodes, sizeof *nodes * (size_t)g->n_nodes);
    for (int32_t k = 0; k < g->n_nodes; k++)
        if (is_q4(&nodes[k]) || is_qd8(&nodes[k]) == 1) nodes[k].op = "linear";
        else if (is_qd8(&nodes[k]) == 2) nodes[k].op = "matmul";
    par_graph_desc seen = *g;
    seen.nodes = nodes;
    par_status st = inner_table->prepare(c->inner, &seen, prepared, msg);
    free(nodes);
    if (st != PAR_OK) return st;
    ex_plan *p = *prepared;
    p->g = g;
    for (int32_t k = 0; k < g->n_nodes; k++) {
        if (is_q4(&g->nodes[k])) p->kernels[k] = KERNELS[c->bug];
        if (is_s16(g, &g->nodes[k])) p->kernels[k] = KERNELS16[c->bug];
        if (is_qd8(&g->nodes[k])) p->kernels[k] = KERNELS_QD8[c->bug];
        if (is_q16io(g, &g->nodes[k])) p->kernels[k] = is_q16io(g, &g->nodes[k]) == 1 ? q16_quantize : q16_dequantize;
    }
    return PAR_OK;
}

#if defined(__GNUC__)
__attribute__((visibility("default")))
#endif
const par_backend *parity_backend_entry(uint32_t harness_api_version)
{
    return exw_entry(harness_api_version, "int4",
                     "the example backend with a linear_8da4w, a 16a8w linear and linear_qd8 / matmul_qd8 carrying one "
                     "planted bug (a test)", i4_init,
                     i4_supports, i4_prepare, i4_get_proc);
}
