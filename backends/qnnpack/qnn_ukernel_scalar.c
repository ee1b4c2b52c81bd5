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
     par_qnn_vadd__scalar, par_qnn_quantize__scalar, NULL},
#if defined(__x86_64__)
    {QNN_ISA_AVX2, "avx2", 4, 16, QNN_WFMT_C4_I16, par_qnn_igemm_4x16c4__avx2, par_qnn_gemm16_4x16c2__avx2,
     par_qnn_pack_a16__avx2, par_qnn_dw_c16__avx2, par_qnn_vadd__avx2, par_qnn_quantize__avx2,
     par_qnn_nhwc3__avx2},
    {QNN_ISA_VNNI, "vnni", 8, 32, QNN_WFMT_C4, par_qnn_igemm_8x32c4__avx512vnni, NULL, NULL,
     par_qnn_dw_c16__avx512vnni, par_qnn_vadd__avx512, par_qnn_quantize__avx512, par_qnn_nhwc3__avx2},
#endif
};

#if defined(__aarch64__)
/* NEON is baseline on aarch64; the dot-product set only where cpuinfo reports the extension (sdot is SIGILL
 * elsewhere). Both share the NEON depthwise, vadd and quantize kernels. */
static const qnn_ukernels NEON_SETS[2] = {
    {QNN_ISA_NEON, "neon", 4, 16, QNN_WFMT_K1, par_qnn_igemm_4x16__neon, NULL, NULL, par_qnn_dw_c16__neon,
     par_qnn_vadd__neon, par_qnn_quantize__neon, NULL},
    {QNN_ISA_NEONDOT, "neondot", 4, 16, QNN_WFMT_C4_S8, par_qnn_igemm_4x16c4__neondot, NULL, NULL,
     par_qnn_dw_c16__neon,
     par_qnn_vadd__neon, par_qnn_quantize__neon, NULL},
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
