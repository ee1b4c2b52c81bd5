/*
 * qnn_neon_requant.h - the NEON requantization epilogue shared by qnn_ukernel_neon.c and qnn_ukernel_neondot.c:
 * 16 int32 accumulators to 16 uint8, and a store of the first n of them.
 *
 * The arithmetic is qnn_kernels.h's fp32 scheme, operation for operation as the scalar kernel's requant1:
 *     f = (float)acc * scale                        vcvtq_f32_s32 (round to nearest), vmulq_f32
 *     two: f = (float)rne(clamp(f, vmin1, vmax1)) * r2
 *     y = rne(clamp(f, vmin, vmax)) + zp            vmaxq/vminq, vcvtnq_s32_f32 (ties to even)
 * The clamps see finite values only, where vmaxq/vminq and the scalar comparisons agree; the clamped value lies in
 * [-255, 255], so the rounding is the scalar 1.5 * 2^23 trick's and cvtps2dq's. y is in [0, 255], so the saturating
 * narrowings (vqmovn_s32, vqmovun_s16) change nothing. No multiply feeds an add: no fused multiply-add can form.
 *
 * Include only from aarch64 kernel files; it holds static inline functions and no state.
 */
#ifndef QNN_NEON_REQUANT_H
#define QNN_NEON_REQUANT_H

#include <arm_neon.h>
#include <string.h>

#include "qnn_kernels.h"

typedef struct qnn_neon_rq {
    float32x4_t vmin, vmax, vmin1, vmax1, r2;
    int32x4_t zp;
    int two;
} qnn_neon_rq;

static inline qnn_neon_rq qnn_neon_rq_load(const qnn_rq *rq)
{
    qnn_neon_rq q;
    q.vmin = vdupq_n_f32(rq->vmin);
    q.vmax = vdupq_n_f32(rq->vmax);
    q.vmin1 = vdupq_n_f32(rq->vmin1);
    q.vmax1 = vdupq_n_f32(rq->vmax1);
    q.r2 = vdupq_n_f32(rq->r2);
    q.zp = vdupq_n_s32(rq->zp);
    q.two = rq->two;
    return q;
}

static inline int32x4_t qnn_neon_requant4(int32x4_t acc, float32x4_t scale, const qnn_neon_rq *q)
{
    float32x4_t f = vmulq_f32(vcvtq_f32_s32(acc), scale);
    if (q->two) {
        f = vminq_f32(vmaxq_f32(f, q->vmin1), q->vmax1);
        f = vmulq_f32(vcvtq_f32_s32(vcvtnq_s32_f32(f)), q->r2);
    }
    f = vminq_f32(vmaxq_f32(f, q->vmin), q->vmax);
    return vaddq_s32(vcvtnq_s32_f32(f), q->zp);
}

/* Accumulators of 16 consecutive columns (or channels), scale[0..15]. */
static inline uint8x16_t qnn_neon_requant16(int32x4_t a0, int32x4_t a1, int32x4_t a2, int32x4_t a3,
                                            const float *scale, const qnn_neon_rq *q)
{
    const int32x4_t y0 = qnn_neon_requant4(a0, vld1q_f32(scale), q);
    const int32x4_t y1 = qnn_neon_requant4(a1, vld1q_f32(scale + 4), q);
    const int32x4_t y2 = qnn_neon_requant4(a2, vld1q_f32(scale + 8), q);
    const int32x4_t y3 = qnn_neon_requant4(a3, vld1q_f32(scale + 12), q);
    const int16x8_t lo = vcombine_s16(vqmovn_s32(y0), vqmovn_s32(y1));
    const int16x8_t hi = vcombine_s16(vqmovn_s32(y2), vqmovn_s32(y3));
    return vcombine_u8(vqmovun_s16(lo), vqmovun_s16(hi));
}

/* Store the first n (<= 16) bytes of v at dst: 8, 4, 2, 1-byte pieces, nothing past dst + n. */
static inline void qnn_neon_store16(uint8_t *dst, uint8x16_t v, size_t n)
{
    if (n >= 16) {
        vst1q_u8(dst, v);
        return;
    }
    uint8x8_t h = vget_low_u8(v);
    if (n & 8) {
        vst1_u8(dst, h);
        dst += 8;
        h = vget_high_u8(v);
    }
    if (n & 4) {
        const uint32_t u = vget_lane_u32(vreinterpret_u32_u8(h), 0);
        memcpy(dst, &u, 4);
        dst += 4;
        h = vext_u8(h, h, 4);
    }
    if (n & 2) {
        const uint16_t u = vget_lane_u16(vreinterpret_u16_u8(h), 0);
        memcpy(dst, &u, 2);
        dst += 2;
        h = vext_u8(h, h, 2);
    }
    if (n & 1) vst1_lane_u8(dst, h, 0);
}

#endif /* QNN_NEON_REQUANT_H */
