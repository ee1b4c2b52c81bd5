/*
 * test_prng.c - the seeded PRNG: fixed known outputs, ranges, statistics of uniform and normal draws, unbiased
 * integers, and the string hash. Deterministic: every seed is a literal.
 */
#include <math.h>
#include <string.h>

#include "core/prng.h"
#include "tmain.h"

/* The literals below were computed once by an independent implementation of the same algorithms (a few lines of
 * Python on arbitrary-precision integers: splitmix64 seeding, xoshiro256** 1.0, (x >> 11) * 2^-53, the sum of 12
 * uniforms minus 6, rejection with threshold 2^64 mod range, FNV-1a 64 then two splitmix64 steps). */
static void test_known_outputs(void)
{
    static const uint64_t seed1[4] = {0xb3f2af6d0fc710c5ull, 0x853b559647364ceaull, 0x92f89756082a4514ull,
                                      0x642e1c7bc266a3a7ull};
    par_prng r;
    par_prng_seed(&r, 1);
    for (int i = 0; i < 4; i++) CU_ASSERT_EQUAL(par_prng_next(&r), seed1[i]);

    par_prng_seed(&r, 42);
    CU_ASSERT_EQUAL(par_prng_next(&r), 0x15780b2e0c2ec716ull);
    CU_ASSERT_EQUAL(par_prng_next(&r), 0x6104d9866d113a7eull);

    par_prng_seed(&r, 1);
    CU_ASSERT_EQUAL(par_prng_uniform(&r), 0.7029218331588505);
    CU_ASSERT_EQUAL(par_prng_uniform(&r), 0.5204366199388569);
    CU_ASSERT_EQUAL(par_prng_uniform(&r), 0.5741057000197225);

    par_prng_seed(&r, 1);
    CU_ASSERT_EQUAL(par_prng_normal(&r), 0.790425828358094);

    static const int64_t ints[8] = {0, 3, 1, 3, -2, 3, -3, -3};
    par_prng_seed(&r, 1);
    for (int i = 0; i < 8; i++) CU_ASSERT_EQUAL(par_prng_int(&r, -3, 3), ints[i]);

    CU_ASSERT_EQUAL(par_hash_str("x", 1), 0x05091a5b3ab97166ull);
    CU_ASSERT_EQUAL(par_hash_str("", 0), 0x5b21f68ffa77f14cull);
    CU_ASSERT_EQUAL(par_hash_str("w", 7), 0xfbdd6b90f1014a6bull);
}

static void test_same_seed_same_stream(void)
{
    par_prng a, b, c;
    par_prng_seed(&a, 12345);
    par_prng_seed(&b, 12345);
    par_prng_seed(&c, 12346);
    int differ = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t x = par_prng_next(&a);
        CU_ASSERT_EQUAL_FATAL(x, par_prng_next(&b));
        differ += x != par_prng_next(&c);
    }
    CU_ASSERT(differ > 990);
}

/* 10^6 uniforms: all in [0, 1); the mean within 6 standard errors (sqrt(1/12 / n) = 2.9e-4) of 1/2; each of 10
 * deciles within 6 sigma of n/10 (sigma = sqrt(n * 0.1 * 0.9) = 300). */
static void test_uniform_range_and_mean(void)
{
    const int n = 1000000;
    par_prng r;
    par_prng_seed(&r, 2024);
    double sum = 0, lo = 1, hi = 0;
    int bins[10] = {0};
    for (int i = 0; i < n; i++) {
        double u = par_prng_uniform(&r);
        sum += u;
        lo = u < lo ? u : lo;
        hi = u > hi ? u : hi;
        bins[(int)(u * 10)]++;
    }
    CU_ASSERT(lo >= 0.0);
    CU_ASSERT(hi < 1.0);
    CU_ASSERT(fabs(sum / n - 0.5) < 6 * sqrt(1.0 / 12 / n));
    for (int b = 0; b < 10; b++) CU_ASSERT(fabs(bins[b] - n / 10.0) < 6 * 300);
}

/* 2 x 10^5 normals: all in [-6, 6); mean within 6 standard errors (1 / sqrt(n) = 2.2e-3) of 0; variance within 6
 * standard errors of 1 (the Irwin-Hall sum has kurtosis 3 - 0.1, so sd(s^2) is about sqrt(1.9 / n) = 3.1e-3);
 * about 68.3% within one sigma (Irwin-Hall(12): 0.6827 within 0.003 of the Gaussian figure). */
static void test_normal_moments(void)
{
    const int n = 200000;
    par_prng r;
    par_prng_seed(&r, 99);
    double sum = 0, sum2 = 0;
    int inside = 0, bounded = 1;
    for (int i = 0; i < n; i++) {
        double z = par_prng_normal(&r);
        if (!(z >= -6.0 && z < 6.0)) bounded = 0;
        sum += z;
        sum2 += z * z;
        inside += fabs(z) < 1.0;
    }
    double mean = sum / n, var = sum2 / n - mean * mean;
    CU_ASSERT(bounded);
    CU_ASSERT(fabs(mean) < 6 / sqrt((double)n));
    CU_ASSERT(fabs(var - 1.0) < 6 * sqrt(1.9 / n));
    CU_ASSERT(fabs((double)inside / n - 0.6827) < 0.01);
}

/* Integers: each value of [0, 6] about n/7 times (6 sigma), bounds respected, degenerate and full ranges. */
static void test_int_unbiased(void)
{
    const int n = 70000;
    par_prng r;
    par_prng_seed(&r, 5);
    int count[7] = {0}, out_of_range = 0;
    for (int i = 0; i < n; i++) {
        int64_t v = par_prng_int(&r, 0, 6);
        if (v < 0 || v > 6) out_of_range++;
        else count[v]++;
    }
    CU_ASSERT_EQUAL(out_of_range, 0);
    double sigma = sqrt(n * (1.0 / 7) * (6.0 / 7));
    for (int k = 0; k < 7; k++) CU_ASSERT(fabs(count[k] - n / 7.0) < 6 * sigma);

    CU_ASSERT_EQUAL(par_prng_int(&r, 17, 17), 17);
    for (int i = 0; i < 100; i++) {
        int64_t v = par_prng_int(&r, 10, -10); /* swapped bounds */
        CU_ASSERT(v >= -10 && v <= 10);
    }
    int neg = 0;
    for (int i = 0; i < 1000; i++) neg += par_prng_int(&r, INT64_MIN, INT64_MAX) < 0;
    CU_ASSERT(neg > 400 && neg < 600);
    /* A range just over 2^63: the rejection threshold is close to half the draws; it must still terminate. */
    for (int i = 0; i < 100; i++) {
        int64_t v = par_prng_int(&r, -1, INT64_MAX);
        CU_ASSERT(v >= -1);
    }
}

static void test_hash_distinct(void)
{
    CU_ASSERT_NOT_EQUAL(par_hash_str("x", 1), par_hash_str("y", 1));
    CU_ASSERT_NOT_EQUAL(par_hash_str("x", 1), par_hash_str("x", 2));
    CU_ASSERT_NOT_EQUAL(par_hash_str("ab", 0), par_hash_str("ba", 0));
    CU_ASSERT_EQUAL(par_hash_str("weight", 77), par_hash_str("weight", 77));
    CU_ASSERT_EQUAL(par_hash_str(NULL, 3), par_hash_str("", 3));
}

static const CU_TestInfo tests[] = {
    {"known outputs (seed 1, 42)", test_known_outputs},
    {"same seed, same stream", test_same_seed_same_stream},
    {"uniform range and mean", test_uniform_range_and_mean},
    {"normal moments", test_normal_moments},
    {"unbiased integers", test_int_unbiased},
    {"string hash", test_hash_distinct},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("prng", tests)
