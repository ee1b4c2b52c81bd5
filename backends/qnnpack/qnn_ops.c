/*
 * qnn_ops.c - every qnnpack op but conv2d and linear: quantize / dequantize at the edges, the unary ops through
 * 256-entry lookup tables (relu, relu6, hardtanh, clamp, sigmoid, tanh, hardswish, hardsigmoid, leaky_relu), add
 * and mul with requantization of both inputs, max / avg / global average pooling (NHWC), concat with
 * requantization, reshape / flatten / permute / slice, nearest and bilinear upsampling, softmax. The averages over
 * other windows (mean, adaptive_avg_pool2d) and matmul of two activations are in qnn_reduce.c.
 *
 * Numerics. A table entry is exact by construction: f of the dequantized input in double, divided by the output
 * scale, plus the zero point, rounded half to even and saturated (the definition of the quantized op). The other
 * ops compute the real result from the dequantized integers in double, in the order the definition states
 * (s * (q - z) exact, then the op, then / s_out + z_out), and round it the same way; a one-step difference from the
 * reference can only come from a real result within 2^-40 or so of a rounding tie. Data movement (max pool, nearest,
 * concat, reshape, permute, slice with equal quantization) is exact. It must not allocate at run time.
 */
#include <math.h>
#include <stdlib.h>

#include "qnn_common.h"
#include "core/requant.h"

static int is_q(par_dtype t)
{
    return t == PAR_DTYPE_QU8 || t == PAR_DTYPE_QS8;
}

par_status par_qnn_check_op(const par_graph_desc *g, const par_node *n, unsigned flags, par_msg *msg)
{
    for (int32_t i = 0; i < n->n_inputs; i++) {
        const par_value *v = par_node_input(g, n, i);
        if (!v) continue;
        int want_f32 = (flags & QNN_OP_F32_IN) != 0;
        if (want_f32 ? v->dtype != PAR_DTYPE_F32 : !is_q(v->dtype))
            return par_msgf(msg, PAR_UNSUPPORTED, "%s: input %d ('%s') is %s; qnnpack runs quantized (qu8/qs8) graphs "
                            "only (f32 only into quantize)", n->op, (int)i, v->name, par_dtype_name(v->dtype));
        if (v->quant_axis >= 0)
            return par_msgf(msg, PAR_UNSUPPORTED, "%s: input '%s' is quantized per channel", n->op, v->name);
    }
    const par_value *y = par_node_output(g, n, 0);
    if (flags & QNN_OP_F32_OUT ? y->dtype != PAR_DTYPE_F32 : !is_q(y->dtype))
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: output '%s' is %s; qnnpack runs quantized (qu8/qs8) graphs only "
                        "(f32 only out of dequantize)", n->op, y->name, par_dtype_name(y->dtype));
    if ((flags & QNN_OP_RANK4) && par_node_input(g, n, 0)->rank != 4)
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: input rank %d, expected 4", n->op,
                        (int)par_node_input(g, n, 0)->rank);
    return PAR_OK;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Tables (docs/quantization.md, "Per-op integer semantics"), built with core/requant.h so that they are the
 * reference's integers. Tables are indexed and filled in the uint8 domain; the declared domain differs by 128 for
 * qs8.
 * ------------------------------------------------------------------------------------------------------------- */
static par_dtype dtype_of(const qnn_tensor *t)
{
    return t->xor80 ? PAR_DTYPE_QS8 : PAR_DTYPE_QU8;
}

static int32_t decl_zp(const qnn_tensor *t)
{
    return t->zp - (t->xor80 ? 128 : 0);
}

/* Data movement between two quantizations: identity when scale, zero point and dtype agree, else the fp32-scheme
 * requantization of q - zin with the ratio s_in / s_out (as the reference's movement ops). */
static int requant_lut(const qnn_tensor *x, const qnn_tensor *y, uint8_t lut[256])
{
    int ident = x->scale == y->scale && x->zp == y->zp && x->xor80 == y->xor80;
    par_requant_params rp;
    par_msg m;
    int32_t lo = y->xor80 ? -128 : 0, hi = y->xor80 ? 127 : 255, shift = y->xor80 ? 128 : 0;
    if (!ident && par_requant_params_for(&rp, PAR_REQUANT_FP32, (float)x->scale, 1.0f, (float)y->scale, decl_zp(y),
                                         lo, hi, &m) != PAR_OK)
        return -1;
    for (int u = 0; u < 256; u++) lut[u] = ident ? (uint8_t)u : (uint8_t)(par_requant_fp32(u - x->zp, &rp) + shift);
    return ident;
}

static double f_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static double f_tanh(double x) { return tanh(x); }
static double f_hardswish(double x) { return x * fmin(fmax(x + 3.0, 0.0), 6.0) / 6.0; }

int par_qnn_unary_lut(const par_node *n, int variant, const qnn_tensor *x, const qnn_tensor *y, uint8_t lut[256])
{
    if (variant < QNN_V_RELU || variant > QNN_V_LEAKY_RELU || !x->quant || !y->quant) return 0;
    int32_t shift = y->xor80 ? 128 : 0;
    if (variant == QNN_V_SIGMOID || variant == QNN_V_TANH || variant == QNN_V_HARDSWISH) {
        double (*f)(double) = variant == QNN_V_SIGMOID ? f_sigmoid : variant == QNN_V_TANH ? f_tanh : f_hardswish;
        uint8_t t[256];
        par_requant_lut(f, dtype_of(x), (float)x->scale, decl_zp(x), (float)y->scale, decl_zp(y),
                        y->xor80 ? -128 : 0, y->xor80 ? 127 : 255, t);
        /* t is indexed by q - qmin (= the uint8-domain input) and holds the declared output's byte */
        for (int u = 0; u < 256; u++) lut[u] = (uint8_t)(t[u] ^ (y->xor80 ? 0x80 : 0));
        return 1;
    }
    if (variant == QNN_V_HARDSIGMOID || variant == QNN_V_LEAKY_RELU) {
        /* PyTorch QNNPACK's rule (hardsigmoid.c, leaky-relu.c): a table of the float function at the 256 input
         * integers, divided by the output scale, plus the zero point, rounded and saturated. Here in double with
         * the reference kernel's own formulas (reference/activation.c), rounded half to even. */
        const double slope = par_attr_float(n, "negative_slope", 0.01);
        const int hs = variant == QNN_V_HARDSIGMOID;
        double fx[256];
        for (int u = 0; u < 256; u++) {
            double v = x->scale * (double)(u - x->zp);
            fx[u] = hs ? fmin(fmax(v + 3, 0), 6) / 6 : v >= 0 ? v : slope * v;
        }
        uint8_t t[256];
        par_requant_lut_values(fx, (float)y->scale, decl_zp(y), y->xor80 ? -128 : 0, y->xor80 ? 127 : 255, t);
        for (int u = 0; u < 256; u++) lut[u] = (uint8_t)(t[u] ^ (y->xor80 ? 0x80 : 0));
        return 1;
    }
    if (requant_lut(x, y, lut) < 0) return 0;
    int32_t lo = y->xor80 ? -128 : 0, hi = y->xor80 ? 127 : 255;
    if (variant == QNN_V_RELU) {
        lo = decl_zp(y);
    } else {
        double blo = -INFINITY, bhi = INFINITY;
        par_clamp_bounds(n, &blo, &bhi);
        par_requant_clamp_range(dtype_of(y), (float)y->scale, decl_zp(y), blo, bhi, &lo, &hi);
    }
    for (int u = 0; u < 256; u++) {
        int32_t v = lut[u] - shift;
        v = v < lo ? lo : v > hi ? hi : v;
        lut[u] = (uint8_t)(v + shift);
    }
    return 1;
}
typedef struct lut_op {
    const uint8_t *x;
    uint8_t *y;
    size_t n;
    uint8_t lut[256];
} lut_op;

static void lut_run(const void *opv, qnn_plan *p)
{
    (void)p;
    const lut_op *o = opv;
    for (size_t i = 0; i < o->n; i++) o->y[i] = o->lut[o->x[i]];
}

/* ---------------------------------------------------------------------------------------------------------------
 * Quantize / dequantize (logical layout)
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct qd_op {
    int32_t input_index; /* quantize of a graph input: read the bound buffer */
    const float *fx;
    float *fy;
    const uint8_t *x;
    uint8_t *y;
    size_t n;
    double scale, inv_scale;
    int32_t zp;
} qd_op;

static void quantize_run(const void *opv, qnn_plan *p)
{
    const qd_op *o = opv;
    const float *x = o->input_index >= 0 ? p->inputs[o->input_index] : o->fx;
    p->uk->quantize(o->n, x, o->y, o->inv_scale, (double)o->zp); /* within 2^-52 of the quotient; budget 2u */
}

static void dequantize_run(const void *opv, qnn_plan *p)
{
    (void)p;
    const qd_op *o = opv;
    for (size_t i = 0; i < o->n; i++) o->fy[i] = (float)(o->scale * (o->x[i] - o->zp));
}

/* ---------------------------------------------------------------------------------------------------------------
 * Shapes and strides (logical)
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct shp {
    int32_t rank;
    int64_t d[PAR_MAX_RANK], s[PAR_MAX_RANK];
} shp;

static shp shape_of(const qnn_tensor *t)
{
    shp r;
    r.rank = t->rank;
    int64_t st = 1;
    for (int32_t i = t->rank - 1; i >= 0; i--) {
        r.d[i] = t->dims[i];
        r.s[i] = st;
        st *= t->dims[i];
    }
    return r;
}

/* ---------------------------------------------------------------------------------------------------------------
 * add / mul: flat when shapes are equal (any layout), broadcast in logical order otherwise
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct bin_op {
    const uint8_t *a, *b;
    uint8_t *y;
    size_t n;
    int mul, flat;
    int32_t ma, mb, shift;       /* add: the multipliers and shift of par_requant_add_params */
    float scale;                 /* mul: the fp32 ratio s_a s_b / s_out */
    int32_t za, zb, zo;          /* uint8-domain zero points */
    int32_t rank;
    int64_t yd[PAR_MAX_RANK], as[PAR_MAX_RANK], bs[PAR_MAX_RANK]; /* broadcast strides (0 on broadcast dims) */
} bin_op;

/* add: acc = m_a (a - za) + m_b (b - zb) (|acc| < 2^30), then acc / 2^shift rounded half to even (requant.h's fp32
 * add); mul: (a - za)(b - zb) times the float ratio, rounded half to even (fp32 scheme). Both clamp to the stored
 * range, which is [0, 255] in the uint8 domain whatever the dtype. */
static inline uint8_t bin1(const bin_op *o, int32_t a, int32_t b)
{
    int32_t v;
    if (o->mul) {
        float f = (float)((a - o->za) * (b - o->zb)) * o->scale;
        float lo = (float)-o->zo, hi = (float)(255 - o->zo);
        f = f < lo ? lo : f > hi ? hi : f;
        v = qnn_rne_f32(f) + o->zo;
    } else {
        int32_t acc = o->ma * (a - o->za) + o->mb * (b - o->zb);
        int32_t fl = acc >> o->shift, rem = acc & ((1 << o->shift) - 1), half = 1 << (o->shift - 1);
        v = fl + (rem > half || (rem == half && (fl & 1)) ? 1 : 0) + o->zo;
    }
    return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

static void bin_run(const void *opv, qnn_plan *p)
{
    const bin_op *o = opv;
    if (o->flat && !o->mul) {
        const qnn_add_params ap = {o->ma, o->mb, o->za, o->zb, o->zo, o->shift};
        p->uk->vadd(o->n, o->a, o->b, o->y, &ap);
        return;
    }
    if (o->flat) {
        for (size_t i = 0; i < o->n; i++) o->y[i] = bin1(o, o->a[i], o->b[i]);
        return;
    }
    /* broadcast: rows of the innermost iteration dim, each with its two strides */
    int64_t idx[PAR_MAX_RANK] = {0};
    const int32_t r = o->rank > 0 ? o->rank : 1;
    const int64_t inner = o->rank > 0 ? o->yd[r - 1] : 1, sa = o->rank > 0 ? o->as[r - 1] : 0,
                  sb = o->rank > 0 ? o->bs[r - 1] : 0;
    for (size_t i = 0; i < o->n; i += (size_t)inner) {
        int64_t ai = 0, bi = 0;
        for (int32_t k = 0; k < r - 1; k++) ai += idx[k] * o->as[k], bi += idx[k] * o->bs[k];
        for (int64_t j = 0; j < inner; j++) o->y[i + (size_t)j] = bin1(o, o->a[ai + j * sa], o->b[bi + j * sb]);
        for (int32_t k = r - 2; k >= 0; k--) {
            if (++idx[k] < o->yd[k]) break;
            idx[k] = 0;
        }
    }
}

/* ---------------------------------------------------------------------------------------------------------------
 * Pools (NHWC)
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct pool_op {
    const uint8_t *x;
    uint8_t *y;
    size_t n, c, h, w, oh, ow, kh, kw, sh, sw, dh, dw;
    int64_t pt, pl, pb, pr;
    int avg, include_pad;
    int32_t zi, zo;
    const float *scale; /* average: per output position, the fp32 ratio s_in / (s_out d) */
    uint8_t lut[256];   /* max pool: requantization of the selected element */
} pool_op;

static void pool_run(const void *opv, qnn_plan *p)
{
    (void)p;
    const pool_op *o = opv;
    for (size_t b = 0; b < o->n; b++)
        for (size_t oh = 0; oh < o->oh; oh++)
            for (size_t ow = 0; ow < o->ow; ow++) {
                uint8_t *y = o->y + ((b * o->oh + oh) * o->ow + ow) * o->c;
                int64_t h0 = (int64_t)(oh * o->sh) - o->pt, w0 = (int64_t)(ow * o->sw) - o->pl;
                if (!o->avg) {
                    for (size_t c = 0; c < o->c; c++) y[c] = 0;
                    for (size_t i = 0; i < o->kh; i++)
                        for (size_t j = 0; j < o->kw; j++) {
                            int64_t ih = h0 + (int64_t)(i * o->dh), iw = w0 + (int64_t)(j * o->dw);
                            if (ih < 0 || ih >= (int64_t)o->h || iw < 0 || iw >= (int64_t)o->w) continue;
                            const uint8_t *x = o->x + ((b * o->h + (size_t)ih) * o->w + (size_t)iw) * o->c;
                            for (size_t c = 0; c < o->c; c++) y[c] = x[c] > y[c] ? x[c] : y[c];
                        }
                    for (size_t c = 0; c < o->c; c++) y[c] = o->lut[y[c]];
                    continue;
                }
                /* Average: acc = sum (x - zi) over the window's real elements, times the position's ratio. */
                int64_t h1 = h0 + (int64_t)o->kh < (int64_t)o->h ? h0 + (int64_t)o->kh : (int64_t)o->h;
                int64_t w1 = w0 + (int64_t)o->kw < (int64_t)o->w ? w0 + (int64_t)o->kw : (int64_t)o->w;
                h0 = h0 < 0 ? 0 : h0, w0 = w0 < 0 ? 0 : w0;
                const float sc = o->scale[oh * o->ow + ow];
                const float lo = (float)-o->zo, hi = (float)(255 - o->zo);
                for (size_t c = 0; c < o->c; c++) {
                    int32_t s = 0;
                    for (int64_t ih = h0; ih < h1; ih++)
                        for (int64_t iw = w0; iw < w1; iw++)
                            s += o->x[((b * o->h + (size_t)ih) * o->w + (size_t)iw) * o->c + c] - o->zi;
                    float f = (float)s * sc;
                    f = f < lo ? lo : f > hi ? hi : f;
                    y[c] = (uint8_t)(qnn_rne_f32(f) + o->zo);
                }
            }
}

/* ---------------------------------------------------------------------------------------------------------------
 * Data movement (logical): concat, copy, permute, slice, nearest upsampling; each element through a table
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct gather_op {
    const uint8_t *x;
    uint8_t *y;
    size_t n;
    int32_t rank;
    int64_t yd[PAR_MAX_RANK];                   /* the iteration shape */
    int64_t xs[PAR_MAX_RANK], ys[PAR_MAX_RANK]; /* per iteration dim: the input and output strides */
    int64_t x0;                                 /* input offset of element 0 */
    uint8_t lut[256];
} gather_op;

static void gather_run(const void *opv, qnn_plan *p)
{
    (void)p;
    const gather_op *o = opv;
    int64_t idx[PAR_MAX_RANK] = {0};
    for (size_t i = 0; i < o->n; i++) {
        int64_t xi = o->x0, yi = 0;
        for (int32_t k = 0; k < o->rank; k++) xi += idx[k] * o->xs[k], yi += idx[k] * o->ys[k];
        o->y[yi] = o->lut[o->x[xi]];
        for (int32_t k = o->rank - 1; k >= 0; k--) {
            if (++idx[k] < o->yd[k]) break;
            idx[k] = 0;
        }
    }
}

typedef struct resize_op {
    const uint8_t *x;
    uint8_t *y;
    size_t nc, h, w, oh, ow;
    int bilinear;
    const int64_t *i0h, *i1h, *i0w, *i1w; /* per output row / column */
    const double *lh, *lw;
    double si, so;
    int32_t zi, zo;
    uint8_t lut[256];
} resize_op;

static void resize_run(const void *opv, qnn_plan *p)
{
    (void)p;
    const resize_op *o = opv;
    for (size_t b = 0; b < o->nc; b++) {
        const uint8_t *x = o->x + b * o->h * o->w;
        uint8_t *y = o->y + b * o->oh * o->ow;
        for (size_t i = 0; i < o->oh; i++)
            for (size_t j = 0; j < o->ow; j++) {
                if (!o->bilinear) {
                    y[i * o->ow + j] = o->lut[x[o->i0h[i] * (int64_t)o->w + o->i0w[j]]];
                    continue;
                }
                double lh = o->lh[i], lw = o->lw[j];
                double v00 = o->si * (x[o->i0h[i] * (int64_t)o->w + o->i0w[j]] - o->zi);
                double v01 = o->si * (x[o->i0h[i] * (int64_t)o->w + o->i1w[j]] - o->zi);
                double v10 = o->si * (x[o->i1h[i] * (int64_t)o->w + o->i0w[j]] - o->zi);
                double v11 = o->si * (x[o->i1h[i] * (int64_t)o->w + o->i1w[j]] - o->zi);
                double v = (1 - lh) * (1 - lw) * v00 + (1 - lh) * lw * v01 + lh * (1 - lw) * v10 + lh * lw * v11;
                y[i * o->ow + j] = qnn_sat_rne(v / o->so, o->zo);
            }
    }
}

typedef struct softmax_op {
    const uint8_t *x;
    uint8_t *y;
    size_t outer, len, inner;
    double si, so;
    int32_t zi, zo;
} softmax_op;

static void softmax_run(const void *opv, qnn_plan *p)
{
    (void)p;
    const softmax_op *o = opv;
    for (size_t a = 0; a < o->outer; a++)
        for (size_t c = 0; c < o->inner; c++) {
            const uint8_t *x = o->x + a * o->len * o->inner + c;
            uint8_t *y = o->y + a * o->len * o->inner + c;
            double m = -INFINITY, s = 0;
            for (size_t j = 0; j < o->len; j++) m = fmax(m, o->si * (x[j * o->inner] - o->zi));
            for (size_t j = 0; j < o->len; j++) s += exp(o->si * (x[j * o->inner] - o->zi) - m);
            for (size_t j = 0; j < o->len; j++)
                y[j * o->inner] = qnn_sat_rne(exp(o->si * (x[j * o->inner] - o->zi) - m) / s / o->so, o->zo);
        }
}

/* ---------------------------------------------------------------------------------------------------------------
 * Lowering
 * ------------------------------------------------------------------------------------------------------------- */
static int64_t norm_axis(int64_t a, int32_t rank)
{
    return a < 0 ? a + rank : a;
}

/* Nearest / bilinear source indices of one axis (docs/ops.md, as the reference computes them). */
static par_status resize_axis(qnn_plan *p, const par_node *n, int axis, int64_t in, int64_t out, int bilinear,
                              const int64_t **i0, const int64_t **i1, const double **l, par_msg *msg)
{
    int64_t *a = par_qnn_alloc(p, sizeof *a * (size_t)out), *b = par_qnn_alloc(p, sizeof *b * (size_t)out);
    double *w = par_qnn_alloc(p, sizeof *w * (size_t)out);
    if (!a || !b || !w) return par_msgf(msg, PAR_ERROR, "out of memory");
    double scale = par_attr_count(n, "scale") == 2 ? par_attr_floats_at(n, "scale", axis, 0) : 0;
    int ac = bilinear ? (int)par_attr_int(n, "align_corners", 0) : 0;
    for (int64_t d = 0; d < out; d++) {
        if (!bilinear) {
            int64_t s = scale > 0 ? (int64_t)floor((double)d * (1.0 / scale)) : d * in / out;
            if (out == in || out == 2 * in) s = out == in ? d : d / 2; /* PyTorch's same-size rules, docs/ops.md */
            a[d] = s < in - 1 ? s : in - 1;
            continue;
        }
        double s;
        if (in == out) {
            s = (double)d; /* the same size copies the axis, whatever the scale */
        } else if (ac) {
            s = out <= 1 ? 0.0 : (double)(d * (in - 1)) / (double)(out - 1);
        } else {
            double r = scale > 0 ? 1.0 / scale : (double)in / (double)out;
            s = ((double)d + 0.5) * r - 0.5;
            s = s < 0 ? 0 : s;
        }
        int64_t f = (int64_t)floor(s);
        a[d] = f < in - 1 ? f : in - 1;
        b[d] = f + 1 < in - 1 ? f + 1 : in - 1;
        w[d] = s - (double)f;
    }
    *i0 = a, *i1 = b, *l = w;
    return PAR_OK;
}

/* quantize: f32 (a graph input or a dequantize result) to the output's quantization. */
par_status par_qnn_lower_quantize(qnn_plan *p, int32_t node, int variant, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[node];
    int32_t xi = n->inputs[0], yi = n->outputs[0];
    qnn_tensor *xt = &p->t[xi], *yt = &p->t[yi];
    qd_op *o = par_qnn_alloc(p, sizeof *o);
    if (!o) return par_msgf(msg, PAR_ERROR, "out of memory");
    o->input_index = xt->input_index;
    o->fx = xt->fbuf;
    if (o->input_index < 0 && !o->fx)
        return par_msgf(msg, PAR_UNSUPPORTED, "quantize of an f32 value qnnpack does not produce");
    o->y = par_qnn_produce(p, yi, QNN_LOGICAL, msg);
    o->n = (size_t)yt->numel, o->scale = yt->scale, o->inv_scale = 1.0 / yt->scale, o->zp = yt->zp;
    return o->y ? par_qnn_add_step(p, quantize_run, o, msg) : PAR_ERROR;
}

/* dequantize: to an f32 buffer of the plan (a graph output, or the input of a quantize). */
par_status par_qnn_lower_dequantize(qnn_plan *p, int32_t node, int variant, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[node];
    int32_t xi = n->inputs[0], yi = n->outputs[0];
    qnn_tensor *xt = &p->t[xi], *yt = &p->t[yi];
    qd_op *o = par_qnn_alloc(p, sizeof *o);
    if (!o) return par_msgf(msg, PAR_ERROR, "out of memory");
    o->x = par_qnn_need(p, xi, QNN_LOGICAL, msg);
    o->fy = yt->fbuf = par_qnn_alloc(p, sizeof(float) * (size_t)yt->numel);
    o->n = (size_t)xt->numel, o->scale = xt->scale, o->zp = xt->zp;
    if (!o->x || !o->fy) return PAR_ERROR;
    return par_qnn_add_step(p, dequantize_run, o, msg);
}

/* relu, relu6, hardtanh, clamp, sigmoid, tanh, hardswish: a 256-entry table, in the input's layout. */
par_status par_qnn_lower_unary(qnn_plan *p, int32_t node, int variant, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[node];
    int32_t xi = n->inputs[0], yi = n->outputs[0];
    qnn_tensor *xt = &p->t[xi], *yt = &p->t[yi];
    lut_op *o = par_qnn_alloc(p, sizeof *o);
    if (!o) return par_msgf(msg, PAR_ERROR, "out of memory");
    int lay = par_qnn_have(p, xi);
    o->x = par_qnn_need(p, xi, lay < 0 ? QNN_LOGICAL : lay, msg);
    o->y = par_qnn_produce(p, yi, lay < 0 ? QNN_LOGICAL : lay, msg);
    o->n = (size_t)xt->numel;
    par_qnn_unary_lut(n, variant, xt, yt, o->lut);
    return o->x && o->y ? par_qnn_add_step(p, lut_run, o, msg) : PAR_ERROR;
}

/* add and mul with broadcasting. */
par_status par_qnn_lower_binary(qnn_plan *p, int32_t node, int variant, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[node];
    int32_t xi = n->inputs[0], yi = n->outputs[0];
    qnn_tensor *xt = &p->t[xi], *yt = &p->t[yi];
    bin_op *o = par_qnn_alloc(p, sizeof *o);
    if (!o) return par_msgf(msg, PAR_ERROR, "out of memory");
    int32_t bi = n->inputs[1];
    qnn_tensor *bt = &p->t[bi];
    o->mul = variant == QNN_V_MUL;
    o->za = xt->zp, o->zb = bt->zp, o->zo = yt->zp;
    o->n = (size_t)yt->numel;
    int32_t qlo = yt->xor80 ? -128 : 0, qhi = yt->xor80 ? 127 : 255;
    if (o->mul) {
        par_requant_params rp;
        if (par_requant_params_for(&rp, PAR_REQUANT_FP32, (float)xt->scale, (float)bt->scale, (float)yt->scale,
                                   decl_zp(yt), qlo, qhi, msg) != PAR_OK)
            return PAR_UNSUPPORTED;
        o->scale = rp.scale;
    } else {
        par_requant_add_params ap;
        if (par_requant_add_params_init(&ap, PAR_REQUANT_FP32, (float)xt->scale, decl_zp(xt), (float)bt->scale,
                                        decl_zp(bt), (float)yt->scale, decl_zp(yt), qlo, qhi, msg) != PAR_OK)
            return PAR_UNSUPPORTED;
        o->ma = ap.a_multiplier, o->mb = ap.b_multiplier, o->shift = ap.shift;
    }
    int same = xt->numel == yt->numel && bt->numel == yt->numel && xt->rank == bt->rank;
    for (int32_t i = 0; same && i < xt->rank; i++) same = xt->dims[i] == bt->dims[i];
    int lay = QNN_LOGICAL;
    if (same) {
        int la = par_qnn_have(p, xi);
        lay = la < 0 ? QNN_LOGICAL : la;
        o->flat = 1;
    } else if (xt->rank == 4 && bt->rank == 4 && yt->rank == 4 && par_qnn_have(p, xi) == QNN_NHWC) {
        /* a rank-4 broadcast (the squeeze-excitation multiply [N,C,H,W] x [N,C,1,1]) stays in NHWC: no layout
         * round trip around it */
        lay = QNN_NHWC;
    }
    o->a = par_qnn_need(p, xi, lay, msg);
    o->b = o->a ? par_qnn_need(p, bi, lay, msg) : NULL;
    o->y = o->b ? par_qnn_produce(p, yi, lay, msg) : NULL;
    if (!o->y) return PAR_ERROR;
    shp ys = shape_of(yt), as = shape_of(xt), bs = shape_of(bt);
    o->rank = ys.rank;
    for (int32_t i = 0; i < ys.rank; i++) {
        int32_t ia = i - (ys.rank - as.rank), ib = i - (ys.rank - bs.rank);
        o->yd[i] = ys.d[i];
        o->as[i] = ia >= 0 && as.d[ia] != 1 ? as.s[ia] : 0;
        o->bs[i] = ib >= 0 && bs.d[ib] != 1 ? bs.s[ib] : 0;
    }
    if (lay == QNN_NHWC && !o->flat) {
        /* iterate (N, H, W, C) over NHWC buffers: dims and strides in that order, each operand's own NHWC strides
         * (0 on its broadcast dims) */
        static const int ord[4] = {0, 2, 3, 1};
        const qnn_tensor *ts[3] = {yt, xt, bt};
        int64_t st[3][4];
        for (int t = 0; t < 3; t++) {
            const int64_t *d = ts[t]->dims;
            const int64_t nhwc[4] = {d[2] * d[3] * d[1], 1, d[3] * d[1], d[1]}; /* N, C, H, W strides in NHWC */
            for (int k = 0; k < 4; k++) st[t][k] = d[ord[k]] != 1 ? nhwc[ord[k]] : 0;
        }
        for (int k = 0; k < 4; k++) {
            o->yd[k] = yt->dims[ord[k]];
            o->as[k] = st[1][k];
            o->bs[k] = st[2][k];
        }
    }
    return par_qnn_add_step(p, bin_run, o, msg);
}

/* max_pool2d, avg_pool2d, global_avg_pool2d (NHWC). */
par_status par_qnn_lower_pool(qnn_plan *p, int32_t node, int variant, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[node];
    int32_t xi = n->inputs[0], yi = n->outputs[0];
    qnn_tensor *xt = &p->t[xi], *yt = &p->t[yi];
    const int gap = variant == QNN_V_GLOBAL_AVG_POOL, avgpool = variant == QNN_V_AVG_POOL;
    pool_op *o = par_qnn_alloc(p, sizeof *o);
    if (!o) return par_msgf(msg, PAR_ERROR, "out of memory");
    o->n = (size_t)xt->dims[0], o->c = (size_t)xt->dims[1], o->h = (size_t)xt->dims[2], o->w = (size_t)xt->dims[3];
    o->oh = (size_t)yt->dims[2], o->ow = (size_t)yt->dims[3];
    if (gap) {
        o->kh = o->h, o->kw = o->w, o->sh = o->sw = o->dh = o->dw = 1;
    } else {
        o->kh = (size_t)par_attr_ints_at(n, "kernel", 0, 1), o->kw = (size_t)par_attr_ints_at(n, "kernel", 1, 1);
        o->sh = (size_t)par_attr_ints_at(n, "stride", 0, 1), o->sw = (size_t)par_attr_ints_at(n, "stride", 1, 1);
        o->dh = (size_t)par_attr_ints_at(n, "dilation", 0, 1);
        o->dw = (size_t)par_attr_ints_at(n, "dilation", 1, 1);
        o->pt = par_attr_ints_at(n, "padding", 0, 0), o->pl = par_attr_ints_at(n, "padding", 1, 0);
        o->pb = par_attr_ints_at(n, "padding", 2, 0), o->pr = par_attr_ints_at(n, "padding", 3, 0);
    }
    if (avgpool) o->dh = o->dw = 1;
    o->avg = gap || avgpool;
    o->include_pad = avgpool ? (int)par_attr_int(n, "count_include_pad", 1) : 0;
    o->zi = xt->zp, o->zo = yt->zp;
    if (requant_lut(xt, yt, o->lut) < 0)
        return par_msgf(msg, PAR_UNSUPPORTED, "scale ratio %g outside the fp32 scheme's range",
                        xt->scale / yt->scale);
    if (o->avg) {
        /* The divisor of each output position (docs/ops.md): the window clipped to the padded extent (area,
         * count_include_pad) or to the image (real elements); its ratio s_in / (s_out d) as the fp32 scheme
         * rounds it. */
        float *sc = par_qnn_alloc(p, sizeof(float) * o->oh * o->ow);
        if (!sc) return par_msgf(msg, PAR_ERROR, "out of memory");
        int32_t qlo = yt->xor80 ? -128 : 0, qhi = yt->xor80 ? 127 : 255;
        for (size_t oh = 0; oh < o->oh; oh++)
            for (size_t ow = 0; ow < o->ow; ow++) {
                int64_t h0 = (int64_t)(oh * o->sh) - o->pt, w0 = (int64_t)(ow * o->sw) - o->pl, H = (int64_t)o->h,
                        W = (int64_t)o->w;
                int64_t h1 = h0 + (int64_t)o->kh < H + o->pb ? h0 + (int64_t)o->kh : H + o->pb;
                int64_t w1 = w0 + (int64_t)o->kw < W + o->pr ? w0 + (int64_t)o->kw : W + o->pr;
                int64_t area = (h1 - h0) * (w1 - w0);
                h0 = h0 < 0 ? 0 : h0, w0 = w0 < 0 ? 0 : w0, h1 = h1 > H ? H : h1, w1 = w1 > W ? W : w1;
                int64_t d = o->include_pad ? area : (h1 - h0) * (w1 - w0);
                par_requant_params rp;
                if (d < 1 || par_requant_params_init(&rp, PAR_REQUANT_FP32, xt->scale / (yt->scale * (double)d),
                                                     decl_zp(yt), qlo, qhi, msg) != PAR_OK)
                    return PAR_UNSUPPORTED;
                sc[oh * o->ow + ow] = rp.scale;
            }
        o->scale = sc;
    }
    o->x = par_qnn_need(p, xi, QNN_NHWC, msg);
    o->y = o->x ? par_qnn_produce(p, yi, QNN_NHWC, msg) : NULL;
    return o->y ? par_qnn_add_step(p, pool_run, o, msg) : PAR_ERROR;
}

/* softmax along any axis. */
par_status par_qnn_lower_softmax(qnn_plan *p, int32_t node, int variant, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[node];
    int32_t xi = n->inputs[0], yi = n->outputs[0];
    qnn_tensor *xt = &p->t[xi], *yt = &p->t[yi];
    softmax_op *o = par_qnn_alloc(p, sizeof *o);
    if (!o) return par_msgf(msg, PAR_ERROR, "out of memory");
    int64_t ax = norm_axis(par_attr_int(n, "axis", -1), xt->rank);
    o->outer = o->inner = 1;
    for (int32_t i = 0; i < xt->rank; i++) {
        if (i < ax) o->outer *= (size_t)xt->dims[i];
        if (i > ax) o->inner *= (size_t)xt->dims[i];
    }
    o->len = (size_t)xt->dims[ax];
    o->si = xt->scale, o->so = yt->scale, o->zi = xt->zp, o->zo = yt->zp;
    o->x = par_qnn_need(p, xi, QNN_LOGICAL, msg);
    o->y = o->x ? par_qnn_produce(p, yi, QNN_LOGICAL, msg) : NULL;
    return o->y ? par_qnn_add_step(p, softmax_run, o, msg) : PAR_ERROR;
}

/* upsample_nearest2d and upsample_bilinear2d. */
par_status par_qnn_lower_resize(qnn_plan *p, int32_t node, int variant, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[node];
    int32_t xi = n->inputs[0], yi = n->outputs[0];
    qnn_tensor *xt = &p->t[xi], *yt = &p->t[yi];
    resize_op *o = par_qnn_alloc(p, sizeof *o);
    if (!o) return par_msgf(msg, PAR_ERROR, "out of memory");
    o->nc = (size_t)(xt->dims[0] * xt->dims[1]), o->h = (size_t)xt->dims[2], o->w = (size_t)xt->dims[3];
    o->oh = (size_t)yt->dims[2], o->ow = (size_t)yt->dims[3];
    o->bilinear = variant == QNN_V_BILINEAR;
    o->si = xt->scale, o->so = yt->scale, o->zi = xt->zp, o->zo = yt->zp;
    if (requant_lut(xt, yt, o->lut) < 0) return par_msgf(msg, PAR_UNSUPPORTED, "scale ratio out of range");
    if (resize_axis(p, n, 0, (int64_t)o->h, (int64_t)o->oh, o->bilinear, &o->i0h, &o->i1h, &o->lh, msg) ||
        resize_axis(p, n, 1, (int64_t)o->w, (int64_t)o->ow, o->bilinear, &o->i0w, &o->i1w, &o->lw, msg))
        return PAR_ERROR;
    o->x = par_qnn_need(p, xi, QNN_LOGICAL, msg);
    o->y = o->x ? par_qnn_produce(p, yi, QNN_LOGICAL, msg) : NULL;
    return o->y ? par_qnn_add_step(p, resize_run, o, msg) : PAR_ERROR;
}

/* Data movement: gathers in logical order. mode: the op (reshape and flatten copy, permute, slice, concat). */
typedef enum gather_mode { G_COPY, G_PERMUTE, G_SLICE, G_CONCAT } gather_mode;

static par_status lower_gather(qnn_plan *p, int32_t node, gather_mode k, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[node];
    int32_t yi = n->outputs[0];
    qnn_tensor *yt = &p->t[yi];
    uint8_t *y = par_qnn_produce(p, yi, QNN_LOGICAL, msg);
    if (!y) return PAR_ERROR;
    shp ys = shape_of(yt);
    int32_t parts = k == G_CONCAT ? n->n_inputs : 1;
    int64_t cat_off = 0;
    for (int32_t part = 0; part < parts; part++) {
        int32_t vi = n->inputs[part];
        qnn_tensor *it = &p->t[vi];
        gather_op *o = par_qnn_alloc(p, sizeof *o);
        if (!o) return par_msgf(msg, PAR_ERROR, "out of memory");
        o->x = par_qnn_need(p, vi, QNN_LOGICAL, msg);
        if (!o->x) return PAR_ERROR;
        if (requant_lut(it, yt, o->lut) < 0) return par_msgf(msg, PAR_UNSUPPORTED, "scale ratio out of range");
        shp xs = shape_of(it);
        o->y = y;
        o->n = (size_t)yt->numel;
        if (k == G_COPY) {
            o->rank = 1, o->yd[0] = yt->numel, o->xs[0] = 1, o->ys[0] = 1;
        } else if (k == G_PERMUTE) {
            o->rank = ys.rank;
            for (int32_t i = 0; i < ys.rank; i++) {
                o->yd[i] = ys.d[i], o->ys[i] = ys.s[i];
                o->xs[i] = xs.s[norm_axis(par_attr_ints_at(n, "perm", i, i), xs.rank)];
            }
        } else if (k == G_SLICE) {
            int64_t dim = norm_axis(par_attr_int(n, "dim", 0), xs.rank), sz = xs.d[dim];
            int64_t st = par_attr_int(n, "start", 0), step = par_attr_int(n, "step", 1);
            if (st < 0) st += sz;
            st = st < 0 ? 0 : st > sz ? sz : st;
            o->rank = ys.rank;
            for (int32_t i = 0; i < ys.rank; i++)
                o->yd[i] = ys.d[i], o->ys[i] = ys.s[i], o->xs[i] = xs.s[i] * (i == dim ? step : 1);
            o->x0 = st * xs.s[dim];
        } else { /* concat: this input scatters into its block of the output, at offset cat_off along the axis */
            int64_t ax = norm_axis(par_attr_int(n, "axis", 1), ys.rank);
            o->rank = xs.rank;
            o->n = (size_t)it->numel;
            for (int32_t i = 0; i < xs.rank; i++) o->yd[i] = xs.d[i], o->xs[i] = xs.s[i], o->ys[i] = ys.s[i];
            o->y = y + cat_off * ys.s[ax];
            cat_off += xs.d[ax];
        }
        if (par_qnn_add_step(p, gather_run, o, msg) != PAR_OK) return PAR_ERROR;
    }
    return PAR_OK;
}

par_status par_qnn_lower_copy(qnn_plan *p, int32_t node, int variant, par_msg *msg)
{
    return lower_gather(p, node, G_COPY, msg);
}

par_status par_qnn_lower_permute(qnn_plan *p, int32_t node, int variant, par_msg *msg)
{
    return lower_gather(p, node, G_PERMUTE, msg);
}

par_status par_qnn_lower_slice(qnn_plan *p, int32_t node, int variant, par_msg *msg)
{
    return lower_gather(p, node, G_SLICE, msg);
}

par_status par_qnn_lower_concat(qnn_plan *p, int32_t node, int variant, par_msg *msg)
{
    return lower_gather(p, node, G_CONCAT, msg);
}
