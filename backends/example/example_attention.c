/*
 * example_attention.c - the example backend's kernels of the decoder-block ops: rope, sdpa and slice_scatter, plain
 * float32 loops over logical row-major tensors.
 *
 * sdpa is the streaming (online-softmax) form of flash attention, where the cpu backend stores the scores and
 * normalizes them first, so the harness sees both: per query row, the running maximum m, the running sum l of
 * exp(t_j - m) and the output row itself as the accumulator of exp(t_j - m) v_j; a new maximum rescales l and the
 * accumulator by exp(m_old - m_new); the row is divided by l once at the end. A masked key (causal, or a -inf
 * mask) adds nothing; a row of masked keys only is 0 / 0 = NaN, as PyTorch gives. Kernels do not allocate.
 */
#include <math.h>
#include <string.h>

#include "example.h"

void ex_rope(const ex_plan *p, const par_node *n)
{
    const par_value *xv = ex_in_value(p, n, 0);
    const float *x = ex_in(p, n, 0), *cs = ex_in(p, n, 1), *sn = ex_in(p, n, 2);
    float *y = ex_out(p, n);
    const int64_t D = xv->dims[xv->rank - 1], S = xv->dims[xv->rank - 2], half = D / 2, rows = xv->numel / D;
    const int inter = par_attr_int(n, "interleaved", 0) != 0;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t i = 0; i < half; i++) {
            const int64_t a = r * D + (inter ? 2 * i : i), b = r * D + (inter ? 2 * i + 1 : i + half);
            const float c = cs[(r % S) * half + i], s = sn[(r % S) * half + i];
            const float xa = x[a], xb = x[b];
            y[a] = xa * c - xb * s;
            y[b] = xb * c + xa * s;
        }
}

void ex_sdpa(const ex_plan *p, const par_node *n)
{
    const par_value *qv = ex_in_value(p, n, 0), *kv = ex_in_value(p, n, 1), *vv = ex_in_value(p, n, 2);
    const float *q = ex_in(p, n, 0), *k = ex_in(p, n, 1), *v = ex_in(p, n, 2), *mask = ex_in(p, n, 3);
    float *y = ex_out(p, n);
    const int64_t B = qv->dims[0], Hq = qv->dims[1], Sq = qv->dims[2], D = qv->dims[3];
    const int64_t Hkv = kv->dims[1], Skv = kv->dims[2], Dv = vv->dims[3];
    const int causal = par_attr_int(n, "is_causal", 0) != 0;
    double sa = par_attr_float(n, "scale", 0.0);
    const float scale = (float)(sa > 0 ? sa : 1.0 / sqrt((double)D));
    int64_t ms[4] = {0, 0, 0, 0};
    if (mask) {
        const par_value *mv = ex_in_value(p, n, 3);
        ex_broadcast_strides(mv->dims, mv->rank, 4, ms);
    }
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < Hq; h++) {
            const int64_t hk = h / (Hq / Hkv);
            const float *kh = k + (b * Hkv + hk) * Skv * D, *vh = v + (b * Hkv + hk) * Skv * Dv;
            for (int64_t i = 0; i < Sq; i++) {
                const float *qi = q + ((b * Hq + h) * Sq + i) * D;
                float *yi = y + ((b * Hq + h) * Sq + i) * Dv;
                float m = -INFINITY, l = 0.0f;
                for (int64_t d = 0; d < Dv; d++) yi[d] = 0.0f;
                for (int64_t j = 0; j < Skv && !(causal && j > i); j++) {
                    float t = 0.0f;
                    for (int64_t d = 0; d < D; d++) t += qi[d] * kh[j * D + d];
                    t *= scale;
                    if (mask) t += mask[b * ms[0] + h * ms[1] + i * ms[2] + j * ms[3]];
                    if (t == -INFINITY) continue;
                    if (t > m) { /* a new maximum: rescale what was summed so far */
                        const float corr = expf(m - t);
                        l *= corr;
                        for (int64_t d = 0; d < Dv; d++) yi[d] *= corr;
                        m = t;
                    }
                    const float w = expf(t - m);
                    l += w;
                    for (int64_t d = 0; d < Dv; d++) yi[d] += w * vh[j * Dv + d];
                }
                for (int64_t d = 0; d < Dv; d++) yi[d] /= l;
            }
        }
}

void ex_slice_scatter(const ex_plan *p, const par_node *n)
{
    const par_value *xv = ex_in_value(p, n, 0), *sv = ex_in_value(p, n, 1);
    const float *x = ex_in(p, n, 0), *src = ex_in(p, n, 1);
    float *y = ex_out(p, n);
    int64_t dim = par_attr_int(n, "dim", 0);
    if (dim < 0) dim += xv->rank;
    const int64_t start = par_attr_int(n, "start", 0), len = sv->dims[dim], extent = xv->dims[dim];
    const int64_t outer = ex_prod(xv->dims, 0, (int32_t)dim), inner = ex_prod(xv->dims, (int32_t)dim + 1, xv->rank);
    memcpy(y, x, (size_t)xv->numel * sizeof(float));
    for (int64_t o = 0; o < outer; o++)
        memcpy(y + (o * extent + start) * inner, src + o * len * inner, (size_t)(len * inner) * sizeof(float));
}
