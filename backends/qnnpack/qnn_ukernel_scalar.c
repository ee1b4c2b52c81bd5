/*
 * qnn_ukernel_scalar.c - the portable int8 micro-kernels (igemm 4x8c4, depthwise) and the kernel-set registry with
 * the weight packing shared by all ISAs.
 *
 * The scalar kernels are the model the SIMD kernels must match bit for bit (tests/test_qnnpack_kernels.c checks that):
 * plain int32 accumulation, then the fp32 requantization of qnn_kernels.h, rounding half to even by adding and
 * subtracting 1.5 * 2^23 (the float is clamped first, so it is below 2^22 in magnitude). It must not use any
 * instruction-set extension.
 */
#include <string.h>

#include <cpuinfo.h>

#include "qnn_kernels.h"

static inline uint8_t requant1(int32_t acc, float scale, const qnn_rq *rq)
{
    float f = (float)acc * scale;
    if (rq->two) {
        f = f < rq->vmin1 ? rq->vmin1 : f;
        f = f > rq->vmax1 ? rq->vmax1 : f;
        f = (float)(int32_t)((f + 12582912.0f) - 12582912.0f) * rq->r2;
    }
    f = f < rq->vmin ? rq->vmin : f;
    f = f > rq->vmax ? rq->vmax : f;
    return (uint8_t)((int32_t)((f + 12582912.0f) - 12582912.0f) + rq->zp); /* round half even, |f| < 2^22 */
}

void par_qnn_igemm_4x8c4__scalar(size_t mr, size_t nc, size_t kc, size_t ks, const uint8_t *const *a, size_t a_off,
                                 const uint8_t *zero, const void *w, const int32_t *rowcorr, uint8_t *c, size_t cs,
                                 const float *scale, const qnn_rq *rq)
{
    enum { MR = 4, NR = 8 };
    const int32_t *bias = w;
    const int8_t *wp = (const int8_t *)(bias + NR);
    int32_t acc[MR][NR];
    for (size_t i = 0; i < MR; i++)
        for (size_t j = 0; j < NR; j++) acc[i][j] = bias[j] + (rowcorr && i < mr ? rowcorr[i] : 0);
    for (size_t t = 0; t < ks; t++) {
        const uint8_t *ap[MR];
        for (size_t i = 0; i < MR; i++) {
            ap[i] = a[t * MR + i];
            if (ap[i] != zero) ap[i] += a_off;
        }
        for (size_t k = 0; k < kc; k += 4, wp += NR * 4)
            for (size_t i = 0; i < MR; i++)
                for (size_t j = 0; j < NR; j++)
                    for (size_t q = 0; q < 4; q++) acc[i][j] += (int32_t)ap[i][k + q] * (int32_t)wp[j * 4 + q];
    }
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nc; j++) c[i * cs + j] = requant1(acc[i][j], scale[j], rq);
}

void par_qnn_dw_c16__scalar(size_t npix, size_t channels, size_t ks, const uint8_t *const *a, const void *w,
                            uint8_t *c, size_t cs, const float *scale, const qnn_rq *rq)
{
    size_t cp = (channels + 15) & ~(size_t)15;
    const int32_t *bias = w, *wt = bias + cp;
    for (size_t p = 0; p < npix; p++, a += ks, c += cs)
        for (size_t ch = 0; ch < channels; ch++) {
            int32_t acc = bias[ch];
            for (size_t t = 0; t < ks; t++) acc += (int32_t)a[t][ch] * (int32_t)(int16_t)(uint16_t)wt[t * cp + ch];
            c[ch] = requant1(acc, scale[ch], rq);
        }
}

/* linear_8da4w (qnn_kernels.h, qnn_qb4w_fn): any even block, the arithmetic the SIMD kernels repeat. Nibbles are
 * sign-extended by (n ^ 8) - 8. */
void par_qnn_qb4w_4x16c8__scalar(size_t mr, size_t nc, size_t kc, size_t block, const uint8_t *a, size_t a_stride,
                                 const int32_t *zp, const float *sx, const void *w, float *c, size_t cs)
{
    enum { NR = QNN_QB4W_NR };
    qnn_qb4w_view pv;
    const size_t nb = qnn_qb4w_parts(w, kc, block, &pv);
    const uint8_t *wp = pv.w4;
    const int32_t *wsum = pv.wsum;
    const float *scale = pv.scale, *bias = pv.bias;
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nc; j++) {
            float f = 0.0f;
            for (size_t b = 0; b < nb; b++) {
                int32_t acc = 0;
                for (size_t k = b * block; k < (b + 1) * block; k++) {
                    const uint8_t byte = wp[(k / 8) * NR * 4 + j * 4 + (k % 4)];
                    const int32_t n = (k % 8) < 4 ? byte & 15 : byte >> 4;
                    acc += (int32_t)a[i * a_stride + k] * ((n ^ 8) - 8);
                }
                acc -= zp[i] * wsum[b * NR + j];
                const float t = (float)acc * scale[b * NR + j];
                f = f + t;
            }
            const float t = f * sx[i];
            c[i * cs + j] = t + bias[j];
        }
}

void par_qnn_vadd__scalar(size_t n, const uint8_t *a, const uint8_t *b, uint8_t *y, const qnn_add_params *p)
{
    qnn_vadd_body(n, a, b, y, p);
}

void par_qnn_quantize__scalar(size_t n, const float *x, uint8_t *y, double inv_scale, double zp)
{
    qnn_quantize_body(n, x, y, inv_scale, zp);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Registry and packing
 * ------------------------------------------------------------------------------------------------------------- */
static const qnn_ukernels SETS[] = {
    {QNN_ISA_SCALAR, "scalar", 4, 8, QNN_WFMT_C4, par_qnn_igemm_4x8c4__scalar, NULL, NULL, par_qnn_dw_c16__scalar,
     par_qnn_vadd__scalar, par_qnn_quantize__scalar, NULL, par_qnn_qb4w_4x16c8__scalar, "4x16c8"},
#if defined(__x86_64__)
    {QNN_ISA_AVX2, "avx2", 4, 16, QNN_WFMT_C4_I16, par_qnn_igemm_4x16c4__avx2, par_qnn_gemm16_4x16c2__avx2,
     par_qnn_pack_a16__avx2, par_qnn_dw_c16__avx2, par_qnn_vadd__avx2, par_qnn_quantize__avx2,
     par_qnn_nhwc3__avx2, par_qnn_qb4w_4x16c8__avx2, "4x16c8"},
    {QNN_ISA_VNNI, "vnni", 8, 32, QNN_WFMT_C4, par_qnn_igemm_8x32c4__avx512vnni, NULL, NULL,
     par_qnn_dw_c16__avx512vnni, par_qnn_vadd__avx512, par_qnn_quantize__avx512, par_qnn_nhwc3__avx2,
     par_qnn_qb4w_4x16c8__avx512vnni, "4x16c8"},
#endif
};

#if defined(__aarch64__)
/* NEON is baseline on aarch64; the dot-product set only where cpuinfo reports the extension (sdot is SIGILL
 * elsewhere). Both share the NEON depthwise, vadd and quantize kernels. */
static const qnn_ukernels NEON_SETS[2] = {
    {QNN_ISA_NEON, "neon", 4, 16, QNN_WFMT_K1, par_qnn_igemm_4x16__neon, NULL, NULL, par_qnn_dw_c16__neon,
     par_qnn_vadd__neon, par_qnn_quantize__neon, NULL, par_qnn_qb4w_4x16c8__neon, "4x16c8"},
    {QNN_ISA_NEONDOT, "neondot", 4, 16, QNN_WFMT_C4_S8, par_qnn_igemm_4x16c4__neondot, NULL, NULL,
     par_qnn_dw_c16__neon,
     par_qnn_vadd__neon, par_qnn_quantize__neon, NULL, par_qnn_qb4w_4x16c8__neondot, "4x16c8"},
};
#endif

const qnn_ukernels *par_qnn_ukernels(qnn_isa isa)
{
    if (isa == QNN_ISA_SCALAR) return &SETS[0];
    if (!cpuinfo_initialize()) return NULL;
#if defined(__aarch64__)
    if (isa == QNN_ISA_NEON) return cpuinfo_has_arm_neon() ? &NEON_SETS[0] : NULL;
    if (isa == QNN_ISA_NEONDOT) return cpuinfo_has_arm_neon_dot() ? &NEON_SETS[1] : NULL;
#endif
#if defined(__x86_64__)
    if (isa == QNN_ISA_AVX2) return cpuinfo_has_x86_avx2() ? &SETS[1] : NULL;
    if (isa == QNN_ISA_VNNI)
        return (cpuinfo_has_x86_avx512f() && cpuinfo_has_x86_avx512bw() && cpuinfo_has_x86_avx512vl() &&
                cpuinfo_has_x86_avx512vnni())
                   ? &SETS[2]
                   : NULL;
#endif
    return NULL;
}

const qnn_ukernels *par_qnn_ukernels_best(void)
{
    const qnn_ukernels *k = par_qnn_ukernels(QNN_ISA_VNNI);
    if (!k) k = par_qnn_ukernels(QNN_ISA_AVX2);
    if (!k) k = par_qnn_ukernels(QNN_ISA_NEONDOT);
    if (!k) k = par_qnn_ukernels(QNN_ISA_NEON);
    return k ? k : &SETS[0];
}

size_t par_qnn_block_bytes(const qnn_ukernels *uk, size_t ks, size_t kcp)
{
    size_t esz = uk->wfmt == QNN_WFMT_C4_I16 ? 2 : 1;
    return uk->nr * 4 + ks * kcp * uk->nr * esz;
}

void par_qnn_pack_gemm(const qnn_ukernels *uk, size_t ks, size_t kc, size_t kcp, size_t n0, size_t nc,
                       const int32_t *bias, qnn_wget_fn wfn, const void *ctx, void *dst)
{
    size_t nr = uk->nr;
    memset(dst, 0, par_qnn_block_bytes(uk, ks, kcp));
    int32_t *b = dst;
    for (size_t j = 0; j < nc; j++) b[j] = bias[j];
    if (uk->wfmt == QNN_WFMT_C4 || uk->wfmt == QNN_WFMT_C4_S8) {
        int8_t *p = (int8_t *)(b + nr);
        for (size_t t = 0; t < ks; t++)
            for (size_t k0 = 0; k0 < kcp; k0 += 4, p += nr * 4)
                for (size_t j = 0; j < nc; j++)
                    for (size_t q = 0; q < 4; q++)
                        if (k0 + q < kc) p[j * 4 + q] = (int8_t)wfn(ctx, n0 + j, t, k0 + q);
        if (uk->wfmt == QNN_WFMT_C4_S8) {
            /* bias + 128 sum w, modulo 2^32 as the kernel's int32 adds (qnn_ukernel_neondot.c) */
            const int8_t *q = (const int8_t *)(b + nr);
            for (size_t g = 0; g < ks * kcp / 4; g++, q += nr * 4)
                for (size_t j = 0; j < nc; j++)
                    for (size_t i = 0; i < 4; i++)
                        b[j] = (int32_t)((uint32_t)b[j] + 128u * (uint32_t)(int32_t)q[j * 4 + i]);
        }
    } else if (uk->wfmt == QNN_WFMT_K1) {
        int8_t *p = (int8_t *)(b + nr);
        for (size_t t = 0; t < ks; t++)
            for (size_t k = 0; k < kcp; k++, p += nr)
                for (size_t j = 0; j < nc; j++)
                    if (k < kc) p[j] = (int8_t)wfn(ctx, n0 + j, t, k);
    } else {
        /* Per pair of k's, nr int32 lanes of the int16 pair (w_k, w_k+1): the kernel broadcasts a row's widened
         * (x_k, x_k+1) and one vpmaddwd gives x_k w_k + x_k+1 w_k+1 per column. */
        int16_t *p = (int16_t *)(b + nr);
        for (size_t t = 0; t < ks; t++)
            for (size_t k0 = 0; k0 < kcp; k0 += 2, p += nr * 2)
                for (size_t j = 0; j < nc; j++)
                    for (size_t q = 0; q < 2; q++)
                        if (k0 + q < kc) p[j * 2 + q] = (int16_t)wfn(ctx, n0 + j, t, k0 + q);
    }
}

size_t par_qnn_dw_channels(const qnn_ukernels *uk, size_t channels)
{
    return uk->isa == QNN_ISA_AVX2 ? (channels + 31) & ~(size_t)31 : (channels + 15) & ~(size_t)15;
}

size_t par_qnn_dw_slot(const qnn_ukernels *uk, size_t c)
{
    if (uk->isa != QNN_ISA_AVX2) return c;
    /* per 32 channels, vectors of [0-3 | 16-19], [4-7 | 20-23], [8-11 | 24-27], [12-15 | 28-31] */
    size_t r = c % 32;
    return c - r + (r % 16) / 4 * 8 + r / 16 * 4 + r % 4;
}

void par_qnn_dw_put(const qnn_ukernels *uk, int32_t *pk, size_t cp, size_t t, size_t c, int32_t w)
{
    const uint32_t h = (uint16_t)(int16_t)w;
    const size_t s = par_qnn_dw_slot(uk, c);
    if (uk->isa == QNN_ISA_AVX2) pk[cp + t / 2 * cp + s] |= (int32_t)(h << (16 * (t % 2)));
    else pk[cp + t * cp + s] = (int32_t)h;
}

void par_qnn_pack_qb4w(size_t k, size_t kc, size_t block, size_t n0, size_t nc, const uint8_t *w, const float *scales,
                       const float *bias, void *dst)
{
    enum { NR = QNN_QB4W_NR };
    const size_t nb = kc / block, nbk = k / block;
    size_t o_wsum, o_scale, o_bias, total;
    par_qnn_qb4w_offsets(kc, nb, &o_wsum, &o_scale, &o_bias, &total);
    uint8_t *d = dst;
    int32_t *wsum = (int32_t *)(d + o_wsum);
    float *sc = (float *)(d + o_scale), *bs = (float *)(d + o_bias);
    for (size_t j = 0; j < nc; j++) {
        const uint8_t *row = w + (n0 + j) * (k / 2);
        for (size_t kk = 0; kk < k; kk++) {
            const uint8_t n = (uint8_t)(kk % 2 ? row[kk / 2] >> 4 : row[kk / 2] & 15);
            uint8_t *b = d + (kk / 8) * NR * 4 + j * 4 + (kk % 4);
            *b |= (uint8_t)((kk % 8) < 4 ? n : n << 4);
            wsum[(kk / block) * NR + j] += (n ^ 8) - 8;
        }
        for (size_t b = 0; b < nbk; b++) sc[b * NR + j] = scales[(n0 + j) * nbk + b];
        bs[j] = bias ? bias[n0 + j] : 0.0f;
    }
}
