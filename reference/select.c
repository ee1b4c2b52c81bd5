/*
 * select.c - reference kernels of the selection ops where, masked_fill, gather and embedding (docs/ops.md,
 * "Selection"), following PyTorch's torch.where, Tensor.masked_fill, torch.index_select generalised to index tensors
 * of any rank (ONNX / NNAPI gather) and F.embedding.
 *
 * Budgets (docs/budgets/elementwise.md, "Selection"): these ops choose elements and compute nothing, so a correct
 * backend is bit-exact and each output element carries the selected input element's value and budget unchanged.
 * The one exception is masked_fill's fill value, a constant the backend holds in its own formats (docs/oracle.md,
 * rule 2): a value that the arithmetic or storage format cannot represent exactly (0.1, not 0, 1 or -inf) is allowed
 * one rounding to each format that cannot, as pad's fill value.
 *
 * Conditions and masks are bool tensors (v is 0 or 1); indices are i32 (v is the integer). An index outside [0, n)
 * is an error naming the element, as PyTorch raises one: a case with such an index is malformed, not a backend
 * failure. The kernels must not allocate nor read anything but their inputs.
 */
#include "reference.h"
#include "elem_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/graph.h"
#include "core/shape.h"

/* Strides of t read through an index of the output's rank under numpy broadcasting (0 on a broadcast dimension). */
static void bcast_strides(const par_rt *t, int32_t out_rank, const int64_t *out_dims, int64_t *st)
{
    int64_t s = 1;
    (void)out_dims;
    for (int32_t d = out_rank - 1; d >= 0; d--) {
        int32_t k = d - (out_rank - t->rank);
        int64_t size = k >= 0 ? t->dims[k] : 1;
        st[d] = size == 1 ? 0 : s;
        s *= size;
    }
}

/* Advance a multi-index over dims, moving k offsets along their strides. */
static void step_index(int32_t rank, const int64_t *dims, int64_t *idx, int32_t k, int64_t *const *off,
                       int64_t (*const st)[PAR_MAX_RANK])
{
    for (int32_t d = rank - 1; d >= 0; d--) {
        idx[d]++;
        for (int32_t j = 0; j < k; j++) *off[j] += st[j][d];
        if (idx[d] < dims[d]) return;
        for (int32_t j = 0; j < k; j++) *off[j] -= st[j][d] * idx[d];
        idx[d] = 0;
    }
}

/* ------------------------------------------------------------------------------------------------------------- */
/* where(cond, a, b) = cond ? a : b, all three broadcast */

par_status par_ref_where(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    (void)c;
    if (!in[0] || !in[1] || !in[2] || !out[0])
        return par_msgf(msg, PAR_ERROR, "where: inputs 0 (cond), 1 (a) and 2 (b) are required");
    par_rt *y = out[0];
    int64_t st[3][PAR_MAX_RANK], o[3] = {0, 0, 0}, idx[PAR_MAX_RANK] = {0};
    for (int32_t i = 0; i < 3; i++) {
        if (in[i]->rank > y->rank) return par_msgf(msg, PAR_ERROR, "where: output shape does not match");
        bcast_strides(in[i], y->rank, y->dims, st[i]);
    }
    int64_t *offs[3] = {&o[0], &o[1], &o[2]};
    for (int64_t k = 0; k < y->numel; k++) {
        const par_rt *src = in[0]->v[o[0]] != 0 ? in[1] : in[2];
        int64_t so = in[0]->v[o[0]] != 0 ? o[1] : o[2];
        y->v[k] = src->v[so];
        y->e[k] = src->e[so];
        step_index(y->rank, y->dims, idx, 3, offs, st);
    }
    return PAR_OK;
}

/* ------------------------------------------------------------------------------------------------------------- */
/* masked_fill(x, mask; value) = mask ? value : x, the mask broadcast to x's shape */

par_status par_ref_masked_fill(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    if (!in[0] || !in[1] || !out[0]) return par_msgf(msg, PAR_ERROR, "masked_fill: inputs 0 (x) and 1 (mask) are required");
    const par_rt *x = in[0], *m = in[1];
    par_rt *y = out[0];
    if (y->numel != x->numel || m->rank > x->rank)
        return par_msgf(msg, PAR_ERROR, "masked_fill: output shape does not match");
    double value = par_attr_float(c->n, "value", 0);
    /* the fill as the backend holds it (docs/oracle.md, rule 2); infinities are exact in every float format */
    double fill_e = isinf(value) ? 0 : const_rounding(value, &c->prec);
    int64_t st[1][PAR_MAX_RANK], o = 0, idx[PAR_MAX_RANK] = {0};
    int64_t *offs[1] = {&o};
    bcast_strides(m, x->rank, x->dims, st[0]);
    for (int64_t k = 0; k < x->numel; k++) {
        int fill = m->v[o] != 0;
        y->v[k] = fill ? value : x->v[k];
        y->e[k] = fill ? fill_e : x->e[k];
        step_index(x->rank, x->dims, idx, 1, offs, st);
    }
    return PAR_OK;
}

/* ------------------------------------------------------------------------------------------------------------- */
/* gather and embedding: rows selected by an i32 index tensor */

/* The index element k of ix as an integer in [0, n), or an error naming the element by its coordinates. */
static par_status read_index(const char *op, const char *what, const par_rt *ix, int64_t k, int64_t n, int64_t *out,
                             par_msg *msg)
{
    double v = ix->v[k];
    if (v >= 0 && v < (double)n && v == floor(v)) {
        *out = (int64_t)v;
        return PAR_OK;
    }
    char at[128];
    size_t len = 0;
    int64_t rem = k, co[PAR_MAX_RANK];
    for (int32_t d = ix->rank - 1; d >= 0; d--) {
        co[d] = rem % ix->dims[d];
        rem /= ix->dims[d];
    }
    len += (size_t)snprintf(at + len, sizeof at - len, "[");
    for (int32_t d = 0; d < ix->rank && len < sizeof at; d++)
        len += (size_t)snprintf(at + len, sizeof at - len, d ? ",%lld" : "%lld", (long long)co[d]);
    if (len < sizeof at) snprintf(at + len, sizeof at - len, "]");
    return par_msgf(msg, PAR_ERROR, "%s: %s element %s is %.0f, outside [0, %lld)", op, what, at, v, (long long)n);
}

par_status par_ref_gather(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    if (!in[0] || !in[1] || !out[0]) return par_msgf(msg, PAR_ERROR, "gather: inputs 0 (x) and 1 (indices) are required");
    const par_rt *x = in[0], *ix = in[1];
    par_rt *y = out[0];
    par_gather_geom_t q;
    par_status st = par_gather_geom(c->n, x->rank, x->dims, ix->rank, ix->dims, &q, msg);
    if (st != PAR_OK) return st;
    if (y->numel != q.outer * q.count * q.inner) return par_msgf(msg, PAR_ERROR, "gather: output shape does not match");
    for (int64_t j = 0; j < q.count; j++) {
        int64_t r;
        st = read_index("gather", "input 1 (indices)", ix, j, q.n, &r, msg);
        if (st != PAR_OK) return st;
        for (int64_t o = 0; o < q.outer; o++) {
            size_t bytes = sizeof(double) * (size_t)q.inner;
            int64_t src = (o * q.n + r) * q.inner, dst = (o * q.count + j) * q.inner;
            memcpy(y->v + dst, x->v + src, bytes);
            memcpy(y->e + dst, x->e + src, bytes);
        }
    }
    return PAR_OK;
}

par_status par_ref_embedding(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    (void)c;
    if (!in[0] || !in[1] || !out[0])
        return par_msgf(msg, PAR_ERROR, "embedding: inputs 0 (indices) and 1 (weight) are required");
    const par_rt *ix = in[0], *w = in[1];
    par_rt *y = out[0];
    if (w->rank != 2 || y->numel != ix->numel * w->dims[1])
        return par_msgf(msg, PAR_ERROR, "embedding: output shape does not match");
    const int64_t V = w->dims[0], D = w->dims[1];
    for (int64_t j = 0; j < ix->numel; j++) {
        int64_t r;
        par_status st = read_index("embedding", "input 0 (indices)", ix, j, V, &r, msg);
        if (st != PAR_OK) return st;
        memcpy(y->v + j * D, w->v + r * D, sizeof(double) * (size_t)D);
        memcpy(y->e + j * D, w->e + r * D, sizeof(double) * (size_t)D);
    }
    return PAR_OK;
}
