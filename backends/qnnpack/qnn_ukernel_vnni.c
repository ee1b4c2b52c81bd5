/*
 * qnn_ukernel_vnni.c - AVX-512 VNNI int8 micro-kernels: igemm 8x32c4 (vpdpbusd), depthwise c16 (vpdpwssd), and the
 * vpdpbusd peak measurement. Built with clang and -mavx512f -mavx512bw -mavx512vl -mavx512vnni (GCC 12 schedules
 * these accumulator loops about 2.3x worse); it must not be called on a machine without VNNI.
 *
 * igemm: 16 zmm accumulators (8 rows x 2 x 16 columns). Per 4 k's: two 64-byte weight loads (32 columns x 4 int8),
 * per row one broadcast of the row's 4 uint8 (vpbroadcastd from memory) and two vpdpbusd, each 64 u8 x s8 products
 * summed by fours into int32 exactly (no saturation: vpdpbusd, not vpdpbusds). 16 vpdpbusd against 10 loads keeps
 * the two FMA ports busy. Requantization as qnn_kernels.h, bit-identical to the scalar kernel; masked byte stores
 * for the column remainder.
 */
#include <immintrin.h>
#include <string.h>
#include <time.h>

#include "qnn_kernels.h"

static inline __m128i requant16(__m512i acc, const float *scale, const qnn_rq *rq)
{
    __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), _mm512_loadu_ps(scale));
    if (rq->two) {
        f = _mm512_min_ps(_mm512_max_ps(f, _mm512_set1_ps(rq->vmin1)), _mm512_set1_ps(rq->vmax1));
        f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtps_epi32(f)), _mm512_set1_ps(rq->r2));
    }
    f = _mm512_min_ps(_mm512_max_ps(f, _mm512_set1_ps(rq->vmin)), _mm512_set1_ps(rq->vmax));
    __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(f), _mm512_set1_epi32(rq->zp));
    return _mm512_cvtepi32_epi8(q);
}

static inline __mmask16 cmask(size_t n)
{
    return n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1u);
}

void par_qnn_igemm_8x32c4__avx512vnni(size_t mr, size_t nc, size_t kc, size_t ks, const uint8_t *const *a,
                                      size_t a_off, const uint8_t *zero, const void *w, const int32_t *rowcorr,
                                      uint8_t *c, size_t cs, const float *scale, const qnn_rq *rq)
{
    enum { MR = 8, NR = 32 };
    const int32_t *bias = w;
    const __m512i b0 = _mm512_loadu_si512(bias), b1 = _mm512_loadu_si512(bias + 16);
    /* Named accumulators and row pointers: arrays indexed in loops make clang keep them in memory. */
#define QNN_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define QNN_INIT(i)                                                                                                 \
    __m512i r##i = _mm512_set1_epi32(rowcorr && (i) < mr ? rowcorr[i] : 0);                                         \
    __m512i p##i = _mm512_add_epi32(b0, r##i), q##i = _mm512_add_epi32(b1, r##i);
    QNN_ROWS(QNN_INIT)
    const int8_t *wp = (const int8_t *)(bias + NR);
    for (size_t t = 0; t < ks; t++, a += MR) {
#define QNN_PTR(i)                                                                                                  \
    const uint8_t *a##i = a[i];                                                                                     \
    if (a##i != zero) a##i += a_off;
        QNN_ROWS(QNN_PTR)
        for (size_t k = 0; k < kc; k += 4, wp += NR * 4) {
            const __m512i w0 = _mm512_loadu_si512(wp), w1 = _mm512_loadu_si512(wp + 64);
#define QNN_DOT(i)                                                                                                  \
    {                                                                                                               \
        int32_t v;                                                                                                  \
        memcpy(&v, a##i + k, 4);                                                                                    \
        const __m512i x = _mm512_set1_epi32(v);                                                                     \
        p##i = _mm512_dpbusd_epi32(p##i, x, w0);                                                                    \
        q##i = _mm512_dpbusd_epi32(q##i, x, w1);                                                                    \
    }
            QNN_ROWS(QNN_DOT)
        }
    }
    /* Epilogue, two rows at a time (as XNNPACK's avx512 fp32 kernels): scale, clamp above in float (the bound is
     * qmax - zp, an integer), convert (round half to even; a value below INT32_MIN converts to INT32_MIN, which
     * saturates the right way), pack to int16 with saturation, add the zero point with saturation, pack to uint8
     * with saturation (negatives -> 0), clamp below in uint8. Rounding commutes with clamping to integer bounds,
     * so this is clamp(zp + rne(acc * scale), qmin, qmax) of qnn_kernels.h exactly. packs/packus interleave 128-bit
     * lanes: dword 4L + d of the result holds row r = d / 2, columns 16 (d % 2) + 4L .. + 3; vpermd restores
     * [row i: 0..31][row j: 0..31]. */
    const __m512 s0 = _mm512_loadu_ps(scale), s1 = _mm512_loadu_ps(scale + 16), vmax = _mm512_set1_ps(rq->vmax);
    const __m512i vzp = _mm512_set1_epi16((short)rq->zp);
    const __m512i vlo = _mm512_set1_epi8((char)(uint8_t)((int32_t)rq->vmin + rq->zp));
    const __m512i perm = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
    const __mmask32 mk = nc >= 32 ? (__mmask32)0xffffffffu : (__mmask32)((1u << nc) - 1u);
    const __m512 vmin1 = _mm512_set1_ps(rq->vmin1), vmax1 = _mm512_set1_ps(rq->vmax1), vr2 = _mm512_set1_ps(rq->r2);
    const int two = rq->two;
    /* the first stage of a two-stage requantization (qnn_kernels.h): clamp, round, times r2 */
#define QNN_S1(f)                                                                                                   \
    (two ? _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(f, vmin1), vmax1))), vr2) \
         : (f))
#define QNN_I16(i)                                                                                                  \
    _mm512_adds_epi16(                                                                                              \
        _mm512_packs_epi32(                                                                                         \
            _mm512_cvtps_epi32(_mm512_min_ps(QNN_S1(_mm512_mul_ps(_mm512_cvtepi32_ps(p##i), s0)), vmax)),          \
            _mm512_cvtps_epi32(_mm512_min_ps(QNN_S1(_mm512_mul_ps(_mm512_cvtepi32_ps(q##i), s1)), vmax))),         \
        vzp)
#define QNN_PAIR(i, j)                                                                                              \
    if ((i) < mr) {                                                                                                 \
        __m512i b = _mm512_permutexvar_epi32(perm, _mm512_packus_epi16(QNN_I16(i), QNN_I16(j)));                   \
        b = _mm512_max_epu8(b, vlo);                                                                                \
        _mm256_mask_storeu_epi8(c + (i) * cs, mk, _mm512_castsi512_si256(b));                                       \
        if ((j) < mr) _mm256_mask_storeu_epi8(c + (j) * cs, mk, _mm512_extracti64x4_epi64(b, 1));                   \
    }
    QNN_PAIR(0, 1)
    QNN_PAIR(2, 3)
    QNN_PAIR(4, 5)
    QNN_PAIR(6, 7)
#undef QNN_S1
#undef QNN_I16
#undef QNN_PAIR
#undef QNN_ROWS
#undef QNN_INIT
#undef QNN_PTR
#undef QNN_DOT
}

/* Depthwise: x zero-extended to int32 lanes (high half 0), weights (uint16_t)w in int32 lanes: vpdpwssd's
 * lo * lo + hi * hi is exactly x * w. 64 channels at a time in four accumulators, then 16 with even and odd taps in
 * two: the tap loop is a chain of dependent vpdpwssd, so independent chains hide its latency. */
void par_qnn_dw_c16__avx512vnni(size_t npix, size_t channels, size_t ks, const uint8_t *const *a, const void *w,
                                uint8_t *c, size_t cs, const float *scale, const qnn_rq *rq)
{
    size_t cp = (channels + 15) & ~(size_t)15;
    const int32_t *bias = w, *wt = bias + cp;
#define QNN_X(t, off) _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(a[t] + ch + (off))))
#define QNN_W(t, off) _mm512_loadu_si512(wt + (t) * cp + ch + (off))
    for (size_t p = 0; p < npix; p++, a += ks, c += cs) {
        size_t ch = 0;
        for (; ch + 64 <= channels; ch += 64) {
            __m512i a0 = _mm512_loadu_si512(bias + ch), a1 = _mm512_loadu_si512(bias + ch + 16);
            __m512i a2 = _mm512_loadu_si512(bias + ch + 32), a3 = _mm512_loadu_si512(bias + ch + 48);
            for (size_t t = 0; t < ks; t++) {
                a0 = _mm512_dpwssd_epi32(a0, QNN_X(t, 0), QNN_W(t, 0));
                a1 = _mm512_dpwssd_epi32(a1, QNN_X(t, 16), QNN_W(t, 16));
                a2 = _mm512_dpwssd_epi32(a2, QNN_X(t, 32), QNN_W(t, 32));
                a3 = _mm512_dpwssd_epi32(a3, QNN_X(t, 48), QNN_W(t, 48));
            }
            _mm_storeu_si128((__m128i *)(c + ch), requant16(a0, scale + ch, rq));
            _mm_storeu_si128((__m128i *)(c + ch + 16), requant16(a1, scale + ch + 16, rq));
            _mm_storeu_si128((__m128i *)(c + ch + 32), requant16(a2, scale + ch + 32, rq));
            _mm_storeu_si128((__m128i *)(c + ch + 48), requant16(a3, scale + ch + 48, rq));
        }
        for (; ch < channels; ch += 16) {
            __m512i a0 = _mm512_loadu_si512(bias + ch), a1 = _mm512_setzero_si512();
            size_t t = 0;
            for (; t + 1 < ks; t += 2) {
                a0 = _mm512_dpwssd_epi32(a0, QNN_X(t, 0), QNN_W(t, 0));
                a1 = _mm512_dpwssd_epi32(a1, QNN_X(t + 1, 0), QNN_W(t + 1, 0));
            }
            if (t < ks) a0 = _mm512_dpwssd_epi32(a0, QNN_X(t, 0), QNN_W(t, 0));
            _mm_mask_storeu_epi8(c + ch, cmask(channels - ch), requant16(_mm512_add_epi32(a0, a1), scale + ch, rq));
        }
    }
#undef QNN_X
#undef QNN_W
}

void par_qnn_vadd__avx512(size_t n, const uint8_t *a, const uint8_t *b, uint8_t *y, const qnn_add_params *p)
{
    qnn_vadd_body(n, a, b, y, p);
}

void par_qnn_quantize__avx512(size_t n, const float *x, uint8_t *y, double inv_scale, double zp)
{
    qnn_quantize_body(n, x, y, inv_scale, zp);
}

/* linear_8da4w (qnn_qb4w_fn), block % 8 == 0: per group of 8 k's one 64-byte load holds 16 columns x 8 nibbles;
 * shifted left by 4 and masked (low nibbles) or masked (high nibbles), each byte is 16 w as an int8 (the sign comes
 * for free: XNNPACK's qc4w trick), so two vpdpbusd per row (u8 activations, k's 0-3 and 4-7 broadcast) sum
 * 16 sum a w exactly; the block's sum is that shifted right by 4. Then the block epilogue of qnn_kernels.h in
 * float (multiply, add: no FMA, the scalar kernel's bits). */
void par_qnn_qb4w_4x16c8__avx512vnni(size_t mr, size_t nc, size_t kc, size_t block, const uint8_t *a,
                                     size_t a_stride, const int32_t *zp, const float *sx, const void *w, float *c,
                                     size_t cs)
{
    qnn_qb4w_view pv;
    const size_t nb = qnn_qb4w_parts(w, kc, block, &pv);
    const uint8_t *wp = pv.w4;
    const int32_t *wsum = pv.wsum;
    const float *scale = pv.scale, *bias = pv.bias;
    const uint8_t *a0 = a, *a1 = mr > 1 ? a + a_stride : a, *a2 = mr > 2 ? a + 2 * a_stride : a,
                  *a3 = mr > 3 ? a + 3 * a_stride : a;
    const __m512i m4 = _mm512_set1_epi8((char)0xF0);
    __m512 f0 = _mm512_setzero_ps(), f1 = f0, f2 = f0, f3 = f0;
    for (size_t b = 0; b < nb; b++) {
        /* two accumulators a row (low and high nibbles): 8 independent vpdpbusd chains, not 4 of two each, so
         * the instruction's latency (5 cycles) no longer bounds a group of 8 k's */
        __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0, h0 = c0, h1 = c0, h2 = c0, h3 = c0;
        for (size_t k = b * block; k < (b + 1) * block; k += 8, wp += 64) {
            const __m512i v = _mm512_loadu_si512(wp);
            const __m512i lo = _mm512_and_si512(_mm512_slli_epi16(v, 4), m4), hi = _mm512_and_si512(v, m4);
#define QNN_Q4ROW(i)                                                                                                \
    {                                                                                                               \
        int32_t x, y;                                                                                               \
        memcpy(&x, a##i + k, 4);                                                                                    \
        memcpy(&y, a##i + k + 4, 4);                                                                                \
        c##i = _mm512_dpbusd_epi32(c##i, _mm512_set1_epi32(x), lo);                                                 \
        h##i = _mm512_dpbusd_epi32(h##i, _mm512_set1_epi32(y), hi);                                                 \
    }
            QNN_Q4ROW(0) QNN_Q4ROW(1) QNN_Q4ROW(2) QNN_Q4ROW(3)
#undef QNN_Q4ROW
        }
        const __m512i ws = _mm512_loadu_si512(wsum + b * 16);
        const __m512 s = _mm512_loadu_ps(scale + b * 16);
#define QNN_Q4BLK(i)                                                                                                \
    {                                                                                                               \
        const __m512i acc = _mm512_sub_epi32(_mm512_srai_epi32(_mm512_add_epi32(c##i, h##i), 4),                    \
                                             _mm512_mullo_epi32(_mm512_set1_epi32(zp[(i) < mr ? (i) : 0]), ws));    \
        f##i = _mm512_add_ps(f##i, _mm512_mul_ps(_mm512_cvtepi32_ps(acc), s));                                      \
    }
        QNN_Q4BLK(0) QNN_Q4BLK(1) QNN_Q4BLK(2) QNN_Q4BLK(3)
#undef QNN_Q4BLK
    }
    const __m512 vb = _mm512_loadu_ps(bias);
    const __mmask16 m = cmask(nc);
    const __m512 fs[4] = {f0, f1, f2, f3};
    for (size_t i = 0; i < mr; i++)
        _mm512_mask_storeu_ps(c + i * cs, m, _mm512_add_ps(_mm512_mul_ps(fs[i], _mm512_set1_ps(sx[i])), vb));
}

double par_qnn_vnni_peak(long iters)
{
    enum { NA = 24 };
    __m512i acc[NA];
    for (int i = 0; i < NA; i++) acc[i] = _mm512_set1_epi32(i);
    const __m512i x = _mm512_set1_epi32(0x01010101), y = _mm512_set1_epi32(0x01ff0102);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long it = 0; it < iters; it++) {
        for (int i = 0; i < NA; i++) acc[i] = _mm512_dpbusd_epi32(acc[i], x, y);
        __asm__ volatile("" : "+v"(acc[0]), "+v"(acc[1]), "+v"(acc[2]), "+v"(acc[3]));
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    __m512i s = acc[0];
    for (int i = 1; i < NA; i++) s = _mm512_add_epi32(s, acc[i]);
    volatile int32_t sink = _mm512_reduce_add_epi32(s);
    (void)sink;
    double sec = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    return (double)iters * NA * 64 * 2 / sec * 1e-9;
}
