/*
 * f32-igemm-4x4-scalar.c - portable f32 convolution micro-kernel through an indirection buffer, 4 output pixels x 4
 * output channels. Padding rows point at `zero` and get no a_offset. Must not read past kc floats of an input row
 * nor write outside the mr x nc block.
 */
#include "cpu_ukernels.h"

static inline float clampf(float v, float lo, float hi)
{
    if (v < lo) v = lo;
    if (v > hi) v = hi;
    return v;
}

void cpu_f32_igemm_4x4__scalar(size_t mr, size_t nc, size_t kc, size_t ks, const float **a, const float *w,
                               float *c, size_t cm_stride, size_t a_offset, const float *zero, const cpu_minmax *p)
{
    float *cr[4];
    for (size_t i = 0; i < 4; i++) cr[i] = c + (i < mr ? i : mr - 1) * cm_stride;
    while (nc != 0) {
        float acc[4][4];
        for (size_t i = 0; i < 4; i++)
            for (size_t j = 0; j < 4; j++) acc[i][j] = w[j];
        w += 4;
        for (size_t s = 0; s < ks; s++) {
            const float *ar[4];
            for (size_t i = 0; i < 4; i++) {
                ar[i] = a[s * 4 + i];
                if (ar[i] != zero) ar[i] += a_offset;
            }
            for (size_t k = 0; k < kc; k++) {
                for (size_t i = 0; i < 4; i++) {
                    const float av = ar[i][k];
                    for (size_t j = 0; j < 4; j++) acc[i][j] += av * w[j];
                }
                w += 4;
            }
        }
        const size_t nb = nc < 4 ? nc : 4;
        for (size_t i = 4; i-- > 0;)
            for (size_t j = 0; j < nb; j++) cr[i][j] = clampf(acc[i][j], p->min, p->max);
        for (size_t i = 0; i < 4; i++) cr[i] += nb;
        nc -= nb;
    }
}
