/*
 * f32-igemm-7x32-avx512.c - f32 convolution micro-kernel through an indirection buffer ("igemm"), 7 output pixels x
 * 32 output channels, AVX-512F. For each of the ks kernel positions it takes seven row pointers from the indirection
 * block (the padding rows point at `zero`, which gets no a_offset) and runs kc rank-1 updates, as the GEMM kernel
 * does. Must not read past kc floats of an input row nor write outside the mr x nc block.
 */
#include <immintrin.h>

#include "cpu_ukernels.h"

#define ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6)

void cpu_f32_igemm_7x32__avx512(size_t mr, size_t nc, size_t kc, size_t ks, const float **a, const float *w,
                                float *c, size_t cm_stride, size_t a_offset, const float *zero, const cpu_minmax *p)
{
    float *c0 = c;
#define SETUP(i, j)                                                                                                 \
    float *c##j = c##i + cm_stride;                                                                                 \
    if (mr <= j) c##j = c##i;
    SETUP(0, 1) SETUP(1, 2) SETUP(2, 3) SETUP(3, 4) SETUP(4, 5) SETUP(5, 6)
#undef SETUP
    const __m512 vmin = _mm512_set1_ps(p->min);
    const __m512 vmax = _mm512_set1_ps(p->max);
#define LOADPTR(r)                                                                                                  \
    const float *a##r = aa[r];                                                                                      \
    if (a##r != zero) a##r += a_offset;

    while (nc > 16) {
#define INIT(r)                                                                                                     \
    __m512 acc##r##a = _mm512_load_ps(w);                                                                           \
    __m512 acc##r##b = _mm512_load_ps(w + 16);
        ROWS(INIT)
#undef INIT
        w += 32;
        const float **aa = a;
        for (size_t s = 0; s < ks; s++, aa += 7) {
            ROWS(LOADPTR)
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
        }
#define CLAMP(r)                                                                                                    \
    acc##r##a = _mm512_min_ps(vmax, _mm512_max_ps(vmin, acc##r##a));                                                \
    acc##r##b = _mm512_min_ps(vmax, _mm512_max_ps(vmin, acc##r##b));
        ROWS(CLAMP)
#undef CLAMP
        if (nc >= 32) {
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
#define INIT(r) __m512 acc##r = _mm512_load_ps(w);
        ROWS(INIT)
#undef INIT
        w += 32;
        const float **aa = a;
        for (size_t s = 0; s < ks; s++, aa += 7) {
            ROWS(LOADPTR)
            for (size_t k = 0; k < kc; k++) {
                const __m512 vb = _mm512_load_ps(w);
                w += 32;
#define STEP(r) acc##r = _mm512_fmadd_ps(_mm512_set1_ps(a##r[k]), vb, acc##r);
                ROWS(STEP)
#undef STEP
            }
        }
        const __mmask16 m = (__mmask16)(nc == 16 ? 0xFFFFu : (1u << nc) - 1u);
#define STORE(r) _mm512_mask_storeu_ps(c##r, m, _mm512_min_ps(vmax, _mm512_max_ps(vmin, acc##r)));
        STORE(6) STORE(5) STORE(4) STORE(3) STORE(2) STORE(1) STORE(0)
#undef STORE
    }
#undef LOADPTR
}
