/*
 * qnn_ukernel_neondot.c - ARM64 int8 igemm 4x16c4 with the armv8.2 dot-product extension (sdot), built with
 * -march=armv8.2-a+dotprod and called only where cpuinfo reports it (par_qnn_ukernels; on a CPU without it sdot
 * raises SIGILL). The depthwise, vadd and quantize kernels of this set are the NEON ones.
 *
 * sdot multiplies int8 by int8 (udot uint8 by uint8); the backend's activations are uint8 and its weights int8
 * (qnn_kernels.h), and armv8.2 has no mixed-sign dot product (usdot needs i8mm). So the kernel flips the top bit of
 * each activation byte, which maps x in [0, 255] to the int8 value x - 128, and the packing pays the difference back
 * through the bias:
 *     sum_k x_k w_k = sum_k (x_k - 128) w_k + 128 sum_k w_k,
 * so a block packed in QNN_WFMT_C4_S8 holds bias'[n] = bias[n] + 128 * sum_{t,k} w[n][t][k] (par_qnn_pack_gemm,
 * once at prepare), over every tap and channel of the block, the zero padding included (it adds 0). |128 sum w| <=
 * 128 * 128 * 60000 < 2^30, but bias[n] itself may be anywhere in int32, so the sum is taken modulo 2^32 (unsigned
 * arithmetic): the kernel's int32 adds wrap the same way, and the final accumulator, which the scalar kernel holds
 * in int32 too, comes out equal. Padding taps read the zero-point buffer, flipped like any activation, so they are
 * no special case.
 *
 * Blocking (as XNNPACK's qs8 4x16c4 neondot kernels): 16 accumulators (4 rows x 16 columns), weights packed by
 * 4-deep K groups, each group 16 columns x 4 bytes = four 16-byte vectors; per row 8 bytes (two K groups) loaded
 * and flipped at once, and sdot by lane (vdotq_lane_s32) multiplies group g's weights by the row's 4 bytes in lane
 * g. A last group of 4 k's loads 4 bytes. 16 accumulators + 4 rows + 4 weight vectors fit the 32 registers.
 * Requantization: qnn_neon_requant.h, bit-identical to the scalar kernel.
 */
#include <arm_neon.h>
#include <string.h>

#include "qnn_kernels.h"
#include "qnn_neon_qb4w.h"
#include "qnn_neon_requant.h"

void par_qnn_igemm_4x16c4__neondot(size_t mr, size_t nc, size_t kc, size_t ks, const uint8_t *const *a,
                                   size_t a_off, const uint8_t *zero, const void *w, const int32_t *rowcorr,
                                   uint8_t *c, size_t cs, const float *scale, const qnn_rq *rq)
{
    enum { MR = 4, NR = 16 };
    const int32_t *bias = w;
    const int32x4_t b0 = vld1q_s32(bias), b1 = vld1q_s32(bias + 4), b2 = vld1q_s32(bias + 8),
                    b3 = vld1q_s32(bias + 12);
#define QNN_ROWS(X) X(0) X(1) X(2) X(3)
#define QNN_INIT(i)                                                                                                 \
    const int32x4_t r##i = vdupq_n_s32(rowcorr && (i) < mr ? rowcorr[i] : 0);                                        \
    int32x4_t c##i##0 = vaddq_s32(b0, r##i), c##i##1 = vaddq_s32(b1, r##i), c##i##2 = vaddq_s32(b2, r##i),          \
              c##i##3 = vaddq_s32(b3, r##i);
    QNN_ROWS(QNN_INIT)
    const int8_t *wp = (const int8_t *)(bias + NR);
    const uint8x8_t flip = vdup_n_u8(0x80);
    for (size_t t = 0; t < ks; t++, a += MR) {
#define QNN_PTR(i)                                                                                                  \
    const uint8_t *a##i = a[i];                                                                                     \
    if (a##i != zero) a##i += a_off;
        QNN_ROWS(QNN_PTR)
        /* one K group: its 16 x 4 weights times the 4 bytes in lane L of each row */
#define QNN_DOT(i, L)                                                                                               \
    c##i##0 = vdotq_lane_s32(c##i##0, w0, x##i, L);                                                                 \
    c##i##1 = vdotq_lane_s32(c##i##1, w1, x##i, L);                                                                 \
    c##i##2 = vdotq_lane_s32(c##i##2, w2, x##i, L);                                                                 \
    c##i##3 = vdotq_lane_s32(c##i##3, w3, x##i, L);
#define QNN_GROUP(L)                                                                                                \
    {                                                                                                               \
        const int8x16_t w0 = vld1q_s8(wp), w1 = vld1q_s8(wp + 16), w2 = vld1q_s8(wp + 32), w3 = vld1q_s8(wp + 48);  \
        wp += NR * 4;                                                                                               \
        QNN_DOT(0, L) QNN_DOT(1, L) QNN_DOT(2, L) QNN_DOT(3, L)                                                     \
    }
        size_t k = 0;
        for (; k + 8 <= kc; k += 8) {
#define QNN_LD8(i) const int8x8_t x##i = vreinterpret_s8_u8(veor_u8(vld1_u8(a##i + k), flip));
            QNN_ROWS(QNN_LD8)
            QNN_GROUP(0) QNN_GROUP(1)
        }
        if (k < kc) { /* the last 4 k's */
#define QNN_LD4(i)                                                                                                  \
    uint32_t v##i;                                                                                                  \
    memcpy(&v##i, a##i + k, 4);                                                                                     \
    const int8x8_t x##i = vreinterpret_s8_u8(veor_u8(vreinterpret_u8_u32(vdup_n_u32(v##i)), flip));
            QNN_ROWS(QNN_LD4)
            QNN_GROUP(0)
        }
    }
    const qnn_neon_rq q = qnn_neon_rq_load(rq);
#define QNN_STORE(i)                                                                                                \
    if ((i) < mr) qnn_neon_store16(c + (i) * cs, qnn_neon_requant16(c##i##0, c##i##1, c##i##2, c##i##3, scale, &q), nc);
    QNN_ROWS(QNN_STORE)
#undef QNN_ROWS
#undef QNN_INIT
#undef QNN_PTR
#undef QNN_DOT
#undef QNN_GROUP
#undef QNN_LD8
#undef QNN_LD4
#undef QNN_STORE
}

/* linear_8da4w (qnn_qb4w_fn), block % 8 == 0, with the dot product (qnn_neon_qb4w.h has the operands and the
 * epilogue). Per group of 8 k's, four 16-byte weight vectors (4 columns x 4 bytes each) split into their low and
 * high nibbles; per row and 4-column quad two sdot by lane: the low nibbles times the row's k's 0-3 (lane 0 of its
 * 8 bytes), the high nibbles times k's 4-7 (lane 1). 16 accumulators, 8 nibble vectors, 4 rows. */
/* two sdot by lane per quad: one row's 4 quads of a group of 8 k's (above). */
static inline void qb4w_step(int32x4_t acc[4], const int8x16_t lo[4], const int8x16_t hi[4], int8x8_t x)
{
    for (int q = 0; q < 4; q++) {
        acc[q] = vdotq_lane_s32(acc[q], lo[q], x, 0);
        acc[q] = vdotq_lane_s32(acc[q], hi[q], x, 1);
    }
}

void par_qnn_qb4w_4x16c8__neondot(size_t mr, size_t nc, size_t kc, size_t block, const uint8_t *a, size_t a_stride,
                                  const int32_t *zp, const float *sx, const void *w, float *c, size_t cs)
{
    qnn_qb4w_drive(mr, nc, kc, block, a, a_stride, zp, sx, w, c, cs, qb4w_step);
}
