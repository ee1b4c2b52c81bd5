/*
 * test_qnnpack_kernels.c - unit tests of the qnnpack int8 backend's micro-kernels (backends/qnnpack/), in QNNPACK's
 * layers:
 *   - every igemm and depthwise micro-kernel (scalar, AVX2, AVX-512 VNNI where the machine has them) against a naive
 *     int32 model requantized with core/requant.h's fp32 scheme, bit for bit, for every M remainder (1..2 MR),
 *     N remainder (1..2 NR + 1) and K remainder (1..17 and larger), several taps, row corrections, group offsets,
 *     padding pointers, zero points at both ends, clamps that saturate; columns and rows past the tile untouched;
 *   - the AVX2 kernels against the scalar ones byte for byte on random shapes (kc past the AVX2 widening chunk, zero
 *     points 0 / 128 / 255), and the AVX2 int8 peak loop behind the "peak" micro-benchmark;
 *   - every set's quantize and 3-channel NCHW -> NHWC kernels against their definitions;
 *   - every set's qb4w kernel (linear_8da4w) against the op's arithmetic on the unpacked weights, bit for bit;
 *   - every set's 16a8w GEMM (qnn_s16.h) against an int64 sum requantized by core/requant.h's fp32 scheme to int16,
 *     bit for bit: full-range operands that saturate, accumulators up to 2^31 - 2^22, exact ties, odd K.
 * Whole graphs through the backend table are test_qnnpack.c's. Deterministic seeds; no timing is asserted.
 */
#include <math.h>
#include <stdlib.h>

#include "backends/qnnpack/qnn_kernels.h"
#include "backends/qnnpack/qnn_s16.h"
#include "core/requant.h"
#include "qnnpack_test_helpers.h"
#include "tmain.h"

const par_backend *par_backend_qnnpack(void);

static uint8_t model_requant(int64_t acc, float scale, int32_t zp, int32_t lo, int32_t hi)
{
    par_requant_params p;
    par_msg m;
    CU_ASSERT_FATAL(par_requant_params_init(&p, PAR_REQUANT_FP32, (double)scale, zp, lo, hi, &m) == PAR_OK);
    return (uint8_t)par_requant_fp32(acc, &p);
}

/* ---------------------------------------------------------------------------------------------------------------
 * igemm
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct wsrc {
    const int8_t *w; /* [n][t][k] */
    size_t ks, kc;
} wsrc;

static int32_t wget(const void *ctx, size_t n, size_t t, size_t k)
{
    const wsrc *s = ctx;
    return s->w[(n * s->ks + t) * s->kc + k];
}

/* One igemm call of mr x nc with kc channels (kcp padded), ks taps, against the model. Returns 1 when all equal. */
/* The requantization model: one fp32 stage, or two (a fused activation with its own quantization). */
typedef struct rqm {
    int32_t zp1, zp, lo, hi, two;
    float r2;
} rqm;

/* The kernels' contract for a fused second stage (qnn_kernels.h, qnn_rq): the output clamp lies within what the
 * first stage's clamp lets through, zp + rne(v r2) at v = -zp1 and 255 - zp1 (or is one value), as the fusion in
 * qnn_conv.c guarantees. Narrows a random model's clamp to it. */
static void rqm_fit(rqm *m)
{
    if (!m->two) return;
    int32_t flo = m->zp + (int32_t)nearbyintf((float)-m->zp1 * m->r2);
    int32_t fhi = m->zp + (int32_t)nearbyintf((float)(255 - m->zp1) * m->r2);
    if (m->lo < flo) m->lo = flo < 255 ? flo : 255;
    if (m->hi > fhi) m->hi = fhi > 0 ? fhi : 0;
    if (m->hi < m->lo) m->hi = m->lo;
}

static qnn_rq rq_of(rqm *m)
{
    rqm_fit(m);
    return (qnn_rq){(float)(m->lo - m->zp), (float)(m->hi - m->zp), m->zp, m->two, (float)-m->zp1,
                    (float)(255 - m->zp1), m->r2, 0};
}

/* qnn_rq.bounded where the scales allow it (the rule of qnn_conv.c), for three calls in four: both epilogues. */
static void rq_bound(qnn_rq *rq, const float *scale, size_t n)
{
    float r = rq->two && rq->r2 > 1.0f ? rq->r2 : 1.0f;
    int ok = rng() % 4 != 0;
    for (size_t i = 0; i < n; i++) ok &= scale[i] * r <= 0.25f;
    rq->bounded = ok;
}

static uint8_t model_out(int64_t acc, float scale, const rqm *m)
{
    if (!m->two) return model_requant(acc, scale, m->zp, m->lo, m->hi);
    int32_t q1 = model_requant(acc, scale, m->zp1, 0, 255);
    return model_requant(q1 - m->zp1, m->r2, m->zp, m->lo, m->hi);
}

static rqm rqm_random(int two, int saturate)
{
    rqm m;
    m.two = two;
    m.zp = saturate ? rint_in(0, 255) : rint_in(90, 170);
    m.lo = rint_in(0, 30), m.hi = rint_in(225, 255);
    if (m.zp < m.lo) m.zp = m.lo;
    if (m.zp > m.hi) m.zp = m.hi;
    m.zp1 = rint_in(60, 200);
    m.r2 = two ? (float)(0.4 + (rng() % 1000) / 1000.0) : 1.0f;
    return m;
}

static int check_igemm(const qnn_ukernels *uk, size_t mr, size_t nc, size_t kc, size_t ks, int use_rowcorr,
                       int saturate, int two, size_t *n_outputs_checked)
{
    size_t MR = uk->mr, NR = uk->nr, kcp = (kc + 3) & ~(size_t)3, a_off = 5;
    size_t rows_mem = MR * ks + 1;
    uint8_t *amem = malloc(rows_mem * (kcp + a_off) + 64), *zero = malloc(kcp + a_off + 64);
    int8_t *w = malloc(NR * ks * kc + 1);
    int32_t bias[64], rowcorr[16];
    float scale[64];
    const uint8_t **a = malloc(sizeof *a * MR * ks);
    size_t cs = NR + 7;
    uint8_t *c = malloc(MR * cs + 64);
    void *packed = aligned_alloc(64, (par_qnn_block_bytes(uk, ks, kcp) + 63) & ~(size_t)63);
    for (size_t i = 0; i < rows_mem * (kcp + a_off) + 64; i++) amem[i] = (uint8_t)rng();
    int32_t zx = rint_in(0, 255);
    memset(zero, zx, kcp + a_off + 64);
    for (size_t i = 0; i < NR * ks * kc; i++) w[i] = (int8_t)rint_in(-128, 127);
    for (size_t j = 0; j < NR; j++) {
        /* centre the accumulators as the zero-point fold does (activations are unsigned, mean ~127) */
        int32_t wsum = 0;
        for (size_t i = 0; i < ks * kc; i++) wsum += w[j * ks * kc + i];
        bias[j] = rint_in(-3000, 3000) - 127 * wsum;
        scale[j] = saturate ? (float)(0.01 + 0.02 * (rng() % 100) / 100.0)
                            : (float)(1.0 / (200.0 * sqrt((double)(kc * ks))) * (1 + (rng() % 100) / 100.0));
    }
    for (size_t i = 0; i < 16; i++) rowcorr[i] = rint_in(-5000, 5000);
    /* Pointers: row i, tap t -> a row of amem (rows >= mr repeat the last valid one), some taps padding. */
    for (size_t t = 0; t < ks; t++)
        for (size_t i = 0; i < MR; i++) {
            size_t r = i < mr ? i : mr - 1;
            a[t * MR + i] = ((t + r) % 5 == 3) ? zero : amem + (t * MR + r) * (kcp + a_off);
        }
    wsrc src = {w, ks, kc};
    par_qnn_pack_gemm(uk, ks, kc, kcp, 0, nc, bias, wget, &src, packed);
    memset(c, 0xA5, MR * cs + 64);
    rqm model = rqm_random(two, saturate);
    qnn_rq rq = rq_of(&model);
    rq_bound(&rq, scale, nc);
    uk->igemm(mr, nc, kcp, ks, a, a_off, zero, packed, use_rowcorr ? rowcorr : NULL, c, cs, scale, &rq);
    int ok = 1;
    uint8_t tile[16 * 64];
    size_t nt = 0;
    for (size_t i = 0; i < MR; i++)
        for (size_t j = 0; j < cs; j++) {
            uint8_t got = c[i * cs + j];
            if (i < mr && j < nc) tile[nt++] = got;
            if (i >= mr || j >= nc) {
                if (got != 0xA5) ok = 0; /* outside the tile: untouched */
                continue;
            }
            int64_t acc = bias[j] + (use_rowcorr ? rowcorr[i] : 0);
            for (size_t t = 0; t < ks; t++) {
                const uint8_t *p = a[t * MR + i];
                if (p != zero) p += a_off;
                for (size_t k = 0; k < kc; k++) acc += (int32_t)p[k] * w[(j * ks + t) * kc + k];
            }
            if (got != model_out(acc, scale[j], &model)) ok = 0;
            (*n_outputs_checked)++;
        }
    if (nt >= 8 && !saturate && !varied(tile, nt))
        fprintf(stderr, "\n  all equal: mr %zu nc %zu kc %zu ks %zu rowcorr %d value %d\n", mr, nc, kc, ks, use_rowcorr,
                tile[0]);
    if (nt >= 8 && !saturate) CU_ASSERT(varied(tile, nt));
    free(amem), free(zero), free(w), free(a), free(c), free(packed);
    return ok;
}

static void igemm_all(qnn_isa isa)
{
    const qnn_ukernels *uk = par_qnn_ukernels(isa);
    if (!uk) PAR_TEST_SKIP(isa == QNN_ISA_VNNI ? "no AVX-512 VNNI on this CPU" : "no AVX2 on this CPU");
    rng_seed(100 + (uint64_t)isa);
    static const size_t KS[] = {1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 31, 64, 100};
    size_t checked = 0, fails = 0;
    for (size_t mr = 1; mr <= uk->mr; mr++)
        for (size_t nc = 1; nc <= uk->nr; nc++)
            for (size_t ki = 0; ki < sizeof KS / sizeof KS[0]; ki++) {
                if ((mr + nc + ki) % 3 != 0 && nc != uk->nr && mr != uk->mr) continue; /* a third of the grid */
                for (size_t ks = 1; ks <= 3; ks += 2)
                    fails += !check_igemm(uk, mr, nc, KS[ki], ks, (mr + nc) % 2, 0, (mr + ki) % 3 == 0, &checked);
            }
    for (int i = 0; i < 20; i++) fails += !check_igemm(uk, uk->mr, uk->nr, 33, 9, 1, 1, i % 2, &checked);
    CU_ASSERT_EQUAL(fails, 0);
    CU_ASSERT(checked > 2000);
}

static void test_igemm_scalar(void) { igemm_all(QNN_ISA_SCALAR); }
static void test_igemm_avx2(void) { igemm_all(QNN_ISA_AVX2); }
static void test_igemm_vnni(void) { igemm_all(QNN_ISA_VNNI); }

/* ---------------------------------------------------------------------------------------------------------------
 * depthwise
 * ------------------------------------------------------------------------------------------------------------- */
static void dw_all(qnn_isa isa)
{
    const qnn_ukernels *uk = par_qnn_ukernels(isa);
    if (!uk) PAR_TEST_SKIP(isa == QNN_ISA_VNNI ? "no AVX-512 VNNI on this CPU" : "no AVX2 on this CPU");
    rng_seed(200 + (uint64_t)isa);
    size_t fails = 0, checked = 0;
    for (size_t ch = 1; ch <= 70; ch += (ch < 34 ? 1 : 7))
        for (size_t ks = 1; ks <= 25; ks += (ks < 10 ? 1 : 15)) {
            size_t cp = par_qnn_dw_channels(uk, ch);
            uint8_t *x = malloc(ks * cp + 64), *y = malloc(cp + 16);
            int32_t *w = aligned_alloc(64, sizeof(int32_t) * cp * (ks + 1) + 64);
            float *scale = calloc(cp, sizeof(float));
            const uint8_t *a[32];
            int16_t wv[32 * 80];
            for (size_t i = 0; i < ks * cp + 64; i++) x[i] = (uint8_t)rng();
            memset(w, 0, sizeof(int32_t) * cp * (ks + 1));
            for (size_t c = 0; c < ch; c++) {
                w[par_qnn_dw_slot(uk, c)] = rint_in(-100000, 100000);
                scale[par_qnn_dw_slot(uk, c)] = (float)(0.0005 + 0.001 * (rng() % 100) / 100.0);
                for (size_t t = 0; t < ks; t++) {
                    wv[t * 80 + c] = (int16_t)rint_in(-255, 255); /* ws - zw spans 9 bits */
                    par_qnn_dw_put(uk, w, cp, t, c, wv[t * 80 + c]);
                }
            }
            for (size_t t = 0; t < ks; t++) a[t] = x + t * cp;
            memset(y, 0xA5, cp + 16);
            rqm model = rqm_random((ch + ks) % 2, 0);
            qnn_rq rq = rq_of(&model);
            rq_bound(&rq, scale, cp);
            uk->dw(1, ch, ks, a, w, y, 0, scale, &rq);
            for (size_t c = 0; c < ch; c++) {
                int64_t acc = w[par_qnn_dw_slot(uk, c)];
                for (size_t t = 0; t < ks; t++) acc += (int32_t)a[t][c] * wv[t * 80 + c];
                fails += y[c] != model_out(acc, scale[par_qnn_dw_slot(uk, c)], &model);
                checked++;
            }
            for (size_t c = ch; c < cp + 16; c++) fails += y[c] != 0xA5;
            if (ch >= 8) CU_ASSERT(varied(y, ch));
            free(x), free(y), free(w), free(scale);
        }
    CU_ASSERT_EQUAL(fails, 0);
    CU_ASSERT(checked > 1000);
}

static void test_dw_scalar(void) { dw_all(QNN_ISA_SCALAR); }
static void test_dw_avx2(void) { dw_all(QNN_ISA_AVX2); }
static void test_dw_vnni(void) { dw_all(QNN_ISA_VNNI); }

/* ---------------------------------------------------------------------------------------------------------------
 * AVX2 against scalar, byte for byte, on random shapes: mr < MR, nc < NR, kc not a multiple of the K group (4) nor
 * of the AVX2 kernel's 16-k block, kc past its 512-k widening chunk, several taps, padding taps, zero points 0 / 128
 * / 255 for the input (the padding row) and the output, fused clamps, two-stage requantization; the AVX2 igemm and
 * its panel path (pack_a + gemm16) both.
 * ------------------------------------------------------------------------------------------------------------- */
static size_t avx2_vs_scalar_igemm(const qnn_ukernels *av, const qnn_ukernels *sc, size_t *checked)
{
    static const int32_t ZP[] = {0, 128, 255};
    static const size_t KC[] = {1, 2, 3, 5, 6, 7, 9, 13, 17, 22, 27, 31, 33, 45, 63, 130, 509, 515, 520, 1029};
    const size_t MR = av->mr, NR = av->nr, a_off = 3;
    size_t mr = 1 + rng() % MR, nc = 1 + rng() % NR, kc = KC[rng() % (sizeof KC / sizeof KC[0])];
    size_t ks = rng() % 4 == 0 ? 9 : 1 + rng() % 3, kcp = (kc + 3) & ~(size_t)3, row = kcp + a_off + 64;
    int32_t zx = ZP[rng() % 3];
    rqm model = rqm_random(rng() % 4 == 0, rng() % 2);
    model.zp = ZP[rng() % 3];
    if (rng() % 3 == 0) model.lo = 0, model.hi = 255; /* no fused clamp: the dtype's bounds */
    if (model.zp < model.lo) model.lo = model.zp;
    if (model.zp > model.hi) model.hi = model.zp;
    qnn_rq rq = rq_of(&model);
    uint8_t *amem = malloc(MR * ks * row), *zero = malloc(row);
    uint8_t *c1 = malloc(MR * (NR + 5)), *c2 = malloc(MR * (NR + 5));
    int8_t *w = malloc(NR * ks * kc);
    int32_t bias[32] = {0}, rowcorr[8];
    float scale[32];
    const uint8_t **a = malloc(sizeof *a * MR * ks);
    size_t nb_sc = (nc + sc->nr - 1) / sc->nr, bb_sc = par_qnn_block_bytes(sc, ks, kcp);
    void *pa = aligned_alloc(64, (par_qnn_block_bytes(av, ks, kcp) + 63) & ~(size_t)63);
    void *ps = aligned_alloc(64, (bb_sc * nb_sc + 63) & ~(size_t)63);
    for (size_t i = 0; i < MR * ks * row; i++) amem[i] = (uint8_t)rng();
    memset(zero, zx, row);
    for (size_t i = 0; i < NR * ks * kc; i++) w[i] = (int8_t)rint_in(-128, 127);
    for (size_t j = 0; j < nc; j++) {
        bias[j] = rint_in(-20000, 20000);
        scale[j] = (float)(1.0 / (60.0 * sqrt((double)(kc * ks))) * (0.5 + (rng() % 100) / 100.0));
    }
    if (rng() % 5 == 0) /* products far outside int16 and int32 after conversion: the saturating paths */
        for (size_t j = 0; j < nc; j++) scale[j] *= 1e4f * (float)(1 + rng() % 1000);
    for (size_t i = 0; i < 8; i++) rowcorr[i] = rint_in(-5000, 5000);
    /* half the calls with a row's taps back to back in memory, as a convolution's kernel row is in NHWC (the panel
     * packs such runs as one copy) */
    const int adjacent = rng() % 2;
    for (size_t t = 0; t < ks; t++)
        for (size_t i = 0; i < MR; i++) {
            size_t r = i < mr ? i : mr - 1;
            a[t * MR + i] = rng() % 6 == 0 ? zero : adjacent ? amem + r * ks * row + t * kc : amem + (t * MR + r) * row;
        }
    wsrc src = {w, ks, kc};
    par_qnn_pack_gemm(av, ks, kc, kcp, 0, nc, bias, wget, &src, pa);
    for (size_t b = 0; b < nb_sc; b++) {
        size_t n0 = b * sc->nr, cols = nc - n0 < sc->nr ? nc - n0 : sc->nr;
        par_qnn_pack_gemm(sc, ks, kc, kcp, n0, cols, bias + n0, wget, &src, (uint8_t *)ps + b * bb_sc);
    }
    const int32_t *rc = rng() % 2 ? rowcorr : NULL;
    rq_bound(&rq, scale, nc);
    memset(c1, 0x5A, MR * (NR + 5));
    memset(c2, 0x5A, MR * (NR + 5));
    av->igemm(mr, nc, kcp, ks, a, a_off, zero, pa, rc, c1, NR + 5, scale, &rq);
    for (size_t b = 0; b < nb_sc; b++) {
        size_t n0 = b * sc->nr, cols = nc - n0 < sc->nr ? nc - n0 : sc->nr;
        sc->igemm(mr, cols, kcp, ks, a, a_off, zero, (uint8_t *)ps + b * bb_sc, rc, c2 + n0, NR + 5, scale + n0, &rq);
    }
    size_t bad = 0;
    for (size_t i = 0; i < MR * (NR + 5); i++) bad += c1[i] != c2[i]; /* the tile equal, the rest untouched in both */
    *checked += mr * nc;
    /* The panel path on the same data: the taps gathered and widened back to back (pack_a), the weights packed on the
     * flat k = t * kc + k, then gemm16. */
    size_t kpanel = (ks * kc + 3) & ~(size_t)3, stride = (kpanel + 16 + 15) & ~(size_t)15, pbad = 0;
    if (av->gemm16 && kpanel + 32 <= QNN_PANEL_K) {
        /* two column blocks, the second the same as the first: NR + nc columns in one call */
        const size_t bb = par_qnn_block_bytes(av, 1, kpanel), cs3 = 2 * NR + 5;
        int16_t *panel = aligned_alloc(64, sizeof(int16_t) * MR * stride);
        uint8_t *pw = aligned_alloc(64, (2 * bb + 63) & ~(size_t)63), *c3 = malloc(MR * cs3);
        float scale2[64] = {0};
        wsrc flat = {w, 1, ks * kc};
        par_qnn_pack_gemm(av, 1, ks * kc, kpanel, 0, nc, bias, wget, &flat, pw);
        memcpy(pw + bb, pw, bb);
        memcpy(scale2, scale, sizeof(float) * nc);
        memcpy(scale2 + NR, scale, sizeof(float) * nc);
        memset(c3, 0x5A, MR * cs3);
        av->pack_a(ks, kc, a, a_off, zero, panel, stride);
        av->gemm16(mr, NR + nc, kpanel, panel, stride, pw, bb, rc, c3, cs3, scale2, &rq);
        for (size_t i = 0; i < MR; i++)
            for (size_t j = 0; j < cs3; j++) {
                uint8_t want = i < mr && j < nc ? c2[i * (NR + 5) + j]
                               : i < mr && j >= NR && j < NR + nc ? c2[i * (NR + 5) + j - NR]
                               : i < mr && j < NR ? c3[i * cs3 + j] /* the first block's zero columns */
                                                  : 0x5A;
                pbad += c3[i * cs3 + j] != want;
            }
        free(panel), free(pw), free(c3);
        *checked += 2 * mr * nc;
    }
    if (bad || pbad)
        fprintf(stderr, "\n  avx2 != scalar: mr %zu nc %zu kc %zu ks %zu zx %d zp %d two %d: %zu bytes (igemm), %zu "
                "(panel)\n", mr, nc, kc, ks, (int)zx, (int)model.zp, (int)model.two, bad, pbad);
    free(amem), free(zero), free(c1), free(c2), free(w), free(a), free(pa), free(ps);
    return bad + pbad != 0;
}

static size_t avx2_vs_scalar_dw(const qnn_ukernels *av, const qnn_ukernels *sc, size_t *checked, uint8_t *probe)
{
    static const int32_t ZP[] = {0, 128, 255};
    static const size_t KS[] = {1, 2, 3, 4, 9, 9, 9, 25};
    size_t ch = 1 + rng() % 100, ks = KS[rng() % (sizeof KS / sizeof KS[0])], npix = 1 + rng() % 4;
    size_t cp = par_qnn_dw_channels(av, ch), cs = ch + rng() % 5; /* >= the scalar set's */
    rqm model = rqm_random(rng() % 4 == 0, 0);
    model.zp = ZP[rng() % 3];
    if (model.zp < model.lo) model.lo = model.zp;
    if (model.zp > model.hi) model.hi = model.zp;
    qnn_rq rq = rq_of(&model);
    uint8_t *x = malloc(npix * ks * cp + 64), *y1 = malloc(npix * cs + 32), *y2 = malloc(npix * cs + 32);
    int32_t *w1 = aligned_alloc(64, sizeof(int32_t) * cp * (ks + 1));
    int32_t *w2 = aligned_alloc(64, sizeof(int32_t) * cp * (ks + 1));
    float *scale = calloc(cp, sizeof(float)), *scale2 = calloc(cp, sizeof(float));
    const uint8_t **a = malloc(sizeof *a * npix * ks);
    for (size_t i = 0; i < npix * ks * cp + 64; i++) x[i] = (uint8_t)rng();
    memset(w1, 0, sizeof(int32_t) * cp * (ks + 1));
    memset(w2, 0, sizeof(int32_t) * cp * (ks + 1));
    const size_t cp2 = par_qnn_dw_channels(sc, ch);
    for (size_t c = 0; c < ch; c++) {
        size_t s1 = par_qnn_dw_slot(av, c), s2 = par_qnn_dw_slot(sc, c);
        w1[s1] = w2[s2] = rint_in(-60000, 60000) - 128 * 100;
        scale[s1] = scale2[s2] = (float)(0.0005 + 0.002 * (rng() % 100) / 100.0);
        for (size_t t = 0; t < ks; t++) {
            int32_t v = rint_in(-255, 255);
            par_qnn_dw_put(av, w1, cp, t, c, v);
            par_qnn_dw_put(sc, w2, cp2, t, c, v);
        }
    }
    for (size_t p = 0; p < npix * ks; p++) a[p] = x + (rng() % (npix * ks)) * cp;
    memset(y1, 0x5A, npix * cs + 32);
    memset(y2, 0x5A, npix * cs + 32);
    rq_bound(&rq, scale, cp);
    av->dw(npix, ch, ks, a, w1, y1, cs, scale, &rq);
    sc->dw(npix, ch, ks, a, w2, y2, cs, scale2, &rq);
    size_t bad = 0;
    for (size_t i = 0; i < npix * cs + 32; i++) bad += y1[i] != y2[i];
    *checked += npix * ch;
    if (model.zp == 128 && !model.two) memcpy(probe, y1, ch < 16 ? ch : 16);
    if (bad)
        fprintf(stderr, "\n  dw avx2 != scalar: ch %zu ks %zu npix %zu zp %d: %zu bytes\n", ch, ks, npix, (int)model.zp,
                bad);
    free(x), free(y1), free(y2), free(w1), free(w2), free(scale), free(scale2), free(a);
    return bad != 0;
}

static void test_avx2_vs_scalar(void)
{
    const qnn_ukernels *av = par_qnn_ukernels(QNN_ISA_AVX2), *sc = par_qnn_ukernels(QNN_ISA_SCALAR);
    if (!av) PAR_TEST_SKIP("no AVX2 on this CPU");
    CU_ASSERT_EQUAL_FATAL(av->mr, sc->mr); /* the indirection rows are shared */
    rng_seed(300);
    size_t fails = 0, checked = 0;
    for (int i = 0; i < 400; i++) fails += avx2_vs_scalar_igemm(av, sc, &checked);
    uint8_t probe[16] = {0};
    size_t dfails = 0, dchecked = 0, varied_probes = 0;
    for (int i = 0; i < 300; i++) {
        memset(probe, 0, sizeof probe);
        dfails += avx2_vs_scalar_dw(av, sc, &dchecked, probe);
        varied_probes += varied(probe, 16);
    }
    CU_ASSERT_EQUAL(fails, 0);
    CU_ASSERT_EQUAL(dfails, 0);
    CU_ASSERT(checked > 5000);
    CU_ASSERT(dchecked > 10000);
    CU_ASSERT(varied_probes > 20); /* outputs that vary: a kernel writing constants would pass the comparison */
}

/* Every set's quantize kernel against the shared body (the definition), byte for byte: ties at odd and even zero
 * points, NaN, infinities, huge and subnormal values, signed zeros, lengths around the vector blocks. */
static void test_quantize_sets(void)
{
    static const float SPECIAL[] = {NAN, -NAN, INFINITY, -INFINITY, 3e38f, -3e38f, 1e-40f, -1e-40f, 0.0f, -0.0f};
    static const double ZP[] = {0, 1, 127, 128, 255};
    float x[80];
    uint8_t want[80], got[96];
    size_t checked = 0;
    for (int isa = 0; isa <= QNN_ISA_NEONDOT; isa++) {
        const qnn_ukernels *uk = par_qnn_ukernels((qnn_isa)isa);
        if (!uk) continue;
        for (int r = 0; r < 200; r++) {
            size_t n = 1 + rng() % 70;
            double scale = 0.001 + (rng() % 1000) / 20000.0, zp = ZP[rng() % 5];
            for (size_t i = 0; i < n; i++) {
                uint32_t k = rng() % 8;
                x[i] = k == 0 ? SPECIAL[rng() % 10]
                       : k < 3 ? (float)(((double)(int32_t)(rng() % 600) - 300.0 + 0.5) * scale) /* ties */
                               : (float)(((double)(rng() % 100000) / 100000.0 - 0.5) * 600.0 * scale);
            }
            memset(got, 0xA5, sizeof got);
            qnn_quantize_body(n, x, want, 1.0 / scale, zp);
            uk->quantize(n, x, got, 1.0 / scale, zp);
            size_t bad = 0;
            for (size_t i = 0; i < n; i++) bad += got[i] != want[i];
            for (size_t i = n; i < sizeof got; i++) bad += got[i] != 0xA5;
            CU_ASSERT_EQUAL(bad, 0);
            checked += n;
        }
    }
    CU_ASSERT(checked > 1000);
}

/* The sets' 3-channel NCHW -> NHWC (an RGB input) against the definition, sizes around its 16-pixel block. */
static void test_nhwc3(void)
{
    size_t sets = 0;
    for (int isa = 0; isa <= QNN_ISA_NEONDOT; isa++) {
        const qnn_ukernels *uk = par_qnn_ukernels((qnn_isa)isa);
        if (!uk || !uk->nhwc3) continue;
        sets++;
        for (size_t hw = 1; hw <= 70; hw += hw < 20 ? 1 : 17) {
            uint8_t x[3 * 80], y[3 * 80 + 8];
            for (size_t i = 0; i < 3 * hw; i++) x[i] = (uint8_t)rng();
            memset(y, 0xA5, sizeof y);
            uk->nhwc3(hw, x, y);
            size_t bad = 0;
            for (size_t i = 0; i < hw; i++)
                for (size_t c = 0; c < 3; c++) bad += y[3 * i + c] != x[c * hw + i];
            for (size_t i = 3 * hw; i < sizeof y; i++) bad += y[i] != 0xA5;
            CU_ASSERT_EQUAL(bad, 0);
        }
    }
    if (!sets) PAR_TEST_SKIP("no kernel set of this CPU has its own nhwc3");
}

/* The AVX2 int8 peak loop runs and gives a rate; the micro-benchmark "peak" follows the selected kernel set. */
static void test_avx2_peak(void)
{
    if (!par_qnn_ukernels(QNN_ISA_AVX2)) PAR_TEST_SKIP("no AVX2 on this CPU");
    double v = 0;
#if defined(__x86_64__)
    v = par_qnn_avx2_peak(20000);
#endif
    CU_ASSERT(v > 0 && isfinite(v));
    const par_backend *be = par_backend_qnnpack();
    void *ctx = NULL;
    par_msg m = {{0}};
    CU_ASSERT_FATAL(be->init(&ctx, &m) == PAR_OK);
    par_set_knob_fn knob = (par_set_knob_fn)be->get_proc(ctx, PAR_PROC_SET_KNOB);
    par_microbench_fn mb = (par_microbench_fn)be->get_proc(ctx, PAR_PROC_MICROBENCH);
    char unit[16];
    CU_ASSERT_EQUAL(knob(ctx, "kernels", "scalar", &m), PAR_OK);
    CU_ASSERT_EQUAL(mb(ctx, "peak", &v, unit, sizeof unit, &m), PAR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "scalar"));
    CU_ASSERT_EQUAL(knob(ctx, "kernels", "avx2", &m), PAR_OK);
    v = 0;
    CU_ASSERT_EQUAL(mb(ctx, "peak", &v, unit, sizeof unit, &m), PAR_OK);
    CU_ASSERT(v > 0 && isfinite(v));
    CU_ASSERT_STRING_EQUAL(unit, "GOP/s");
    be->destroy(ctx);
}

/* ---------------------------------------------------------------------------------------------------------------
 * qb4w (linear_8da4w): every set against qnn_kernels.h's arithmetic restated on the unpacked op weights (low nibble
 * first, sign-extended), bit for bit: packing, nibble order, sign extension, block sums and scales, the zero point,
 * the f32 epilogue's order; outputs past nc and mr untouched.
 * ------------------------------------------------------------------------------------------------------------- */
static int check_qb4w(const qnn_ukernels *uk, size_t mr, size_t nc, size_t k, size_t block, size_t *checked)
{
    enum { NR = QNN_QB4W_NR, MR = QNN_QB4W_MR, CS = NR + 3 };
    const size_t kc = (k + 7) & ~(size_t)7, nb = kc / block;
    size_t o_wsum, o_scale, o_bias, total;
    par_qnn_qb4w_offsets(kc, nb, &o_wsum, &o_scale, &o_bias, &total);
    uint8_t *w = malloc(nc * k / 2 + 1), *a = calloc(MR * kc + 8, 1), *packed = aligned_alloc(64, total);
    float *sc = malloc(sizeof(float) * nc * (k / block) + 4), bias[NR], sx[MR], c[MR * CS];
    int32_t zp[MR];
    for (size_t i = 0; i < nc * k / 2; i++) w[i] = (uint8_t)rng();
    for (size_t i = 0; i < nc * (k / block); i++) sc[i] = (float)(1e-3 * (1 + rng() % 1000));
    for (size_t j = 0; j < NR; j++) bias[j] = (float)((int32_t)(rng() % 2001) - 1000) * 1e-3f;
    for (size_t i = 0; i < MR; i++) {
        zp[i] = rint_in(0, 255);
        sx[i] = (float)(1e-3 * (1 + rng() % 1000));
        for (size_t kk = 0; kk < k; kk++) a[i * kc + kk] = (uint8_t)rng();
    }
    memset(packed, 0, total);
    par_qnn_pack_qb4w(k, kc, block, 0, nc, w, sc, bias, packed);
    memset(c, 0xA5, sizeof c);
    uk->qb4w(mr, nc, kc, block, a, kc, zp, sx, packed, c, CS);
    size_t fails = 0;
    for (size_t i = 0; i < MR; i++)
        for (size_t j = 0; j < CS; j++) {
            uint32_t got;
            memcpy(&got, &c[i * CS + j], 4);
            if (i >= mr || j >= nc) {
                fails += got != 0xA5A5A5A5u;
                continue;
            }
            float f = 0.0f;
            for (size_t b = 0; b < k / block; b++) {
                int32_t acc = 0;
                for (size_t kk = b * block; kk < (b + 1) * block; kk++) {
                    const int n = kk % 2 ? w[j * (k / 2) + kk / 2] >> 4 : w[j * (k / 2) + kk / 2] & 15;
                    acc += ((int32_t)a[i * kc + kk] - zp[i]) * (n >= 8 ? n - 16 : n);
                }
                const float t = (float)acc * sc[j * (k / block) + b];
                f = f + t;
            }
            const float t = f * sx[i];
            const float want = t + bias[j];
            uint32_t wb;
            memcpy(&wb, &want, 4);
            fails += got != wb;
            ++*checked;
        }
    if (fails)
        fprintf(stderr, "\n  qb4w %s: mr %zu nc %zu k %zu block %zu: %zu differ\n", uk->name, mr, nc, k, block, fails);
    free(w), free(a), free(packed), free(sc);
    return fails == 0;
}

static void qb4w_all(qnn_isa isa)
{
    const qnn_ukernels *uk = par_qnn_ukernels(isa);
    if (!uk)
        PAR_TEST_SKIP(isa == QNN_ISA_VNNI      ? "no AVX-512 VNNI on this CPU"
                      : isa == QNN_ISA_AVX2    ? "no AVX2 on this CPU"
                      : isa == QNN_ISA_NEONDOT ? "no NEON dot product on this CPU"
                                               : "no NEON on this CPU");
    rng_seed(300 + (uint64_t)isa);
    static const size_t KB[][2] = {{8, 8}, {16, 8}, {32, 32}, {64, 32}, {96, 32}, {128, 64}, {256, 128}, {512, 32},
                                   {40, 40}, {2, 2}, {6, 6}, {18, 6}, {20, 10}, {64, 2}};
    size_t checked = 0, fails = 0;
    for (size_t kb = 0; kb < sizeof KB / sizeof KB[0]; kb++) {
        if (KB[kb][1] % 8 && isa != QNN_ISA_SCALAR) continue; /* the SIMD kernels take blocks of 8 k's */
        for (size_t mr = 1; mr <= QNN_QB4W_MR; mr++)
            for (size_t nc = 1; nc <= QNN_QB4W_NR; nc += (nc < 3 ? 1 : 5))
                fails += !check_qb4w(uk, mr, nc, KB[kb][0], KB[kb][1], &checked);
    }
    CU_ASSERT_EQUAL(fails, 0);
    CU_ASSERT(checked > 1000);
}

static void test_qb4w_scalar(void) { qb4w_all(QNN_ISA_SCALAR); }
static void test_qb4w_avx2(void) { qb4w_all(QNN_ISA_AVX2); }
static void test_qb4w_vnni(void) { qb4w_all(QNN_ISA_VNNI); }
static void test_qb4w_neon(void) { qb4w_all(QNN_ISA_NEON); }
static void test_qb4w_neondot(void) { qb4w_all(QNN_ISA_NEONDOT); }

/* ---------------------------------------------------------------------------------------------------------------
 * 16a8w GEMM: every set against sum_k x w + bias in int64 (asserted to fit int32, as the reference requires) and
 * par_requant_fp32 to [-32768, 32767], bit for bit; outputs past nc and mr untouched. Operand modes: 0 full range
 * with a ratio that saturates most outputs, 1 small integers at ratio 1/2 (every odd accumulator a tie), 2 every
 * product near +2^22 (|acc| up to 2^31 - 2^22, where (float)acc rounds), 3 full range at a ratio that keeps the
 * outputs inside int16.
 * ------------------------------------------------------------------------------------------------------------- */
static int check_s16(qnn_s16_gemm_fn fn, const char *name, size_t mr, size_t nc, size_t k, int mode,
                     size_t *checked)
{
    enum { NR = QNN_S16_NR, MR = QNN_S16_MR, CS = NR + 3 };
    const size_t kc = (k + 1) & ~(size_t)1, astride = kc + 1; /* odd stride: rows at odd element offsets */
    int8_t *w = malloc(NR * k + 1);
    int16_t *a = calloc(MR * astride + 2, sizeof *a), c[MR * CS];
    void *packed = aligned_alloc(64, par_qnn_s16_block_bytes(kc));
    int32_t bias[NR];
    float scale[NR];
    for (size_t i = 0; i < NR * k; i++)
        w[i] = (int8_t)(mode == 2 ? rint_in(-128, -120) : mode == 1 ? rint_in(-8, 7) : rint_in(-128, 127));
    for (size_t j = 0; j < NR; j++) {
        bias[j] = mode == 2 ? 0 : rint_in(-1000, 1000);
        scale[j] = mode == 1 ? 0.5f : mode == 0 ? 0x1p-7f : mode == 2 ? 1.45e-5f : (float)(0x1p-22 * (1 + rng() % 64));
    }
    for (size_t i = 0; i < MR; i++)
        for (size_t kk = 0; kk < kc; kk++)
            a[1 + i * astride + kk] = kk >= k ? 0
                                      : (int16_t)(mode == 2   ? rint_in(-32768, -32700)
                                                  : mode == 1 ? rint_in(-64, 63)
                                                              : rint_in(-32768, 32767));
    memset(packed, 0, par_qnn_s16_block_bytes(kc));
    int16_t *w16 = malloc(sizeof *w16 * (NR * k + 1));
    for (size_t i = 0; i < NR * k; i++) w16[i] = w[i];
    par_qnn_s16_pack(k, kc, 0, nc, w16, bias, scale, packed);
    free(w16);
    memset(c, 0x5A, sizeof c);
    fn(mr, nc, kc, a + 1, astride, packed, c, CS);
    size_t fails = 0;
    for (size_t i = 0; i < MR; i++)
        for (size_t j = 0; j < CS; j++) {
            if (i >= mr || j >= nc) {
                fails += (uint16_t)c[i * CS + j] != 0x5A5A;
                continue;
            }
            int64_t acc = bias[j];
            for (size_t kk = 0; kk < k; kk++) acc += (int64_t)a[1 + i * astride + kk] * w[j * k + kk];
            CU_ASSERT_FATAL(acc >= INT32_MIN && acc <= INT32_MAX);
            par_requant_params p;
            par_msg m;
            CU_ASSERT_FATAL(par_requant_params_init(&p, PAR_REQUANT_FP32, (double)scale[j], 0, -32768, 32767, &m) ==
                            PAR_OK);
            fails += c[i * CS + j] != par_requant_fp32(acc, &p);
            ++*checked;
        }
    if (fails) fprintf(stderr, "\n  s16 %s: mr %zu nc %zu k %zu mode %d: %zu differ\n", name, mr, nc, k, mode, fails);
    free(w), free(a), free(packed);
    return fails == 0;
}

static void s16_all(qnn_isa isa)
{
    qnn_s16_gemm_fn fn = par_qnn_s16_gemm_4x16__scalar;
#if !defined(__aarch64__)
    if (isa == QNN_ISA_NEON) PAR_TEST_SKIP("an aarch64 set");
#endif
#if defined(__x86_64__)
    if (isa != QNN_ISA_SCALAR && !par_qnn_ukernels(isa))
        PAR_TEST_SKIP(isa == QNN_ISA_VNNI ? "no AVX-512 VNNI on this CPU" : "no AVX2 on this CPU");
    if (isa == QNN_ISA_AVX2) fn = par_qnn_s16_gemm_4x16c2__avx2;
    if (isa == QNN_ISA_VNNI) fn = par_qnn_s16_gemm_4x16c2__avx512vnni;
#elif defined(__aarch64__)
    if (isa == QNN_ISA_AVX2 || isa == QNN_ISA_VNNI) PAR_TEST_SKIP("an x86 set");
    if (isa != QNN_ISA_SCALAR && !par_qnn_ukernels(isa)) PAR_TEST_SKIP("no NEON on this CPU");
    if (isa == QNN_ISA_NEON) fn = par_qnn_s16_gemm_4x16__neon;
#else
    if (isa != QNN_ISA_SCALAR) PAR_TEST_SKIP("an x86 set");
#endif
    rng_seed(400 + (uint64_t)isa);
    static const size_t KS[] = {1, 2, 3, 8, 17, 64, 100, 256, 511};
    size_t checked = 0, fails = 0;
    for (int mode = 0; mode < 4; mode++)
        for (size_t ki = 0; ki < sizeof KS / sizeof KS[0]; ki++)
            for (size_t mr = 1; mr <= QNN_S16_MR; mr++)
                for (size_t nc = 1; nc <= QNN_S16_NR; nc += (nc < 3 ? 1 : 6))
                    fails += !check_s16(fn, isa == QNN_ISA_SCALAR ? "scalar" : isa == QNN_ISA_AVX2 ? "avx2"
                                                            : isa == QNN_ISA_VNNI ? "vnni" : "neon",
                                        mr, nc, KS[ki], mode, &checked);
    CU_ASSERT_EQUAL(fails, 0);
    CU_ASSERT(checked > 5000);
}

static void test_s16_scalar(void) { s16_all(QNN_ISA_SCALAR); }
static void test_s16_avx2(void) { s16_all(QNN_ISA_AVX2); }
static void test_s16_vnni(void) { s16_all(QNN_ISA_VNNI); }
static void test_s16_neon(void) { s16_all(QNN_ISA_NEON); }

static const CU_TestInfo tests[] = {
    {"igemm scalar vs model, all remainders", test_igemm_scalar},
    {"igemm avx2 vs model, all remainders", test_igemm_avx2},
    {"igemm vnni vs model, all remainders", test_igemm_vnni},
    {"depthwise scalar vs model", test_dw_scalar},
    {"depthwise avx2 vs model", test_dw_avx2},
    {"depthwise vnni vs model", test_dw_vnni},
    {"avx2 vs scalar byte for byte, random shapes and zero points", test_avx2_vs_scalar},
    {"avx2 int8 peak loop and the peak micro-benchmark's set", test_avx2_peak},
    {"nchw -> nhwc of a 3-channel image", test_nhwc3},
    {"quantize kernels against the shared body, specials and ties", test_quantize_sets},
    {"qb4w scalar vs the op's arithmetic, bit for bit", test_qb4w_scalar},
    {"qb4w avx2 vs the op's arithmetic, bit for bit", test_qb4w_avx2},
    {"qb4w vnni vs the op's arithmetic, bit for bit", test_qb4w_vnni},
    {"qb4w neon vs the op's arithmetic, bit for bit", test_qb4w_neon},
    {"qb4w neondot vs the op's arithmetic, bit for bit", test_qb4w_neondot},
    {"16a8w gemm scalar vs int64 sum and fp32 requantization", test_s16_scalar},
    {"16a8w gemm avx2 vs int64 sum and fp32 requantization", test_s16_avx2},
    {"16a8w gemm vnni vs int64 sum and fp32 requantization", test_s16_vnni},
    {"16a8w gemm neon vs int64 sum and fp32 requantization", test_s16_neon},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("qnnpack_kernels", tests)
