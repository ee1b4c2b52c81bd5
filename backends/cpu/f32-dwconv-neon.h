/*
 * f32-dwconv-neon.h - the body of the AArch64 Advanced SIMD depthwise micro-kernels (included by
 * f32-dwconv-{9p,25p,up}-neon.c, which instantiate it with a constant or a run-time tap count). NHWC, blocks of 8
 * channels (two q registers), so every tap is two contiguous loads per block; two accumulator pairs (even and odd
 * taps) halve the FMA dependency chain, as the AVX2 body does. The channel tail (1..7) goes 4 lanes at a time, the
 * last 1..3 lanes through single-lane loads and stores: nothing is read past `channels` of an input row or of the
 * zero row, nothing written past `channels` of an output row. Not a public header: static inline only.
 */
#ifndef CPU_F32_DWCONV_NEON_H
#define CPU_F32_DWCONV_NEON_H

#include <arm_neon.h>

#include "cpu_ukernels.h"

/* The first k (1..4) floats at p, the other lanes zero; reads exactly k floats. */
static inline __attribute__((always_inline)) float32x4_t dw_neon_load(const float *p, size_t k)
{
    if (k >= 4) return vld1q_f32(p);
    float32x4_t v = vld1q_lane_f32(p, vdupq_n_f32(0.0f), 0);
    if (k > 1) v = vld1q_lane_f32(p + 1, v, 1);
    if (k > 2) v = vld1q_lane_f32(p + 2, v, 2);
    return v;
}

/* Stores the first k (1..4) lanes of v at p; writes exactly k floats. */
static inline __attribute__((always_inline)) void dw_neon_store(float *p, float32x4_t v, size_t k)
{
    if (k >= 4) {
        vst1q_f32(p, v);
        return;
    }
    if (k & 2) {
        vst1_f32(p, vget_low_f32(v));
        p += 2;
        v = vextq_f32(v, v, 2);
    }
    if (k & 1) vst1q_lane_f32(p, v, 0);
}

static inline __attribute__((always_inline)) void dwconv_neon_body(size_t channels, size_t npix, size_t taps,
                                                                     const float **input, const float *w,
                                                                     float *output, size_t out_stride,
                                                                     const cpu_minmax *p)
{
    const float32x4_t vmin = vdupq_n_f32(p->min);
    const float32x4_t vmax = vdupq_n_f32(p->max);
    for (size_t px = 0; px < npix; px++) {
        const float **in = input + px * taps;
        float *o = output + px * out_stride;
        const float *wp = w;
        size_t off = 0;
        for (; off + 8 <= channels; off += 8) {
            float32x4_t acc0a = vld1q_f32(wp), acc0b = vld1q_f32(wp + 4);
            float32x4_t acc1a = vdupq_n_f32(0.0f), acc1b = vdupq_n_f32(0.0f);
            size_t t = 0;
            for (; t + 2 <= taps; t += 2) {
                const float *i0 = in[t] + off, *i1 = in[t + 1] + off;
                const float *w0 = wp + 8 * (t + 1), *w1 = wp + 8 * (t + 2);
                acc0a = vfmaq_f32(acc0a, vld1q_f32(i0), vld1q_f32(w0));
                acc0b = vfmaq_f32(acc0b, vld1q_f32(i0 + 4), vld1q_f32(w0 + 4));
                acc1a = vfmaq_f32(acc1a, vld1q_f32(i1), vld1q_f32(w1));
                acc1b = vfmaq_f32(acc1b, vld1q_f32(i1 + 4), vld1q_f32(w1 + 4));
            }
            if (t < taps) {
                const float *i0 = in[t] + off, *w0 = wp + 8 * (t + 1);
                acc0a = vfmaq_f32(acc0a, vld1q_f32(i0), vld1q_f32(w0));
                acc0b = vfmaq_f32(acc0b, vld1q_f32(i0 + 4), vld1q_f32(w0 + 4));
            }
            acc0a = vaddq_f32(acc0a, acc1a);
            acc0b = vaddq_f32(acc0b, acc1b);
            /* FMAX/FMIN return NaN when either operand is NaN: a NaN accumulator stays NaN. */
            vst1q_f32(o + off, vminq_f32(vmaxq_f32(acc0a, vmin), vmax));
            vst1q_f32(o + off + 4, vminq_f32(vmaxq_f32(acc0b, vmin), vmax));
            wp += 8 * (taps + 1);
        }
        /* Tail block of 1..7 channels: its packed rows are still 8 wide; lanes past `channels` hold zeros. */
        for (size_t sub = 0; off + sub < channels; sub += 4) {
            const size_t k = channels - off - sub < 4 ? channels - off - sub : 4;
            float32x4_t acc0 = vld1q_f32(wp + sub), acc1 = vdupq_n_f32(0.0f);
            size_t t = 0;
            for (; t + 2 <= taps; t += 2) {
                acc0 = vfmaq_f32(acc0, dw_neon_load(in[t] + off + sub, k), vld1q_f32(wp + 8 * (t + 1) + sub));
                acc1 = vfmaq_f32(acc1, dw_neon_load(in[t + 1] + off + sub, k), vld1q_f32(wp + 8 * (t + 2) + sub));
            }
            if (t < taps)
                acc0 = vfmaq_f32(acc0, dw_neon_load(in[t] + off + sub, k), vld1q_f32(wp + 8 * (t + 1) + sub));
            acc0 = vaddq_f32(acc0, acc1);
            dw_neon_store(o + off + sub, vminq_f32(vmaxq_f32(acc0, vmin), vmax), k);
        }
    }
}

#endif
