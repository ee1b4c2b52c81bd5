/*
 * qnn_conv.c - conv2d (dense, grouped, depthwise), conv_transpose2d (as a gather: an indirection buffer whose taps
 * point at the input pixel a tap reads, or at the zero-point row, as QNNPACK's deconvolution) and linear of the
 * qnnpack backend: weight packing at prepare with the zero-point corrections folded into the bias, the indirection
 * buffer, the fusion of a following clamp-like activation into the requantization, and the run-time driver over
 * row tiles and column blocks (pthreadpool). Where the kernel set has a panel path (AVX2: qnn_kernels.h, gemm16),
 * a row tile's taps are gathered and widened once on the stack and every column block runs on them; the weights are
 * then packed as one tap of ks * cg channels.
 *
 * Numerics (qnn_kernels.h): acc = bias' + sum_k xu_k ws_k (+ rowcorr) in int32, exact; then fp32 requantization
 * with scale = x_scale * w_scale[o] / y_scale computed in float as XNNPACK does (par_requant_scale_f32). It must
 * not read a graph value other than through the plan's buffers, nor allocate at run time.
 */
#include <math.h>
#include <stdlib.h>

#include "qnn_common.h"
#include "core/requant.h"

typedef struct conv_op {
    const qnn_ukernels *uk;
    size_t m, mtiles, ks, kc, kcp, groups, og, cg, nblocks, c_in, c_out, mr;
    const uint8_t **ind;  /* [mtiles][ks][MR] (igemm) or [m][ks] (depthwise) */
    const uint8_t *zero;  /* c_in + slack bytes of the input zero point */
    uint8_t *packed;      /* [groups][nblocks] blocks (igemm) or the depthwise weights */
    size_t block_bytes;
    float *scale;         /* [groups][nblocks * NR] (igemm) or [par_qnn_dw_channels(c)] (depthwise, slot order) */
    int32_t *rowcorr;     /* [groups][mtiles * MR] when the weight zero point is not 0, else NULL */
    int32_t wz;
    uint8_t *y;
    qnn_rq rq;
    int depthwise;
    int panel;            /* the set's gemm16 on a per-tile int16 panel of kpanel = round_up(ks * cg, 4) */
    size_t kpanel;
} conv_op;

/* ---------------------------------------------------------------------------------------------------------------
 * Checks (supports)
 * ------------------------------------------------------------------------------------------------------------- */
static int is_q(par_dtype t)
{
    return t == PAR_DTYPE_QU8 || t == PAR_DTYPE_QS8;
}

par_status par_qnn_check_conv(const par_graph_desc *g, const par_node *n, int variant, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0), *w = par_node_input(g, n, 1), *b = par_node_input(g, n, 2);
    const par_value *y = par_node_output(g, n, 0);
    if (!x || !w || !y) return par_msgf(msg, PAR_ERROR, "%s: missing input or output", n->op);
    if (!is_q(x->dtype) || !is_q(y->dtype))
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: input '%s' is %s and output '%s' is %s; qnnpack runs quantized "
                        "(qu8/qs8) graphs only", n->op, x->name, par_dtype_name(x->dtype), y->name,
                        par_dtype_name(y->dtype));
    if (x->quant_axis >= 0 || y->quant_axis >= 0)
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: per-channel quantized activations are not supported", n->op);
    if (!is_q(w->dtype) || w->kind != PAR_VALUE_CONST)
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: weights '%s' must be a qu8/qs8 constant (they are %s%s)", n->op,
                        w->name, par_dtype_name(w->dtype), w->kind == PAR_VALUE_CONST ? "" : ", not constant");
    /* per-channel scales along the output channels: axis 0 of conv2d / linear, axis 1 of conv_transpose2d's
     * [C, O/g, kh, kw] (with one group, where it is the output channel) */
    const int transposed = variant == QNN_V_CONV_T;
    if (w->quant_axis >= 0 &&
        (w->quant_axis != (transposed ? 1 : 0) || !w->channel_scales ||
         (transposed && par_attr_int(n, "groups", 1) != 1)))
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: weights '%s' quantized per channel along axis %d; only axis %d "
                        "(output channels%s) is supported", n->op, w->name, (int)w->quant_axis, transposed ? 1 : 0,
                        transposed ? ", one group" : "");
    if (b && (b->dtype != PAR_DTYPE_I32 || b->kind != PAR_VALUE_CONST))
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: bias '%s' must be an i32 constant (it is %s)", n->op, b->name,
                        par_dtype_name(b->dtype));
    if (variant != QNN_V_LINEAR) {
        if (x->rank != 4) return par_msgf(msg, PAR_ERROR, "%s: input rank %d, expected 4", n->op, (int)x->rank);
        int64_t kk = (transposed ? w->dims[0] / par_attr_int(n, "groups", 1) : w->dims[1]) * w->dims[2] * w->dims[3];
        if (kk > 60000)
            return par_msgf(msg, PAR_UNSUPPORTED, "%s: reduction length %lld could overflow the int32 "
                            "accumulator", n->op, (long long)kk);
    } else if (x->dims[x->rank - 1] > 60000) {
        return par_msgf(msg, PAR_UNSUPPORTED, "linear: K = %lld could overflow the int32 accumulator",
                        (long long)x->dims[x->rank - 1]);
    }
    return PAR_OK;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Weights
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct wsrc {
    const par_value *w;
    size_t cg, kh_kw, og, g;
    int shift;      /* qu8 weights: -128 */
    int transposed; /* conv_transpose2d: weights [C, O/g, kh, kw] */
} wsrc;

/* Weight of output column n (within the group), tap t, channel k (within the group), as int8 (s8 domain). */
static int32_t wget(const void *ctxv, size_t n, size_t t, size_t k)
{
    const wsrc *s = ctxv;
    size_t o = s->g * s->og + n;
    size_t idx = s->transposed ? ((s->g * s->cg + k) * s->og + n) * s->kh_kw + t : (o * s->cg + k) * s->kh_kw + t;
    int32_t v = s->w->dtype == PAR_DTYPE_QS8 ? ((const int8_t *)s->w->data)[idx] : ((const uint8_t *)s->w->data)[idx];
    return v + s->shift;
}

/* The same on the panel's flat k = t * cg + k (one tap of ks * cg channels). */
static int32_t wget_flat(const void *ctxv, size_t n, size_t t, size_t k)
{
    (void)t;
    const wsrc *s = ctxv;
    return wget(ctxv, n, k / s->cg, k % s->cg);
}

/* Output channel o's weight scale (per-channel scales are indexed by output channel on either axis). */
static float w_scale(const par_value *w, size_t o)
{
    return w->quant_axis >= 0 ? w->channel_scales[o] : w->scale;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Fusion of a following activation: relu / relu6 / hardtanh / clamp that is the only reader of the conv output
 * (which is not a graph output). Its table (the reference's integers) must equal, for every input byte u,
 *     clamp(zp2 + rne((float)(u - zp1) * r2), lut[0], lut[255])
 * with r2 the fp32 ratio s1 / s2 of the movement requantization (1 and the identity when the quantizations agree):
 * then the activation is the requantization's second stage and clamp (qnn_rq), bit for bit. Returns the node.
 * ------------------------------------------------------------------------------------------------------------- */
static int32_t fuse_target(qnn_plan *p, int32_t node, qnn_rq *rq)
{
    const par_graph_desc *g = p->g;
    int32_t v = g->nodes[node].outputs[0], user = -1;
    for (int32_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == v) return -1;
    for (int32_t i = node + 1; i < g->n_nodes; i++)
        for (int32_t k = 0; k < g->nodes[i].n_inputs; k++)
            if (g->nodes[i].inputs[k] == v) {
                if (user >= 0 && user != i) return -1;
                user = i;
            }
    if (user < 0 || g->nodes[user].n_inputs != 1) return -1;
    const par_node *u = &g->nodes[user];
    const int uv = p->variant[user]; /* the clamp family fuses */
    if (uv != QNN_V_RELU && uv != QNN_V_CLAMP) return -1;
    const qnn_tensor *x = &p->t[v], *y = &p->t[u->outputs[0]];
    uint8_t lut[256];
    if (!y->quant || !par_qnn_unary_lut(u, uv, x, y, lut)) return -1;
    int two = !(x->scale == y->scale && x->zp == y->zp);
    float r2 = 1.0f;
    if (two) {
        par_requant_params rp;
        par_msg m;
        if (par_requant_params_for(&rp, PAR_REQUANT_FP32, (float)x->scale, 1.0f, (float)y->scale, 0, -255, 255, &m) !=
            PAR_OK)
            return -1;
        r2 = rp.scale;
    }
    int32_t first[256];
    for (int q = 0; q < 256; q++) {
        float f = (float)(q - x->zp) * r2;
        first[q] = (int32_t)((f + 12582912.0f) - 12582912.0f) + y->zp;
        int32_t e = first[q] < lut[0] ? lut[0] : first[q] > lut[255] ? lut[255] : first[q];
        if (lut[q] != e) return -1;
    }
    /* qnn_rq's contract (the first stage's clamp implied by the second's); the table check above implies it */
    if (lut[0] != lut[255] && (lut[0] < first[0] || lut[255] > first[255])) return -1;
    *rq = (qnn_rq){(float)(lut[0] - y->zp), (float)(lut[255] - y->zp), y->zp, two, (float)-x->zp,
                   (float)(255 - x->zp), r2, 0};
    return user;
}

/* qnn_rq.bounded: every scale (times the second stage's ratio when above 1) at most 1/4, so that |acc| < 2^31
 * gives a requantized value below 2^30 in magnitude, also after the first stage's rounding. Unused scale slots
 * are 0. */
static int32_t bounded(const float *scale, size_t n, const qnn_rq *rq)
{
    float r = rq->two && rq->r2 > 1.0f ? rq->r2 : 1.0f;
    for (size_t i = 0; i < n; i++)
        if (!(scale[i] * r <= 0.25f)) return 0;
    return 1;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Run
 * ------------------------------------------------------------------------------------------------------------- */
static void gemm_tile(void *opv, size_t gb, size_t mt)
{
    const conv_op *o = opv;
    const qnn_ukernels *uk = o->uk;
    size_t g = o->groups > 1 ? gb / o->nblocks : 0, b = o->groups > 1 ? gb % o->nblocks : gb; /* no division */
    size_t mr = uk->mr, nr = uk->nr;
    size_t m0 = mt * mr, rows = o->m - m0 < mr ? o->m - m0 : mr;
    size_t n0 = b * nr, cols = o->og - n0 < nr ? o->og - n0 : nr;
    uk->igemm(rows, cols, o->kcp, o->ks, o->ind + mt * o->ks * mr, g * o->cg, o->zero,
              o->packed + gb * o->block_bytes, o->rowcorr ? o->rowcorr + g * o->mtiles * mr + m0 : NULL,
              o->y + m0 * o->c_out + g * o->og + n0, o->c_out, o->scale + gb * nr, &o->rq);
}

/* The panel path: one row tile's taps gathered and widened once (on the stack), then every column block of every
 * group on it. */
static void panel_tile(void *opv, size_t mt)
{
    const conv_op *o = opv;
    const qnn_ukernels *uk = o->uk;
    const size_t mr = uk->mr, nr = uk->nr, stride = (o->kpanel + 16 + 15) & ~(size_t)15;
    _Alignas(32) int16_t panel[4 * QNN_PANEL_K];
    size_t m0 = mt * mr, rows = o->m - m0 < mr ? o->m - m0 : mr;
    for (size_t g = 0; g < o->groups; g++) {
        uk->pack_a(o->ks, o->cg, o->ind + mt * o->ks * mr, g * o->cg, o->zero, panel, stride);
        size_t gb = g * o->nblocks;
        uk->gemm16(rows, o->og, o->kpanel, panel, stride, o->packed + gb * o->block_bytes, o->block_bytes,
                   o->rowcorr ? o->rowcorr + g * o->mtiles * mr + m0 : NULL, o->y + m0 * o->c_out + g * o->og,
                   o->c_out, o->scale + gb * nr, &o->rq);
    }
}

static void dw_pixels(void *opv, size_t m, size_t count)
{
    const conv_op *o = opv;
    o->uk->dw(count, o->c_in, o->ks, o->ind + m * o->ks, o->packed, o->y + m * o->c_out, o->c_out, o->scale, &o->rq);
}

static void conv_run(const void *opv, qnn_plan *p)
{
    conv_op *o = (conv_op *)opv;
    if (o->depthwise) {
        pthreadpool_parallelize_1d_tile_1d(p->pool, dw_pixels, o, o->m, 32, 0);
        return;
    }
    if (o->rowcorr) {
        /* rowcorr = -zw * sum_k xu_k over the row's taps and the group's channels (padding reads zx). */
        size_t mr = o->uk->mr;
        for (size_t g = 0; g < o->groups; g++)
            for (size_t mt = 0; mt < o->mtiles; mt++)
                for (size_t i = 0; i < mr; i++) {
                    int32_t s = 0;
                    for (size_t t = 0; t < o->ks; t++) {
                        const uint8_t *a = o->ind[(mt * o->ks + t) * mr + i];
                        if (a != o->zero) a += g * o->cg;
                        for (size_t k = 0; k < o->cg; k++) s += a[k];
                    }
                    o->rowcorr[g * o->mtiles * mr + mt * mr + i] = -o->wz * s;
                }
    }
    if (o->panel) pthreadpool_parallelize_1d(p->pool, panel_tile, o, o->mtiles, 0);
    else pthreadpool_parallelize_2d(p->pool, gemm_tile, o, o->groups * o->nblocks, o->mtiles, 0);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Lowering
 * ------------------------------------------------------------------------------------------------------------- */
static int64_t pad_begin(const par_node *n, int dim, int64_t in, int64_t k, int64_t s, int64_t d)
{
    const char *mode = par_attr_str(n, "pad_mode", "explicit");
    if (strcmp(mode, "valid") == 0) return 0;
    if (strcmp(mode, "same") == 0) {
        int64_t out = (in + s - 1) / s;
        int64_t total = (out - 1) * s + (k - 1) * d + 1 - in;
        return total > 0 ? total / 2 : 0;
    }
    return par_attr_ints_at(n, "padding", dim, 0);
}

/* Depthwise weights hold ws - zw exactly in 16 bits (|ws - zw| <= 255), so no row correction:
 * bias' = b - zx * sum_t (ws - zw). Packs them, the folded bias and the scales per channel; then the step. */
static par_status pack_depthwise(qnn_plan *p, conv_op *o, const par_value *wv, const int32_t *bias,
                                 const qnn_tensor *xt, const qnn_tensor *yt, int shift, int32_t zw, int32_t zx,
                                 par_msg *msg)
{
    const qnn_ukernels *uk = o->uk;
    const size_t C = o->c_in;
    size_t cp = par_qnn_dw_channels(uk, C);
    int32_t *pk = par_qnn_alloc(p, sizeof(int32_t) * cp * (1 + o->ks));
    o->scale = par_qnn_alloc(p, sizeof(float) * cp);
    if (!pk || !o->scale) return par_msgf(msg, PAR_ERROR, "out of memory (weights)");
    wsrc src = {wv, 1, o->ks, 1, 0, shift, 0};
    for (size_t c = 0; c < C; c++) {
        src.g = c;
        int64_t acc = bias ? bias[c] : 0;
        for (size_t t = 0; t < o->ks; t++) {
            int32_t wq = wget(&src, 0, t, 0) - zw;
            par_qnn_dw_put(uk, pk, cp, t, c, wq);
            acc -= (int64_t)zx * wq;
        }
        if (acc < INT32_MIN || acc > INT32_MAX) return par_msgf(msg, PAR_UNSUPPORTED, "bias overflows int32");
        size_t slot = par_qnn_dw_slot(uk, c);
        pk[slot] = (int32_t)acc;
        o->scale[slot] = par_requant_scale_f32((float)xt->scale, w_scale(wv, c), (float)yt->scale);
    }
    o->packed = (uint8_t *)pk;
    o->rq.bounded = bounded(o->scale, cp, &o->rq);
    return par_qnn_add_step(p, conv_run, o, msg);
}

/* The GEMM weights, per group and block of nr output channels: packed for the panel path or the indirect one, the
 * bias folded with -zx sum_k ws + K zx zw, the scales, the row corrections when zw != 0; then the step. */
static par_status pack_gemm(qnn_plan *p, conv_op *o, const par_value *wv, const int32_t *bias, const qnn_tensor *xt,
                            const qnn_tensor *yt, int shift, int32_t zw, int32_t zx, int transposed,
                            par_msg *msg)
{
    const qnn_ukernels *uk = o->uk;
    const size_t ktot = o->ks * o->cg, mr = o->mr;
    size_t nr = uk->nr;
    o->nblocks = (o->og + nr - 1) / nr;
    /* The panel path when the set has one, a tile's panel fits the stack, and there are row tiles enough for the
     * pool's threads (it parallelizes over row tiles only). */
    o->kpanel = (o->ks * o->cg + 3) & ~(size_t)3;
    size_t threads = pthreadpool_get_threads_count(p->pool);
    o->panel = uk->gemm16 && o->kpanel + 32 <= QNN_PANEL_K && (threads <= 1 || o->mtiles >= 4 * threads);
    o->block_bytes = o->panel ? par_qnn_block_bytes(uk, 1, o->kpanel) : par_qnn_block_bytes(uk, o->ks, o->kcp);
    o->packed = par_qnn_alloc(p, o->block_bytes * o->groups * o->nblocks);
    o->scale = par_qnn_alloc(p, sizeof(float) * nr * o->groups * o->nblocks);
    int32_t *bfold = par_qnn_alloc(p, sizeof(int32_t) * nr);
    if (!o->packed || !o->scale || !bfold) return par_msgf(msg, PAR_ERROR, "out of memory (weights)");
    if (zw != 0) {
        o->rowcorr = par_qnn_alloc(p, sizeof(int32_t) * o->groups * o->mtiles * mr);
        if (!o->rowcorr) return par_msgf(msg, PAR_ERROR, "out of memory");
    }
    for (size_t gi = 0; gi < o->groups; gi++) {
        wsrc src = {wv, o->cg, o->ks, o->og, gi, shift, transposed};
        for (size_t b = 0; b < o->nblocks; b++) {
            size_t n0 = b * nr, cols = o->og - n0 < nr ? o->og - n0 : nr;
            for (size_t j = 0; j < cols; j++) {
                size_t oc = gi * o->og + n0 + j;
                int64_t acc = (bias ? bias[oc] : 0) + (int64_t)ktot * zx * zw;
                for (size_t t = 0; t < o->ks; t++)
                    for (size_t k = 0; k < o->cg; k++) acc -= (int64_t)zx * wget(&src, n0 + j, t, k);
                if (acc < INT32_MIN || acc > INT32_MAX) return par_msgf(msg, PAR_UNSUPPORTED, "bias overflows int32");
                bfold[j] = (int32_t)acc;
                o->scale[(gi * o->nblocks + b) * nr + j] =
                    par_requant_scale_f32((float)xt->scale, w_scale(wv, oc), (float)yt->scale);
            }
            uint8_t *dst = o->packed + (gi * o->nblocks + b) * o->block_bytes;
            if (o->panel) par_qnn_pack_gemm(uk, 1, ktot, o->kpanel, n0, cols, bfold, wget_flat, &src, dst);
            else par_qnn_pack_gemm(uk, o->ks, o->cg, o->kcp, n0, cols, bfold, wget, &src, dst);
        }
    }
    o->rq.bounded = bounded(o->scale, nr * o->groups * o->nblocks, &o->rq);
    return par_qnn_add_step(p, conv_run, o, msg);
}

par_status par_qnn_lower_conv(qnn_plan *p, int32_t node, int variant, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[node];
    const par_value *xv = par_node_input(g, n, 0), *wv = par_node_input(g, n, 1), *bv = par_node_input(g, n, 2);
    int32_t yi = n->outputs[0];
    const qnn_tensor *xt = &p->t[n->inputs[0]], *yt = &p->t[yi];
    const int transposed = variant == QNN_V_CONV_T;
    int is_conv = variant != QNN_V_LINEAR;
    const qnn_ukernels *uk = p->uk;
    conv_op *o = par_qnn_alloc(p, sizeof *o);
    if (!o) return par_msgf(msg, PAR_ERROR, "out of memory");
    o->uk = uk;

    size_t N, H = 1, W = 1, C, OH = 1, OW = 1, O = (size_t)(transposed ? yt->dims[1] : wv->dims[0]), KH = 1, KW = 1;
    int64_t sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pl = 0;
    if (is_conv) {
        N = (size_t)xv->dims[0], C = (size_t)xv->dims[1], H = (size_t)xv->dims[2], W = (size_t)xv->dims[3];
        KH = (size_t)wv->dims[2], KW = (size_t)wv->dims[3];
        OH = (size_t)yt->dims[2], OW = (size_t)yt->dims[3];
        sh = par_attr_ints_at(n, "stride", 0, 1), sw = par_attr_ints_at(n, "stride", 1, 1);
        dh = par_attr_ints_at(n, "dilation", 0, 1), dw = par_attr_ints_at(n, "dilation", 1, 1);
        pt = transposed ? par_attr_ints_at(n, "padding", 0, 0) : pad_begin(n, 0, (int64_t)H, (int64_t)KH, sh, dh);
        pl = transposed ? par_attr_ints_at(n, "padding", 1, 0) : pad_begin(n, 1, (int64_t)W, (int64_t)KW, sw, dw);
        o->groups = (size_t)par_attr_int(n, "groups", 1);
    } else {
        C = (size_t)xv->dims[xv->rank - 1];
        N = (size_t)(xv->numel / (int64_t)C);
        o->groups = 1;
    }
    o->c_in = C;
    o->c_out = O;
    o->cg = C / o->groups;
    o->og = O / o->groups;
    o->ks = KH * KW;
    o->kc = o->cg;
    o->kcp = (o->cg + 3) & ~(size_t)3;
    o->m = N * OH * OW;
    o->depthwise = is_conv && !transposed && o->groups == C && O == C && C > 1;
    const uint8_t *x = par_qnn_need(p, n->inputs[0], is_conv ? QNN_NHWC : QNN_LOGICAL, msg);
    if (!x) return PAR_ERROR;

    /* Fused activation (or the plain output clamp of the dtype). */
    o->rq = (qnn_rq){(float)-yt->zp, (float)(255 - yt->zp), yt->zp, 0, 0.0f, 0.0f, 1.0f, 0};
    int32_t fuse = fuse_target(p, node, &o->rq);
    int32_t out_v = yi;
    if (fuse >= 0) {
        p->skip[fuse] = 1;
        out_v = g->nodes[fuse].outputs[0];
    }
    o->y = par_qnn_produce(p, out_v, is_conv ? QNN_NHWC : QNN_LOGICAL, msg);
    if (!o->y) return PAR_ERROR;

    uint8_t *zero = par_qnn_alloc(p, C + QNN_SLACK);
    if (!zero) return par_msgf(msg, PAR_ERROR, "out of memory");
    memset(zero, xt->zp, C + QNN_SLACK);
    o->zero = zero;

    /* Weights: s8 domain (qu8 shifted by -128), zero point zw; the bias folds -zx sum_k ws + K zx zw. */
    int shift = wv->dtype == PAR_DTYPE_QU8 ? -128 : 0;
    int32_t zw = wv->quant_axis >= 0 ? 0 : wv->zero_point + shift, zx = xt->zp;
    o->wz = zw;
    const int32_t *bias = bv ? bv->data : NULL;

    /* Indirection: row m, tap t -> the input pixel's first byte, or the zero buffer. */
    size_t mr = o->depthwise ? 1 : uk->mr;
    o->mr = mr;
    o->mtiles = (o->m + mr - 1) / mr;
    o->ind = par_qnn_alloc(p, sizeof *o->ind * o->mtiles * o->ks * mr);
    if (!o->ind) return par_msgf(msg, PAR_ERROR, "out of memory (indirection)");
    for (size_t mt = 0; mt < o->mtiles; mt++)
        for (size_t t = 0; t < o->ks; t++)
            for (size_t i = 0; i < mr; i++) {
                size_t m = mt * mr + i < o->m ? mt * mr + i : o->m - 1;
                const uint8_t *a;
                if (!is_conv) {
                    a = x + m * C;
                } else if (transposed) {
                    /* the gather form of the transposed convolution (reference/conv.c): output (oh, ow) takes tap
                     * (kh, kw) from input row (oh + pt - kh dh) / sh when that division is exact and in range */
                    size_t b = m / (OH * OW), oh = m / OW % OH, ow = m % OW, kh = t / KW, kw = t % KW;
                    int64_t th = (int64_t)oh + pt - (int64_t)kh * dh, tw = (int64_t)ow + pl - (int64_t)kw * dw;
                    int ok = th >= 0 && tw >= 0 && th % sh == 0 && tw % sw == 0 && th / sh < (int64_t)H &&
                             tw / sw < (int64_t)W;
                    a = ok ? x + ((b * H + (size_t)(th / sh)) * W + (size_t)(tw / sw)) * C : zero;
                } else {
                    size_t b = m / (OH * OW), oh = m / OW % OH, ow = m % OW, kh = t / KW, kw = t % KW;
                    int64_t ih = (int64_t)oh * sh - pt + (int64_t)kh * dh;
                    int64_t iw = (int64_t)ow * sw - pl + (int64_t)kw * dw;
                    a = (ih >= 0 && ih < (int64_t)H && iw >= 0 && iw < (int64_t)W)
                            ? x + ((b * H + (size_t)ih) * W + (size_t)iw) * C
                            : zero;
                }
                o->ind[(mt * o->ks + t) * mr + i] = a;
            }

    if (o->depthwise) return pack_depthwise(p, o, wv, bias, xt, yt, shift, zw, zx, msg);
    return pack_gemm(p, o, wv, bias, xt, yt, shift, zw, zx, transposed, msg);
}
