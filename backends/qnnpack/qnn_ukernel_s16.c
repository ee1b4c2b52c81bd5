/*
 * qnn_ukernel_s16.c - the 16a8w GEMM kernels (qnn_s16.h): scalar everywhere; on x86-64 AVX2 (vpmaddwd on pairs of
 * int16 activations and int8 weights widened to int16) and AVX-512 VNNI (vpdpwssd, the int16 dot product), each
 * compiled for its ISA with a target attribute and run only where cpuinfo reports the ISA (the lowering picks by the
 * backend's kernel set). Every set computes the arithmetic of qnn_s16.h's header comment, so they agree bit for bit.
 */
#include <string.h>

#include "qnn_s16.h"

void par_qnn_s16_pack(size_t k, size_t kc, size_t n0, size_t nc, const int16_t *w, const int32_t *bias,
                      const float *scale, void *dst)
{
    int32_t *b = dst;
    float *s = (float *)(b + QNN_S16_NR);
    uint32_t *pw = (uint32_t *)(s + QNN_S16_NR);
    for (size_t j = 0; j < nc; j++) {
        b[j] = bias ? bias[n0 + j] : 0;
        s[j] = scale[n0 + j];
        const int16_t *row = w + (n0 + j) * k;
        for (size_t kk = 0; kk < kc; kk += 2) {
            uint16_t lo = (uint16_t)(kk < k ? row[kk] : 0);
            uint16_t hi = (uint16_t)(kk + 1 < k ? row[kk + 1] : 0);
            pw[kk / 2 * QNN_S16_NR + j] = (uint32_t)lo | (uint32_t)hi << 16;
        }
    }
}

/* f = (float)acc * scale, clamped to the int16 range in float, rounded half to even (1.5 * 2^23: |f| < 2^22). */
static inline int16_t s16_requant(int32_t acc, float scale)
{
    float f = (float)acc * scale;
    f = f < -32768.0f ? -32768.0f : f;
    f = f > 32767.0f ? 32767.0f : f;
    return (int16_t)(int32_t)((f + 12582912.0f) - 12582912.0f);
}

void par_qnn_s16_gemm_4x16__scalar(size_t mr, size_t nc, size_t kc, const int16_t *a, size_t a_stride,
                                   const void *w, int16_t *c, size_t cs)
{
    const int32_t *b = w;
    const float *s = (const float *)(b + QNN_S16_NR);
    const uint32_t *pw = (const uint32_t *)(s + QNN_S16_NR);
    for (size_t i = 0; i < mr; i++) {
        const int16_t *x = a + i * a_stride;
        for (size_t j = 0; j < nc; j++) {
            uint32_t acc = (uint32_t)b[j]; /* wrapping int32 arithmetic, as the SIMD kernels' vpaddd */
            for (size_t kk = 0; kk < kc; kk += 2) {
                uint32_t p = pw[kk / 2 * QNN_S16_NR + j];
                int32_t pair = (int32_t)x[kk] * (int16_t)(uint16_t)p + (int32_t)x[kk + 1] * (int16_t)(uint16_t)(p >> 16);
                acc += (uint32_t)pair;
            }
            c[i * cs + j] = s16_requant((int32_t)acc, s[j]);
        }
    }
}

#if defined(__x86_64__)
#include <immintrin.h>

static inline int32_t load_pair(const int16_t *x)
{
    int32_t v;
    memcpy(&v, x, sizeof v);
    return v;
}

__attribute__((target("avx2,fma"))) static inline void s16_store_avx2(__m256i lo, __m256i hi, __m256 s0, __m256 s1,
                                                                       int16_t *c, size_t nc)
{
    const __m256 vmin = _mm256_set1_ps(-32768.0f), vmax = _mm256_set1_ps(32767.0f);
    __m256 f0 = _mm256_mul_ps(_mm256_cvtepi32_ps(lo), s0), f1 = _mm256_mul_ps(_mm256_cvtepi32_ps(hi), s1);
    f0 = _mm256_min_ps(_mm256_max_ps(f0, vmin), vmax);
    f1 = _mm256_min_ps(_mm256_max_ps(f1, vmin), vmax);
    /* cvtps2dq rounds half to even under the default MXCSR; packs interleaves the 128-bit lanes, permute undoes it */
    __m256i q = _mm256_packs_epi32(_mm256_cvtps_epi32(f0), _mm256_cvtps_epi32(f1));
    q = _mm256_permute4x64_epi64(q, 0xD8);
    if (nc == QNN_S16_NR) {
        _mm256_storeu_si256((__m256i *)c, q);
    } else {
        int16_t t[QNN_S16_NR];
        _mm256_storeu_si256((__m256i *)t, q);
        memcpy(c, t, nc * sizeof *c);
    }
}

__attribute__((target("avx2,fma"))) void par_qnn_s16_gemm_4x16c2__avx2(size_t mr, size_t nc, size_t kc,
                                                                        const int16_t *a, size_t a_stride,
                                                                        const void *w, int16_t *c, size_t cs)
{
    const int32_t *b = w;
    const float *s = (const float *)(b + QNN_S16_NR);
    const __m256i *pw = (const __m256i *)(s + QNN_S16_NR);
    const int16_t *a0 = a, *a1 = mr > 1 ? a0 + a_stride : a0, *a2 = mr > 2 ? a1 + a_stride : a1,
                  *a3 = mr > 3 ? a2 + a_stride : a2;
    __m256i b0 = _mm256_loadu_si256((const __m256i *)b), b1 = _mm256_loadu_si256((const __m256i *)(b + 8));
    __m256i c00 = b0, c01 = b1, c10 = b0, c11 = b1, c20 = b0, c21 = b1, c30 = b0, c31 = b1;
    for (size_t kk = 0; kk < kc; kk += 2) {
        const __m256i w0 = _mm256_loadu_si256(pw), w1 = _mm256_loadu_si256(pw + 1);
        pw += 2;
        const __m256i x0 = _mm256_set1_epi32(load_pair(a0 + kk)), x1 = _mm256_set1_epi32(load_pair(a1 + kk));
        const __m256i x2 = _mm256_set1_epi32(load_pair(a2 + kk)), x3 = _mm256_set1_epi32(load_pair(a3 + kk));
        c00 = _mm256_add_epi32(c00, _mm256_madd_epi16(x0, w0));
        c01 = _mm256_add_epi32(c01, _mm256_madd_epi16(x0, w1));
        c10 = _mm256_add_epi32(c10, _mm256_madd_epi16(x1, w0));
        c11 = _mm256_add_epi32(c11, _mm256_madd_epi16(x1, w1));
        c20 = _mm256_add_epi32(c20, _mm256_madd_epi16(x2, w0));
        c21 = _mm256_add_epi32(c21, _mm256_madd_epi16(x2, w1));
        c30 = _mm256_add_epi32(c30, _mm256_madd_epi16(x3, w0));
        c31 = _mm256_add_epi32(c31, _mm256_madd_epi16(x3, w1));
    }
    const __m256 s0 = _mm256_loadu_ps(s), s1 = _mm256_loadu_ps(s + 8);
    s16_store_avx2(c00, c01, s0, s1, c, nc);
    if (mr > 1) s16_store_avx2(c10, c11, s0, s1, c + cs, nc);
    if (mr > 2) s16_store_avx2(c20, c21, s0, s1, c + 2 * cs, nc);
    if (mr > 3) s16_store_avx2(c30, c31, s0, s1, c + 3 * cs, nc);
}

#define S16_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

S16_VNNI static inline void s16_store_vnni(__m512i acc, __m512 s, int16_t *c, size_t nc)
{
    __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), s);
    f = _mm512_min_ps(_mm512_max_ps(f, _mm512_set1_ps(-32768.0f)), _mm512_set1_ps(32767.0f));
    /* vcvtps2dq (round to nearest even, the default), then vpmovsdw: 16 int32 to 16 int16 in order */
    __m256i q = _mm512_cvtsepi32_epi16(_mm512_cvtps_epi32(f));
    const __mmask16 m = (__mmask16)((1u << nc) - 1);
    _mm256_mask_storeu_epi16(c, m, q);
}

S16_VNNI void par_qnn_s16_gemm_4x16c2__avx512vnni(size_t mr, size_t nc, size_t kc, const int16_t *a,
                                                  size_t a_stride, const void *w, int16_t *c, size_t cs)
{
    const int32_t *b = w;
    const float *s = (const float *)(b + QNN_S16_NR);
    const __m512i *pw = (const __m512i *)(s + QNN_S16_NR);
    const int16_t *a0 = a, *a1 = mr > 1 ? a0 + a_stride : a0, *a2 = mr > 2 ? a1 + a_stride : a1,
                  *a3 = mr > 3 ? a2 + a_stride : a2;
    __m512i c0 = _mm512_loadu_si512(b), c1 = c0, c2 = c0, c3 = c0;
    for (size_t kk = 0; kk < kc; kk += 2) {
        const __m512i wv = _mm512_loadu_si512(pw++);
        c0 = _mm512_dpwssd_epi32(c0, _mm512_set1_epi32(load_pair(a0 + kk)), wv);
        c1 = _mm512_dpwssd_epi32(c1, _mm512_set1_epi32(load_pair(a1 + kk)), wv);
        c2 = _mm512_dpwssd_epi32(c2, _mm512_set1_epi32(load_pair(a2 + kk)), wv);
        c3 = _mm512_dpwssd_epi32(c3, _mm512_set1_epi32(load_pair(a3 + kk)), wv);
    }
    const __m512 sv = _mm512_loadu_ps(s);
    s16_store_vnni(c0, sv, c, nc);
    if (mr > 1) s16_store_vnni(c1, sv, c + cs, nc);
    if (mr > 2) s16_store_vnni(c2, sv, c + 2 * cs, nc);
    if (mr > 3) s16_store_vnni(c3, sv, c + 3 * cs, nc);
}
#endif
