/*
 * f32-dwconv-up-neon.c - f32 depthwise convolution micro-kernel for any tap count (the generic fallback),
 * AArch64 Advanced SIMD with FMA, vectorized over NHWC channels. The body is f32-dwconv-neon.h; this file only
 * passes the tap count through. Must not read or write past `channels` floats of a row (lane-wise tails).
 */
#include "f32-dwconv-neon.h"

void cpu_f32_dwconv_up__neon(size_t channels, size_t npix, size_t taps, const float **input, const float *w,
                             float *output, size_t out_stride, const float *zero, const cpu_minmax *p)
{
    (void)zero;
    dwconv_neon_body(channels, npix, taps, input, w, output, out_stride, p);
}
