/*
 * f32-dwconv-avx2.h - the body of the AVX2+FMA depthwise micro-kernels (included by f32-dwconv-{9p,25p,up}-avx2.c,
 * which instantiate it with a constant or a run-time tap count). NHWC: 8 channels per ymm, so every tap is one
 * contiguous load per block; two accumulators (even and odd taps) halve the FMA dependency chain. The channel tail
 * uses masked loads and stores: nothing is read past `channels` of an input row or of the zero row, nothing
 * written past `channels` of an output row. Not a public header: static inline only.
 */
#ifndef CPU_F32_DWCONV_AVX2_H
#define CPU_F32_DWCONV_AVX2_H

#include <immintrin.h>

#include <stdint.h>

#include "cpu_ukernels.h"

static const int32_t dw_mask_table[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

static inline __attribute__((always_inline)) void dwconv_avx2_body(size_t channels, size_t npix, size_t taps,
                                                                     const float **input, const float *w,
                                                                     float *output, size_t out_stride,
                                                                     const cpu_minmax *p)
{
    const __m256 vmin = _mm256_set1_ps(p->min);
    const __m256 vmax = _mm256_set1_ps(p->max);
    for (size_t px = 0; px < npix; px++) {
        const float **in = input + px * taps;
        float *o = output + px * out_stride;
        const float *wp = w;
        size_t off = 0;
        for (; off + 8 <= channels; off += 8) {
            __m256 acc0 = _mm256_load_ps(wp);
            __m256 acc1 = _mm256_setzero_ps();
            size_t t = 0;
            for (; t + 2 <= taps; t += 2) {
                acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(in[t] + off), _mm256_load_ps(wp + 8 * (t + 1)), acc0);
                acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(in[t + 1] + off), _mm256_load_ps(wp + 8 * (t + 2)), acc1);
            }
            if (t < taps) acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(in[t] + off), _mm256_load_ps(wp + 8 * (t + 1)), acc0);
            acc0 = _mm256_add_ps(acc0, acc1);
            _mm256_storeu_ps(o + off, _mm256_min_ps(vmax, _mm256_max_ps(vmin, acc0)));
            wp += 8 * (taps + 1);
        }
        if (off < channels) {
            const __m256i m = _mm256_loadu_si256((const __m256i *)&dw_mask_table[8 - (channels - off)]);
            __m256 acc0 = _mm256_load_ps(wp);
            __m256 acc1 = _mm256_setzero_ps();
            size_t t = 0;
            for (; t + 2 <= taps; t += 2) {
                acc0 = _mm256_fmadd_ps(_mm256_maskload_ps(in[t] + off, m), _mm256_load_ps(wp + 8 * (t + 1)), acc0);
                acc1 = _mm256_fmadd_ps(_mm256_maskload_ps(in[t + 1] + off, m), _mm256_load_ps(wp + 8 * (t + 2)),
                                       acc1);
            }
            if (t < taps)
                acc0 = _mm256_fmadd_ps(_mm256_maskload_ps(in[t] + off, m), _mm256_load_ps(wp + 8 * (t + 1)), acc0);
            acc0 = _mm256_add_ps(acc0, acc1);
            _mm256_maskstore_ps(o + off, m, _mm256_min_ps(vmax, _mm256_max_ps(vmin, acc0)));
        }
    }
}

#endif
