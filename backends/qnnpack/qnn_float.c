/*
 * qnn_float.c - the f32 ops of the qnnpack backend: what a decoder whose linears are linear_8da4w (int8 per token x
 * int4 blockwise) computes between them, so that the whole 8da4w model runs on the int8 engine as ExecuTorch runs
 * it on XNNPACK (its qd8-f32-qb4w GEMMs plus f32 operators): add and mul (broadcast), silu, masked_fill, embedding,
 * rms_norm, rope, sdpa, slice_scatter, reshape, flatten and permute, on f32 values stored logical row-major.
 *
 * A node is lowered here when its output is f32 and the op is one of the table below (par_qnn_float_op); the
 * quantized ops, quantize, dequantize, linear_dynamic and linear_8da4w keep qnnpack.c's table. Every input is f32
 * except embedding's indices (i32) and masked_fill's mask (bool), which must be a graph input or a constant (qnnpack
 * produces no i32 or bool value).
 *
 * Arithmetic (the backend declares PAR_ARITH_F32; the reference budgets every op for it):
 *   silu      x / (1 + e^-x) in double, rounded once (-inf gives -0);
 *   rms_norm  r = 1 / sqrtf(mean of squares in eight f32 partial sums + eps), y = x * r * w;
 *   rope      y_a = a c - b s, y_b = b c + a s (two products and a sum each; no fused multiply-add);
 *   sdpa      per query row the stored scores t_j = (q . k_j) scale + mask (four partial sums), their maximum,
 *             p_j = expf(t_j - max), their sum, p_j / sum, then o = sum_j p_j v_j; causal keys j <= i; a row with
 *             no visible key is NaN (0 / 0);
 *   the rest  exact (data movement, one add or multiply per element).
 * Memory is taken at prepare; run allocates nothing. A reshape or flatten of a value this backend produced is an
 * alias of its buffer (no step); of a graph input, a copy.
 */
#include <math.h>
#include <stdlib.h>

#include "qnn_common.h"

/* An f32 (or i32, bool) operand: a bound graph input, or a constant's data or a produced buffer. */
typedef struct qf_src {
    int32_t input_index;
    const void *p;
} qf_src;

static const void *qf_get(const qnn_plan *p, const qf_src *s)
{
    return s->input_index >= 0 ? p->inputs[s->input_index] : s->p;
}

static par_status qf_src_of(qnn_plan *p, const par_node *n, int32_t k, qf_src *s, par_msg *msg)
{
    const int32_t v = n->inputs[k];
    const par_value *val = &p->g->values[v];
    s->input_index = p->t[v].input_index;
    s->p = val->kind == PAR_VALUE_CONST ? val->data : (const void *)p->t[v].fbuf;
    if (s->input_index < 0 && !s->p)
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: input %d ('%s') is a value qnnpack does not produce", n->op,
                        (int)k, val->name);
    return PAR_OK;
}

/* The f32 output buffer of node n (one element of slack: a zero-sized value still gets a pointer). */
static float *qf_out(qnn_plan *p, const par_node *n)
{
    qnn_tensor *t = &p->t[n->outputs[0]];
    t->fbuf = par_qnn_alloc(p, sizeof(float) * ((size_t)t->numel + 1));
    return t->fbuf;
}

/* The node's output buffer into *y, then the step: the end of every lowering here. */
static par_status qf_emit(qnn_plan *p, const par_node *n, float **y, qnn_step_fn fn, const void *op, par_msg *msg)
{
    *y = qf_out(p, n);
    if (!*y) return par_msgf(msg, PAR_ERROR, "out of memory");
    return par_qnn_add_step(p, fn, op, msg);
}

/* Strides of value `in` read at the index of an output of rank yr, numpy's right-aligned broadcast (0 along a
 * dimension of size 1 or missing). */
static void bcast_strides(const par_value *in, int32_t yr, int64_t *st)
{
    int64_t s = 1;
    for (int32_t d = yr - 1; d >= 0; d--) {
        const int32_t di = d - (yr - in->rank);
        const int64_t dim = di >= 0 ? in->dims[di] : 1;
        st[d] = dim == 1 ? 0 : s;
        s *= dim;
    }
}

/* One step of an odometer over dims (row-major): idx advances by one element and the offsets *ia and *ib by their
 * strides sa and sb (a dimension that wraps takes its whole extent back). */
static inline void qf_next(int32_t rank, const int64_t *dims, int64_t *idx, const int64_t *sa, int64_t *ia,
                           const int64_t *sb, int64_t *ib)
{
    for (int32_t d = rank - 1; d >= 0; d--) {
        *ia += sa[d], *ib += sb[d];
        if (++idx[d] < dims[d]) return;
        *ia -= sa[d] * dims[d], *ib -= sb[d] * dims[d];
        idx[d] = 0;
    }
}

/* ---------------------------------------------------------------------------------------------------------------
 * add, mul, masked_fill: y[i] = f(a[i'], b[i'']) over y's index space with broadcast strides.
 * ------------------------------------------------------------------------------------------------------------- */
enum { QF_ADD, QF_MUL, QF_MASKED_FILL };

typedef struct qf_bin {
    int kind;
    qf_src a, b;
    float *y, fill;
    int32_t rank;
    int64_t dims[PAR_MAX_RANK], sa[PAR_MAX_RANK], sb[PAR_MAX_RANK], n;
    int same; /* both operands have y's shape: one flat loop */
} qf_bin;

static inline float qf_apply(int kind, float a, const void *b, int64_t j, float fill)
{
    if (kind == QF_ADD) return a + ((const float *)b)[j];
    if (kind == QF_MUL) return a * ((const float *)b)[j];
    return ((const uint8_t *)b)[j] ? fill : a;
}

static void qf_bin_run(const void *opv, qnn_plan *p)
{
    const qf_bin *o = opv;
    const float *a = qf_get(p, &o->a);
    const void *b = qf_get(p, &o->b);
    if (o->same) {
        for (int64_t i = 0; i < o->n; i++) o->y[i] = qf_apply(o->kind, a[i], b, i, o->fill);
        return;
    }
    int64_t idx[PAR_MAX_RANK] = {0}, ia = 0, ib = 0;
    for (int64_t i = 0; i < o->n; i++) {
        o->y[i] = qf_apply(o->kind, a[ia], b, ib, o->fill);
        qf_next(o->rank, o->dims, idx, o->sa, &ia, o->sb, &ib);
    }
}

static par_status qf_lower_bin(qnn_plan *p, const par_node *n, int kind, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_value *a = par_node_input(g, n, 0), *b = par_node_input(g, n, 1), *y = par_node_output(g, n, 0);
    qf_bin *o = par_qnn_alloc(p, sizeof *o);
    if (!o) return par_msgf(msg, PAR_ERROR, "out of memory");
    o->kind = kind;
    o->fill = kind == QF_MASKED_FILL ? (float)par_attr_float(n, "value", 0.0) : 0.0f;
    par_status st = qf_src_of(p, n, 0, &o->a, msg);
    if (st == PAR_OK) st = qf_src_of(p, n, 1, &o->b, msg);
    if (st != PAR_OK) return st;
    o->rank = y->rank, o->n = y->numel;
    memcpy(o->dims, y->dims, sizeof o->dims);
    bcast_strides(a, y->rank, o->sa);
    bcast_strides(b, y->rank, o->sb);
    o->same = a->numel == y->numel && b->numel == y->numel;
    return qf_emit(p, n, &o->y, qf_bin_run, o, msg);
}

/* ---------------------------------------------------------------------------------------------------------------
 * silu; copies (reshape of a graph input); embedding
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct qf_map {
    qf_src x;
    float *y;
    int64_t n;
} qf_map;

static void qf_silu_run(const void *opv, qnn_plan *p)
{
    const qf_map *o = opv;
    const float *x = qf_get(p, &o->x);
    for (int64_t i = 0; i < o->n; i++) {
        const double v = x[i];
        o->y[i] = x[i] == -INFINITY ? -0.0f : (float)(v / (1.0 + exp(-v)));
    }
}

static void qf_copy_run(const void *opv, qnn_plan *p)
{
    const qf_map *o = opv;
    memcpy(o->y, qf_get(p, &o->x), sizeof(float) * (size_t)o->n);
}

static par_status qf_lower_map(qnn_plan *p, const par_node *n, qnn_step_fn fn, par_msg *msg)
{
    qf_map *o = par_qnn_alloc(p, sizeof *o);
    if (!o) return par_msgf(msg, PAR_ERROR, "out of memory");
    par_status st = qf_src_of(p, n, 0, &o->x, msg);
    if (st != PAR_OK) return st;
    o->n = p->t[n->outputs[0]].numel;
    return qf_emit(p, n, &o->y, fn, o, msg);
}

/* reshape, flatten: the same elements in the same order. */
static par_status qf_lower_reshape(qnn_plan *p, const par_node *n, par_msg *msg)
{
    const int32_t v = n->inputs[0];
    const par_value *val = &p->g->values[v];
    if (p->t[v].input_index >= 0) return qf_lower_map(p, n, qf_copy_run, msg);
    p->t[n->outputs[0]].fbuf = val->kind == PAR_VALUE_CONST ? (float *)val->data : p->t[v].fbuf;
    if (!p->t[n->outputs[0]].fbuf)
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: input '%s' is a value qnnpack does not produce", n->op, val->name);
    return PAR_OK;
}

typedef struct qf_embed {
    qf_src ix, w;
    float *y;
    int64_t n, V, D;
} qf_embed;

static void qf_embed_run(const void *opv, qnn_plan *p)
{
    const qf_embed *o = opv;
    const int32_t *ix = qf_get(p, &o->ix);
    const float *w = qf_get(p, &o->w);
    for (int64_t j = 0; j < o->n; j++) {
        const int64_t r = ix[j] < 0 ? 0 : ix[j] >= o->V ? o->V - 1 : ix[j]; /* out of range: the reference refuses */
        memcpy(o->y + j * o->D, w + r * o->D, sizeof(float) * (size_t)o->D);
    }
}

static par_status qf_lower_embedding(qnn_plan *p, const par_node *n, par_msg *msg)
{
    const par_value *ix = par_node_input(p->g, n, 0), *w = par_node_input(p->g, n, 1);
    if (w->rank != 2) return par_msgf(msg, PAR_UNSUPPORTED, "embedding: weight '%s' must be [V, D]", w->name);
    qf_embed *o = par_qnn_alloc(p, sizeof *o);
    if (!o) return par_msgf(msg, PAR_ERROR, "out of memory");
    par_status st = qf_src_of(p, n, 0, &o->ix, msg);
    if (st == PAR_OK) st = qf_src_of(p, n, 1, &o->w, msg);
    if (st != PAR_OK) return st;
    o->n = ix->numel, o->V = w->dims[0], o->D = w->dims[1];
    return qf_emit(p, n, &o->y, qf_embed_run, o, msg);
}

/* ---------------------------------------------------------------------------------------------------------------
 * permute: y[idx] = x[idx permuted], an odometer over y with x's strides reordered.
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct qf_perm {
    qf_src x;
    float *y;
    int32_t rank;
    int64_t dims[PAR_MAX_RANK], sx[PAR_MAX_RANK], n;
} qf_perm;

static void qf_perm_run(const void *opv, qnn_plan *p)
{
    const qf_perm *o = opv;
    const float *x = qf_get(p, &o->x);
    static const int64_t none[PAR_MAX_RANK];
    int64_t idx[PAR_MAX_RANK] = {0}, ix = 0, unused = 0;
    for (int64_t i = 0; i < o->n; i++) {
        o->y[i] = x[ix];
        qf_next(o->rank, o->dims, idx, o->sx, &ix, none, &unused);
    }
}

static par_status qf_lower_permute(qnn_plan *p, const par_node *n, par_msg *msg)
{
    const par_value *x = par_node_input(p->g, n, 0), *y = par_node_output(p->g, n, 0);
    if (par_attr_count(n, "perm") != x->rank)
        return par_msgf(msg, PAR_UNSUPPORTED, "permute: perm has %d entries for rank %d", par_attr_count(n, "perm"),
                        (int)x->rank);
    qf_perm *o = par_qnn_alloc(p, sizeof *o);
    if (!o) return par_msgf(msg, PAR_ERROR, "out of memory");
    par_status st = qf_src_of(p, n, 0, &o->x, msg);
    if (st != PAR_OK) return st;
    int64_t xs[PAR_MAX_RANK], s = 1;
    for (int32_t d = x->rank - 1; d >= 0; d--) xs[d] = s, s *= x->dims[d];
    o->rank = y->rank, o->n = y->numel;
    memcpy(o->dims, y->dims, sizeof o->dims);
    for (int32_t d = 0; d < y->rank; d++) {
        int64_t pd = par_attr_ints_at(n, "perm", d, d);
        if (pd < 0) pd += x->rank;
        if (pd < 0 || pd >= x->rank) return par_msgf(msg, PAR_UNSUPPORTED, "permute: perm[%d] out of range", (int)d);
        o->sx[d] = xs[pd];
    }
    return qf_emit(p, n, &o->y, qf_perm_run, o, msg);
}

/* ---------------------------------------------------------------------------------------------------------------
 * rms_norm, rope
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct qf_rows {
    qf_src x, a, b; /* rms_norm: a the weight (p NULL and input_index -1: absent); rope: a cos, b sin */
    float *y, eps;
    int64_t rows, n, S;
    int has_w, inter;
} qf_rows;

static void qf_rms_run(const void *opv, qnn_plan *p)
{
    const qf_rows *o = opv;
    const float *x = qf_get(p, &o->x), *w = o->has_w ? qf_get(p, &o->a) : NULL;
    for (int64_t r = 0; r < o->rows; r++) {
        const float *xr = x + r * o->n;
        float *yr = o->y + r * o->n, acc[8] = {0};
        int64_t i = 0;
        for (; i + 8 <= o->n; i += 8)
            for (int k = 0; k < 8; k++) acc[k] += xr[i + k] * xr[i + k];
        for (int k = 0; i < o->n; i++, k++) acc[k] += xr[i] * xr[i];
        const float ss = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        const float rs = 1.0f / sqrtf(ss / (float)o->n + o->eps);
        for (int64_t j = 0; j < o->n; j++) yr[j] = w ? xr[j] * rs * w[j] : xr[j] * rs;
    }
}

static void qf_rope_run(const void *opv, qnn_plan *p)
{
    const qf_rows *o = opv;
    const float *x = qf_get(p, &o->x), *cs = qf_get(p, &o->a), *sn = qf_get(p, &o->b);
    const int64_t D = o->n, half = D / 2;
    for (int64_t r = 0; r < o->rows; r++) {
        const float *c = cs + (r % o->S) * half, *s = sn + (r % o->S) * half;
        for (int64_t i = 0; i < half; i++) {
            const int64_t ia = r * D + (o->inter ? 2 * i : i), ib = r * D + (o->inter ? 2 * i + 1 : i + half);
            const float xa = x[ia], xb = x[ib], ac = xa * c[i], bs = xb * s[i], bc = xb * c[i], as = xa * s[i];
            o->y[ia] = ac - bs;
            o->y[ib] = bc + as;
        }
    }
}

static par_status qf_lower_rows(qnn_plan *p, const par_node *n, int rope, par_msg *msg)
{
    const par_value *x = par_node_input(p->g, n, 0);
    qf_rows *o = par_qnn_alloc(p, sizeof *o);
    if (!o) return par_msgf(msg, PAR_ERROR, "out of memory");
    par_status st = qf_src_of(p, n, 0, &o->x, msg);
    if (rope) {
        if (x->rank < 2 || x->dims[x->rank - 1] % 2 != 0)
            return par_msgf(msg, PAR_UNSUPPORTED, "rope: input 0 ('%s') must be [..., S, D] with D even", x->name);
        if (st == PAR_OK) st = qf_src_of(p, n, 1, &o->a, msg);
        if (st == PAR_OK) st = qf_src_of(p, n, 2, &o->b, msg);
        o->n = x->dims[x->rank - 1], o->S = x->dims[x->rank - 2];
        o->inter = par_attr_int(n, "interleaved", 0) != 0;
    } else {
        const int32_t nd = par_attr_count(n, "normalized_shape");
        if (nd < 1 || nd > x->rank)
            return par_msgf(msg, PAR_UNSUPPORTED, "rms_norm: normalized_shape has %d dimensions for rank %d",
                            (int)nd, (int)x->rank);
        o->n = 1;
        for (int32_t d = x->rank - nd; d < x->rank; d++) o->n *= x->dims[d];
        o->eps = (float)par_attr_float(n, "eps", 1e-6);
        o->has_w = par_node_input(p->g, n, 1) != NULL;
        if (st == PAR_OK && o->has_w) st = qf_src_of(p, n, 1, &o->a, msg);
    }
    if (st != PAR_OK) return st;
    o->rows = o->n > 0 ? x->numel / o->n : 0;
    return qf_emit(p, n, &o->y, rope ? qf_rope_run : qf_rms_run, o, msg);
}

/* ---------------------------------------------------------------------------------------------------------------
 * sdpa
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct qf_sdpa {
    qf_src q, k, v, m;
    int has_m, causal;
    float scale, *y, *t; /* t: one row of Skv scores */
    int64_t B, Hq, Hkv, Sq, Skv, D, Dv, ms[4];
} qf_sdpa;

static void qf_sdpa_run(const void *opv, qnn_plan *p)
{
    const qf_sdpa *o = opv;
    const float *q = qf_get(p, &o->q), *k = qf_get(p, &o->k), *v = qf_get(p, &o->v);
    const float *m = o->has_m ? qf_get(p, &o->m) : NULL;
    float *t = o->t;
    for (int64_t b = 0; b < o->B; b++)
        for (int64_t h = 0; h < o->Hq; h++) {
            const int64_t hk = h / (o->Hq / o->Hkv);
            const float *kh = k + (b * o->Hkv + hk) * o->Skv * o->D, *vh = v + (b * o->Hkv + hk) * o->Skv * o->Dv;
            for (int64_t i = 0; i < o->Sq; i++) {
                const float *qi = q + ((b * o->Hq + h) * o->Sq + i) * o->D;
                const float *mi = m ? m + b * o->ms[0] + h * o->ms[1] + i * o->ms[2] : NULL;
                float *yi = o->y + ((b * o->Hq + h) * o->Sq + i) * o->Dv;
                const int64_t n = o->causal ? (i + 1 < o->Skv ? i + 1 : o->Skv) : o->Skv;
                float mx = -INFINITY, sum = 0.0f;
                for (int64_t j = 0; j < n; j++) {
                    const float *kj = kh + j * o->D;
                    float acc[4] = {0};
                    int64_t d = 0;
                    for (; d + 4 <= o->D; d += 4)
                        for (int u = 0; u < 4; u++) acc[u] += qi[d + u] * kj[d + u];
                    for (int u = 0; d < o->D; d++, u++) acc[u] += qi[d] * kj[d];
                    t[j] = ((acc[0] + acc[1]) + (acc[2] + acc[3])) * o->scale;
                    if (mi) t[j] += mi[j * o->ms[3]];
                    mx = t[j] > mx ? t[j] : mx;
                }
                for (int64_t j = 0; j < n; j++) {
                    t[j] = expf(t[j] - mx); /* no visible key: mx = -inf, every term NaN */
                    sum += t[j];
                }
                for (int64_t j = 0; j < n; j++) t[j] /= sum;
                for (int64_t d = 0; d < o->Dv; d++) yi[d] = 0.0f;
                for (int64_t j = 0; j < n; j++) {
                    const float *vj = vh + j * o->Dv;
                    for (int64_t d = 0; d < o->Dv; d++) yi[d] += t[j] * vj[d];
                }
            }
        }
}

static par_status qf_lower_sdpa(qnn_plan *p, const par_node *n, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_value *q = par_node_input(g, n, 0), *k = par_node_input(g, n, 1), *v = par_node_input(g, n, 2);
    const par_value *m = par_node_input(g, n, 3);
    if (q->rank != 4 || k->rank != 4 || v->rank != 4)
        return par_msgf(msg, PAR_UNSUPPORTED, "sdpa: q, k and v must be rank 4");
    qf_sdpa *o = par_qnn_alloc(p, sizeof *o);
    if (!o) return par_msgf(msg, PAR_ERROR, "out of memory");
    par_status st = qf_src_of(p, n, 0, &o->q, msg);
    if (st == PAR_OK) st = qf_src_of(p, n, 1, &o->k, msg);
    if (st == PAR_OK) st = qf_src_of(p, n, 2, &o->v, msg);
    if (st == PAR_OK && m) st = qf_src_of(p, n, 3, &o->m, msg);
    if (st != PAR_OK) return st;
    o->B = q->dims[0], o->Hq = q->dims[1], o->Sq = q->dims[2], o->D = q->dims[3];
    o->Hkv = k->dims[1], o->Skv = k->dims[2], o->Dv = v->dims[3];
    if (o->Hkv < 1 || o->Hq % o->Hkv != 0)
        return par_msgf(msg, PAR_UNSUPPORTED, "sdpa: %lld query heads for %lld key heads", (long long)o->Hq,
                        (long long)o->Hkv);
    o->causal = par_attr_int(n, "is_causal", 0) != 0;
    const double sc = par_attr_float(n, "scale", 0.0);
    o->scale = sc > 0 ? (float)sc : (float)(1.0 / sqrt((double)o->D));
    o->has_m = m != NULL;
    if (m) bcast_strides(m, 4, o->ms);
    o->t = par_qnn_alloc(p, sizeof(float) * ((size_t)o->Skv + 1));
    if (!o->t) return par_msgf(msg, PAR_ERROR, "out of memory");
    return qf_emit(p, n, &o->y, qf_sdpa_run, o, msg);
}

/* ---------------------------------------------------------------------------------------------------------------
 * slice_scatter: y = x, then src over rows [start, start + len) of dim: per outer index one contiguous run each.
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct qf_scatter {
    qf_src x, s;
    float *y;
    int64_t n, outer, xrun, srun, off; /* off: start * inner */
} qf_scatter;

static void qf_scatter_run(const void *opv, qnn_plan *p)
{
    const qf_scatter *o = opv;
    const float *x = qf_get(p, &o->x), *s = qf_get(p, &o->s);
    memcpy(o->y, x, sizeof(float) * (size_t)o->n);
    for (int64_t i = 0; i < o->outer; i++)
        memcpy(o->y + i * o->xrun + o->off, s + i * o->srun, sizeof(float) * (size_t)o->srun);
}

static par_status qf_lower_slice_scatter(qnn_plan *p, const par_node *n, par_msg *msg)
{
    const par_value *x = par_node_input(p->g, n, 0), *s = par_node_input(p->g, n, 1);
    int64_t dim = par_attr_int(n, "dim", 0), start = par_attr_int(n, "start", 0);
    if (dim < 0) dim += x->rank;
    if (dim < 0 || dim >= x->rank || s->rank != x->rank || start < 0 || start + s->dims[dim] > x->dims[dim])
        return par_msgf(msg, PAR_UNSUPPORTED, "slice_scatter: dim or start out of range");
    qf_scatter *o = par_qnn_alloc(p, sizeof *o);
    if (!o) return par_msgf(msg, PAR_ERROR, "out of memory");
    par_status st = qf_src_of(p, n, 0, &o->x, msg);
    if (st == PAR_OK) st = qf_src_of(p, n, 1, &o->s, msg);
    if (st != PAR_OK) return st;
    int64_t inner = 1, outer = 1;
    for (int32_t d = (int32_t)dim + 1; d < x->rank; d++) inner *= x->dims[d];
    for (int32_t d = 0; d < dim; d++) outer *= x->dims[d];
    o->n = x->numel, o->outer = outer;
    o->xrun = x->dims[dim] * inner, o->srun = s->dims[dim] * inner, o->off = start * inner;
    return qf_emit(p, n, &o->y, qf_scatter_run, o, msg);
}

/* ---------------------------------------------------------------------------------------------------------------
 * The table, the check and the dispatch
 * ------------------------------------------------------------------------------------------------------------- */
enum { QF_SILU = 3, QF_RESHAPE, QF_PERMUTE, QF_EMBEDDING, QF_RMS_NORM, QF_ROPE, QF_SDPA, QF_SLICE_SCATTER };

static const struct {
    const char *op;
    int kind;
} qf_table[] = {
    {"add", QF_ADD},         {"mul", QF_MUL},           {"masked_fill", QF_MASKED_FILL},
    {"silu", QF_SILU},       {"reshape", QF_RESHAPE},   {"flatten", QF_RESHAPE},
    {"permute", QF_PERMUTE}, {"embedding", QF_EMBEDDING}, {"rms_norm", QF_RMS_NORM},
    {"rope", QF_ROPE},       {"sdpa", QF_SDPA},         {"slice_scatter", QF_SLICE_SCATTER},
};

static int qf_kind(const par_graph_desc *g, const par_node *n)
{
    const par_value *y = par_node_output(g, n, 0);
    if (!y || y->dtype != PAR_DTYPE_F32) return -1;
    for (size_t i = 0; i < sizeof qf_table / sizeof qf_table[0]; i++)
        if (strcmp(qf_table[i].op, n->op) == 0) return qf_table[i].kind;
    return -1;
}

int par_qnn_float_op(const par_graph_desc *g, const par_node *n)
{
    return qf_kind(g, n) >= 0;
}

par_status par_qnn_check_float(const par_graph_desc *g, const par_node *n, par_msg *msg)
{
    const int kind = qf_kind(g, n);
    for (int32_t i = 0; i < n->n_inputs; i++) {
        const par_value *v = par_node_input(g, n, i);
        if (!v) continue;
        const par_dtype want = kind == QF_EMBEDDING && i == 0      ? PAR_DTYPE_I32
                               : kind == QF_MASKED_FILL && i == 1 ? PAR_DTYPE_BOOL
                                                                   : PAR_DTYPE_F32;
        if (v->dtype != want)
            return par_msgf(msg, PAR_UNSUPPORTED, "%s: input %d ('%s') is %s; qnnpack's f32 ops take %s there", n->op,
                            (int)i, v->name, par_dtype_name(v->dtype), par_dtype_name(want));
        if (want != PAR_DTYPE_F32 && v->kind != PAR_VALUE_CONST && v->kind != PAR_VALUE_INPUT)
            return par_msgf(msg, PAR_UNSUPPORTED, "%s: input %d ('%s') must be a graph input or a constant", n->op,
                            (int)i, v->name);
    }
    return PAR_OK;
}

par_status par_qnn_lower_float(qnn_plan *p, int32_t node, par_msg *msg)
{
    const par_node *n = &p->g->nodes[node];
    switch (qf_kind(p->g, n)) {
    case QF_ADD: return qf_lower_bin(p, n, QF_ADD, msg);
    case QF_MUL: return qf_lower_bin(p, n, QF_MUL, msg);
    case QF_MASKED_FILL: return qf_lower_bin(p, n, QF_MASKED_FILL, msg);
    case QF_SILU: return qf_lower_map(p, n, qf_silu_run, msg);
    case QF_RESHAPE: return qf_lower_reshape(p, n, msg);
    case QF_PERMUTE: return qf_lower_permute(p, n, msg);
    case QF_EMBEDDING: return qf_lower_embedding(p, n, msg);
    case QF_RMS_NORM: return qf_lower_rows(p, n, 0, msg);
    case QF_ROPE: return qf_lower_rows(p, n, 1, msg);
    case QF_SDPA: return qf_lower_sdpa(p, n, msg);
    case QF_SLICE_SCATTER: return qf_lower_slice_scatter(p, n, msg);
    default: return par_msgf(msg, PAR_UNSUPPORTED, "op '%s' has no f32 form in qnnpack", n->op);
    }
}
