/*
 * linear_dynamic.c - the float64 reference of linear_dynamic (docs/ops.md, docs/budgets/linear-dynamic.md):
 * PyTorch's dynamically quantized linear (quantized::linear_dynamic). x is f32 and is quantized per tensor at run
 * time to qu8 from its own range; the weights are a qs8 constant [out, in] (per tensor, or per channel on axis 0);
 * the accumulator sum_k (qx_k - zx)(qw_k - zw) is exact in int32; the output is acc * sx * sw[o] (+ b[o]) in f32.
 *
 * The kernel sees the weights' integers directly (qform CONVERT: the interpreter does not dequantize around it) and
 * computes the run-time qparams with PyTorch's ChooseQuantizationParams (aten/src/ATen/native/quantized/cpu/
 * QuantUtils.h), in the same precisions, so that the reference's sx and zx are the backend's:
 *   qmin = 0, qmax = 255 (reduce_range = 1: 127, as fbgemm; qnnpack uses the full range)
 *   min = min(min(x), 0), max = max(max(x), 0)                                          (floats, exact)
 *   scale = ((double)max - min) / (qmax - qmin)                                          (double)
 *   if (float)scale == 0 or 1 / (float)scale is infinite: scale = 0.1
 *   if scale < 6.1e-5f: scale = 6.1e-5f, and min, max scaled as PyTorch does (only they feed the zero point)
 *   zero point: qmin - min / scale or qmax - max / scale (double), whichever has the smaller error term
 *               |qmin| - |min / scale| vs |qmax| - |max / scale|; clamped to [qmin, qmax], else rounded (nearbyint)
 *   sx = (float)scale
 * then qx = clamp(zx + rne(x / sx), qmin, qmax) with x / sx in double.
 *
 * Budget (docs/budgets/linear-dynamic.md). The value is the exact real acc * sx * sw[o] + b[o]. A correct backend
 * differs by:
 *   (a) ties of the input quantization: where x_k / sx + zx lies within w_k = 2^-20 (|x_k / sx| + |zx| + 1) of a
 *       half-integer, qx_k may be the other neighbour (float division or multiplication by 1/sx, zx added in
 *       float before rounding, a scale computed in float arithmetic: each moves x / sx by at most 2^-22 of that);
 *       when the zero point's own ideal lies within 2^-20 (|that| + 1) of a tie, zx may be off by one, which only
 *       changes the elements that clamp: those count as alternatives too. Each alternative moves y by
 *       sx sw |qw_k - zw|, summed exactly (worst case).
 *   (b) the f32 epilogue: (float)acc (2^-24 relative beyond 2^24), the product sx * sw[o] rounded (u), the
 *       multiplication (u), a scale 1 ulp different from a float-computed qparam (u): 4u |acc sx sw|; the bias
 *       addition and the store: u_store |y|.
 *   (c) inputs with budgets (x from a float op): a correct backend quantizes its own x' (within the budgets) with
 *       its own scale and zero point; dynq.h bounds the output's move three ways (the integer offsets' reach and
 *       the scale's move; half a step of each dequantized value around its input, through rule 5 with the inputs'
 *       scales; the two mixed per element) and takes the smallest. When every element may be 0 the range may
 *       collapse (ChooseQuantizationParams jumps to 0.1 for an empty range, to the 6.1e-5 threshold below it).
 * It must not allocate memory that outlives the call.
 */
#include "reference.h"
#include "dynq.h"
#include "core/requant.h"
#include "core/shape.h"

#include <math.h>
#include <stdlib.h>

#define LD_WIN 0x1p-20
#define LD_SMALL_SCALE 6.1e-5f /* PyTorch's SMALL_SCALE_THRESHOLD */

/* The run-time qparams (core/requant.h, PyTorch's rule) of the input's float values, and whether the zero point's
 * ideal value lies within the tie window of a half-integer. PAR_ERROR for a non-finite input. */
static par_status qparams(const float *x, int64_t n, int reduce_range, float *scale, int32_t *zero_point,
                          int *zp_tie, double *z_ideal, double *range_min)
{
    const int32_t qmin = 0, qmax = reduce_range ? 127 : 255;
    float mn = 0.0f, mx = 0.0f;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(x[i])) return PAR_ERROR;
        mn = x[i] < mn ? x[i] : mn;
        mx = x[i] > mx ? x[i] : mx;
    }
    par_requant_dynamic_qparams(mn, mx, reduce_range, scale, zero_point, z_ideal, range_min);
    const double z0 = *z_ideal;
    if (zp_tie) *zp_tie = z0 >= qmin && z0 <= qmax && fabs(z0 - floor(z0) - 0.5) <= LD_WIN * (fabs(z0) + 1);
    return PAR_OK;
}

par_status par_ref_linear_dynamic(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    const par_rt *x = in[0], *w = in[1], *b = c->n->n_inputs > 2 ? in[2] : NULL;
    par_rt *y = out[0];
    if (!x || !w || !y) return par_msgf(msg, PAR_ERROR, "linear_dynamic: inputs 0 (x) and 1 (weight) are required");
    const par_value *wv = &c->g->values[c->n->inputs[1]];
    if (x->dtype != PAR_DTYPE_F32)
        return par_msgf(msg, PAR_UNSUPPORTED, "linear_dynamic: input 0 (x) is %s, expected f32",
                        par_dtype_name(x->dtype));
    if (wv->dtype != PAR_DTYPE_QS8 || w->rank != 2)
        return par_msgf(msg, PAR_UNSUPPORTED, "linear_dynamic: input 1 (weight) is %s of rank %d, expected qs8 [out, in]",
                        par_dtype_name(wv->dtype), (int)w->rank);
    if (wv->quant_axis > 0 || (wv->quant_axis == 0 && !wv->channel_scales))
        return par_msgf(msg, PAR_UNSUPPORTED, "linear_dynamic: weight scales per channel on axis %d (only 0)",
                        (int)wv->quant_axis);
    if (b && b->dtype != PAR_DTYPE_F32)
        return par_msgf(msg, PAR_UNSUPPORTED, "linear_dynamic: input 2 (bias) is %s, expected f32",
                        par_dtype_name(b->dtype));
    int32_t yr;
    int64_t yd[PAR_MAX_RANK];
    par_status st = par_linear_shape(x->rank, x->dims, w->rank, w->dims, b ? b->dims : NULL, b ? b->rank : 0, &yr, yd,
                                     msg);
    if (st != PAR_OK) return st;
    if (!par_shape_equal(y->rank, y->dims, yr, yd))
        return par_msgf(msg, PAR_ERROR, "linear_dynamic: output 0: allocated shape does not match the inferred");
    const int rr = par_attr_int(c->n, "reduce_range", 0) != 0;
    const int64_t kk = w->dims[1], oo = w->dims[0], rows = kk > 0 ? x->numel / kk : 0;
    const double qmin = 0, qmax = rr ? 127 : 255;

    float *xf = malloc(sizeof *xf * (size_t)(x->numel + 1));
    double *qx = malloc(sizeof *qx * (size_t)(x->numel + 1));
    unsigned char *alt = malloc((size_t)(x->numel + 1));
    par_dynq_elem *el = malloc(sizeof *el * (size_t)(x->numel + 1));
    if (!xf || !qx || !alt || !el) {
        free(xf), free(qx), free(alt), free(el);
        return par_msgf(msg, PAR_ERROR, "linear_dynamic: out of memory");
    }
    for (int64_t i = 0; i < x->numel; i++) xf[i] = (float)x->v[i];
    float sx;
    int32_t zx;
    int zp_tie = 0;
    double z0, mn;
    if (qparams(xf, x->numel, rr, &sx, &zx, &zp_tie, &z0, &mn) != PAR_OK) {
        /* x holds a NaN or an infinity (an element upstream is "anything", docs/oracle.md): no quantization
         * parameters exist, and every output depends on them, so every output is anything too */
        free(xf), free(qx), free(alt), free(el);
        for (int64_t i = 0; i < y->numel; i++) {
            y->v[i] = NAN;
            y->e[i] = INFINITY;
            par_mark_any(c, i);
        }
        return PAR_OK;
    }
    /* (c): the quantization of x as a correct backend whose x is within the budgets may hold it (dynq.h). The
     * threshold below which ChooseQuantizationParams changes shape is 6.1e-5; an empty range's scale is 0.1. */
    par_dynq dq;
    par_dynq_row(&dq, x->v, x->e, x->numel, (double)sx, zx, z0, qmin, qmax, (double)LD_SMALL_SCALE, 0.1);
    const double *xs = par_rt_scales(x);
    for (int64_t i = 0; i < x->numel; i++) {
        double t = (double)xf[i] / (double)sx, r = t - remainder(t, 1.0);
        qx[i] = fmin(fmax(r + zx, qmin), qmax);
        double f = t + zx;
        alt[i] = fabs(f - floor(f) - 0.5) <= LD_WIN * (fabs(t) + fabs((double)zx) + 1) ||
                 (zp_tie && (r + zx + 1 > qmax || r + zx - 1 < qmin));
        el[i] = par_dynq_elem_of(&dq, x->v[i], x->e[i], xs[i], t, qx[i]);
    }
    const double u = c->prec.u, us = c->prec.u_store;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t o = 0; o < oo; o++) {
            const double sw = wv->quant_axis == 0 ? (double)wv->channel_scales[o] : (double)wv->scale;
            const double zw = wv->quant_axis == 0 ? 0 : (double)wv->zero_point;
            double acc = 0, ties = 0;
            par_dynq_acc pa = {0};
            for (int64_t k = 0; k < kk; k++) {
                double cw = w->v[o * kk + k] - zw, xi = qx[r * kk + k] - zx;
                acc += xi * cw; /* integers below 2^53: exact */
                if (alt[r * kk + k]) ties += fabs(cw);
                par_dynq_add(&dq, &pa, sw * cw, &el[r * kk + k]);
            }
            double yacc = acc * (double)sx * sw, bias = b ? b->v[o] : 0;
            double yv = yacc + bias;
            double e = (double)sx * sw * ties + 4 * u * fabs(yacc) + us * fabs(yv);
            if (b) e += b->e[o];
            double pe, ps;
            par_dynq_finish(&dq, &pa, &pe, &ps);
            double s = e + ps;
            e += pe;
            y->v[r * oo + o] = yv;
            y->e[r * oo + o] = e;
            if (y->s) y->s[r * oo + o] = s < e ? s : e;
        }
    free(xf), free(qx), free(alt), free(el);
    return PAR_OK;
}
