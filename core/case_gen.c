/*
 * case_gen.c - the seeded input generators (par_gen_check, par_gen_fill): the bytes of a generated tensor depend on
 * the generator, the dtype, the shape and the seed only, through the portable PRNG.
 *
 * Must not: depend on anything but the seed for the bytes it generates, or produce NaN or an infinity except where
 * the hazard nan_inf asks for them (the JSON writer writes the generator, never such values).
 */
#include "case.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

#include "prng.h"
#include "tensor.h"

/* ------------------------------------------------------------------------------------------------------------------
 * Generators
 * ---------------------------------------------------------------------------------------------------------------- */

static int is_real(par_dtype dt)
{
    return dt == PAR_DTYPE_F32 || dt == PAR_DTYPE_F16 || dt == PAR_DTYPE_F64;
}

/* The largest finite value of a real dtype: generator bounds must stay within it, so no value rounds to infinity. */
static double real_max(par_dtype dt)
{
    switch (dt) {
    case PAR_DTYPE_F32: return FLT_MAX;
    case PAR_DTYPE_F16: return 65504.0;
    default: return DBL_MAX / 16; /* f64: headroom so a + (b - a) * u cannot overflow */
    }
}

static void int_range(par_dtype dt, int64_t *lo, int64_t *hi)
{
    switch (dt) {
    case PAR_DTYPE_QU8: *lo = 0; *hi = 255; return;
    case PAR_DTYPE_QS8: *lo = -128; *hi = 127; return;
    case PAR_DTYPE_QS16: *lo = -32768; *hi = 32767; return;
    case PAR_DTYPE_BOOL: *lo = 0; *hi = 1; return; /* uniform [0, 1]: density 1/2; const 0 / 1: all false / true */
    default: *lo = INT32_MIN; *hi = INT32_MAX; return;
    }
}

/* Round half to even, then saturate to [lo, hi]. Saturation happens in double first, so any finite v is safe. */
static int64_t round_clamp(double v, int64_t lo, int64_t hi)
{
    if (v <= (double)lo) return lo;
    if (v >= (double)hi) return hi;
    double f = floor(v);
    double d = v - f; /* exact: |v| < 2^31, and v - floor(v) in [0, 1) is a multiple of ulp(v) */
    int64_t q = (int64_t)f;
    if (d > 0.5 || (d == 0.5 && (q & 1))) q++;
    return q < lo ? lo : q > hi ? hi : q;
}

static void store_real(par_dtype dt, void *out, int64_t i, double v)
{
    switch (dt) {
    case PAR_DTYPE_F32: ((float *)out)[i] = (float)v; break;
    case PAR_DTYPE_F16: ((uint16_t *)out)[i] = par_f32_to_f16((float)v); break;
    case PAR_DTYPE_F64: ((double *)out)[i] = v; break;
    default: break;
    }
}

static void store_int(par_dtype dt, void *out, int64_t i, int64_t q)
{
    switch (dt) {
    case PAR_DTYPE_QU8: ((uint8_t *)out)[i] = (uint8_t)q; break;
    case PAR_DTYPE_QS8: ((int8_t *)out)[i] = (int8_t)q; break;
    case PAR_DTYPE_QS16: ((int16_t *)out)[i] = (int16_t)q; break;
    case PAR_DTYPE_I32: ((int32_t *)out)[i] = (int32_t)q; break;
    case PAR_DTYPE_BOOL: ((uint8_t *)out)[i] = (uint8_t)q; break;
    default: break;
    }
}

/* Three times the smallest positive subnormal of the dtype (so it is not also the smallest). */
static double tiny_subnormal(par_dtype dt)
{
    switch (dt) {
    case PAR_DTYPE_F32: return 3 * 0x1p-149;
    case PAR_DTYPE_F16: return 3 * 0x1p-24;
    default: return 3 * 0x1p-1074;
    }
}

/* EDGE for real dtypes. One of 24 equally likely choices per element (m = max after fan_in scaling, u uniform in
 * [0, 1) drawn after the choice):
 *   0 +0   1 -0   2 +1   3 -1   4 +0.5   5 -0.5   6 +1.5   7 -1.5   8 +2.5   9 -2.5   (ties for round-half-even)
 *   10 +1e-30   11 -1e-30   12 +s   13 -s   (s = 3 x the dtype's smallest subnormal)
 *   14 +m   15 -m   16 +m(1 - u/256)   17 -m(1 - u/256)   18..23 uniform in [-m, m): -m + 2m u
 * Values are then rounded to the dtype (so 1e-30 is +-0 in f16). */
static double edge_real(par_prng *r, par_dtype dt, double m)
{
    static const double fixed[10] = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5};
    int64_t k = par_prng_int(r, 0, 23);
    if (k < 10) return fixed[k];
    switch (k) {
    case 10: return 1e-30;
    case 11: return -1e-30;
    case 12: return tiny_subnormal(dt);
    case 13: return -tiny_subnormal(dt);
    case 14: return m;
    case 15: return -m;
    case 16: return m * (1.0 - par_prng_uniform(r) * 0x1p-8);
    case 17: return -m * (1.0 - par_prng_uniform(r) * 0x1p-8);
    default: return -m + 2.0 * m * par_prng_uniform(r);
    }
}

/* EDGE for integer dtypes, within [lo, hi] = the type's range intersected with [-floor(m), floor(m)] (the whole
 * type's range when m < 1). One of 12 equally likely choices: 0, 1, -1, 2, -2, lo, hi, lo + 1, hi - 1, and three
 * uniform integers in [lo, hi]; each clamped to [lo, hi]. */
static int64_t edge_int(par_prng *r, int64_t lo, int64_t hi)
{
    static const int64_t small[5] = {0, 1, -1, 2, -2};
    int64_t k = par_prng_int(r, 0, 11), q;
    if (k < 5) q = small[k];
    else if (k == 5) q = lo;
    else if (k == 6) q = hi;
    else if (k == 7) q = lo + 1;
    else if (k == 8) q = hi - 1;
    else q = par_prng_int(r, lo, hi);
    return q < lo ? lo : q > hi ? hi : q;
}

static int64_t fan_in_of(int32_t rank, const int64_t *dims)
{
    if (rank == 0) return 1;
    if (rank == 1) return dims[0];
    int64_t f = 1;
    for (int32_t i = 1; i < rank; i++) f *= dims[i];
    return f;
}

static const char *const HAZARD_NAMES[PAR_HAZARD_COUNT] = {
    [PAR_HAZARD_NAN_INF] = "nan_inf",         [PAR_HAZARD_HUGE] = "huge",
    [PAR_HAZARD_SUBNORMAL] = "subnormal",     [PAR_HAZARD_SIGNED_ZERO] = "signed_zero",
    [PAR_HAZARD_TIES] = "ties",               [PAR_HAZARD_SATURATION] = "saturation",
    [PAR_HAZARD_CANCEL] = "cancel",           [PAR_HAZARD_NEAR_OVERFLOW] = "near_overflow",
    [PAR_HAZARD_ALL_EQUAL] = "all_equal",
};

const char *par_hazard_name(par_hazard h)
{
    return h > 0 && h < PAR_HAZARD_COUNT ? HAZARD_NAMES[h] : NULL;
}

par_hazard par_hazard_find(const char *name)
{
    for (int h = 1; h < PAR_HAZARD_COUNT; h++)
        if (strcmp(HAZARD_NAMES[h], name) == 0) return (par_hazard)h;
    return (par_hazard)0;
}

/* ------------------------------------------------------------------------------------------------------------------
 * Hazards (PAR_DIST_HAZARD; docs/case-format.md, "Hazards")
 * ---------------------------------------------------------------------------------------------------------------- */

/* The significand bits of a real dtype (with the hidden bit), its smallest positive subnormal, and its smallest
 * positive normal number. */
static int real_digits(par_dtype dt) { return dt == PAR_DTYPE_F32 ? 24 : dt == PAR_DTYPE_F16 ? 11 : 53; }
static double real_min_sub(par_dtype dt)
{
    return dt == PAR_DTYPE_F32 ? 0x1p-149 : dt == PAR_DTYPE_F16 ? 0x1p-24 : 0x1p-1074;
}
static double real_min_normal(par_dtype dt)
{
    return dt == PAR_DTYPE_F32 ? 0x1p-126 : dt == PAR_DTYPE_F16 ? 0x1p-14 : DBL_MIN;
}

/* The number of bits of the odd part of a positive finite x's significand (1 for a power of two). */
static int odd_bits(double x)
{
    int e;
    double m = ldexp(frexp(x, &e), 53); /* an integer in [2^52, 2^53) */
    while (fmod(m, 2.0) == 0) m /= 2;
    int bits = 0;
    while (m >= 1) m = floor(m / 2), bits++;
    return bits;
}

static int bits_of(int64_t v)
{
    int bits = 0;
    while (v > 0) v >>= 1, bits++;
    return bits;
}

/* The largest k of the ties grid: b as an integer (checked to be one). */
#define TIES_MAX_B 1048576.0

static par_status hazard_check(const par_gen *g, par_dtype dt, par_msg *msg)
{
    const char *hn = par_hazard_name(g->hazard);
    if (!hn) return par_msgf(msg, PAR_ERROR, "unknown hazard %d", (int)g->hazard);
    if (!isfinite(g->a) || !isfinite(g->b))
        return par_msgf(msg, PAR_ERROR, "hazard %s: parameters must be finite numbers", hn);
    const double lim = real_max(dt);
    const int real = is_real(dt);
    if (g->hazard == PAR_HAZARD_TIES) {
        /* (k + 1/2) a for k in [-b, b): exact in the dtype when the odd part of a times 2b - 1 fits its significand
         * and a / 2 is a normal number; fan_in would scale a off the grid. */
        if (g->fan_in) return par_msgf(msg, PAR_ERROR, "hazard ties: fan_in would move the ties off the grid");
        if (!(g->a > 0)) return par_msgf(msg, PAR_ERROR, "hazard ties: step %.9g is not positive", g->a);
        if (g->b < 1 || g->b > TIES_MAX_B || g->b != floor(g->b))
            return par_msgf(msg, PAR_ERROR, "hazard ties: count %.9g is not an integer in [1, %.0f]", g->b, TIES_MAX_B);
        if (real) {
            if (g->a / 2 < real_min_normal(dt) || (g->b + 0.5) * g->a > lim)
                return par_msgf(msg, PAR_ERROR, "hazard ties: the ties of step %.9g and count %.9g leave the normal "
                                "range of %s", g->a, g->b, par_dtype_name(dt));
            if (odd_bits(g->a) + bits_of(2 * (int64_t)g->b - 1) > real_digits(dt))
                return par_msgf(msg, PAR_ERROR, "hazard ties: (k + 1/2) * %.9g is not exact in %s for every k in "
                                "[-%.9g, %.9g) (use a step with fewer significant bits, e.g. a power of two)",
                                g->a, par_dtype_name(dt), g->b, g->b);
        }
        return PAR_OK;
    }
    if (!(g->a <= g->b))
        return par_msgf(msg, PAR_ERROR, "hazard %s: low %.9g is greater than high %.9g", hn, g->a, g->b);
    if (real && (fabs(g->a) > lim || fabs(g->b) > lim))
        return par_msgf(msg, PAR_ERROR, "hazard %s: bounds must lie within +-%.9g for %s", hn, lim, par_dtype_name(dt));
    if (real && g->hazard == PAR_HAZARD_SATURATION && !(g->b > 0 && g->b <= lim / 2))
        return par_msgf(msg, PAR_ERROR, "hazard saturation: bound %.9g is not in (0, %.9g] for %s", g->b, lim / 2,
                        par_dtype_name(dt));
    if (!real && !g->fan_in && ceil(g->a) > floor(g->b))
        return par_msgf(msg, PAR_ERROR, "hazard %s: [%.9g, %.9g] contains no integer", hn, g->a, g->b);
    if (dt == PAR_DTYPE_BOOL && !g->fan_in && (g->a < 0 || g->b > 1))
        return par_msgf(msg, PAR_ERROR, "hazard %s: [%.9g, %.9g] is not within [0, 1] for bool", hn, g->a, g->b);
    return PAR_OK;
}

/* Store a real hazard value; NaN is stored as the quiet NaN of the dtype. */
static void store_hazard(par_dtype dt, void *out, int64_t i, double v)
{
    if (isnan(v) && dt == PAR_DTYPE_F16) ((uint16_t *)out)[i] = 0x7e00u;
    else store_real(dt, out, i, v);
}

/* A subnormal of the dtype: m times its smallest subnormal, m uniform in [1, 2^(digits - 1) - 1]. */
static double draw_subnormal(par_prng *r, par_dtype dt)
{
    const int64_t mmax = (INT64_C(1) << (real_digits(dt) - 1)) - 1;
    return (double)par_prng_int(r, 1, mmax) * real_min_sub(dt);
}

/* A magnitude in (M / 16, M] for M the largest finite value of the dtype: M 2^(-4u). */
static double draw_near_overflow(par_prng *r, par_dtype dt)
{
    const double m = dt == PAR_DTYPE_F64 ? DBL_MAX : real_max(dt);
    return m * exp2(-4.0 * par_prng_uniform(r));
}

/* The large magnitude L of a cancelling pair: 10^(4 + 2u) in [1e4, 1e6), or 2^(10 + 4u) in [1024, 16384) for f16. */
static double draw_cancel(par_prng *r, par_dtype dt)
{
    const double u = par_prng_uniform(r);
    return dt == PAR_DTYPE_F16 ? exp2(10.0 + 4.0 * u) : pow(10.0, 4.0 + 2.0 * u);
}

/* Place the values want[0..k) at k distinct seeded positions of a buffer of n >= 8 elements (overwriting), so that
 * each hazard's defining values are present however the per-element draws fell. */
static void force_values(par_prng *r, par_dtype dt, void *out, int64_t n, const double *want, int k)
{
    int64_t pos[4];
    for (int j = 0; j < k; j++) {
        int again;
        do {
            pos[j] = par_prng_int(r, 0, n - 1);
            again = 0;
            for (int t = 0; t < j; t++) again |= pos[t] == pos[j];
        } while (again);
        store_hazard(dt, out, pos[j], want[j]);
    }
}

/* Real dtypes. o() is an ordinary value a + (b - a) u of [a, b). Per element, one draw k chooses:
 *   nan_inf        k in 0..15: 0 NaN, 1 +Inf, 2 -Inf, else o() (1/16 each);            forced NaN, +Inf, -Inf
 *   huge           k in 0..3: 0 o(), else +-10^(2 + 2u), |x| in [100, 1e4);              forced one of each sign
 *   subnormal      k in 0..3: 0, 1 o(), 2 +s, 3 -s, s = m * the smallest subnormal;       forced +s, -s
 *   signed_zero    k in 0..3: 0 +0, 1 -0, else o();                                      forced +0, -0
 *   ties           (k + 1/2) a, k uniform in [-b, b - 1]
 *   saturation     k in 0..7: 0 +b, 1 -b, 2 +b(1 + u), 3 -b(1 + u), else o();            forced +b, -b
 *   cancel         k in 0..1: 0 o(), 1 a pair +-L, -+L at i, i + 1 (L from draw_cancel); forced a pair at 0, 1
 *   near_overflow  k in 0..3: 0 o(), else +-M 2^(-4u) in (M/16, M];                      forced one of each sign
 *   all_equal      one o() everywhere
 * Forced values (n >= 8 only) go to distinct seeded positions after the draws (force_values); forced pairs of cancel
 * only when no pair was drawn. Signs are one more draw. Values are then rounded to the dtype. */
static void hazard_fill_real(par_hazard h, par_dtype dt, double a, double b, par_prng *r, int64_t n, void *out)
{
#define ORD (a + (b - a) * par_prng_uniform(r))
#define SIGN (par_prng_int(r, 0, 1) ? -1.0 : 1.0)
    if (h == PAR_HAZARD_ALL_EQUAL) {
        const double v = ORD;
        for (int64_t i = 0; i < n; i++) store_real(dt, out, i, v);
        return;
    }
    int pairs = 0;
    for (int64_t i = 0; i < n; i++) {
        double v;
        int64_t k;
        switch (h) {
        case PAR_HAZARD_NAN_INF:
            k = par_prng_int(r, 0, 15);
            v = k == 0 ? NAN : k == 1 ? INFINITY : k == 2 ? -INFINITY : ORD;
            break;
        case PAR_HAZARD_HUGE:
            k = par_prng_int(r, 0, 3);
            v = k == 0 ? ORD : SIGN * pow(10.0, 2.0 + 2.0 * par_prng_uniform(r));
            break;
        case PAR_HAZARD_SUBNORMAL:
            k = par_prng_int(r, 0, 3);
            v = k < 2 ? ORD : (k == 2 ? 1.0 : -1.0) * draw_subnormal(r, dt);
            break;
        case PAR_HAZARD_SIGNED_ZERO:
            k = par_prng_int(r, 0, 3);
            v = k == 0 ? 0.0 : k == 1 ? -0.0 : ORD;
            break;
        case PAR_HAZARD_TIES: v = ((double)par_prng_int(r, -(int64_t)b, (int64_t)b - 1) + 0.5) * a; break;
        case PAR_HAZARD_SATURATION:
            k = par_prng_int(r, 0, 7);
            v = k == 0 ? b : k == 1 ? -b : k < 4 ? (k == 2 ? 1.0 : -1.0) * b * (1.0 + par_prng_uniform(r)) : ORD;
            break;
        case PAR_HAZARD_CANCEL:
            if (i + 1 < n && par_prng_int(r, 0, 1)) {
                const double l = SIGN * draw_cancel(r, dt);
                store_real(dt, out, i, l);
                store_real(dt, out, i + 1, -l); /* rounding is symmetric: the pair cancels exactly in the dtype */
                i++, pairs++;
                continue;
            }
            v = ORD;
            break;
        case PAR_HAZARD_NEAR_OVERFLOW:
            k = par_prng_int(r, 0, 3);
            v = k == 0 ? ORD : SIGN * draw_near_overflow(r, dt);
            break;
        default: v = ORD; break;
        }
        store_hazard(dt, out, i, v);
    }
    if (n < 8) return;
    double want[3];
    switch (h) {
    case PAR_HAZARD_NAN_INF:
        want[0] = NAN, want[1] = INFINITY, want[2] = -INFINITY;
        force_values(r, dt, out, n, want, 3);
        break;
    case PAR_HAZARD_HUGE:
        want[0] = pow(10.0, 2.0 + 2.0 * par_prng_uniform(r)), want[1] = -pow(10.0, 2.0 + 2.0 * par_prng_uniform(r));
        force_values(r, dt, out, n, want, 2);
        break;
    case PAR_HAZARD_SUBNORMAL:
        want[0] = draw_subnormal(r, dt), want[1] = -draw_subnormal(r, dt);
        force_values(r, dt, out, n, want, 2);
        break;
    case PAR_HAZARD_SIGNED_ZERO:
        want[0] = 0.0, want[1] = -0.0;
        force_values(r, dt, out, n, want, 2);
        break;
    case PAR_HAZARD_SATURATION:
        want[0] = b, want[1] = -b;
        force_values(r, dt, out, n, want, 2);
        break;
    case PAR_HAZARD_NEAR_OVERFLOW:
        want[0] = draw_near_overflow(r, dt), want[1] = -draw_near_overflow(r, dt);
        force_values(r, dt, out, n, want, 2);
        break;
    case PAR_HAZARD_CANCEL:
        if (!pairs) {
            const double l = SIGN * draw_cancel(r, dt);
            store_real(dt, out, 0, l);
            store_real(dt, out, 1, -l);
        }
        break;
    default: break;
    }
#undef ORD
#undef SIGN
}

/* Integer dtypes (qu8, qs8, i32, bool), [lo, hi] the type's range:
 *   saturation, huge, near_overflow  k in 0..7: lo, lo + 1, lo + 2, hi - 2, hi - 1, hi (each clamped to [lo, hi]),
 *                  else uniform in [a, b] (saturated to the type);            forced lo and hi (n >= 8)
 *   ties           uniform integers k in [-b, b - 1], saturated to the type (the grid's index)
 *   all_equal      one uniform integer of [a, b] everywhere
 *   nan_inf, subnormal, signed_zero, cancel: no such integers: uniform in [a, b], as the uniform generator. */
static void hazard_fill_int(par_hazard h, par_dtype dt, double a, double b, par_prng *r, int64_t n, void *out)
{
    int64_t tlo, thi;
    int_range(dt, &tlo, &thi);
    const int64_t big = INT64_C(1) << 40;
    int64_t lo = round_clamp(ceil(a), -big, big), hi = round_clamp(floor(b), -big, big);
    if (h == PAR_HAZARD_TIES) lo = -(int64_t)b, hi = (int64_t)b - 1;
    if (hi < lo) hi = lo;
#define UNI (q = par_prng_int(r, lo, hi), q < tlo ? tlo : q > thi ? thi : q)
    int64_t q;
    if (h == PAR_HAZARD_ALL_EQUAL) {
        const int64_t v = UNI;
        for (int64_t i = 0; i < n; i++) store_int(dt, out, i, v);
        return;
    }
    const int sat = h == PAR_HAZARD_SATURATION || h == PAR_HAZARD_HUGE || h == PAR_HAZARD_NEAR_OVERFLOW;
    for (int64_t i = 0; i < n; i++) {
        int64_t v;
        if (sat) {
            const int64_t ext[6] = {tlo, tlo + 1, tlo + 2, thi - 2, thi - 1, thi};
            int64_t k = par_prng_int(r, 0, 7);
            v = k < 6 ? (ext[k] < tlo ? tlo : ext[k] > thi ? thi : ext[k]) : UNI;
        } else {
            v = UNI;
        }
        store_int(dt, out, i, v);
    }
#undef UNI
    if (sat && n >= 8) {
        const int64_t p = par_prng_int(r, 0, n - 1);
        int64_t p2;
        do p2 = par_prng_int(r, 0, n - 1);
        while (p2 == p);
        store_int(dt, out, p, tlo);
        store_int(dt, out, p2, thi);
    }
}

par_status par_gen_check(const par_gen *g, par_dtype dt, par_msg *msg)
{
    if (par_dtype_size(dt) == 0) return par_msgf(msg, PAR_ERROR, "invalid dtype %d", (int)dt);
    if (g->dist == PAR_DIST_HAZARD) return hazard_check(g, dt, msg);
    if (g->dist < PAR_DIST_UNIFORM || g->dist > PAR_DIST_EDGE)
        return par_msgf(msg, PAR_ERROR, "unknown distribution %d", (int)g->dist);
    if (!isfinite(g->a) || !isfinite(g->b))
        return par_msgf(msg, PAR_ERROR, "generator parameters must be finite numbers");
    const double lim = real_max(dt);
    const int real = is_real(dt);
    /* bool: uniform draws from {0, 1} (density 1/2; low = high gives all false / all true), const is 0 or 1 */
    if (dt == PAR_DTYPE_BOOL && g->dist == PAR_DIST_UNIFORM && !g->fan_in && (g->a < 0 || g->b > 1))
        return par_msgf(msg, PAR_ERROR, "uniform: [%.9g, %.9g] is not within [0, 1] for bool", g->a, g->b);
    if (dt == PAR_DTYPE_BOOL && g->dist == PAR_DIST_CONST && g->a != 0 && g->a != 1)
        return par_msgf(msg, PAR_ERROR, "const: %.9g is not 0 or 1 for bool", g->a);
    switch (g->dist) {
    case PAR_DIST_UNIFORM:
        if (!(g->a <= g->b))
            return par_msgf(msg, PAR_ERROR, "uniform: low %.9g is greater than high %.9g", g->a, g->b);
        if (real && (fabs(g->a) > lim || fabs(g->b) > lim))
            return par_msgf(msg, PAR_ERROR, "uniform: bounds must lie within +-%.9g for %s", lim, par_dtype_name(dt));
        if (!real && !g->fan_in && ceil(g->a) > floor(g->b))
            return par_msgf(msg, PAR_ERROR, "uniform: [%.9g, %.9g] contains no integer", g->a, g->b);
        break;
    case PAR_DIST_NORMAL:
        if (g->b < 0) return par_msgf(msg, PAR_ERROR, "normal: std %.9g is negative", g->b);
        /* Irwin-Hall values lie within mean +- 6 std. */
        if (real && (fabs(g->a) > lim || g->b > lim / 8 || fabs(g->a) + 6.0 * g->b > lim))
            return par_msgf(msg, PAR_ERROR, "normal: mean +- 6 std must lie within +-%.9g for %s", lim,
                            par_dtype_name(dt));
        break;
    case PAR_DIST_CONST:
        if (real && fabs(g->a) > lim)
            return par_msgf(msg, PAR_ERROR, "const: %.9g is outside +-%.9g for %s", g->a, lim, par_dtype_name(dt));
        break;
    case PAR_DIST_EDGE:
        if (g->b < 0) return par_msgf(msg, PAR_ERROR, "edge: max %.9g is negative", g->b);
        if (real && g->b > lim)
            return par_msgf(msg, PAR_ERROR, "edge: max %.9g is beyond %.9g for %s", g->b, lim, par_dtype_name(dt));
        break;
    default: break; /* PAR_DIST_HAZARD: hazard_check */
    }
    return PAR_OK;
}

void par_gen_fill(const par_gen *g, par_dtype dt, int32_t rank, const int64_t *dims, void *out)
{
    const int64_t n = par_shape_numel(rank, dims);
    double a = g->a, b = g->b;
    if (g->fan_in) {
        /* sqrt is correctly rounded (IEEE 754), so a / sqrt(f) is the same everywhere. */
        const double s = sqrt((double)fan_in_of(rank, dims));
        a /= s;
        b /= s;
    }
    par_prng r;
    par_prng_seed(&r, g->seed);
    if (g->dist == PAR_DIST_HAZARD) {
        if (is_real(dt)) hazard_fill_real(g->hazard, dt, a, b, &r, n, out);
        else hazard_fill_int(g->hazard, dt, a, b, &r, n, out);
        return;
    }

    if (is_real(dt)) {
        for (int64_t i = 0; i < n; i++) {
            double v;
            switch (g->dist) {
            case PAR_DIST_UNIFORM: v = a + (b - a) * par_prng_uniform(&r); break;
            case PAR_DIST_NORMAL: v = a + b * par_prng_normal(&r); break;
            case PAR_DIST_EDGE: v = edge_real(&r, dt, b); break;
            default: v = a; break;
            }
            store_real(dt, out, i, v);
        }
        return;
    }

    int64_t tlo, thi;
    int_range(dt, &tlo, &thi);
    int64_t lo = tlo, hi = thi;
    if (g->dist == PAR_DIST_UNIFORM) {
        /* Draw uniformly in [ceil(a), floor(b)], then saturate each draw to the type: a range wider than the type
         * piles values on its ends, on purpose (saturation is under test too). Bounds beyond +-2^40 are cut there
         * first, far outside every integer dtype, so no int64 arithmetic overflows. */
        const int64_t big = INT64_C(1) << 40;
        lo = round_clamp(ceil(a), -big, big);
        hi = round_clamp(floor(b), -big, big);
        if (hi < lo) hi = lo; /* only after fan_in scaling emptied the interval: then it is the one integer lo */
    } else if (g->dist == PAR_DIST_EDGE && b >= 1.0) {
        int64_t m = round_clamp(floor(b), 0, INT64_C(1) << 40);
        if (m < thi) hi = m;
        if (-m > tlo) lo = -m;
        if (hi < lo) hi = lo;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t q;
        switch (g->dist) {
        case PAR_DIST_UNIFORM: q = par_prng_int(&r, lo, hi), q = q < tlo ? tlo : q > thi ? thi : q; break;
        case PAR_DIST_NORMAL: q = round_clamp(a + b * par_prng_normal(&r), tlo, thi); break;
        case PAR_DIST_EDGE: q = edge_int(&r, lo, hi); break;
        default: q = round_clamp(a, tlo, thi); break;
        }
        store_int(dt, out, i, q);
    }
}
