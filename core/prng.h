/*
 * prng.h - seeded, portable pseudo-random numbers: the same seed gives the same bytes on every machine and compiler.
 * Only integer arithmetic and IEEE +,-,* are used (no libm), so results do not depend on the C library.
 */
#ifndef PAR_PRNG_H
#define PAR_PRNG_H

#include <stdint.h>

typedef struct par_prng {
    uint64_t s[4]; /* xoshiro256** state */
} par_prng;

void par_prng_seed(par_prng *r, uint64_t seed);      /* state from splitmix64(seed) */
uint64_t par_prng_next(par_prng *r);
double par_prng_uniform(par_prng *r);                 /* [0, 1), 53 bits */
double par_prng_normal(par_prng *r);                  /* mean 0, std 1: Irwin-Hall sum of 12 uniforms minus 6 */
int64_t par_prng_int(par_prng *r, int64_t lo, int64_t hi); /* uniform in [lo, hi] */

/* 64-bit FNV-1a of a string, mixed with a seed: derives per-tensor seeds from a case ID and a tensor name. */
uint64_t par_hash_str(const char *s, uint64_t seed);

#endif
