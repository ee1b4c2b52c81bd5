/*
 * gen_src.c - the generator's choice source: a uniform integer in [0, n) from the portable PRNG (seeded graphs) or
 * from the next bytes of a fuzzer input (zeros once the bytes run out, so every input decodes to a graph, and the
 * all-zero tail picks the first, simplest option of every later choice). Reals are drawn in 2^-16 steps, computed
 * with one IEEE multiply and add: no libm, so the same choices give the same graph on every machine.
 */
#include "gen/gen_int.h"

void gen_src_prng(gen_src *s, uint64_t seed)
{
    memset(s, 0, sizeof *s);
    par_prng_seed(&s->prng, seed);
}

void gen_src_bytes(gen_src *s, const uint8_t *data, size_t n)
{
    memset(s, 0, sizeof *s);
    s->bytes = 1;
    s->data = data;
    s->n = data ? n : 0;
}

/* The next k bytes, little-endian (zeros past the end). */
static uint32_t next_bytes(gen_src *s, int k)
{
    uint32_t v = 0;
    for (int i = 0; i < k; i++) {
        uint32_t b = s->pos < s->n ? s->data[s->pos] : 0;
        if (s->pos < s->n) s->pos++;
        v |= b << (8 * i);
    }
    return v;
}

uint32_t gen_below(gen_src *s, uint32_t n)
{
    if (n <= 1) return 0;
    if (!s->bytes) return (uint32_t)par_prng_int(&s->prng, 0, (int64_t)n - 1);
    /* As few bytes as the range needs, so that a fuzzer's mutation of one byte changes one choice. */
    int k = n <= 256u ? 1 : n <= 65536u ? 2 : 4;
    return next_bytes(s, k) % n;
}

int64_t gen_range(gen_src *s, int64_t lo, int64_t hi)
{
    if (hi <= lo) return lo;
    uint64_t span = (uint64_t)(hi - lo);
    if (span >= UINT32_MAX) return lo + (int64_t)gen_below(s, UINT32_MAX);
    return lo + (int64_t)gen_below(s, (uint32_t)span + 1u);
}

int gen_chance(gen_src *s, double p)
{
    if (!(p > 0.0)) return 0;
    if (p >= 1.0) return 1;
    uint32_t t = (uint32_t)(p * 65536.0);
    /* Compared from the top, so that the zero bytes of an exhausted source answer "no": the tail of a short fuzzer
     * input takes no optional branch. */
    return gen_below(s, 65536u) >= 65536u - t;
}

double gen_real(gen_src *s, double lo, double hi)
{
    return lo + (hi - lo) * ((double)gen_below(s, 65536u) / 65536.0);
}
