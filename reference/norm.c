/*
 * norm.c - the float64 reference kernel of batch_norm (inference form, docs/ops.md), with the
 * error budget of every output element (docs/budgets/elementwise.md).
 *
 * y = (x - mean[c]) / sqrt(var[c] + eps) * weight[c] + bias[c], c = dims[1] index of the element. The kernel
 * evaluates the definition directly in float64; it sees float tensors only and must not allocate.
 *
 * Budget. Backends either fold the parameters, s = w / sqrt(var + eps), t = b - mean * s, y = x * s + t, or evaluate
 * directly. Counting roundings (u each, relative to the intermediate's magnitude):
 *   sqrt(var + eps): eps to the format (u, relative to var + eps at most), the add (u), both halved by sqrt, sqrt
 *     itself (u): 2u relative; a reciprocal square root and a multiply instead of a division: one more u;
 *   folded:  s: 2u + 2u = 4u relative; mean * s: 5u |mean s|; t: + u|t|; x * s: 5u |x s|; y: + u|y|;
 *   direct:  x - mean: u|x - mean|; the division or rsqrt-multiply: 3u + u; * w: u; + b: u|y|: 6u |(x - mean) s| + u|y|.
 *   own = 6u |s| (|x| + |mean|) + u |t| + u |y|, which covers both (|x - mean| <= |x| + |mean|).
 * Propagation (first order; parameters usually carry 0): |s| (e_x + e_mean) + e_bias + |x - mean| / sqrt(var + eps)
 *   e_weight + |x - mean| |w| e_var / (2 (var + eps - e_var)^(3/2)) (+inf when e_var reaches var + eps).
 * Storage: u_s (|y| + p + own). Held magnitudes (value plus budget) are used throughout.
 */
#include "reference.h"
#include "elem_util.h"

#include "core/shape.h"

#include <math.h>

par_status par_ref_batch_norm(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    for (int32_t i = 0; i < 5; i++) {
        if (!in[i])
            return par_msgf(msg, PAR_ERROR, "batch_norm: input %d (%s) is required", (int)i, par_batch_norm_inputs[i]);
        if (!is_float(in[i]->dtype))
            return par_msgf(msg, PAR_UNSUPPORTED, "batch_norm: input %d (%s): dtype %s reached the float kernel (only "
                            "f32, f16, f64)", (int)i, par_batch_norm_inputs[i], par_dtype_name(in[i]->dtype));
    }
    const par_rt *x = in[0], *w = in[1], *b = in[2], *mean = in[3], *var = in[4];
    par_rt *y = out[0];
    if (!y || x->rank < 2 || y->numel != x->numel)
        return par_msgf(msg, PAR_ERROR, "batch_norm: input 0 (x) must have rank >= 2 and match the output");
    int64_t ch = x->dims[1];
    for (int32_t i = 1; i < 5; i++)
        if (in[i]->numel != ch)
            return par_msgf(msg, PAR_ERROR, "batch_norm: input %d (%s) has %lld elements, expected %lld", (int)i,
                            par_batch_norm_inputs[i], (long long)in[i]->numel, (long long)ch);
    double eps = par_attr_float(c->n, "eps", 1e-5);
    if (!(eps > 0)) return par_msgf(msg, PAR_ERROR, "batch_norm: attribute 'eps': %g, must be > 0", eps);
    for (int64_t k = 0; k < ch; k++)
        if (!(var->v[k] >= 0))
            return par_msgf(msg, PAR_ERROR, "batch_norm: input 4 (running_var): element %lld is %g, must be >= 0",
                            (long long)k, var->v[k]);
    int64_t inner = 1;
    for (int32_t i = 2; i < x->rank; i++) inner *= x->dims[i];
    const double u = c->prec.u, us = c->prec.u_store;
    for (int64_t i = 0; i < x->numel; i++) {
        int64_t k = (i / inner) % ch;
        double ve = var->v[k] + eps, sq = sqrt(ve);
        double s = w->v[k] / sq;
        double d = x->v[i] - mean->v[k];
        double v = d / sq * w->v[k] + b->v[k];
        double ex = x->e[i], em = mean->e[k], ew = w->e[k], eb = b->e[k], ev = var->e[k];
        double da = fabs(d) + ex + em; /* |x' - mean'| */
        double p = fabs(s) * (ex + em) + eb + da / sq * ew;
        if (ev > 0) p += ve - ev > 0 ? da * (fabs(w->v[k]) + ew) * ev / (2 * pow(ve - ev, 1.5)) : INFINITY;
        /* |s'| over the held parameters */
        double sa = (ew > 0 || ev > 0) ? (ve - ev > 0 ? (fabs(w->v[k]) + ew) / sqrt(ve - ev) : INFINITY) : fabs(s);
        double t = b->v[k] - mean->v[k] * s;
        double own = 6 * u * sa * (fabs(x->v[i]) + ex + fabs(mean->v[k]) + em) + u * (fabs(t) + eb + sa * em) +
                     u * (fabs(v) + p) + par_eta(&c->prec, 3) * (1 + sa); /* flushing: x - mean, the product, s */
        double tot = p + own + us * (fabs(v) + p + own);
        y->v[i] = v;
        y->e[i] = (isfinite(v) && tot == tot) ? tot : INFINITY;
    }
    return PAR_OK;
}
