/*
 * f32-dwconv-9p-neon.c - f32 depthwise convolution micro-kernel for 3x3 kernels (9 taps, unrolled at compile time),
 * AArch64 Advanced SIMD with FMA, vectorized over NHWC channels. The body is f32-dwconv-neon.h; this file only
 * fixes the tap count. Must not read or write past `channels` floats of a row (lane-wise tails).
 */
#include "f32-dwconv-neon.h"

void cpu_f32_dwconv_9p__neon(size_t channels, size_t npix, size_t taps, const float **input, const float *w,
                             float *output, size_t out_stride, const float *zero, const cpu_minmax *p)
{
    (void)zero;
    (void)taps; /* fixed at compile time */
    dwconv_neon_body(channels, npix, 9, input, w, output, out_stride, p);
}
