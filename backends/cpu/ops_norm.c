/*
 * ops_norm.c - layer_norm, group_norm, instance_norm and rms_norm on the cpu backend: each group of n contiguous
 * elements (in logical row-major order) is normalized by its own mean and biased variance, in f32, two-pass:
 *   mean = (sum x) / n               eight partial sums (vectorizable), added at the end
 *   var  = (sum (x - mean)^2) / n    the same, around the computed mean (no cancellation)
 *   r    = 1 / sqrtf(var + eps)
 * then layer_norm writes (x - mean) * r * w[j] + b[j] (the direct form) and group_norm / instance_norm fold per
 * channel s = r * w[c], t = b[c] - mean * s, y = x * s + t. rms_norm takes no mean: r = 1 / sqrtf(sum x^2 / n
 * + eps) with the same eight partial sums, then y = x * r * w[j]. Groups run in parallel (one group per task: the result
 * does not depend on the split).
 *
 * Layouts: a rank-4 x or y is NHWC in the plan. group_norm and instance_norm run on NHWC directly, one sample per
 * task: per-channel sums over the pixels (the inner loop over C vectorizes), added per group (one summation order
 * among others: the gamma(n) bound holds for any), then y = x * s[c] + t[c] pixel by pixel. Other non-row-major
 * operands (layer_norm on rank 4, a rank-4 weight or bias) are converted to and from row-major scratch taken at
 * prepare. Nothing allocates at run time; only y is written.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan_util.h"

typedef struct norm_state {
    int64_t groups, n, per_sample, cpg, inner;
    float eps;
    int layer;                 /* 1: direct form with per-element weight; 0: folded per channel */
    int rms;                   /* rms_norm (layer form, no mean, no bias) */
    float *xr, *yr, *wr, *br;  /* row-major scratch for the operands that are not row-major (NULL otherwise) */
    const float *x, *w, *b;    /* row-major views at run */
    float *y;
    int nhwc;                  /* group_norm / instance_norm on NHWC x and y */
    int64_t C, HW;             /* NHWC: channels, pixels */
    float *chan;               /* NHWC: per sample, 3 C floats: channel sums, then s[c], t[c] */
} norm_state;

static void norm_destroy(void *p)
{
    norm_state *st = p;
    if (!st) return;
    free(st->xr);
    free(st->yr);
    free(st->wr);
    free(st->br);
    free(st->chan);
    free(st);
}

/* Sum of v[0..n) (or of (v - c)^2 when sq) with eight partial sums. */
static float part_sum(const float *v, int64_t n, int sq, float c)
{
    float acc[8] = {0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) {
            const float d = sq ? v[i + k] - c : v[i + k];
            acc[k] += sq ? d * d : d;
        }
    for (int k = 0; i < n; i++, k++) {
        const float d = sq ? v[i] - c : v[i];
        acc[k] += sq ? d * d : d;
    }
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

static void norm_group(void *ctx, size_t gi)
{
    const norm_state *st = ctx;
    const int64_t g = (int64_t)gi, n = st->n;
    const float *x = st->x + g * n;
    float *y = st->y + g * n;
    if (st->rms) {
        const float r = 1.0f / sqrtf(part_sum(x, n, 1, 0.0f) / (float)n + st->eps);
        for (int64_t j = 0; j < n; j++) y[j] = st->w ? x[j] * r * st->w[j] : x[j] * r;
        return;
    }
    const float mean = part_sum(x, n, 0, 0.0f) / (float)n;
    const float var = part_sum(x, n, 1, mean) / (float)n;
    const float r = 1.0f / sqrtf(var + st->eps);
    if (st->layer) {
        for (int64_t j = 0; j < n; j++) {
            const float v = (x[j] - mean) * r;
            y[j] = (st->w ? v * st->w[j] : v) + (st->b ? st->b[j] : 0.0f);
        }
        return;
    }
    const int64_t c0 = (g % st->per_sample) * st->cpg;
    for (int64_t c = 0; c < st->cpg; c++) {
        const float s = st->w ? r * st->w[c0 + c] : r;
        const float t = (st->b ? st->b[c0 + c] : 0.0f) - mean * s;
        const float *xc = x + c * st->inner;
        float *yc = y + c * st->inner;
        for (int64_t k = 0; k < st->inner; k++) yc[k] = xc[k] * s + t;
    }
}

/* group_norm / instance_norm of sample nb on NHWC: x and y [HW, C]. Two passes over the pixels: the per-channel
 * sums, then the per-channel sums of squares around their group's mean; then the folded output. */
static void norm_sample_nhwc(void *ctx, size_t nb)
{
    const norm_state *st = ctx;
    const int64_t C = st->C, HW = st->HW, G = st->per_sample, cpg = st->cpg;
    const float *x = st->x + (int64_t)nb * HW * C;
    float *y = st->y + (int64_t)nb * HW * C;
    float *acc = st->chan + (int64_t)nb * 3 * C, *sc = acc + C, *sh = sc + C;
    for (int64_t c = 0; c < C; c++) acc[c] = 0.0f;
    for (int64_t q = 0; q < HW; q++)
        for (int64_t c = 0; c < C; c++) acc[c] += x[q * C + c];
    for (int64_t g = 0; g < G; g++) { /* sh[c]: the mean of c's group */
        float m = 0.0f;
        for (int64_t c = g * cpg; c < (g + 1) * cpg; c++) m += acc[c];
        m /= (float)st->n;
        for (int64_t c = g * cpg; c < (g + 1) * cpg; c++) sh[c] = m;
    }
    for (int64_t c = 0; c < C; c++) acc[c] = 0.0f;
    for (int64_t q = 0; q < HW; q++)
        for (int64_t c = 0; c < C; c++) {
            const float d = x[q * C + c] - sh[c];
            acc[c] += d * d;
        }
    for (int64_t g = 0; g < G; g++) {
        float v = 0.0f;
        for (int64_t c = g * cpg; c < (g + 1) * cpg; c++) v += acc[c];
        const float r = 1.0f / sqrtf(v / (float)st->n + st->eps);
        for (int64_t c = g * cpg; c < (g + 1) * cpg; c++) {
            const float s = st->w ? r * st->w[c] : r;
            sc[c] = s;
            sh[c] = (st->b ? st->b[c] : 0.0f) - sh[c] * s;
        }
    }
    for (int64_t q = 0; q < HW; q++)
        for (int64_t c = 0; c < C; c++) y[q * C + c] = x[q * C + c] * sc[c] + sh[c];
}

static void run_norm(const cpu_plan *p, const cpu_step *s)
{
    norm_state *st = s->state;
    const cpu_tensor *xt = &p->t[s->in[0]], *yt = &p->t[s->out];
    st->x = cpu_rowmajor_in(xt, st->xr);
    st->w = s->n_in > 1 && s->in[1] >= 0 ? cpu_rowmajor_in(&p->t[s->in[1]], st->wr) : NULL;
    st->b = s->n_in > 2 && s->in[2] >= 0 ? cpu_rowmajor_in(&p->t[s->in[2]], st->br) : NULL;
    st->y = st->yr ? st->yr : yt->data;
    if (st->nhwc) {
        st->x = xt->data, st->y = yt->data;
        cpu_parallel(p, norm_sample_nhwc, st, (size_t)xt->dims[0]);
        return;
    }
    cpu_parallel(p, norm_group, st, (size_t)st->groups);
    cpu_rowmajor_out(yt, st->yr);
}

par_status cpu_lower_norm(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    const par_node *n = s->node;
    const cpu_tensor *x = &p->t[s->in[0]];
    norm_state *st = calloc(1, sizeof *st);
    if (!st) return par_msgf(msg, PAR_ERROR, "out of memory");
    s->state = st;
    s->destroy = norm_destroy;
    st->rms = s->variant == CPU_NORM_RMS;
    st->layer = st->rms || s->variant == CPU_NORM_LAYER;
    st->eps = (float)par_attr_float(n, "eps", st->rms ? 1e-6 : 1e-5);
    const int64_t inner = x->rank > 2 ? x->numel / (x->dims[0] * x->dims[1]) : 1;
    if (st->layer) {
        int32_t k = par_attr_count(n, "normalized_shape");
        st->n = 1;
        for (int32_t i = 0; i < k; i++) st->n *= x->dims[x->rank - k + i];
        st->per_sample = 1, st->cpg = st->n, st->inner = 1;
    } else {
        const int64_t ch = x->dims[1];
        const int64_t g = s->variant == CPU_NORM_GROUP ? par_attr_int(n, "num_groups", 1) : ch;
        if (g < 1 || ch % g != 0) return par_msgf(msg, PAR_ERROR, "%s: num_groups %lld does not divide C", n->op,
                                                  (long long)g);
        st->per_sample = g, st->cpg = ch / g, st->inner = inner, st->n = st->cpg * inner;
    }
    st->groups = st->n > 0 ? x->numel / st->n : 0;
    par_status r;
    if (!st->layer && x->nhwc && p->t[s->out].nhwc) {
        st->nhwc = 1;
        st->C = x->dims[1], st->HW = inner;
        st->chan = malloc((size_t)(x->dims[0] * 3 * st->C > 0 ? x->dims[0] * 3 * st->C : 1) * sizeof(float));
        if (!st->chan) return par_msgf(msg, PAR_ERROR, "out of memory");
    } else {
        if ((r = cpu_rowmajor_scratch(x, &st->xr, msg)) != PAR_OK) return r;
        if ((r = cpu_rowmajor_scratch(&p->t[s->out], &st->yr, msg)) != PAR_OK) return r;
    }
    if (s->n_in > 1 && s->in[1] >= 0 && (r = cpu_rowmajor_scratch(&p->t[s->in[1]], &st->wr, msg)) != PAR_OK) return r;
    if (s->n_in > 2 && s->in[2] >= 0 && (r = cpu_rowmajor_scratch(&p->t[s->in[2]], &st->br, msg)) != PAR_OK) return r;
    s->run = run_norm;
    return PAR_OK;
}
