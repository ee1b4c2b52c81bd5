/*
 * linear_8da4w.c - the float64 reference of linear_8da4w (docs/quantization.md, "linear_8da4w"): a linear layer with
 * dynamic int8 activations quantized per token (one scale and zero point per row of x, computed at run time as
 * XNNPACK's qd8 conversion does) and signed 4-bit weights packed two per byte with one f32 scale per output channel
 * and block of `block` inputs; f32 output.
 *
 * Inputs: x f32 [..., K]; weight qu8 [O, K / 2] whose bytes are the packed nibbles, read as the attributes w4, w4_zp
 * and nibbles declare (par_int4_form; by default byte j of row o holds weight k = 2j in bits 0-3, k = 2j + 1 in bits
 * 4-7, each a two's complement int4 in [-8, 7]; the value's own quantization parameters must be scale 1, zero point
 * 0); scales f32 [O, K / block], each exactly a bfloat16 when the attribute scales is bf16; optional bias f32 [O].
 *
 * x is quantized per row (a token) with XNNPACK's qd8 rule (par_requant_qd8_qparams) and the layer computed by the
 * loop linear_qd8 shares (qd8.c, whose header derives the value y = s_x sum_b acc_b s_w[o, b] + bias[o] and the
 * budget: ties of the activation quantization, the f32 epilogue over 2 nb + 1 terms, inputs with budgets through
 * dynq.h). Here: the weights' declared form read into integers, and the block scales with their budgets (0 for
 * constants). It must not allocate memory that outlives the call.
 */
#include "reference.h"
#include "qd8.h"
#include "core/requant.h"
#include "core/shape.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* With the attribute scales = "bf16", every float scale of input idx must be exactly a bfloat16 (par_f32_is_bf16):
 * linear_8da4w's block scales s (f32), linear_16a4w's channel scales of its block-scale value (qs8). */
par_status par_ref_w4_scales(const par_ref_ctx *c, const par_rt *s, int32_t idx, par_msg *msg)
{
    if (strcmp(par_attr_str(c->n, "scales", "f32"), "bf16") != 0) return PAR_OK;
    const par_value *v = &c->g->values[c->n->inputs[idx]];
    const int chan = v->dtype != PAR_DTYPE_F32;
    const int64_t n = !chan ? s->numel : v->channel_scales ? v->dims[v->quant_axis] : 1;
    for (int64_t i = 0; i < n; i++) {
        const float f = !chan ? (float)s->v[i] : v->channel_scales ? v->channel_scales[i] : v->scale;
        if (!par_f32_is_bf16(f))
            return par_msgf(msg, PAR_ERROR, "%s: input %d (%s): %s %lld is %.9g, not a bfloat16 (attribute scales is "
                            "bf16)", c->n->op, (int)idx, v->name, chan ? "channel scale" : "scale", (long long)i,
                            (double)f);
    }
    return PAR_OK;
}

static par_status check_inputs(const par_ref_ctx *c, const par_rt *const *in, par_msg *msg)
{
    const par_value *wv = &c->g->values[c->n->inputs[1]];
    if (in[0]->dtype != PAR_DTYPE_F32 || in[2]->dtype != PAR_DTYPE_F32 || (in[3] && in[3]->dtype != PAR_DTYPE_F32))
        return par_msgf(msg, PAR_UNSUPPORTED, "linear_8da4w: inputs 0 (x), 2 (scales) and 3 (bias) must be f32");
    if (wv->dtype != PAR_DTYPE_QU8 || wv->quant_axis >= 0 || wv->scale != 1.0f || wv->zero_point != 0)
        return par_msgf(msg, PAR_ERROR, "linear_8da4w: input 1 (weight): packed int4 bytes must be qu8 with scale 1 "
                        "and zero point 0 (got %s, scale %g, zero point %d)", par_dtype_name(wv->dtype),
                        (double)wv->scale, (int)wv->zero_point);
    return par_ref_w4_scales(c, in[2], 2, msg);
}

par_status par_ref_linear_8da4w(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    const par_rt *x = in[0], *w = in[1], *sw = in[2], *b = c->n->n_inputs > 3 ? in[3] : NULL;
    par_rt *y = out[0];
    if (!x || !w || !sw || !y)
        return par_msgf(msg, PAR_ERROR, "linear_8da4w: inputs 0 (x), 1 (weight) and 2 (scales) are required");
    const par_rt *ins[4] = {x, w, sw, b};
    par_status st = check_inputs(c, ins, msg);
    if (st != PAR_OK) return st;
    int32_t yr;
    int64_t yd[PAR_MAX_RANK];
    if ((st = par_8da4w_shape(c->g, c->n, &yr, yd, msg)) != PAR_OK) return st;
    if (!par_shape_equal(y->rank, y->dims, yr, yd))
        return par_msgf(msg, PAR_ERROR, "linear_8da4w: output 0: allocated shape does not match the inferred");
    const int64_t kk = x->dims[x->rank - 1], oo = w->dims[0], blk = par_attr_int(c->n, "block", 32);
    int8_t *wi = malloc((size_t)(oo * kk + 1));
    if (!wi) return par_msgf(msg, PAR_ERROR, "linear_8da4w: out of memory");
    par_int4 form;
    par_int4_form(c->n, &form); /* checked by par_8da4w_shape */
    for (int64_t o = 0; o < oo; o++)
        for (int64_t k = 0; k < kk; k++) wi[o * kk + k] = (int8_t)par_int4_of(&form, (int)w->v[o * (kk / 2) + k / 2], k);
    par_qd8_gemm m = {oo, kk, blk, kk / blk, wi, sw->v, sw->e, b, 0};
    st = par_ref_qd8_gemm(c, x, &m, y, msg);
    free(wi);
    return st;
}
