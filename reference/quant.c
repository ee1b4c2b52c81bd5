/*
 * quant.c - reference kernels of quantize (float -> qu8/qs8) and dequantize (qu8/qs8 -> f32),
 * docs/ops.md "Quantization", with the budget of every output element (docs/budgets/elementwise.md).
 *
 * These two kernels see quantized tensors directly: a qu8/qs8 par_rt holds the stored integer q in v and its budget
 * in steps of q in e. They must not allocate nor read anything but their input and the node's values.
 *
 * quantize: q = clamp(round_half_even(x / scale) + zp, qmin, qmax). A backend computes t = x / scale, or x * (1/scale),
 *   in its arithmetic (2u relative at most) from a held x' within e(x) of x: it rounds some value in [t - d, t + d],
 *   d = 2u|t| + e(x) / scale. Rounding is monotone, so the result lies between the smallest integer any value of
 *   that interval can round to, ceil(t - d - 1/2), and the largest, floor(t + d + 1/2), each shifted and clamped.
 *   The budget (in steps) is the larger distance from q to those two: e(x)/scale rounded out, plus one step when the
 *   interval reaches a tie k + 1/2.
 * dequantize: y = scale * (q - zp): the integer subtraction is exact, one multiply u|y|, storage u_s |y|,
 *   propagation scale * e(q). Per-channel scales (qs8 with quant_axis) are honoured.
 */
#include "reference.h"

#include <math.h>

#include "core/shape.h"

static double round_half_even(double x) { return x - remainder(x, 1.0); }

par_status par_ref_quantize(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    if (!in[0] || !out[0]) return par_msgf(msg, PAR_ERROR, "quantize: input 0 (x) is required");
    const par_rt *x = in[0];
    par_rt *y = out[0];
    const par_value *ov = &c->g->values[c->n->outputs[0]];
    if (x->dtype != PAR_DTYPE_F32 && x->dtype != PAR_DTYPE_F16 && x->dtype != PAR_DTYPE_F64)
        return par_msgf(msg, PAR_UNSUPPORTED, "quantize: input 0 (x): dtype %s, expected a float",
                        par_dtype_name(x->dtype));
    if (!par_dtype_is_quant(ov->dtype) || !(ov->scale > 0))
        return par_msgf(msg, PAR_ERROR, "quantize: output 0 must be qu8 or qs8 with scale > 0");
    if (y->numel != x->numel) return par_msgf(msg, PAR_ERROR, "quantize: output shape does not match");
    double qlo, qhi;
    par_quant_range(ov->dtype, &qlo, &qhi);
    const double scale = ov->scale, zp = ov->zero_point, u = c->prec.u;
    for (int64_t i = 0; i < x->numel; i++) {
        double t = x->v[i] / scale;
        double d = 2 * u * fabs(t) + x->e[i] / scale;
        double q = fmin(fmax(round_half_even(t) + zp, qlo), qhi);
        double lo = d > 0 ? ceil(t - d - 0.5) : round_half_even(t);
        double hi = d > 0 ? floor(t + d + 0.5) : round_half_even(t);
        lo = fmin(fmax(lo + zp, qlo), qhi);
        hi = fmin(fmax(hi + zp, qlo), qhi);
        double e = fmax(q - lo, hi - q);
        y->v[i] = q;
        y->e[i] = (isfinite(t) && e == e) ? e : INFINITY;
    }
    return PAR_OK;
}

par_status par_ref_dequantize(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    if (!in[0] || !out[0]) return par_msgf(msg, PAR_ERROR, "dequantize: input 0 (x) is required");
    const par_rt *x = in[0];
    par_rt *y = out[0];
    const par_value *iv = &c->g->values[c->n->inputs[0]];
    if (!par_dtype_is_quant(x->dtype))
        return par_msgf(msg, PAR_ERROR, "dequantize: input 0 (x): dtype %s is not quantized",
                        par_dtype_name(x->dtype));
    if (y->numel != x->numel) return par_msgf(msg, PAR_ERROR, "dequantize: output shape does not match");
    int64_t strides[PAR_MAX_RANK];
    par_rt_strides(x, strides);
    int per_channel = iv->quant_axis >= 0 && iv->quant_axis < x->rank && iv->channel_scales;
    const double u = c->prec.u, us = c->prec.u_store;
    for (int64_t i = 0; i < x->numel; i++) {
        double s = iv->scale;
        if (per_channel) s = iv->channel_scales[(i / strides[iv->quant_axis]) % x->dims[iv->quant_axis]];
        double v = s * (x->v[i] - iv->zero_point);
        double p = s * x->e[i];
        double own = u * (fabs(v) + p);
        double tot = p + own + us * (fabs(v) + p + own);
        y->v[i] = v;
        y->e[i] = tot == tot ? tot : INFINITY;
    }
    return PAR_OK;
}
