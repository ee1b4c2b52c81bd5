/*
 * qnn_neon_qb4w.h - what the two aarch64 qb4w kernels (linear_8da4w, qnn_kernels.h's qnn_qb4w_fn) share: the
 * row pointers, the nibble decoding, the block epilogue and the store. qnn_ukernel_neon.c sums a group of 8 k's
 * with smull/smlal and sadalp, qnn_ukernel_neondot.c with sdot; the rest is here, so both give the scalar
 * kernel's bits.
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

#endif /* QNN_NEON_QB4W_H */
