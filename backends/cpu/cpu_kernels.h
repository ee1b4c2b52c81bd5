/*
 * cpu_kernels.h - the compute kernels of the cpu backend, as the graph planner (cpu.c and its op files) sees them:
 * CPU feature detection, packed GEMM / fully connected, convolution through an indirection buffer, depthwise
 * convolution, each with a fused min/max clamp in the epilogue. Activations are NHWC, weights arrive in PyTorch's
 * layout and are packed at create time. Nothing here knows the graph or the harness.
 *
 * Life cycle of every kernel object: create (pack weights; may fail with a message) -> setup (bind input/output
 * pointers, build indirection buffers; at bind time) -> run (any number of times, with a thread pool or NULL)
 * -> destroy (NULL is a no-op).
 */
#ifndef CPU_KERNELS_H
#define CPU_KERNELS_H

#include <pthreadpool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum cpu_isa {
    CPU_ISA_SCALAR = 0, /* portable C */
    CPU_ISA_AVX2 = 1,   /* AVX2 + FMA */
    CPU_ISA_AVX512 = 2, /* AVX-512 F (+BW, DQ, VL) */
    CPU_ISA_NEON = 3,   /* AArch64 Advanced SIMD with FMA */
} cpu_isa;

/* The best ISA this machine supports (cpuinfo), and names ("scalar", "avx2", "avx512", "neon") for knobs and
 * reports. The ISAs are not one ladder: scalar runs everywhere, avx2 wherever avx512 does, neon only on AArch64;
 * cpu_isa_supported says whether kernels of `isa` may run here. */
cpu_isa cpu_isa_detect(void);
int cpu_isa_supported(cpu_isa isa);
const char *cpu_isa_name(cpu_isa isa);
int cpu_isa_parse(const char *name, cpu_isa *out); /* 0 on success */

/* ---- convolution (groups of 1 to C, incl. depthwise with a channel multiplier) ----------------------------- */
typedef struct cpu_conv_params {
    int64_t batch, in_h, in_w, in_c;   /* NHWC input */
    int64_t out_h, out_w, out_c;       /* NHWC output */
    int64_t kh, kw;                    /* kernel */
    int64_t sh, sw, dh, dw;            /* stride, dilation */
    int64_t pad_top, pad_left;         /* resolved padding (bottom/right follow from the sizes) */
    int64_t groups;                    /* in_c and out_c are multiples of groups */
    float out_min, out_max;            /* fused clamp: -INFINITY/INFINITY when none */
} cpu_conv_params;

typedef struct cpu_conv cpu_conv;
/* w: [out_c, in_c/groups, kh, kw] (PyTorch OIHW), bias: [out_c] or NULL. Returns NULL with err set on failure. */
cpu_conv *cpu_conv_create(const cpu_conv_params *p, const float *w, const float *bias, cpu_isa isa, char *err,
                          size_t err_len);
/* x: NHWC [batch, in_h, in_w, in_c], y: NHWC [batch, out_h, out_w, out_c]; both stay valid until the next setup. */
int cpu_conv_setup(cpu_conv *c, const float *x, float *y, char *err, size_t err_len);
void cpu_conv_run(cpu_conv *c, pthreadpool_t pool);
void cpu_conv_destroy(cpu_conv *c);

/* Row chains: a convolution whose output row depends only on a band of input rows at most a few rows tall, and
 * whose kernel computes any range of output rows by itself (depthwise, or 1x1 stride 1 unpadded), can run interleaved
 * with the convolutions before and after it. cpu_conv_chain_run runs convs[0..n) (n <= 8; convs[l]'s output bound as
 * convs[l + 1]'s input) band by band: each band of `band` output rows of the last one, after the rows of every earlier
 * one it needs, so an intermediate is read back while its rows are still in cache. Every output element is computed
 * by the same kernel with the same arithmetic as by cpu_conv_run: results are bit-identical. cpu_conv_chain_band:
 * the band (in rows of the last output) that keeps each intermediate's rows of one band within band_bytes. */
int cpu_conv_runs_by_rows(const cpu_conv_params *p);
size_t cpu_conv_chain_band(cpu_conv *const *convs, size_t n, size_t band_bytes);
void cpu_conv_chain_run(cpu_conv *const *convs, size_t n, size_t band, pthreadpool_t pool);

/* ---- fully connected: y[m, n] = clamp(b[n] + sum_k x[m, k] w[n, k]) ----------------------------------------- */
typedef struct cpu_fc cpu_fc;
/* w: [n, k] (PyTorch linear layout), bias [n] or NULL. */
cpu_fc *cpu_fc_create(int64_t k, int64_t n, const float *w, const float *bias, float out_min, float out_max,
                      cpu_isa isa, char *err, size_t err_len);
void cpu_fc_run(cpu_fc *f, int64_t m, const float *x, float *y, pthreadpool_t pool);
void cpu_fc_destroy(cpu_fc *f);

/* ---- general matrix product of two activations: c[m, n] = sum_k a[m, k] b[k, n] (row-major, strides given) --- */
void cpu_gemm_f32(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb, float *c,
                  int64_t ldc, cpu_isa isa, pthreadpool_t pool);

/* ---- micro-benchmarks for `parity bench --micro`: GFLOP/s of the GEMM micro-kernel at a large size (single
 * thread), and the measured single-core FMA peak of the ISA (independent accumulators). */
double cpu_bench_gemm_gflops(cpu_isa isa, int64_t m, int64_t n, int64_t k);
double cpu_bench_peak_gflops(cpu_isa isa);

#endif
