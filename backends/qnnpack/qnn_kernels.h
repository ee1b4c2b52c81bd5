/*
 * qnn_kernels.h - the int8 micro-kernels of the qnnpack backend: indirection GEMM (igemm) and depthwise (dwconv),
 * one set per instruction set (AVX-512 VNNI, AVX2, scalar; on aarch64 NEON and NEON dot product), and the weight
 * packing each set reads.
 *
 * It must not know about graphs, nodes or the harness: kernels see pointers, sizes and requantization parameters.
 *
 * Numbers. Activations are uint8 everywhere inside the backend: a qs8 tensor is stored as q + 128 (its bits XOR
 * 0x80) with zero point zp + 128, so one kernel serves qu8 and qs8 and the VNNI instruction vpdpbusd (u8 x s8) applies
 * directly. Weights are int8: qs8 as is, qu8 as q - 128 with zero point zp - 128. A GEMM accumulates in int32
 *     acc = sum_k xu_k * ws_k,
 * and the zero points enter through the bias, computed once at prepare:
 *     sum_k (xu_k - zx)(ws_k - zw) = acc - zx * sum_k ws_k + K zx zw - zw * sum_k xu_k,
 * the last term (a row sum, only when zw != 0) is the `rowcorr` input. Padding reads a buffer filled with zx, which
 * adds exactly 0 to the sum. |acc| <= K * 255 * 128 fits int32 for any K below 65000.
 *
 * Requantization (scheme fp32, as XNNPACK's fp32 kernels): y = (float)acc * scale[n], clamped in float to
 * [qmin - zp, qmax - zp] (so the conversion never overflows), converted with round-to-nearest-even (cvtps2dq under
 * the default MXCSR; the 1.5 * 2^23 trick in the scalar kernel), plus zp. Every ISA computes the same float
 * products in the same order, so the kernels are bit-identical to each other. The VNNI epilogue clamps below after
 * packing to uint8 instead, which gives the same integers (rounding commutes with clamping to integer bounds).
 */
#ifndef QNN_KERNELS_H
#define QNN_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* Requantization of one output block (fp32 scheme). vmin, vmax: the output clamp in the zero-point-free domain.
 * With `two`, a fused activation that has its own quantization (relu6 after a conv, calibrated separately) is a
 * second fp32 requantization of the first one's integer, exactly as the unfused graph computes it:
 *     q1 - zp1 = rne(clamp((float)acc * scale, vmin1, vmax1))            ([vmin1, vmax1] = [-zp1, 255 - zp1])
 *     y        = zp + rne(clamp((float)(q1 - zp1) * r2, vmin, vmax)).
 * Contract with `two`: the output clamp lies within what the first stage's clamp lets through,
 *     vmin >= rne(vmin1 * r2) and vmax <= rne(vmax1 * r2), or vmin == vmax
 * (qnn_conv.c's fusion checks it). The second stage is monotone (r2 > 0), so the first stage's clamp then changes
 * no output and a kernel may leave it out: the AVX2 epilogue is y = zp + rne(min(rne(acc * scale) * r2, vmax)) with
 * the inner rne in the float domain (vroundps), clamped below on the bytes. */
typedef struct qnn_rq {
    float vmin, vmax;
    int32_t zp;
    int32_t two;
    float vmin1, vmax1, r2;
    /* The driver's promise that every scale * max(1, r2) <= 1/4, so |acc * scale (* r2)| < 2^30 and the float
     * conversion cannot overflow: a kernel may then clamp above on the bytes instead of in float (rounding commutes
     * with clamping to an integer bound, and the saturating packs keep the order). 0 promises nothing. */
    int32_t bounded;
} qnn_rq;

/* Indirection GEMM: mr (<= MR) output rows, nc (<= NR) output columns.
 *   a[t * MR + i]: row i's pointer for tap t (t < ks); rows >= mr repeat a valid row. Pointers other than `zero` are
 *                  advanced by a_off (the group's first channel). Each row of a tap is kc bytes, kc a multiple of 4;
 *                  bytes past the real channels are read and multiplied by zero weights.
 *   w:            a packed block: int32 bias[NR], then the weights of the ISA's format (qnn_pack_gemm).
 *   rowcorr:      NULL or mr int32 added to the rows' accumulators.
 *   c, cs:        output rows (uint8), stride cs bytes; only nc columns and mr rows are written.
 *   scale:        NR floats. */
typedef void (*qnn_igemm_fn)(size_t mr, size_t nc, size_t kc, size_t ks, const uint8_t *const *a, size_t a_off,
                             const uint8_t *zero, const void *w, const int32_t *rowcorr, uint8_t *c, size_t cs,
                             const float *scale, const qnn_rq *rq);

/* GEMM on a panel of activations the driver has gathered and widened to int16 once per row tile (qnn_pack_a_fn),
 * for all of the tile's column blocks, in one call: row i at a + i * a_stride, kc int16 (a multiple of 4; the
 * taps of a convolution back to back), rows >= mr read but not stored; nc columns in blocks of NR, block b's
 * weights at w + b * w_stride (an igemm block packed with ks = 1 and kcp = kc) and scales at scale + b * NR, its
 * output at c + b * NR. rowcorr, cs, rq as qnn_igemm_fn. */
typedef void (*qnn_gemm16_fn)(size_t mr, size_t nc, size_t kc, const int16_t *a, size_t a_stride, const void *w,
                              size_t w_stride, const int32_t *rowcorr, uint8_t *c, size_t cs, const float *scale,
                              const qnn_rq *rq);
/* The panel of one row tile: for each of the MR rows i and each tap t, the kc bytes at a[t * MR + i] (+ a_off
 * unless it is `zero`) zero-extended to int16 at panel + i * stride + t * kc. It reads and writes up to 15 elements
 * past each tap's kc (a later tap overwrites them; stride >= ks * kc + 16), and zeroes the row's padding to a
 * multiple of 4. */
typedef void (*qnn_pack_a_fn)(size_t ks, size_t kc, const uint8_t *const *a, size_t a_off, const uint8_t *zero,
                              int16_t *panel, size_t stride);
/* Panels of up to this many int16 per row live on the kernel's caller's stack (4 rows: 32 KiB). */
#define QNN_PANEL_K 4096

/* Depthwise (multiplier 1), npix output pixels: pixel p has ks taps a[p * ks + t] (each reads cp =
 * par_qnn_dw_channels(channels) bytes), writes channels bytes at c + p * cs. w: int32 bias[cp] then int32 weights
 * [ks][cp] each holding (uint16_t)w (the low half signed, the high half 0: the operand vpdpwssd / vpmaddwd wants),
 * scale[cp]; channel c's bias, weights and scale at index par_qnn_dw_slot(c). */
typedef void (*qnn_dw_fn)(size_t npix, size_t channels, size_t ks, const uint8_t *const *a, const void *w, uint8_t *c,
                          size_t cs, const float *scale, const qnn_rq *rq);

/* Elementwise add of two uint8 tensors of the same shape, requant.h's add formula with round half to even (fp32):
 *     acc = ma (a - za) + mb (b - zb)   (|acc| < 2^30),   y = clamp(zo + rne(acc / 2^shift), 0, 255).
 * The body is shared (qnn_vadd_body) and compiled once per ISA file, where the compiler vectorizes it; integer
 * arithmetic, so every ISA gives the same bytes. */
typedef struct qnn_add_params {
    int32_t ma, mb, za, zb, zo, shift;
} qnn_add_params;
typedef void (*qnn_vadd_fn)(size_t n, const uint8_t *a, const uint8_t *b, uint8_t *y, const qnn_add_params *p);

static inline void qnn_vadd_body(size_t n, const uint8_t *a, const uint8_t *b, uint8_t *y, const qnn_add_params *p)
{
    const int32_t ma = p->ma, mb = p->mb, za = p->za, zb = p->zb, zo = p->zo, sh = p->shift;
    const int32_t mask = (1 << sh) - 1, half = 1 << (sh - 1);
    for (size_t i = 0; i < n; i++) {
        int32_t acc = ma * ((int32_t)a[i] - za) + mb * ((int32_t)b[i] - zb);
        int32_t fl = acc >> sh, rem = acc & mask;
        int32_t v = fl + ((rem > half) | ((rem == half) & fl & 1)) + zo;
        y[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
}

/* quantize f32 -> uint8 domain: t = x * (1 / scale) in double (within 2^-52 of the quotient), clamped to
 * [-512, 512] (NaN -> -512), rounded half to even by adding and subtracting 1.5 * 2^52, then + zp (after the
 * rounding: an odd zero point must not flip a tie) and saturated. No multiply-add pair a compiler could contract
 * into an FMA, so the bytes are the same on every ISA. */
typedef void (*qnn_quantize_fn)(size_t n, const float *x, uint8_t *y, double inv_scale, double zp);

static inline void qnn_quantize_body(size_t n, const float *x, uint8_t *y, double inv_scale, double zp)
{
    for (size_t i = 0; i < n; i++) {
        double t = (double)x[i] * inv_scale;
        t = t > -512.0 ? t : -512.0;
        t = t < 512.0 ? t : 512.0;
        double r = (t + 6755399441055744.0) - 6755399441055744.0;
        r += zp;
        y[i] = (uint8_t)(r < 0 ? 0 : r > 255 ? 255 : (int32_t)r);
    }
}

/* NCHW -> NHWC of one 3-channel image (an RGB input): y[3 i + c] = x[c * hw + i] for i < hw. */
typedef void (*qnn_nhwc3_fn)(size_t hw, const uint8_t *x, uint8_t *y);

/* qd8 x qb4w GEMM (linear_8da4w, docs/quantization.md): dynamic int8 activations per row times signed int4 weights
 * with one f32 scale per column and block of `block` k's, f32 out. mr (<= QNN_QB4W_MR) rows, nc (<= QNN_QB4W_NR)
 * columns, kc k's (a multiple of 8; bytes past the real K are 0 in both operands).
 *   a, a_stride:  row i's kc bytes at a + i * a_stride: the activation q + 128 (uint8); rows >= mr are not read.
 *   zp:           per row, the zero point + 128 (the uint8 domain); sx: per row, the dequantizing scale s_x.
 *   w:            the packed column block (par_qnn_pack_qb4w): per group of 8 k's, QNN_QB4W_NR columns x 4 bytes,
 *                 byte m (0..3) of column j holding k = 8g + m in bits 0-3 and k = 8g + m + 4 in bits 4-7, each a
 *                 two's complement int4; then per block the int32 sums of the column's weights, then per block the
 *                 f32 scales, then the f32 bias (0 where none): the offsets of par_qnn_qb4w_offsets.
 *   c, cs:        row i's nc floats at c + i * cs.
 * Arithmetic, the same on every ISA so that every set gives the same bits (tests/test_qnnpack_kernels.c):
 *     acc_b = sum_{k in b} a_k w_k - zp * wsum_b        (exact int32; = sum (q_k - z_x) w_k)
 *     f     = f + (float)acc_b * s_w[b]                 (blocks in order, f = 0 first; a multiply, then an add:
 *                                                        never contracted into an FMA)
 *     y     = f * sx + bias                             (a multiply, then an add)
 * The SIMD kernels take block % 8 == 0 (block * 255 * 128 < 2^31, checked by the lowering); the scalar kernel any
 * even block. */
enum { QNN_QB4W_MR = 4, QNN_QB4W_NR = 16 };
typedef void (*qnn_qb4w_fn)(size_t mr, size_t nc, size_t kc, size_t block, const uint8_t *a, size_t a_stride,
                            const int32_t *zp, const float *sx, const void *w, float *c, size_t cs);
/* Byte offsets in a packed column block of kc k's (kc % 8 == 0) and nb blocks: the int32 block sums, the f32 block
 * scales ([nb][NR] each), the f32 bias [NR]; *total the block's size (a multiple of 64). Inline: the kernels of
 * every file read it, and the registry's file must not be called back. */
static inline void par_qnn_qb4w_offsets(size_t kc, size_t nb, size_t *wsum, size_t *scale, size_t *bias,
                                        size_t *total)
{
    *wsum = kc / 8 * QNN_QB4W_NR * 4;
    *scale = *wsum + nb * QNN_QB4W_NR * sizeof(int32_t);
    *bias = *scale + nb * QNN_QB4W_NR * sizeof(float);
    *total = (*bias + QNN_QB4W_NR * sizeof(float) + 63) & ~(size_t)63;
}
/* The parts of a packed column block, as the kernels read them; returns the number of blocks, kc / block. */
typedef struct qnn_qb4w_view {
    const uint8_t *w4;
    const int32_t *wsum;
    const float *scale, *bias;
} qnn_qb4w_view;
static inline size_t qnn_qb4w_parts(const void *w, size_t kc, size_t block, qnn_qb4w_view *v)
{
    const size_t nb = kc / block;
    size_t o_wsum, o_scale, o_bias, total;
    par_qnn_qb4w_offsets(kc, nb, &o_wsum, &o_scale, &o_bias, &total);
    v->w4 = w;
    v->wsum = (const int32_t *)(v->w4 + o_wsum);
    v->scale = (const float *)(v->w4 + o_scale);
    v->bias = (const float *)(v->w4 + o_bias);
    return nb;
}
/* Pack columns [n0, n0 + nc) of linear_8da4w's weight (rows of k / 2 bytes, low nibble first, as the op's input 1),
 * its block scales [o][k / block] and bias (NULL: 0) into dst (par_qnn_qb4w_offsets' total bytes, zeroed). */
void par_qnn_pack_qb4w(size_t k, size_t kc, size_t block, size_t n0, size_t nc, const uint8_t *w, const float *scales,
                       const float *bias, void *dst);

typedef enum qnn_wfmt {
    QNN_WFMT_C4 = 0,     /* int8: per 4 k's, NR columns x 4 bytes (vpdpbusd operand) */
    QNN_WFMT_C4_I16 = 1, /* int16: per 4 k's, NR int32 lanes of (w0, w1), then NR lanes of (w2, w3) (vpmaddwd) */
    QNN_WFMT_K1 = 2,     /* int8: per k, the NR columns' weights (NEON vmlal_lane: one row lane times NR weights) */
    QNN_WFMT_C4_S8 = 3,  /* QNN_WFMT_C4 with bias[n] + 128 sum_{t,k} w (mod 2^32): the sdot kernel's activations are
                          * x - 128 (qnn_ukernel_neondot.c) */
} qnn_wfmt;

typedef enum qnn_isa {
    QNN_ISA_SCALAR = 0,
    QNN_ISA_AVX2 = 1,
    QNN_ISA_VNNI = 2,
    QNN_ISA_NEON = 3,    /* aarch64 */
    QNN_ISA_NEONDOT = 4, /* aarch64 with the armv8.2 dot product */
} qnn_isa;

typedef struct qnn_ukernels {
    qnn_isa isa;
    const char *name; /* "vnni", "avx2", "neondot", "neon", "scalar" */
    size_t mr, nr;
    qnn_wfmt wfmt;
    qnn_igemm_fn igemm;
    qnn_gemm16_fn gemm16; /* with pack_a: the panel path of qnn_conv.c (NULL: the igemm reads the bytes itself) */
    qnn_pack_a_fn pack_a;
    qnn_dw_fn dw;
    qnn_vadd_fn vadd;
    qnn_quantize_fn quantize;
    qnn_nhwc3_fn nhwc3; /* NULL: qnn_common.c's loop */
    qnn_qb4w_fn qb4w;   /* linear_8da4w; blocks of a multiple of 8 (the scalar set's for the others) */
    const char *qb4w_name; /* the qb4w kernel, as describe reports it */
} qnn_ukernels;

/* The kernel set of an ISA, or NULL when the machine lacks it (cpuinfo). */
const qnn_ukernels *par_qnn_ukernels(qnn_isa isa);
/* The best available set. */
const qnn_ukernels *par_qnn_ukernels_best(void);

/* Bytes of one packed igemm block: bias + ks * kcp * nr weights in the format. */
size_t par_qnn_block_bytes(const qnn_ukernels *uk, size_t ks, size_t kcp);

/* Pack output columns [n0, n0 + nc) of a GEMM into `dst` (par_qnn_block_bytes bytes): bias[j] and the weight of
 * column j, tap t, channel k read as wfn(ctx, n0 + j, t, k) (already zero-point shifted to int8). Channels k >= kc
 * and columns j >= nc are zero. */
typedef int32_t (*qnn_wget_fn)(const void *ctx, size_t n, size_t t, size_t k);
void par_qnn_pack_gemm(const qnn_ukernels *uk, size_t ks, size_t kc, size_t kcp, size_t n0, size_t nc,
                       const int32_t *bias, qnn_wget_fn wfn, const void *ctx, void *dst);

/* Store depthwise weight w (|w| <= 255) of tap t, channel c into the packed int32 words `pk` (bias[cp] first, then
 * the weights; zero-initialized, cp * (1 + ks) words) in the set's format: one int32 per tap and channel holding
 * (uint16_t)w, as the qnn_dw_fn comment says, except on AVX2, which packs per pair of taps (t, t + 1) one int32
 * (uint16_t)w_t | (uint16_t)w_t+1 << 16, an odd last tap paired with 0 ([(ks + 1) / 2][cp]: the operand of one
 * vpmaddwd over the two taps' interleaved inputs). */
void par_qnn_dw_put(const qnn_ukernels *uk, int32_t *pk, size_t cp, size_t t, size_t c, int32_t w);
/* The depthwise kernels' channel count padded (16, or 32 on AVX2), and the index of channel c in bias, weights and
 * scales: c, except on AVX2, whose in-lane interleave orders each 32 channels as par_qnn_dw_slot says. */
size_t par_qnn_dw_channels(const qnn_ukernels *uk, size_t channels);
size_t par_qnn_dw_slot(const qnn_ukernels *uk, size_t c);

/* Kernels (one file each). */
void par_qnn_igemm_4x8c4__scalar(size_t mr, size_t nc, size_t kc, size_t ks, const uint8_t *const *a, size_t a_off,
                                 const uint8_t *zero, const void *w, const int32_t *rowcorr, uint8_t *c, size_t cs,
                                 const float *scale, const qnn_rq *rq);
void par_qnn_dw_c16__scalar(size_t npix, size_t channels, size_t ks, const uint8_t *const *a, const void *w,
                            uint8_t *c, size_t cs, const float *scale, const qnn_rq *rq);
void par_qnn_qb4w_4x16c8__scalar(size_t mr, size_t nc, size_t kc, size_t block, const uint8_t *a, size_t a_stride,
                                  const int32_t *zp, const float *sx, const void *w, float *c, size_t cs);
void par_qnn_qb4w_4x16c8__avx2(size_t mr, size_t nc, size_t kc, size_t block, const uint8_t *a, size_t a_stride,
                               const int32_t *zp, const float *sx, const void *w, float *c, size_t cs);
void par_qnn_qb4w_4x16c8__avx512vnni(size_t mr, size_t nc, size_t kc, size_t block, const uint8_t *a,
                                     size_t a_stride, const int32_t *zp, const float *sx, const void *w, float *c,
                                     size_t cs);
void par_qnn_qb4w_4x16c8__neon(size_t mr, size_t nc, size_t kc, size_t block, const uint8_t *a, size_t a_stride,
                               const int32_t *zp, const float *sx, const void *w, float *c, size_t cs);
void par_qnn_qb4w_4x16c8__neondot(size_t mr, size_t nc, size_t kc, size_t block, const uint8_t *a, size_t a_stride,
                                  const int32_t *zp, const float *sx, const void *w, float *c, size_t cs);
void par_qnn_vadd__scalar(size_t n, const uint8_t *a, const uint8_t *b, uint8_t *y, const qnn_add_params *p);
void par_qnn_quantize__scalar(size_t n, const float *x, uint8_t *y, double inv_scale, double zp);
void par_qnn_igemm_4x16c4__avx2(size_t mr, size_t nc, size_t kc, size_t ks, const uint8_t *const *a, size_t a_off,
                                const uint8_t *zero, const void *w, const int32_t *rowcorr, uint8_t *c, size_t cs,
                                const float *scale, const qnn_rq *rq);
void par_qnn_gemm16_4x16c2__avx2(size_t mr, size_t nc, size_t kc, const int16_t *a, size_t a_stride, const void *w,
                                 size_t w_stride, const int32_t *rowcorr, uint8_t *c, size_t cs, const float *scale,
                                 const qnn_rq *rq);
void par_qnn_pack_a16__avx2(size_t ks, size_t kc, const uint8_t *const *a, size_t a_off, const uint8_t *zero,
                            int16_t *panel, size_t stride);
void par_qnn_dw_c16__avx2(size_t npix, size_t channels, size_t ks, const uint8_t *const *a, const void *w,
                          uint8_t *c, size_t cs, const float *scale, const qnn_rq *rq);
void par_qnn_vadd__avx2(size_t n, const uint8_t *a, const uint8_t *b, uint8_t *y, const qnn_add_params *p);
void par_qnn_quantize__avx2(size_t n, const float *x, uint8_t *y, double inv_scale, double zp);
void par_qnn_nhwc3__avx2(size_t hw, const uint8_t *x, uint8_t *y);
void par_qnn_igemm_8x32c4__avx512vnni(size_t mr, size_t nc, size_t kc, size_t ks, const uint8_t *const *a,
                                      size_t a_off, const uint8_t *zero, const void *w, const int32_t *rowcorr,
                                      uint8_t *c, size_t cs, const float *scale, const qnn_rq *rq);
void par_qnn_dw_c16__avx512vnni(size_t npix, size_t channels, size_t ks, const uint8_t *const *a, const void *w,
                                uint8_t *c, size_t cs, const float *scale, const qnn_rq *rq);
void par_qnn_vadd__avx512(size_t n, const uint8_t *a, const uint8_t *b, uint8_t *y, const qnn_add_params *p);
void par_qnn_quantize__avx512(size_t n, const float *x, uint8_t *y, double inv_scale, double zp);
void par_qnn_igemm_4x16__neon(size_t mr, size_t nc, size_t kc, size_t ks, const uint8_t *const *a, size_t a_off,
                              const uint8_t *zero, const void *w, const int32_t *rowcorr, uint8_t *c, size_t cs,
                              const float *scale, const qnn_rq *rq);
void par_qnn_dw_c16__neon(size_t npix, size_t channels, size_t ks, const uint8_t *const *a, const void *w,
                          uint8_t *c, size_t cs, const float *scale, const qnn_rq *rq);
void par_qnn_vadd__neon(size_t n, const uint8_t *a, const uint8_t *b, uint8_t *y, const qnn_add_params *p);
void par_qnn_quantize__neon(size_t n, const float *x, uint8_t *y, double inv_scale, double zp);
void par_qnn_igemm_4x16c4__neondot(size_t mr, size_t nc, size_t kc, size_t ks, const uint8_t *const *a,
                                   size_t a_off, const uint8_t *zero, const void *w, const int32_t *rowcorr,
                                   uint8_t *c, size_t cs, const float *scale, const qnn_rq *rq);
/* The measured vpdpbusd peak (GOP/s, one core) over `iters` iterations of 24 independent accumulators. */
double par_qnn_vnni_peak(long iters);
/* The measured AVX2 int8 peak (GOP/s, one core): vpmaddwd + vpaddd on 8 independent accumulators, 2 ops per
 * multiply-add of 8-bit values (qnn_ukernel_avx2.c). */
double par_qnn_avx2_peak(long iters);

#endif /* QNN_KERNELS_H */
