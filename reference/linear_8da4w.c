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
 * Per row r of x (all in f32, as XNNPACK's xnn_f32_qd8_asymmetric_quantization_params; par_requant_qd8_qparams):
 *   lo = min(0, min x), hi = max(0, max x); inv = lo == hi ? 1 : 255 / (hi - lo)
 *   zp = rint(clamp((-128 + lo inv) + (127 + hi inv) > 0 ? -128 - lo inv : 127 - hi inv, -128, 127))
 *   q_k = clamp(rint(x_k * inv) + zp, -128, 127) (the product rounded to f32, rint ties to even); s_x = 1 / inv in f32
 * Per output o and block b: acc_b = sum_{k in b} (q_k - zp) w_k, exact in int32. The value is the exact real
 *   y = s_x sum_b acc_b s_w[o, b] + bias[o].
 *
 * Budget. A correct backend differs by:
 *   (a) ties of the activation quantization: where x_k inv lies within 2^-20 (|x_k inv| + 1) of a half-integer,
 *       q_k may be the other neighbour (x / s_x in place of x * inv, an FMA, a reciprocal rounded differently);
 *       each such alternative moves y by s_x s_w[o, b] |w_k|, summed worst case. Not for a backend that promises
 *       the scheme's integers (prec.requant_exact, qnnpack): it computes this rule's q_k exactly
 *       (par_requant_qd8_qparams, the product in f32, rint half to even), so a tie rounded another way fails.
 *   (b) the f32 arithmetic: acc_b converted to f32, times s_w[o, b], times s_x (per block or once), and the
 *       zero point's part either inside acc_b or split off as zp sum_k w_k (XNNPACK precomputes it with the packed
 *       weights), each of the 2 nb + 1 terms (nb blocks, split, and the bias) summed in any order: par_gamma(2 nb +
 *       5, u) times the sum of magnitudes s_x s_w[o, b] M_b + |bias|, with M_b = |sum q_k w_k| + |zp sum w_k| >=
 *       |acc_b| (4 roundings per term before the sum of 2 nb + 1 terms), plus the store u_store |y|.
 *   (c) inputs with budgets (x from a float op): per row, a correct backend quantizes its own x' (within the
 *       budgets) with its own scale and zero point; dynq.h bounds the output's move (the integer offsets' reach and
 *       the scale's move; half a step of each dequantized value around its input, through rule 5 with the inputs'
 *       scales; the two mixed per element) and takes the smallest; a row that may be all 0 may take the empty
 *       range's scale 1, and only the half-step bound holds there.
 * A row with a NaN, an infinity, or a range whose scale is not finite has no quantization parameters: its outputs
 * are anything. It must not allocate memory that outlives the call.
 */
#include "reference.h"
#include "dynq.h"
#include "core/requant.h"
#include "core/shape.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define Q4_WIN 0x1p-20

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
    const int64_t kk = x->dims[x->rank - 1], oo = w->dims[0], blk = par_attr_int(c->n, "block", 32), nb = kk / blk;
    const int64_t rows = kk > 0 ? x->numel / kk : 0;
    const double u = c->prec.u, us = c->prec.u_store, g = par_gamma(2 * nb + 5, u);
    float *xf = malloc(sizeof *xf * (size_t)(kk + 1));
    double *q = malloc(sizeof *q * (size_t)(kk + 1));
    unsigned char *alt = malloc((size_t)(kk + 1));
    par_dynq_elem *el = malloc(sizeof *el * (size_t)(kk + 1));
    if (!xf || !q || !alt || !el) {
        free(xf), free(q), free(alt), free(el);
        return par_msgf(msg, PAR_ERROR, "linear_8da4w: out of memory");
    }
    const double *xsc = par_rt_scales(x);
    par_int4 form;
    par_int4_form(c->n, &form); /* checked by par_8da4w_shape */
    for (int64_t r = 0; r < rows; r++) {
        const double *xv = x->v + r * kk, *xe = x->e + r * kk;
        double lo = 0;
        for (int64_t k = 0; k < kk; k++) {
            xf[k] = (float)xv[k];
            lo = fmin(lo, (double)xf[k]);
        }
        float inv, sx;
        int32_t zp;
        if (!par_requant_qd8_qparams(xf, kk, &inv, &sx, &zp)) {
            for (int64_t o = 0; o < oo; o++) {
                y->v[r * oo + o] = NAN;
                y->e[r * oo + o] = INFINITY;
                par_mark_any(c, r * oo + o);
            }
            continue;
        }
        /* (c): the row's quantization as a correct backend may hold it (dynq.h); the zero point's ideal value is
         * -128 - lo inv (the rule's other form, 127 - hi inv, is the same up to roundings the window covers); an
         * empty range's scale is 1 */
        par_dynq dq;
        par_dynq_row(&dq, xv, xe, kk, (double)sx, zp, -128.0 - lo * (double)inv, -128, 127, 0, 1.0);
        for (int64_t k = 0; k < kk; k++) {
            const double t = (double)(float)((double)xf[k] * (double)inv), f = t - floor(t);
            q[k] = fmin(fmax(nearbyint(t) + zp, -128), 127);
            alt[k] = !c->prec.requant_exact && fabs(f - 0.5) <= Q4_WIN * (fabs(t) + 1);
            el[k] = par_dynq_elem_of(&dq, xv[k], xe[k], xsc[r * kk + k], t, q[k]);
        }
        for (int64_t o = 0; o < oo; o++) {
            const double *wrow = w->v + o * (kk / 2);
            double sum = 0, mag = 0, ties = 0, serr = 0;
            par_dynq_acc pa = {0};
            for (int64_t bi = 0; bi < nb; bi++) {
                const double s = sw->v[o * nb + bi];
                double acc = 0, qw = 0, wsum = 0;
                for (int64_t k = bi * blk; k < (bi + 1) * blk; k++) {
                    const int wk = par_int4_of(&form, (int)wrow[k / 2], k);
                    acc += (q[k] - zp) * wk; /* integers below 2^53: exact */
                    qw += q[k] * wk;
                    wsum += wk;
                    if (alt[k]) ties += fabs(s * wk);
                    par_dynq_add(&dq, &pa, s * wk, &el[k]);
                }
                sum += acc * s;
                serr += fabs(acc) * sw->e[o * nb + bi]; /* a scale with a budget (0 for constants) */
                mag += (fabs(qw) + fabs(zp * wsum)) * fabs(s);
            }
            const double bias = b ? b->v[o] : 0, yv = (double)sx * sum + bias;
            double e = g * ((double)sx * mag + fabs(bias)) + us * fabs(yv) + (double)sx * (ties + serr), pe, ps;
            if (b) e += b->e[o];
            par_dynq_finish(&dq, &pa, &pe, &ps);
            y->v[r * oo + o] = yv;
            y->e[r * oo + o] = e + pe;
            if (y->s) y->s[r * oo + o] = e + ps;
        }
    }
    free(xf), free(q), free(alt), free(el);
    return PAR_OK;
}
