/*
 * qnn_ukernel_avx2.c - AVX2 int8 micro-kernels: igemm 4x16c4 (vpmaddwd on 16-bit lanes) and depthwise c16.
 *
 * AVX2 has no u8 x s8 dot product that cannot saturate (vpmaddubsw saturates at 16 bits: 2 * 255 * 128 > 32767), so
 * the igemm splits each row's 4 broadcast bytes x0 x1 x2 x3 into the 16-bit lanes (x0, x2) and (x1, x3) with one
 * AND and one shift, and multiplies them with weights packed as int16 pairs (w0, w2), (w1, w3): vpmaddwd sums each
 * pair exactly into int32. Requantization as qnn_kernels.h, bit-identical to the scalar kernel. Built with -mavx2
 * -mfma only; it must not be called on a machine without AVX2 (par_qnn_ukernels checks).
 */
#include <immintrin.h>
#include <string.h>

#include "qnn_kernels.h"

static inline __m256i requant8(__m256i acc, const float *scale, const qnn_rq *rq)
{
    __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), _mm256_loadu_ps(scale));
    if (rq->two) {
        f = _mm256_min_ps(_mm256_max_ps(f, _mm256_set1_ps(rq->vmin1)), _mm256_set1_ps(rq->vmax1));
        f = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtps_epi32(f)), _mm256_set1_ps(rq->r2));
    }
    f = _mm256_min_ps(_mm256_max_ps(f, _mm256_set1_ps(rq->vmin)), _mm256_set1_ps(rq->vmax));
    return _mm256_add_epi32(_mm256_cvtps_epi32(f), _mm256_set1_epi32(rq->zp));
}

/* Store the low byte of each int32 lane of v (values in [0, 255]): n <= 8 bytes. */
static inline void store8(uint8_t *dst, __m256i v, size_t n)
{
    __m128i lo = _mm256_castsi256_si128(v), hi = _mm256_extracti128_si256(v, 1);
    __m128i w16 = _mm_packus_epi32(lo, hi);
    __m128i b = _mm_packus_epi16(w16, w16);
    uint8_t tmp[16];
    _mm_storeu_si128((__m128i *)tmp, b);
    if (n >= 8) memcpy(dst, tmp, 8);
    else memcpy(dst, tmp, n);
}

void par_qnn_igemm_4x16c4__avx2(size_t mr, size_t nc, size_t kc, size_t ks, const uint8_t *const *a, size_t a_off,
                                const uint8_t *zero, const void *w, const int32_t *rowcorr, uint8_t *c, size_t cs,
                                const float *scale, const qnn_rq *rq)
{
    enum { MR = 4, NR = 16 };
    const int32_t *bias = w;
    const __m256i b0 = _mm256_loadu_si256((const __m256i *)bias), b1 = _mm256_loadu_si256((const __m256i *)(bias + 8));
    __m256i acc[MR][2];
    for (size_t i = 0; i < MR; i++) {
        __m256i r = _mm256_set1_epi32(rowcorr && i < mr ? rowcorr[i] : 0);
        acc[i][0] = _mm256_add_epi32(b0, r);
        acc[i][1] = _mm256_add_epi32(b1, r);
    }
    const int16_t *wp = (const int16_t *)(bias + NR);
    const __m256i mask = _mm256_set1_epi32(0x00ff00ff);
    for (size_t t = 0; t < ks; t++) {
        const uint8_t *ap[MR];
        for (size_t i = 0; i < MR; i++) {
            ap[i] = a[t * MR + i];
            if (ap[i] != zero) ap[i] += a_off;
        }
        for (size_t k = 0; k < kc; k += 4, wp += NR * 4) {
            const __m256i wl0 = _mm256_loadu_si256((const __m256i *)wp);
            const __m256i wl1 = _mm256_loadu_si256((const __m256i *)(wp + 16));
            const __m256i wh0 = _mm256_loadu_si256((const __m256i *)(wp + 32));
            const __m256i wh1 = _mm256_loadu_si256((const __m256i *)(wp + 48));
            for (size_t i = 0; i < MR; i++) {
                int32_t v;
                memcpy(&v, ap[i] + k, 4);
                __m256i x = _mm256_set1_epi32(v);
                __m256i xl = _mm256_and_si256(x, mask), xh = _mm256_srli_epi16(x, 8);
                acc[i][0] = _mm256_add_epi32(acc[i][0], _mm256_madd_epi16(xl, wl0));
                acc[i][1] = _mm256_add_epi32(acc[i][1], _mm256_madd_epi16(xl, wl1));
                acc[i][0] = _mm256_add_epi32(acc[i][0], _mm256_madd_epi16(xh, wh0));
                acc[i][1] = _mm256_add_epi32(acc[i][1], _mm256_madd_epi16(xh, wh1));
            }
        }
    }
    for (size_t i = 0; i < mr; i++) {
        store8(c + i * cs, requant8(acc[i][0], scale, rq), nc);
        if (nc > 8) store8(c + i * cs + 8, requant8(acc[i][1], scale + 8, rq), nc - 8);
    }
}

void par_qnn_dw_c16__avx2(size_t npix, size_t channels, size_t ks, const uint8_t *const *a, const void *w,
                          uint8_t *c, size_t cs, const float *scale, const qnn_rq *rq)
{
    size_t cp = (channels + 15) & ~(size_t)15;
    const int32_t *bias = w, *wt = bias + cp;
    for (size_t p = 0; p < npix; p++, a += ks, c += cs)
        for (size_t ch = 0; ch < channels; ch += 8) {
            /* two accumulators (even and odd taps) halve the dependency chain */
            __m256i acc0 = _mm256_loadu_si256((const __m256i *)(bias + ch)), acc1 = _mm256_setzero_si256();
            size_t t = 0;
            for (; t + 1 < ks; t += 2) {
                __m256i x0 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(a[t] + ch)));
                __m256i x1 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(a[t + 1] + ch)));
                acc0 = _mm256_add_epi32(
                    acc0, _mm256_madd_epi16(x0, _mm256_loadu_si256((const __m256i *)(wt + t * cp + ch))));
                acc1 = _mm256_add_epi32(
                    acc1, _mm256_madd_epi16(x1, _mm256_loadu_si256((const __m256i *)(wt + (t + 1) * cp + ch))));
            }
            if (t < ks) {
                __m256i x0 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(a[t] + ch)));
                acc0 = _mm256_add_epi32(
                    acc0, _mm256_madd_epi16(x0, _mm256_loadu_si256((const __m256i *)(wt + t * cp + ch))));
            }
            size_t n = channels - ch < 8 ? channels - ch : 8;
            store8(c + ch, requant8(_mm256_add_epi32(acc0, acc1), scale + ch, rq), n);
        }
}

void par_qnn_vadd__avx2(size_t n, const uint8_t *a, const uint8_t *b, uint8_t *y, const qnn_add_params *p)
{
    qnn_vadd_body(n, a, b, y, p);
}

void par_qnn_quantize__avx2(size_t n, const float *x, uint8_t *y, double inv_scale, double zp)
{
    qnn_quantize_body(n, x, y, inv_scale, zp);
}
