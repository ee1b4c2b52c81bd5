/*
 * f32-gemm-7x32-avx512.c - f32 GEMM micro-kernel, 7 rows x 32 columns (two zmm per row, 14 accumulators), AVX-512F.
 * Per k step: two loads of packed B, seven broadcasts of A, fourteen FMAs (7 cycles on the two FMA ports of this
 * machine, enough independent chains to cover the 4-cycle latency); a single row takes a loop of its own (gemm_1x32).
 * Column tails of 17..31 use a masked store of the second half, tails of 1..16 a 16-wide loop over the first half of
 * the panel. Must not read A past kc of a row or
 * write C outside the mr x nc block; rows past mr alias the last valid row.
 */
#include <immintrin.h>

#include "cpu_ukernels.h"

#define ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6)

/* One row (a GEMV, e.g. a classifier at batch 1): two accumulators per panel, the 7-row loop's arithmetic per output
 * (bias, then one FMA per k ascending), without the six aliased rows' redundant FMAs, which held the weight stream
 * back on a memory-bound product. */
static void gemm_1x32(size_t nc, size_t kc, const float *a, const float *w, float *c, __m512 vmin, __m512 vmax)
{
    for (; nc > 0; nc = nc > 32 ? nc - 32 : 0) {
        __m512 acca = _mm512_load_ps(w), accb = _mm512_load_ps(w + 16);
        w += 32;
        for (size_t k = 0; k < kc; k++) {
            const __m512 va = _mm512_set1_ps(a[k]);
            acca = _mm512_fmadd_ps(va, _mm512_load_ps(w), acca);
            accb = _mm512_fmadd_ps(va, _mm512_load_ps(w + 16), accb);
            w += 32;
        }
        acca = _mm512_min_ps(vmax, _mm512_max_ps(vmin, acca));
        accb = _mm512_min_ps(vmax, _mm512_max_ps(vmin, accb));
        const __mmask16 ma = (__mmask16)(nc >= 16 ? 0xFFFFu : (1u << nc) - 1u);
        const __mmask16 mb = (__mmask16)(nc >= 32 ? 0xFFFFu : nc <= 16 ? 0u : (1u << (nc - 16)) - 1u);
        _mm512_mask_storeu_ps(c, ma, acca);
        _mm512_mask_storeu_ps(c + 16, mb, accb);
        c += 32;
    }
}

void cpu_f32_gemm_7x32__avx512(size_t mr, size_t nc, size_t kc, const float *a, size_t a_stride, const float *w,
                               float *c, size_t cm_stride, const cpu_minmax *p)
{
    const float *a0 = a;
    float *c0 = c;
#define SETUP(i, j)                                                                                                 \
    const float *a##j = a##i + a_stride;                                                                            \
    float *c##j = c##i + cm_stride;                                                                                 \
    if (mr <= j) {                                                                                                  \
        a##j = a##i;                                                                                                \
        c##j = c##i;                                                                                                \
    }
    SETUP(0, 1) SETUP(1, 2) SETUP(2, 3) SETUP(3, 4) SETUP(4, 5) SETUP(5, 6)
#undef SETUP
    const __m512 vmin = _mm512_set1_ps(p->min);
    const __m512 vmax = _mm512_set1_ps(p->max);
    if (mr == 1) {
        gemm_1x32(nc, kc, a, w, c, vmin, vmax);
        return;
    }

    while (nc > 16) {
#define INIT(r)                                                                                                     \
    __m512 acc##r##a = _mm512_load_ps(w);                                                                           \
    __m512 acc##r##b = _mm512_load_ps(w + 16);
        ROWS(INIT)
#undef INIT
        w += 32;
        size_t k = 0;
#define STEP(r)                                                                                                     \
    {                                                                                                               \
        const __m512 va = _mm512_set1_ps(a##r[kk]);                                                                 \
        acc##r##a = _mm512_fmadd_ps(va, vb0, acc##r##a);                                                            \
        acc##r##b = _mm512_fmadd_ps(va, vb1, acc##r##b);                                                            \
    }
#define KSTEP(off)                                                                                                  \
    {                                                                                                               \
        const size_t kk = k + (off);                                                                                \
        const __m512 vb0 = _mm512_load_ps(w + 32 * (off));                                                          \
        const __m512 vb1 = _mm512_load_ps(w + 32 * (off) + 16);                                                     \
        ROWS(STEP)                                                                                                  \
    }
        for (; k + 4 <= kc; k += 4) {
            KSTEP(0) KSTEP(1) KSTEP(2) KSTEP(3)
            w += 128;
        }
        for (; k < kc; k++) {
            KSTEP(0)
            w += 32;
        }
#undef KSTEP
#undef STEP
#define CLAMP(r)                                                                                                    \
    acc##r##a = _mm512_min_ps(vmax, _mm512_max_ps(vmin, acc##r##a));                                                \
    acc##r##b = _mm512_min_ps(vmax, _mm512_max_ps(vmin, acc##r##b));
        ROWS(CLAMP)
#undef CLAMP
        if (nc >= 32) {
            /* Highest row first: aliased rows (mr < 7) then end with the valid row's values, equal anyway. */
#define STORE(r)                                                                                                    \
    _mm512_storeu_ps(c##r, acc##r##a);                                                                              \
    _mm512_storeu_ps(c##r + 16, acc##r##b);                                                                         \
    c##r += 32;
            STORE(6) STORE(5) STORE(4) STORE(3) STORE(2) STORE(1) STORE(0)
#undef STORE
            nc -= 32;
        } else {
            const __mmask16 m = (__mmask16)((1u << (nc - 16)) - 1u);
#define STORE(r)                                                                                                    \
    _mm512_storeu_ps(c##r, acc##r##a);                                                                              \
    _mm512_mask_storeu_ps(c##r + 16, m, acc##r##b);
            STORE(6) STORE(5) STORE(4) STORE(3) STORE(2) STORE(1) STORE(0)
#undef STORE
            return;
        }
    }
    if (nc != 0) {
        /* 1..16 columns left: only the first half of the last panel matters. */
#define INIT(r) __m512 acc##r = _mm512_load_ps(w);
        ROWS(INIT)
#undef INIT
        w += 32;
        for (size_t k = 0; k < kc; k++) {
            const __m512 vb = _mm512_load_ps(w);
            w += 32;
#define STEP(r) acc##r = _mm512_fmadd_ps(_mm512_set1_ps(a##r[k]), vb, acc##r);
            ROWS(STEP)
#undef STEP
        }
        const __mmask16 m = (__mmask16)(nc == 16 ? 0xFFFFu : (1u << nc) - 1u);
#define STORE(r) _mm512_mask_storeu_ps(c##r, m, _mm512_min_ps(vmax, _mm512_max_ps(vmin, acc##r)));
        STORE(6) STORE(5) STORE(4) STORE(3) STORE(2) STORE(1) STORE(0)
#undef STORE
    }
}
