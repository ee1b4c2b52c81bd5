/*
 * requant.c - the requantization schemes (fp32, rndnu, gemmlowp, rndna, pytorch_qnnp, gemmlowp_android), bit-exact, their tie rules, their parameter builders, the
 * quantized add formula, lookup tables of elementwise functions and fused-activation clamps (docs/quantization.md).
 *
 * Every function here is the definition a backend is compared against bit for bit: keep each one literal to the
 * arithmetic of its anchor (XNNPACK's scalar kernels, gemmlowp's fixedpoint.h, TFLite's QuantizeMultiplier), and
 * never replace an integer trick by "equivalent" float code. No allocation, no global state. Right shifts of negative
 * integers are implementation-defined in C: asr() below spells the arithmetic shift portably.
 */
#include "requant.h"

#include <math.h>
#include <string.h>

static const char *const scheme_names[PAR_REQUANT_N_SCHEMES] = {"fp32",  "rndnu",        "gemmlowp",
                                                                  "rndna", "pytorch_qnnp", "gemmlowp_android"};

/* gemmlowp and gemmlowp_android share the multiplier representation and the rounding; only the ratio differs. */
static int is_gemmlowp(par_requant s) { return s == PAR_REQUANT_GEMMLOWP || s == PAR_REQUANT_GEMMLOWP_ANDROID; }

const char *par_requant_name(par_requant s)
{
    return (unsigned)s < PAR_REQUANT_N_SCHEMES ? scheme_names[s] : NULL;
}

int par_requant_parse(const char *name, par_requant *s)
{
    for (int i = 0; i < PAR_REQUANT_N_SCHEMES; i++)
        if (name && strcmp(name, scheme_names[i]) == 0) {
            *s = (par_requant)i;
            return 0;
        }
    return -1;
}

/* Arithmetic shift right of a signed 64-bit integer, floor(x / 2^n), without relying on the implementation-defined
 * >> of negative values: for x < 0, ~x = -x - 1 >= 0 and floor(x / 2^n) = ~(~x >> n). */
static int64_t asr(int64_t x, int n) { return x >= 0 ? x >> n : ~(~x >> n); }

static int32_t sat32(int64_t x) { return x > INT32_MAX ? INT32_MAX : x < INT32_MIN ? INT32_MIN : (int32_t)x; }

static int32_t clamp_out(int64_t v, const par_requant_params *p)
{
    return v < p->qmin ? p->qmin : v > p->qmax ? p->qmax : (int32_t)v;
}

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

float par_requant_scale_f32(float in_scale, float w_scale, float out_scale)
{
    /* XNNPACK: `const float requantization_scale = input_scale * kernel_scale / output_scale;` evaluated in float
     * (FLT_EVAL_METHOD 0 on every target we build for): two roundings, left to right. */
    float t = in_scale * w_scale;
    return t / out_scale;
}

double par_requant_scale_f64(float in_scale, float w_scale, float out_scale)
{
    /* TFLite: `const double real_multiplier = (double)input_scale * (double)filter_scale / (double)output_scale`. */
    return (double)in_scale * (double)w_scale / (double)out_scale;
}

double par_requant_scale_android(float in_scale, float w_scale, float out_scale)
{
    /* Android's GetQuantizedConvolutionMultipler: `const float input_product_scale = inputShape.scale *
     * filterShape.scale;` then `*multiplier = input_product_scale / outputShape.scale;` with the quotient a double:
     * the product rounded to float (FLT_EVAL_METHOD 0), the division in double. */
    const float prod = in_scale * w_scale;
    return (double)prod / (double)out_scale;
}

/* TFLite's QuantizeMultiplier: m = q * 2^e with q in [0.5, 1) (frexp), q_fixed = round_half_away(q * 2^31); a q_fixed
 * of 2^31 (q rounded up to 1) is halved and the exponent incremented. The multiplier is thus a Q31 number in
 * [2^30, 2^31) and m ~ q_fixed * 2^(e - 31). */
static void quantize_multiplier(double m, int32_t *q_fixed, int32_t *exponent)
{
    int e = 0;
    double q = frexp(m, &e);
    int64_t qf = (int64_t)round(q * 2147483648.0);
    if (qf == (INT64_C(1) << 31)) {
        qf /= 2;
        e++;
    }
    *q_fixed = (int32_t)qf;
    *exponent = e;
}

par_status par_requant_params_init(par_requant_params *p, par_requant scheme, double scale, int32_t zero_point,
                                   int32_t qmin, int32_t qmax, par_msg *msg)
{
    memset(p, 0, sizeof *p);
    if ((unsigned)scheme >= PAR_REQUANT_N_SCHEMES)
        return par_msgf(msg, PAR_ERROR, "requant: unknown scheme %d", (int)scheme);
    if (!(scale >= 0x1p-32 && scale < 256.0))
        return par_msgf(msg, PAR_ERROR, "requant: scale ratio %g outside [2^-32, 256)", scale);
    if (zero_point < -128 || zero_point > 255)
        return par_msgf(msg, PAR_ERROR, "requant: zero point %d outside [-128, 255]", (int)zero_point);
    if (qmin > qmax) return par_msgf(msg, PAR_ERROR, "requant: clamp [%d, %d] is empty", (int)qmin, (int)qmax);
    p->scheme = scheme;
    p->real_scale = scale;
    p->zero_point = zero_point;
    p->qmin = qmin;
    p->qmax = qmax;
    /* fp32 and rndnu both start from the float ratio. Rounding a double in [2^-32, 256) to float cannot leave the
     * range's float counterpart except at the top (a double just under 256 rounds to 256.0f): refuse that. */
    p->scale = (float)scale;
    if (!is_gemmlowp(scheme) && !(p->scale < 256.0f))
        return par_msgf(msg, PAR_ERROR, "requant: scale ratio %.17g rounds to 256 in float", scale);
    if (scheme == PAR_REQUANT_RNDNU || scheme == PAR_REQUANT_RNDNA) {
        /* The float ratio is exactly m * 2^-n with m its 24-bit significand (implicit bit restored) and n = 127 + 23
         * - biased exponent: scale in [2^-32, 2^8) gives n in [16, 55], so acc * m (|acc| <= 2^31, m < 2^24) and
         * the rounding constant 2^(n-1) fit in 63 bits. The result is round-half-up of acc * scale_f exactly. */
        uint32_t bits = f32_bits(p->scale);
        p->multiplier = (int32_t)((bits & UINT32_C(0x007FFFFF)) | UINT32_C(0x00800000));
        p->shift = (int32_t)(127 + 23 - (bits >> 23));
        p->rounding = INT64_C(1) << (p->shift - 1);
    } else if (is_gemmlowp(scheme)) {
        quantize_multiplier(scale, &p->multiplier, &p->shift);
        if (p->shift < -31) return par_msgf(msg, PAR_ERROR, "requant: scale ratio %g below 2^-32", scale);
    }
    return PAR_OK;
}

par_status par_requant_params_for(par_requant_params *p, par_requant scheme, float in_scale, float w_scale,
                                  float out_scale, int32_t zero_point, int32_t qmin, int32_t qmax, par_msg *msg)
{
    if (!(in_scale > 0) || !(w_scale > 0) || !(out_scale > 0) || !isfinite(in_scale) || !isfinite(w_scale) ||
        !isfinite(out_scale))
        return par_msgf(msg, PAR_ERROR, "requant: scales %g, %g, %g must be finite and > 0", (double)in_scale,
                        (double)w_scale, (double)out_scale);
    double r = scheme == PAR_REQUANT_GEMMLOWP           ? par_requant_scale_f64(in_scale, w_scale, out_scale)
               : scheme == PAR_REQUANT_GEMMLOWP_ANDROID ? par_requant_scale_android(in_scale, w_scale, out_scale)
                                                        : (double)par_requant_scale_f32(in_scale, w_scale, out_scale);
    return par_requant_params_init(p, scheme, r, zero_point, qmin, qmax, msg);
}

/* fp32 (XNNPACK xnn_qs8_requantize_fp32 / the "fmagic" epilogue):
 *   f = (float)acc * scale          one float multiply: (float)acc is exact for |acc| <= 2^24 and rounds to nearest
 *                                   even beyond; the product is rounded to float;
 *   f = clamp(f, qmin - zp, qmax - zp)   in float, so that the magic-number trick below stays in range;
 *   q = bits(f + 12582912.0f) - (0x4B400000 - zp)
 * The magic number 12582912 = 1.5 * 2^23: for |f| < 2^22, f + 1.5*2^23 lies in [2^23, 2^24), where the float
 * spacing is exactly 1, so the addition rounds f to an integer with the current rounding mode (nearest even) and
 * that integer sits in the low mantissa bits: bits(1.5*2^23 + k) = 0x4B400000 + k. */
int32_t par_requant_fp32(int64_t acc, const par_requant_params *p)
{
    const float vmin = (float)(p->qmin - p->zero_point), vmax = (float)(p->qmax - p->zero_point);
    float f = (float)sat32(acc) * p->scale;
    f = f < vmin ? vmin : f;
    f = f > vmax ? vmax : f;
    f += 12582912.0f;
    return (int32_t)f32_bits(f) - (int32_t)(UINT32_C(0x4B400000) - (uint32_t)p->zero_point);
}

/* rndnu (XNNPACK xnn_qs8_requantize_rndnu, scalar): q = asr(acc * m + 2^(n-1), n), the exact product rounded half
 * up (toward +infinity on ties, also for negative products: -2.5 -> -2), then clamped and shifted by the zero point.
 * XNNPACK truncates the shifted value to int32 before clamping; we saturate, which only differs for accumulators and
 * ratios no real graph has (|acc * scale| >= 2^31). */
int32_t par_requant_rndnu(int64_t acc, const par_requant_params *p)
{
    int64_t prod = (int64_t)sat32(acc) * (int64_t)p->multiplier;
    int64_t v = asr(prod + p->rounding, p->shift);
    return clamp_out(v + p->zero_point, p);
}

/* rndna (XNNPACK xnn_qs8_requantize_rndna, scalar signed64; QNNPACK's "precise"): rndnu's product, minus one when
 * acc is negative, then rounded half up: a negative exact half (-2.5) becomes -2.5 - 2^-n, which rounds to -3, so
 * ties round away from zero for both signs and nothing else changes (the product of an integer and m is a multiple
 * of 2^-n, never strictly between it and the tie). */
int32_t par_requant_rndna(int64_t acc, const par_requant_params *p)
{
    int32_t a = sat32(acc);
    int64_t prod = (int64_t)a * (int64_t)p->multiplier - (a < 0 ? 1 : 0);
    int64_t v = asr(prod + p->rounding, p->shift);
    return clamp_out(v + p->zero_point, p);
}

/* gemmlowp SaturatingRoundingDoublingHighMul: the high 32 bits of 2ab, rounded half away from zero (the nudge is
 * +2^30 or 1 - 2^30, and the 64-bit division truncates toward zero); the one overflowing case, a = b = INT32_MIN,
 * saturates to INT32_MAX. */
int32_t par_requant_srdhm(int32_t a, int32_t b)
{
    if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
    int64_t ab = (int64_t)a * (int64_t)b;
    int64_t nudge = ab >= 0 ? (INT64_C(1) << 30) : (INT64_C(1) - (INT64_C(1) << 30));
    return (int32_t)((ab + nudge) / (INT64_C(1) << 31));
}

/* gemmlowp RoundingDivideByPOT: x / 2^e rounded half away from zero: floor division, then +1 when the remainder
 * exceeds half (for negative x the threshold is one more, so an exact half rounds toward -infinity after the floor,
 * i.e. away from zero). */
int32_t par_requant_rdivpot(int32_t x, int32_t exponent)
{
    if (exponent <= 0) return x;
    if (exponent > 31) exponent = 31;
    const int64_t mask = (INT64_C(1) << exponent) - 1;
    const int64_t rem = (int64_t)x & mask;
    const int64_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (int32_t)(asr(x, exponent) + (rem > threshold ? 1 : 0));
}

/* gemmlowp / TFLite MultiplyByQuantizedMultiplier: a positive exponent is a left shift of the input (TFLite
 * multiplies x by 2^shift in int32; we saturate instead of overflowing), then SRDHM by the Q31 multiplier, then a
 * rounding right shift by the negative part of the exponent. Two roundings, each half away from zero. */
int32_t par_requant_gemmlowp(int64_t acc, const par_requant_params *p)
{
    int32_t x = sat32(acc);
    int32_t left = p->shift > 0 ? p->shift : 0, right = p->shift > 0 ? 0 : -p->shift;
    if (left) x = sat32((int64_t)x * (INT64_C(1) << left));
    int32_t v = par_requant_rdivpot(par_requant_srdhm(x, p->multiplier), right);
    return clamp_out((int64_t)v + p->zero_point, p);
}

double par_requant_slack(const par_requant_params *p)
{
    if (p->scheme != PAR_REQUANT_GEMMLOWP && p->scheme != PAR_REQUANT_GEMMLOWP_ANDROID) return 0;
    const int32_t right = p->shift > 0 ? 0 : -p->shift;
    return right > 0 ? ldexp(1.0, -(right > 62 ? 63 : right + 1)) : 0;
}

int32_t par_requant_apply(int64_t acc, const par_requant_params *p)
{
    switch (p->scheme) {
    case PAR_REQUANT_RNDNU: return par_requant_rndnu(acc, p);
    case PAR_REQUANT_GEMMLOWP:
    case PAR_REQUANT_GEMMLOWP_ANDROID: return par_requant_gemmlowp(acc, p);
    case PAR_REQUANT_RNDNA: return par_requant_rndna(acc, p);
    case PAR_REQUANT_PYTORCH_QNNP:
    case PAR_REQUANT_FP32:
    default: return par_requant_fp32(acc, p);
    }
}

par_status par_requant_add_params_init(par_requant_add_params *p, par_requant scheme, float a_scale, int32_t a_zp,
                                       float b_scale, int32_t b_zp, float out_scale, int32_t out_zp, int32_t qmin,
                                       int32_t qmax, par_msg *msg)
{
    memset(p, 0, sizeof *p);
    if ((unsigned)scheme >= PAR_REQUANT_N_SCHEMES)
        return par_msgf(msg, PAR_ERROR, "requant add: unknown scheme %d", (int)scheme);
    if (!(a_scale > 0) || !(b_scale > 0) || !(out_scale > 0) || !isfinite(a_scale) || !isfinite(b_scale) ||
        !isfinite(out_scale))
        return par_msgf(msg, PAR_ERROR, "requant add: scales must be finite and > 0");
    if (qmin > qmax) return par_msgf(msg, PAR_ERROR, "requant add: clamp [%d, %d] is empty", (int)qmin, (int)qmax);
    const float ra = a_scale / out_scale, rb = b_scale / out_scale;
    if (!(ra >= 0x1p-10f && ra < 0x1p+8f) || !(rb >= 0x1p-10f && rb < 0x1p+8f))
        return par_msgf(msg, PAR_ERROR, "requant add: input/output scale ratios %g, %g outside [2^-10, 2^8)",
                        (double)ra, (double)rb);
    /* shift = 127 + 20 - biased exponent of the larger ratio: the larger multiplier is then in [2^20, 2^21) and,
     * with |q - z| <= 255, each product stays below 2^29 and their sum below 2^30. PyTorch's QNNPACK takes one bit
     * more (shift = 21 - unbiased exponent, multipliers below 2^22, the sum below 2^31). */
    const float rmax = ra > rb ? ra : rb;
    const int32_t shift = (int32_t)(127 + (scheme == PAR_REQUANT_PYTORCH_QNNP ? 21 : 20) - (f32_bits(rmax) >> 23));
    p->scheme = scheme;
    p->shift = shift;
    p->a_multiplier = (int32_t)lrintf(ldexpf(ra, shift));
    p->b_multiplier = (int32_t)lrintf(ldexpf(rb, shift));
    p->a_zero_point = a_zp;
    p->b_zero_point = b_zp;
    p->zero_point = out_zp;
    p->qmin = qmin;
    p->qmax = qmax;
    return PAR_OK;
}

int32_t par_requant_add(int32_t qa, int32_t qb, const par_requant_add_params *p)
{
    return par_requant_add_acc((int64_t)p->a_multiplier * (qa - p->a_zero_point) +
                                   (int64_t)p->b_multiplier * (qb - p->b_zero_point),
                               p);
}

int32_t par_requant_add_acc(int64_t acc, const par_requant_add_params *p)
{
    const int n = p->shift;
    const int64_t half = INT64_C(1) << (n - 1), mask = (INT64_C(1) << n) - 1;
    int64_t fl = asr(acc, n), rem = acc & mask, v;
    switch (p->scheme) {
    case PAR_REQUANT_RNDNU: v = asr(acc + half, n); break;                            /* half up */
    case PAR_REQUANT_GEMMLOWP:
    case PAR_REQUANT_GEMMLOWP_ANDROID:
    case PAR_REQUANT_RNDNA:
    case PAR_REQUANT_PYTORCH_QNNP: v = fl + (rem > half - (acc < 0 ? 0 : 1) ? 1 : 0); break; /* half away */
    case PAR_REQUANT_FP32:
    default: v = fl + (rem > half || (rem == half && (fl & 1)) ? 1 : 0); break;     /* half even */
    }
    v += p->zero_point;
    return v < p->qmin ? p->qmin : v > p->qmax ? p->qmax : (int32_t)v;
}

static const char *const tie_names[PAR_TIE_N_RULES] = {"even", "away", "up", "down", "zero"};
static const char *const tie_words[PAR_TIE_N_RULES] = {"half to even", "half away from zero", "half up",
                                                       "half down", "half toward zero"};

const char *par_tie_rule_name(par_tie_rule r) { return (unsigned)r < PAR_TIE_N_RULES ? tie_names[r] : NULL; }
const char *par_tie_rule_words(par_tie_rule r) { return (unsigned)r < PAR_TIE_N_RULES ? tie_words[r] : NULL; }

double par_tie_round(double t, par_tie_rule r)
{
    const double k = floor(t); /* t = k + 1/2 */
    switch (r) {
    case PAR_TIE_EVEN: return fmod(k, 2.0) == 0 ? k : k + 1;
    case PAR_TIE_AWAY: return t > 0 ? k + 1 : k;
    case PAR_TIE_UP: return k + 1;
    case PAR_TIE_DOWN: return k;
    case PAR_TIE_ZERO:
    default: return t > 0 ? k : k + 1;
    }
}

par_tie_rule par_requant_tie_rule(par_requant s, int add)
{
    switch (s) {
    case PAR_REQUANT_RNDNU: return PAR_TIE_UP;
    case PAR_REQUANT_GEMMLOWP:
    case PAR_REQUANT_GEMMLOWP_ANDROID:
    case PAR_REQUANT_RNDNA: return PAR_TIE_AWAY;
    case PAR_REQUANT_PYTORCH_QNNP: return add ? PAR_TIE_AWAY : PAR_TIE_EVEN;
    case PAR_REQUANT_FP32:
    default: return PAR_TIE_EVEN;
    }
}

int par_requant_tie(int64_t acc, const par_requant_params *p, double *t)
{
    const int32_t a = sat32(acc);
    switch (p->scheme) {
    case PAR_REQUANT_RNDNU:
    case PAR_REQUANT_RNDNA: {
        const int64_t prod = (int64_t)a * (int64_t)p->multiplier, mask = (INT64_C(1) << p->shift) - 1;
        if ((prod & mask) != p->rounding) return 0;
        *t = (double)asr(prod, p->shift) + 0.5;
        return 1;
    }
    case PAR_REQUANT_GEMMLOWP:
    case PAR_REQUANT_GEMMLOWP_ANDROID: {
        const int32_t left = p->shift > 0 ? p->shift : 0, right = p->shift > 0 ? 0 : -p->shift;
        if (right < 1) return 0;
        int32_t x = left ? sat32((int64_t)a * (INT64_C(1) << left)) : a;
        x = par_requant_srdhm(x, p->multiplier);
        const int64_t mask = (INT64_C(1) << right) - 1;
        if (((int64_t)x & mask) != (INT64_C(1) << (right - 1))) return 0;
        *t = (double)asr(x, right) + 0.5;
        return 1;
    }
    case PAR_REQUANT_FP32:
    case PAR_REQUANT_PYTORCH_QNNP:
    default: {
        /* the float product, where the magic-number addition rounds it (|f| < 2^22: below that every half-integer
         * is a float, and the clamp in float would have decided the value first otherwise) */
        const float f = (float)a * p->scale;
        if (!(fabsf(f) < 0x1p22f) || f - floorf(f) != 0.5f) return 0;
        *t = (double)f;
        return 1;
    }
    }
}

int par_requant_add_tie(int64_t acc, const par_requant_add_params *p, double *t)
{
    const int64_t half = INT64_C(1) << (p->shift - 1), mask = (INT64_C(1) << p->shift) - 1;
    if ((acc & mask) != half) return 0;
    *t = (double)asr(acc, p->shift) + 0.5;
    return 1;
}

void par_requant_lut(double (*f)(double), par_dtype in_dtype, float in_scale, int32_t in_zp, float out_scale,
                     int32_t out_zp, int32_t out_qmin, int32_t out_qmax, uint8_t table[256])
{
    const int32_t in_min = in_dtype == PAR_DTYPE_QS8 ? -128 : 0;
    double fx[256];
    for (int32_t i = 0; i < 256; i++) fx[i] = f((double)in_scale * (double)(in_min + i - in_zp));
    par_requant_lut_values(fx, out_scale, out_zp, out_qmin, out_qmax, table);
}

void par_requant_lut_values(const double fx[256], float out_scale, int32_t out_zp, int32_t out_qmin,
                            int32_t out_qmax, uint8_t table[256])
{
    for (int32_t i = 0; i < 256; i++) {
        double t = fx[i] / (double)out_scale;
        double r = t - remainder(t, 1.0); /* round half to even */
        double q = r + out_zp;
        q = q < out_qmin ? out_qmin : q > out_qmax ? out_qmax : q;
        if (q != q) q = out_zp;
        table[i] = (uint8_t)(int32_t)q; /* qs8 results are stored as their two's complement byte */
    }
}

void par_requant_clamp_range(par_dtype dt, float scale, int32_t zp, double lo, double hi, int32_t *qmin,
                             int32_t *qmax)
{
    int32_t tmin, tmax;
    par_dtype_qrange(dt, &tmin, &tmax);
    *qmin = tmin;
    *qmax = tmax;
    if (lo > -INFINITY) {
        double q = zp + round(lo / (double)scale);
        if (q > *qmin) *qmin = q > tmax ? tmax : (int32_t)q;
    }
    if (hi < INFINITY) {
        double q = zp + round(hi / (double)scale);
        if (q < *qmax) *qmax = q < tmin ? tmin : (int32_t)q;
    }
}

void par_requant_dynamic_qparams(float mn, float mx, int reduce_range, float *scale, int32_t *zero_point,
                                 double *z_ideal, double *range_min)
{
    const int32_t qmin = 0, qmax = reduce_range ? 127 : 255;
    const float small = 6.1e-5f; /* PyTorch's SMALL_SCALE_THRESHOLD */
    mn = mn < 0.0f ? mn : 0.0f;
    mx = mx > 0.0f ? mx : 0.0f;
    double s = ((double)mx - mn) / (double)(qmax - qmin);
    if ((float)s == 0.0f || isinf(1.0f / (float)s)) s = 0.1;
    if (s < small) {
        const float org = (float)s;
        s = small;
        if (mn == 0.0f) {
            mx = small * (float)(qmax - qmin);
        } else if (mx == 0.0f) {
            mn = -small * (float)(qmax - qmin);
        } else {
            const float amp = small / org;
            mn *= amp;
            mx *= amp;
        }
    }
    const double zmin = qmin - mn / s, zmax = qmax - mx / s;
    const double emin = fabs((double)qmin) - fabs(mn / s), emax = fabs((double)qmax) - fabs(mx / s);
    double z0 = emin < emax ? zmin : zmax;
    if (z0 != z0) z0 = qmin;
    *zero_point = z0 < qmin ? qmin : z0 > qmax ? qmax : (int32_t)nearbyint(z0);
    *scale = (float)s;
    if (z_ideal) *z_ideal = z0;
    if (range_min) *range_min = mn;
}

int par_requant_qd8_qparams(const float *x, int64_t k, float *inv, float *sx, int32_t *zp)
{
    /* Four running minima and maxima (no dependency chain from one element to the next), and x * 0, which is NaN
     * exactly for a non-finite x, summed: the same lo and hi as one pass (min and max of finite values do not depend
     * on the order; a zero of either sign never replaces the starting +0), and a row with an infinity or a NaN
     * still has no parameters. */
    float lo4[4] = {0.0f, 0.0f, 0.0f, 0.0f}, hi4[4] = {0.0f, 0.0f, 0.0f, 0.0f}, bad = 0.0f;
    int64_t i = 0;
    for (; i + 4 <= k; i += 4)
        for (int j = 0; j < 4; j++) {
            const float v = x[i + j];
            bad += v * 0.0f;
            lo4[j] = v < lo4[j] ? v : lo4[j];
            hi4[j] = v > hi4[j] ? v : hi4[j];
        }
    for (int j = 0; i < k; i++, j++) {
        bad += x[i] * 0.0f;
        lo4[j] = x[i] < lo4[j] ? x[i] : lo4[j];
        hi4[j] = x[i] > hi4[j] ? x[i] : hi4[j];
    }
    if (bad != bad) return 0;
    float lo = lo4[0], hi = hi4[0];
    for (int j = 1; j < 4; j++) {
        lo = lo4[j] < lo ? lo4[j] : lo;
        hi = hi4[j] > hi ? hi4[j] : hi;
    }
    const float s = lo == hi ? 1.0f : 255.0f / (hi - lo);
    if (!isfinite(s) || s == 0.0f || !isfinite(1.0f / s)) return 0;
    const float lo_s = lo * s, hi_s = hi * s;
    float z = (-128.0f + lo_s) + (127.0f + hi_s) > 0 ? -128.0f - lo_s : 127.0f - hi_s;
    z = z < -128.0f ? -128.0f : z > 127.0f ? 127.0f : z;
    *inv = s;
    *sx = 1.0f / s;
    *zp = (int32_t)rintf(z);
    return 1;
}
