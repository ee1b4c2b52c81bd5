/*
 * plan_util.c - helpers the cpu backend's planner (plan.c) and its ops (ops_*.c) share: strides and layout tests of
 * plan tensors, the strided copy behind every data movement and layout conversion, the parallel loop over the
 * plan's thread pool, and step scratch taken at prepare.
 *
 * It must not call the planner or any op (the planner calls its ops, both call these, and nothing here calls back),
 * and nothing here allocates at run time (cpu_step_scratch is called at prepare only).
 */
#include <stdlib.h>

#include "plan_util.h"

void cpu_rowmajor_strides(int32_t rank, const int64_t *dims, int64_t *strides)
{
    int64_t s = 1;
    for (int32_t d = rank - 1; d >= 0; d--) {
        strides[d] = s;
        s *= dims[d];
    }
}

int cpu_tensor_rowmajor(const cpu_tensor *t)
{
    return !t->nhwc || t->dims[1] == 1 || t->dims[2] * t->dims[3] == 1;
}

/* The walk below keeps up to PAR_MAX_RANK dims after merging; dims are ordered outermost first by dst stride. */
void cpu_nd_copy(int32_t rank, const int64_t *dims, float *dst, const int64_t *dst_strides, const float *src,
                 const int64_t *src_strides)
{
    int64_t d_[PAR_MAX_RANK], ds[PAR_MAX_RANK], ss[PAR_MAX_RANK];
    int32_t r = 0;
    for (int32_t i = 0; i < rank; i++) {
        if (dims[i] == 1) continue;
        d_[r] = dims[i];
        ds[r] = dst_strides[i];
        ss[r] = src_strides[i];
        r++;
    }
    /* order by destination stride, outermost first (insertion sort: rank <= 6) */
    for (int32_t i = 1; i < r; i++)
        for (int32_t j = i; j > 0 && ds[j] > ds[j - 1]; j--) {
            int64_t t;
            t = d_[j], d_[j] = d_[j - 1], d_[j - 1] = t;
            t = ds[j], ds[j] = ds[j - 1], ds[j - 1] = t;
            t = ss[j], ss[j] = ss[j - 1], ss[j - 1] = t;
        }
    /* merge an outer dim into the next inner one when both sides step through it contiguously */
    int32_t m = 0;
    for (int32_t i = 0; i < r; i++) {
        if (m > 0 && ds[m - 1] == ds[i] * d_[i] && ss[m - 1] == ss[i] * d_[i]) {
            d_[m - 1] *= d_[i];
            ds[m - 1] = ds[i];
            ss[m - 1] = ss[i];
        } else {
            d_[m] = d_[i];
            ds[m] = ds[i];
            ss[m] = ss[i];
            m++;
        }
    }
    if (m == 0) {
        dst[0] = src[0];
        return;
    }
    /* Planar -> interleaved in the last two dims (NCHW -> NHWC of an image: P pixels of C <= 16 channels, the
     * channels contiguous in dst, the pixels contiguous in src): one pass over the pixels writing C channels each,
     * contiguous writes from C read streams. */
    const int interleave = m >= 2 && ds[m - 1] == 1 && d_[m - 1] <= 16 && ss[m - 2] == 1 && ds[m - 2] == d_[m - 1];
    /* Any other short inner run: when the source has a longer contiguous dim, make that the inner loop (contiguous
     * reads, strided writes) rather than paying an odometer step per short run. */
    if (!interleave && m >= 2 && d_[m - 1] < 16) {
        int32_t j = -1;
        for (int32_t i = 0; i < m - 1; i++)
            if (ss[i] == 1 && d_[i] > d_[m - 1]) j = i;
        if (j >= 0) {
            const int64_t td = d_[j], tds = ds[j], tss = ss[j];
            for (int32_t i = j; i < m - 1; i++) d_[i] = d_[i + 1], ds[i] = ds[i + 1], ss[i] = ss[i + 1];
            d_[m - 1] = td, ds[m - 1] = tds, ss[m - 1] = tss;
        }
    }
    const int32_t walk = interleave ? m - 2 : m - 1; /* dims walked by the odometer */
    const int64_t n = d_[m - 1], dsi = ds[m - 1], ssi = ss[m - 1];
    int64_t idx[PAR_MAX_RANK] = {0};
    int64_t outer = 1;
    for (int32_t i = 0; i < walk; i++) outer *= d_[i];
    int64_t doff = 0, soff = 0;
    for (int64_t o = 0; o < outer; o++) {
        float *y = dst + doff;
        const float *x = src + soff;
        if (interleave && n == 3) {
            const float *x0 = x, *x1 = x + ssi, *x2 = x + 2 * ssi;
            for (int64_t q = 0; q < d_[m - 2]; q++) {
                y[3 * q] = x0[q];
                y[3 * q + 1] = x1[q];
                y[3 * q + 2] = x2[q];
            }
        } else if (interleave) {
            for (int64_t q = 0; q < d_[m - 2]; q++)
                for (int64_t k = 0; k < n; k++) y[q * n + k] = x[k * ssi + q];
        } else if (dsi == 1 && ssi == 1) {
            memcpy(y, x, (size_t)n * sizeof(float));
        } else if (dsi == 1) {
            for (int64_t k = 0; k < n; k++) y[k] = x[k * ssi];
        } else {
            for (int64_t k = 0; k < n; k++) y[k * dsi] = x[k * ssi];
        }
        /* odometer over the outer dims */
        for (int32_t i = walk - 1; i >= 0; i--) {
            doff += ds[i];
            soff += ss[i];
            if (++idx[i] < d_[i]) break;
            doff -= ds[i] * d_[i];
            soff -= ss[i] * d_[i];
            idx[i] = 0;
        }
    }
}

void cpu_copy_logical(const cpu_tensor *dst, const cpu_tensor *src, float *scratch)
{
    int64_t rm[PAR_MAX_RANK];
    if (cpu_tensor_rowmajor(dst) && cpu_tensor_rowmajor(src)) {
        if (dst->data != src->data) memcpy(dst->data, src->data, (size_t)dst->numel * sizeof(float));
    } else if (cpu_tensor_rowmajor(dst)) {
        cpu_rowmajor_strides(src->rank, src->dims, rm);
        cpu_nd_copy(src->rank, src->dims, dst->data, rm, src->data, src->strides);
    } else if (cpu_tensor_rowmajor(src)) {
        cpu_rowmajor_strides(dst->rank, dst->dims, rm);
        cpu_nd_copy(dst->rank, dst->dims, dst->data, dst->strides, src->data, rm);
    } else {
        cpu_rowmajor_strides(src->rank, src->dims, rm);
        cpu_nd_copy(src->rank, src->dims, scratch, rm, src->data, src->strides);
        cpu_rowmajor_strides(dst->rank, dst->dims, rm);
        cpu_nd_copy(dst->rank, dst->dims, dst->data, dst->strides, scratch, rm);
    }
}

void cpu_parallel(const cpu_plan *p, void (*fn)(void *, size_t), void *ctx, size_t range)
{
    if (!p->pool || range <= 1) {
        for (size_t i = 0; i < range; i++) fn(ctx, i);
        return;
    }
    pthreadpool_parallelize_1d(p->pool, fn, ctx, range, 0);
}

par_status cpu_step_scratch(cpu_step *s, size_t floats, par_msg *msg)
{
    free(s->scratch);
    s->scratch = malloc((floats ? floats : 1) * sizeof(float) + 64);
    s->scratch_len = floats;
    if (!s->scratch)
        return par_msgf(msg, PAR_ERROR, "prepare: node '%s': out of memory for %zu floats of scratch",
                        s->node ? s->node->name : "?", floats);
    return PAR_OK;
}

par_status cpu_rowmajor_scratch(const cpu_tensor *t, float **out, par_msg *msg)
{
    *out = NULL;
    if (cpu_tensor_rowmajor(t)) return PAR_OK;
    *out = malloc((size_t)(t->numel > 0 ? t->numel : 1) * sizeof(float));
    return *out ? PAR_OK : par_msgf(msg, PAR_ERROR, "out of memory");
}

const float *cpu_rowmajor_in(const cpu_tensor *t, float *scratch)
{
    if (!scratch) return t->data;
    int64_t rm[PAR_MAX_RANK];
    cpu_rowmajor_strides(t->rank, t->dims, rm);
    cpu_nd_copy(t->rank, t->dims, scratch, rm, t->data, t->strides);
    return scratch;
}

void cpu_rowmajor_out(const cpu_tensor *t, const float *scratch)
{
    if (!scratch) return;
    int64_t rm[PAR_MAX_RANK];
    cpu_rowmajor_strides(t->rank, t->dims, rm);
    cpu_nd_copy(t->rank, t->dims, t->data, t->strides, scratch, rm);
}
