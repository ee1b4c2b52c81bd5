/*
 * qnn_ukernel_avx2.c - AVX2 int8 micro-kernels: igemm 4x16c2, its panel form (pack_a16 + gemm16 4x16c2, what
 * qnn_conv.c runs convolutions with) and depthwise (9-tap and general), all on vpmaddwd, and the AVX2 int8 peak loop
 * they are measured against.
 *
 * Why vpmaddwd. AVX2's only 8-bit dot product, vpmaddubsw (u8 x s8), sums pairs into int16 with saturation, and a
 * pair of uint8 activations and int8 weights reaches 2 * 255 * 128 = 65280 > 32767: it saturates in general (it is
 * exact only when activations stay <= 127 or weights within +-64, which a calibrated graph does not promise). So
 * both operands are widened to 16 bits and vpmaddwd multiplies 16 pairs and sums them in pairs into int32, exactly
 * (|2 * 255 * 128| fits easily); a vpaddd adds that into the accumulator. One vpmaddwd + vpaddd is 16 multiply-adds
 * of 8-bit values, the ceiling par_qnn_avx2_peak measures.
 *
 * igemm 4x16c2. The weights are packed widened (qnn_kernels.h, QNN_WFMT_C4_I16): per pair of k's, 16 int32 lanes
 * holding the int16 pair (w_k, w_k+1) of each column. The activations are widened once per call and tap: each row's
 * kc bytes are zero-extended (vpmovzxbw, 16 at a time) into an int16 scratch on the stack, so the inner loop is, per
 * pair of k's, 2 weight loads, and per row one vpbroadcastd from the scratch (a load, no ALU work) and 2 vpmaddwd +
 * 2 vpaddd: nothing but the peak's instructions (written in assembly, see QNN_PAIR_ASM). 8 ymm accumulators (4 rows
 * x 16 columns), 2 weight registers, a broadcast and a product fit AVX2's 16. One row (mr == 1) and 8 columns
 * (nc <= 8) have their own, lighter paths. (Broadcasting the 4 bytes of a row and splitting them into 16-bit lanes
 * with an AND and a shift costs 2 ALU operations per 4 vpmaddwd, a fifth of the ALU throughput; widening in the
 * scratch costs 1 per 16 k's.) The epilogue requantizes two rows at a time: scale and clamp above in float,
 * cvtps2dq (round half to even), vpackssdw, the zero point in int16, vpackuswb, one vpermd to undo the 128-bit lane
 * interleave, the clamp below on the bytes; the same float products as the scalar kernel, so the same bytes (rq8).
 *
 * Panel form. The igemm widens a tile's rows once per call, that is once per column block, and pays a call's setup
 * per tap; on MobileNet's short reductions (K = 16-32, 3-channel 3x3) that is a tenth to a fifth of the layer. So
 * convolutions run as: pack_a16 gathers a row tile's taps back to back and widens them once, then gemm16 runs every
 * column block on that panel (the igemm's instructions, the four row addresses in registers). Measured on the
 * quantized MobileNetV2, 1 thread: the GEMM layers 3.69 -> 3.47 ms.
 *
 * Depthwise. Weights packed per pair of taps (par_qnn_dw_put): int32 lanes holding (w_t, w_t+1) of a channel, the
 * last of an odd count paired with 0. The input bytes of the two taps are interleaved (vpunpcklbw / vpunpckhbw) and
 * zero-extended, so one vpmaddwd does 2 taps x 8 channels: 16 multiply-adds, where the channel-per-lane form does 8.
 * 32 channels at a time in 4 accumulators, all shuffles in-lane, so the channels come out of the interleave in the
 * order of par_qnn_dw_slot and the packs restore theirs; a 3x3 kernel has its own copy with the tap count a
 * constant. (Zero-extending 16 bytes of a 128-bit register, vpmovzxbw, crosses lanes: with it the kernel was 10%
 * slower on the quantized MobileNetV2's depthwise layers.)
 *
 * Built with -mavx2 -mfma only; it must not be called on a machine without AVX2 (par_qnn_ukernels checks).
 */
#include <immintrin.h>
#include <string.h>
#include <time.h>

#include "qnn_kernels.h"

/* One vector of 8 int32 accumulators -> 8 requantized int32 (zero point not yet added), clamped above to vmax in
 * float; the clamp below is done on the bytes (pack32). A value below INT32_MIN converts to INT32_MIN, which the
 * saturating packs keep below any bound, and rounding commutes with clamping to the integer bounds, so this is
 * clamp(zp + rne(acc * scale), qmin, qmax) of qnn_kernels.h exactly (the VNNI epilogue does the same). */
static inline __m256i rq8(__m256i acc, __m256 scale, const qnn_rq *rq)
{
    __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), scale);
    if (rq->two) /* rne in the float domain (vroundps), then the second stage; no first-stage clamp: qnn_rq */
        f = _mm256_mul_ps(_mm256_round_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), _mm256_set1_ps(rq->r2));
    /* bounded: no overflow, the clamp above is pack32's on the bytes (it is there either way) */
    return _mm256_cvtps_epi32(rq->bounded ? f : _mm256_min_ps(f, _mm256_set1_ps(rq->vmax)));
}

/* The byte clamp of pack32: vlo = vmin + zp below, vhi = vmax + zp above (both in [0, 255]). */
typedef struct bclamp {
    __m256i vzp, vlo, vhi;
} bclamp;

static inline bclamp bclamp_of(const qnn_rq *rq)
{
    return (bclamp){_mm256_set1_epi16((short)rq->zp), _mm256_set1_epi8((char)(uint8_t)((int32_t)rq->vmin + rq->zp)),
                    _mm256_set1_epi8((char)(uint8_t)((int32_t)rq->vmax + rq->zp))};
}

/* Four requantized vectors -> 32 bytes in their order: vpackssdw (saturating), the zero point added in int16 with
 * saturation, vpackuswb (negatives -> 0), the clamps on the bytes. The packs interleave the 128-bit lanes (dword
 * 4L + d holds the bytes of source d, lane L); vpermd puts them back. */
static inline __m256i pack32(__m256i i0, __m256i i1, __m256i i2, __m256i i3, bclamp b)
{
    __m256i p01 = _mm256_adds_epi16(_mm256_packs_epi32(i0, i1), b.vzp);
    __m256i p23 = _mm256_adds_epi16(_mm256_packs_epi32(i2, i3), b.vzp);
    __m256i y = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(p01, p23), _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    return _mm256_min_epu8(_mm256_max_epu8(y, b.vlo), b.vhi);
}

/* n <= 16 bytes of v's low half to dst. */
static inline void store_lo(uint8_t *dst, __m256i v, size_t n)
{
    __m128i b = _mm256_castsi256_si128(v);
    if (n >= 16) {
        _mm_storeu_si128((__m128i *)dst, b);
        return;
    }
    /* 8, 4, 2, 1 bytes from the register, no round trip through memory (a memcpy call spills every register) */
    if (n & 8) {
        _mm_storel_epi64((__m128i *)dst, b);
        dst += 8;
        b = _mm_unpackhi_epi64(b, b);
    }
    uint64_t q = (uint64_t)_mm_cvtsi128_si64(b);
    if (n & 4) {
        uint32_t d = (uint32_t)q;
        memcpy(dst, &d, 4);
        dst += 4;
        q >>= 32;
    }
    if (n & 2) {
        uint16_t h = (uint16_t)q;
        memcpy(dst, &h, 2);
        dst += 2;
        q >>= 16;
    }
    if (n & 1) *dst = (uint8_t)q;
}

/* The 4x16 kernels' accumulators c<row><half> (16 columns = 2 vectors of 8): bias + the row's correction. */
#define QNN_INIT_4X16()                                                                                             \
    const __m256i b0 = _mm256_loadu_si256((const __m256i *)bias);                                                  \
    const __m256i b1 = _mm256_loadu_si256((const __m256i *)(bias + 8));                                            \
    __m256i c00 = b0, c01 = b1, c10 = b0, c11 = b1, c20 = b0, c21 = b1, c30 = b0, c31 = b1;                         \
    if (rowcorr) {                                                                                                  \
        const __m256i r0 = _mm256_set1_epi32(rowcorr[0]);                                                           \
        const __m256i r1 = _mm256_set1_epi32(mr > 1 ? rowcorr[1] : 0);                                              \
        const __m256i r2 = _mm256_set1_epi32(mr > 2 ? rowcorr[2] : 0);                                              \
        const __m256i r3 = _mm256_set1_epi32(mr > 3 ? rowcorr[3] : 0);                                              \
        c00 = _mm256_add_epi32(b0, r0), c01 = _mm256_add_epi32(b1, r0);                                             \
        c10 = _mm256_add_epi32(b0, r1), c11 = _mm256_add_epi32(b1, r1);                                             \
        c20 = _mm256_add_epi32(b0, r2), c21 = _mm256_add_epi32(b1, r2);                                             \
        c30 = _mm256_add_epi32(b0, r3), c31 = _mm256_add_epi32(b1, r3);                                             \
    }

/* Requantize and store mr rows x nc columns of them: rows 0 and 1 in the low and high 16 bytes of one vector, rows
 * 2 and 3 in another. */
#define QNN_STORE_4X16()                                                                                            \
    do {                                                                                                            \
        const __m256 s0 = _mm256_loadu_ps(scale), s1 = _mm256_loadu_ps(scale + 8);                                  \
        const bclamp bc = bclamp_of(rq);                                                                            \
        __m256i y01 = pack32(rq8(c00, s0, rq), rq8(c01, s1, rq), rq8(c10, s0, rq), rq8(c11, s1, rq), bc);           \
        store_lo(c, y01, nc);                                                                                       \
        if (mr > 1) store_lo(c + cs, _mm256_permute2x128_si256(y01, y01, 1), nc);                                   \
        if (mr > 2) {                                                                                               \
            __m256i y23 = pack32(rq8(c20, s0, rq), rq8(c21, s1, rq), rq8(c30, s0, rq), rq8(c31, s1, rq), bc);       \
            store_lo(c + 2 * cs, y23, nc);                                                                          \
            if (mr > 3) store_lo(c + 3 * cs, _mm256_permute2x128_si256(y23, y23, 1), nc);                           \
        }                                                                                                           \
    } while (0)

/* ---------------------------------------------------------------------------------------------------------------
 * igemm 4x16c2
 * ------------------------------------------------------------------------------------------------------------- */
enum { KCHUNK = 512 }; /* k's widened at a time: 4 rows x 512 x 2 bytes of stack (the assembly below knows it) */

/* Zero-extend n bytes (n = 4, 8 or 12) of src into n int16 at dst. */
static inline void widen_tail(int16_t *dst, const uint8_t *src, size_t n)
{
    size_t k = 0;
    if (n >= 8) {
        _mm_storeu_si128((__m128i *)dst, _mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)src)));
        k = 8;
    }
    if (k < n) {
        int32_t v;
        memcpy(&v, src + k, 4);
        _mm_storel_epi64((__m128i *)(dst + k), _mm_cvtepu8_epi16(_mm_cvtsi32_si128(v)));
    }
}

#define QNN_WIDEN16(i, k)                                                                                           \
    _mm256_store_si256((__m256i *)(xs[i] + (k) / 2),                                                                \
                       _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(ap[i] + (k)))))

/* One pair of k's for the 4 rows and 16 columns, in assembly: compilers given unrolled intrinsics hoist the
 * vpmaddwd away from their vpaddd, reassociate the sums and spill accumulators (GCC 12 runs it at 0.6 of the peak
 * loop). Here it is the peak loop's instruction mix exactly: per pair 2 weight loads, then per row a vpbroadcastd
 * from the widened row (rows KCHUNK / 2 * 4 = 1024 bytes apart) and 2 vpmaddwd + 2 vpaddd. wo: the pair's weight
 * offset (64 bytes a pair), xo: its x offset (4 bytes a pair). */
#define QNN_S(v) #v
#define QNN_ROW_ASM(xo, i)                                                                                          \
    "vpbroadcastd " QNN_S(xo) "(%[x]), %%ymm14\n\t"                                                                \
    "vpmaddwd %%ymm12, %%ymm14, %%ymm15\n\t"                                                                        \
    "vpaddd %%ymm15, %[c" #i "0], %[c" #i "0]\n\t"                                                                  \
    "vpmaddwd %%ymm13, %%ymm14, %%ymm14\n\t"                                                                        \
    "vpaddd %%ymm14, %[c" #i "1], %[c" #i "1]\n\t"
/* The same with only the first 8 columns (nc <= 8: a 24-channel layer's second block): half the arithmetic. */
#define QNN_ROW8_ASM(xo, i)                                                                                         \
    "vpbroadcastd " QNN_S(xo) "(%[x]), %%ymm14\n\t"                                                                \
    "vpmaddwd %%ymm12, %%ymm14, %%ymm15\n\t"                                                                        \
    "vpaddd %%ymm15, %[c" #i "0], %[c" #i "0]\n\t"
#define QNN_PAIR8_ASM(wo, x0, x1, x2, x3)                                                                          \
    "vmovdqu " QNN_S(wo) "(%[w]), %%ymm12\n\t" QNN_ROW8_ASM(x0, 0) QNN_ROW8_ASM(x1, 1) QNN_ROW8_ASM(x2, 2)         \
        QNN_ROW8_ASM(x3, 3)
#define QNN_PAIR_ASM(wo, wo2, x0, x1, x2, x3)                                                                      \
    "vmovdqu " QNN_S(wo) "(%[w]), %%ymm12\n\t"                                                                     \
    "vmovdqu " QNN_S(wo2) "(%[w]), %%ymm13\n\t" QNN_ROW_ASM(x0, 0) QNN_ROW_ASM(x1, 1) QNN_ROW_ASM(x2, 2)           \
        QNN_ROW_ASM(x3, 3)

/* One row (mr == 1: a linear layer on one vector, the last tile of an odd M): the 4-row kernel would do 4 times the
 * arithmetic for it. The same widening and pairs, in C: two pairs at a time into 4 accumulators. */
static void igemm_1x16(size_t nc, size_t kc, size_t ks, const uint8_t *const *a, size_t a_off, const uint8_t *zero,
                       const int32_t *bias, const int32_t *rowcorr, uint8_t *c, const float *scale, const qnn_rq *rq)
{
    enum { MR = 4, NR = 16 };
    const __m256i r = _mm256_set1_epi32(rowcorr ? rowcorr[0] : 0);
    __m256i a0 = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)bias), r);
    __m256i a1 = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(bias + 8)), r);
    __m256i a2 = _mm256_setzero_si256(), a3 = _mm256_setzero_si256();
    const int16_t *wp = (const int16_t *)(bias + NR);
    _Alignas(32) int32_t xs[KCHUNK / 2];
    for (size_t t = 0; t < ks; t++) {
        const uint8_t *ap = a[t * MR];
        if (ap != zero) ap += a_off;
        for (size_t k0 = 0; k0 < kc; k0 += KCHUNK, ap += KCHUNK) {
            const size_t kn = kc - k0 < KCHUNK ? kc - k0 : KCHUNK, k16 = kn & ~(size_t)15, np = kn / 2;
            for (size_t k = 0; k < k16; k += 16)
                _mm256_store_si256((__m256i *)(xs + k / 2),
                                   _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(ap + k))));
            if (kn > k16) widen_tail((int16_t *)(xs + k16 / 2), ap + k16, kn - k16);
            size_t kp = 0;
            for (; kp + 2 <= np; kp += 2, wp += NR * 4) {
                const __m256i x0 = _mm256_set1_epi32(xs[kp]), x1 = _mm256_set1_epi32(xs[kp + 1]);
                a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(x0, _mm256_loadu_si256((const __m256i *)wp)));
                a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(x0, _mm256_loadu_si256((const __m256i *)(wp + 16))));
                a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(x1, _mm256_loadu_si256((const __m256i *)(wp + 32))));
                a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(x1, _mm256_loadu_si256((const __m256i *)(wp + 48))));
            }
            if (kp < np) {
                const __m256i x0 = _mm256_set1_epi32(xs[kp]);
                a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(x0, _mm256_loadu_si256((const __m256i *)wp)));
                a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(x0, _mm256_loadu_si256((const __m256i *)(wp + 16))));
                wp += NR * 2;
            }
        }
    }
    const __m256i i0 = rq8(_mm256_add_epi32(a0, a2), _mm256_loadu_ps(scale), rq);
    const __m256i i1 = rq8(_mm256_add_epi32(a1, a3), _mm256_loadu_ps(scale + 8), rq);
    store_lo(c, pack32(i0, i1, i0, i1, bclamp_of(rq)), nc);
}

void par_qnn_igemm_4x16c4__avx2(size_t mr, size_t nc, size_t kc, size_t ks, const uint8_t *const *a, size_t a_off,
                                const uint8_t *zero, const void *w, const int32_t *rowcorr, uint8_t *c, size_t cs,
                                const float *scale, const qnn_rq *rq)
{
    enum { MR = 4, NR = 16 };
    const int32_t *bias = w;
    if (mr == 1) {
        igemm_1x16(nc, kc, ks, a, a_off, zero, bias, rowcorr, c, scale, rq);
        return;
    }
    QNN_INIT_4X16();
    const int16_t *wp = (const int16_t *)(bias + NR);
    /* The rows' pairs (x_k, x_k+1) as int16, read as one int32. Widening runs one block of 16 k's ahead of the
     * vpmaddwd that read it, so its stores overlap the arithmetic instead of preceding it. */
    _Alignas(32) int32_t xs[MR][KCHUNK / 2];
    for (size_t t = 0; t < ks; t++) {
        const uint8_t *ap[MR];
        for (size_t i = 0; i < MR; i++) {
            ap[i] = a[t * MR + i];
            if (ap[i] != zero) ap[i] += a_off;
        }
        for (size_t k0 = 0; k0 < kc; k0 += KCHUNK, ap[0] += KCHUNK, ap[1] += KCHUNK, ap[2] += KCHUNK, ap[3] += KCHUNK) {
            const size_t kn = kc - k0 < KCHUNK ? kc - k0 : KCHUNK, k16 = kn & ~(size_t)15, rem = kn - k16;
            if (k16) {
                QNN_WIDEN16(0, 0);
                QNN_WIDEN16(1, 0);
                QNN_WIDEN16(2, 0);
                QNN_WIDEN16(3, 0);
            } else {
                for (size_t i = 0; i < MR; i++) widen_tail((int16_t *)xs[i], ap[i], rem);
            }
            for (size_t k = 0; k < k16; k += 16) {
                if (k + 16 < k16) {
                    QNN_WIDEN16(0, k + 16);
                    QNN_WIDEN16(1, k + 16);
                    QNN_WIDEN16(2, k + 16);
                    QNN_WIDEN16(3, k + 16);
                } else if (rem) {
                    for (size_t i = 0; i < MR; i++) widen_tail((int16_t *)(xs[i] + k16 / 2), ap[i] + k16, rem);
                }
                if (nc <= 8)
                    __asm__ volatile(QNN_PAIR8_ASM(0, 0, 1024, 2048, 3072) QNN_PAIR8_ASM(64, 4, 1028, 2052, 3076)
                                         QNN_PAIR8_ASM(128, 8, 1032, 2056, 3080)
                                         QNN_PAIR8_ASM(192, 12, 1036, 2060, 3084)
                                         QNN_PAIR8_ASM(256, 16, 1040, 2064, 3088)
                                         QNN_PAIR8_ASM(320, 20, 1044, 2068, 3092)
                                         QNN_PAIR8_ASM(384, 24, 1048, 2072, 3096)
                                         QNN_PAIR8_ASM(448, 28, 1052, 2076, 3100)
                                     : [c00] "+x"(c00), [c10] "+x"(c10), [c20] "+x"(c20), [c30] "+x"(c30)
                                     : [w] "r"(wp), [x] "r"(&xs[0][k / 2])
                                     : "xmm12", "xmm14", "xmm15", "memory");
                else
                __asm__ volatile(QNN_PAIR_ASM(0, 32, 0, 1024, 2048, 3072) QNN_PAIR_ASM(64, 96, 4, 1028, 2052, 3076)
                                     QNN_PAIR_ASM(128, 160, 8, 1032, 2056, 3080)
                                     QNN_PAIR_ASM(192, 224, 12, 1036, 2060, 3084)
                                     QNN_PAIR_ASM(256, 288, 16, 1040, 2064, 3088)
                                     QNN_PAIR_ASM(320, 352, 20, 1044, 2068, 3092)
                                     QNN_PAIR_ASM(384, 416, 24, 1048, 2072, 3096)
                                     QNN_PAIR_ASM(448, 480, 28, 1052, 2076, 3100)
                                 : [c00] "+x"(c00), [c01] "+x"(c01), [c10] "+x"(c10), [c11] "+x"(c11),
                                   [c20] "+x"(c20), [c21] "+x"(c21), [c30] "+x"(c30), [c31] "+x"(c31)
                                 : [w] "r"(wp), [x] "r"(&xs[0][k / 2])
                                 : "xmm12", "xmm13", "xmm14", "xmm15", "memory");
                wp += NR * 16;
            }
            for (size_t kp = k16 / 2; kp < kn / 2; kp++, wp += NR * 2)
                __asm__ volatile(QNN_PAIR_ASM(0, 32, 0, 1024, 2048, 3072)
                                 : [c00] "+x"(c00), [c01] "+x"(c01), [c10] "+x"(c10), [c11] "+x"(c11),
                                   [c20] "+x"(c20), [c21] "+x"(c21), [c30] "+x"(c30), [c31] "+x"(c31)
                                 : [w] "r"(wp), [x] "r"(&xs[0][kp])
                                 : "xmm12", "xmm13", "xmm14", "xmm15", "memory");
        }
    }
    QNN_STORE_4X16();
}

/* ---------------------------------------------------------------------------------------------------------------
 * gemm16 4x16c2: the igemm's arithmetic on a panel the driver has already gathered and widened (qnn_conv.c): 4 rows
 * of kc int16 at a + i * a_stride, so a tile's activations are widened once for all its column blocks, not once per
 * block, and the taps of a convolution with few channels lie back to back (a 3-channel 3x3 conv is K = 28, not 9
 * taps of 4). The same instructions per pair as the igemm, the row addresses in 4 registers.
 * ------------------------------------------------------------------------------------------------------------- */
#define QNN_PROW_ASM(xo, i)                                                                                         \
    "vpbroadcastd " QNN_S(xo) "(%[x" #i "]), %%ymm14\n\t"                                                          \
    "vpmaddwd %%ymm12, %%ymm14, %%ymm15\n\t"                                                                        \
    "vpaddd %%ymm15, %[c" #i "0], %[c" #i "0]\n\t"                                                                  \
    "vpmaddwd %%ymm13, %%ymm14, %%ymm14\n\t"                                                                        \
    "vpaddd %%ymm14, %[c" #i "1], %[c" #i "1]\n\t"
#define QNN_PROW8_ASM(xo, i)                                                                                        \
    "vpbroadcastd " QNN_S(xo) "(%[x" #i "]), %%ymm14\n\t"                                                          \
    "vpmaddwd %%ymm12, %%ymm14, %%ymm15\n\t"                                                                        \
    "vpaddd %%ymm15, %[c" #i "0], %[c" #i "0]\n\t"
#define QNN_PPAIR_ASM(wo, wo2, xo)                                                                                  \
    "vmovdqu " QNN_S(wo) "(%[w]), %%ymm12\n\t"                                                                     \
    "vmovdqu " QNN_S(wo2) "(%[w]), %%ymm13\n\t" QNN_PROW_ASM(xo, 0) QNN_PROW_ASM(xo, 1) QNN_PROW_ASM(xo, 2)        \
        QNN_PROW_ASM(xo, 3)
#define QNN_PPAIR8_ASM(wo, xo)                                                                                      \
    "vmovdqu " QNN_S(wo) "(%[w]), %%ymm12\n\t" QNN_PROW8_ASM(xo, 0) QNN_PROW8_ASM(xo, 1) QNN_PROW8_ASM(xo, 2)      \
        QNN_PROW8_ASM(xo, 3)
#define QNN_PIN [w] "r"(wp), [x0] "r"(x0 + k), [x1] "r"(x1 + k), [x2] "r"(x2 + k), [x3] "r"(x3 + k)
#define QNN_POUT8 [c00] "+x"(c00), [c10] "+x"(c10), [c20] "+x"(c20), [c30] "+x"(c30)
#define QNN_POUT                                                                                                    \
    [c00] "+x"(c00), [c01] "+x"(c01), [c10] "+x"(c10), [c11] "+x"(c11), [c20] "+x"(c20), [c21] "+x"(c21),         \
        [c30] "+x"(c30), [c31] "+x"(c31)

/* One row: two pairs at a time into 4 accumulators, in C. */
static void gemm16_1x16(size_t nc, size_t kc, const int16_t *a, const int32_t *bias, const int32_t *rowcorr,
                        uint8_t *c, const float *scale, const qnn_rq *rq)
{
    enum { NR = 16 };
    const __m256i r = _mm256_set1_epi32(rowcorr ? rowcorr[0] : 0);
    __m256i a0 = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)bias), r);
    __m256i a1 = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(bias + 8)), r);
    __m256i a2 = _mm256_setzero_si256(), a3 = _mm256_setzero_si256();
    const int16_t *wp = (const int16_t *)(bias + NR);
    for (size_t k = 0; k < kc; k += 4, wp += NR * 4) {
        int32_t p0, p1;
        memcpy(&p0, a + k, 4);
        memcpy(&p1, a + k + 2, 4);
        const __m256i x0 = _mm256_set1_epi32(p0), x1 = _mm256_set1_epi32(p1);
        a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(x0, _mm256_loadu_si256((const __m256i *)wp)));
        a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(x0, _mm256_loadu_si256((const __m256i *)(wp + 16))));
        a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(x1, _mm256_loadu_si256((const __m256i *)(wp + 32))));
        a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(x1, _mm256_loadu_si256((const __m256i *)(wp + 48))));
    }
    const __m256i i0 = rq8(_mm256_add_epi32(a0, a2), _mm256_loadu_ps(scale), rq);
    const __m256i i1 = rq8(_mm256_add_epi32(a1, a3), _mm256_loadu_ps(scale + 8), rq);
    store_lo(c, pack32(i0, i1, i0, i1, bclamp_of(rq)), nc);
}

/* One block of up to 16 columns. */
static inline __attribute__((always_inline)) void gemm16_block(size_t mr, size_t nc, size_t kc, const int16_t *a,
                                                               size_t a_stride, const int32_t *bias,
                                                               const int32_t *rowcorr, uint8_t *c, size_t cs,
                                                               const float *scale, const qnn_rq *rq)
{
    enum { NR = 16 };
    QNN_INIT_4X16();
    const int16_t *wp = (const int16_t *)(bias + NR);
    const int16_t *x0 = a, *x1 = a + a_stride, *x2 = a + 2 * a_stride, *x3 = a + 3 * a_stride;
    size_t k = 0;
    if (nc <= 8) {
        for (; k + 16 <= kc; k += 16, wp += NR * 16)
            __asm__ volatile(QNN_PPAIR8_ASM(0, 0) QNN_PPAIR8_ASM(64, 4) QNN_PPAIR8_ASM(128, 8)
                                 QNN_PPAIR8_ASM(192, 12) QNN_PPAIR8_ASM(256, 16) QNN_PPAIR8_ASM(320, 20)
                                     QNN_PPAIR8_ASM(384, 24) QNN_PPAIR8_ASM(448, 28)
                             : QNN_POUT8
                             : QNN_PIN
                             : "xmm12", "xmm14", "xmm15", "memory");
        for (; k < kc; k += 4, wp += NR * 4)
            __asm__ volatile(QNN_PPAIR8_ASM(0, 0) QNN_PPAIR8_ASM(64, 4)
                             : QNN_POUT8
                             : QNN_PIN
                             : "xmm12", "xmm14", "xmm15", "memory");
    } else {
        for (; k + 16 <= kc; k += 16, wp += NR * 16)
            __asm__ volatile(QNN_PPAIR_ASM(0, 32, 0) QNN_PPAIR_ASM(64, 96, 4) QNN_PPAIR_ASM(128, 160, 8)
                                 QNN_PPAIR_ASM(192, 224, 12) QNN_PPAIR_ASM(256, 288, 16)
                                     QNN_PPAIR_ASM(320, 352, 20) QNN_PPAIR_ASM(384, 416, 24)
                                         QNN_PPAIR_ASM(448, 480, 28)
                             : QNN_POUT
                             : QNN_PIN
                             : "xmm12", "xmm13", "xmm14", "xmm15", "memory");
        for (; k < kc; k += 4, wp += NR * 4)
            __asm__ volatile(QNN_PPAIR_ASM(0, 32, 0) QNN_PPAIR_ASM(64, 96, 4)
                             : QNN_POUT
                             : QNN_PIN
                             : "xmm12", "xmm13", "xmm14", "xmm15", "memory");
    }
    QNN_STORE_4X16();
}

/* The blocks, inlined once per epilogue variant (two, bounded constants): the epilogue is a third of a short-K
 * block's instructions, and a copy of the flags the compiler can see folds its branches and reloads away. */
static inline __attribute__((always_inline)) void gemm16_blocks(size_t mr, size_t nc, size_t kc, const int16_t *a,
                                                                size_t a_stride, const void *w, size_t w_stride,
                                                                const int32_t *rowcorr, uint8_t *c, size_t cs,
                                                                const float *scale, const qnn_rq *rq0, int two,
                                                                int bounded)
{
    enum { NR = 16 };
    qnn_rq k = *rq0;
    k.two = two, k.bounded = bounded;
    for (;; w = (const uint8_t *)w + w_stride, c += NR, scale += NR, nc -= NR) {
        const size_t n = nc < NR ? nc : NR;
        if (mr == 1) gemm16_1x16(n, kc, a, w, rowcorr, c, scale, &k);
        else gemm16_block(mr, n, kc, a, a_stride, w, rowcorr, c, cs, scale, &k);
        if (nc <= NR) return;
    }
}

void par_qnn_gemm16_4x16c2__avx2(size_t mr, size_t nc, size_t kc, const int16_t *a, size_t a_stride, const void *w,
                                 size_t w_stride, const int32_t *rowcorr, uint8_t *c, size_t cs, const float *scale,
                                 const qnn_rq *rq)
{
    if (rq->two && rq->bounded) gemm16_blocks(mr, nc, kc, a, a_stride, w, w_stride, rowcorr, c, cs, scale, rq, 1, 1);
    else if (rq->two) gemm16_blocks(mr, nc, kc, a, a_stride, w, w_stride, rowcorr, c, cs, scale, rq, 1, 0);
    else if (rq->bounded) gemm16_blocks(mr, nc, kc, a, a_stride, w, w_stride, rowcorr, c, cs, scale, rq, 0, 1);
    else gemm16_blocks(mr, nc, kc, a, a_stride, w, w_stride, rowcorr, c, cs, scale, rq, 0, 0);
}

void par_qnn_pack_a16__avx2(size_t ks, size_t kc, const uint8_t *const *a, size_t a_off, const uint8_t *zero,
                            int16_t *panel, size_t stride)
{
    enum { MR = 4 };
    const size_t kt = ks * kc, kp = (kt + 3) & ~(size_t)3;
    if (kc <= 16) {
        /* a tap is one 16-byte widening (the next tap overwrites the excess): no branch but the zero row's select.
         * Twice as fast on a 3-channel 3x3 conv as finding runs of adjacent taps (below). */
        for (size_t i = 0; i < MR; i++) {
            int16_t *row = panel + i * stride;
            for (size_t t = 0; t < ks; t++) {
                const uint8_t *src = a[t * MR + i];
                src += src != zero ? a_off : 0;
                _mm256_storeu_si256((__m256i *)(row + t * kc),
                                    _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)src)));
            }
            for (size_t k = kt; k < kp; k++) row[k] = 0;
        }
        return;
    }
    for (size_t i = 0; i < MR; i++) {
        for (size_t t = 0; t < ks;) {
            const uint8_t *src = a[t * MR + i];
            /* a run of taps whose rows follow each other in memory (a kernel row's taps away from the padding, in
             * NHWC) is one copy */
            size_t run = 1;
            if (src != zero)
                while (t + run < ks && a[(t + run) * MR + i] == src + run * kc) run++;
            if (src != zero) src += a_off;
            int16_t *dst = panel + i * stride + t * kc;
            for (size_t k = 0; k < run * kc; k += 16)
                _mm256_storeu_si256((__m256i *)(dst + k),
                                    _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(src + k))));
            t += run;
        }
        for (size_t k = kt; k < kp; k++) panel[i * stride + k] = 0; /* the last pairs' padding: defined zeros */
    }
}
#undef QNN_PROW_ASM
#undef QNN_PROW8_ASM
#undef QNN_PPAIR_ASM
#undef QNN_PPAIR8_ASM
#undef QNN_PIN
#undef QNN_POUT8
#undef QNN_POUT
#undef QNN_INIT_4X16
#undef QNN_STORE_4X16
#undef QNN_PAIR_ASM
#undef QNN_ROW_ASM
#undef QNN_PAIR8_ASM
#undef QNN_ROW8_ASM
#undef QNN_S
#undef QNN_WIDEN16

/* ---------------------------------------------------------------------------------------------------------------
 * depthwise
 * ------------------------------------------------------------------------------------------------------------- */
/* Four requantized vectors of the depthwise order (below) -> 32 bytes in channel order: the in-lane packs undo it. */
static inline __m256i pack32_inlane(__m256i i0, __m256i i1, __m256i i2, __m256i i3, bclamp b)
{
    __m256i p01 = _mm256_adds_epi16(_mm256_packs_epi32(i0, i1), b.vzp);
    __m256i p23 = _mm256_adds_epi16(_mm256_packs_epi32(i2, i3), b.vzp);
    return _mm256_min_epu8(_mm256_max_epu8(_mm256_packus_epi16(p01, p23), b.vlo), b.vhi);
}

/* The body, inlined twice: with ks a variable and with ks == 9 (MobileNet's 3x3), where the pair loop unrolls. Per
 * 32 channels and pair of taps: two 32-byte loads, vpunpck{l,h}bw of the two taps (in-lane), then of each half with
 * zero: four vectors of (x_ta, x_tb) int16 pairs, channels [0-3 | 16-19], [4-7 | 20-23], [8-11 | 24-27],
 * [12-15 | 28-31] (par_qnn_dw_put packs weights, bias and scales in that order), one vpmaddwd + vpaddd each. Six
 * in-lane shuffles per 64 products. */
static inline __attribute__((always_inline)) void dw_body(size_t npix, size_t channels, size_t ks,
                                                          const uint8_t *const *a, const void *w, uint8_t *c,
                                                          size_t cs, const float *scale, const qnn_rq *rq0, int two,
                                                          int bounded)
{
    qnn_rq k = *rq0;
    if (two >= 0) k.two = two, k.bounded = bounded; /* constants: the epilogue's branches fold (gemm16_blocks) */
    const qnn_rq *rq = &k;
    const size_t cp = (channels + 31) & ~(size_t)31, np = (ks + 1) / 2;
    const int32_t *bias = w, *wt = bias + cp;
    const bclamp bc = bclamp_of(rq);
    const __m256i z = _mm256_setzero_si256();
    for (size_t p = 0; p < npix; p++, a += ks, c += cs)
        for (size_t ch = 0; ch < channels; ch += 32) {
            __m256i a0 = _mm256_loadu_si256((const __m256i *)(bias + ch));
            __m256i a1 = _mm256_loadu_si256((const __m256i *)(bias + ch + 8));
            __m256i a2 = _mm256_loadu_si256((const __m256i *)(bias + ch + 16));
            __m256i a3 = _mm256_loadu_si256((const __m256i *)(bias + ch + 24));
            for (size_t q = 0; q < np; q++) {
                const uint8_t *pa = a[2 * q], *pb = 2 * q + 1 < ks ? a[2 * q + 1] : pa;
                const int32_t *wq = wt + q * cp + ch;
                const __m256i xa = _mm256_loadu_si256((const __m256i *)(pa + ch));
                const __m256i xb = _mm256_loadu_si256((const __m256i *)(pb + ch));
                const __m256i lo = _mm256_unpacklo_epi8(xa, xb), hi = _mm256_unpackhi_epi8(xa, xb);
                a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_unpacklo_epi8(lo, z),
                                                            _mm256_loadu_si256((const __m256i *)wq)));
                a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_unpackhi_epi8(lo, z),
                                                            _mm256_loadu_si256((const __m256i *)(wq + 8))));
                a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(_mm256_unpacklo_epi8(hi, z),
                                                            _mm256_loadu_si256((const __m256i *)(wq + 16))));
                a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(_mm256_unpackhi_epi8(hi, z),
                                                            _mm256_loadu_si256((const __m256i *)(wq + 24))));
            }
            const __m256i y = pack32_inlane(rq8(a0, _mm256_loadu_ps(scale + ch), rq),
                                            rq8(a1, _mm256_loadu_ps(scale + ch + 8), rq),
                                            rq8(a2, _mm256_loadu_ps(scale + ch + 16), rq),
                                            rq8(a3, _mm256_loadu_ps(scale + ch + 24), rq), bc);
            const size_t n = channels - ch;
            if (n >= 32) {
                _mm256_storeu_si256((__m256i *)(c + ch), y);
            } else {
                store_lo(c + ch, y, n);
                if (n > 16) store_lo(c + ch + 16, _mm256_permute2x128_si256(y, y, 1), n - 16);
            }
        }
}

void par_qnn_dw_c16__avx2(size_t npix, size_t channels, size_t ks, const uint8_t *const *a, const void *w,
                          uint8_t *c, size_t cs, const float *scale, const qnn_rq *rq)
{
    if (ks != 9) dw_body(npix, channels, ks, a, w, c, cs, scale, rq, -1, -1);
    else if (rq->two && rq->bounded) dw_body(npix, channels, 9, a, w, c, cs, scale, rq, 1, 1);
    else if (rq->two) dw_body(npix, channels, 9, a, w, c, cs, scale, rq, 1, 0);
    else if (rq->bounded) dw_body(npix, channels, 9, a, w, c, cs, scale, rq, 0, 1);
    else dw_body(npix, channels, 9, a, w, c, cs, scale, rq, 0, 0);
}

/* linear_8da4w (qnn_qb4w_fn), block % 8 == 0. Per group of 8 k's, 16 columns x 4 bytes in two ymm; the nibbles are
 * masked out and sign-extended to int8 ((n ^ 8) - 8), and vpmaddubsw (u8 activations x s8 weights) sums pairs into
 * int16 without saturating: |2 * 255 * 8| = 4080, so the low and high nibbles' products add in int16 too (8160);
 * one vpmaddwd by ones then sums the 4 pairs of a column into int32. The block epilogue of qnn_kernels.h in float
 * (multiply, add: no FMA, the scalar kernel's bits). */
static inline __m256i q4_dot(const uint8_t *a, __m256i lo, __m256i hi, __m256i ones)
{
    int32_t x, y;
    memcpy(&x, a, 4);
    memcpy(&y, a + 4, 4);
    const __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(_mm256_set1_epi32(x), lo),
                                       _mm256_maddubs_epi16(_mm256_set1_epi32(y), hi));
    return _mm256_madd_epi16(p, ones);
}

void par_qnn_qb4w_4x16c8__avx2(size_t mr, size_t nc, size_t kc, size_t block, const uint8_t *a, size_t a_stride,
                               const int32_t *zp, const float *sx, const void *w, float *c, size_t cs)
{
    enum { MR = 4 };
    qnn_qb4w_view pv;
    const size_t nb = qnn_qb4w_parts(w, kc, block, &pv);
    const uint8_t *wp = pv.w4;
    const int32_t *wsum = pv.wsum;
    const float *scale = pv.scale, *bias = pv.bias;
    const uint8_t *ar[MR];
    for (size_t i = 0; i < MR; i++) ar[i] = a + (i < mr ? i : 0) * a_stride;
    const __m256i m15 = _mm256_set1_epi8(15), m8 = _mm256_set1_epi8(8), ones = _mm256_set1_epi16(1);
    __m256 f[MR][2];
    for (size_t i = 0; i < MR; i++) f[i][0] = f[i][1] = _mm256_setzero_ps();
    for (size_t b = 0; b < nb; b++) {
        __m256i acc[MR][2];
        for (size_t i = 0; i < MR; i++) acc[i][0] = acc[i][1] = _mm256_setzero_si256();
        for (size_t k = b * block; k < (b + 1) * block; k += 8, wp += 64)
            for (size_t h = 0; h < 2; h++) {
                const __m256i v = _mm256_loadu_si256((const __m256i *)(wp + 32 * h));
                const __m256i lo = _mm256_sub_epi8(_mm256_xor_si256(_mm256_and_si256(v, m15), m8), m8);
                const __m256i hi = _mm256_sub_epi8(
                    _mm256_xor_si256(_mm256_and_si256(_mm256_srli_epi16(v, 4), m15), m8), m8);
                for (size_t i = 0; i < MR; i++)
                    acc[i][h] = _mm256_add_epi32(acc[i][h], q4_dot(ar[i] + k, lo, hi, ones));
            }
        for (size_t h = 0; h < 2; h++) {
            const __m256i ws = _mm256_loadu_si256((const __m256i *)(wsum + b * 16 + 8 * h));
            const __m256 s = _mm256_loadu_ps(scale + b * 16 + 8 * h);
            for (size_t i = 0; i < MR; i++) {
                const __m256i t = _mm256_sub_epi32(acc[i][h], _mm256_mullo_epi32(_mm256_set1_epi32(zp[i < mr ? i : 0]),
                                                                                 ws));
                f[i][h] = _mm256_add_ps(f[i][h], _mm256_mul_ps(_mm256_cvtepi32_ps(t), s));
            }
        }
    }
    for (size_t i = 0; i < mr; i++) {
        float y[16];
        for (size_t h = 0; h < 2; h++)
            _mm256_storeu_ps(y + 8 * h, _mm256_add_ps(_mm256_mul_ps(f[i][h], _mm256_set1_ps(sx[i])),
                                                      _mm256_loadu_ps(bias + 8 * h)));
        memcpy(c + i * cs, y, nc * sizeof(float));
    }
}

void par_qnn_vadd__avx2(size_t n, const uint8_t *a, const uint8_t *b, uint8_t *y, const qnn_add_params *p)
{
    qnn_vadd_body(n, a, b, y, p);
}

/* qnn_quantize_body 8 at a time, the same double operations in the same order (vmaxpd returns its second operand
 * for a NaN first: NaN -> -512, as the body's comparison); the clamp to [0, 255] is the saturation of the packs,
 * exact because r is an integer within +-767. */
void par_qnn_quantize__avx2(size_t n, const float *x, uint8_t *y, double inv_scale, double zp)
{
    const __m256d vs = _mm256_set1_pd(inv_scale), lo = _mm256_set1_pd(-512.0), hi = _mm256_set1_pd(512.0);
    const __m256d magic = _mm256_set1_pd(6755399441055744.0), vzp = _mm256_set1_pd(zp);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256d t0 = _mm256_mul_pd(_mm256_cvtps_pd(_mm_loadu_ps(x + i)), vs);
        __m256d t1 = _mm256_mul_pd(_mm256_cvtps_pd(_mm_loadu_ps(x + i + 4)), vs);
        t0 = _mm256_min_pd(_mm256_max_pd(t0, lo), hi);
        t1 = _mm256_min_pd(_mm256_max_pd(t1, lo), hi);
        t0 = _mm256_add_pd(_mm256_sub_pd(_mm256_add_pd(t0, magic), magic), vzp);
        t1 = _mm256_add_pd(_mm256_sub_pd(_mm256_add_pd(t1, magic), magic), vzp);
        const __m128i w = _mm_packs_epi32(_mm256_cvttpd_epi32(t0), _mm256_cvttpd_epi32(t1));
        _mm_storel_epi64((__m128i *)(y + i), _mm_packus_epi16(w, w));
    }
    qnn_quantize_body(n - i, x + i, y + i, inv_scale, zp);
}

void par_qnn_nhwc3__avx2(size_t hw, const uint8_t *x, uint8_t *y)
{
    /* 16 pixels: 3 x 16 bytes in, 48 out, each output vector three vpshufb (one per channel plane, -1 = zero)
     * or'ed together */
    const uint8_t *r = x, *g = x + hw, *b = x + 2 * hw;
    const __m128i m[3][3] = {
        {_mm_setr_epi8(0, -1, -1, 1, -1, -1, 2, -1, -1, 3, -1, -1, 4, -1, -1, 5),
         _mm_setr_epi8(-1, 0, -1, -1, 1, -1, -1, 2, -1, -1, 3, -1, -1, 4, -1, -1),
         _mm_setr_epi8(-1, -1, 0, -1, -1, 1, -1, -1, 2, -1, -1, 3, -1, -1, 4, -1)},
        {_mm_setr_epi8(-1, -1, 6, -1, -1, 7, -1, -1, 8, -1, -1, 9, -1, -1, 10, -1),
         _mm_setr_epi8(5, -1, -1, 6, -1, -1, 7, -1, -1, 8, -1, -1, 9, -1, -1, 10),
         _mm_setr_epi8(-1, 5, -1, -1, 6, -1, -1, 7, -1, -1, 8, -1, -1, 9, -1, -1)},
        {_mm_setr_epi8(-1, 11, -1, -1, 12, -1, -1, 13, -1, -1, 14, -1, -1, 15, -1, -1),
         _mm_setr_epi8(-1, -1, 11, -1, -1, 12, -1, -1, 13, -1, -1, 14, -1, -1, 15, -1),
         _mm_setr_epi8(10, -1, -1, 11, -1, -1, 12, -1, -1, 13, -1, -1, 14, -1, -1, 15)},
    };
    size_t i = 0;
    for (; i + 16 <= hw; i += 16, y += 48) {
        const __m128i vr = _mm_loadu_si128((const __m128i *)(r + i)), vg = _mm_loadu_si128((const __m128i *)(g + i));
        const __m128i vb = _mm_loadu_si128((const __m128i *)(b + i));
        for (int o = 0; o < 3; o++)
            _mm_storeu_si128((__m128i *)(y + 16 * o),
                             _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(vr, m[o][0]), _mm_shuffle_epi8(vg, m[o][1])),
                                          _mm_shuffle_epi8(vb, m[o][2])));
    }
    for (; i < hw; i++, y += 3) y[0] = r[i], y[1] = g[i], y[2] = b[i];
}

/* The AVX2 int8 peak: what the igemm's inner loop is made of, vpmaddwd (16 products of 8-bit values widened to 16
 * bits, summed in pairs into int32) then vpaddd into an int32 accumulator, 8 of each per iteration on 8 independent
 * accumulators (chains of one vpaddd, latency 1, never limit), and nothing else but the loop counter. In assembly:
 * GCC keeps intrinsic accumulators that live across the clock_gettime calls in memory, which would measure stores.
 * Counts 2 ops per multiply-add of 8-bit values (32 per vpmaddwd), as par_qnn_vnni_peak counts vpdpbusd. */
double par_qnn_avx2_peak(long iters)
{
    struct timespec t0, t1;
    long n = iters;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (n > 0)
        __asm__ volatile(
            "vpxor %%xmm0, %%xmm0, %%xmm0\n\tvpxor %%xmm1, %%xmm1, %%xmm1\n\t"
            "vpxor %%xmm2, %%xmm2, %%xmm2\n\tvpxor %%xmm3, %%xmm3, %%xmm3\n\t"
            "vpxor %%xmm4, %%xmm4, %%xmm4\n\tvpxor %%xmm5, %%xmm5, %%xmm5\n\t"
            "vpxor %%xmm6, %%xmm6, %%xmm6\n\tvpxor %%xmm7, %%xmm7, %%xmm7\n\t"
            "vpcmpeqd %%ymm8, %%ymm8, %%ymm8\n\tvpabsw %%ymm8, %%ymm9\n\t"
            "vpaddw %%ymm9, %%ymm9, %%ymm10\n\tvpaddw %%ymm10, %%ymm9, %%ymm11\n\t"
            "vpsubw %%ymm11, %%ymm8, %%ymm12\n\tvpaddw %%ymm11, %%ymm10, %%ymm13\n\t"
            ".p2align 5\n"
            "1:\n\t"
            "vpmaddwd %%ymm12, %%ymm8, %%ymm14\n\tvpaddd %%ymm14, %%ymm0, %%ymm0\n\t"
            "vpmaddwd %%ymm12, %%ymm9, %%ymm15\n\tvpaddd %%ymm15, %%ymm1, %%ymm1\n\t"
            "vpmaddwd %%ymm12, %%ymm10, %%ymm14\n\tvpaddd %%ymm14, %%ymm2, %%ymm2\n\t"
            "vpmaddwd %%ymm12, %%ymm11, %%ymm15\n\tvpaddd %%ymm15, %%ymm3, %%ymm3\n\t"
            "vpmaddwd %%ymm13, %%ymm8, %%ymm14\n\tvpaddd %%ymm14, %%ymm4, %%ymm4\n\t"
            "vpmaddwd %%ymm13, %%ymm9, %%ymm15\n\tvpaddd %%ymm15, %%ymm5, %%ymm5\n\t"
            "vpmaddwd %%ymm13, %%ymm10, %%ymm14\n\tvpaddd %%ymm14, %%ymm6, %%ymm6\n\t"
            "vpmaddwd %%ymm13, %%ymm11, %%ymm15\n\tvpaddd %%ymm15, %%ymm7, %%ymm7\n\t"
            "dec %0\n\t"
            "jnz 1b\n\t"
            "vzeroupper"
            : "+r"(n)
            :
            : "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
              "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double sec = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    return sec > 0 ? (double)iters * 8 * 16 * 2 / sec * 1e-9 : 0.0;
}
