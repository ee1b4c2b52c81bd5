/*
 * f32-dwconv-3x3-avx512.c - f32 depthwise 3x3 convolution, stride 1, dilation 1, multiplier 1, AVX-512F,
 * straight on NHWC rows (no indirection buffer): one call computes one output row. Per block of 16 channels the bias
 * and the nine weights stay in registers while the kernel walks the row, and the input columns slide: each output
 * pixel loads one new column of three rows (3 loads for 9 FMAs, where the indirection kernels load 18). Columns left of the row or past its end and rows outside the image (rows[r] == NULL) read as
 * zero vectors, which is what the zero row of the indirection kernels supplies. Each output sums its taps in two
 * chains, the even taps (row-major order) from the bias and the odd ones from zero, added at the end, then the clamp:
 * the summation order of the 9p kernels' 16-channel path (two chains halve the FMA latency per pixel).
 * The channel tail uses masked loads and stores: nothing is read or written past `channels` of a pixel.
 */
#include <immintrin.h>

#include "cpu_ukernels.h"

/* Column ix of a row: unchecked, or checked (outside the row or a NULL row: zeros). */
static inline __attribute__((always_inline)) __m512 column(const float *row, ptrdiff_t ix, size_t in_w, size_t cs,
                                                           __mmask16 m, const int checked)
{
    if (checked && (!row || ix < 0 || (size_t)ix >= in_w)) return _mm512_setzero_ps();
    return _mm512_maskz_loadu_ps(m, row + ix * (ptrdiff_t)cs);
}

/* xn output pixels of one 16-channel block starting at input column ix; o: the first output pixel. */
static inline __attribute__((always_inline)) void dw3x3_run(const float *q0, const float *q1, const float *q2,
                                                            ptrdiff_t ix, size_t xn, size_t in_w, size_t cs,
                                                            __mmask16 m, const float *wb, float *o, __m512 vmin,
                                                            __m512 vmax, const int checked)
{
    const __m512 vb = _mm512_load_ps(wb);
    const __m512 w0 = _mm512_load_ps(wb + 16), w1 = _mm512_load_ps(wb + 32), w2 = _mm512_load_ps(wb + 48);
    const __m512 w3 = _mm512_load_ps(wb + 64), w4 = _mm512_load_ps(wb + 80), w5 = _mm512_load_ps(wb + 96);
    const __m512 w6 = _mm512_load_ps(wb + 112), w7 = _mm512_load_ps(wb + 128), w8 = _mm512_load_ps(wb + 144);
    /* a*: column ix, b*: column ix + 1, c*: column ix + 2 of rows 0..2 */
    __m512 a0 = column(q0, ix, in_w, cs, m, checked), a1 = column(q1, ix, in_w, cs, m, checked);
    __m512 a2 = column(q2, ix, in_w, cs, m, checked);
    __m512 b0 = column(q0, ix + 1, in_w, cs, m, checked), b1 = column(q1, ix + 1, in_w, cs, m, checked);
    __m512 b2 = column(q2, ix + 1, in_w, cs, m, checked);
    for (size_t k = 0; k < xn; k++, o += cs, ix++) {
        const __m512 c0 = column(q0, ix + 2, in_w, cs, m, checked), c1 = column(q1, ix + 2, in_w, cs, m, checked),
                     c2 = column(q2, ix + 2, in_w, cs, m, checked);
        /* even taps from the bias, odd taps from zero (the 9p kernels' two chains) */
        __m512 acc0 = _mm512_fmadd_ps(a0, w0, vb);
        __m512 acc1 = _mm512_fmadd_ps(b0, w1, _mm512_setzero_ps());
        acc0 = _mm512_fmadd_ps(c0, w2, acc0);
        acc1 = _mm512_fmadd_ps(a1, w3, acc1);
        acc0 = _mm512_fmadd_ps(b1, w4, acc0);
        acc1 = _mm512_fmadd_ps(c1, w5, acc1);
        acc0 = _mm512_fmadd_ps(a2, w6, acc0);
        acc1 = _mm512_fmadd_ps(b2, w7, acc1);
        acc0 = _mm512_fmadd_ps(c2, w8, acc0);
        acc0 = _mm512_add_ps(acc0, acc1);
        _mm512_mask_storeu_ps(o, m, _mm512_min_ps(vmax, _mm512_max_ps(vmin, acc0)));
        a0 = b0, a1 = b1, a2 = b2;
        b0 = c0, b1 = c1, b2 = c2;
    }
}

void cpu_f32_dwconv_3x3s1__avx512(size_t channels, size_t out_w, size_t in_w, size_t pad_left,
                                  const float *const *rows, const float *w, float *out, const cpu_minmax *p)
{
    const __m512 vmin = _mm512_set1_ps(p->min);
    const __m512 vmax = _mm512_set1_ps(p->max);
    const float *r0 = rows[0], *r1 = rows[1], *r2 = rows[2];
    const int all_rows = r0 && r1 && r2;
    const size_t cs = channels;
    /* Chunks of XB output pixels, every channel block of a chunk before the next chunk: the chunk's input columns
     * (3 rows x (XB + 2) pixels) are reused across the channel blocks while they are near, and memory is walked in
     * order (8 measured better than 4 and 16 on MobileNetV2's layers). A chunk whose columns all lie inside the
     * row, with three image rows, runs without bounds checks. */
    enum { XB = 8 };
    for (size_t x0 = 0; x0 < out_w; x0 += XB) {
        const size_t xn = out_w - x0 < XB ? out_w - x0 : XB;
        const ptrdiff_t ix = (ptrdiff_t)x0 - (ptrdiff_t)pad_left;
        const int inside = all_rows && ix >= 0 && (size_t)ix + xn + 1 < in_w;
        const float *wb = w;
        for (size_t off = 0; off < channels; off += 16, wb += 16 * 10) {
            const __mmask16 m =
                channels - off >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (channels - off)) - 1u);
            const float *q0 = r0 ? r0 + off : NULL, *q1 = r1 ? r1 + off : NULL, *q2 = r2 ? r2 + off : NULL;
            float *o = out + x0 * cs + off;
            if (inside)
                dw3x3_run(q0, q1, q2, ix, xn, in_w, cs, m, wb, o, vmin, vmax, 0);
            else
                dw3x3_run(q0, q1, q2, ix, xn, in_w, cs, m, wb, o, vmin, vmax, 1);
        }
    }
}
