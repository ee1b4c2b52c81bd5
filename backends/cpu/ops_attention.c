/*
 * ops_attention.c - the decoder-block ops on the cpu backend: rope, sdpa and slice_scatter, in f32.
 *
 * rope: per pair (a, b) of a row and its position's (c, s): y_a = fmaf(a, c, -(b s)), y_b = fmaf(b, c, a s) (a
 * product and a fused multiply-add; the example backend takes two products and a sum). x and y are read and written
 * row-major, through scratch taken at prepare when the plan holds them NHWC (rank 4).
 *
 * sdpa: the stored-scores form of attention, as a decomposed graph computes it (the example backend streams): per
 * query row, the visible keys' scores t_j = (q . k_j) scale + mask (the dot product in four partial sums), their
 * maximum, p_j = expf(t_j - max) stored, their sum, p_j / sum stored, then o = sum_j p_j v_j. Causal: key j is
 * visible to query i when j <= i; a -inf mask value gives p_j = 0; a row with no visible key is NaN (0 / 0, as
 * PyTorch's math path). q, k, v, the mask and y are read through their plan strides (any layout; a mask dimension of
 * size 1 or missing reads with stride 0); query head h reads key/value head h / (Hq / Hkv). One task per (batch,
 * head), each with its own row of Skv scores in the step's scratch, taken at prepare.
 *
 * slice_scatter: two strided copies (cpu_nd_copy): x into y, then src into y's rows [start, start + len) of dim.
 * Nothing here allocates at run time.
 */
#include <math.h>
#include <stdlib.h>

#include "plan_util.h"

/* ---------------------------------------------------------------------------------------------------------------
 * rope
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct rope_state {
    int64_t rows, S, D;
    int inter;
    float *xr, *yr; /* row-major scratch of x and y when the plan holds them NHWC */
} rope_state;

static void rope_destroy(void *p)
{
    rope_state *st = p;
    if (!st) return;
    free(st->xr);
    free(st->yr);
    free(st);
}

static void run_rope(const cpu_plan *p, const cpu_step *s)
{
    const rope_state *st = s->state;
    const float *x = cpu_rowmajor_in(&p->t[s->in[0]], st->xr);
    const float *cs = p->t[s->in[1]].data, *sn = p->t[s->in[2]].data;
    float *y = st->yr ? st->yr : p->t[s->out].data;
    const int64_t D = st->D, half = D / 2;
    for (int64_t r = 0; r < st->rows; r++) {
        const float *c = cs + (r % st->S) * half, *sr = sn + (r % st->S) * half;
        for (int64_t i = 0; i < half; i++) {
            const int64_t a = r * D + (st->inter ? 2 * i : i), b = r * D + (st->inter ? 2 * i + 1 : i + half);
            const float xa = x[a], xb = x[b];
            y[a] = fmaf(xa, c[i], -(xb * sr[i]));
            y[b] = fmaf(xb, c[i], xa * sr[i]);
        }
    }
    cpu_rowmajor_out(&p->t[s->out], st->yr);
}

par_status cpu_lower_rope(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    const cpu_tensor *x = &p->t[s->in[0]];
    if (x->rank < 2 || x->dims[x->rank - 1] % 2 != 0)
        return par_msgf(msg, PAR_ERROR, "rope: input 0 (x) must be [..., S, D] with D even");
    rope_state *st = calloc(1, sizeof *st);
    if (!st) return par_msgf(msg, PAR_ERROR, "out of memory");
    s->state = st;
    s->destroy = rope_destroy;
    st->D = x->dims[x->rank - 1];
    st->S = x->dims[x->rank - 2];
    st->rows = st->D > 0 ? x->numel / st->D : 0;
    st->inter = par_attr_int(s->node, "interleaved", 0) != 0;
    par_status r = cpu_rowmajor_scratch(x, &st->xr, msg);
    if (r == PAR_OK) r = cpu_rowmajor_scratch(&p->t[s->out], &st->yr, msg);
    s->run = run_rope;
    return r;
}

/* ---------------------------------------------------------------------------------------------------------------
 * sdpa
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct sdpa_state {
    int64_t B, Hq, Hkv, Sq, Skv, D, Dv;
    float scale;
    int causal;
    int64_t qs[4], ks[4], vs[4], ms[4], ys[4]; /* strides of q, k, v, the mask (broadcast: 0) and y */
    const float *q, *k, *v, *m;
    float *y, *scores;                         /* scores: B Hq rows of Skv */
} sdpa_state;

/* Dot product of n elements at strides sa and sb, in four partial sums. */
static float dot4(const float *a, int64_t sa, const float *b, int64_t sb, int64_t n)
{
    float acc[4] = {0};
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int k = 0; k < 4; k++) acc[k] += a[(i + k) * sa] * b[(i + k) * sb];
    for (int k = 0; i < n; i++, k++) acc[k] += a[i * sa] * b[i * sb];
    return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

static void sdpa_head(void *ctx, size_t task)
{
    const sdpa_state *st = ctx;
    const int64_t b = (int64_t)task / st->Hq, h = (int64_t)task % st->Hq, hk = h / (st->Hq / st->Hkv);
    float *t = st->scores + (int64_t)task * st->Skv;
    const float *kh = st->k + b * st->ks[0] + hk * st->ks[1], *vh = st->v + b * st->vs[0] + hk * st->vs[1];
    for (int64_t i = 0; i < st->Sq; i++) {
        const float *qi = st->q + b * st->qs[0] + h * st->qs[1] + i * st->qs[2];
        const float *mi = st->m ? st->m + b * st->ms[0] + h * st->ms[1] + i * st->ms[2] : NULL;
        float *yi = st->y + b * st->ys[0] + h * st->ys[1] + i * st->ys[2];
        const int64_t n = st->causal ? (i + 1 < st->Skv ? i + 1 : st->Skv) : st->Skv; /* keys j <= i */
        float mx = -INFINITY, sum = 0.0f;
        for (int64_t j = 0; j < n; j++) {
            t[j] = dot4(qi, st->qs[3], kh + j * st->ks[2], st->ks[3], st->D) * st->scale;
            if (mi) t[j] += mi[j * st->ms[3]];
            mx = t[j] > mx ? t[j] : mx;
        }
        for (int64_t j = 0; j < n; j++) {
            t[j] = expf(t[j] - mx); /* no visible key: mx = -inf, every term NaN */
            sum += t[j];
        }
        for (int64_t j = 0; j < n; j++) t[j] /= sum;
        for (int64_t d = 0; d < st->Dv; d++) {
            float o = 0.0f;
            for (int64_t j = 0; j < n; j++) o += t[j] * vh[j * st->vs[2] + d * st->vs[3]];
            yi[d * st->ys[3]] = o;
        }
    }
}

static void run_sdpa(const cpu_plan *p, const cpu_step *s)
{
    sdpa_state *st = s->state;
    st->q = p->t[s->in[0]].data, st->k = p->t[s->in[1]].data, st->v = p->t[s->in[2]].data;
    st->m = s->n_in > 3 && s->in[3] >= 0 ? p->t[s->in[3]].data : NULL;
    st->y = p->t[s->out].data;
    st->scores = s->scratch;
    cpu_parallel(p, sdpa_head, st, (size_t)(st->B * st->Hq));
}

par_status cpu_lower_sdpa(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    const cpu_tensor *q = &p->t[s->in[0]], *k = &p->t[s->in[1]], *v = &p->t[s->in[2]], *y = &p->t[s->out];
    if (q->rank != 4 || k->rank != 4 || v->rank != 4 || k->dims[1] < 1 || q->dims[1] % k->dims[1] != 0)
        return par_msgf(msg, PAR_ERROR, "sdpa: q, k, v must be rank 4 with Hq a multiple of Hkv");
    sdpa_state *st = calloc(1, sizeof *st);
    if (!st) return par_msgf(msg, PAR_ERROR, "out of memory");
    s->state = st;
    s->destroy = free;
    st->B = q->dims[0], st->Hq = q->dims[1], st->Sq = q->dims[2], st->D = q->dims[3];
    st->Hkv = k->dims[1], st->Skv = k->dims[2], st->Dv = v->dims[3];
    const double sa = par_attr_float(s->node, "scale", 0.0);
    st->scale = (float)(sa > 0 ? sa : 1.0 / sqrt((double)st->D));
    st->causal = par_attr_int(s->node, "is_causal", 0) != 0;
    for (int d = 0; d < 4; d++) st->qs[d] = q->strides[d], st->ks[d] = k->strides[d], st->vs[d] = v->strides[d],
                                st->ys[d] = y->strides[d];
    if (s->n_in > 3 && s->in[3] >= 0) { /* right-aligned broadcast to [B, Hq, Sq, Skv] */
        const cpu_tensor *m = &p->t[s->in[3]];
        for (int d = 0; d < 4; d++) {
            const int32_t md = d - (4 - m->rank);
            st->ms[d] = md < 0 || m->dims[md] == 1 ? 0 : m->strides[md];
        }
    }
    s->run = run_sdpa;
    return cpu_step_scratch(s, (size_t)(st->B * st->Hq * (st->Skv > 0 ? st->Skv : 1)), msg);
}

/* ---------------------------------------------------------------------------------------------------------------
 * slice_scatter
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct scatter_state {
    int32_t dim;
    int64_t start;
} scatter_state;

static void run_slice_scatter(const cpu_plan *p, const cpu_step *s)
{
    const scatter_state *st = s->state;
    const cpu_tensor *x = &p->t[s->in[0]], *src = &p->t[s->in[1]], *y = &p->t[s->out];
    cpu_nd_copy(x->rank, x->dims, y->data, y->strides, x->data, x->strides);
    cpu_nd_copy(src->rank, src->dims, y->data + st->start * y->strides[st->dim], y->strides, src->data,
                src->strides);
}

par_status cpu_lower_slice_scatter(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    const cpu_tensor *x = &p->t[s->in[0]], *src = &p->t[s->in[1]];
    int64_t dim = par_attr_int(s->node, "dim", 0), start = par_attr_int(s->node, "start", 0);
    if (dim < 0) dim += x->rank;
    if (dim < 0 || dim >= x->rank || start < 0 || start + src->dims[dim] > x->dims[dim])
        return par_msgf(msg, PAR_ERROR, "slice_scatter: 'dim' %lld or 'start' %lld out of range", (long long)dim,
                        (long long)start);
    scatter_state *st = calloc(1, sizeof *st);
    if (!st) return par_msgf(msg, PAR_ERROR, "out of memory");
    s->state = st;
    s->destroy = free;
    st->dim = (int32_t)dim;
    st->start = start;
    s->run = run_slice_scatter;
    return PAR_OK;
}
