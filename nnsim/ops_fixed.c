/*
 * ops_fixed.c - the fixed-point arithmetic of Android's quantized LOGISTIC, TANH, SOFTMAX and HARD_SWISH:
 * gemmlowp's exp, 1 / (1 + x), logistic and tanh (gemmlowp/fixedpoint/fixedpoint.h; TFLite's optimized_ops for
 * uint8, reference_integer_ops for int8, Android's softmaxQuant8Impl), Q0.31 results; and TFLite's int16
 * reference_ops::HardSwish, which Android's hardSwishQuant calls.
 *
 * The arithmetic, restated: a product of two fixed-point numbers is SaturatingRoundingDoublingHighMul of the raw
 * values (integer bits add up); Rescale and the *ByPOT helpers are saturating left shifts or rounding right shifts;
 * exp on [-1/4, 0) is a 4th-order Taylor expansion around -1/8, extended to all negative inputs by a barrel shifter
 * over exp(-2^k); 1 / (1 + x) and (1 - x) / (1 + x) for x in (0, 1) are three Newton-Raphson steps from
 * 48/17 - 32/17 d. Constants are the raw values gemmlowp uses.
 * Must stay bit-exact: integers only, except where Android itself derives the HARD_SWISH multipliers in float.
 */
#include <math.h>
#include <stdint.h>

#include "nnsim.h"
#include "core/requant.h"

/* Wrapping int32 add and subtract, as the C++ source's plain int arithmetic behaves on every target. */
static int32_t add(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

static int32_t sub(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a - (uint32_t)b);
}

static int32_t mul(int32_t a, int32_t b)
{
    return par_requant_srdhm(a, b);
}

/* SaturatingRoundingMultiplyByPOT<exponent>. */
static int32_t mul_pot(int32_t x, int exponent)
{
    if (exponent > 0) {
        int32_t threshold = (int32_t)((1u << (31 - exponent)) - 1);
        if (x > threshold) return INT32_MAX;
        if (x < -threshold) return INT32_MIN;
        return (int32_t)((uint32_t)x << exponent);
    }
    return exponent < 0 ? par_requant_rdivpot(x, -exponent) : x;
}

/* RoundingHalfSum: (a + b) / 2 rounded half away from zero. */
static int32_t half_sum(int32_t a, int32_t b)
{
    int64_t s = (int64_t)a + b;
    return (int32_t)((s + (s >= 0 ? 1 : -1)) / 2);
}

/* exp(a) for a in [-1/4, 0), Q0.31 in and out. */
static int32_t exp_quarter(int32_t a)
{
    const int32_t constant_term = 1895147668; /* exp(-1/8) */
    const int32_t one_third = 715827883;
    int32_t x = add(a, 1 << 28); /* a + 1/8 */
    int32_t x2 = mul(x, x), x3 = mul(x2, x), x4 = mul(x2, x2);
    int32_t x4_over_4 = mul_pot(x4, -2);
    int32_t poly = mul_pot(add(mul(add(x4_over_4, x3), one_third), x2), -1);
    return add(constant_term, mul(constant_term, add(x, poly)));
}

/* exp(a) for a <= 0 in Q(int_bits).(31 - int_bits); Q0.31 result. */
int32_t nn_fixed_exp_negative(int32_t a, int int_bits)
{
    static const int32_t multipliers[7] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
    int frac = 31 - int_bits;
    int32_t quarter = (int32_t)1 << (frac - 2);
    int32_t a_mod = sub(a & (quarter - 1), quarter);
    int32_t result = exp_quarter(mul_pot(a_mod, int_bits)); /* Rescale<0> */
    int32_t remainder = sub(a_mod, a);
    for (int k = 0; k < 7; k++) { /* exp(-2^(k-2)) for each bit of the remainder */
        int exponent = k - 2;
        if (int_bits > exponent && (remainder & ((int32_t)1 << (frac + exponent))))
            result = mul(result, multipliers[k]);
    }
    if (int_bits > 5 && a < -((int32_t)1 << (36 - int_bits))) result = 0;
    return a == 0 ? INT32_MAX : result;
}

/* Three Newton-Raphson steps for 1 / d with d = half_den in [1/2, 1); Q2.29 result. */
static int32_t reciprocal_q2(int32_t half_den)
{
    int32_t x = add(1515870810, mul(half_den, -1010580540)); /* 48/17 - 32/17 d */
    for (int i = 0; i < 3; i++) {
        int32_t one_minus = sub((int32_t)1 << 29, mul(half_den, x));
        x = add(x, mul_pot(mul(x, one_minus), 2)); /* Q4 product rescaled to Q2 */
    }
    return x;
}

int32_t nn_fixed_one_over_one_plus_x(int32_t a)
{
    return mul_pot(reciprocal_q2(half_sum(a, INT32_MAX)), 1); /* Q1 read of the Q2 value (exact), then Q0 */
}

int32_t nn_fixed_logistic_q4(int32_t a)
{
    if (a == 0) return (int32_t)1 << 30;
    int32_t abs_a = a > 0 ? a : sub(0, a);
    int32_t e = nn_fixed_exp_negative(sub(0, abs_a), 4);
    int32_t pos = nn_fixed_one_over_one_plus_x(e);
    return a > 0 ? pos : sub(INT32_MAX, pos);
}

int32_t nn_fixed_tanh_q4(int32_t a)
{
    if (a == 0) return 0;
    int32_t n = a < 0 ? a : sub(0, a);
    int32_t e = nn_fixed_exp_negative(n, 5); /* exp(2n): the same raw value read as Q5.26 */
    int32_t t = mul_pot(sub(reciprocal_q2(half_sum(e, INT32_MAX)), (int32_t)1 << 29), 2); /* (1 - e) / (1 + e) */
    return a < 0 ? sub(0, t) : t;
}

/* ---- int16 fixed point for HARD_SWISH (TFLite's reference_ops::HardSwish, which Android's hardSwishQuant calls) */

static int16_t srdhm16(int16_t a, int16_t b) /* SaturatingRoundingDoublingHighMul<int16> */
{
    if (a == b && a == INT16_MIN) return INT16_MAX;
    int32_t ab = (int32_t)a * b;
    return (int16_t)((ab + (ab >= 0 ? (1 << 14) : (1 - (1 << 14)))) / (1 << 15));
}

static int16_t sdhm16(int16_t a, int16_t b) /* SaturatingDoublingHighMul: rounds toward zero */
{
    if (a == b && a == INT16_MIN) return INT16_MAX;
    return (int16_t)(((int32_t)a * b) / (1 << 15));
}

static int16_t rdivpot16(int16_t x, int exponent)
{
    int16_t mask = (int16_t)((1 << exponent) - 1), remainder = (int16_t)(x & mask);
    int16_t threshold = (int16_t)((mask >> 1) + (x < 0 ? 1 : 0));
    return (int16_t)((x >> exponent) + (remainder > threshold ? 1 : 0));
}

static int16_t sat_shift16(int16_t x, int amount)
{
    int64_t r = (int64_t)x * ((int64_t)1 << amount);
    return (int16_t)(r > INT16_MAX ? INT16_MAX : r < INT16_MIN ? INT16_MIN : r);
}

/* TFLite's DownScaleInt32ToInt16Multiplier: the Q31 multiplier's top 16 bits, rounded, saturated. */
static int16_t downscale16(int32_t m)
{
    if (m >= INT32_MAX - (1 << 15)) return INT16_MAX;
    return (int16_t)((m + (1 << 15)) >> 16);
}

int nn_fixed_hard_swish_params(float in_scale, float out_scale, nn_hswish_params *p)
{
    float hires = (1.0f / 128.0f) * in_scale;
    float reluish = hires / (3.0f / 32768.0f), output = hires / out_scale;
    int32_t m;
    int e;
    double q = frexp((double)output, &e);
    int64_t f = (int64_t)round(q * 2147483648.0);
    if (f == 2147483648LL) f /= 2, e++;
    m = (int32_t)f;
    if (e > 0) return 0; /* Android: output_multiplier_exponent must be <= 0 */
    p->out_mult = downscale16(m), p->out_exp = e;
    q = frexp((double)reluish, &e);
    f = (int64_t)round(q * 2147483648.0);
    if (f == 2147483648LL) f /= 2, e++;
    p->reluish_mult = downscale16((int32_t)f), p->reluish_exp = e;
    return 1;
}

int32_t nn_fixed_hard_swish(int32_t v, const nn_hswish_params *p)
{
    int16_t hires = (int16_t)(v * (1 << 7));
    int16_t preshift_out = srdhm16(hires, p->out_mult);
    int16_t r = hires;
    if (p->reluish_exp > 0) r = sat_shift16(r, p->reluish_exp - 1);
    r = srdhm16(r, p->reluish_mult);
    if (p->reluish_exp > 0) r = sat_shift16(r, 1);
    if (p->reluish_exp < 0) r = rdivpot16(r, -p->reluish_exp);
    r = (int16_t)((r + (1 << 15)) >> 1); /* [-1, 1] -> [0, 1] */
    return rdivpot16(sdhm16(r, preshift_out), -p->out_exp);
}
