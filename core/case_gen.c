/*
 * case_gen.c - the seeded input generators (par_gen_check, par_gen_fill): the bytes of a generated tensor depend on
 * the generator, the dtype, the shape and the seed only, through the portable PRNG.
 *
 * Must not: depend on anything but the seed for the bytes it generates, or ever produce NaN or an infinity.
 */
#include "case.h"

#include <assert.h>
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
    assert(isfinite(v)); /* generators never make NaN or infinities: the JSON writer could not express them */
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

par_status par_gen_check(const par_gen *g, par_dtype dt, par_msg *msg)
{
    if (par_dtype_size(dt) == 0) return par_msgf(msg, PAR_ERROR, "invalid dtype %d", (int)dt);
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
