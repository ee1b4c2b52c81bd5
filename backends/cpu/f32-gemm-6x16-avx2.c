/*
 * f32-gemm-6x16-avx2.c - f32 GEMM micro-kernel, 6 rows x 16 columns (two ymm per row, 12 accumulators), AVX2+FMA.
 * Per k step: two loads of packed B, six broadcasts of A, twelve FMAs (12 independent chains cover the FMA latency
 * on two ports); a single row takes a loop of its own (gemm_1x16). Column tails of 9..15 use a masked store of the
 * second half, tails of 1..8 an 8-wide loop over the first half of the panel. Must not read A past kc of a row or
 * write C outside the mr x nc block; rows past mr alias the last valid row.
 */
#include <immintrin.h>
#include <stdint.h>

#include "cpu_ukernels.h"

static const int32_t mask_table[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

#define ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)

/* One row (a GEMV, e.g. a classifier at batch 1): two accumulators per panel, the 6-row loop's arithmetic per output
 * (bias, then one FMA per k ascending), without the five aliased rows' redundant FMAs. */
static void gemm_1x16(size_t nc, size_t kc, const float *a, const float *w, float *c, __m256 vmin, __m256 vmax)
{
    for (; nc > 0; nc = nc > 16 ? nc - 16 : 0) {
        __m256 acca = _mm256_load_ps(w), accb = _mm256_load_ps(w + 8);
        w += 16;
        for (size_t k = 0; k < kc; k++) {
            const __m256 va = _mm256_set1_ps(a[k]);
            acca = _mm256_fmadd_ps(va, _mm256_load_ps(w), acca);
            accb = _mm256_fmadd_ps(va, _mm256_load_ps(w + 8), accb);
            w += 16;
        }
        acca = _mm256_min_ps(vmax, _mm256_max_ps(vmin, acca));
        accb = _mm256_min_ps(vmax, _mm256_max_ps(vmin, accb));
        if (nc >= 16) {
            _mm256_storeu_ps(c, acca);
            _mm256_storeu_ps(c + 8, accb);
        } else if (nc > 8) {
            _mm256_storeu_ps(c, acca);
            _mm256_maskstore_ps(c + 8, _mm256_loadu_si256((const __m256i *)&mask_table[16 - nc]), accb);
        } else _mm256_maskstore_ps(c, _mm256_loadu_si256((const __m256i *)&mask_table[8 - nc]), acca);
        c += 16;
    }
}

void cpu_f32_gemm_6x16__avx2(size_t mr, size_t nc, size_t kc, const float *a, size_t a_stride, const float *w,
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
    SETUP(0, 1) SETUP(1, 2) SETUP(2, 3) SETUP(3, 4) SETUP(4, 5)
#undef SETUP
    const __m256 vmin = _mm256_set1_ps(p->min);
    const __m256 vmax = _mm256_set1_ps(p->max);
    if (mr == 1) {
        gemm_1x16(nc, kc, a, w, c, vmin, vmax);
        return;
    }

    while (nc > 8) {
#define INIT(r)                                                                                                     \
    __m256 acc##r##a = _mm256_load_ps(w);                                                                           \
    __m256 acc##r##b = _mm256_load_ps(w + 8);
        ROWS(INIT)
#undef INIT
        w += 16;
        size_t k = 0;
#define STEP(r)                                                                                                     \
    {                                                                                                               \
        const __m256 va = _mm256_set1_ps(a##r[kk]);                                                                 \
        acc##r##a = _mm256_fmadd_ps(va, vb0, acc##r##a);                                                            \
        acc##r##b = _mm256_fmadd_ps(va, vb1, acc##r##b);                                                            \
    }
#define KSTEP(off)                                                                                                  \
    {                                                                                                               \
        const size_t kk = k + (off);                                                                                \
        const __m256 vb0 = _mm256_load_ps(w + 16 * (off));                                                          \
        const __m256 vb1 = _mm256_load_ps(w + 16 * (off) + 8);                                                     \
        ROWS(STEP)                                                                                                  \
    }
        for (; k + 4 <= kc; k += 4) {
            KSTEP(0) KSTEP(1) KSTEP(2) KSTEP(3)
            w += 64;
        }
        for (; k < kc; k++) {
            KSTEP(0)
            w += 16;
        }
#undef KSTEP
#undef STEP
#define CLAMP(r)                                                                                                    \
    acc##r##a = _mm256_min_ps(vmax, _mm256_max_ps(vmin, acc##r##a));                                                \
    acc##r##b = _mm256_min_ps(vmax, _mm256_max_ps(vmin, acc##r##b));
        ROWS(CLAMP)
#undef CLAMP
        if (nc >= 16) {
            /* Highest row first: aliased rows (mr < 7) then end with the valid row's values, equal anyway. */
#define STORE(r)                                                                                                    \
    _mm256_storeu_ps(c##r, acc##r##a);                                                                              \
    _mm256_storeu_ps(c##r + 8, acc##r##b);                                                                         \
    c##r += 16;
            STORE(5) STORE(4) STORE(3) STORE(2) STORE(1) STORE(0)
#undef STORE
            nc -= 16;
        } else {
            const __m256i m = _mm256_loadu_si256((const __m256i *)&mask_table[16 - nc]);
#define STORE(r)                                                                                                    \
    _mm256_storeu_ps(c##r, acc##r##a);                                                                              \
    _mm256_maskstore_ps(c##r + 8, m, acc##r##b);
            STORE(5) STORE(4) STORE(3) STORE(2) STORE(1) STORE(0)
#undef STORE
            return;
        }
    }
    if (nc != 0) {
        /* 1..16 columns left: only the first half of the last panel matters. */
#define INIT(r) __m256 acc##r = _mm256_load_ps(w);
        ROWS(INIT)
#undef INIT
        w += 16;
        for (size_t k = 0; k < kc; k++) {
            const __m256 vb = _mm256_load_ps(w);
            w += 16;
#define STEP(r) acc##r = _mm256_fmadd_ps(_mm256_set1_ps(a##r[k]), vb, acc##r);
            ROWS(STEP)
#undef STEP
        }
        const __m256i m = _mm256_loadu_si256((const __m256i *)&mask_table[8 - nc]);
#define STORE(r) _mm256_maskstore_ps(c##r, m, _mm256_min_ps(vmax, _mm256_max_ps(vmin, acc##r)));
        STORE(5) STORE(4) STORE(3) STORE(2) STORE(1) STORE(0)
#undef STORE
    }
}
