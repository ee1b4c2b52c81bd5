/*
 * qnn_ukernel_neon.c - ARM64 NEON int8 micro-kernels (baseline armv8-a, no dot product): igemm 4x16 with 16-bit
 * widening multiply-accumulate, depthwise c16, vadd; and the NEON requantization epilogue that the dot-product file
 * shares (qnn_neon_requant.h). Built only on aarch64; NEON is part of the baseline there, so the set is always
 * available on that architecture (par_qnn_ukernels still asks cpuinfo).
 *
 * igemm (as XNNPACK's qs8 "neon-mlal-lane" kernels): u8 x s8 products do not fit an int8 multiply (a uint8 value
 * is not an int8, and vmull_s8 would need both operands in s8), so both operands are widened to int16 - the
 * activation with vmovl_u8 (0..255 fits int16), the weight with vmovl_s8 - and multiplied by vmlal_lane_s16 into
 * int32 lanes: each product |x w| <= 255 * 128 is exact and the int32 sum is the scalar kernel's sum. Weights are
 * packed QNN_WFMT_K1 (per k, the 16 columns' int8 weights: one 16-byte load widens into the 4 x 4 lanes of a row),
 * activations are loaded 8 k's at a time per row (one 8-byte load, one widening), and lane k of that row multiplies
 * the 16 weights of k. Registers: 16 accumulators (4 rows x 16 columns), 4 widened rows, 2 widened weight vectors,
 * out of 32. kc is a multiple of 4: 8 k's per step and a last step of 4 (4-byte loads: no byte past the row is read).
 *
 * Requantization as qnn_kernels.h: (float)acc (vcvtq_f32_s32, round to nearest), times scale, clamp in float,
 * vcvtnq_s32_f32 (round to nearest, ties to even: cvtps2dq's rounding and the 1.5 * 2^23 trick's), plus zp, then
 * saturating narrowing (the value is already in [0, 255]). The same float operations in the same order as the
 * scalar kernel, so the bytes are identical.
 *
 * It must not be compiled for or called on anything but aarch64.
 */
#include <arm_neon.h>
#include <string.h>

#include "qnn_kernels.h"
#include "qnn_neon_qb4w.h"
#include "qnn_neon_requant.h"

void par_qnn_igemm_4x16__neon(size_t mr, size_t nc, size_t kc, size_t ks, const uint8_t *const *a, size_t a_off,
                              const uint8_t *zero, const void *w, const int32_t *rowcorr, uint8_t *c, size_t cs,
                              const float *scale, const qnn_rq *rq)
{
    enum { MR = 4, NR = 16 };
    const int32_t *bias = w;
    const int32x4_t b0 = vld1q_s32(bias), b1 = vld1q_s32(bias + 4), b2 = vld1q_s32(bias + 8),
                    b3 = vld1q_s32(bias + 12);
    /* Named accumulators: arrays indexed in loops are kept in memory by some compilers. */
#define QNN_ROWS(X) X(0) X(1) X(2) X(3)
#define QNN_INIT(i)                                                                                                 \
    const int32x4_t r##i = vdupq_n_s32(rowcorr && (i) < mr ? rowcorr[i] : 0);                                        \
    int32x4_t c##i##0 = vaddq_s32(b0, r##i), c##i##1 = vaddq_s32(b1, r##i), c##i##2 = vaddq_s32(b2, r##i),          \
              c##i##3 = vaddq_s32(b3, r##i);
    QNN_ROWS(QNN_INIT)
    const int8_t *wp = (const int8_t *)(bias + NR);
    for (size_t t = 0; t < ks; t++, a += MR) {
#define QNN_PTR(i)                                                                                                  \
    const uint8_t *a##i = a[i];                                                                                     \
    if (a##i != zero) a##i += a_off;
        QNN_ROWS(QNN_PTR)
        /* one k: the 16 weights of k widened, times lane L of each row's widened activations */
#define QNN_MAC(i, L)                                                                                               \
    c##i##0 = vmlal_laneq_s16(c##i##0, vget_low_s16(wl), x##i, L);                                                  \
    c##i##1 = vmlal_high_laneq_s16(c##i##1, wl, x##i, L);                                                           \
    c##i##2 = vmlal_laneq_s16(c##i##2, vget_low_s16(wh), x##i, L);                                                  \
    c##i##3 = vmlal_high_laneq_s16(c##i##3, wh, x##i, L);
#define QNN_K(L)                                                                                                    \
    {                                                                                                               \
        const int8x16_t wv = vld1q_s8(wp);                                                                          \
        const int16x8_t wl = vmovl_s8(vget_low_s8(wv)), wh = vmovl_high_s8(wv);                                     \
        wp += NR;                                                                                                   \
        QNN_MAC(0, L) QNN_MAC(1, L) QNN_MAC(2, L) QNN_MAC(3, L)                                                     \
    }
        size_t k = 0;
        for (; k + 8 <= kc; k += 8) {
#define QNN_LD8(i) const int16x8_t x##i = vreinterpretq_s16_u16(vmovl_u8(vld1_u8(a##i + k)));
            QNN_ROWS(QNN_LD8)
            QNN_K(0) QNN_K(1) QNN_K(2) QNN_K(3) QNN_K(4) QNN_K(5) QNN_K(6) QNN_K(7)
        }
        if (k < kc) { /* the last 4 k's */
#define QNN_LD4(i)                                                                                                  \
    uint32_t v##i;                                                                                                  \
    memcpy(&v##i, a##i + k, 4);                                                                                     \
    const int16x8_t x##i = vreinterpretq_s16_u16(vmovl_u8(vreinterpret_u8_u32(vdup_n_u32(v##i))));
            QNN_ROWS(QNN_LD4)
            QNN_K(0) QNN_K(1) QNN_K(2) QNN_K(3)
        }
    }
    const qnn_neon_rq q = qnn_neon_rq_load(rq);
#define QNN_STORE(i)                                                                                                \
    if ((i) < mr) qnn_neon_store16(c + (i) * cs, qnn_neon_requant16(c##i##0, c##i##1, c##i##2, c##i##3, scale, &q), nc);
    QNN_ROWS(QNN_STORE)
#undef QNN_ROWS
#undef QNN_INIT
#undef QNN_PTR
#undef QNN_MAC
#undef QNN_K
#undef QNN_LD8
#undef QNN_LD4
#undef QNN_STORE
}

/* Depthwise c16: 16 channels per step in four int32x4 accumulators. The activations of a tap are widened to int16
 * (vmovl_u8); the weights are stored as int32 lanes holding (uint16_t)w (qnn_kernels.h), so vuzp1q_s16 of two such
 * vectors is the 8 int16 weights; vmlal_s16 multiplies exactly into int32. Each tap reads 16 bytes at a time, within
 * the cp = round_up(channels, 16) bytes the contract allows. */
void par_qnn_dw_c16__neon(size_t npix, size_t channels, size_t ks, const uint8_t *const *a, const void *w,
                          uint8_t *c, size_t cs, const float *scale, const qnn_rq *rq)
{
    size_t cp = (channels + 15) & ~(size_t)15;
    const int32_t *bias = w, *wt = bias + cp;
    const qnn_neon_rq q = qnn_neon_rq_load(rq);
    for (size_t p = 0; p < npix; p++, a += ks, c += cs)
        for (size_t ch = 0; ch < channels; ch += 16) {
            int32x4_t a0 = vld1q_s32(bias + ch), a1 = vld1q_s32(bias + ch + 4), a2 = vld1q_s32(bias + ch + 8),
                      a3 = vld1q_s32(bias + ch + 12);
            for (size_t t = 0; t < ks; t++) {
                const uint8x16_t x = vld1q_u8(a[t] + ch);
                const int16x8_t xl = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(x)));
                const int16x8_t xh = vreinterpretq_s16_u16(vmovl_high_u8(x));
                const int32_t *wc = wt + t * cp + ch;
                const int16x8_t wl = vuzp1q_s16(vreinterpretq_s16_s32(vld1q_s32(wc)),
                                                vreinterpretq_s16_s32(vld1q_s32(wc + 4)));
                const int16x8_t wh = vuzp1q_s16(vreinterpretq_s16_s32(vld1q_s32(wc + 8)),
                                                vreinterpretq_s16_s32(vld1q_s32(wc + 12)));
                a0 = vmlal_s16(a0, vget_low_s16(xl), vget_low_s16(wl));
                a1 = vmlal_high_s16(a1, xl, wl);
                a2 = vmlal_s16(a2, vget_low_s16(xh), vget_low_s16(wh));
                a3 = vmlal_high_s16(a3, xh, wh);
            }
            size_t n = channels - ch < 16 ? channels - ch : 16;
            qnn_neon_store16(c + ch, qnn_neon_requant16(a0, a1, a2, a3, scale + ch, &q), n);
        }
}

/* vadd: qnn_vadd_body's integers, 8 at a time. acc = ma (a - za) + mb (b - zb) in int32 (|acc| < 2^30), then
 * round half to even of acc / 2^sh without the remainder: with fl = acc >> sh (floor),
 *     rne(acc / 2^sh) = (acc + 2^(sh-1) - 1 + (fl & 1)) >> sh,
 * since for rem = acc - fl 2^sh: rem < half gives fl, rem > half gives fl + 1, rem == half gives fl + (fl & 1), the
 * even one. acc + 2^(sh-1) stays below 2^31 for sh <= 31. The tail (< 8) is the shared scalar body. */
void par_qnn_vadd__neon(size_t n, const uint8_t *a, const uint8_t *b, uint8_t *y, const qnn_add_params *p)
{
    const int32x4_t vma = vdupq_n_s32(p->ma), vmb = vdupq_n_s32(p->mb), vzo = vdupq_n_s32(p->zo);
    const int16x8_t vza = vdupq_n_s16((int16_t)p->za), vzb = vdupq_n_s16((int16_t)p->zb);
    const int32x4_t nsh = vdupq_n_s32(-p->shift), bias = vdupq_n_s32((int32_t)((1u << (p->shift - 1)) - 1u));
    const int32x4_t one = vdupq_n_s32(1);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const int16x8_t da = vsubq_s16(vreinterpretq_s16_u16(vmovl_u8(vld1_u8(a + i))), vza);
        const int16x8_t db = vsubq_s16(vreinterpretq_s16_u16(vmovl_u8(vld1_u8(b + i))), vzb);
        int32x4_t lo = vmulq_s32(vmovl_s16(vget_low_s16(da)), vma), hi = vmulq_s32(vmovl_high_s16(da), vma);
        lo = vmlaq_s32(lo, vmovl_s16(vget_low_s16(db)), vmb);
        hi = vmlaq_s32(hi, vmovl_high_s16(db), vmb);
        const int32x4_t flo = vandq_s32(vshlq_s32(lo, nsh), one), fhi = vandq_s32(vshlq_s32(hi, nsh), one);
        lo = vaddq_s32(vshlq_s32(vaddq_s32(vaddq_s32(lo, bias), flo), nsh), vzo);
        hi = vaddq_s32(vshlq_s32(vaddq_s32(vaddq_s32(hi, bias), fhi), nsh), vzo);
        vst1_u8(y + i, vqmovun_s16(vcombine_s16(vqmovn_s32(lo), vqmovn_s32(hi))));
    }
    qnn_vadd_body(n - i, a + i, b + i, y + i, p);
}

void par_qnn_quantize__neon(size_t n, const float *x, uint8_t *y, double inv_scale, double zp)
{
    qnn_quantize_body(n, x, y, inv_scale, zp);
}

/* linear_8da4w (qnn_qb4w_fn), block % 8 == 0, without the dot product (qnn_neon_qb4w.h has the operands and the
 * epilogue). Per group of 8 k's, four 16-byte weight vectors (4 columns x 4 bytes each) split into their low and
 * high nibbles; per row and 4-column quad, smull multiplies the low nibbles of 2 columns by the row's k's 0-3
 * (lane 0 of its 8 bytes, repeated) and smlal adds the high nibbles times k's 4-7, so each int16 lane holds two
 * products (|.| <= 2048); addp pairs the two column pairs (4 products, |.| <= 4096) and sadalp adds adjacent
 * lanes into the quad's 4 int32 column sums: 6 instructions for 32 multiply-adds. */
/* smull / smlal / addp / sadalp: one row's 4 quads of a group of 8 k's (above). */
static inline void qb4w_step(int32x4_t acc[4], const int8x16_t lo[4], const int8x16_t hi[4], int8x8_t x8)
{
    const int32x2_t x = vreinterpret_s32_s8(x8);
    const int8x8_t xl = vreinterpret_s8_s32(vdup_lane_s32(x, 0)), xh = vreinterpret_s8_s32(vdup_lane_s32(x, 1));
    for (int q = 0; q < 4; q++) {
        int16x8_t p0 = vmull_s8(vget_low_s8(lo[q]), xl), p1 = vmull_s8(vget_high_s8(lo[q]), xl);
        p0 = vmlal_s8(p0, vget_low_s8(hi[q]), xh);
        p1 = vmlal_s8(p1, vget_high_s8(hi[q]), xh);
        acc[q] = vpadalq_s16(acc[q], vpaddq_s16(p0, p1));
    }
}

void par_qnn_qb4w_4x16c8__neon(size_t mr, size_t nc, size_t kc, size_t block, const uint8_t *a, size_t a_stride,
                               const int32_t *zp, const float *sx, const void *w, float *c, size_t cs)
{
    qnn_qb4w_drive(mr, nc, kc, block, a, a_stride, zp, sx, w, c, cs, qb4w_step);
}
