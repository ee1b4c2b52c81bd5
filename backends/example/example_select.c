/*
 * example_select.c - the example backend's selection kernels: where, masked_fill, gather, embedding; and the
 * decision kernels: the comparisons (f32 in, bool bytes out, IEEE: NaN compares false) and the logic ops.
 *
 * Selections copy floats: conditions and masks are bool bytes (0 or 1), indices i32 that the harness's reference has
 * checked to lie in [0, n) (a case with an index out of range never reaches a backend's verdict, but the kernels
 * clamp anyway so that they never read outside x). Kernels never allocate and never write outside y.
 */
#include <math.h>

#include "example.h"

/* where: y = cond ? a : b, all three broadcast to y's shape. */
void ex_where(const ex_plan *p, const par_node *n)
{
    const par_value *cv = ex_in_value(p, n, 0), *av = ex_in_value(p, n, 1), *bv = ex_in_value(p, n, 2);
    const par_value *yv = ex_out_value(p, n);
    const uint8_t *cond = ex_in_raw(p, n, 0);
    const float *a = ex_in(p, n, 1), *b = ex_in(p, n, 2);
    float *y = ex_out(p, n);
    int64_t sc[PAR_MAX_RANK], sa[PAR_MAX_RANK], sb[PAR_MAX_RANK];
    ex_broadcast_strides(cv->dims, cv->rank, yv->rank, sc);
    ex_broadcast_strides(av->dims, av->rank, yv->rank, sa);
    ex_broadcast_strides(bv->dims, bv->rank, yv->rank, sb);
    for (int64_t j = 0; j < yv->numel; j++)
        y[j] = cond[ex_offset(j, yv->dims, yv->rank, sc)] ? a[ex_offset(j, yv->dims, yv->rank, sa)]
                                                          : b[ex_offset(j, yv->dims, yv->rank, sb)];
}

/* masked_fill: y = mask ? value : x, the mask broadcast to x's shape. */
void ex_masked_fill(const ex_plan *p, const par_node *n)
{
    const par_value *xv = ex_in_value(p, n, 0), *mv = ex_in_value(p, n, 1);
    const float *x = ex_in(p, n, 0);
    const uint8_t *mask = ex_in_raw(p, n, 1);
    float *y = ex_out(p, n);
    const float value = (float)par_attr_float(n, "value", 0.0);
    int64_t sm[PAR_MAX_RANK];
    ex_broadcast_strides(mv->dims, mv->rank, xv->rank, sm);
    for (int64_t j = 0; j < xv->numel; j++) y[j] = mask[ex_offset(j, xv->dims, xv->rank, sm)] ? value : x[j];
}

static int64_t clamp_index(int32_t i, int64_t n)
{
    return i < 0 ? 0 : i >= n ? n - 1 : i;
}

/* gather on axis: x seen as [outer, n, inner]; y as [outer, count, inner] with row j = x's row indices[j]. */
void ex_gather(const ex_plan *p, const par_node *n)
{
    const par_value *xv = ex_in_value(p, n, 0), *iv = ex_in_value(p, n, 1);
    const float *x = ex_in(p, n, 0);
    const int32_t *idx = ex_in_raw(p, n, 1);
    float *y = ex_out(p, n);
    int64_t axis = par_attr_int(n, "axis", 0);
    if (axis < 0) axis += xv->rank;
    const int64_t outer = ex_prod(xv->dims, 0, (int32_t)axis), rows = xv->dims[axis];
    const int64_t inner = ex_prod(xv->dims, (int32_t)axis + 1, xv->rank), count = iv->numel;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < count; j++)
            memcpy(y + (o * count + j) * inner, x + (o * rows + clamp_index(idx[j], rows)) * inner,
                   (size_t)inner * sizeof(float));
}

/* embedding: y[..., :] = weight[indices[...], :]. */
void ex_embedding(const ex_plan *p, const par_node *n)
{
    const par_value *iv = ex_in_value(p, n, 0), *wv = ex_in_value(p, n, 1);
    const int32_t *idx = ex_in_raw(p, n, 0);
    const float *w = ex_in(p, n, 1);
    float *y = ex_out(p, n);
    const int64_t V = wv->dims[0], D = wv->dims[1];
    for (int64_t j = 0; j < iv->numel; j++)
        memcpy(y + j * D, w + clamp_index(idx[j], V) * D, (size_t)D * sizeof(float));
}

/* eq, gt, lt, ge, le: y = a op b as bool bytes, a and b broadcast to y's shape. */
void ex_compare(const ex_plan *p, const par_node *n)
{
    const par_value *av = ex_in_value(p, n, 0), *bv = ex_in_value(p, n, 1), *yv = ex_out_value(p, n);
    const float *a = ex_in(p, n, 0), *b = ex_in(p, n, 1);
    uint8_t *y = (uint8_t *)p->dst[n->outputs[0]];
    const char *op = n->op;
    int64_t sa[PAR_MAX_RANK], sb[PAR_MAX_RANK];
    ex_broadcast_strides(av->dims, av->rank, yv->rank, sa);
    ex_broadcast_strides(bv->dims, bv->rank, yv->rank, sb);
    const int kind = op[0] == 'e' ? 0 : op[0] == 'g' ? (op[1] == 't' ? 1 : 3) : (op[1] == 't' ? 2 : 4);
    for (int64_t j = 0; j < yv->numel; j++) {
        const float x = a[ex_offset(j, yv->dims, yv->rank, sa)], z = b[ex_offset(j, yv->dims, yv->rank, sb)];
        int r = kind == 0 ? x == z : kind == 1 ? x > z : kind == 2 ? x < z : kind == 3 ? x >= z : x <= z;
        y[j] = (uint8_t)r;
    }
}

/* logical_and, logical_or, logical_xor (two bool inputs, broadcast) and logical_not (one). */
void ex_logical(const ex_plan *p, const par_node *n)
{
    const par_value *av = ex_in_value(p, n, 0), *yv = ex_out_value(p, n);
    const par_value *bv = n->n_inputs > 1 ? ex_in_value(p, n, 1) : av;
    const uint8_t *a = ex_in_raw(p, n, 0), *b = n->n_inputs > 1 ? ex_in_raw(p, n, 1) : a;
    uint8_t *y = (uint8_t *)p->dst[n->outputs[0]];
    const char kind = n->op[8]; /* logical_[a]nd, [o]r, [x]or, [n]ot */
    int64_t sa[PAR_MAX_RANK], sb[PAR_MAX_RANK];
    ex_broadcast_strides(av->dims, av->rank, yv->rank, sa);
    ex_broadcast_strides(bv->dims, bv->rank, yv->rank, sb);
    for (int64_t j = 0; j < yv->numel; j++) {
        const int x = a[ex_offset(j, yv->dims, yv->rank, sa)] != 0, z = b[ex_offset(j, yv->dims, yv->rank, sb)] != 0;
        int r = kind == 'a' ? x && z : kind == 'o' ? x || z : kind == 'x' ? x != z : !x;
        y[j] = (uint8_t)r;
    }
}
