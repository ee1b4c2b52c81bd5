/*
 * f32-igemm-6x8-neon.c - f32 convolution micro-kernel through an indirection buffer ("igemm"), 6 output pixels x 8
 * output channels, AArch64 Advanced SIMD with FMA. For each of the ks kernel positions it takes six row pointers
 * from the indirection block (the padding rows point at `zero`, which gets no a_offset) and runs kc rank-1 updates
 * as f32-gemm-6x8-neon.c does: four k steps per 128-bit A load (vfmaq_laneq_f32), then k % 4 single steps.
 * Summation order per output: bias, then (position, channel) ascending, one FMA per term.
 * Must not read past kc floats of an input row nor write outside the mr x nc block.
 */
#include <arm_neon.h>

#include "cpu_ukernels.h"

#define ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)

void cpu_f32_igemm_6x8__neon(size_t mr, size_t nc, size_t kc, size_t ks, const float **a, const float *w,
                             float *c, size_t cm_stride, size_t a_offset, const float *zero, const cpu_minmax *p)
{
    float *c0 = c;
#define SETUP(i, j)                                                                                                 \
    float *c##j = c##i + cm_stride;                                                                                 \
    if (mr <= j) c##j = c##i;
    SETUP(0, 1) SETUP(1, 2) SETUP(2, 3) SETUP(3, 4) SETUP(4, 5)
#undef SETUP
    const float32x4_t vmin = vdupq_n_f32(p->min);
    const float32x4_t vmax = vdupq_n_f32(p->max);

    while (nc != 0) {
#define INIT(r)                                                                                                     \
    float32x4_t acc##r##a = vld1q_f32(w);                                                                           \
    float32x4_t acc##r##b = vld1q_f32(w + 4);
        ROWS(INIT)
#undef INIT
        w += 8;
        const float **aa = a;
        for (size_t s = 0; s < ks; s++, aa += 6) {
#define LOADPTR(r)                                                                                                  \
    const float *a##r = aa[r];                                                                                      \
    if (a##r != zero) a##r += a_offset;
            ROWS(LOADPTR)
#undef LOADPTR
            size_t k = 0;
            for (; k + 4 <= kc; k += 4) {
#define LOADA(r) const float32x4_t va##r = vld1q_f32(a##r + k);
                ROWS(LOADA)
#undef LOADA
#define STEP(r, l)                                                                                                  \
    acc##r##a = vfmaq_laneq_f32(acc##r##a, vb0, va##r, l);                                                          \
    acc##r##b = vfmaq_laneq_f32(acc##r##b, vb1, va##r, l);
#define LANE(l)                                                                                                     \
    {                                                                                                               \
        const float32x4_t vb0 = vld1q_f32(w + 8 * (l));                                                             \
        const float32x4_t vb1 = vld1q_f32(w + 8 * (l) + 4);                                                         \
        STEP(0, l) STEP(1, l) STEP(2, l) STEP(3, l) STEP(4, l) STEP(5, l)                                           \
    }
                LANE(0) LANE(1) LANE(2) LANE(3)
#undef LANE
#undef STEP
                w += 32;
            }
            for (; k < kc; k++) {
                const float32x4_t vb0 = vld1q_f32(w);
                const float32x4_t vb1 = vld1q_f32(w + 4);
                w += 8;
#define STEP(r)                                                                                                     \
    {                                                                                                               \
        const float32x4_t va = vld1q_dup_f32(a##r + k);                                                             \
        acc##r##a = vfmaq_f32(acc##r##a, va, vb0);                                                                  \
        acc##r##b = vfmaq_f32(acc##r##b, va, vb1);                                                                  \
    }
                ROWS(STEP)
#undef STEP
            }
        }
        /* FMAX/FMIN return NaN when either operand is NaN: a NaN accumulator stays NaN. */
#define CLAMP(r)                                                                                                    \
    acc##r##a = vminq_f32(vmaxq_f32(acc##r##a, vmin), vmax);                                                        \
    acc##r##b = vminq_f32(vmaxq_f32(acc##r##b, vmin), vmax);
        ROWS(CLAMP)
#undef CLAMP
        if (nc >= 8) {
#define STORE(r)                                                                                                    \
    vst1q_f32(c##r, acc##r##a);                                                                                     \
    vst1q_f32(c##r + 4, acc##r##b);                                                                                 \
    c##r += 8;
            STORE(5) STORE(4) STORE(3) STORE(2) STORE(1) STORE(0)
#undef STORE
            nc -= 8;
        } else {
            if (nc & 4) {
#define STORE(r)                                                                                                    \
    vst1q_f32(c##r, acc##r##a);                                                                                     \
    c##r += 4;                                                                                                      \
    acc##r##a = acc##r##b;
                STORE(5) STORE(4) STORE(3) STORE(2) STORE(1) STORE(0)
#undef STORE
            }
            if (nc & 2) {
#define STORE(r)                                                                                                    \
    vst1_f32(c##r, vget_low_f32(acc##r##a));                                                                        \
    c##r += 2;                                                                                                      \
    acc##r##a = vextq_f32(acc##r##a, acc##r##a, 2);
                STORE(5) STORE(4) STORE(3) STORE(2) STORE(1) STORE(0)
#undef STORE
            }
            if (nc & 1) {
#define STORE(r) vst1q_lane_f32(c##r, acc##r##a, 0);
                STORE(5) STORE(4) STORE(3) STORE(2) STORE(1) STORE(0)
#undef STORE
            }
            nc = 0;
        }
    }
}
