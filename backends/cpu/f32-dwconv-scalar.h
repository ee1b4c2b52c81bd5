/*
 * f32-dwconv-scalar.h - the body of the portable depthwise micro-kernels (included by f32-dwconv-{9p,25p,up}-
 * scalar.c). Channel block of 1: per channel, its bias then its taps weights. Reads exactly `channels` floats of
 * each input row and writes exactly `channels` floats of each output row. Not a public header: static inline only.
 */
#ifndef CPU_F32_DWCONV_SCALAR_H
#define CPU_F32_DWCONV_SCALAR_H

#include "cpu_ukernels.h"

static inline __attribute__((always_inline)) void dwconv_scalar_body(size_t channels, size_t npix, size_t taps,
                                                                     const float **input, const float *w,
                                                                     float *output, size_t out_stride,
                                                                     const cpu_minmax *p)
{
    for (size_t px = 0; px < npix; px++) {
        const float **in = input + px * taps;
        float *o = output + px * out_stride;
        const float *wp = w;
        for (size_t c = 0; c < channels; c++) {
            float acc = wp[0];
            for (size_t t = 0; t < taps; t++) acc += in[t][c] * wp[t + 1];
            wp += taps + 1;
            /* NaN stays NaN: both comparisons are false for it. */
            if (acc < p->min) acc = p->min;
            if (acc > p->max) acc = p->max;
            o[c] = acc;
        }
    }
}

#endif
