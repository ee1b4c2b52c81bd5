/*
 * f32-gemm-4x4-scalar.c - portable f32 GEMM micro-kernel, 4 rows x 4 columns of scalar accumulators. The reference
 * path of the SIMD kernels (same packed layout with NR = 4) and the one `cpu` uses when scalar kernels are forced.
 * Must not read A past kc of a row or write C outside the mr x nc block; rows past mr alias the last valid row.
 */
#include "cpu_ukernels.h"

static inline float clampf(float v, float lo, float hi)
{
    /* NaN stays NaN: the comparisons are false for it. */
    if (v < lo) v = lo;
    if (v > hi) v = hi;
    return v;
}

void cpu_f32_gemm_4x4__scalar(size_t mr, size_t nc, size_t kc, const float *a, size_t a_stride, const float *w,
                              float *c, size_t cm_stride, const cpu_minmax *p)
{
    const float *ar[4];
    float *cr[4];
    for (size_t i = 0; i < 4; i++) {
        const size_t r = i < mr ? i : mr - 1;
        ar[i] = a + r * a_stride;
        cr[i] = c + r * cm_stride;
    }
    while (nc != 0) {
        float acc[4][4];
        for (size_t i = 0; i < 4; i++)
            for (size_t j = 0; j < 4; j++) acc[i][j] = w[j];
        w += 4;
        for (size_t k = 0; k < kc; k++) {
            for (size_t i = 0; i < 4; i++) {
                const float av = ar[i][k];
                for (size_t j = 0; j < 4; j++) acc[i][j] += av * w[j];
            }
            w += 4;
        }
        const size_t nb = nc < 4 ? nc : 4;
        for (size_t i = 4; i-- > 0;)
            for (size_t j = 0; j < nb; j++) cr[i][j] = clampf(acc[i][j], p->min, p->max);
        for (size_t i = 0; i < 4; i++) cr[i] += nb;
        nc -= nb;
    }
}
