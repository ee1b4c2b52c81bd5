/*
 * qnn_ukernel_s16_neon.c - the 16a8w / 16a4w GEMM (qnn_s16.h) for ARM64 NEON (baseline armv8-a; the neon and
 * neondot sets both run it): 4 rows x 16 columns of int32 accumulators, per pair of k's one de-interleaving load
 * (vld2q_s16) of the packed words splitting the 16 columns' w[k] from their w[k + 1], then vmlal_n_s16 by each row's
 * x[k] and x[k + 1]. Every product of two int16 is exact in int32 and vmlal adds modulo 2^32, as the scalar kernel's
 * wrapping sum and AVX2's vpaddd do, so the accumulator is theirs bit for bit whenever the reference accepts the
 * graph (its exact sum fits int32), and one whose partial sum leaves int32 (16a4w's acc=wrap) wraps back the same.
 *
 * Requantization as qnn_s16.h: (float)acc (vcvtq_f32_s32, to nearest even), times the column's scale (one f32
 * multiply, never fused), clamped to [-32768, 32767] in float, then vcvtnq_s32_f32 (to nearest, ties to even: the
 * scalar kernel's 1.5 * 2^23 trick for |f| < 2^22) and a narrowing that cannot saturate. Rows >= mr are not read.
 *
 * It must not be compiled for or called on anything but aarch64.
 */
#include <arm_neon.h>
#include <string.h>

#include "qnn_s16.h"

void par_qnn_s16_gemm_4x16__neon(size_t mr, size_t nc, size_t kc, const int16_t *a, size_t a_stride, const void *w,
                                 int16_t *c, size_t cs)
{
    const int32_t *b = w;
    const float *s = (const float *)(b + QNN_S16_NR);
    const int16_t *pw = (const int16_t *)(s + QNN_S16_NR);
    const int16_t *x[QNN_S16_MR];
    int32x4_t acc[QNN_S16_MR][4];
    for (size_t i = 0; i < QNN_S16_MR; i++) {
        x[i] = a + (i < mr ? i : 0) * a_stride; /* a row past mr repeats row 0 and is not stored */
        for (size_t q = 0; q < 4; q++) acc[i][q] = vld1q_s32(b + 4 * q);
    }
    for (size_t kk = 0; kk < kc; kk += 2, pw += 2 * QNN_S16_NR) {
        const int16x8x2_t p0 = vld2q_s16(pw), p1 = vld2q_s16(pw + QNN_S16_NR); /* columns 0-7 and 8-15 */
        for (size_t i = 0; i < QNN_S16_MR; i++) {
            const int16_t x0 = x[i][kk], x1 = x[i][kk + 1];
            acc[i][0] = vmlal_n_s16(vmlal_n_s16(acc[i][0], vget_low_s16(p0.val[0]), x0), vget_low_s16(p0.val[1]), x1);
            acc[i][1] = vmlal_n_s16(vmlal_n_s16(acc[i][1], vget_high_s16(p0.val[0]), x0), vget_high_s16(p0.val[1]), x1);
            acc[i][2] = vmlal_n_s16(vmlal_n_s16(acc[i][2], vget_low_s16(p1.val[0]), x0), vget_low_s16(p1.val[1]), x1);
            acc[i][3] = vmlal_n_s16(vmlal_n_s16(acc[i][3], vget_high_s16(p1.val[0]), x0), vget_high_s16(p1.val[1]), x1);
        }
    }
    const float32x4_t lo = vdupq_n_f32(-32768.0f), hi = vdupq_n_f32(32767.0f);
    for (size_t i = 0; i < mr; i++) {
        int16_t out[QNN_S16_NR];
        for (size_t q = 0; q < 4; q++) {
            float32x4_t f = vmulq_f32(vcvtq_f32_s32(acc[i][q]), vld1q_f32(s + 4 * q));
            f = vminq_f32(vmaxq_f32(f, lo), hi);
            vst1_s16(out + 4 * q, vqmovn_s32(vcvtnq_s32_f32(f)));
        }
        memcpy(c + i * cs, out, nc * sizeof *out);
    }
}
