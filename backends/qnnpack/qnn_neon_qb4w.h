/*
 * qnn_neon_qb4w.h - what the two aarch64 qb4w kernels (linear_8da4w, qnn_kernels.h's qnn_qb4w_fn) share: the
 * kernel around the inner step (qnn_qb4w_drive: row pointers, nibble decoding, block loop, epilogue, store).
 * qnn_ukernel_neon.c's step sums a group of 8 k's with smull/smlal and sadalp, qnn_ukernel_neondot.c's with sdot;
 * the rest is here, so both give the scalar kernel's bits.
 *
 * Operands. Activations arrive as q + 128 (uint8); flipping the top bit gives q itself as int8 (as the igemm's
 * neondot kernel does). Weights: each packed byte holds two int4, k in bits 0-3 and k + 4 in bits 4-7; shifted left
 * by 4 then right by 4 (arithmetic) the low one, right by 4 the high one, each becomes its int8 value. So a group
 * sums sum_k q_k w_k exactly (|q w| <= 1024), and the block's integer is
 *     acc_b = sum_k q_k w_k - (zp - 128) wsum_b = sum_k (q_k + 128) w_k - zp wsum_b,
 * the scalar kernel's int32 (both exact: |acc_b| <= 255 * 8 * block < 2^31 for the blocks the lowering allows).
 * The epilogue is qnn_kernels.h's: f = f + (float)acc_b * s_w[b] per block in order from 0, then y = f * sx + bias;
 * vcvtq_f32_s32 rounds to nearest as the scalar conversion does, and no multiply feeds an add in one instruction
 * (the files are C11, so GCC does not contract a * b + c; the intrinsics are separate vmulq / vaddq).
 *
 * Include only from aarch64 kernel files; static inline functions, no state.
 */
#ifndef QNN_NEON_QB4W_H
#define QNN_NEON_QB4W_H

#include <arm_neon.h>
#include <string.h>

#include "qnn_kernels.h"

/* The low and high nibbles of 16 packed bytes as int8. */
static inline int8x16_t qnn_qb4w_lo(int8x16_t v) { return vshrq_n_s8(vshlq_n_s8(v, 4), 4); }
static inline int8x16_t qnn_qb4w_hi(int8x16_t v) { return vshrq_n_s8(v, 4); }

/* 8 activation bytes of a row as int8 q (top bit flipped). */
static inline int8x8_t qnn_qb4w_x8(const uint8_t *a) { return vreinterpret_s8_u8(veor_u8(vld1_u8(a), vdup_n_u8(0x80))); }

/* The block epilogue of one row: f[0..3] += (float)(acc - zq * wsum) * scale, 16 columns. */
static inline void qnn_qb4w_block(float32x4_t f[4], const int32x4_t acc[4], int32_t zq, const int32_t *wsum,
                                  const float *scale)
{
    for (int q = 0; q < 4; q++) {
        const int32x4_t v = vsubq_s32(acc[q], vmulq_n_s32(vld1q_s32(wsum + 4 * q), zq));
        f[q] = vaddq_f32(f[q], vmulq_f32(vcvtq_f32_s32(v), vld1q_f32(scale + 4 * q)));
    }
}

/* y = f * sx + bias for one row, nc (<= 16) columns stored. */
static inline void qnn_qb4w_store(float *c, size_t nc, const float32x4_t f[4], float sx, const float *bias)
{
    float out[16];
    for (int q = 0; q < 4; q++) vst1q_f32(out + 4 * q, vaddq_f32(vmulq_n_f32(f[q], sx), vld1q_f32(bias + 4 * q)));
    memcpy(c, out, nc * sizeof(float));
}

/* One row's inner step: acc[q] (4 columns each, q = 0..3) += the products of a group of 8 k's, lo[q] / hi[q] being
 * the group's low / high nibbles (k's 0-3 / 4-7 of 4 columns) and x the row's 8 activations as int8. */
typedef void (*qnn_qb4w_step_fn)(int32x4_t acc[4], const int8x16_t lo[4], const int8x16_t hi[4], int8x8_t x);

/* The kernel around a step (qnn_qb4w_fn, block % 8 == 0): the row pointers, per block the nibble split of each
 * group of 8 k's (four 16-byte weight vectors) and the step per row, the block epilogue, the store. static inline
 * with a constant step, so each kernel file compiles it with its own step inlined and its own target flags. */
static inline void qnn_qb4w_drive(size_t mr, size_t nc, size_t kc, size_t block, const uint8_t *a, size_t a_stride,
                                  const int32_t *zp, const float *sx, const void *w, float *c, size_t cs,
                                  qnn_qb4w_step_fn step)
{
    qnn_qb4w_view pv;
    const size_t nb = qnn_qb4w_parts(w, kc, block, &pv);
    const int8_t *wp = (const int8_t *)pv.w4;
    const uint8_t *ar[4];
    for (size_t i = 0; i < 4; i++) ar[i] = a + (i < mr ? i : 0) * a_stride;
    float32x4_t f[4][4];
    for (int i = 0; i < 4; i++)
        for (int q = 0; q < 4; q++) f[i][q] = vdupq_n_f32(0.0f);
    for (size_t b = 0; b < nb; b++) {
        int32x4_t acc[4][4];
        for (int i = 0; i < 4; i++)
            for (int q = 0; q < 4; q++) acc[i][q] = vdupq_n_s32(0);
        for (size_t k = b * block; k < (b + 1) * block; k += 8, wp += 64) {
            int8x16_t lo[4], hi[4];
            for (int q = 0; q < 4; q++) {
                const int8x16_t v = vld1q_s8(wp + 16 * q);
                lo[q] = qnn_qb4w_lo(v), hi[q] = qnn_qb4w_hi(v);
            }
            for (int i = 0; i < 4; i++) step(acc[i], lo, hi, qnn_qb4w_x8(ar[i] + k));
        }
        for (size_t i = 0; i < 4; i++)
            qnn_qb4w_block(f[i], acc[i], zp[i < mr ? i : 0] - 128, pv.wsum + b * QNN_QB4W_NR,
                           pv.scale + b * QNN_QB4W_NR);
    }
    for (size_t i = 0; i < mr; i++) qnn_qb4w_store(c + i * cs, nc, f[i], sx[i], pv.bias);
}

#endif /* QNN_NEON_QB4W_H */
