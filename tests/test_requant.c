/*
 * test_requant.c - the requantization schemes (core/requant.c), in layers as QNNPACK's requantization tester
 * builds them: exact power-of-two scales, ties rounding each way, saturation at both ends, int32 extremes, random
 * accumulators against a double model, the add formula and lookup tables. Every test runs its outputs through a
 * guard that fails the test when all of them are equal: a test whose outputs never vary proves nothing.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/prng.h"
#include "core/requant.h"
#include "tmain.h"

static const par_requant schemes[] = {PAR_REQUANT_FP32, PAR_REQUANT_RNDNU, PAR_REQUANT_GEMMLOWP};

/* The all-equal guard. */
typedef struct guard {
    int64_t n, lo, hi;
} guard;

static void guard_init(guard *g) { g->n = 0, g->lo = INT64_MAX, g->hi = INT64_MIN; }
static int32_t seen(guard *g, int32_t v)
{
    g->n++;
    if (v < g->lo) g->lo = v;
    if (v > g->hi) g->hi = v;
    return v;
}
static void guard_check(const guard *g)
{
    CU_ASSERT(g->n > 1);
    CU_ASSERT(g->lo < g->hi); /* outputs all equal: the test would pass on a constant function */
}

static par_requant_params mk(par_requant s, double scale, int32_t zp, int32_t qmin, int32_t qmax)
{
    par_requant_params p;
    par_msg m = {{0}};
    CU_ASSERT_FATAL(par_requant_params_init(&p, s, scale, zp, qmin, qmax, &m) == PAR_OK);
    return p;
}

/* round half to even / up / away, of a double known exactly */
static double rne(double x) { return x - remainder(x, 1.0); }
static double rhu(double x) { return floor(x + 0.5); }
static double rha(double x) { return x >= 0 ? floor(x + 0.5) : -floor(-x + 0.5); }

static void test_names(void)
{
    par_requant s;
    guard g;
    guard_init(&g);
    for (int i = 0; i < PAR_REQUANT_N_SCHEMES; i++) {
        CU_ASSERT(par_requant_parse(par_requant_name((par_requant)i), &s) == 0);
        CU_ASSERT(s == (par_requant)i);
        seen(&g, (int32_t)s);
    }
    CU_ASSERT_STRING_EQUAL(par_requant_name(PAR_REQUANT_RNDNA), "rndna");
    CU_ASSERT_STRING_EQUAL(par_requant_name(PAR_REQUANT_PYTORCH_QNNP), "pytorch_qnnp");
    CU_ASSERT(par_requant_name((par_requant)PAR_REQUANT_N_SCHEMES) == NULL);
    CU_ASSERT(par_requant_parse("fp16", &s) == -1);
    CU_ASSERT(par_requant_name((par_requant)7) == NULL);
    par_requant_params p;
    par_msg m = {{0}};
    CU_ASSERT(par_requant_params_init(&p, PAR_REQUANT_FP32, 256.0, 0, 0, 255, &m) == PAR_ERROR);
    CU_ASSERT(strstr(m.text, "scale") != NULL);
    CU_ASSERT(par_requant_params_init(&p, PAR_REQUANT_RNDNU, 0x1p-33, 0, 0, 255, &m) == PAR_ERROR);
    CU_ASSERT(par_requant_params_init(&p, PAR_REQUANT_GEMMLOWP, 0.5, 300, 0, 255, &m) == PAR_ERROR);
    CU_ASSERT(strstr(m.text, "zero point") != NULL);
    CU_ASSERT(par_requant_params_init(&p, PAR_REQUANT_GEMMLOWP, 0.5, 0, 10, 9, &m) == PAR_ERROR);
    guard_check(&g);
}

/* scale = 2^-k, acc = j * 2^k: every scheme returns exactly zp + j. */
static void test_exact_pow2(void)
{
    guard g;
    guard_init(&g);
    for (int si = 0; si < 3; si++)
        for (int k = 0; k <= 24; k += 3)
            for (int32_t zp = -128; zp <= 127; zp += 85) {
                par_requant_params p = mk(schemes[si], ldexp(1.0, -k), zp, -128, 127);
                for (int32_t j = -128 - zp; j <= 127 - zp; j += 7) {
                    int64_t acc = (int64_t)j * (INT64_C(1) << k);
                    if (acc > INT32_MAX || acc < INT32_MIN) continue;
                    CU_ASSERT_EQUAL(seen(&g, par_requant_apply(acc, &p)), zp + j);
                }
            }
    /* scale 2^k > 1 (up to 128) with small accumulators */
    for (int si = 0; si < 3; si++)
        for (int k = 1; k <= 7; k++) {
            par_requant_params p = mk(schemes[si], ldexp(1.0, k), 3, 0, 255);
            for (int32_t j = -1; j <= 1; j++) CU_ASSERT_EQUAL(seen(&g, par_requant_apply(j, &p)), 3 + j * (1 << k) < 0 ? 0 : 3 + j * (1 << k));
        }
    guard_check(&g);
}

/* acc * 2^-k = m + 1/2 exactly: fp32 rounds to even, rndnu up, gemmlowp away from zero, on both signs. */
static void test_ties(void)
{
    guard g;
    guard_init(&g);
    for (int k = 1; k <= 20; k++)
        for (int32_t m = -60; m <= 60; m++) {
            int64_t acc = (2 * (int64_t)m + 1) * (INT64_C(1) << (k - 1));
            double x = m + 0.5;
            par_requant_params pf = mk(PAR_REQUANT_FP32, ldexp(1.0, -k), 0, -128, 127);
            par_requant_params pr = mk(PAR_REQUANT_RNDNU, ldexp(1.0, -k), 0, -128, 127);
            par_requant_params pg = mk(PAR_REQUANT_GEMMLOWP, ldexp(1.0, -k), 0, -128, 127);
            CU_ASSERT_EQUAL(seen(&g, par_requant_fp32(acc, &pf)), (int32_t)rne(x));
            CU_ASSERT_EQUAL(seen(&g, par_requant_rndnu(acc, &pr)), (int32_t)rhu(x));
            /* gemmlowp at 2^-k: SRDHM by M = 2^30 halves acc, rounding half UP (its nudge for negative products is
             * 1 - 2^30, so -2.5 -> -2); then RDivByPOT by k - 1 rounds half away from zero. For k = 1 the tie is
             * decided by SRDHM alone (half up); for k >= 2 the halving is exact and RDivByPOT decides (away). */
            CU_ASSERT_EQUAL(seen(&g, par_requant_gemmlowp(acc, &pg)), (int32_t)(k == 1 ? rhu(x) : rha(x)));
        }
    /* the three differ on the tie 2.5 (fp32: 2, rndnu: 3, gemmlowp: 3) and on -2.5 (-2, -2, and -2 for gemmlowp at
     * ratio 1/2, whose only rounding is SRDHM's half up) */
    par_requant_params pf = mk(PAR_REQUANT_FP32, 0.5, 0, -128, 127);
    par_requant_params pr = mk(PAR_REQUANT_RNDNU, 0.5, 0, -128, 127);
    par_requant_params pg = mk(PAR_REQUANT_GEMMLOWP, 0.5, 0, -128, 127);
    CU_ASSERT_EQUAL(par_requant_fp32(5, &pf), 2);
    CU_ASSERT_EQUAL(par_requant_rndnu(5, &pr), 3);
    CU_ASSERT_EQUAL(par_requant_gemmlowp(5, &pg), 3);
    CU_ASSERT_EQUAL(par_requant_fp32(-5, &pf), -2);
    CU_ASSERT_EQUAL(par_requant_rndnu(-5, &pr), -2);
    CU_ASSERT_EQUAL(par_requant_gemmlowp(-5, &pg), -2);
    CU_ASSERT_EQUAL(par_requant_gemmlowp(-10, &(par_requant_params){0}) , 0); /* zero multiplier: 0 */
    /* gemmlowp's double rounding: at ratio 1/4, 2.25 -> SRDHM 4.5 -> 5 -> RDivByPOT(5, 1) = 2.5 -> 3, one step off
     * the nearest integer although 2.25 is no tie. The oracle explains such steps by "another scheme". */
    par_requant_params pq = mk(PAR_REQUANT_GEMMLOWP, 0.25, 0, -128, 127);
    CU_ASSERT_EQUAL(par_requant_gemmlowp(9, &pq), 3);
    CU_ASSERT_EQUAL(par_requant_gemmlowp(-9, &pq), -2);
    /* one off a tie, by more than the first rounding's unit: all agree */
    for (int si = 0; si < 3; si++) {
        par_requant_params p = mk(schemes[si], 1.0 / 16, 0, -128, 127);
        CU_ASSERT_EQUAL(par_requant_apply(36, &p), 2);   /* 2.25 */
        CU_ASSERT_EQUAL(par_requant_apply(44, &p), 3);   /* 2.75 */
        CU_ASSERT_EQUAL(par_requant_apply(-36, &p), -2);
        CU_ASSERT_EQUAL(par_requant_apply(-44, &p), -3);
    }
    guard_check(&g);
}

/* Saturation at both ends, for qu8 and qs8 ranges and for a fused-activation clamp inside them. */
static void test_saturation(void)
{
    guard g;
    guard_init(&g);
    const int32_t ranges[][3] = {{0, 255, 128}, {-128, 127, 0}, {-128, 127, -128}, {0, 255, 0}, {17, 200, 40}};
    for (int si = 0; si < 3; si++)
        for (int r = 0; r < 5; r++) {
            int32_t lo = ranges[r][0], hi = ranges[r][1], zp = ranges[r][2];
            for (double scale = 0x1p-12; scale < 200; scale *= 3.7) {
                par_requant_params p = mk(schemes[si], scale, zp, lo, hi);
                CU_ASSERT_EQUAL(seen(&g, par_requant_apply(INT32_MAX, &p)), hi);
                CU_ASSERT_EQUAL(seen(&g, par_requant_apply(INT32_MIN, &p)), lo);
                CU_ASSERT_EQUAL(par_requant_apply(INT64_C(1) << 40, &p), hi);    /* saturated to int32 first */
                CU_ASSERT_EQUAL(par_requant_apply(-(INT64_C(1) << 40), &p), lo);
                int64_t big = (int64_t)ceil((hi - zp + 2) / scale);
                if (big <= INT32_MAX) CU_ASSERT_EQUAL(par_requant_apply(big, &p), hi);
            }
        }
    guard_check(&g);
}

/* int32 extremes of the primitives. */
static void test_extremes(void)
{
    guard g;
    guard_init(&g);
    CU_ASSERT_EQUAL(seen(&g, par_requant_srdhm(INT32_MIN, INT32_MIN)), INT32_MAX);
    CU_ASSERT_EQUAL(seen(&g, par_requant_srdhm(INT32_MAX, INT32_MAX)), INT32_MAX - 1);
    CU_ASSERT_EQUAL(seen(&g, par_requant_srdhm(INT32_MIN, INT32_MAX)), INT32_MIN + 1);
    CU_ASSERT_EQUAL(par_requant_srdhm(0, INT32_MIN), 0);
    CU_ASSERT_EQUAL(par_requant_srdhm(4, 1 << 30), 2);    /* a b / 2^31 = 2 exactly */
    CU_ASSERT_EQUAL(par_requant_srdhm(1, 1 << 30), 1);    /* 0.5 rounds up */
    CU_ASSERT_EQUAL(par_requant_srdhm(-1, 1 << 30), 0);   /* -0.5 rounds up too (nudge 1 - 2^30) */
    CU_ASSERT_EQUAL(par_requant_srdhm(-3, 1 << 30), -1);  /* -1.5 -> -1 */
    CU_ASSERT_EQUAL(par_requant_srdhm(1, 1 << 29), 0);    /* 0.25 */
    CU_ASSERT_EQUAL(par_requant_srdhm(3, 1 << 29), 1);    /* 0.75 */
    CU_ASSERT_EQUAL(par_requant_rdivpot(INT32_MIN, 31), -1);
    CU_ASSERT_EQUAL(par_requant_rdivpot(INT32_MAX, 31), 1);
    CU_ASSERT_EQUAL(par_requant_rdivpot(INT32_MIN, 1), INT32_MIN / 2);
    CU_ASSERT_EQUAL(par_requant_rdivpot(5, 1), 3);
    CU_ASSERT_EQUAL(par_requant_rdivpot(-5, 1), -3);
    CU_ASSERT_EQUAL(par_requant_rdivpot(-6, 2), -2); /* -1.5 away from zero */
    CU_ASSERT_EQUAL(par_requant_rdivpot(-7, 2), -2); /* -1.75 */
    CU_ASSERT_EQUAL(par_requant_rdivpot(7, 0), 7);
    /* int32 accumulator extremes through each scheme at the smallest ratio: 2^31 * 2^-32 = 0.5 (a tie) */
    par_requant_params pf = mk(PAR_REQUANT_FP32, 0x1p-32, 0, -128, 127);
    par_requant_params pr = mk(PAR_REQUANT_RNDNU, 0x1p-32, 0, -128, 127);
    par_requant_params pg = mk(PAR_REQUANT_GEMMLOWP, 0x1p-32, 0, -128, 127);
    CU_ASSERT_EQUAL(seen(&g, par_requant_fp32(INT32_MIN, &pf)), 0);  /* -0.5 -> -0 */
    CU_ASSERT_EQUAL(seen(&g, par_requant_rndnu(INT32_MIN, &pr)), 0); /* -0.5 -> 0 (half up) */
    CU_ASSERT_EQUAL(seen(&g, par_requant_gemmlowp(INT32_MIN, &pg)), -1); /* away from zero */
    CU_ASSERT_EQUAL(par_requant_fp32(INT32_MAX, &pf), 0);  /* 0.49999999977 */
    CU_ASSERT_EQUAL(par_requant_rndnu(INT32_MAX, &pr), 0);
    CU_ASSERT_EQUAL(par_requant_gemmlowp(INT32_MAX, &pg), 1); /* double rounding: SRDHM gives 2^30, then 0.5 away */
    /* the largest ratio below 256 */
    for (int si = 0; si < 3; si++) {
        par_requant_params p = mk(schemes[si], 255.99998, 0, -128, 127);
        CU_ASSERT_EQUAL(par_requant_apply(0, &p), 0);
        CU_ASSERT_EQUAL(par_requant_apply(-1, &p), -128);
        CU_ASSERT_EQUAL(par_requant_apply(1, &p), 127);
    }
    guard_check(&g);
}

/* Random accumulators and ratios against a double model. rndnu is exactly round-half-up of acc * scale_f; fp32 is
 * round-half-even of the float product (a 24 x 24-bit product is exact in double, then rounded once to float);
 * gemmlowp agrees with round-half-away of acc * M * 2^(e - 31) except within one first-rounding unit of a tie; all
 * schemes are within one step of each other and equal away from ties. */
static void test_random(void)
{
    par_prng r;
    par_prng_seed(&r, 0x5eed4);
    guard g;
    guard_init(&g);
    int64_t n_diff = 0;
    for (int it = 0; it < 200000; it++) {
        double scale = ldexp(0.5 + 0.5 * par_prng_uniform(&r), -(int)(par_prng_uniform(&r) * 20) - 1);
        int32_t zp = (int32_t)(par_prng_uniform(&r) * 256) - 128;
        int64_t acc = (int64_t)((par_prng_uniform(&r) * 2 - 1) * (200.0 / scale));
        if (acc > INT32_MAX || acc < INT32_MIN) continue;
        par_requant_params pf = mk(PAR_REQUANT_FP32, scale, zp, -128, 127);
        par_requant_params pr = mk(PAR_REQUANT_RNDNU, scale, zp, -128, 127);
        par_requant_params pg = mk(PAR_REQUANT_GEMMLOWP, scale, zp, -128, 127);
        double sf = (double)pf.scale;
        double xf = (double)(float)((double)(float)acc * sf);
        double mf = fmin(fmax(rne(xf) + zp, -128), 127);
        double mr = fmin(fmax((double)floorl((long double)acc * sf + 0.5L) + zp, -128), 127); /* exact in 64 bits */
        int32_t a = seen(&g, par_requant_fp32(acc, &pf));
        int32_t b = par_requant_rndnu(acc, &pr);
        int32_t c = par_requant_gemmlowp(acc, &pg);
        CU_ASSERT_EQUAL(a, (int32_t)mf);
        CU_ASSERT_EQUAL(b, (int32_t)mr);
        long double xg = (long double)acc * pg.multiplier * powl(2.0L, pg.shift - 31);
        long double fr = xg - floorl(xg);
        int right = pg.shift > 0 ? 0 : -pg.shift;
        long double unit = right > 0 ? powl(2.0L, -right) : 1.0L; /* first rounding's error, in output steps */
        if (fabsl(fr - 0.5L) > unit) {
            double mg = fmin(fmax((double)(xg >= 0 ? floorl(xg + 0.5L) : -floorl(-xg + 0.5L)) + zp, -128), 127);
            CU_ASSERT_EQUAL(c, (int32_t)mg);
        }
        CU_ASSERT(abs(a - b) <= 1 && abs(a - c) <= 1 && abs(b - c) <= 1);
        double xe = (double)acc * scale;
        if (fabs(xe - floor(xe) - 0.5) > 1e-5 * (1 + fabs(xe))) {
            CU_ASSERT(a == b);
            if (fabs(xe - floor(xe) - 0.5) > (double)unit + 1e-5 * (1 + fabs(xe))) CU_ASSERT(b == c);
        }
        if (a != b || b != c) n_diff++;
    }
    guard_check(&g);
    CU_ASSERT(n_diff > 0); /* the sample reaches ties and gemmlowp's double rounding */
}

/* Ties of a non-power-of-two ratio: scale 3/8 (exact in float and in Q31), acc = 4 (1.5) and 12 (4.5). */
static void test_ties_nonpow2(void)
{
    guard g;
    guard_init(&g);
    for (int si = 0; si < 3; si++) {
        par_requant_params p = mk(schemes[si], 0.375, 0, -128, 127);
        int32_t a = seen(&g, par_requant_apply(4, &p)), b = seen(&g, par_requant_apply(12, &p));
        int32_t c = par_requant_apply(-4, &p);
        if (schemes[si] == PAR_REQUANT_FP32) CU_ASSERT(a == 2 && b == 4 && c == -2);
        if (schemes[si] == PAR_REQUANT_RNDNU) CU_ASSERT(a == 2 && b == 5 && c == -1);
        if (schemes[si] == PAR_REQUANT_GEMMLOWP) CU_ASSERT(a == 2 && b == 5 && c == -2);
    }
    guard_check(&g);
}

/* The add formula: against the double sum, within one step, equal away from ties; ties follow each scheme. */
static void test_add(void)
{
    par_prng r;
    par_prng_seed(&r, 77);
    guard g;
    guard_init(&g);
    par_msg m = {{0}};
    par_requant_add_params p;
    CU_ASSERT(par_requant_add_params_init(&p, PAR_REQUANT_FP32, 1.0f, 0, 1e-4f, 0, 1.0f, 0, 0, 255, &m) == PAR_ERROR);
    for (int it = 0; it < 2000; it++) {
        float sa = (float)(0.01 + par_prng_uniform(&r) * 0.1), sb = (float)(0.01 + par_prng_uniform(&r) * 0.1);
        float so = (float)(0.02 + par_prng_uniform(&r) * 0.2);
        int32_t za = (int32_t)(par_prng_uniform(&r) * 256), zb = (int32_t)(par_prng_uniform(&r) * 256);
        int32_t zo = (int32_t)(par_prng_uniform(&r) * 256);
        for (int si = 0; si < 3; si++) {
            CU_ASSERT_FATAL(par_requant_add_params_init(&p, schemes[si], sa, za, sb, zb, so, zo, 0, 255, &m) == PAR_OK);
            CU_ASSERT(p.shift >= 12 && p.shift <= 30);
            for (int k = 0; k < 8; k++) {
                int32_t qa = (int32_t)(par_prng_uniform(&r) * 256), qb = (int32_t)(par_prng_uniform(&r) * 256);
                double x = ((double)sa * (qa - za) + (double)sb * (qb - zb)) / so;
                int32_t q = seen(&g, par_requant_add(qa, qb, &p));
                double ideal = fmin(fmax(rne(x) + zo, 0), 255);
                CU_ASSERT(fabs(q - ideal) <= 1);
                if (fabs(x - floor(x) - 0.5) > 1e-3) CU_ASSERT_EQUAL(q, (int32_t)ideal);
            }
        }
    }
    /* exact tie: ratios 1/2 and 1/2: (1 + 2) / 2 = 1.5 -> 2 (even), 2 (up), 2 (away); (1 + 4)/2 = 2.5 -> 2, 3, 3 */
    const int32_t want[3][2] = {{2, 2}, {2, 3}, {2, 3}};
    for (int si = 0; si < 3; si++) {
        CU_ASSERT_FATAL(par_requant_add_params_init(&p, schemes[si], 0.5f, 0, 0.5f, 0, 1.0f, 0, -128, 127, &m) == PAR_OK);
        CU_ASSERT_EQUAL(par_requant_add(1, 2, &p), want[si][0]);
        CU_ASSERT_EQUAL(par_requant_add(1, 4, &p), want[si][1]);
        CU_ASSERT_EQUAL(par_requant_add(-1, -4, &p), si == 1 ? -2 : -3 + (si == 0));
    }
    guard_check(&g);
}

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

/* Lookup tables: monotone for a monotone function, exact at representable points, clamped; clamp ranges. */
/* The half-away schemes, hand-derived. rndna at ratio 2^-k: every half-integer rounds away from zero, both signs. */
static void test_half_away(void)
{
    guard g;
    guard_init(&g);
    for (int k = 1; k <= 20; k++)
        for (int32_t m = -60; m <= 60; m++) {
            int64_t acc = (2 * (int64_t)m + 1) * (INT64_C(1) << (k - 1));
            par_requant_params pa = mk(PAR_REQUANT_RNDNA, ldexp(1.0, -k), 0, -128, 127);
            par_requant_params pq = mk(PAR_REQUANT_PYTORCH_QNNP, ldexp(1.0, -k), 0, -128, 127);
            CU_ASSERT_EQUAL(seen(&g, par_requant_rndna(acc, &pa)), (int32_t)rha(m + 0.5));
            CU_ASSERT_EQUAL(seen(&g, par_requant_apply(acc, &pq)), (int32_t)rne(m + 0.5)); /* its fp32 epilogue */
        }
    /* ratio 3/8: 4 -> 1.5 -> 2, 12 -> 4.5 -> 5, -4 -> -2, -12 -> -5; off ties as the others: 5 -> 1.875 -> 2 */
    par_requant_params p = mk(PAR_REQUANT_RNDNA, 0.375, 0, -128, 127);
    CU_ASSERT_EQUAL(par_requant_rndna(4, &p), 2);
    CU_ASSERT_EQUAL(par_requant_rndna(12, &p), 5);
    CU_ASSERT_EQUAL(par_requant_rndna(-4, &p), -2);
    CU_ASSERT_EQUAL(par_requant_rndna(-12, &p), -5);
    CU_ASSERT_EQUAL(par_requant_rndna(5, &p), 2);
    CU_ASSERT_EQUAL(par_requant_rndna(-5, &p), -2);
    CU_ASSERT_EQUAL(par_requant_rndna(-3, &p), -1); /* -1.125 */
    /* the add formula: ratios 1/2 and 1/2 into scale 1. QNNPACK's shift is 22 (multipliers 2^21), one more than
     * parity's 21; (1 + 2) / 2 = 1.5 -> 2, (1 + 4) / 2 = 2.5 -> 3, and the negatives -> -2, -3 (away) where the
     * fp32 add gives 2, 2, -2, -2 (even) */
    par_msg msg = {{0}};
    par_requant_add_params ap;
    const par_requant away[2] = {PAR_REQUANT_RNDNA, PAR_REQUANT_PYTORCH_QNNP};
    for (int i = 0; i < 2; i++) {
        CU_ASSERT_FATAL(par_requant_add_params_init(&ap, away[i], 0.5f, 0, 0.5f, 0, 1.0f, 0, -128, 127, &msg) == PAR_OK);
        CU_ASSERT_EQUAL(ap.shift, i ? 22 : 21);
        CU_ASSERT_EQUAL(ap.a_multiplier, i ? 1 << 21 : 1 << 20);
        CU_ASSERT_EQUAL(seen(&g, par_requant_add(1, 2, &ap)), 2);
        CU_ASSERT_EQUAL(seen(&g, par_requant_add(1, 4, &ap)), 3);
        CU_ASSERT_EQUAL(seen(&g, par_requant_add(-1, -2, &ap)), -2);
        CU_ASSERT_EQUAL(seen(&g, par_requant_add(-1, -4, &ap)), -3);
        CU_ASSERT_EQUAL(par_requant_add(-1, -1, &ap), -1); /* no tie */
    }
    guard_check(&g);
}

/* PyTorch QNNPACK's scalar add (pytorch_qnnp_compute_scalar_add_quantization_params, pytorch_qnnp_add_quantize),
 * transcribed here with its own bit tricks: uint8 inputs, zero point product, remainder mask and threshold. */
static uint8_t qnnp_add(uint8_t a, uint8_t b, uint8_t za, uint8_t zb, uint8_t zy, float ra, float rb)
{
    const float rmax = ra > rb ? ra : rb;
    uint32_t bits, ab, bb;
    memcpy(&bits, &rmax, 4);
    const uint32_t shift = (uint32_t)(21 - ((int32_t)(bits >> 23) - 127));
    float fa, fb;
    memcpy(&ab, &ra, 4);
    memcpy(&bb, &rb, 4);
    ab += shift << 23;
    bb += shift << 23;
    memcpy(&fa, &ab, 4);
    memcpy(&fb, &bb, 4);
    const uint32_t am = (uint32_t)(int32_t)lrintf(fa), bm = (uint32_t)(int32_t)lrintf(fb);
    const int32_t zpp = (int32_t) - (am * (uint32_t)za + bm * (uint32_t)zb);
    const int32_t mask = (int32_t)((UINT32_C(1) << shift) - 1), thr = mask >> 1;
    int32_t acc = zpp + (int32_t)((uint32_t)a * am) + (int32_t)((uint32_t)b * bm);
    const int32_t rem = (acc & mask) - (int32_t)(acc < 0);
    acc = (acc >> shift) + (int32_t)(rem > thr); /* arithmetic on gcc and clang */
    int32_t y = acc + zy;
    return (uint8_t)(y < 0 ? 0 : y > 255 ? 255 : y);
}

static void test_pytorch_qnnp_add(void)
{
    par_prng r;
    par_prng_seed(&r, 78);
    guard g;
    guard_init(&g);
    par_msg m = {{0}};
    par_requant_add_params p;
    int64_t n_tie = 0;
    for (int it = 0; it < 2000; it++) {
        float sa = (float)(0.01 + par_prng_uniform(&r) * 0.1), sb = (float)(0.01 + par_prng_uniform(&r) * 0.1);
        float so = (float)(0.02 + par_prng_uniform(&r) * 0.2);
        if (it % 4 == 0) sa = sb = 0.25f, so = 0.5f; /* ratios 1/2: many exact ties */
        uint8_t za = (uint8_t)(par_prng_uniform(&r) * 256), zb = (uint8_t)(par_prng_uniform(&r) * 256);
        uint8_t zo = (uint8_t)(par_prng_uniform(&r) * 256);
        CU_ASSERT_FATAL(par_requant_add_params_init(&p, PAR_REQUANT_PYTORCH_QNNP, sa, za, sb, zb, so, zo, 0, 255,
                                                    &m) == PAR_OK);
        for (int k = 0; k < 8; k++) {
            uint8_t qa = (uint8_t)(par_prng_uniform(&r) * 256), qb = (uint8_t)(par_prng_uniform(&r) * 256);
            int32_t q = seen(&g, par_requant_add(qa, qb, &p));
            CU_ASSERT_EQUAL(q, qnnp_add(qa, qb, za, zb, zo, sa / so, sb / so));
            double t;
            n_tie += par_requant_add_tie((int64_t)p.a_multiplier * (qa - za) + (int64_t)p.b_multiplier * (qb - zb),
                                         &p, &t);
        }
    }
    CU_ASSERT(n_tie > 100);
    guard_check(&g);
}

/* Where each scheme's arithmetic lands exactly on a tie, and what each rule picks there. */
static void test_tie_detection(void)
{
    double t = 0;
    /* the rules at 2.5, -2.5, 1.5, -1.5: even, away, up, down, toward zero */
    const double at[4] = {2.5, -2.5, 1.5, -1.5};
    const double want[4][PAR_TIE_N_RULES] = {{2, 3, 3, 2, 2}, {-2, -3, -2, -3, -2}, {2, 2, 2, 1, 1}, {-2, -2, -1, -2, -1}};
    for (int i = 0; i < 4; i++)
        for (int r = 0; r < PAR_TIE_N_RULES; r++) CU_ASSERT_EQUAL(par_tie_round(at[i], (par_tie_rule)r), want[i][r]);
    CU_ASSERT_STRING_EQUAL(par_tie_rule_name(PAR_TIE_AWAY), "away");
    CU_ASSERT_STRING_EQUAL(par_tie_rule_words(PAR_TIE_EVEN), "half to even");
    CU_ASSERT(par_tie_rule_name((par_tie_rule)PAR_TIE_N_RULES) == NULL);
    /* the rule each scheme declares */
    CU_ASSERT_EQUAL(par_requant_tie_rule(PAR_REQUANT_FP32, 0), PAR_TIE_EVEN);
    CU_ASSERT_EQUAL(par_requant_tie_rule(PAR_REQUANT_FP32, 1), PAR_TIE_EVEN);
    CU_ASSERT_EQUAL(par_requant_tie_rule(PAR_REQUANT_RNDNU, 1), PAR_TIE_UP);
    CU_ASSERT_EQUAL(par_requant_tie_rule(PAR_REQUANT_GEMMLOWP, 0), PAR_TIE_AWAY);
    CU_ASSERT_EQUAL(par_requant_tie_rule(PAR_REQUANT_RNDNA, 0), PAR_TIE_AWAY);
    CU_ASSERT_EQUAL(par_requant_tie_rule(PAR_REQUANT_PYTORCH_QNNP, 0), PAR_TIE_EVEN);
    CU_ASSERT_EQUAL(par_requant_tie_rule(PAR_REQUANT_PYTORCH_QNNP, 1), PAR_TIE_AWAY);
    /* fp32 at 1/2: 5 -> 2.5 and -5 -> -2.5 are ties, 4 is not */
    par_requant_params p = mk(PAR_REQUANT_FP32, 0.5, 0, -128, 127);
    CU_ASSERT(par_requant_tie(5, &p, &t) == 1 && t == 2.5);
    CU_ASSERT(par_requant_tie(-5, &p, &t) == 1 && t == -2.5);
    CU_ASSERT(par_requant_tie(4, &p, &t) == 0);
    /* rndnu and rndna at 3/8: 4 -> 1.5, -12 -> -4.5; 5 (1.875) is none */
    for (int i = 0; i < 2; i++) {
        p = mk(i ? PAR_REQUANT_RNDNA : PAR_REQUANT_RNDNU, 0.375, 0, -128, 127);
        CU_ASSERT(par_requant_tie(4, &p, &t) == 1 && t == 1.5);
        CU_ASSERT(par_requant_tie(-12, &p, &t) == 1 && t == -4.5);
        CU_ASSERT(par_requant_tie(5, &p, &t) == 0);
        CU_ASSERT(par_requant_tie(-5, &p, &t) == 0);
    }
    /* gemmlowp at 1/4 (SRDHM halves, RDivByPOT by 1): 10 -> 5 / 2 = 2.5; 9 -> SRDHM 4.5 -> 5, then 2.5 as well (the
     * tie of its final rounding); 8 -> 2 is none; -10 -> -2.5 */
    p = mk(PAR_REQUANT_GEMMLOWP, 0.25, 0, -128, 127);
    CU_ASSERT(par_requant_tie(10, &p, &t) == 1 && t == 2.5);
    CU_ASSERT(par_requant_tie(9, &p, &t) == 1 && t == 2.5);
    CU_ASSERT(par_requant_tie(8, &p, &t) == 0);
    CU_ASSERT(par_requant_tie(-10, &p, &t) == 1 && t == -2.5);
    /* the add formula at ratios 1/2: acc = 2^20 (1 + 2) over 2^21 = 1.5 */
    par_requant_add_params ap;
    par_msg msg = {{0}};
    CU_ASSERT_FATAL(par_requant_add_params_init(&ap, PAR_REQUANT_FP32, 0.5f, 0, 0.5f, 0, 1.0f, 0, -128, 127, &msg) ==
                    PAR_OK);
    CU_ASSERT(par_requant_add_tie((INT64_C(1) << 20) * 3, &ap, &t) == 1 && t == 1.5);
    CU_ASSERT(par_requant_add_tie(-(INT64_C(1) << 20) * 5, &ap, &t) == 1 && t == -2.5);
    CU_ASSERT(par_requant_add_tie((INT64_C(1) << 20) * 4, &ap, &t) == 0);
    CU_ASSERT(par_requant_add_tie((INT64_C(1) << 20) * 3 + 1, &ap, &t) == 0);
}

static void test_lut_clamp(void)
{
    uint8_t t[256];
    guard g;
    guard_init(&g);
    par_requant_lut(sigmoid, PAR_DTYPE_QU8, 0.05f, 128, 1.0f / 256, 0, 0, 255, t);
    for (int i = 1; i < 256; i++) CU_ASSERT(t[i] >= t[i - 1]);
    CU_ASSERT_EQUAL(t[128], 128); /* sigmoid(0) = 0.5 = 128/256 */
    for (int i = 0; i < 256; i++) seen(&g, t[i]);
    par_requant_lut(tanh, PAR_DTYPE_QS8, 0.05f, 0, 1.0f / 128, 0, -128, 127, t);
    CU_ASSERT_EQUAL((int8_t)t[128], 0);     /* q = 0 at index 128 for qs8 */
    CU_ASSERT_EQUAL((int8_t)t[255], 127);   /* tanh(6.35) * 128 = 127.9 clamped to 127 */
    CU_ASSERT_EQUAL((int8_t)t[0], -128);
    int32_t lo, hi;
    par_requant_clamp_range(PAR_DTYPE_QU8, 0.1f, 10, 0.0, 6.0, &lo, &hi);
    CU_ASSERT(lo == 10 && hi == 70);
    par_requant_clamp_range(PAR_DTYPE_QS8, 0.1f, 0, -INFINITY, INFINITY, &lo, &hi);
    CU_ASSERT(lo == -128 && hi == 127);
    par_requant_clamp_range(PAR_DTYPE_QS8, 1.0f, 0, -1000.0, 1000.0, &lo, &hi);
    CU_ASSERT(lo == -128 && hi == 127);
    seen(&g, lo);
    guard_check(&g);
}

/* PyTorch's ChooseQuantizationParams, by hand:
 *   [-1, 3], qu8: s = 4 / 255; the ideal zero point 0 + 1 / s = 63.75 (= 255 - 3 / s), rounded 64.
 *   [-1, 1], reduce_range: s = 2 / 127, ideal 63.5, rounded to even: 64.
 *   [0, 0]: s = 0, so 0.1, zero point 0.   [0, 1e-6]: s = 3.9e-9 < 6.1e-5, so 6.1e-5 and the range widens, zp 0.
 *   [-3, -1] (the range always holds 0: [-3, 0]): s = 3 / 255, ideal 0 + 3 / s = 255. */
static void test_dynamic_qparams(void)
{
    float s;
    int32_t z;
    double z0, lo;
    par_requant_dynamic_qparams(-1.0f, 3.0f, 0, &s, &z, &z0, &lo);
    CU_ASSERT_EQUAL(s, (float)(4.0 / 255.0));
    CU_ASSERT_EQUAL(z, 64);
    CU_ASSERT_DOUBLE_EQUAL(z0, 63.75, 1e-12);
    CU_ASSERT_EQUAL(lo, -1.0);
    par_requant_dynamic_qparams(-1.0f, 1.0f, 1, &s, &z, &z0, NULL);
    CU_ASSERT_EQUAL(s, (float)(2.0 / 127.0));
    CU_ASSERT_DOUBLE_EQUAL(z0, 63.5, 1e-12);
    CU_ASSERT_EQUAL(z, 64);
    par_requant_dynamic_qparams(0.0f, 0.0f, 0, &s, &z, NULL, NULL);
    CU_ASSERT_EQUAL(s, 0.1f);
    CU_ASSERT_EQUAL(z, 0);
    par_requant_dynamic_qparams(0.0f, 1e-6f, 0, &s, &z, NULL, NULL);
    CU_ASSERT_EQUAL(s, 6.1e-5f);
    CU_ASSERT_EQUAL(z, 0);
    par_requant_dynamic_qparams(-3.0f, -1.0f, 0, &s, &z, NULL, NULL);
    CU_ASSERT_EQUAL(s, (float)(3.0 / 255.0));
    CU_ASSERT_EQUAL(z, 255);
}

/* gemmlowp_android: Android's ratio (the product of the scales rounded to float, then a double division) with
 * gemmlowp's rounding, against gemmlowp's all-double ratio. Scales (floats, exact in hex) s_x = 0x1.991dc8p-6,
 * s_w = 0x1.33fa5p-6, s_out = 0x1.4cc4ccp-3. Worked out in exact arithmetic:
 *   s_x * s_w = 0x1.ec2ebdc69e8p-12 exactly (48 significant bits); rounded to float 0x1.ec2ebep-12 (the 25th bit
 *   onward 0xdc69e8 > half of a unit: up).
 *   double ratio  0x1.ec2ebdc69e8p-12 / s_out = 0x1.7aa336d0a5d6fp-9
 *   Android ratio 0x1.ec2ebep-12      / s_out = 0x1.7aa336fcca844p-9
 *   QuantizeMultiplier (q in [0.5, 1), exponent -8, round(q 2^31) half away): 1588121012 and 1588121023.
 *   acc = 40674: SRDHM(acc, M) = round(acc M / 2^31) half up = 30079 (30079.37...) and 30080 (30079.52...);
 *   RoundingDivideByPOT(., 8) half away: 117 (117.496) and 118 (117.5, a tie rounded away).
 * So the scheme's ratio alone moves this element by one step. Per-tensor params from par_requant_params_for. */
static void test_gemmlowp_android(void)
{
    const float sx = 0x1.991dc8p-6f, sw = 0x1.33fa5p-6f, so = 0x1.4cc4ccp-3f;
    CU_ASSERT_STRING_EQUAL(par_requant_name(PAR_REQUANT_GEMMLOWP_ANDROID), "gemmlowp_android");
    CU_ASSERT_EQUAL(par_requant_scale_android(sx, sw, so), 0x1.7aa336fcca844p-9);
    CU_ASSERT_EQUAL(par_requant_scale_f64(sx, sw, so), 0x1.7aa336d0a5d6fp-9);
    par_requant_params pg, pa;
    par_msg m = {{0}};
    CU_ASSERT_FATAL(par_requant_params_for(&pg, PAR_REQUANT_GEMMLOWP, sx, sw, so, 0, 0, 255, &m) == PAR_OK);
    CU_ASSERT_FATAL(par_requant_params_for(&pa, PAR_REQUANT_GEMMLOWP_ANDROID, sx, sw, so, 0, 0, 255, &m) == PAR_OK);
    CU_ASSERT_EQUAL(pg.multiplier, 1588121012);
    CU_ASSERT_EQUAL(pa.multiplier, 1588121023);
    CU_ASSERT_EQUAL(pg.shift, -8);
    CU_ASSERT_EQUAL(pa.shift, -8);
    CU_ASSERT_EQUAL(par_requant_apply(40674, &pg), 117);
    CU_ASSERT_EQUAL(par_requant_apply(40674, &pa), 118);
    CU_ASSERT_EQUAL(par_requant_apply(-40674, &pa), 0); /* -118 clamped to qmin 0 */
    /* Its ties are gemmlowp's: the one above is detected at 117.5, and the rule is half away from zero. */
    double t = 0;
    CU_ASSERT_EQUAL(par_requant_tie(40674, &pa, &t), 1);
    CU_ASSERT_EQUAL(t, 117.5);
    CU_ASSERT_EQUAL(par_requant_tie(40674, &pg, &t), 0);
    CU_ASSERT_EQUAL(par_requant_tie_rule(PAR_REQUANT_GEMMLOWP_ANDROID, 0), PAR_TIE_AWAY);
    /* Without a product of two scales (w_scale 1) the two ratios agree. */
    CU_ASSERT_EQUAL(par_requant_scale_android(sx, 1.0f, so), par_requant_scale_f64(sx, 1.0f, so));
}

/* par_requant_slack: how far a scheme's arithmetic moves a value before its final rounding. For every scheme and
 * random ratios in [2^-12, 4) and accumulators, the result lies within 1/2 + slack (+ the multiplier's own rounding)
 * of acc * r; gemmlowp's bound is reached (an average of 8 requantized by 0.316: -33 gives -38 with zero point -27,
 * where acc * r + z = -37.42), and its slack is 1/4 there, 0 from ratio 1/2 up, and 0 for the other schemes. */
static void test_slack(void)
{
    par_msg m = {{0}};
    par_requant_params p;
    const double r = (double)(0.0271857828f * 0.125f) / (double)0.0107655972f;
    CU_ASSERT_FATAL(par_requant_params_init(&p, PAR_REQUANT_GEMMLOWP_ANDROID, r, -27, -128, 127, &m) == PAR_OK);
    CU_ASSERT_EQUAL(par_requant_apply(-33, &p), -38);
    CU_ASSERT_EQUAL(par_requant_slack(&p), 0.25);
    CU_ASSERT_FATAL(par_requant_params_init(&p, PAR_REQUANT_GEMMLOWP, 0.75, 0, -128, 127, &m) == PAR_OK);
    CU_ASSERT_EQUAL(par_requant_slack(&p), 0);
    CU_ASSERT_FATAL(par_requant_params_init(&p, PAR_REQUANT_RNDNU, r, 0, -128, 127, &m) == PAR_OK);
    CU_ASSERT_EQUAL(par_requant_slack(&p), 0);
    uint64_t st = 12345;
    int64_t n = 0, reached = 0;
    double worst_over = 0;
    for (int trial = 0; trial < 20000; trial++) {
        st = st * 6364136223846793005ULL + 1442695040888963407ULL;
        double ratio = ldexp(1.0 + (double)(st >> 11) * 0x1p-53, (int)((st >> 3) % 14) - 12);
        st = st * 6364136223846793005ULL + 1442695040888963407ULL;
        int64_t acc = (int64_t)((st >> 33) % 20001) - 10000;
        for (int s = 0; s < PAR_REQUANT_N_SCHEMES; s++) {
            if (par_requant_params_init(&p, (par_requant)s, ratio, 0, INT32_MIN, INT32_MAX, &m) != PAR_OK) continue;
            const double exact = (double)acc * ratio, got = par_requant_apply(acc, &p);
            const double over = fabs(got - exact) - (0.5 + par_requant_slack(&p) + 1e-6 * fabs(exact) + 1e-9);
            worst_over = fmax(worst_over, over);
            reached += fabs(got - exact) > 0.5 + 1e-6 * fabs(exact) + 1e-9;
            n++;
        }
    }
    CU_ASSERT(n > 50000);
    CU_ASSERT(reached > 0); /* the slack is needed: a single rounding would not explain these */
    CU_ASSERT(worst_over <= 0);
    PAR_TEST_NOTE("\n  slack: %lld results, %lld beyond half a step, worst excess %.3g", (long long)n, (long long)reached,
                  worst_over);
}

/* par_requant_qd8_qparams against the rule restated as one pass (the first non-finite element ends it): the same
 * parameters, bit for bit, and the same refusals, on rows of 1 to 19 elements holding signed zeros, subnormals,
 * huge values, infinities and NaNs at every position. */
static int qd8_naive(const float *x, int64_t k, float *inv, float *sx, int32_t *zp)
{
    float lo = 0.0f, hi = 0.0f;
    for (int64_t i = 0; i < k; i++) {
        if (!isfinite(x[i])) return 0;
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    const float s = lo == hi ? 1.0f : 255.0f / (hi - lo);
    if (!isfinite(s) || s == 0.0f || !isfinite(1.0f / s)) return 0;
    const float lo_s = lo * s, hi_s = hi * s;
    float z = (-128.0f + lo_s) + (127.0f + hi_s) > 0 ? -128.0f - lo_s : 127.0f - hi_s;
    z = z < -128.0f ? -128.0f : z > 127.0f ? 127.0f : z;
    *inv = s, *sx = 1.0f / s, *zp = (int32_t)rintf(z);
    return 1;
}

static void test_qd8_qparams(void)
{
    static const float special[] = {0.0f, -0.0f, 1e-40f, -1e-40f, 3e38f, -3e38f, INFINITY, -INFINITY, NAN, 1.0f};
    par_prng r;
    par_prng_seed(&r, 88);
    int rows = 0, refused = 0, bad = 0;
    for (int t = 0; t < 20000; t++) {
        float x[19];
        const int64_t k = 1 + (int64_t)(par_prng_uniform(&r) * 19);
        for (int64_t i = 0; i < k; i++)
            x[i] = par_prng_uniform(&r) < 0.1 ? special[(int)(par_prng_uniform(&r) * 10)]
                                               : (float)((par_prng_uniform(&r) * 2 - 1) * 8);
        float i1 = 0, s1 = 0, i2 = 0, s2 = 0;
        int32_t z1 = 0, z2 = 0;
        const int a = par_requant_qd8_qparams(x, k, &i1, &s1, &z1), b = qd8_naive(x, k, &i2, &s2, &z2);
        bad += a != b || (a && (memcmp(&i1, &i2, 4) || memcmp(&s1, &s2, 4) || z1 != z2));
        rows++, refused += !b;
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(refused > 1000 && refused < rows - 1000); /* both outcomes are exercised */
}

static const CU_TestInfo tests[] = {
    {"first-rounding slack", test_slack},
    {"dynamic quantization parameters (PyTorch's rule) by hand", test_dynamic_qparams},
    {"names and params", test_names},
    {"exact power-of-two scales", test_exact_pow2},
    {"ties each way", test_ties},
    {"ties of a non-power-of-two ratio", test_ties_nonpow2},
    {"saturation at both ends", test_saturation},
    {"int32 extremes", test_extremes},
    {"random against a double model", test_random},
    {"add formula", test_add},
    {"half-away schemes: rndna, pytorch_qnnp", test_half_away},
    {"pytorch_qnnp add against QNNPACK's scalar formula", test_pytorch_qnnp_add},
    {"tie detection and tie rules", test_tie_detection},
    {"lookup tables and clamps", test_lut_clamp},
    {"gemmlowp_android: Android's ratio, gemmlowp's rounding", test_gemmlowp_android},
        {"qd8 row parameters: the same bits as one pass, the same refusals", test_qd8_qparams},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("requant", tests)
