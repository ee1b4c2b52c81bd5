/*
 * example_conv.c - the example backend's convolution, matrix and pooling kernels.
 *
 * Each kernel is the definition of docs/ops.md written as NCHW loops in float32: float accumulators, terms summed in
 * the obvious order, the bias as the first term. That is the arithmetic the oracle budgets for (PAR_ARITH_F32): a
 * k-term sum in float may be off by about k * 2^-24 * sum|terms|, and the reference allows exactly that, so no
 * compensated summation or double accumulator is needed (and none is used: it would hide nothing and prove less).
 * Kernels take all shapes from the validated graph view and must not allocate.
 */
#include <math.h>

#include "example.h"

/* ---------------------------------------------------------------------------------------------------------------
 * Convolution
 * ------------------------------------------------------------------------------------------------------------- */

/* The top/left padding of conv2d. pad_mode "same" and "valid" ignore the padding attribute and compute it as NNAPI
 * does: same: out = ceil(in / stride), total = max(0, (out-1)*stride + (k-1)*dilation + 1 - in), begin = total / 2
 * (the extra row or column, if any, goes to the bottom/right); valid: no padding. Only the begin side matters here:
 * the output size comes from the graph. */
static int64_t same_pad_begin(int64_t in, int64_t k, int64_t stride, int64_t dilation)
{
    int64_t out = (in + stride - 1) / stride;
    int64_t total = (out - 1) * stride + (k - 1) * dilation + 1 - in;
    return total > 0 ? total / 2 : 0;
}

void ex_conv2d(const ex_plan *p, const par_node *n)
{
    const par_value *xv = ex_in_value(p, n, 0), *wv = ex_in_value(p, n, 1), *yv = ex_out_value(p, n);
    const float *x = ex_in(p, n, 0), *w = ex_in(p, n, 1), *b = ex_in(p, n, 2);
    float *y = ex_out(p, n);
    const int64_t N = xv->dims[0], C = xv->dims[1], H = xv->dims[2], W = xv->dims[3];
    const int64_t O = wv->dims[0], CG = wv->dims[1], KH = wv->dims[2], KW = wv->dims[3];
    const int64_t OH = yv->dims[2], OW = yv->dims[3];
    const int64_t sh = par_attr_ints_at(n, "stride", 0, 1), sw = par_attr_ints_at(n, "stride", 1, 1);
    const int64_t dh = par_attr_ints_at(n, "dilation", 0, 1), dw = par_attr_ints_at(n, "dilation", 1, 1);
    const int64_t OG = O / par_attr_int(n, "groups", 1); /* output channels per group */
    const char *mode = par_attr_str(n, "pad_mode", "explicit");
    int64_t pt = par_attr_ints_at(n, "padding", 0, 0), pl = par_attr_ints_at(n, "padding", 1, 0);
    if (strcmp(mode, "same") == 0) {
        pt = same_pad_begin(H, KH, sh, dh);
        pl = same_pad_begin(W, KW, sw, dw);
    } else if (strcmp(mode, "valid") == 0) {
        pt = pl = 0;
    }

    for (int64_t in = 0; in < N; in++)
        for (int64_t o = 0; o < O; o++) {
            const int64_t c0 = (o / OG) * CG; /* first input channel of o's group */
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    float acc = b ? b[o] : 0.0f;
                    for (int64_t c = 0; c < CG; c++)
                        for (int64_t kh = 0; kh < KH; kh++) {
                            const int64_t ih = oh * sh - pt + kh * dh;
                            if (ih < 0 || ih >= H) continue; /* padding reads as 0 */
                            for (int64_t kw = 0; kw < KW; kw++) {
                                const int64_t iw = ow * sw - pl + kw * dw;
                                if (iw < 0 || iw >= W) continue;
                                acc += w[((o * CG + c) * KH + kh) * KW + kw] * x[((in * C + c0 + c) * H + ih) * W + iw];
                            }
                        }
                    y[((in * O + o) * OH + oh) * OW + ow] = acc;
                }
        }
}

/* conv_transpose2d, computed as a gather: output (oh, ow) receives input (ih, iw) through tap (kh, kw) when
 * ih*sh - pt + kh*dh == oh, i.e. when oh + pt - kh*dh is a non-negative multiple of sh. Gathering (rather than
 * scattering as the definition reads) writes each output element once, so nothing is written outside y. The weight
 * is PyTorch's [C, O/groups, KH, KW]. */
void ex_conv_transpose2d(const ex_plan *p, const par_node *n)
{
    const par_value *xv = ex_in_value(p, n, 0), *wv = ex_in_value(p, n, 1), *yv = ex_out_value(p, n);
    const float *x = ex_in(p, n, 0), *w = ex_in(p, n, 1), *b = ex_in(p, n, 2);
    float *y = ex_out(p, n);
    const int64_t N = xv->dims[0], C = xv->dims[1], H = xv->dims[2], W = xv->dims[3];
    const int64_t OPG = wv->dims[1], KH = wv->dims[2], KW = wv->dims[3]; /* OPG: output channels per group */
    const int64_t O = yv->dims[1], OH = yv->dims[2], OW = yv->dims[3];
    const int64_t CPG = C / par_attr_int(n, "groups", 1); /* input channels per group */
    const int64_t sh = par_attr_ints_at(n, "stride", 0, 1), sw = par_attr_ints_at(n, "stride", 1, 1);
    const int64_t dh = par_attr_ints_at(n, "dilation", 0, 1), dw = par_attr_ints_at(n, "dilation", 1, 1);
    const int64_t pt = par_attr_ints_at(n, "padding", 0, 0), pl = par_attr_ints_at(n, "padding", 1, 0);

    for (int64_t in = 0; in < N; in++)
        for (int64_t o = 0; o < O; o++) {
            const int64_t grp = o / OPG, oo = o - grp * OPG;
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    float acc = b ? b[o] : 0.0f;
                    for (int64_t c = grp * CPG; c < (grp + 1) * CPG; c++)
                        for (int64_t kh = 0; kh < KH; kh++) {
                            const int64_t th = oh + pt - kh * dh;
                            if (th < 0 || th % sh != 0 || th / sh >= H) continue;
                            for (int64_t kw = 0; kw < KW; kw++) {
                                const int64_t tw = ow + pl - kw * dw;
                                if (tw < 0 || tw % sw != 0 || tw / sw >= W) continue;
                                acc += x[((in * C + c) * H + th / sh) * W + tw / sw] *
                                       w[((c * OPG + oo) * KH + kh) * KW + kw];
                            }
                        }
                    y[((in * O + o) * OH + oh) * OW + ow] = acc;
                }
        }
}

/* ---------------------------------------------------------------------------------------------------------------
 * Matrix ops
 * ------------------------------------------------------------------------------------------------------------- */

/* linear: x [..., K] is a stack of rows; w [O, K]. */
void ex_linear(const ex_plan *p, const par_node *n)
{
    const par_value *xv = ex_in_value(p, n, 0), *wv = ex_in_value(p, n, 1);
    const float *x = ex_in(p, n, 0), *w = ex_in(p, n, 1), *b = ex_in(p, n, 2);
    float *y = ex_out(p, n);
    const int64_t O = wv->dims[0], K = wv->dims[1], rows = xv->numel / K;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t o = 0; o < O; o++) {
            float acc = b ? b[o] : 0.0f;
            for (int64_t k = 0; k < K; k++) acc += x[r * K + k] * w[o * K + k];
            y[r * O + o] = acc;
        }
}

/* matmul: a [..., M, K] x b [..., K, N]; the batch dims (all but the last two) broadcast as numpy's. */
void ex_matmul(const ex_plan *p, const par_node *n)
{
    const par_value *av = ex_in_value(p, n, 0), *bv = ex_in_value(p, n, 1), *yv = ex_out_value(p, n);
    const float *a = ex_in(p, n, 0), *b = ex_in(p, n, 1);
    float *y = ex_out(p, n);
    const int64_t M = av->dims[av->rank - 2], K = av->dims[av->rank - 1], N = bv->dims[bv->rank - 1];
    const int32_t batch_rank = yv->rank - 2;
    int64_t as[PAR_MAX_RANK], bs[PAR_MAX_RANK];
    ex_broadcast_strides(av->dims, av->rank - 2, batch_rank, as);
    ex_broadcast_strides(bv->dims, bv->rank - 2, batch_rank, bs);
    const int64_t batches = ex_prod(yv->dims, 0, batch_rank);

    for (int64_t t = 0; t < batches; t++) {
        const float *at = a + ex_offset(t, yv->dims, batch_rank, as) * M * K;
        const float *bt = b + ex_offset(t, yv->dims, batch_rank, bs) * K * N;
        float *yt = y + t * M * N;
        for (int64_t m = 0; m < M; m++)
            for (int64_t j = 0; j < N; j++) {
                float acc = 0.0f;
                for (int64_t k = 0; k < K; k++) acc += at[m * K + k] * bt[k * N + j];
                yt[m * N + j] = acc;
            }
    }
}

/* ---------------------------------------------------------------------------------------------------------------
 * Pooling. Output sizes (with ceil_mode and its dropped last window) come from the shape-inferred graph.
 * ------------------------------------------------------------------------------------------------------------- */

/* max_pool2d: padding never wins (it is -inf), so only in-image taps are read. A selection: bit-exact. A NaN in the
 * window gives NaN (PyTorch). */
void ex_max_pool2d(const ex_plan *p, const par_node *n)
{
    const par_value *xv = ex_in_value(p, n, 0), *yv = ex_out_value(p, n);
    const float *x = ex_in(p, n, 0);
    float *y = ex_out(p, n);
    const int64_t NC = xv->dims[0] * xv->dims[1], H = xv->dims[2], W = xv->dims[3];
    const int64_t OH = yv->dims[2], OW = yv->dims[3];
    const int64_t KH = par_attr_ints_at(n, "kernel", 0, 1), KW = par_attr_ints_at(n, "kernel", 1, 1);
    const int64_t sh = par_attr_ints_at(n, "stride", 0, 1), sw = par_attr_ints_at(n, "stride", 1, 1);
    const int64_t dh = par_attr_ints_at(n, "dilation", 0, 1), dw = par_attr_ints_at(n, "dilation", 1, 1);
    const int64_t pt = par_attr_ints_at(n, "padding", 0, 0), pl = par_attr_ints_at(n, "padding", 1, 0);

    for (int64_t nc = 0; nc < NC; nc++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                float m = -INFINITY;
                for (int64_t kh = 0; kh < KH; kh++) {
                    const int64_t ih = oh * sh - pt + kh * dh;
                    if (ih < 0 || ih >= H) continue;
                    for (int64_t kw = 0; kw < KW; kw++) {
                        const int64_t iw = ow * sw - pl + kw * dw;
                        if (iw < 0 || iw >= W) continue;
                        const float v = x[(nc * H + ih) * W + iw];
                        if (v > m || v != v) m = v; /* a NaN wins and stays (PyTorch) */
                    }
                }
                y[(nc * OH + oh) * OW + ow] = m;
            }
}

/* avg_pool2d, PyTorch's rule: the window [oh*sh - pt, oh*sh - pt + KH) is first clipped to the padded extent
 * [-pt, H + pb); with count_include_pad the divisor is that clipped window's area, else the number of in-image
 * elements. The sum runs over in-image elements only (padding is 0). */
void ex_avg_pool2d(const ex_plan *p, const par_node *n)
{
    const par_value *xv = ex_in_value(p, n, 0), *yv = ex_out_value(p, n);
    const float *x = ex_in(p, n, 0);
    float *y = ex_out(p, n);
    const int64_t NC = xv->dims[0] * xv->dims[1], H = xv->dims[2], W = xv->dims[3];
    const int64_t OH = yv->dims[2], OW = yv->dims[3];
    const int64_t KH = par_attr_ints_at(n, "kernel", 0, 1), KW = par_attr_ints_at(n, "kernel", 1, 1);
    const int64_t sh = par_attr_ints_at(n, "stride", 0, 1), sw = par_attr_ints_at(n, "stride", 1, 1);
    const int64_t pt = par_attr_ints_at(n, "padding", 0, 0), pl = par_attr_ints_at(n, "padding", 1, 0);
    const int64_t pb = par_attr_ints_at(n, "padding", 2, 0), pr = par_attr_ints_at(n, "padding", 3, 0);
    const int include_pad = par_attr_int(n, "count_include_pad", 1) != 0;

    for (int64_t nc = 0; nc < NC; nc++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                int64_t h0 = oh * sh - pt, w0 = ow * sw - pl;
                int64_t h1 = h0 + KH < H + pb ? h0 + KH : H + pb;
                int64_t w1 = w0 + KW < W + pr ? w0 + KW : W + pr;
                const int64_t padded_area = (h1 - h0) * (w1 - w0);
                h0 = h0 > 0 ? h0 : 0;
                w0 = w0 > 0 ? w0 : 0;
                h1 = h1 < H ? h1 : H;
                w1 = w1 < W ? w1 : W;
                float sum = 0.0f;
                for (int64_t ih = h0; ih < h1; ih++)
                    for (int64_t iw = w0; iw < w1; iw++) sum += x[(nc * H + ih) * W + iw];
                const int64_t divisor = include_pad ? padded_area : (h1 - h0) * (w1 - w0);
                y[(nc * OH + oh) * OW + ow] = sum / (float)divisor;
            }
}

/* adaptive_avg_pool2d: output row oh averages input rows [floor(oh*H/OH), ceil((oh+1)*H/OH)), likewise columns.
 * Integer arithmetic gives the floors and ceilings exactly. */
void ex_adaptive_avg_pool2d(const ex_plan *p, const par_node *n)
{
    const par_value *xv = ex_in_value(p, n, 0), *yv = ex_out_value(p, n);
    const float *x = ex_in(p, n, 0);
    float *y = ex_out(p, n);
    const int64_t NC = xv->dims[0] * xv->dims[1], H = xv->dims[2], W = xv->dims[3];
    const int64_t OH = yv->dims[2], OW = yv->dims[3];

    for (int64_t nc = 0; nc < NC; nc++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                const int64_t h0 = oh * H / OH, h1 = ((oh + 1) * H + OH - 1) / OH;
                const int64_t w0 = ow * W / OW, w1 = ((ow + 1) * W + OW - 1) / OW;
                float sum = 0.0f;
                for (int64_t ih = h0; ih < h1; ih++)
                    for (int64_t iw = w0; iw < w1; iw++) sum += x[(nc * H + ih) * W + iw];
                y[(nc * OH + oh) * OW + ow] = sum / (float)((h1 - h0) * (w1 - w0));
            }
}

void ex_global_avg_pool2d(const ex_plan *p, const par_node *n)
{
    const par_value *xv = ex_in_value(p, n, 0);
    const float *x = ex_in(p, n, 0);
    float *y = ex_out(p, n);
    const int64_t NC = xv->dims[0] * xv->dims[1], HW = xv->dims[2] * xv->dims[3];
    for (int64_t nc = 0; nc < NC; nc++) {
        float sum = 0.0f;
        for (int64_t i = 0; i < HW; i++) sum += x[nc * HW + i];
        y[nc] = sum / (float)HW;
    }
}
