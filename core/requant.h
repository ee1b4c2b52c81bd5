/*
 * requant.h - the three requantization schemes of quantized (qu8/qs8) ops, bit-exact, side by side under one
 * signature, and their parameter builders (docs/quantization.md).
 *
 * Requantization maps an integer accumulator acc, whose real value is acc * s_acc, to the output's stored integer
 * q = clamp(zp + round(acc * r), qmin, qmax) where r = s_acc / s_out is the real scale ratio. The schemes differ only
 * in how r is represented and how the product is rounded:
 *   fp32     r as a float; (float)acc * r in float; round to nearest even (XNNPACK "fp32").
 *   rndnu    r as a 24-bit mantissa m and a right shift n (r_float = m * 2^-n exactly); 64-bit product; add 2^(n-1),
 *            arithmetic shift right: round half up (toward +inf) of the exact product (XNNPACK "rndnu").
 *   gemmlowp r as a Q31 multiplier M in [2^30, 2^31) and an exponent; saturating rounding doubling high multiply
 *            (round half away from zero), then rounding divide by a power of two (round half away from zero): two
 *            roundings (gemmlowp, TFLite, NNAPI).
 *   rndna    rndnu's representation; the exact product rounded half away from zero (XNNPACK "rndna", formerly
 *            "precise").
 *   pytorch_qnnp  PyTorch's QNNPACK: fp32 for conv, linear, averages and products; its add formula (22-bit
 *            multipliers) rounds half away from zero (pytorch_qnnp_add_quantize).
 * They agree except near ties of the exact product, where they differ by one step.
 *
 * Backends may use these functions directly (they are header-declared, plain C, no harness dependency beyond
 * parity_backend.h) so that the reference and the backend share one definition of the arithmetic. This module must
 * not allocate, must not read global state, and must stay bit-exact: never "improve" the rounding here.
 */
#ifndef PAR_REQUANT_H
#define PAR_REQUANT_H

#include <math.h>
#include <stdint.h>

#include "parity_backend.h"

#define PAR_REQUANT_N_SCHEMES 6

/* Parameters of one requantization, built once per output tensor (or per output channel) at prepare time. */
typedef struct par_requant_params {
    par_requant scheme;
    double real_scale;   /* the real ratio r = s_acc / s_out the params were built from (double) */
    float scale;         /* fp32: r rounded to float (as XNNPACK computes it; see par_requant_scale_f32) */
    int32_t multiplier;  /* rndnu, rndna: 24-bit mantissa in [2^23, 2^24); gemmlowp: Q31 multiplier in [2^30, 2^31) */
    int32_t shift;       /* rndnu, rndna: right shift in [16, 56); gemmlowp: TFLite's exponent (> 0: left shift of the
                          * input, < 0: rounding right shift), in [-31, 30] */
    int64_t rounding;    /* rndnu, rndna: 2^(shift - 1) */
    int32_t zero_point;  /* output zero point */
    int32_t qmin, qmax;  /* output clamp in stored integers (fused activation already folded in) */
} par_requant_params;

/* Scheme names, "fp32", "rndnu", "gemmlowp", "rndna", "pytorch_qnnp", "gemmlowp_android"; NULL for an unknown
 * value. */
const char *par_requant_name(par_requant s);
/* Parse a name; returns 0 and sets *s, or -1 for an unknown name. */
int par_requant_parse(const char *name, par_requant *s);

/* The ratio r = in_scale * w_scale / out_scale computed in float, left to right, as XNNPACK computes its
 * requantization scale (conv, linear). The fp32 and rndnu schemes use this float; gemmlowp uses the double product
 * (par_requant_scale_f64), as TFLite does. */
float par_requant_scale_f32(float in_scale, float w_scale, float out_scale);
double par_requant_scale_f64(float in_scale, float w_scale, float out_scale);
/* Android's GetQuantizedConvolutionMultipler (NNAPI's CPU path, levels 28-30): in_scale * w_scale rounded to float,
 * then divided by out_scale in double. The ratio of gemmlowp_android. */
double par_requant_scale_android(float in_scale, float w_scale, float out_scale);

/* Build the params of `scheme` for the real ratio `scale`, output zero point and clamp [qmin, qmax]. The fp32 and
 * rndnu schemes round `scale` to float first (pass par_requant_scale_f32's result converted to double to match
 * XNNPACK bit for bit). Valid ratios: 2^-32 <= scale < 256 (XNNPACK's range for rndnu; also accepted for the others).
 * PAR_ERROR with the reason otherwise, or when qmin > qmax or the zero point is outside [-128, 255]. */
par_status par_requant_params_init(par_requant_params *p, par_requant scheme, double scale, int32_t zero_point,
                                   int32_t qmin, int32_t qmax, par_msg *msg);

/* The params of a conv / linear / mul output (per tensor, or per output channel with that channel's weight scale):
 * the ratio in_scale * w_scale / out_scale computed as the scheme's anchor does (float for fp32 and rndnu, double
 * for gemmlowp), then par_requant_params_init. For mul, w_scale is the second input's scale. */
par_status par_requant_params_for(par_requant_params *p, par_requant scheme, float in_scale, float w_scale,
                                  float out_scale, int32_t zero_point, int32_t qmin, int32_t qmax, par_msg *msg);

/* One requantization each. acc is the exact integer accumulator; it is first saturated to int32 (backends
 * accumulate in int32: an accumulator outside it is a graph the reference flags, not a scheme matter). The result is
 * the stored output integer, clamped to [qmin, qmax]. */
int32_t par_requant_fp32(int64_t acc, const par_requant_params *p);
int32_t par_requant_rndnu(int64_t acc, const par_requant_params *p);
int32_t par_requant_gemmlowp(int64_t acc, const par_requant_params *p);
int32_t par_requant_rndna(int64_t acc, const par_requant_params *p);
/* Dispatch on p->scheme (pytorch_qnnp requantizes as fp32). */
int32_t par_requant_apply(int64_t acc, const par_requant_params *p);

/* The gemmlowp primitives, exposed for backends and tests (gemmlowp/fixedpoint/fixedpoint.h semantics). */
int32_t par_requant_srdhm(int32_t a, int32_t b);              /* SaturatingRoundingDoublingHighMul */
int32_t par_requant_rdivpot(int32_t x, int32_t exponent);     /* RoundingDivideByPOT, 0 <= exponent <= 31 */

/* Quantized add, the one integer formula of docs/quantization.md ("add"), shared by every scheme except for the
 * final rounding: with r_a = a_scale / out_scale and r_b = b_scale / out_scale computed in float, `shift` chosen so
 * that the larger of them times 2^shift lies in [2^20, 2^21), m_a = lrintf(ldexpf(r_a, shift)) (likewise m_b),
 *   acc = m_a (qa - za) + m_b (qb - zb)   (exact; |acc| < 2^30)
 *   q   = clamp(zp + round_scheme(acc / 2^shift), qmin, qmax)
 * where round_scheme is round-half-even (fp32), round-half-up (rndnu, which is XNNPACK's qs8/qu8 vadd bit for bit)
 * or round-half-away-from-zero (gemmlowp, rndna). pytorch_qnnp is PyTorch QNNPACK's q8vadd
 * (pytorch_qnnp_compute_scalar_add_quantization_params and pytorch_qnnp_add_quantize): the same formula with the
 * larger multiplier in [2^21, 2^22) (shift one more), rounded half away from zero. Both ratios must lie in
 * [2^-10, 2^8) (XNNPACK's and QNNPACK's range). */
typedef struct par_requant_add_params {
    par_requant scheme;
    int32_t a_multiplier, b_multiplier;
    int32_t a_zero_point, b_zero_point;
    int32_t shift;       /* in [12, 31] */
    int32_t zero_point, qmin, qmax;
} par_requant_add_params;

par_status par_requant_add_params_init(par_requant_add_params *p, par_requant scheme, float a_scale, int32_t a_zp,
                                       float b_scale, int32_t b_zp, float out_scale, int32_t out_zp, int32_t qmin,
                                       int32_t qmax, par_msg *msg);
int32_t par_requant_add(int32_t qa, int32_t qb, const par_requant_add_params *p);
/* The final step alone: clamp(zp + round_scheme(acc / 2^shift)) of an accumulator acc = m_a (qa - za) + m_b (qb -
 * zb) computed elsewhere (broadcasting loops). */
int32_t par_requant_add_acc(int64_t acc, const par_requant_add_params *p);

/* Tie rules: how a value exactly halfway between two integers k and k + 1 rounds. */
typedef enum par_tie_rule {
    PAR_TIE_EVEN = 0,  /* to the even one */
    PAR_TIE_AWAY = 1,  /* away from zero */
    PAR_TIE_UP = 2,    /* toward +infinity */
    PAR_TIE_DOWN = 3,  /* toward -infinity */
    PAR_TIE_ZERO = 4,  /* toward zero */
} par_tie_rule;
#define PAR_TIE_N_RULES 5

/* "even", "away", "up", "down", "zero"; NULL for an unknown value. */
const char *par_tie_rule_name(par_tie_rule r);
/* Words for a reason: "half to even", "half away from zero", ... */
const char *par_tie_rule_words(par_tie_rule r);
/* The integer a rule picks for the tie t = k + 1/2 (t a half-integer, before the zero point). */
double par_tie_round(double t, par_tie_rule r);
/* The tie rule of a scheme's requantization (add: 0) or of its add formula (add: 1). */
par_tie_rule par_requant_tie_rule(par_requant s, int add);

/* Ties of a scheme's own arithmetic: 1 when acc requantized by p lands exactly halfway between two integers before
 * its final rounding, with *t that value (k + 1/2, before the zero point and the clamp); 0 otherwise. fp32 and
 * pytorch_qnnp: the float product (float)acc * scale; rndnu and rndna: the 64-bit product acc * m over 2^shift;
 * gemmlowp: the SRDHM result over 2^right (its final rounding; the first may itself have rounded). The rule that
 * decides such a tie is par_requant_tie_rule's. */
int par_requant_tie(int64_t acc, const par_requant_params *p, double *t);
/* How far, in output steps, a scheme's arithmetic may move a value before its final rounding: gemmlowp's SRDHM
 * rounds acc * m / 2^31 to an integer in units of 2^-right output steps, so up to 2^-(right + 1) (0.25 for a ratio in
 * [1/4, 1/2): the value 10.42 can come out as 10.5 and round to 11); the other schemes round once (their multiplier's
 * own rounding is within the tie window). */
double par_requant_slack(const par_requant_params *p);
/* The same for the add formula: acc / 2^shift exactly halfway. */
int par_requant_add_tie(int64_t acc, const par_requant_add_params *p, double *t);

/* The lookup table of an elementwise function f for a quantized input (qmin..qmax of in_dtype, per-tensor in_scale,
 * in_zp) and output (out_scale, out_zp, [out_qmin, out_qmax]): table[q - in_qmin] = the fp32-scheme quantization of
 * f(in_scale * (q - in_zp)) computed in double: clamp(out_zp + round_half_even(f(x) / out_scale)). The table is the
 * same under every scheme (it is how every LUT-based backend builds it, in float; a backend that builds it in float
 * may differ by one step on ties, which the oracle labels). 256 entries. */
void par_requant_lut(double (*f)(double), par_dtype in_dtype, float in_scale, int32_t in_zp, float out_scale,
                     int32_t out_zp, int32_t out_qmin, int32_t out_qmax, uint8_t table[256]);
/* The same table from the function's values fx[q - in_qmin] = f(in_scale * (q - in_zp)) computed elsewhere (the
 * reference evaluates them with the op's own float kernel). */
void par_requant_lut_values(const double fx[256], float out_scale, int32_t out_zp, int32_t out_qmin,
                            int32_t out_qmax, uint8_t table[256]);

/* Output clamp of a quantized node with fused activation: [qmin, qmax] of the dtype intersected with the real range
 * [lo, hi] quantized as zp + round_half_away(bound / scale) (TFLite's CalculateActivationRangeQuantized); lo =
 * -INFINITY / hi = INFINITY for none. */
void par_requant_clamp_range(par_dtype dt, float scale, int32_t zp, double lo, double hi, int32_t *qmin,
                             int32_t *qmax);

/* The run-time quantization parameters of a dynamically quantized input (linear_dynamic, PyTorch's
 * quantized::linear_dynamic): ChooseQuantizationParams (aten/src/ATen/native/quantized/cpu/QuantUtils.h, sparsity
 * preservation and power-of-two scales off) over [min(mn, 0), max(mx, 0)], in PyTorch's precisions: qmin 0, qmax 255
 * (127 with reduce_range); the scale ((double)max - min) / (qmax - qmin), 0.1 when its float is 0 or its reciprocal
 * overflows, at least 6.1e-5 with the range widened as PyTorch widens it; the zero point qmin - min / scale or qmax -
 * max / scale, whichever error term |qmin| - |min / scale|, |qmax| - |max / scale| is smaller, clamped to [qmin,
 * qmax], else rounded to nearest. *scale is the scale's float. z_ideal and range_min (either may be NULL) receive the
 * unrounded zero point and the range's low end after widening (the reference's tie analysis reads them). A NaN from
 * non-finite mn or mx gives the zero point qmin (no result is defined there; the reference refuses such input). */
void par_requant_dynamic_qparams(float mn, float mx, int reduce_range, float *scale, int32_t *zero_point,
                                 double *z_ideal, double *range_min);

/* The per-row (per-token) quantization parameters of linear_8da4w's activations, XNNPACK's qd8 rule
 * (xnn_f32_qd8_asymmetric_quantization_params), all in f32 over the row's k elements: lo = min(0, min x), hi =
 * max(0, max x); inv = lo == hi ? 1 : 255 / (hi - lo); the zero point -128 - lo inv when (-128 + lo inv) + (127 + hi
 * inv) > 0, else 127 - hi inv, clamped to [-128, 127] and rounded half to even; the dequantizing scale 1 / inv.
 * Each element then quantizes to clamp(rint(x inv) + zp, -128, 127), the product rounded to f32 (par_requant_qd8).
 * 0 when the row has no parameters (a non-finite element, or inv or 1 / inv not finite or 0). The reference and
 * qnnpack both call it, so their parameters are the same bits. */
int par_requant_qd8_qparams(const float *x, int64_t k, float *inv, float *sx, int32_t *zp);
/* One element's qd8 integer, clamp(rint(x * inv) + zp, -128, 127), x * inv rounded to f32 (no FMA: nothing to
 * contract), rint half to even. */
static inline int32_t par_requant_qd8(float x, float inv, int32_t zp)
{
    const float t = x * inv;
    const float r = rintf(t) + (float)zp;
    return (int32_t)(r < -128.0f ? -128.0f : r > 127.0f ? 127.0f : r);
}

#endif
