/*
 * prng.c - the seeded PRNG behind every generated input: xoshiro256** seeded through splitmix64, uniform doubles
 * from the top 53 bits, an Irwin-Hall normal, unbiased integers, and FNV-1a string hashing for per-tensor seeds.
 *
 * Must not: call libm, use floating point beyond IEEE +, - and * on doubles (each correctly rounded everywhere), or
 * keep any global state. The same seed must give the same bytes on every machine and compiler.
 */
#include "prng.h"

/* splitmix64 (Steele, Lea, Flood 2014): one step of a Weyl sequence followed by a 64-bit finalizer. */
static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

void par_prng_seed(par_prng *r, uint64_t seed)
{
    uint64_t x = seed;
    /* splitmix64 never yields four zero words in a row, so the xoshiro state is never all zero. */
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
}

/* xoshiro256** 1.0 (Blackman, Vigna 2018). */
uint64_t par_prng_next(par_prng *r)
{
    uint64_t *s = r->s;
    const uint64_t result = rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* The top 53 bits times 2^-53: every value k * 2^-53, k in [0, 2^53), exactly representable, so no rounding. */
double par_prng_uniform(par_prng *r)
{
    return (double)(par_prng_next(r) >> 11) * 0x1.0p-53;
}

/* Irwin-Hall: the sum of 12 uniforms on [0, 1) has mean 6 and variance 12 * (1/12) = 1. The sum is computed left
 * to right in double; each partial sum is a multiple of 2^-53 below 12, so it needs at most 57 bits and may round,
 * but IEEE addition rounds the same way everywhere. The result lies in [-6, 6). */
double par_prng_normal(par_prng *r)
{
    double sum = 0.0;
    for (int i = 0; i < 12; i++) sum += par_prng_uniform(r);
    return sum - 6.0;
}

/* Unbiased integer in [lo, hi] by rejection: of the 2^64 possible draws, the lowest (2^64 mod range) are rejected so
 * that the accepted ones are an exact multiple of range. Bounds given in the wrong order are swapped. */
int64_t par_prng_int(par_prng *r, int64_t lo, int64_t hi)
{
    if (hi < lo) {
        int64_t t = lo;
        lo = hi;
        hi = t;
    }
    const uint64_t range = (uint64_t)hi - (uint64_t)lo + 1u; /* 0 means the full 2^64 range */
    if (range == 0) return (int64_t)par_prng_next(r);
    const uint64_t threshold = (0u - range) % range; /* = 2^64 mod range */
    for (;;) {
        const uint64_t x = par_prng_next(r);
        if (x >= threshold) return (int64_t)((uint64_t)lo + x % range);
    }
}

/* FNV-1a 64 of the bytes of s, then mixed with the seed: h' = splitmix64 step from (splitmix64 step from seed) ^ h.
 * Mixing the seed through splitmix64 first keeps (s, seed) pairs that differ only by h ^ seed from colliding. */
uint64_t par_hash_str(const char *s, uint64_t seed)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ull;
    }
    uint64_t x = seed;
    uint64_t k = splitmix64(&x);
    x = k ^ h;
    return splitmix64(&x);
}
