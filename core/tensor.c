/*
 * tensor.c - element access by dtype, IEEE binary16 conversions and ULP distance. Pure functions, no allocation.
 */
#include "tensor.h"

#include <math.h>

float par_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { /* subnormal: normalize */
            int e = -1;
            do {
                e++;
                man <<= 1;
            } while (!(man & 0x400u));
            bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (man << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

float par_f32_round_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffffu) > 0x7f800000u) return f; /* NaN */
    x = (x + 0x7fffu + ((x >> 16) & 1u)) & 0xffff0000u; /* carries into the exponent: to inf past the largest */
    memcpy(&f, &x, sizeof f);
    return f;
}

uint16_t par_f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) /* inf or NaN (keep a quiet NaN) */
        return (uint16_t)(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u | ((ax >> 13) & 0x3ffu) : 0));
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to >= 65520: overflow */
    if (ax < 0x38800000u) {                                     /* below the smallest normal half: subnormal */
        if (ax < 0x33000000u) return sign;                       /* < 2^-25: rounds to 0 */
        uint32_t e = ax >> 23;
        uint32_t m = (ax & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126 - e; /* 14..24 */
        uint32_t half = m >> shift;
        uint32_t rem = m & ((1u << shift) - 1);
        uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1))) half++;
        return (uint16_t)(sign | half);
    }
    uint32_t h = ((ax >> 13) - ((127u - 15u) << 10));
    uint32_t rem = ax & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) h++;
    return (uint16_t)(sign | h);
}

double par_elem_get(par_dtype dt, const void *buf, int64_t i)
{
    switch (dt) {
    case PAR_DTYPE_F32: return ((const float *)buf)[i];
    case PAR_DTYPE_F16: return par_f16_to_f32(((const uint16_t *)buf)[i]);
    case PAR_DTYPE_F64: return ((const double *)buf)[i];
    case PAR_DTYPE_QU8: return ((const uint8_t *)buf)[i];
    case PAR_DTYPE_QS8: return ((const int8_t *)buf)[i];
    case PAR_DTYPE_QS16: return ((const int16_t *)buf)[i];
    case PAR_DTYPE_I32: return ((const int32_t *)buf)[i];
    case PAR_DTYPE_BOOL: return ((const uint8_t *)buf)[i]; /* the byte itself: a byte other than 0 or 1 (an
                                                               * unwritten, poisoned output) then differs from both */
    default: return NAN;
    }
}

static double sat_round(double v, double lo, double hi)
{
    if (isnan(v)) return 0;
    double r = nearbyint(v); /* default rounding mode: to nearest even */
    return r < lo ? lo : r > hi ? hi : r;
}

void par_elem_set(par_dtype dt, void *buf, int64_t i, double v)
{
    switch (dt) {
    case PAR_DTYPE_F32: ((float *)buf)[i] = (float)v; break;
    case PAR_DTYPE_F16: ((uint16_t *)buf)[i] = par_f32_to_f16((float)v); break; /* double rounding is harmless here:
                                                                           values come from f32 data */
    case PAR_DTYPE_F64: ((double *)buf)[i] = v; break;
    case PAR_DTYPE_QU8: ((uint8_t *)buf)[i] = (uint8_t)sat_round(v, 0, 255); break;
    case PAR_DTYPE_QS8: ((int8_t *)buf)[i] = (int8_t)sat_round(v, -128, 127); break;
    case PAR_DTYPE_QS16: ((int16_t *)buf)[i] = (int16_t)sat_round(v, -32768, 32767); break;
    case PAR_DTYPE_I32: ((int32_t *)buf)[i] = (int32_t)sat_round(v, -2147483648.0, 2147483647.0); break;
    case PAR_DTYPE_BOOL: ((uint8_t *)buf)[i] = v != 0 && v == v; break; /* any nonzero real is true; NaN false */
    default: break;
    }
}

/* Map f32 bits to a monotonic integer line so that the difference counts representable numbers between them. */
static int64_t ordered(float f)
{
    int32_t i;
    memcpy(&i, &f, sizeof i);
    return i < 0 ? (int64_t)INT32_MIN - (int64_t)i : (int64_t)i;
}

double par_ulp_distance_f32(float a, float b)
{
    if (isnan(a) || isnan(b)) return (isnan(a) && isnan(b)) ? 0 : INFINITY;
    int64_t d = ordered(a) - ordered(b);
    return (double)(d < 0 ? -d : d);
}
