/*
 * f32-dwconv-25p-scalar.c - f32 depthwise convolution micro-kernel for 5x5 kernels (25 taps, unrolled at compile time),
 * portable C, channel by channel. The body is f32-dwconv-scalar.h; this file only fixes the tap count.
 * Must not read or write past `channels` floats of a row (masked tails).
 */
#include "f32-dwconv-scalar.h"

void cpu_f32_dwconv_25p__scalar(size_t channels, size_t npix, size_t taps, const float **input, const float *w,
                                float *output, size_t out_stride, const float *zero, const cpu_minmax *p)
{
    (void)zero;
    (void)taps; /* fixed at compile time */
    dwconv_scalar_body(channels, npix, 25, input, w, output, out_stride, p);
}
