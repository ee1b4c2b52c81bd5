/*
 * qnn_8da4w.c - linear_8da4w of the qnnpack backend (docs/quantization.md, "linear_8da4w"; XNNPACK's qd8-f32-qb4w
 * GEMM): the f32 input is quantized per row (token) at run time to int8 with XNNPACK's qd8 rule, the signed int4
 * weights stay packed two per byte, and the kernel set's qb4w micro-kernel (qnn_kernels.h) sums each block exactly
 * in int32 and applies the block scales, the row's scale and the bias in f32.
 *
 * Numerics. The row parameters are core/requant.h's par_requant_qd8_qparams, the function the reference calls, and
 * the integers par_requant_qd8's arithmetic (the f32 product, half to even, + zp, clamped; the rounding by the
 * 1.5 * 2^23 trick, which equals rintf in the product's range), so q is the reference's q bit for bit, ties
 * included; the backend promises that (PAR_PROC_REQUANT_EXACT) and the reference then
 * gives ties no window. The GEMM's integers are exact; the f32 epilogue is budgeted by the reference. Every kernel
 * set computes the same f32 operations in the same order, so the sets agree bit for bit (tested).
 *
 * The weights' declared form (par_int4_form: s4 or u4, a zero point, the nibble order) is read at prepare; the forms
 * whose weights are the signed nibbles [-8, 7] (s4 with zero point 0, u4 with 8: XNNPACK's qc4w) run, as two's
 * complement nibbles low first, and the others are UNSUPPORTED (their weights span 16 values elsewhere, which the
 * kernels' sign-extended nibbles cannot hold). Block scales declared bf16 are f32 values already (exact).
 * Weights are repacked at prepare into the kernels' layout (par_qnn_pack_qb4w: per group of 8 k's and 16 columns,
 * 4 bytes a column, still 4 bits a weight), with each block's weight sum for the zero point. Memory is taken at
 * prepare; run allocates nothing. Column blocks and row tiles are spread over the thread pool. Linears of the same
 * input (a decoder's q, k and v projections; w1 and w3 of its MLP) share one quantization of it: the first one's
 * step quantizes, the others read its integers (the same bits: the same function of the same values).
 *
 * The file's end holds linear_qd8 and matmul_qd8 (int8 activations per row or per tensor by the same code, qs8
 * weights per channel): see its own comment there.
 */
#include <math.h>
#include <stdlib.h>

#include "core/requant.h"
#include "qnn_common.h"

typedef struct q4_op {
    int32_t xval;        /* x's value id */
    int quantize;        /* 0: an earlier linear_8da4w of the same x quantized it into qa, zp, sx (shared) */
    int32_t input_index; /* x is a graph input: read the bound buffer; else xf */
    const float *xf;
    float *y;
    size_t rows, k, kc, o, block, ncb, mtiles, bb;
    qnn_qb4w_fn fn;
    uint8_t *packed; /* ncb blocks of bb bytes */
    uint8_t *qa;     /* [rows][kc]: q + 128 */
    int32_t *zp;     /* [rows]: zero point + 128 */
    float *sx;       /* [rows] */
} q4_op;

par_status par_qnn_check_8da4w(const par_graph_desc *g, const par_node *n, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0), *w = par_node_input(g, n, 1), *s = par_node_input(g, n, 2);
    const par_value *b = par_node_input(g, n, 3), *y = par_node_output(g, n, 0);
    if (!x || !w || !s || !y) return par_msgf(msg, PAR_ERROR, "%s: missing input or output", n->op);
    if (x->dtype != PAR_DTYPE_F32 || y->dtype != PAR_DTYPE_F32)
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: input '%s' and output '%s' must be f32", n->op, x->name, y->name);
    if (w->kind != PAR_VALUE_CONST || w->dtype != PAR_DTYPE_QU8 || w->rank != 2)
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: weight '%s' must be a constant of packed bytes", n->op, w->name);
    if (s->kind != PAR_VALUE_CONST || s->dtype != PAR_DTYPE_F32)
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: scales '%s' must be an f32 constant", n->op, s->name);
    if (b && (b->kind != PAR_VALUE_CONST || b->dtype != PAR_DTYPE_F32))
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: bias '%s' must be an f32 constant", n->op, b->name);
    par_int4 f;
    if (!par_int4_form(n, &f) || !par_int4_signed_range(&f))
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: weights w4 = %s minus w4_zp = %d span [%d, %d]; the qb4w kernels "
                        "multiply signed nibbles in [-8, 7]", n->op, par_attr_str(n, "w4", "s4"), f.zp,
                        f.code_lo - f.zp, f.code_lo + 15 - f.zp);
    const int64_t blk = par_attr_int(n, "block", 32);
    if (blk > 32768) /* 16 * 255 * 8 * block (the VNNI kernel's scaled sums) must fit int32 */
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: block %lld could overflow the int32 block sum", n->op,
                        (long long)blk);
    return PAR_OK;
}

/* One tile: column block j, row tile i. */
static void q4_tile(void *opv, size_t j, size_t i)
{
    const q4_op *o = opv;
    const size_t r0 = i * QNN_QB4W_MR, mr = o->rows - r0 < QNN_QB4W_MR ? o->rows - r0 : QNN_QB4W_MR;
    const size_t n0 = j * QNN_QB4W_NR, nc = o->o - n0 < QNN_QB4W_NR ? o->o - n0 : QNN_QB4W_NR;
    o->fn(mr, nc, o->kc, o->block, o->qa + r0 * o->kc, o->kc, o->zp + r0, o->sx + r0, o->packed + j * o->bb,
          o->y + r0 * o->o + n0, o->o);
}

/* One row's integers + 128: par_requant_qd8's arithmetic (x inv in f32, half to even, + zp, clamped to [-128, 127])
 * with the rounding as qnn_rne_f32: |x inv| <= 255 (1 + 2^-23)^2 here (x lies in [lo, hi] and inv = 255 / (hi - lo),
 * or x = 0 and inv = 1), far below the 2^22 where that trick and rintf part. Branch-free, so the compiler vectorizes
 * it (the file is built with -O3: builtin.mk). */
static void qd8_row(size_t k, const float *x, float inv, float zp, uint8_t *q)
{
    for (size_t i = 0; i < k; i++) {
        float t = ((x[i] * inv + 12582912.0f) - 12582912.0f) + zp;
        t = t < -128.0f ? -128.0f : t;
        t = t > 127.0f ? 127.0f : t;
        q[i] = (uint8_t)((int32_t)t + 128);
    }
}

static void q4_run(const void *opv, qnn_plan *p)
{
    q4_op *o = (q4_op *)opv;
    const float *x = o->input_index >= 0 ? p->inputs[o->input_index] : o->xf;
    for (size_t r = 0; r < o->rows && o->quantize; r++) {
        const float *xr = x + r * o->k;
        uint8_t *q = o->qa + r * o->kc;
        float inv;
        int32_t zp;
        if (!par_requant_qd8_qparams(xr, (int64_t)o->k, &inv, &o->sx[r], &zp)) {
            /* no parameters (a non-finite element): the outputs are NaN, as the reference's "anything" allows */
            memset(q, 128, o->k);
            o->zp[r] = 128;
            o->sx[r] = NAN;
            continue;
        }
        o->zp[r] = zp + 128;
        qd8_row(o->k, xr, inv, (float)zp, q);
    }
    pthreadpool_parallelize_2d(p->pool, q4_tile, o, o->ncb, o->mtiles, 0);
}

par_status par_qnn_lower_8da4w(qnn_plan *p, int32_t node, int variant, par_msg *msg)
{
    (void)variant;
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[node];
    const par_value *wv = par_node_input(g, n, 1), *sv = par_node_input(g, n, 2), *bv = par_node_input(g, n, 3);
    qnn_tensor *xt = &p->t[n->inputs[0]], *yt = &p->t[n->outputs[0]];
    q4_op *o = par_qnn_alloc(p, sizeof *o);
    if (!o) return par_msgf(msg, PAR_ERROR, "out of memory");
    o->input_index = xt->input_index;
    o->xf = xt->fbuf;
    if (o->input_index < 0 && !o->xf)
        return par_msgf(msg, PAR_UNSUPPORTED, "linear_8da4w of an f32 value qnnpack does not produce");
    o->k = (size_t)wv->dims[1] * 2, o->o = (size_t)wv->dims[0];
    o->block = (size_t)par_attr_int(n, "block", 32);
    o->kc = (o->k + 7) & ~(size_t)7;
    o->rows = o->k ? (size_t)xt->numel / o->k : 0;
    o->ncb = (o->o + QNN_QB4W_NR - 1) / QNN_QB4W_NR;
    o->mtiles = (o->rows + QNN_QB4W_MR - 1) / QNN_QB4W_MR;
    o->xval = n->inputs[0];
    o->quantize = 1;
    const q4_op *same = NULL; /* a linear_8da4w of the same x already planned (q, k and v; w1 and w3) */
    for (int32_t s = 0; s < p->n_steps && !same; s++)
        if (p->steps[s].run == q4_run && ((const q4_op *)p->steps[s].op)->xval == o->xval &&
            ((const q4_op *)p->steps[s].op)->k == o->k)
            same = p->steps[s].op;
    /* The SIMD kernels step 8 k's at a time inside a block; other blocks run the scalar kernel. */
    o->fn = o->block % 8 == 0 ? p->uk->qb4w : par_qnn_qb4w_4x16c8__scalar;
    size_t o_wsum, o_scale, o_bias;
    par_qnn_qb4w_offsets(o->kc, o->kc / o->block, &o_wsum, &o_scale, &o_bias, &o->bb);
    o->packed = par_qnn_alloc(p, o->bb * o->ncb);
    if (same) {
        o->quantize = 0;
        o->qa = same->qa, o->zp = same->zp, o->sx = same->sx;
    } else {
        o->qa = par_qnn_alloc(p, o->rows * o->kc + QNN_SLACK);
        o->zp = par_qnn_alloc(p, sizeof(int32_t) * (o->rows + 1));
        o->sx = par_qnn_alloc(p, sizeof(float) * (o->rows + 1));
    }
    o->y = yt->fbuf = par_qnn_alloc(p, sizeof(float) * ((size_t)yt->numel + 1));
    if (!o->packed || !o->qa || !o->zp || !o->sx || !o->y) return par_msgf(msg, PAR_ERROR, "out of memory");
    /* the declared form as the packer's (two's complement, low nibble first): weights in [-8, 7] (checked) */
    const size_t nbytes = o->o * (o->k / 2);
    uint8_t *wb = malloc(nbytes + 1);
    if (!wb) return par_msgf(msg, PAR_ERROR, "out of memory");
    par_int4 f;
    par_int4_form(n, &f);
    const uint8_t *src = wv->data;
    for (size_t i = 0; i < nbytes; i++)
        wb[i] = (uint8_t)((par_int4_of(&f, src[i], 0) & 15) | (par_int4_of(&f, src[i], 1) & 15) << 4);
    for (size_t j = 0; j < o->ncb; j++) {
        const size_t n0 = j * QNN_QB4W_NR, nc = o->o - n0 < QNN_QB4W_NR ? o->o - n0 : QNN_QB4W_NR;
        par_qnn_pack_qb4w(o->k, o->kc, o->block, n0, nc, wb, sv->data, bv ? bv->data : NULL, o->packed + j * o->bb);
    }
    free(wb);
    return par_qnn_add_step(p, q4_run, o, msg);
}

/* ---- linear_qd8 and matmul_qd8 (XNNPACK's qd8-f32-qc8w GEMM and batch matmul): x quantized per row (token) or once
 * per tensor with the same rule and the same integers as linear_8da4w's (par_requant_qd8_qparams, qd8_row), the
 * weights qs8 [O, K] (matmul's [K, N] transposed at prepare) with one f32 scale per output channel;
 * acc = sum (q - zp) w exactly in int32 (K is bounded at load), then y = (float)acc * s_x * s_w[o] + b[o] in f32,
 * left to right. Scalar; rows spread over the thread pool. ---- */
typedef struct qd8_op {
    int32_t input_index; /* x is a graph input: read the bound buffer; else xf */
    const float *xf, *bias;
    float *y;
    size_t rows, k, o, group; /* group: rows per set of parameters (1 per token, rows per tensor) */
    int8_t *w;                /* [o][k] */
    float *ws;                /* [o] */
    uint8_t *qa;              /* [rows][k]: q + 128 */
    int32_t *zp;              /* [rows / group]: zero point + 128 */
    float *sx;                /* [rows / group] */
} qd8_op;

par_status par_qnn_check_qd8(const par_graph_desc *g, const par_node *n, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0), *w = par_node_input(g, n, 1), *y = par_node_output(g, n, 0);
    const par_value *b = n->n_inputs > 2 ? par_node_input(g, n, 2) : NULL;
    if (!x || !w || !y) return par_msgf(msg, PAR_ERROR, "%s: missing input or output", n->op);
    if (x->dtype != PAR_DTYPE_F32 || y->dtype != PAR_DTYPE_F32)
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: input '%s' and output '%s' must be f32", n->op, x->name, y->name);
    if (w->kind != PAR_VALUE_CONST || w->dtype != PAR_DTYPE_QS8 || w->rank != 2)
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: weights '%s' must be a qs8 constant of rank 2", n->op, w->name);
    if (b && (b->kind != PAR_VALUE_CONST || b->dtype != PAR_DTYPE_F32))
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: bias '%s' must be an f32 constant", n->op, b->name);
    return PAR_OK;
}

static void qd8_rows(void *opv, size_t r)
{
    const qd8_op *o = opv;
    const size_t gi = r / o->group;
    const uint8_t *a = o->qa + r * o->k;
    const int32_t z = o->zp[gi];
    const float sx = o->sx[gi];
    for (size_t j = 0; j < o->o; j++) {
        const int8_t *w = o->w + j * o->k;
        int32_t acc = 0;
        for (size_t kk = 0; kk < o->k; kk++) acc += ((int32_t)a[kk] - z) * (int32_t)w[kk];
        const float v = (float)acc * sx * o->ws[j];
        o->y[r * o->o + j] = o->bias ? v + o->bias[j] : v;
    }
}

static void qd8_run(const void *opv, qnn_plan *p)
{
    qd8_op *o = (qd8_op *)opv;
    const float *x = o->input_index >= 0 ? p->inputs[o->input_index] : o->xf;
    const size_t n = o->group * o->k;
    for (size_t gi = 0; o->group && gi < o->rows / o->group; gi++) {
        float inv;
        int32_t zp;
        if (!par_requant_qd8_qparams(x + gi * n, (int64_t)n, &inv, &o->sx[gi], &zp)) {
            /* no parameters (a non-finite element): the outputs are NaN, as the reference's "anything" allows */
            memset(o->qa + gi * n, 128, n);
            o->zp[gi] = 128;
            o->sx[gi] = NAN;
            continue;
        }
        o->zp[gi] = zp + 128;
        qd8_row(n, x + gi * n, inv, (float)zp, o->qa + gi * n);
    }
    pthreadpool_parallelize_1d(p->pool, qd8_rows, o, o->rows, 0);
}

par_status par_qnn_lower_qd8(qnn_plan *p, int32_t node, int variant, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[node];
    const int mm = variant == QNN_V_QD8_MATMUL;
    const par_value *wv = par_node_input(g, n, 1), *bv = mm ? NULL : par_node_input(g, n, 2);
    qnn_tensor *xt = &p->t[n->inputs[0]], *yt = &p->t[n->outputs[0]];
    qd8_op *o = par_qnn_alloc(p, sizeof *o);
    if (!o) return par_msgf(msg, PAR_ERROR, "out of memory");
    o->input_index = xt->input_index;
    o->xf = xt->fbuf;
    if (o->input_index < 0 && !o->xf)
        return par_msgf(msg, PAR_UNSUPPORTED, "%s of an f32 value qnnpack does not produce", n->op);
    o->k = (size_t)wv->dims[mm ? 0 : 1], o->o = (size_t)wv->dims[mm ? 1 : 0];
    o->rows = o->k ? (size_t)xt->numel / o->k : 0;
    o->group = strcmp(par_attr_str(n, "per", "token"), "tensor") == 0 ? o->rows : 1;
    o->bias = bv ? bv->data : NULL;
    const size_t ng = o->group ? o->rows / o->group : 0;
    o->w = par_qnn_alloc(p, o->o * o->k + 1);
    o->ws = par_qnn_alloc(p, sizeof(float) * (o->o + 1));
    o->qa = par_qnn_alloc(p, o->rows * o->k + 1);
    o->zp = par_qnn_alloc(p, sizeof(int32_t) * (ng + 1));
    o->sx = par_qnn_alloc(p, sizeof(float) * (ng + 1));
    o->y = yt->fbuf = par_qnn_alloc(p, sizeof(float) * ((size_t)yt->numel + 1));
    if (!o->w || !o->ws || !o->qa || !o->zp || !o->sx || !o->y) return par_msgf(msg, PAR_ERROR, "out of memory");
    const int8_t *src = wv->data;
    for (size_t j = 0; j < o->o; j++) {
        o->ws[j] = wv->quant_axis >= 0 ? wv->channel_scales[j] : wv->scale;
        for (size_t kk = 0; kk < o->k; kk++) o->w[j * o->k + kk] = mm ? src[kk * o->o + j] : src[j * o->k + kk];
    }
    return par_qnn_add_step(p, qd8_run, o, msg);
}
