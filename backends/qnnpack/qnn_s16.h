/*
 * qnn_s16.h - the 16a8w GEMM of the qnnpack backend (docs/quantization.md, "16a8w"): int16 activations (qs16,
 * zero point 0) times int8 weights, an int32 accumulator, fp32 requantization to int16. One kernel per x86 set
 * (scalar, AVX2 vpmaddwd, AVX-512 VNNI vpdpwssd) in qnn_ukernel_s16.c and one for the NEON sets (vmlal_n_s16) in
 * qnn_ukernel_s16_neon.c, the lowering in qnn_16a8w.c.
 *
 * It must not know about graphs, nodes or the harness: kernels see pointers, sizes and scales.
 *
 * Arithmetic, the same on every set so that the sets agree bit for bit (tests/test_qnnpack_kernels.c):
 *     acc = bias[n] + sum_k x_k w_k     int32, wrapping: exact whenever the true sum fits int32, which the
 *                                       reference requires of every graph it accepts (it refuses one whose sum
 *                                       overflows); a pair of products (vpmaddwd, vpdpwssd) is at most 2^23
 *     f   = (float)acc * scale[n]       round to nearest even, then one f32 multiply (core/requant.h, fp32)
 *     y   = rne(clamp(f, -32768, 32767))
 */
#ifndef QNN_S16_H
#define QNN_S16_H

#include <stddef.h>
#include <stdint.h>

enum { QNN_S16_MR = 4, QNN_S16_NR = 16 };

/* mr (<= MR) rows, nc (<= NR) columns, kc k's (even).
 *   a, a_stride:  row i's kc int16 at a + i * a_stride (elements); rows >= mr are not read. Odd-aligned rows are
 *                 fine (the kernels load pairs with unaligned loads).
 *   w:            a packed column block (par_qnn_s16_pack): int32 bias[NR], f32 scale[NR], then per pair of k's
 *                 NR int32 words (uint16_t)w[k] | (uint16_t)w[k + 1] << 16.
 *   c, cs:        row i's nc int16 at c + i * cs (elements). */
typedef void (*qnn_s16_gemm_fn)(size_t mr, size_t nc, size_t kc, const int16_t *a, size_t a_stride, const void *w,
                                int16_t *c, size_t cs);

/* Bytes of a packed column block of kc k's. */
static inline size_t par_qnn_s16_block_bytes(size_t kc)
{
    return (QNN_S16_NR * 8 + kc / 2 * QNN_S16_NR * 4 + 63) & ~(size_t)63;
}

/* Pack columns [n0, n0 + nc) of integer weights w [O][k] (row-major, int16: 16a8w's int8 weights widened, or
 * 16a4w's 4-bit weights times their block multipliers, |w| <= 15 x 128), bias (NULL: 0) and the requantization
 * scales (one per column) into dst (par_qnn_s16_block_bytes(kc), zeroed); k's past k are 0. */
void par_qnn_s16_pack(size_t k, size_t kc, size_t n0, size_t nc, const int16_t *w, const int32_t *bias,
                      const float *scale, void *dst);

void par_qnn_s16_gemm_4x16__scalar(size_t mr, size_t nc, size_t kc, const int16_t *a, size_t a_stride,
                                   const void *w, int16_t *c, size_t cs);
#if defined(__x86_64__)
void par_qnn_s16_gemm_4x16c2__avx2(size_t mr, size_t nc, size_t kc, const int16_t *a, size_t a_stride,
                                   const void *w, int16_t *c, size_t cs);
void par_qnn_s16_gemm_4x16c2__avx512vnni(size_t mr, size_t nc, size_t kc, const int16_t *a, size_t a_stride,
                                         const void *w, int16_t *c, size_t cs);
#endif
#if defined(__aarch64__)
void par_qnn_s16_gemm_4x16__neon(size_t mr, size_t nc, size_t kc, const int16_t *a, size_t a_stride, const void *w,
                                 int16_t *c, size_t cs);
#endif

#endif /* QNN_S16_H */
