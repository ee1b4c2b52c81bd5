/*
 * qnnpack_test_helpers.h - what the test programs of the qnnpack backend share (test_qnnpack.c,
 * test_qnnpack_kernels.c): a deterministic seeded PRNG and the guard against outputs that are all equal. Included
 * once per program; everything is static inline.
 */
#ifndef QNNPACK_TEST_HELPERS_H
#define QNNPACK_TEST_HELPERS_H

#include <stddef.h>
#include <stdint.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static inline void rng_seed(uint64_t s)
{
    rng_state = s * 0x9e3779b97f4a7c15u + 1;
}
static inline uint32_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}
static inline int32_t rint_in(int32_t lo, int32_t hi)
{
    return lo + (int32_t)(rng() % (uint32_t)(hi - lo + 1));
}

/* Fails when all n bytes are equal: such a test cannot see a wrong kernel. */
static inline int varied(const uint8_t *v, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (v[i] != v[0]) return 1;
    return 0;
}

#endif
