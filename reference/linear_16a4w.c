/*
 * linear_16a4w.c - the reference of linear_16a4w (docs/quantization.md, "16a4w"): int16 activations (qs16, zero
 * point 0) times signed 4-bit weights packed two per byte, with one f32 scale per output channel and one small
 * integer multiplier per output channel and block of `block` inputs (Qualcomm's low-power blockwise quantization,
 * LPBQ: the block scale is s[o] m[o, b], so the whole sum stays one integer), an i32 bias, a qs16 output.
 *
 * Inputs: x qs16 [..., K]; weight qu8 [O, K / 2], the packed nibbles exactly as linear_8da4w's (read as the
 * attributes w4, w4_zp and nibbles declare, par_int4_form: by default byte j of row o holds weight k = 2j in bits
 * 0-3, k = 2j + 1 in bits 4-7, two's complement int4 in [-8, 7]; scale 1, zero point 0);
 * block scales qs8 [O, K / block] with per-channel scales on axis 0: the integers are the multipliers m[o, b], the
 * channel scales s[o] (each exactly a bfloat16 when the attribute scales is bf16), so the value's real numbers
 * s[o] m[o, b] are the block scales; optional bias i32 [O] whose
 * real value is q s_x s[o]. Per-channel weights are the case block = K, one multiplier (1) per channel.
 *
 * Integer form (ACC_LAST, reference/quant_ops.c): acc[o] = sum_b m[o, b] sum_{k in b} q_x[k] w[o, k] + q_b[o], then
 * requantized by the declared scheme with the ratio s_x s[o] / s_out per output channel, clamped to the int16 range.
 * This kernel computes it by expanding the weights to W[o, k] = w[o, k] * S[o, k / block] (S the block-scale input
 * as given: the multipliers when the interpreter runs it on integers, s[o] m[o, b] on reals; both products are exact
 * in double) and running linear's own kernel, so the index logic and the budget propagation are linear's.
 * It must not allocate memory that outlives the call.
 */
#include "reference.h"
#include "core/shape.h"

#include <stdlib.h>
#include <string.h>

static par_status check_values(const par_ref_ctx *c, par_msg *msg)
{
    const par_value *xv = &c->g->values[c->n->inputs[0]], *wv = &c->g->values[c->n->inputs[1]],
                    *sv = &c->g->values[c->n->inputs[2]], *yv = &c->g->values[c->n->outputs[0]];
    const par_value *bv = c->n->n_inputs > 3 && c->n->inputs[3] >= 0 ? &c->g->values[c->n->inputs[3]] : NULL;
    if (xv->dtype != PAR_DTYPE_QS16 || yv->dtype != PAR_DTYPE_QS16)
        return par_msgf(msg, PAR_UNSUPPORTED, "linear_16a4w: input 0 (x) and output 0 must be qs16 (got %s, %s)",
                        par_dtype_name(xv->dtype), par_dtype_name(yv->dtype));
    if (wv->dtype != PAR_DTYPE_QU8 || wv->quant_axis >= 0 || wv->scale != 1.0f || wv->zero_point != 0)
        return par_msgf(msg, PAR_ERROR, "linear_16a4w: input 1 (weight): packed int4 bytes must be qu8 with scale 1 "
                        "and zero point 0 (got %s, scale %g, zero point %d)", par_dtype_name(wv->dtype),
                        (double)wv->scale, (int)wv->zero_point);
    if (sv->dtype != PAR_DTYPE_QS8 || sv->quant_axis != 0 || !sv->channel_scales)
        return par_msgf(msg, PAR_ERROR, "linear_16a4w: input 2 (block scales): must be qs8 with per-channel scales "
                        "on axis 0 (the integer multipliers and the channel scales; got %s, axis %d)",
                        par_dtype_name(sv->dtype), (int)sv->quant_axis);
    if (bv && bv->dtype != PAR_DTYPE_I32)
        return par_msgf(msg, PAR_ERROR, "linear_16a4w: input 3 (bias): dtype %s, expected i32",
                        par_dtype_name(bv->dtype));
    return par_ref_w4_scales(c, NULL, 2, msg);
}

par_status par_ref_linear_16a4w(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    const par_rt *x = in[0], *w = in[1], *sw = in[2], *b = c->n->n_inputs > 3 ? in[3] : NULL;
    if (!x || !w || !sw || !out[0])
        return par_msgf(msg, PAR_ERROR, "linear_16a4w: inputs 0 (x), 1 (weight) and 2 (block scales) are required");
    par_status st = check_values(c, msg);
    if (st != PAR_OK) return st;
    int32_t yr;
    int64_t yd[PAR_MAX_RANK];
    if ((st = par_8da4w_shape(c->g, c->n, &yr, yd, msg)) != PAR_OK) return st;
    const int64_t kk = x->dims[x->rank - 1], oo = w->dims[0], blk = par_attr_int(c->n, "block", 32), nb = kk / blk;
    const int64_t wd[2] = {oo, kk};
    par_rt wx;
    if (par_rt_alloc(&wx, PAR_DTYPE_F64, 2, wd, msg) != PAR_OK) return PAR_ERROR;
    par_int4 f;
    par_int4_form(c->n, &f); /* checked by par_8da4w_shape */
    for (int64_t o = 0; o < oo; o++)
        for (int64_t k = 0; k < kk; k++) {
            const int64_t i = o * kk + k, s = o * nb + k / blk;
            wx.v[i] = par_int4_of(&f, (int)w->v[o * (kk / 2) + k / 2], k) * sw->v[s];
            wx.e[i] = 15 * sw->e[s]; /* 0 for the constants the op takes */
            wx.s[i] = 15 * par_rt_scales(sw)[s];
        }
    /* linear's kernel reads its bias at input 2 */
    par_node ln = *c->n;
    int32_t ids[3] = {c->n->inputs[0], c->n->inputs[1], b ? c->n->inputs[3] : -1};
    ln.inputs = ids;
    ln.n_inputs = b ? 3 : 2;
    par_ref_ctx lc = *c;
    lc.n = &ln;
    const par_rt *lin[3] = {x, &wx, b};
    st = par_ref_linear(&lc, lin, out, msg);
    par_rt_free(&wx);
    if (st != PAR_OK) {
        par_msg m = *msg;
        return par_msgf(msg, st, "linear_16a4w: %s", m.text);
    }
    return PAR_OK;
}
