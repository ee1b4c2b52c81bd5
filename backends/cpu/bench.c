/*
 * bench.c - the cpu backend's micro-benchmarks for `parity bench --micro`: GFLOP/s of the fully connected path (the
 * GEMM micro-kernel with packed B, L2-sized N blocks) at a large size on one thread, and the single-core FMA peak of
 * an ISA measured with independent accumulators. After a warm-up, the GEMM reports the median of several timed runs
 * and the peak the best of many short ones (a peak is the fastest the core goes; on a shared machine the median of a pure
 * FMA loop measures the neighbours, and the best-of makes the GEMM's fraction of peak the conservative one).
 * The peak loops are compiled for their ISA with target attributes, so this file needs no SIMD flags and never runs
 * an instruction the machine lacks (an ISA it lacks is replaced by the detected one; NEON is baseline on AArch64).
 * Not used by any correctness path.
 */
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#if defined(__aarch64__)
#include <arm_neon.h>
#endif
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "cpu_kernels.h"
#include "cpu_ukernels.h"

#define RUNS 7

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

double cpu_bench_gemm_gflops(cpu_isa isa, int64_t m, int64_t n, int64_t k)
{
    if (m < 1 || n < 1 || k < 1) return 0.0;
    float *a = malloc((size_t)(m * k) * sizeof(float));
    float *w = malloc((size_t)(n * k) * sizeof(float));
    float *y = malloc((size_t)(m * n) * sizeof(float));
    char err[128];
    cpu_fc *f = NULL;
    double result = 0.0;
    if (!a || !w || !y) goto done;
    /* Small exact values: no denormals, no overflow, timings independent of the data. */
    for (int64_t i = 0; i < m * k; i++) a[i] = (float)(i % 7 - 3) * 0.25f;
    for (int64_t i = 0; i < n * k; i++) w[i] = (float)(i % 5 - 2) * 0.125f;
    f = cpu_fc_create(k, n, w, NULL, -INFINITY, INFINITY, isa, err, sizeof err);
    if (!f) goto done;
    double t[RUNS];
    cpu_fc_run(f, m, a, y, NULL); /* warm-up: page faults, caches */
    for (int r = 0; r < RUNS; r++) {
        const double t0 = now_s();
        cpu_fc_run(f, m, a, y, NULL);
        t[r] = now_s() - t0;
    }
    const double med = median(t, RUNS);
    result = med > 0 ? 2.0 * (double)m * (double)n * (double)k / med * 1e-9 : 0.0;
done:
    cpu_fc_destroy(f);
    free(a);
    free(w);
    free(y);
    return result;
}

#if defined(__x86_64__)
/* x = x * a + b on 24 independent zmm chains: 24 >= 2 ports x 4-cycle latency x 3, so latency never limits. */
__attribute__((target("avx512f,fma"))) static double peak_avx512(long iters)
{
    __m512 acc[24];
    const __m512 va = _mm512_set1_ps(0.999999f), vb = _mm512_set1_ps(1e-6f);
    for (int i = 0; i < 24; i++) acc[i] = _mm512_set1_ps((float)i);
    for (long it = 0; it < iters; it++) {
#pragma GCC unroll 24
        for (int i = 0; i < 24; i++) acc[i] = _mm512_fmadd_ps(acc[i], va, vb);
    }
    __m512 s = acc[0];
    for (int i = 1; i < 24; i++) s = _mm512_add_ps(s, acc[i]);
    volatile float sink = _mm512_reduce_add_ps(s);
    (void)sink;
    return (double)iters * 24 * 16 * 2;
}

__attribute__((target("avx2,fma"))) static double peak_avx2(long iters)
{
    __m256 acc[12];
    const __m256 va = _mm256_set1_ps(0.999999f), vb = _mm256_set1_ps(1e-6f);
    for (int i = 0; i < 12; i++) acc[i] = _mm256_set1_ps((float)i);
    for (long it = 0; it < iters; it++) {
#pragma GCC unroll 12
        for (int i = 0; i < 12; i++) acc[i] = _mm256_fmadd_ps(acc[i], va, vb);
    }
    __m256 s = acc[0];
    for (int i = 1; i < 12; i++) s = _mm256_add_ps(s, acc[i]);
    float out[8];
    _mm256_storeu_ps(out, s);
    volatile float sink = out[0];
    (void)sink;
    return (double)iters * 12 * 8 * 2;
}
#endif

#if defined(__aarch64__)
/* x = x * a + b on 24 independent q chains (vfmaq_f32): enough for 4 FMA pipes x 4-cycle latency; 24 + 2 of the 32
 * q registers. Advanced SIMD is baseline on AArch64: no target attribute needed. */
static double peak_neon(long iters)
{
    float32x4_t acc[24];
    const float32x4_t va = vdupq_n_f32(0.999999f), vb = vdupq_n_f32(1e-6f);
    for (int i = 0; i < 24; i++) acc[i] = vdupq_n_f32((float)i);
    for (long it = 0; it < iters; it++) {
#pragma GCC unroll 24
        for (int i = 0; i < 24; i++) acc[i] = vfmaq_f32(vb, acc[i], va);
    }
    float32x4_t s = acc[0];
    for (int i = 1; i < 24; i++) s = vaddq_f32(s, acc[i]);
    volatile float sink = vaddvq_f32(s);
    (void)sink;
    return (double)iters * 24 * 4 * 2;
}
#endif

/* Scalar: multiply then add on 8 independent chains (what the scalar kernels execute per term). */
static double peak_scalar(long iters)
{
    volatile float seed = 0.999999f;
    float acc[8];
    const float a = seed, b = 1e-6f;
    for (int i = 0; i < 8; i++) acc[i] = (float)i;
    for (long it = 0; it < iters; it++)
        for (int i = 0; i < 8; i++) acc[i] = acc[i] * a + b;
    volatile float sink = acc[0] + acc[1] + acc[2] + acc[3] + acc[4] + acc[5] + acc[6] + acc[7];
    (void)sink;
    return (double)iters * 8 * 2;
}

double cpu_bench_peak_gflops(cpu_isa isa)
{
    const cpu_isa have = cpu_isa_detect();
    if (!cpu_isa_supported(isa)) isa = have;
#if defined(__x86_64__)
    double (*fn)(long) = isa == CPU_ISA_AVX512 ? peak_avx512 : isa == CPU_ISA_AVX2 ? peak_avx2 : peak_scalar;
#elif defined(__aarch64__)
    double (*fn)(long) = isa == CPU_ISA_NEON ? peak_neon : peak_scalar;
#else
    double (*fn)(long) = peak_scalar;
#endif
    /* Many short windows (about 0.5 ms each on AVX-512): the best of them is a window nobody preempted, which one
     * long window on a loaded machine rarely is (7 windows of 80 ms read 45-68 GFLOP/s at load 20 where the GEMM
     * alone ran at 130). */
    const long iters = 125L * 1000 / (isa == CPU_ISA_SCALAR ? 8 : 1);
    fn(iters * 20); /* warm-up: clocks settle into the ISA's license */
    enum { PEAK_RUNS = 201 };
    double v[PEAK_RUNS];
    for (int r = 0; r < PEAK_RUNS; r++) {
        const double t0 = now_s();
        const double flops = fn(iters);
        const double dt = now_s() - t0;
        v[r] = dt > 0 ? flops / dt * 1e-9 : 0.0;
    }
    double best = 0.0;
    for (int r = 0; r < PEAK_RUNS; r++)
        if (v[r] > best) best = v[r];
    return best;
}
