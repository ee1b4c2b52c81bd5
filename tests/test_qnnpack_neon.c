/*
 * test_qnnpack_neon.c - the qnnpack backend's aarch64 kernel sets (NEON, NEON dot product) against the scalar set,
 * byte for byte (the scalar set is itself checked against the fp32 model in test_qnnpack_kernels.c):
 *   - igemm: whole GEMMs tiled as the conv driver tiles them, each set packing its own weights from the same int8
 *     values, on random shapes: M not a multiple of MR (mr < MR), N not a multiple of NR (nc < NR), kc not a
 *     multiple of 4, 8 or 16, several taps, padding taps reading the zero-point row, input zero points 0, 128 and
 *     255, weight zero points 0 and not (row corrections), one and two requantization stages, saturating clamps;
 *     bytes past the output columns untouched;
 *   - the dot-product packing's bias + 128 sum w taken modulo 2^32: a bias near INT32_MAX that wraps when packed;
 *   - depthwise and vadd (every channel count and length remainder), vadd's ties included;
 *   - the selection: `kernels=neon|neondot` accepted where the CPU has the set, UNSUPPORTED where it lacks it (as
 *     `vnni` on a CPU without VNNI), `auto` picks the best, describe names the set.
 * A set this CPU lacks (or every set, on a build that is not aarch64) is reported as skipped, never passed.
 * Deterministic seeds; a failing shape prints its parameters and seed.
 */
#include <math.h>
#include <stdlib.h>

#include "backends/qnnpack/qnn_kernels.h"
#include "core/parity_backend.h"
#include "core/requant.h"
#include "tmain.h"

const par_backend *par_backend_qnnpack(void);

static uint64_t rng_state;
static void rng_seed(uint64_t s)
{
    rng_state = s * 0x9e3779b97f4a7c15u + 1;
}
static uint32_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}
static int32_t rint_in(int32_t lo, int32_t hi)
{
    return lo + (int32_t)(rng() % (uint32_t)(hi - lo + 1));
}

static int varied(const uint8_t *v, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (v[i] != v[0]) return 1;
    return 0;
}

/* The set under test, or a skip saying why it is absent. */
static const qnn_ukernels *set_or_skip(qnn_isa isa, const char **why)
{
    const qnn_ukernels *uk = par_qnn_ukernels(isa);
#if defined(__aarch64__)
    *why = isa == QNN_ISA_NEONDOT ? "no NEON dot product on this CPU" : "no NEON on this CPU";
#else
    *why = "not an aarch64 build";
#endif
    return uk;
}

/* ---------------------------------------------------------------------------------------------------------------
 * igemm: one GEMM of M x N, K = kc per tap, ks taps, driven as qnn_conv.c drives it
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct gemm_case {
    size_t M, N, kc, ks;
    const uint8_t **rows; /* [M][ks]: a row pointer (before a_off) or `zero` */
    size_t a_off;
    const uint8_t *zero;
    const int8_t *w;      /* [N][ks][kc] */
    const int32_t *bias;  /* [N] */
    const int32_t *rowcorr; /* [M] or NULL */
    const float *scale;   /* [N] */
    qnn_rq rq;
} gemm_case;

typedef struct wsrc {
    const int8_t *w;
    size_t ks, kc;
} wsrc;

static int32_t wget(const void *ctx, size_t n, size_t t, size_t k)
{
    const wsrc *s = ctx;
    return s->w[(n * s->ks + t) * s->kc + k];
}

/* Runs the case with set uk into y (row stride ldy). Returns 0 on allocation failure. */
static int gemm_run(const qnn_ukernels *uk, const gemm_case *g, uint8_t *y, size_t ldy)
{
    size_t MR = uk->mr, NR = uk->nr, kcp = (g->kc + 3) & ~(size_t)3, bb = par_qnn_block_bytes(uk, g->ks, kcp);
    void *packed = aligned_alloc(64, (bb + 63) & ~(size_t)63);
    const uint8_t **ind = malloc(sizeof *ind * g->ks * MR);
    float *sc = malloc(sizeof(float) * NR);
    int32_t *rc = malloc(sizeof(int32_t) * MR);
    if (!packed || !ind || !sc || !rc) {
        free(packed), free(ind), free(sc), free(rc);
        return 0;
    }
    wsrc src = {g->w, g->ks, g->kc};
    for (size_t n0 = 0; n0 < g->N; n0 += NR) {
        size_t nc = g->N - n0 < NR ? g->N - n0 : NR;
        /* columns n0 + j: the source shifted to column n0 */
        src.w = g->w + n0 * g->ks * g->kc;
        par_qnn_pack_gemm(uk, g->ks, g->kc, kcp, 0, nc, g->bias + n0, wget, &src, packed);
        src.w = g->w;
        for (size_t j = 0; j < NR; j++) sc[j] = j < nc ? g->scale[n0 + j] : 1.0f;
        for (size_t m0 = 0; m0 < g->M; m0 += MR) {
            size_t mr = g->M - m0 < MR ? g->M - m0 : MR;
            for (size_t t = 0; t < g->ks; t++)
                for (size_t i = 0; i < MR; i++) ind[t * MR + i] = g->rows[(m0 + (i < mr ? i : mr - 1)) * g->ks + t];
            for (size_t i = 0; i < MR; i++) rc[i] = g->rowcorr && i < mr ? g->rowcorr[m0 + i] : 0;
            uk->igemm(mr, nc, kcp, g->ks, ind, g->a_off, g->zero, packed, g->rowcorr ? rc : NULL, y + m0 * ldy + n0,
                      ldy, sc, &g->rq);
        }
    }
    free(packed), free(ind), free(sc), free(rc);
    return 1;
}

/* Compares set uk with the scalar set on one random case; returns 1 when equal. *outputs counts bytes compared. */
static int gemm_compare(const qnn_ukernels *uk, size_t M, size_t N, size_t kc, size_t ks, int32_t zx, int32_t zw,
                        int two, int saturate, size_t *outputs, size_t *varied_cases, size_t *eligible)
{
    const qnn_ukernels *ref = par_qnn_ukernels(QNN_ISA_SCALAR);
    size_t kcp = (kc + 3) & ~(size_t)3, a_off = 3, nrows = M * ks, ldy = N + 5;
    uint8_t *amem = malloc(nrows * (kcp + a_off)), *zero = malloc(kcp + a_off);
    const uint8_t **rows = malloc(sizeof *rows * nrows);
    int8_t *w = malloc(N * ks * kc);
    int32_t *bias = malloc(sizeof(int32_t) * N), *rowcorr = malloc(sizeof(int32_t) * M);
    float *scale = malloc(sizeof(float) * N);
    uint8_t *y0 = malloc(M * ldy), *y1 = malloc(M * ldy);
    int ok = amem && zero && rows && w && bias && rowcorr && scale && y0 && y1;
    CU_ASSERT_FATAL(ok);
    for (size_t i = 0; i < nrows * (kcp + a_off); i++) amem[i] = (uint8_t)rng();
    memset(zero, zx, kcp + a_off);
    for (size_t i = 0; i < nrows; i++) rows[i] = (rng() % 7 == 3) ? zero : amem + i * (kcp + a_off);
    for (size_t i = 0; i < N * ks * kc; i++) { /* int8 weights around their zero point, both ends reached */
        int32_t v = zw + rint_in(-160, 160);
        w[i] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
    }
    /* The zero-point fold of qnn_conv.c: bias' = b - zx sum w + K zx zw, rowcorr = -zw sum x, so that the result
     * is b + sum (x - zx)(w - zw); b centres it (activations average 127.5). */
    for (size_t j = 0; j < N; j++) {
        int64_t s = 0;
        for (size_t i = 0; i < ks * kc; i++) s += w[j * ks * kc + i];
        int64_t sd = s - (int64_t)(ks * kc) * zw;
        bias[j] = (int32_t)(rint_in(-2000, 2000) - (127 - zx) * sd - zx * s + (int64_t)(ks * kc) * zx * zw);
        scale[j] = saturate ? (float)(0.01 + 0.02 * (rng() % 100) / 100.0)
                            : (float)(1.0 / (150.0 * sqrt((double)(kc * ks))) * (1 + (rng() % 100) / 100.0));
    }
    for (size_t m = 0; m < M; m++) {
        int32_t s = 0;
        for (size_t t = 0; t < ks; t++) {
            const uint8_t *p = rows[m * ks + t];
            if (p != zero) p += a_off;
            for (size_t k = 0; k < kc; k++) s += p[k];
        }
        rowcorr[m] = -zw * s;
    }
    int32_t zp = saturate ? rint_in(0, 255) : rint_in(100, 160), lo = rint_in(0, 20), hi = rint_in(235, 255);
    zp = zp < lo ? lo : zp > hi ? hi : zp;
    int32_t zp1 = rint_in(60, 200);
    gemm_case g = {M, N, kc, ks, rows, a_off, zero, w, bias, zw ? rowcorr : NULL, scale,
                   {(float)(lo - zp), (float)(hi - zp), zp, two, (float)-zp1, (float)(255 - zp1),
                    two ? (float)(0.4 + (rng() % 1000) / 1000.0) : 1.0f, 0}};
    memset(y0, 0xA5, M * ldy);
    memset(y1, 0xA5, M * ldy);
    CU_ASSERT_FATAL(gemm_run(ref, &g, y0, ldy) && gemm_run(uk, &g, y1, ldy));
    int eq = memcmp(y0, y1, M * ldy) == 0;
    for (size_t m = 0; m < M; m++)
        for (size_t j = N; j < ldy; j++) eq &= y1[m * ldy + j] == 0xA5; /* past the columns: untouched */
    if (!eq)
        fprintf(stderr, "\n  %s: M %zu N %zu kc %zu ks %zu zx %d zw %d two %d saturate %d differ from scalar\n",
                uk->name, M, N, kc, ks, zx, zw, two, saturate);
    *outputs += M * N;
    uint8_t *all = malloc(M * N);
    for (size_t m = 0; m < M; m++) memcpy(all + m * N, y0 + m * ldy, N);
    if (M * N >= 8 && !saturate) { /* enough outputs, in range: they must not all be equal */
        *varied_cases += varied(all, M * N);
        if (!varied(all, M * N))
            fprintf(stderr, "\n  all %zu outputs equal (%d): M %zu N %zu kc %zu ks %zu zx %d zw %d\n", M * N, all[0],
                    M, N, kc, ks, zx, zw);
        (*eligible)++;
    }
    free(all);
    free(amem), free(zero), free(rows), free(w), free(bias), free(rowcorr), free(scale), free(y0), free(y1);
    return eq;
}

static void igemm_vs_scalar(qnn_isa isa)
{
    const char *why;
    const qnn_ukernels *uk = set_or_skip(isa, &why);
    if (!uk) PAR_TEST_SKIP(why);
    rng_seed(500 + (uint64_t)isa);
    static const size_t KC[] = {1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 15, 16, 17, 20, 24, 31, 33, 64, 100};
    static const int32_t ZX[] = {0, 128, 255};
    size_t outputs = 0, cases = 0, with_variety = 0, eligible = 0, fails = 0;
    for (size_t ki = 0; ki < sizeof KC / sizeof KC[0]; ki++)
        for (size_t zi = 0; zi < 3; zi++) {
            /* M, N around the tile: below, at and past MR / NR */
            size_t M = 1 + (size_t)rint_in(0, (int32_t)(2 * uk->mr)), N = 1 + (size_t)rint_in(0, (int32_t)(2 * uk->nr));
            size_t ks = (ki + zi) % 4 == 0 ? 9 : 1 + (ki + zi) % 3;
            int32_t zw = (ki + zi) % 3 == 0 ? 0 : (ki % 2 ? -128 : 127);
            fails += !gemm_compare(uk, M, N, KC[ki], ks, ZX[zi], zw, (ki + zi) % 2, 0, &outputs, &with_variety,
                                   &eligible);
            cases++;
        }
    /* every remainder of the tile once, K = 13 */
    for (size_t M = 1; M <= uk->mr; M++)
        for (size_t N = 1; N <= uk->nr; N++) {
            fails += !gemm_compare(uk, M, N, 13, 2, (int32_t)((M * N) % 3 * 127), (N % 2) ? 5 : 0, N % 3 == 0, 0,
                                   &outputs, &with_variety, &eligible);
            cases++;
        }
    for (int i = 0; i < 10; i++) { /* saturating clamps at both ends */
        fails += !gemm_compare(uk, 2 * uk->mr + 1, 2 * uk->nr + 3, 40, 3, rint_in(0, 255), rint_in(-128, 127), i % 2,
                               1, &outputs, &with_variety, &eligible);
        cases++;
    }
    CU_ASSERT_EQUAL(fails, 0);
    CU_ASSERT(outputs > 5000);
    CU_ASSERT(cases > 80 && eligible > 50);
    CU_ASSERT_EQUAL(with_variety, eligible); /* equal outputs would prove nothing */
}

static void test_igemm_neon(void) { igemm_vs_scalar(QNN_ISA_NEON); }
static void test_igemm_neondot(void) { igemm_vs_scalar(QNN_ISA_NEONDOT); }

/* The dot-product packing adds 128 sum w to the bias modulo 2^32. Positive weights, small activations and a bias
 * near INT32_MAX that a row correction near INT32_MIN brings back: the packed bias wraps, the result must not. */
static void wrap_case(qnn_isa isa)
{
    const char *why;
    const qnn_ukernels *uk = set_or_skip(isa, &why);
    if (!uk) PAR_TEST_SKIP(why);
    const qnn_ukernels *ref = par_qnn_ukernels(QNN_ISA_SCALAR);
    enum { M = 5, N = 19, KC = 37, KS = 2 };
    static uint8_t amem[M * KS][KC], zero[KC + 8];
    static int8_t w[N * KS * KC];
    const uint8_t *rows[M * KS];
    int32_t bias[N], rowcorr[M];
    float scale[N];
    rng_seed(900);
    for (size_t i = 0; i < M * KS; i++) {
        for (size_t k = 0; k < KC; k++) amem[i][k] = (uint8_t)rint_in(0, 10);
        rows[i] = amem[i];
    }
    memset(zero, 0, sizeof zero);
    for (size_t i = 0; i < N * KS * KC; i++) w[i] = (int8_t)rint_in(100, 127);
    for (size_t j = 0; j < N; j++) {
        bias[j] = INT32_MAX - 10 * 127 * KS * KC - rint_in(0, 1000);
        scale[j] = (float)(1.0 / 1000.0);
    }
    for (size_t m = 0; m < M; m++) rowcorr[m] = -(INT32_MAX - 10 * 127 * KS * KC) + 40000 - rint_in(0, 60000);
    gemm_case g = {M, N, KC, KS, rows, 0, zero, w, bias, rowcorr, scale, {-128.0f, 127.0f, 128, 0, 0, 0, 1.0f, 0}};
    uint8_t y0[M * N], y1[M * N];
    memset(y0, 0, sizeof y0);
    memset(y1, 0, sizeof y1);
    CU_ASSERT_FATAL(gemm_run(ref, &g, y0, N) && gemm_run(uk, &g, y1, N));
    CU_ASSERT_EQUAL(memcmp(y0, y1, sizeof y0), 0);
    CU_ASSERT(varied(y0, sizeof y0));
    CU_ASSERT(y0[0] != 0 && y0[0] != 255); /* the case is in range, not clamped */
}

static void test_wrap_neon(void) { wrap_case(QNN_ISA_NEON); }
static void test_wrap_neondot(void) { wrap_case(QNN_ISA_NEONDOT); }

/* ---------------------------------------------------------------------------------------------------------------
 * depthwise and vadd
 * ------------------------------------------------------------------------------------------------------------- */
static void test_dw_neon(void)
{
    const char *why;
    const qnn_ukernels *uk = set_or_skip(QNN_ISA_NEON, &why);
    if (!uk) PAR_TEST_SKIP(why);
    const qnn_ukernels *ref = par_qnn_ukernels(QNN_ISA_SCALAR);
    rng_seed(600);
    size_t fails = 0, outputs = 0;
    for (size_t ch = 1; ch <= 70; ch += (ch < 34 ? 1 : 7))
        for (size_t ks = 1; ks <= 25; ks += (ks < 10 ? 1 : 15)) {
            enum { NPIX = 3 };
            size_t cp = (ch + 15) & ~(size_t)15, cs = ch + 3;
            uint8_t *x = malloc(NPIX * ks * cp), *y0 = malloc(NPIX * cs), *y1 = malloc(NPIX * cs);
            int32_t *w = aligned_alloc(64, (sizeof(int32_t) * cp * (ks + 1) + 63) & ~(size_t)63);
            float *scale = malloc(sizeof(float) * cp);
            const uint8_t *a[NPIX * 25];
            CU_ASSERT_FATAL(x && y0 && y1 && w && scale);
            for (size_t i = 0; i < NPIX * ks * cp; i++) x[i] = (uint8_t)rng();
            memset(w, 0, sizeof(int32_t) * cp * (ks + 1));
            for (size_t c = 0; c < ch; c++) {
                int32_t s = 0;
                for (size_t t = 0; t < ks; t++) {
                    int32_t v = rint_in(-255, 255); /* ws - zw spans 9 bits */
                    w[cp + t * cp + c] = (int32_t)(uint16_t)(int16_t)v;
                    s += v;
                }
                w[c] = rint_in(-3000, 3000) - 127 * s;
                scale[c] = (float)(0.0005 + 0.003 * (rng() % 100) / 100.0);
            }
            for (size_t p = 0; p < NPIX; p++)
                for (size_t t = 0; t < ks; t++) a[p * ks + t] = x + (p * ks + t) * cp;
            int32_t zp = rint_in(90, 170), zp1 = rint_in(60, 200), two = (int32_t)((ch + ks) % 2);
            qnn_rq rq = {(float)(rint_in(0, 20) - zp), (float)(rint_in(235, 255) - zp), zp, two, (float)-zp1,
                         (float)(255 - zp1), two ? 0.7f : 1.0f, 0};
            memset(y0, 0xA5, NPIX * cs);
            memset(y1, 0xA5, NPIX * cs);
            ref->dw(NPIX, ch, ks, a, w, y0, cs, scale, &rq);
            uk->dw(NPIX, ch, ks, a, w, y1, cs, scale, &rq);
            if (memcmp(y0, y1, NPIX * cs) != 0) {
                fprintf(stderr, "\n  dw neon: channels %zu taps %zu differ from scalar\n", ch, ks);
                fails++;
            }
            if (ch >= 8) CU_ASSERT(varied(y0, ch));
            outputs += NPIX * ch;
            free(x), free(y0), free(y1), free(w), free(scale);
        }
    CU_ASSERT_EQUAL(fails, 0);
    CU_ASSERT(outputs > 2000);
}

static void test_vadd_neon(void)
{
    const char *why;
    const qnn_ukernels *uk = set_or_skip(QNN_ISA_NEON, &why);
    if (!uk) PAR_TEST_SKIP(why);
    const qnn_ukernels *ref = par_qnn_ukernels(QNN_ISA_SCALAR);
    rng_seed(700);
    size_t fails = 0, outputs = 0, ties = 0;
    uint8_t a[300], b[300], y0[300], y1[300];
    for (int it = 0; it < 200; it++) {
        size_t n = it < 40 ? (size_t)it : (size_t)rint_in(0, 300);
        float sa = (float)(0.01 + 0.5 * (rng() % 1000) / 1000.0), sb = (float)(0.01 + 0.5 * (rng() % 1000) / 1000.0);
        if (it % 4 == 0) sb = sa; /* with so = 2 sa below: acc / 2^shift = (da + db) / 2, a tie when odd */
        float so = it % 4 == 0 ? 2 * sa : (float)(0.02 + 0.5 * (rng() % 1000) / 1000.0);
        par_requant_add_params ap;
        par_msg m;
        CU_ASSERT_FATAL(par_requant_add_params_init(&ap, PAR_REQUANT_FP32, sa, rint_in(0, 255), sb, rint_in(0, 255), so,
                                                    rint_in(0, 255), 0, 255, &m) == PAR_OK);
        qnn_add_params p = {ap.a_multiplier, ap.b_multiplier, ap.a_zero_point, ap.b_zero_point, ap.zero_point,
                            ap.shift};
        for (size_t i = 0; i < n; i++) a[i] = (uint8_t)rng(), b[i] = (uint8_t)rng();
        memset(y0, 0xA5, sizeof y0);
        memset(y1, 0xA5, sizeof y1);
        ref->vadd(n, a, b, y0, &p);
        uk->vadd(n, a, b, y1, &p);
        fails += memcmp(y0, y1, sizeof y0) != 0;
        outputs += n;
        for (size_t i = 0; i < n; i++) { /* count the exact ties the rounding rule decides */
            int32_t acc = p.ma * ((int32_t)a[i] - p.za) + p.mb * ((int32_t)b[i] - p.zb);
            ties += (acc & ((1 << p.shift) - 1)) == 1 << (p.shift - 1) && ((acc >> p.shift) & 1); /* odd: up */
        }
    }
    CU_ASSERT_EQUAL(fails, 0);
    CU_ASSERT(outputs > 20000);
    CU_ASSERT(ties > 100);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Selection through the knob
 * ------------------------------------------------------------------------------------------------------------- */
static void test_select(void)
{
    const par_backend *be = par_backend_qnnpack();
    void *ctx = NULL;
    par_msg m = {{0}};
    CU_ASSERT_FATAL(be->init(&ctx, &m) == PAR_OK);
    par_set_knob_fn knob = (par_set_knob_fn)be->get_proc(ctx, PAR_PROC_SET_KNOB);
    par_describe_fn desc = (par_describe_fn)be->get_proc(ctx, PAR_PROC_DESCRIBE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(knob);
    CU_ASSERT_PTR_NOT_NULL_FATAL(desc);
    char buf[256];
    static const struct {
        const char *name;
        qnn_isa isa;
    } S[] = {{"neon", QNN_ISA_NEON}, {"neondot", QNN_ISA_NEONDOT}};
    for (size_t i = 0; i < 2; i++) {
        par_status st = knob(ctx, "kernels", S[i].name, &m);
        if (par_qnn_ukernels(S[i].isa)) {
            CU_ASSERT_EQUAL(st, PAR_OK);
            desc(ctx, buf, sizeof buf);
            char want[64];
            snprintf(want, sizeof want, "kernels=%s;", S[i].name);
            CU_ASSERT_PTR_NOT_NULL(strstr(buf, want));
        } else {
            CU_ASSERT_EQUAL(st, PAR_UNSUPPORTED); /* as vnni on a CPU without VNNI */
            CU_ASSERT_PTR_NOT_NULL(strstr(m.text, S[i].name));
        }
    }
    CU_ASSERT_EQUAL(knob(ctx, "kernels", "auto", &m), PAR_OK);
    desc(ctx, buf, sizeof buf);
    char want[64];
    snprintf(want, sizeof want, "kernels=%s(auto)", par_qnn_ukernels_best()->name);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, want));
#if defined(__aarch64__)
    /* on aarch64 the best set is the dot-product one where the CPU has it, else NEON */
    CU_ASSERT_EQUAL(par_qnn_ukernels_best()->isa, par_qnn_ukernels(QNN_ISA_NEONDOT) ? QNN_ISA_NEONDOT : QNN_ISA_NEON);
#else
    CU_ASSERT_PTR_NULL(par_qnn_ukernels(QNN_ISA_NEON));
    CU_ASSERT_PTR_NULL(par_qnn_ukernels(QNN_ISA_NEONDOT));
#endif
    be->destroy(ctx);
}

static const CU_TestInfo tests[] = {
    {"igemm neon vs scalar, random shapes", test_igemm_neon},
    {"igemm neondot vs scalar, random shapes", test_igemm_neondot},
    {"igemm neon, bias near INT32_MAX", test_wrap_neon},
    {"igemm neondot, packed bias wraps mod 2^32", test_wrap_neondot},
    {"depthwise neon vs scalar", test_dw_neon},
    {"vadd neon vs scalar, ties", test_vadd_neon},
    {"kernels=neon|neondot selection", test_select},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("test_qnnpack_neon", tests)
