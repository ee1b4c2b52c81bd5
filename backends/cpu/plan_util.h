/*
 * plan_util.h - private to the cpu backend: the helpers shared by the planner (plan.c) and the ops (ops_*.c), defined
 * in plan_util.c. The ops include this header, never call into plan.c.
 */
#ifndef CPU_PLAN_UTIL_H
#define CPU_PLAN_UTIL_H

#include "plan.h"

/* Run fn(ctx, i) for i in [0, range) on the plan's pool (serially when it has none). Work split does not change any
 * result: every index is computed the same way whichever thread takes it. */
void cpu_parallel(const cpu_plan *p, void (*fn)(void *, size_t), void *ctx, size_t range);

/* 1 when the tensor's physical order is its logical row-major order (rank != 4, or NHWC with C = 1 or H*W = 1). */
int cpu_tensor_rowmajor(const cpu_tensor *t);
/* Row-major strides of dims. */
void cpu_rowmajor_strides(int32_t rank, const int64_t *dims, int64_t *strides);
/* dst[dims under dst_strides] = src[dims under src_strides]: a strided copy of rank dims (any layouts; dims of size
 * 1 and contiguous runs are merged; a contiguous inner run is a memcpy). */
void cpu_nd_copy(int32_t rank, const int64_t *dims, float *dst, const int64_t *dst_strides, const float *src,
                 const int64_t *src_strides);
/* Copy tensor src into dst in logical order (same numel, any shapes and layouts): reshape and flatten. scratch holds
 * numel floats, used only when neither side is row-major. */
void cpu_copy_logical(const cpu_tensor *dst, const cpu_tensor *src, float *scratch);

/* Row-major scratch (numel floats, malloc'd at prepare, the caller frees it) for t when t is not row-major; *out
 * NULL when it is. */
par_status cpu_rowmajor_scratch(const cpu_tensor *t, float **out, par_msg *msg);
/* A row-major view of t at run: its data when scratch is NULL, else scratch filled from it. */
const float *cpu_rowmajor_in(const cpu_tensor *t, float *scratch);
/* Tensor t written from its row-major form in scratch (nothing when scratch is NULL: it was written in place). */
void cpu_rowmajor_out(const cpu_tensor *t, const float *scratch);

/* Allocate a step's scratch (floats) at prepare. */
par_status cpu_step_scratch(cpu_step *s, size_t floats, par_msg *msg);

#endif
