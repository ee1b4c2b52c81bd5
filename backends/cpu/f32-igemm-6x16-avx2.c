/*
 * f32-igemm-6x16-avx2.c - f32 convolution micro-kernel through an indirection buffer ("igemm"), 6 output pixels x
 * 16 output channels, AVX2+FMA. For each of the ks kernel positions it takes six row pointers from the indirection
 * block (the padding rows point at `zero`, which gets no a_offset) and runs kc rank-1 updates, as the GEMM kernel
 * does. Must not read past kc floats of an input row nor write outside the mr x nc block.
 */
#include <immintrin.h>
#include <stdint.h>

#include "cpu_ukernels.h"

static const int32_t mask_table[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

#define ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)

void cpu_f32_igemm_6x16__avx2(size_t mr, size_t nc, size_t kc, size_t ks, const float **a, const float *w,
                                float *c, size_t cm_stride, size_t a_offset, const float *zero, const cpu_minmax *p)
{
    float *c0 = c;
#define SETUP(i, j)                                                                                                 \
    float *c##j = c##i + cm_stride;                                                                                 \
    if (mr <= j) c##j = c##i;
    SETUP(0, 1) SETUP(1, 2) SETUP(2, 3) SETUP(3, 4) SETUP(4, 5)
#undef SETUP
    const __m256 vmin = _mm256_set1_ps(p->min);
    const __m256 vmax = _mm256_set1_ps(p->max);
#define LOADPTR(r)                                                                                                  \
    const float *a##r = aa[r];                                                                                      \
    if (a##r != zero) a##r += a_offset;

    while (nc > 8) {
#define INIT(r)                                                                                                     \
    __m256 acc##r##a = _mm256_load_ps(w);                                                                           \
    __m256 acc##r##b = _mm256_load_ps(w + 8);
        ROWS(INIT)
#undef INIT
        w += 16;
        const float **aa = a;
        for (size_t s = 0; s < ks; s++, aa += 6) {
            ROWS(LOADPTR)
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
        }
#define CLAMP(r)                                                                                                    \
    acc##r##a = _mm256_min_ps(vmax, _mm256_max_ps(vmin, acc##r##a));                                                \
    acc##r##b = _mm256_min_ps(vmax, _mm256_max_ps(vmin, acc##r##b));
        ROWS(CLAMP)
#undef CLAMP
        if (nc >= 16) {
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
#define INIT(r) __m256 acc##r = _mm256_load_ps(w);
        ROWS(INIT)
#undef INIT
        w += 16;
        const float **aa = a;
        for (size_t s = 0; s < ks; s++, aa += 6) {
            ROWS(LOADPTR)
            for (size_t k = 0; k < kc; k++) {
                const __m256 vb = _mm256_load_ps(w);
                w += 16;
#define STEP(r) acc##r = _mm256_fmadd_ps(_mm256_set1_ps(a##r[k]), vb, acc##r);
                ROWS(STEP)
#undef STEP
            }
        }
        const __m256i m = _mm256_loadu_si256((const __m256i *)&mask_table[8 - nc]);
#define STORE(r) _mm256_maskstore_ps(c##r, m, _mm256_min_ps(vmax, _mm256_max_ps(vmin, acc##r)));
        STORE(5) STORE(4) STORE(3) STORE(2) STORE(1) STORE(0)
#undef STORE
    }
#undef LOADPTR
}
