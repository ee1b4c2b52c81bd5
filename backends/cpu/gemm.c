/*
 * gemm.c - fully connected layers (weights packed once at create time, bias folded into the panels) and the general
 * product of two activations (B packed on the fly per call), both tiled over M and N and split across a pthreadpool.
 * Tile order: N blocks outer, M tiles inner, with an N block sized so that its packed panels stay in L2 while every
 * M tile streams past them (A rows of one tile stay in L1 across the block's panels). Summation order inside a dot
 * product is k ascending with one FMA per term (SIMD) or a multiply then add (scalar): the error bound is the usual
 * gamma_k * sum|w x|, independent of tiling and thread count (results are bit-identical across thread counts).
 * Must not allocate or pack inside run for fc; cpu_gemm_f32 allocates its packed copy of B per call.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_kernels.h"
#include "cpu_ukernels.h"

/* Packed panel bytes of one N block kept below this (half of a 1 MiB L2, leaving room for A and C). */
#define CPU_GEMM_L2_BLOCK (384u * 1024u)

struct cpu_fc {
    const cpu_ukernel_set *uk;
    size_t k, n, nc_block;
    cpu_minmax mm;
    float *packed;
};

size_t cpu_gemm_nc_block(size_t n, size_t k, size_t nr)
{
    size_t nb = CPU_GEMM_L2_BLOCK / ((k + 1) * sizeof(float)) / nr * nr;
    if (nb < nr) nb = nr;
    const size_t nround = (n + nr - 1) / nr * nr;
    return nb < nround ? nb : nround;
}

float *cpu_alloc_floats(size_t count)
{
    /* 64-byte aligned (the kernels' aligned panel loads), rounded up to whole cache lines. */
    size_t bytes = (count * sizeof(float) + 63) / 64 * 64;
    if (bytes == 0) bytes = 64;
    return aligned_alloc(64, bytes);
}

cpu_fc *cpu_fc_create(int64_t k, int64_t n, const float *w, const float *bias, float out_min, float out_max,
                      cpu_isa isa, char *err, size_t err_len)
{
    if (k < 1 || n < 1) {
        snprintf(err, err_len, "fully connected: k = %lld and n = %lld must be >= 1", (long long)k, (long long)n);
        return NULL;
    }
    if (!w) {
        snprintf(err, err_len, "fully connected: weights are NULL");
        return NULL;
    }
    if (!(out_min <= out_max)) {
        snprintf(err, err_len, "fully connected: clamp min %g > max %g", (double)out_min, (double)out_max);
        return NULL;
    }
    cpu_fc *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, err_len, "fully connected: out of memory");
        return NULL;
    }
    f->uk = cpu_ukernels_for(isa);
    f->k = (size_t)k;
    f->n = (size_t)n;
    f->mm.min = out_min;
    f->mm.max = out_max;
    f->nc_block = cpu_gemm_nc_block(f->n, f->k, f->uk->nr);
    f->packed = cpu_alloc_floats(cpu_pack_gemm_size(f->n, f->k, f->uk->nr));
    if (!f->packed) {
        free(f);
        snprintf(err, err_len, "fully connected: out of memory packing %lld x %lld weights", (long long)n,
                 (long long)k);
        return NULL;
    }
    cpu_pack_gemm_nk(f->n, f->k, f->uk->nr, w, f->k, bias, f->packed);
    return f;
}

typedef struct gemm_task {
    const cpu_ukernel_set *uk;
    size_t k;
    const float *a;
    size_t lda;
    const float *packed;
    float *c;
    size_t ldc;
    const cpu_minmax *mm;
} gemm_task;

/* i: N (block of columns), j: M (tile of rows). */
static void gemm_tile(void *ctx, size_t n0, size_t m0, size_t nb, size_t mb)
{
    const gemm_task *t = ctx;
    t->uk->gemm(mb, nb, t->k, t->a + m0 * t->lda, t->lda, t->packed + n0 * (t->k + 1), t->c + m0 * t->ldc + n0,
                t->ldc, t->mm);
}

static void gemm_packed(const cpu_ukernel_set *uk, size_t m, size_t n, size_t k, size_t nc_block, const float *a,
                        size_t lda, const float *packed, float *c, size_t ldc, const cpu_minmax *mm,
                        pthreadpool_t pool)
{
    gemm_task t = {uk, k, a, lda, packed, c, ldc, mm};
    size_t nb = nc_block;
    /* With threads, make sure there is more than one tile per thread when M alone does not provide them. */
    const size_t threads = pool ? pthreadpool_get_threads_count(pool) : 1;
    if (threads > 1) {
        const size_t mtiles = (m + uk->mr - 1) / uk->mr;
        while (nb > uk->nr && mtiles * ((n + nb - 1) / nb) < 4 * threads)
            nb = (nb / 2 + uk->nr - 1) / uk->nr * uk->nr;
    }
    /* Flags 0: denormals are kept (flushing them would change results). */
    pthreadpool_parallelize_2d_tile_2d(pool, gemm_tile, &t, n, m, nb, uk->mr, 0);
}

void cpu_fc_run(cpu_fc *f, int64_t m, const float *x, float *y, pthreadpool_t pool)
{
    if (!f || m <= 0) return;
    gemm_packed(f->uk, (size_t)m, f->n, f->k, f->nc_block, x, f->k, f->packed, y, f->n, &f->mm, pool);
}

void cpu_fc_destroy(cpu_fc *f)
{
    if (!f) return;
    free(f->packed);
    free(f);
}

void cpu_gemm_f32(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb, float *c,
                  int64_t ldc, cpu_isa isa, pthreadpool_t pool)
{
    if (m <= 0 || n <= 0) return;
    if (k <= 0) {
        for (int64_t i = 0; i < m; i++) memset(c + i * ldc, 0, (size_t)n * sizeof(float));
        return;
    }
    const cpu_ukernel_set *uk = cpu_ukernels_for(isa);
    const cpu_minmax mm = {-INFINITY, INFINITY};
    float *packed = cpu_alloc_floats(cpu_pack_gemm_size((size_t)n, (size_t)k, uk->nr));
    if (!packed) {
        /* Out of memory for the packed copy: the plain loop, same summation order (k ascending). */
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                float acc = 0.0f;
                for (int64_t kk = 0; kk < k; kk++) acc += a[i * lda + kk] * b[kk * ldb + j];
                c[i * ldc + j] = acc;
            }
        return;
    }
    cpu_pack_gemm_kn((size_t)n, (size_t)k, uk->nr, b, (size_t)ldb, NULL, packed);
    gemm_packed(uk, (size_t)m, (size_t)n, (size_t)k, cpu_gemm_nc_block((size_t)n, (size_t)k, uk->nr), a,
                (size_t)lda, packed, c, (size_t)ldc, &mm, pool);
    free(packed);
}
