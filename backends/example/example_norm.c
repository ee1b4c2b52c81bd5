/*
 * example_norm.c - the example backend's kernels of sqrt, rsqrt, the reductions (sum, mean, amax, prod, argmax, argmin), layer_norm,
 * group_norm, instance_norm and rms_norm: plain float32 loops over logical NCHW, row-major tensors.
 *
 * The norms compute the statistics in one pass, as many production kernels do (the cpu backend is two-pass, so the
 * harness sees each form):
 *   layer_norm                    Welford's running mean and M2 (m += (x - m) / k; M2 += (x - m_old) (x - m))
 *   group_norm, instance_norm     the sums of x and of x^2, var = E[x^2] - mean^2 (clamped at 0); this form
 *                                 loses accuracy when mean^2 >> var, which the oracle's budget accounts for. The
 *                                 sums are kept scaled by a power of two 2^-k, k raised (and the sums rescaled,
 *                                 exactly) when an element reaches 2^50 there, so x^2 never overflows f32 (it did
 *                                 at |x| > 1.8e19: a group of one element of 1e19 gave NaN for a reference of 0);
 *                                 scaling by 2^-k commutes with rounding, so the result is the unscaled form's
 *                                 wherever that one is finite (bit for bit while k stays 0)
 * then (x - mean) * rsqrt(var + eps) * w + b; rms_norm folds its weight, x * (w * rsqrt(mean(x^2) + eps)), the
 * mean of squares a plain left-to-right sum (the cpu backend multiplies x by r, then by w). Kernels do not
 * allocate.
 */
#include <math.h>

#include "example.h"

/* sqrt is correctly rounded (IEEE); rsqrt is computed in double and rounded once. sqrt(-0) = -0 and 1 / -0 = -inf,
 * as IEEE and PyTorch. */
void ex_sqrt(const ex_plan *p, const par_node *n)
{
    const float *x = ex_in(p, n, 0);
    float *y = ex_out(p, n);
    for (int64_t i = 0; i < ex_out_value(p, n)->numel; i++) y[i] = sqrtf(x[i]);
}

void ex_rsqrt(const ex_plan *p, const par_node *n)
{
    const float *x = ex_in(p, n, 0);
    float *y = ex_out(p, n);
    for (int64_t i = 0; i < ex_out_value(p, n)->numel; i++) y[i] = (float)(1.0 / sqrt((double)x[i]));
}

/* sum, mean, amax over `axes`: every input element is folded into the output element it reduces to (0 stride along
 * reduced axes), in input order, so each sum is a plain left-to-right sum; mean then divides by the number of terms.
 * keepdims only changes the output's shape, not its element order. amax keeps a NaN once it has one (v > NaN is
 * false), as PyTorch's NaN propagation. */
typedef enum red_kind { RED_SUM, RED_MEAN, RED_AMAX, RED_AMIN, RED_PROD } red_kind;

static void reduce(const ex_plan *p, const par_node *n, red_kind kind)
{
    const par_value *xv = ex_in_value(p, n, 0), *yv = ex_out_value(p, n);
    const float *x = ex_in(p, n, 0);
    float *y = ex_out(p, n);
    const int32_t rank = xv->rank;
    int reduced[PAR_MAX_RANK] = {0};
    for (int32_t i = 0; i < par_attr_count(n, "axes"); i++) {
        int64_t ax = par_attr_ints_at(n, "axes", i, 0);
        reduced[ax < 0 ? ax + rank : ax] = 1;
    }
    int64_t ostride[PAR_MAX_RANK], s = 1, count = 1;
    for (int32_t d = rank - 1; d >= 0; d--) {
        ostride[d] = reduced[d] ? 0 : s;
        if (reduced[d]) count *= xv->dims[d];
        else s *= xv->dims[d];
    }
    for (int64_t i = 0; i < yv->numel; i++)
        y[i] = kind == RED_AMAX ? -INFINITY : kind == RED_AMIN ? INFINITY : kind == RED_PROD ? 1.0f : 0.0f;
    for (int64_t i = 0; i < xv->numel; i++) {
        float *o = &y[ex_offset(i, xv->dims, rank, ostride)];
        if (kind == RED_PROD) {
            *o *= x[i];
        } else if (kind == RED_AMIN) {
            if (x[i] < *o || x[i] != x[i]) *o = x[i];
        } else if (kind != RED_AMAX) *o += x[i];
        else if (x[i] > *o || x[i] != x[i]) *o = x[i];
    }
    if (kind == RED_MEAN)
        for (int64_t i = 0; i < yv->numel; i++) y[i] /= (float)count;
}

void ex_sum(const ex_plan *p, const par_node *n)
{
    reduce(p, n, RED_SUM);
}

void ex_mean(const ex_plan *p, const par_node *n)
{
    reduce(p, n, RED_MEAN);
}

void ex_amin(const ex_plan *p, const par_node *n)
{
    reduce(p, n, RED_AMIN);
}

void ex_amax(const ex_plan *p, const par_node *n)
{
    reduce(p, n, RED_AMAX);
}

void ex_prod_reduce(const ex_plan *p, const par_node *n)
{
    reduce(p, n, RED_PROD);
}

/* argmax / argmin along `axis`: the index of the first largest (smallest) element, or of the last with
 * select_last = 1; a NaN is beyond every number, so the first NaN wins (the last with select_last). i32 out. */
static void arg(const ex_plan *p, const par_node *n, int want_max)
{
    const par_value *xv = ex_in_value(p, n, 0);
    const float *x = ex_in(p, n, 0);
    int32_t *y = (int32_t *)p->dst[n->outputs[0]];
    int64_t ax = par_attr_int(n, "axis", 0);
    if (ax < 0) ax += xv->rank;
    const int last = par_attr_int(n, "select_last", 0) != 0;
    int64_t outer = 1, len = xv->dims[ax], inner = 1;
    for (int32_t d = 0; d < ax; d++) outer *= xv->dims[d];
    for (int32_t d = (int32_t)ax + 1; d < xv->rank; d++) inner *= xv->dims[d];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            const float *row = x + o * len * inner + i;
            int64_t best = 0;
            for (int64_t k = 1; k < len; k++) {
                const float v = row[k * inner], b = row[best * inner];
                if (b != b && !(last && v != v)) continue; /* a NaN already holds (the first, unless select_last) */
                int better = v != v || (want_max ? v > b : v < b) || (last && v == b);
                if (better) best = k;
            }
            y[o * inner + i] = (int32_t)best;
        }
}

void ex_argmax(const ex_plan *p, const par_node *n)
{
    arg(p, n, 1);
}

void ex_argmin(const ex_plan *p, const par_node *n)
{
    arg(p, n, 0);
}

/* Normalize groups of `len` contiguous elements; element j of group g takes weight index
 * (g % per_sample) * cpg + j / inner. welford: 1 Welford, 0 E[x^2] - mean^2 (sums scaled by 2^-k). */
static void norm(const ex_plan *p, const par_node *n, int64_t len, int64_t per_sample, int64_t cpg, int64_t inner,
                 int welford)
{
    const float *x = ex_in(p, n, 0), *w = ex_in(p, n, 1), *b = ex_in(p, n, 2);
    float *y = ex_out(p, n);
    const float eps = (float)par_attr_float(n, "eps", 1e-5);
    const int64_t groups = len > 0 ? ex_in_value(p, n, 0)->numel / len : 0;
    for (int64_t g = 0; g < groups; g++) {
        const float *xg = x + g * len;
        float *yg = y + g * len;
        float mean = 0.0f, var;
        if (welford) {
            float m2 = 0.0f;
            for (int64_t j = 0; j < len; j++) {
                const float d = xg[j] - mean;
                mean += d / (float)(j + 1);
                m2 += d * (xg[j] - mean);
            }
            var = m2 / (float)len;
        } else {
            float s1 = 0.0f, s2 = 0.0f;
            int k = 0; /* the sums are of x 2^-k */
            for (int64_t j = 0; j < len; j++) {
                float xs = k ? ldexpf(xg[j], -k) : xg[j];
                if (fabsf(xs) >= 0x1p50f && isfinite(xs)) {
                    int e;
                    frexpf(xg[j], &e);
                    const int k2 = e - 50;
                    s1 = ldexpf(s1, k - k2);
                    s2 = ldexpf(s2, 2 * (k - k2));
                    k = k2;
                    xs = ldexpf(xg[j], -k);
                }
                s1 += xs, s2 += xs * xs;
            }
            const float m = s1 / (float)len;
            mean = ldexpf(m, k);
            var = ldexpf(s2 / (float)len - m * m, 2 * k);
            if (var < 0.0f) var = 0.0f;
        }
        const float r = 1.0f / sqrtf(var + eps);
        for (int64_t j = 0; j < len; j++) {
            const int64_t k = (g % per_sample) * cpg + j / inner;
            yg[j] = (xg[j] - mean) * r * (w ? w[k] : 1.0f) + (b ? b[k] : 0.0f);
        }
    }
}

void ex_layer_norm(const ex_plan *p, const par_node *n)
{
    const par_value *xv = ex_in_value(p, n, 0);
    const int32_t k = par_attr_count(n, "normalized_shape");
    const int64_t len = ex_prod(xv->dims, xv->rank - k, xv->rank);
    norm(p, n, len, 1, len, 1, 1);
}

void ex_group_norm(const ex_plan *p, const par_node *n)
{
    const par_value *xv = ex_in_value(p, n, 0);
    const int64_t groups = par_attr_int(n, "num_groups", 1), cpg = xv->dims[1] / groups;
    const int64_t inner = ex_prod(xv->dims, 2, xv->rank);
    norm(p, n, cpg * inner, groups, cpg, inner, 0);
}

void ex_instance_norm(const ex_plan *p, const par_node *n)
{
    const par_value *xv = ex_in_value(p, n, 0);
    const int64_t inner = ex_prod(xv->dims, 2, xv->rank);
    norm(p, n, inner, xv->dims[1], 1, inner, 0);
}

void ex_rms_norm(const ex_plan *p, const par_node *n)
{
    const par_value *xv = ex_in_value(p, n, 0);
    const int32_t k = par_attr_count(n, "normalized_shape");
    const int64_t len = ex_prod(xv->dims, xv->rank - k, xv->rank), groups = len > 0 ? xv->numel / len : 0;
    const float *x = ex_in(p, n, 0), *w = ex_in(p, n, 1);
    float *y = ex_out(p, n);
    const float eps = (float)par_attr_float(n, "eps", 1e-6);
    for (int64_t g = 0; g < groups; g++) {
        const float *xg = x + g * len;
        float ss = 0.0f;
        for (int64_t j = 0; j < len; j++) ss += xg[j] * xg[j];
        const float r = 1.0f / sqrtf(ss / (float)len + eps);
        for (int64_t j = 0; j < len; j++) y[g * len + j] = xg[j] * ((w ? w[j] : 1.0f) * r);
    }
}
