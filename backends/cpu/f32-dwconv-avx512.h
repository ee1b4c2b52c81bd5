/*
 * f32-dwconv-avx512.h - the body of the AVX-512 depthwise micro-kernels (included by f32-dwconv-{9p,25p,up}-avx512.c,
 * which instantiate it with a constant or a run-time tap count). NHWC: 16 channels per zmm, so every tap is one
 * contiguous load per block; 32 channels per step in two accumulator chains (16-channel remainders
 * split even and odd taps into two chains). The channel tail
 * uses masked loads and stores: nothing is read past `channels` of an input row or of the zero row, nothing
 * written past `channels` of an output row. Not a public header: static inline only.
 */
#ifndef CPU_F32_DWCONV_AVX512_H
#define CPU_F32_DWCONV_AVX512_H

#include <immintrin.h>

#include "cpu_ukernels.h"

static inline __attribute__((always_inline)) void dwconv_avx512_body(size_t channels, size_t npix, size_t taps,
                                                                     const float **input, const float *w,
                                                                     float *output, size_t out_stride,
                                                                     const cpu_minmax *p)
{
    const __m512 vmin = _mm512_set1_ps(p->min);
    const __m512 vmax = _mm512_set1_ps(p->max);
    for (size_t px = 0; px < npix; px++) {
        /* The tap pointers in locals: with a constant tap count they live in registers instead of being reloaded
         * after every store (the output could alias the indirection array as far as the compiler knows). */
        const float *ip[32];
        const size_t nt = taps <= 32 ? taps : 32;
        for (size_t t = 0; t < nt; t++) ip[t] = input[px * taps + t];
        const float **in = taps <= 32 ? ip : input + px * taps;
        float *o = output + px * out_stride;
        const float *wp = w;
        size_t off = 0;
        /* 32 channels per step: two independent accumulator chains, weights from two consecutive 16-blocks. */
        for (; off + 32 <= channels; off += 32) {
            const float *wq = wp + 16 * (taps + 1);
            __m512 acc0 = _mm512_load_ps(wp);
            __m512 acc1 = _mm512_load_ps(wq);
            for (size_t t = 0; t < taps; t++) {
                acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(in[t] + off), _mm512_load_ps(wp + 16 * (t + 1)), acc0);
                acc1 = _mm512_fmadd_ps(_mm512_loadu_ps(in[t] + off + 16), _mm512_load_ps(wq + 16 * (t + 1)), acc1);
            }
            _mm512_storeu_ps(o + off, _mm512_min_ps(vmax, _mm512_max_ps(vmin, acc0)));
            _mm512_storeu_ps(o + off + 16, _mm512_min_ps(vmax, _mm512_max_ps(vmin, acc1)));
            wp += 32 * (taps + 1);
        }
        for (; off + 16 <= channels; off += 16) {
            __m512 acc0 = _mm512_load_ps(wp);
            __m512 acc1 = _mm512_setzero_ps();
            size_t t = 0;
            for (; t + 2 <= taps; t += 2) {
                acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(in[t] + off), _mm512_load_ps(wp + 16 * (t + 1)), acc0);
                acc1 = _mm512_fmadd_ps(_mm512_loadu_ps(in[t + 1] + off), _mm512_load_ps(wp + 16 * (t + 2)), acc1);
            }
            if (t < taps) acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(in[t] + off), _mm512_load_ps(wp + 16 * (t + 1)), acc0);
            acc0 = _mm512_add_ps(acc0, acc1);
            _mm512_storeu_ps(o + off, _mm512_min_ps(vmax, _mm512_max_ps(vmin, acc0)));
            wp += 16 * (taps + 1);
        }
        if (off < channels) {
            const __mmask16 m = (__mmask16)((1u << (channels - off)) - 1u);
            __m512 acc0 = _mm512_load_ps(wp);
            __m512 acc1 = _mm512_setzero_ps();
            size_t t = 0;
            for (; t + 2 <= taps; t += 2) {
                acc0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, in[t] + off), _mm512_load_ps(wp + 16 * (t + 1)), acc0);
                acc1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, in[t + 1] + off), _mm512_load_ps(wp + 16 * (t + 2)),
                                       acc1);
            }
            if (t < taps)
                acc0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, in[t] + off), _mm512_load_ps(wp + 16 * (t + 1)), acc0);
            acc0 = _mm512_add_ps(acc0, acc1);
            _mm512_mask_storeu_ps(o + off, m, _mm512_min_ps(vmax, _mm512_max_ps(vmin, acc0)));
        }
    }
}

#endif
