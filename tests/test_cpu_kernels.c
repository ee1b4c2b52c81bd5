/*
 * test_cpu_kernels.c - the cpu backend's compute kernels (backends/cpu/cpu_kernels.h) against naive double-precision
 * loops in this file, once per ISA (a test for an ISA this CPU lacks is reported as skipped): fully connected and activation GEMM over every M, N, K
 * remainder around the tile sizes, convolution (groups, strides, dilations, paddings, 1x1 GEMM path), depthwise
 * convolution (3x3, 5x5, other sizes, multipliers), every clamp. Outputs are also checked for writes outside the
 * result (guard values) and for bit-identical results with and without a 2-thread pool.
 * Tolerance, as the oracle derives it: an output of K products plus a bias computed in f32 with any summation order
 * is within gamma_{K+1} * (|b| + sum |w x|) of the exact value, gamma_n = n u / (1 - n u), u = 2^-24; clamping is
 * exact and monotone, so it cannot increase the difference. No timing here.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/cpu_ukernels.h"
#include "core/prng.h"
#include "cpu_isa_tests.h"
#include "tmain.h"

#define GUARD 8
static const float SENTINEL = 12345.5f;

static const float clamps[][2] = {{-INFINITY, INFINITY}, {0.0f, INFINITY}, {0.0f, 6.0f}, {-1.0f, 1.0f}};

static par_prng rng;

static void fill(float *v, size_t n)
{
    for (size_t i = 0; i < n; i++) v[i] = (float)(2.0 * par_prng_uniform(&rng) - 1.0);
}

static double gamma_n(double n)
{
    const double u = 0x1p-24;
    return n * u / (1.0 - n * u);
}

static double clampd(double v, float lo, float hi)
{
    if (v < lo) v = lo;
    if (v > hi) v = hi;
    return v;
}

/* One output against its exact value; counts failures and reports the first few. */
static int nfail;
static void check_one(float got, double exact, double absum, double terms, float lo, float hi, const char *what)
{
    const double want = clampd(exact, lo, hi);
    const double tol = gamma_n(terms + 1) * absum + 0x1p-24 * fabs(want);
    if (!(fabs((double)got - want) <= tol)) {
        if (nfail < 5) fprintf(stderr, "\n%s: got %.9g want %.9g tol %.3g\n", what, (double)got, want, tol);
        nfail++;
    }
}


/* ---- fully connected ---------------------------------------------------------------------------------------- */

static void run_fc_case(cpu_isa isa, int64_t m, int64_t n, int64_t k, int with_bias, int ci, pthreadpool_t pool)
{
    float *x = malloc(sizeof(float) * (size_t)(m * k)), *w = malloc(sizeof(float) * (size_t)(n * k));
    float *b = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)(m * n + GUARD));
    float *y1 = malloc(sizeof(float) * (size_t)(m * n));
    fill(x, (size_t)(m * k));
    fill(w, (size_t)(n * k));
    fill(b, (size_t)n);
    for (int64_t i = 0; i < m * n + GUARD; i++) y[i] = SENTINEL;
    char err[256] = "";
    cpu_fc *f = cpu_fc_create(k, n, w, with_bias ? b : NULL, clamps[ci][0], clamps[ci][1], isa, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    cpu_fc_run(f, m, x, y, NULL);
    char what[128];
    snprintf(what, sizeof what, "fc %s m=%lld n=%lld k=%lld clamp %d", cpu_isa_name(isa), (long long)m, (long long)n,
             (long long)k, ci);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double acc = with_bias ? b[j] : 0.0, absum = fabs(acc);
            for (int64_t kk = 0; kk < k; kk++) {
                acc += (double)x[i * k + kk] * w[j * k + kk];
                absum += fabs((double)x[i * k + kk] * w[j * k + kk]);
            }
            check_one(y[i * n + j], acc, absum, (double)k, clamps[ci][0], clamps[ci][1], what);
        }
    for (int g = 0; g < GUARD; g++) CU_ASSERT_EQUAL(y[m * n + g], SENTINEL);
    if (pool) {
        cpu_fc_run(f, m, x, y1, pool);
        CU_ASSERT_EQUAL(memcmp(y, y1, sizeof(float) * (size_t)(m * n)), 0);
    }
    cpu_fc_destroy(f);
    free(x);
    free(w);
    free(b);
    free(y);
    free(y1);
}

static void test_fc_remainders(void)
{
    par_prng_seed(&rng, 1);
    nfail = 0;
    for (int i = (int)g_isa; i == (int)g_isa; i++) {
        const cpu_isa isa = (cpu_isa)i;
        /* every M up to two tiles + 1 (tiles are at most 7 rows), N up to two 32-wide panels + 1, K around 4 */
        for (int64_t m = 1; m <= 15; m++)
            for (int64_t n = 1; n <= 65; n += (n < 40 ? 1 : 3))
                for (int64_t k = 1; k <= 9; k += (m % 2 ? 1 : 2))
                    run_fc_case(isa, m, n, k, (int)((m + n) % 2), (int)((m + n + k) % 4), NULL);
    }
    CU_ASSERT_EQUAL(nfail, 0);
}

static void test_fc_large_threads(void)
{
    par_prng_seed(&rng, 2);
    nfail = 0;
    pthreadpool_t pool = pthreadpool_create(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
    for (int i = (int)g_isa; i == (int)g_isa; i++) {
        run_fc_case((cpu_isa)i, 61, 130, 257, 1, 0, pool);
        run_fc_case((cpu_isa)i, 200, 33, 1000, 1, 2, pool);
        run_fc_case((cpu_isa)i, 3, 1500, 64, 0, 1, pool);
        run_fc_case((cpu_isa)i, 1, 17, 3, 1, 3, pool);
    }
    pthreadpool_destroy(pool);
    CU_ASSERT_EQUAL(nfail, 0);
}

static void test_fc_bad_args(void)
{
    char err[256] = "";
    float w[4] = {0};
    CU_ASSERT_PTR_NULL(cpu_fc_create(0, 4, w, NULL, -INFINITY, INFINITY, CPU_ISA_SCALAR, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "k = 0"));
    CU_ASSERT_PTR_NULL(cpu_fc_create(1, 4, NULL, NULL, -INFINITY, INFINITY, CPU_ISA_SCALAR, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "weights"));
    CU_ASSERT_PTR_NULL(cpu_fc_create(1, 4, w, NULL, 1.0f, 0.0f, CPU_ISA_SCALAR, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "clamp"));
    cpu_fc_destroy(NULL);
}

/* A GEMM micro-kernel called for one row gives the bits of that row in a call for two (the AVX-512 and AVX2 kernels
 * run a single row through a loop of their own: a classifier at batch 1), over N around the panel widths, K around
 * the unrolling and every clamp, and writes nothing past its nc columns. */
static void test_gemm_one_row(void)
{
    par_prng_seed(&rng, 7);
    const cpu_ukernel_set *uk = cpu_ukernels_for(g_isa);
    static const size_t ks[] = {1, 2, 3, 4, 5, 9, 64};
    int bad = 0;
    for (size_t n = 1; n <= 70; n++)
        for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
            for (int ci = 0; ci < 4; ci++) {
                const size_t k = ks[ki];
                float *a = malloc(sizeof(float) * 2 * k), *w = malloc(sizeof(float) * n * k);
                float *b = malloc(sizeof(float) * n), *c1 = malloc(sizeof(float) * (n + GUARD));
                float *c2 = malloc(sizeof(float) * 2 * n), *packed = cpu_alloc_floats(cpu_pack_gemm_size(n, k, uk->nr));
                CU_ASSERT_FATAL(a && w && b && c1 && c2 && packed);
                fill(a, 2 * k);
                fill(w, n * k);
                fill(b, n);
                cpu_pack_gemm_nk(n, k, uk->nr, w, k, b, packed);
                for (size_t j = 0; j < n + GUARD; j++) c1[j] = SENTINEL;
                const cpu_minmax mm = {clamps[ci][0], clamps[ci][1]};
                uk->gemm(1, n, k, a, k, packed, c1, n, &mm);
                uk->gemm(2, n, k, a, k, packed, c2, n, &mm);
                if (memcmp(c1, c2, sizeof(float) * n) != 0) bad++;
                for (size_t j = n; j < n + GUARD; j++) bad += c1[j] != SENTINEL;
                free(a), free(w), free(b), free(c1), free(c2), free(packed);
            }
    CU_ASSERT_EQUAL(bad, 0);
}

/* ---- activation x activation GEMM with strides ---------------------------------------------------------------- */

static void test_gemm_strided(void)
{
    par_prng_seed(&rng, 3);
    nfail = 0;
    pthreadpool_t pool = pthreadpool_create(2);
    for (int i = (int)g_isa; i == (int)g_isa; i++)
        for (int64_t m = 1; m <= 16; m += 3)
            for (int64_t n = 1; n <= 70; n += 5)
                for (int64_t k = 0; k <= 20; k += 4) {
                    const int64_t lda = k + 3, ldb = n + 2, ldc = n + 5;
                    float *a = malloc(sizeof(float) * (size_t)(m * lda + 1));
                    float *b = malloc(sizeof(float) * (size_t)(k * ldb + 1));
                    float *c = malloc(sizeof(float) * (size_t)(m * ldc));
                    float *c1 = malloc(sizeof(float) * (size_t)(m * ldc));
                    fill(a, (size_t)(m * lda + 1));
                    fill(b, (size_t)(k * ldb + 1));
                    for (int64_t q = 0; q < m * ldc; q++) c[q] = c1[q] = SENTINEL;
                    cpu_gemm_f32(m, n, k, a, lda, b, ldb, c, ldc, (cpu_isa)i, NULL);
                    cpu_gemm_f32(m, n, k, a, lda, b, ldb, c1, ldc, (cpu_isa)i, pool);
                    for (int64_t r = 0; r < m; r++)
                        for (int64_t j = 0; j < ldc; j++) {
                            if (j >= n) {
                                CU_ASSERT_EQUAL(c[r * ldc + j], SENTINEL);
                                continue;
                            }
                            double acc = 0, absum = 0;
                            for (int64_t q = 0; q < k; q++) {
                                acc += (double)a[r * lda + q] * b[q * ldb + j];
                                absum += fabs((double)a[r * lda + q] * b[q * ldb + j]);
                            }
                            check_one(c[r * ldc + j], acc, absum, (double)k, -INFINITY, INFINITY, "gemm");
                        }
                    CU_ASSERT_EQUAL(memcmp(c, c1, sizeof(float) * (size_t)(m * ldc)), 0);
                    free(a);
                    free(b);
                    free(c);
                    free(c1);
                }
    pthreadpool_destroy(pool);
    CU_ASSERT_EQUAL(nfail, 0);
}

/* ---- convolution ------------------------------------------------------------------------------------------------ */

static int64_t out_size(int64_t in, int64_t pad_total, int64_t k, int64_t d, int64_t s)
{
    const int64_t span = in + pad_total - d * (k - 1) - 1;
    return span < 0 ? 0 : span / s + 1;
}

/* Runs one convolution on every ISA and checks it; returns 0 when the shape is empty (skipped). */
static int run_conv_case(cpu_conv_params p, int64_t pad_bottom, int64_t pad_right, int with_bias, pthreadpool_t pool)
{
    p.out_h = out_size(p.in_h, p.pad_top + pad_bottom, p.kh, p.dh, p.sh);
    p.out_w = out_size(p.in_w, p.pad_left + pad_right, p.kw, p.dw, p.sw);
    if (p.out_h < 1 || p.out_w < 1) return 0;
    const int64_t cin_g = p.in_c / p.groups, cout_g = p.out_c / p.groups;
    const size_t nx = (size_t)(p.batch * p.in_h * p.in_w * p.in_c);
    const size_t ny = (size_t)(p.batch * p.out_h * p.out_w * p.out_c);
    const size_t nw = (size_t)(p.out_c * cin_g * p.kh * p.kw);
    float *x = malloc(sizeof(float) * nx), *w = malloc(sizeof(float) * nw);
    float *b = malloc(sizeof(float) * (size_t)p.out_c);
    float *y = malloc(sizeof(float) * (ny + GUARD)), *y1 = malloc(sizeof(float) * ny);
    fill(x, nx);
    fill(w, nw);
    fill(b, (size_t)p.out_c);
    char what[256];
    snprintf(what, sizeof what,
             "conv n%lld %lldx%lldx%lld -> %lld k%lldx%lld s%lld,%lld d%lld,%lld p%lld,%lld,%lld,%lld g%lld "
             "clamp[%g,%g]",
             (long long)p.batch, (long long)p.in_h, (long long)p.in_w, (long long)p.in_c, (long long)p.out_c,
             (long long)p.kh, (long long)p.kw, (long long)p.sh, (long long)p.sw, (long long)p.dh, (long long)p.dw,
             (long long)p.pad_top, (long long)p.pad_left, (long long)pad_bottom, (long long)pad_right,
             (long long)p.groups, (double)p.out_min, (double)p.out_max);
    for (int i = (int)g_isa; i == (int)g_isa; i++) {
        char err[256] = "";
        cpu_conv *c = cpu_conv_create(&p, w, with_bias ? b : NULL, (cpu_isa)i, err, sizeof err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        for (size_t q = 0; q < ny + GUARD; q++) y[q] = SENTINEL;
        CU_ASSERT_EQUAL_FATAL(cpu_conv_setup(c, x, y, err, sizeof err), 0);
        cpu_conv_run(c, NULL);
        for (int64_t n = 0; n < p.batch; n++)
            for (int64_t oy = 0; oy < p.out_h; oy++)
                for (int64_t ox = 0; ox < p.out_w; ox++)
                    for (int64_t o = 0; o < p.out_c; o++) {
                        const int64_t g = o / cout_g;
                        double acc = with_bias ? b[o] : 0.0, absum = fabs(acc);
                        for (int64_t ci = 0; ci < cin_g; ci++)
                            for (int64_t ky = 0; ky < p.kh; ky++)
                                for (int64_t kx = 0; kx < p.kw; kx++) {
                                    const int64_t iy = oy * p.sh - p.pad_top + ky * p.dh;
                                    const int64_t ix = ox * p.sw - p.pad_left + kx * p.dw;
                                    if (iy < 0 || iy >= p.in_h || ix < 0 || ix >= p.in_w) continue;
                                    const size_t xi =
                                        (size_t)(((n * p.in_h + iy) * p.in_w + ix) * p.in_c + g * cin_g + ci);
                                    const double t = (double)x[xi] * w[((o * cin_g + ci) * p.kh + ky) * p.kw + kx];
                                    acc += t;
                                    absum += fabs(t);
                                }
                        check_one(y[((n * p.out_h + oy) * p.out_w + ox) * p.out_c + o], acc, absum,
                                  (double)(cin_g * p.kh * p.kw), p.out_min, p.out_max, what);
                    }
        for (int g = 0; g < GUARD; g++) CU_ASSERT_EQUAL(y[ny + g], SENTINEL);
        if (pool) {
            CU_ASSERT_EQUAL_FATAL(cpu_conv_setup(c, x, y1, err, sizeof err), 0);
            cpu_conv_run(c, pool);
            CU_ASSERT_EQUAL(memcmp(y, y1, sizeof(float) * ny), 0);
        }
        cpu_conv_destroy(c);
    }
    free(x);
    free(w);
    free(b);
    free(y);
    free(y1);
    return 1;
}

static cpu_conv_params conv_params(int64_t batch, int64_t h, int64_t wd, int64_t cin, int64_t cout, int64_t kh,
                                   int64_t kw, int64_t s, int64_t d, int64_t pad, int64_t groups, int ci)
{
    cpu_conv_params p = {0};
    p.batch = batch, p.in_h = h, p.in_w = wd, p.in_c = cin, p.out_c = cout;
    p.kh = kh, p.kw = kw, p.sh = s, p.sw = s, p.dh = d, p.dw = d;
    p.pad_top = pad, p.pad_left = pad, p.groups = groups;
    p.out_min = clamps[ci][0], p.out_max = clamps[ci][1];
    return p;
}

static void test_conv_grid(void)
{
    par_prng_seed(&rng, 4);
    nfail = 0;
    int ran = 0;
    static const int64_t ks[][2] = {{1, 1}, {3, 3}, {2, 3}, {5, 5}, {1, 3}};
    for (size_t kk = 0; kk < sizeof ks / sizeof ks[0]; kk++)
        for (int64_t s = 1; s <= 2; s++)
            for (int64_t d = 1; d <= 2; d++)
                for (int64_t pad = 0; pad <= 2; pad++)
                    for (int64_t groups = 1; groups <= 3; groups += 2)
                        for (int64_t cin_g = 1; cin_g <= 5; cin_g += 2) {
                            const int64_t cout_g = 1 + (cin_g * 7 + kk * 5 + (size_t)pad * 3) % 37;
                            cpu_conv_params p = conv_params(1 + (s + d) % 2, 3 + (pad + kk) % 5, 4 + (d + kk) % 4,
                                                            cin_g * groups, cout_g * groups, ks[kk][0], ks[kk][1], s,
                                                            d, pad, groups, (int)((kk + (size_t)s + (size_t)pad) % 4));
                            ran += run_conv_case(p, (pad + s) % 3, pad, (int)(cin_g % 2), NULL);
                        }
    CU_ASSERT(ran > 200);
    CU_ASSERT_EQUAL(nfail, 0);
}

static void test_conv_1x1_gemm_and_threads(void)
{
    par_prng_seed(&rng, 5);
    nfail = 0;
    pthreadpool_t pool = pthreadpool_create(2);
    /* 1x1 stride 1 unpadded: the direct GEMM path; M = batch*H*W crosses several tiles */
    for (int64_t cout = 1; cout <= 70; cout += 3)
        CU_ASSERT(run_conv_case(conv_params(2, 5, 3, 1 + cout % 9, cout, 1, 1, 1, 1, 0, 1, (int)(cout % 4)), 0, 0, 1,
                                pool));
    CU_ASSERT(run_conv_case(conv_params(1, 9, 9, 24, 48, 1, 1, 1, 1, 0, 2, 2), 0, 0, 1, pool));
    /* MobileNet-like shapes */
    CU_ASSERT(run_conv_case(conv_params(1, 17, 17, 3, 32, 3, 3, 2, 1, 1, 1, 2), 0, 0, 1, pool));
    CU_ASSERT(run_conv_case(conv_params(1, 14, 14, 32, 64, 1, 1, 1, 1, 0, 1, 2), 0, 0, 1, pool));
    CU_ASSERT(run_conv_case(conv_params(1, 8, 8, 40, 40, 3, 3, 1, 1, 1, 1, 0), 0, 0, 0, pool));
    /* 1x1 with stride or padding goes through the indirection path */
    CU_ASSERT(run_conv_case(conv_params(1, 7, 6, 5, 9, 1, 1, 2, 1, 0, 1, 0), 0, 0, 1, pool));
    CU_ASSERT(run_conv_case(conv_params(1, 4, 4, 5, 9, 1, 1, 1, 1, 1, 1, 1), 1, 1, 1, pool));
    pthreadpool_destroy(pool);
    CU_ASSERT_EQUAL(nfail, 0);
}

static void test_depthwise(void)
{
    par_prng_seed(&rng, 6);
    nfail = 0;
    pthreadpool_t pool = pthreadpool_create(2);
    int ran = 0;
    static const int64_t ks[][2] = {{3, 3}, {5, 5}, {2, 2}, {1, 7}, {1, 1}};
    for (size_t kk = 0; kk < sizeof ks / sizeof ks[0]; kk++)
        for (int64_t c = 2; c <= 35; c += (c < 18 ? 1 : 5))
            for (int64_t mult = 1; mult <= 3; mult++) {
                if (mult > 1 && c % 3) continue;
                const int64_t s = 1 + (c + (int64_t)kk) % 2, d = 1 + (c % 5 == 0), pad = (c + mult) % 3;
                cpu_conv_params p = conv_params(1 + (c % 7 == 0), 5 + c % 3, 6 - c % 2, c, c * mult, ks[kk][0],
                                                ks[kk][1], s, d, pad, c, (int)((c + mult) % 4));
                ran += run_conv_case(p, (pad + 1) % 3, pad, (int)(c % 2), (c % 4 == 0) ? pool : NULL);
            }
    /* MobileNet depthwise shapes: 3x3 stride 1 and 2, pad 1, relu6 */
    CU_ASSERT(run_conv_case(conv_params(1, 14, 14, 96, 96, 3, 3, 2, 1, 1, 96, 2), 0, 0, 1, pool));
    CU_ASSERT(run_conv_case(conv_params(1, 7, 7, 144, 144, 3, 3, 1, 1, 1, 144, 2), 1, 1, 1, pool));
    CU_ASSERT(run_conv_case(conv_params(1, 9, 9, 72, 72, 5, 5, 2, 1, 2, 72, 0), 2, 2, 1, pool));
    /* 3x3 stride 1 rows wide enough for the row kernel's unchecked chunks of 8 pixels (AVX-512), with channel
     * tails, pads 0..2 on either side, padding rows, and two images */
    static const int64_t rows3x3[][5] = {{19, 16, 1, 1, 1}, {21, 40, 1, 0, 2}, {17, 7, 0, 2, 0}, {26, 33, 2, 1, 1},
                                         {9, 96, 1, 1, 1}, {8, 17, 0, 0, 0}};
    for (size_t i = 0; i < sizeof rows3x3 / sizeof rows3x3[0]; i++) {
        const int64_t wd = rows3x3[i][0], c = rows3x3[i][1], pl = rows3x3[i][2], pr = rows3x3[i][3];
        cpu_conv_params p = conv_params(1 + (int64_t)(i % 2), 5 + (int64_t)i % 3, wd, c, c, 3, 3, 1, 1, pl, c,
                                        (int)(i % 4));
        p.pad_top = rows3x3[i][4];
        CU_ASSERT(run_conv_case(p, (int64_t)i % 3, pr, (int)(i % 2), (i % 2) ? pool : NULL));
    }
    pthreadpool_destroy(pool);
    CU_ASSERT(ran > 100);
    CU_ASSERT_EQUAL(nfail, 0);
}

static void test_conv_bad_args(void)
{
    char err[256] = "";
    float w[6 * 4 * 3 * 3] = {0};
    cpu_conv_params p = conv_params(1, 4, 4, 4, 6, 3, 3, 1, 1, 1, 1, 0);
    p.out_h = p.out_w = 4;
    p.groups = 3;
    CU_ASSERT_PTR_NULL(cpu_conv_create(&p, w, NULL, CPU_ISA_SCALAR, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "groups"));
    p.groups = 1;
    p.sh = 0;
    CU_ASSERT_PTR_NULL(cpu_conv_create(&p, w, NULL, CPU_ISA_SCALAR, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "sh = 0"));
    p.sh = 1;
    p.pad_left = -1;
    CU_ASSERT_PTR_NULL(cpu_conv_create(&p, w, NULL, CPU_ISA_SCALAR, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "padding"));
    p.pad_left = 1;
    CU_ASSERT_PTR_NULL(cpu_conv_create(&p, NULL, NULL, CPU_ISA_SCALAR, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "weights"));
    CU_ASSERT_PTR_NULL(cpu_conv_create(NULL, w, NULL, CPU_ISA_SCALAR, err, sizeof err));
    cpu_conv *c = cpu_conv_create(&p, w, NULL, CPU_ISA_SCALAR, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_NOT_EQUAL(cpu_conv_setup(c, NULL, NULL, err, sizeof err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "NULL"));
    cpu_conv_destroy(c);
    cpu_conv_destroy(NULL);
}

/* ---- row chains: convolutions run band by band give the very bits of running each whole ------------------------ */

/* expand 1x1 (cin -> mid), depthwise k x k (stride s, padding k / 2), project 1x1 (mid -> cout), run whole one after
 * the other, then as a chain with several bands, with and without threads; the intermediates start as NaN, so a band
 * that read a row before it was computed would show. */
static void run_chain_case(int64_t batch, int64_t h, int64_t wd, int64_t cin, int64_t mid, int64_t cout, int64_t k,
                           int64_t s, pthreadpool_t pool)
{
    cpu_conv_params pe = conv_params(batch, h, wd, cin, mid, 1, 1, 1, 1, 0, 1, 2);
    pe.out_h = h, pe.out_w = wd;
    cpu_conv_params pd = conv_params(batch, h, wd, mid, mid, k, k, s, 1, k / 2, mid, 2);
    pd.out_h = out_size(h, 2 * (k / 2), k, 1, s), pd.out_w = out_size(wd, 2 * (k / 2), k, 1, s);
    cpu_conv_params pp = conv_params(batch, pd.out_h, pd.out_w, mid, cout, 1, 1, 1, 1, 0, 1, 0);
    pp.out_h = pd.out_h, pp.out_w = pd.out_w;
    CU_ASSERT(cpu_conv_runs_by_rows(&pe) && cpu_conv_runs_by_rows(&pd) && cpu_conv_runs_by_rows(&pp));
    const cpu_conv_params *ps[3] = {&pe, &pd, &pp};
    size_t n[4];
    n[0] = (size_t)(batch * h * wd * cin);
    for (int l = 0; l < 3; l++) n[l + 1] = (size_t)(ps[l]->batch * ps[l]->out_h * ps[l]->out_w * ps[l]->out_c);
    float *buf[2][4], *w[3], *b[3];
    for (int v = 0; v < 2; v++)
        for (int l = 0; l < 4; l++) buf[v][l] = malloc(sizeof(float) * n[l]);
    fill(buf[0][0], n[0]);
    memcpy(buf[1][0], buf[0][0], sizeof(float) * n[0]);
    cpu_conv *c[2][3];
    char err[256] = "";
    for (int l = 0; l < 3; l++) {
        const size_t nw = (size_t)(ps[l]->out_c * (ps[l]->in_c / ps[l]->groups) * ps[l]->kh * ps[l]->kw);
        w[l] = malloc(sizeof(float) * nw), b[l] = malloc(sizeof(float) * (size_t)ps[l]->out_c);
        fill(w[l], nw);
        fill(b[l], (size_t)ps[l]->out_c);
        for (int v = 0; v < 2; v++) {
            c[v][l] = cpu_conv_create(ps[l], w[l], b[l], g_isa, err, sizeof err);
            CU_ASSERT_PTR_NOT_NULL_FATAL(c[v][l]);
            CU_ASSERT_EQUAL_FATAL(cpu_conv_setup(c[v][l], buf[v][l], buf[v][l + 1], err, sizeof err), 0);
        }
    }
    for (int l = 0; l < 3; l++) cpu_conv_run(c[0][l], NULL);
    const size_t rows = (size_t)(batch * pp.out_h);
    const size_t bands[] = {1, 2, 3, rows, rows + 5, cpu_conv_chain_band(c[1], 3, 4096)};
    for (size_t i = 0; i < sizeof bands / sizeof bands[0]; i++)
        for (int threads = 0; threads <= (pool != NULL); threads++) {
            for (int l = 1; l < 4; l++)
                for (size_t q = 0; q < n[l]; q++) buf[1][l][q] = NAN;
            cpu_conv_chain_run(c[1], 3, bands[i], threads ? pool : NULL);
            for (int l = 1; l < 4; l++)
                if (memcmp(buf[0][l], buf[1][l], sizeof(float) * n[l]) != 0) {
                    fprintf(stderr, "\n  chain n%lld %lldx%lldx%lld-%lld-%lld k%lld s%lld band %zu threads %d: "
                            "output %d differs\n", (long long)batch, (long long)h, (long long)wd, (long long)cin,
                            (long long)mid, (long long)cout, (long long)k, (long long)s, bands[i], threads, l);
                    nfail++;
                }
        }
    CU_ASSERT(cpu_conv_chain_band(c[1], 3, 4096) >= 1 && cpu_conv_chain_band(c[1], 3, 4096) <= rows);
    for (int l = 0; l < 3; l++) {
        cpu_conv_destroy(c[0][l]);
        cpu_conv_destroy(c[1][l]);
        free(w[l]);
        free(b[l]);
    }
    for (int v = 0; v < 2; v++)
        for (int l = 0; l < 4; l++) free(buf[v][l]);
}

static void test_conv_chain(void)
{
    par_prng_seed(&rng, 8);
    nfail = 0;
    pthreadpool_t pool = pthreadpool_create(2);
    run_chain_case(1, 9, 7, 5, 24, 6, 3, 1, pool);
    run_chain_case(1, 11, 9, 8, 40, 16, 3, 2, pool);
    run_chain_case(2, 8, 6, 3, 17, 9, 3, 2, pool);
    run_chain_case(2, 10, 5, 4, 33, 7, 5, 2, pool);
    run_chain_case(1, 14, 14, 16, 96, 24, 3, 2, NULL);
    pthreadpool_destroy(pool);
    CU_ASSERT_EQUAL(nfail, 0);
    /* a convolution that needs whole indirection tiles does not run by rows */
    cpu_conv_params p = conv_params(1, 8, 8, 4, 8, 3, 3, 1, 1, 1, 1, 0);
    p.out_h = p.out_w = 8;
    CU_ASSERT(!cpu_conv_runs_by_rows(&p));
    p = conv_params(1, 8, 8, 4, 8, 1, 1, 2, 1, 0, 1, 0);
    p.out_h = p.out_w = 4;
    CU_ASSERT(!cpu_conv_runs_by_rows(&p));
}

/* ---- ISA names, detection, and the forced-ISA clamp ------------------------------------------------------------ */

static void test_isa(void)
{
    cpu_isa isa;
    for (int i = 0; i <= 3; i++) {
        CU_ASSERT_EQUAL(cpu_isa_parse(cpu_isa_name((cpu_isa)i), &isa), 0);
        CU_ASSERT_EQUAL((int)isa, i);
    }
    CU_ASSERT_STRING_EQUAL(cpu_isa_name(CPU_ISA_NEON), "neon");
    /* scalar everywhere; the detected ISA is supported; x86 and ARM ISAs never both */
    CU_ASSERT(cpu_isa_supported(CPU_ISA_SCALAR));
    CU_ASSERT(cpu_isa_supported(cpu_isa_detect()));
    CU_ASSERT(!(cpu_isa_supported(CPU_ISA_NEON) && cpu_isa_supported(CPU_ISA_AVX2)));
    CU_ASSERT(!cpu_isa_supported((cpu_isa)7));
#if defined(__aarch64__)
    CU_ASSERT_EQUAL(cpu_isa_detect(), CPU_ISA_NEON); /* Advanced SIMD with FMA is baseline on AArch64 */
#endif
    /* the kernels served for each ISA: its own where supported, the detected ISA's otherwise */
    for (int i = 0; i <= 3; i++) {
        const cpu_ukernel_set *s = cpu_ukernels_for((cpu_isa)i);
        CU_ASSERT_EQUAL((int)s->isa, cpu_isa_supported((cpu_isa)i) ? i : (int)cpu_isa_detect());
    }
    CU_ASSERT_NOT_EQUAL(cpu_isa_parse("sse9", &isa), 0);
    CU_ASSERT_NOT_EQUAL(cpu_isa_parse(NULL, &isa), 0);
    CU_ASSERT_STRING_EQUAL(cpu_isa_name((cpu_isa)7), "unknown");
    CU_ASSERT_EQUAL(cpu_isa_detect(), cpu_isa_detect());
    /* Asking for more than the machine has runs the best it has: still correct (checked by the fc tests). */
    par_prng_seed(&rng, 7);
    nfail = 0;
    run_fc_case(CPU_ISA_AVX512, 9, 40, 11, 1, 1, NULL);
    run_fc_case(CPU_ISA_NEON, 9, 40, 11, 1, 1, NULL);
    CU_ASSERT_EQUAL(nfail, 0);
}

PER_ISA(test_fc_remainders)
PER_ISA(test_fc_large_threads)
PER_ISA(test_gemm_strided)
PER_ISA(test_gemm_one_row)
PER_ISA(test_conv_grid)
PER_ISA(test_conv_1x1_gemm_and_threads)
PER_ISA(test_depthwise)
PER_ISA(test_conv_chain)

static const CU_TestInfo tests[] = {
    {"isa", test_isa},
    ISA_TESTS("fc_remainders", test_fc_remainders),
    ISA_TESTS("fc_large_threads", test_fc_large_threads),
    {"fc_bad_args", test_fc_bad_args},
    ISA_TESTS("gemm_strided", test_gemm_strided),
    ISA_TESTS("gemm_one_row", test_gemm_one_row),
    ISA_TESTS("conv_grid", test_conv_grid),
    ISA_TESTS("conv_1x1_gemm_and_threads", test_conv_1x1_gemm_and_threads),
    ISA_TESTS("depthwise", test_depthwise),
    ISA_TESTS("conv_chain", test_conv_chain),
    {"conv_bad_args", test_conv_bad_args},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("cpu_kernels", tests)
