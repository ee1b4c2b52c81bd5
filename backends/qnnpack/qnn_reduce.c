/*
 * qnn_reduce.c - the qnnpack ops whose integer sums are not a GEMM with constant weights: mean over any axes and
 * adaptive_avg_pool2d (AVG: the window's integer sum requantized by its divisor), and matmul of two quantized
 * activations (MUL: sum over k of (qa - za)(qb - zb), ratio s_a s_b / s_out) through the igemm micro-kernels, all in
 * the logical (NCHW) layout.
 *
 * Numerics (docs/quantization.md, "Per-op integer semantics"): the sums are exact in int32 (the lowering refuses
 * shapes that could overflow it); the requantization is core/requant.h's fp32 scheme with the ratio the reference
 * uses (s_in / (s_out d) in double for the averages; s_a s_b / s_out in float for matmul, the micro-kernels' fp32
 * epilogue), so the integers are the reference's bit for bit (PAR_PROC_REQUANT_EXACT). Memory is taken at prepare;
 * run allocates nothing (matmul repacks b into blocks allocated at prepare).
 */
#include <stdlib.h>

#include "qnn_common.h"
#include "core/requant.h"

/* ---------------------------------------------------------------------------------------------------------------
 * mean and adaptive_avg_pool2d
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct avg_op {
    const uint8_t *x;
    uint8_t *y;
    int adaptive;
    int32_t zi, shift;             /* uint8-domain input zero point; 128 for a qs8 output (stored q + 128) */
    /* mean: output i sums x[base[i] + roff[j]] over j < k */
    size_t m, k;
    int64_t *base, *roff;
    /* adaptive: N C planes of H x W into OH x OW, windows [floor(o H / OH), ceil((o + 1) H / OH)); with nhwc, the
     * input and output in NHWC (n images of c channels, sums in acc[c]: the channel loop vectorizes) */
    size_t nc, h, w, oh, ow, n, c;
    int nhwc;
    int32_t *acc;
    par_requant_params *rq;        /* one (mean) or one per output position (adaptive) */
} avg_op;

static int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }
static int64_t cdiv(int64_t a, int64_t b) { return -floor_div(-a, b); }

/* The window of output (oh, ow) of an adaptive pool: rows [h0, h1), columns [w0, w1). */
static void window(const avg_op *o, size_t oh, size_t ow, int64_t *h0, int64_t *h1, int64_t *w0, int64_t *w1)
{
    *h0 = floor_div((int64_t)(oh * o->h), (int64_t)o->oh), *h1 = cdiv((int64_t)((oh + 1) * o->h), (int64_t)o->oh);
    *w0 = floor_div((int64_t)(ow * o->w), (int64_t)o->ow), *w1 = cdiv((int64_t)((ow + 1) * o->w), (int64_t)o->ow);
}

static void avg_run(const void *opv, qnn_plan *p)
{
    (void)p;
    const avg_op *o = opv;
    if (!o->adaptive) {
        for (size_t i = 0; i < o->m; i++) {
            const uint8_t *x = o->x + o->base[i];
            int32_t s = 0;
            for (size_t j = 0; j < o->k; j++) s += x[o->roff[j]] - o->zi;
            o->y[i] = (uint8_t)(par_requant_fp32(s, &o->rq[0]) + o->shift);
        }
        return;
    }
    if (o->nhwc) {
        for (size_t b = 0; b < o->n; b++)
            for (size_t oh = 0; oh < o->oh; oh++)
                for (size_t ow = 0; ow < o->ow; ow++) {
                    int64_t h0, h1, w0, w1;
                    window(o, oh, ow, &h0, &h1, &w0, &w1);
                    int32_t *acc = o->acc, off = (int32_t)((h1 - h0) * (w1 - w0)) * o->zi;
                    for (size_t c = 0; c < o->c; c++) acc[c] = -off;
                    for (int64_t ih = h0; ih < h1; ih++)
                        for (int64_t iw = w0; iw < w1; iw++) {
                            const uint8_t *x = o->x + ((b * o->h + (size_t)ih) * o->w + (size_t)iw) * o->c;
                            for (size_t c = 0; c < o->c; c++) acc[c] += x[c];
                        }
                    uint8_t *y = o->y + ((b * o->oh + oh) * o->ow + ow) * o->c;
                    for (size_t c = 0; c < o->c; c++)
                        y[c] = (uint8_t)(par_requant_fp32(acc[c], &o->rq[oh * o->ow + ow]) + o->shift);
                }
        return;
    }
    for (size_t c = 0; c < o->nc; c++)
        for (size_t oh = 0; oh < o->oh; oh++)
            for (size_t ow = 0; ow < o->ow; ow++) {
                int64_t h0, h1, w0, w1;
                window(o, oh, ow, &h0, &h1, &w0, &w1);
                const uint8_t *x = o->x + c * o->h * o->w;
                int32_t s = 0;
                for (int64_t ih = h0; ih < h1; ih++)
                    for (int64_t iw = w0; iw < w1; iw++) s += x[ih * (int64_t)o->w + iw] - o->zi;
                o->y[(c * o->oh + oh) * o->ow + ow] = (uint8_t)(par_requant_fp32(s, &o->rq[oh * o->ow + ow]) + o->shift);
            }
}

/* The fp32-scheme params of an average over d elements: ratio s_in / (s_out d) in double, as the reference's. */
static par_status avg_params(par_requant_params *rq, const qnn_tensor *xt, const qnn_tensor *yt, int64_t d,
                             par_msg *msg)
{
    int32_t lo = yt->xor80 ? -128 : 0, hi = yt->xor80 ? 127 : 255;
    if (par_requant_params_init(rq, PAR_REQUANT_FP32, xt->scale / (yt->scale * (double)d),
                                yt->zp - (yt->xor80 ? 128 : 0), lo, hi, msg) != PAR_OK)
        return PAR_UNSUPPORTED;
    return PAR_OK;
}

par_status par_qnn_lower_avg(qnn_plan *p, int32_t node, int variant, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[node];
    const qnn_tensor *xt = &p->t[n->inputs[0]], *yt = &p->t[n->outputs[0]];
    avg_op *o = par_qnn_alloc(p, sizeof *o);
    if (!o) return par_msgf(msg, PAR_ERROR, "out of memory");
    o->adaptive = variant == QNN_V_ADAPTIVE_AVG;
    o->zi = xt->zp;
    o->shift = yt->xor80 ? 128 : 0;
    if (o->adaptive) {
        if (xt->rank != 4) return par_msgf(msg, PAR_UNSUPPORTED, "%s: input rank %d, expected 4", n->op, (int)xt->rank);
        o->nc = (size_t)(xt->dims[0] * xt->dims[1]), o->h = (size_t)xt->dims[2], o->w = (size_t)xt->dims[3];
        o->oh = (size_t)yt->dims[2], o->ow = (size_t)yt->dims[3];
        o->rq = par_qnn_alloc(p, sizeof *o->rq * o->oh * o->ow);
        if (!o->rq) return par_msgf(msg, PAR_ERROR, "out of memory");
        for (size_t oh = 0; oh < o->oh; oh++)
            for (size_t ow = 0; ow < o->ow; ow++) {
                int64_t dh = cdiv((int64_t)((oh + 1) * o->h), (int64_t)o->oh) - floor_div((int64_t)(oh * o->h), (int64_t)o->oh);
                int64_t dw = cdiv((int64_t)((ow + 1) * o->w), (int64_t)o->ow) - floor_div((int64_t)(ow * o->w), (int64_t)o->ow);
                par_status st = avg_params(&o->rq[oh * o->ow + ow], xt, yt, dh * dw, msg);
                if (st != PAR_OK) return st;
            }
    } else {
        /* mean: the reduced axes (negative counted from the end), the kept ones in order */
        int red[PAR_MAX_RANK] = {0};
        const par_attr *ax = par_node_attr(n, "axes");
        for (int32_t i = 0; ax && i < ax->count; i++) {
            int64_t a = ax->ints[i];
            if (a < 0) a += xt->rank;
            if (a < 0 || a >= xt->rank) return par_msgf(msg, PAR_ERROR, "mean: axis %lld out of range", (long long)a);
            red[a] = 1;
        }
        int64_t stride[PAR_MAX_RANK], s = 1;
        for (int32_t i = xt->rank - 1; i >= 0; i--) stride[i] = s, s *= xt->dims[i];
        o->m = (size_t)yt->numel;
        o->k = o->m ? (size_t)(xt->numel / (int64_t)o->m) : 0;
        if (o->k > (size_t)1 << 23)
            return par_msgf(msg, PAR_UNSUPPORTED, "mean: %zu reduced elements could overflow the int32 sum", o->k);
        o->base = par_qnn_alloc(p, sizeof(int64_t) * (o->m + 1));
        o->roff = par_qnn_alloc(p, sizeof(int64_t) * (o->k + 1));
        o->rq = par_qnn_alloc(p, sizeof *o->rq);
        if (!o->base || !o->roff || !o->rq) return par_msgf(msg, PAR_ERROR, "out of memory");
        for (size_t i = 0; i < o->m; i++) { /* decode i over the kept dims (row-major) */
            int64_t rem = (int64_t)i, b = 0;
            for (int32_t d = xt->rank - 1; d >= 0; d--)
                if (!red[d]) b += (rem % xt->dims[d]) * stride[d], rem /= xt->dims[d];
            o->base[i] = b;
        }
        for (size_t j = 0; j < o->k; j++) {
            int64_t rem = (int64_t)j, b = 0;
            for (int32_t d = xt->rank - 1; d >= 0; d--)
                if (red[d]) b += (rem % xt->dims[d]) * stride[d], rem /= xt->dims[d];
            o->roff[j] = b;
        }
        par_status st = avg_params(o->rq, xt, yt, (int64_t)(o->k ? o->k : 1), msg);
        if (st != PAR_OK) return st;
    }
    /* an adaptive pool reads NHWC where its input is there (a convolution's output): no layout conversion */
    o->nhwc = o->adaptive && par_qnn_have(p, n->inputs[0]) == QNN_NHWC;
    if (o->nhwc) {
        o->n = (size_t)xt->dims[0], o->c = (size_t)xt->dims[1];
        o->acc = par_qnn_alloc(p, sizeof(int32_t) * o->c);
        if (!o->acc) return par_msgf(msg, PAR_ERROR, "out of memory");
    }
    int lay = o->nhwc ? QNN_NHWC : QNN_LOGICAL;
    o->x = par_qnn_need(p, n->inputs[0], lay, msg);
    o->y = o->x ? par_qnn_produce(p, n->outputs[0], lay, msg) : NULL;
    if (!o->y) return PAR_ERROR;
    return par_qnn_add_step(p, avg_run, o, msg);
}

/* ---------------------------------------------------------------------------------------------------------------
 * matmul of two quantized activations: y[.., i, j] = r(sum_k (a[.., i, k] - za)(b[.., k, j] - zb)), batch dims
 * broadcast as numpy. A GEMM whose right operand changes every run: b's matrix is packed at run time (into blocks
 * allocated at prepare) as the igemm micro-kernel's weights, in the s8 domain (b - 128, zero point zw = zb - 128),
 * with the zero points folded as qnn_kernels.h states: bias'[j] = -za sum_k ws[k][j] + K za zw per column, rowcorr[i]
 * = -zw sum_k a[i][k] per row; one tap (ks = 1), no padding. The epilogue is the kernels' fp32 requantization with
 * the ratio s_a s_b / s_out computed in float (par_requant_scale_f32, as par_requant_params_for's fp32 params).
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct mm_op {
    const qnn_ukernels *uk;
    const uint8_t *a, *b;
    uint8_t *y;
    size_t batches, m, k, n, kcp, mtiles, nblocks, block_bytes;
    int32_t za, zw;                        /* a's zero point (uint8 domain); b's in the s8 domain */
    int32_t rank;                          /* batch dims of y */
    int64_t yd[PAR_MAX_RANK], as[PAR_MAX_RANK], bs[PAR_MAX_RANK]; /* per batch dim: y's extent, a's and b's
                                                                   * matrix strides (0 where broadcast) */
    uint8_t *packed;                       /* [nblocks] blocks, repacked for every matrix of b */
    int32_t *bias;                         /* [NR] scratch */
    const uint8_t **ind;                   /* [mtiles * MR] row pointers */
    int32_t *rowcorr;                      /* [mtiles * MR] */
    const uint8_t *zero;
    float *scale;                          /* [nblocks * NR], every entry the ratio */
    qnn_rq rq;
} mm_op;

typedef struct mm_src {
    const uint8_t *b;
    size_t n;
} mm_src;

/* b's element (k, column n) in the s8 domain. */
static int32_t mm_wget(const void *ctxv, size_t n, size_t t, size_t k)
{
    (void)t;
    const mm_src *s = ctxv;
    return (int32_t)s->b[k * s->n + n] - 128;
}

static void mm_run(const void *opv, qnn_plan *p)
{
    (void)p;
    mm_op *o = (mm_op *)opv;
    const size_t MR = o->uk->mr, NR = o->uk->nr;
    int64_t idx[PAR_MAX_RANK] = {0};
    for (size_t bt = 0; bt < o->batches; bt++) {
        int64_t ao = 0, bo = 0;
        for (int32_t d = 0; d < o->rank; d++) ao += idx[d] * o->as[d], bo += idx[d] * o->bs[d];
        const uint8_t *a = o->a + ao * (int64_t)(o->m * o->k), *b = o->b + bo * (int64_t)(o->k * o->n);
        uint8_t *y = o->y + bt * o->m * o->n;
        mm_src src = {b, o->n};
        for (size_t blk = 0; blk < o->nblocks; blk++) {
            size_t n0 = blk * NR, cols = o->n - n0 < NR ? o->n - n0 : NR;
            for (size_t j = 0; j < cols; j++) {
                int32_t sw = 0;
                for (size_t kk = 0; kk < o->k; kk++) sw += (int32_t)b[kk * o->n + n0 + j] - 128;
                o->bias[j] = -o->za * sw + (int32_t)o->k * o->za * o->zw;
            }
            par_qnn_pack_gemm(o->uk, 1, o->k, o->kcp, n0, cols, o->bias, mm_wget, &src,
                              o->packed + blk * o->block_bytes);
        }
        for (size_t r = 0; r < o->mtiles * MR; r++) {
            const uint8_t *row = a + (r < o->m ? r : o->m - 1) * o->k;
            int32_t s = 0;
            for (size_t kk = 0; kk < o->k; kk++) s += row[kk];
            o->ind[r] = row;
            o->rowcorr[r] = -o->zw * s;
        }
        for (size_t blk = 0; blk < o->nblocks; blk++)
            for (size_t mt = 0; mt < o->mtiles; mt++) {
                size_t m0 = mt * MR, rows = o->m - m0 < MR ? o->m - m0 : MR;
                size_t n0 = blk * NR, cols = o->n - n0 < NR ? o->n - n0 : NR;
                o->uk->igemm(rows, cols, o->kcp, 1, o->ind + m0, 0, o->zero, o->packed + blk * o->block_bytes,
                             o->rowcorr + m0, y + m0 * o->n + n0, o->n, o->scale + blk * NR, &o->rq);
            }
        for (int32_t d = o->rank - 1; d >= 0; d--) {
            if (++idx[d] < o->yd[d]) break;
            idx[d] = 0;
        }
    }
}

par_status par_qnn_lower_matmul(qnn_plan *p, int32_t node, int variant, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[node];
    const qnn_tensor *at = &p->t[n->inputs[0]], *bt = &p->t[n->inputs[1]], *yt = &p->t[n->outputs[0]];
    if (at->rank < 2 || bt->rank < 2)
        return par_msgf(msg, PAR_UNSUPPORTED, "matmul: rank-1 operands are not supported (ranks %d, %d)",
                        (int)at->rank, (int)bt->rank);
    mm_op *o = par_qnn_alloc(p, sizeof *o);
    if (!o) return par_msgf(msg, PAR_ERROR, "out of memory");
    const qnn_ukernels *uk = o->uk = p->uk;
    o->m = (size_t)at->dims[at->rank - 2], o->k = (size_t)at->dims[at->rank - 1], o->n = (size_t)bt->dims[bt->rank - 1];
    if (o->k > 33000)
        return par_msgf(msg, PAR_UNSUPPORTED, "matmul: K = %zu could overflow the int32 accumulator", o->k);
    o->za = at->zp, o->zw = bt->zp - 128;
    par_requant_params rp;
    const int32_t shift = yt->xor80 ? 128 : 0;
    if (par_requant_params_for(&rp, PAR_REQUANT_FP32, (float)at->scale, (float)bt->scale, (float)yt->scale,
                               yt->zp - shift, yt->xor80 ? -128 : 0, yt->xor80 ? 127 : 255, msg) != PAR_OK)
        return PAR_UNSUPPORTED;
    o->rq = (qnn_rq){(float)-yt->zp, (float)(255 - yt->zp), yt->zp, 0, 0.0f, 0.0f, 1.0f, 0};
    o->kcp = (o->k + 3) & ~(size_t)3;
    o->mtiles = (o->m + uk->mr - 1) / uk->mr;
    o->nblocks = (o->n + uk->nr - 1) / uk->nr;
    o->block_bytes = par_qnn_block_bytes(uk, 1, o->kcp);
    o->packed = par_qnn_alloc(p, o->block_bytes * o->nblocks);
    o->bias = par_qnn_alloc(p, sizeof(int32_t) * uk->nr);
    o->ind = par_qnn_alloc(p, sizeof *o->ind * o->mtiles * uk->mr);
    o->rowcorr = par_qnn_alloc(p, sizeof(int32_t) * o->mtiles * uk->mr);
    o->scale = par_qnn_alloc(p, sizeof(float) * o->nblocks * uk->nr);
    uint8_t *zero = par_qnn_alloc(p, o->kcp + QNN_SLACK);
    if (!o->packed || !o->bias || !o->ind || !o->rowcorr || !o->scale || !zero)
        return par_msgf(msg, PAR_ERROR, "out of memory");
    memset(zero, at->zp, o->kcp + QNN_SLACK);
    o->zero = zero;
    for (size_t i = 0; i < o->nblocks * uk->nr; i++) o->scale[i] = rp.scale;
    /* batch dims, aligned at the right; a matrix index counts whole matrices (0 stride on a broadcast dim) */
    o->rank = yt->rank - 2;
    o->batches = 1;
    int64_t sa = 1, sb = 1;
    for (int32_t d = o->rank - 1; d >= 0; d--) {
        int32_t ia = d - (o->rank - (at->rank - 2)), ib = d - (o->rank - (bt->rank - 2));
        int64_t ea = ia >= 0 ? at->dims[ia] : 1, eb = ib >= 0 ? bt->dims[ib] : 1;
        o->yd[d] = yt->dims[d];
        o->as[d] = ea == 1 ? 0 : sa;
        o->bs[d] = eb == 1 ? 0 : sb;
        sa *= ea, sb *= eb;
        o->batches *= (size_t)yt->dims[d];
    }
    o->a = par_qnn_need(p, n->inputs[0], QNN_LOGICAL, msg);
    o->b = o->a ? par_qnn_need(p, n->inputs[1], QNN_LOGICAL, msg) : NULL;
    o->y = o->b ? par_qnn_produce(p, n->outputs[0], QNN_LOGICAL, msg) : NULL;
    if (!o->y) return PAR_ERROR;
    return par_qnn_add_step(p, mm_run, o, msg);
}
