/*
 * shape.c - shape inference and reference kernels of the data movement ops: concat, reshape, flatten, permute,
 * pad and slice (docs/ops.md, "Shape and data movement").
 *
 * These ops select or move elements and compute nothing, so a correct backend is bit-exact: each output element
 * carries its source element's value and budget unchanged. The one exception is pad's fill value, which a backend
 * holds in its own format: a value that the format cannot represent exactly (0.1, not 0 or 1) is allowed one
 * rounding to the arithmetic format and one to the storage format. The kernels copy v and e whatever the dtype
 * (pad's fill needs a float dtype); they must not allocate nor read anything but their inputs.
 */
#include "reference.h"
#include "elem_util.h"

#include <math.h>
#include <string.h>

#include "core/graph.h"

#define DIM_LIMIT 268435456LL /* 2^28: the largest dimension (and element count) a graph may hold */

static void copy_shape(par_value *o, int32_t rank, const int64_t *dims)
{
    o->rank = rank;
    for (int32_t i = 0; i < rank; i++) o->dims[i] = dims[i];
    o->numel = par_shape_numel(rank, dims);
}

/* ------------------------------------------------------------------------------------------------------------- */
/* concat */

par_status par_infer_concat(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    const par_value *x0 = par_node_input(g, n, 0);
    if (!x0) return par_msgf(msg, PAR_ERROR, "input 0 is required");
    if (x0->rank == 0) return par_msgf(msg, PAR_ERROR, "input 0: rank 0 cannot be concatenated");
    int64_t axis_attr = par_attr_int(n, "axis", 1);
    int32_t axis = par_axis_norm(axis_attr, x0->rank);
    if (axis < 0)
        return par_msgf(msg, PAR_ERROR, "attribute 'axis': %lld is out of range for rank %d", (long long)axis_attr,
                        (int)x0->rank);
    int64_t dims[PAR_MAX_RANK];
    memcpy(dims, x0->dims, sizeof dims);
    for (int32_t i = 1; i < n->n_inputs; i++) {
        const par_value *xi = par_node_input(g, n, i);
        if (!xi) return par_msgf(msg, PAR_ERROR, "input %d is required", (int)i);
        if (xi->dtype != x0->dtype)
            return par_msgf(msg, PAR_ERROR, "input %d: dtype %s differs from input 0's %s", (int)i,
                            par_dtype_name(xi->dtype), par_dtype_name(x0->dtype));
        if (xi->rank != x0->rank)
            return par_msgf(msg, PAR_ERROR, "input %d: rank %d differs from input 0's %d", (int)i, (int)xi->rank,
                            (int)x0->rank);
        for (int32_t d = 0; d < x0->rank; d++)
            if (d != axis && xi->dims[d] != x0->dims[d])
                return par_msgf(msg, PAR_ERROR, "input %d: dimension %d is %lld, input 0's is %lld (only axis %d may "
                                "differ)", (int)i, (int)d, (long long)xi->dims[d], (long long)x0->dims[d], (int)axis);
        dims[axis] += xi->dims[axis];
        if (dims[axis] > DIM_LIMIT) return par_msgf(msg, PAR_ERROR, "attribute 'axis': concatenated size exceeds 2^28");
    }
    copy_shape(&outs[0], x0->rank, dims);
    return PAR_OK;
}

par_status par_ref_concat(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    par_rt *y = out[0];
    if (!y || y->rank == 0) return par_msgf(msg, PAR_ERROR, "concat: output must have rank >= 1");
    int32_t axis = par_axis_norm(par_attr_int(c->n, "axis", 1), y->rank);
    if (axis < 0) return par_msgf(msg, PAR_ERROR, "concat: attribute 'axis' out of range");
    int64_t outer = 1, inner = 1;
    for (int32_t d = 0; d < axis; d++) outer *= y->dims[d];
    for (int32_t d = axis + 1; d < y->rank; d++) inner *= y->dims[d];
    int64_t at = 0; /* running offset along the axis */
    for (int32_t i = 0; i < c->n->n_inputs; i++) {
        const par_rt *x = in[i];
        if (!x || x->rank != y->rank) return par_msgf(msg, PAR_ERROR, "concat: input %d missing or of wrong rank", (int)i);
        int64_t len = x->dims[axis];
        if (at + len > y->dims[axis] || x->numel != outer * len * inner)
            return par_msgf(msg, PAR_ERROR, "concat: input %d does not fit the output shape", (int)i);
        for (int64_t o = 0; o < outer; o++) {
            size_t bytes = sizeof(double) * (size_t)(len * inner);
            memcpy(y->v + (o * y->dims[axis] + at) * inner, x->v + o * len * inner, bytes);
            memcpy(y->e + (o * y->dims[axis] + at) * inner, x->e + o * len * inner, bytes);
        }
        at += len;
    }
    if (at != y->dims[axis]) return par_msgf(msg, PAR_ERROR, "concat: inputs cover %lld of %lld along the axis",
                                             (long long)at, (long long)y->dims[axis]);
    return PAR_OK;
}

/* ------------------------------------------------------------------------------------------------------------- */
/* reshape, flatten: the same elements in the same order */

par_status par_infer_reshape(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0);
    if (!x) return par_msgf(msg, PAR_ERROR, "input 0 (x) is required");
    int32_t rank = par_attr_count(n, "shape");
    if (rank > PAR_MAX_RANK)
        return par_msgf(msg, PAR_ERROR, "attribute 'shape': %d elements, at most %d", (int)rank, PAR_MAX_RANK);
    int64_t dims[PAR_MAX_RANK];
    int32_t infer_at = -1;
    int64_t known = 1;
    for (int32_t i = 0; i < rank; i++) {
        dims[i] = par_attr_ints_at(n, "shape", i, 0);
        if (dims[i] == -1) {
            if (infer_at >= 0)
                return par_msgf(msg, PAR_ERROR, "attribute 'shape': more than one -1 (elements %d and %d)",
                                (int)infer_at, (int)i);
            infer_at = i;
            continue;
        }
        if (dims[i] == 0)
            return par_msgf(msg, PAR_ERROR, "attribute 'shape': element %d is 0 (0 is not allowed)", (int)i);
        if (dims[i] < 0 || dims[i] > DIM_LIMIT)
            return par_msgf(msg, PAR_ERROR, "attribute 'shape': element %d is %lld, must be -1 or in [1, 2^28]",
                            (int)i, (long long)dims[i]);
        known *= dims[i];
        if (known > x->numel) break; /* cannot match; also keeps the product from overflowing */
    }
    char sx[96];
    par_shape_format(x->rank, x->dims, sx, sizeof sx);
    if (infer_at >= 0) {
        if (known > x->numel || x->numel % known != 0)
            return par_msgf(msg, PAR_ERROR, "attribute 'shape': %lld elements of input 0 (x) %s are not a multiple of "
                            "the product of the other dimensions", (long long)x->numel, sx);
        dims[infer_at] = x->numel / known;
    } else if (known != x->numel) {
        return par_msgf(msg, PAR_ERROR, "attribute 'shape': does not keep the %lld elements of input 0 (x) %s",
                        (long long)x->numel, sx);
    }
    copy_shape(&outs[0], rank, dims);
    return PAR_OK;
}

par_status par_infer_flatten(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0);
    if (!x) return par_msgf(msg, PAR_ERROR, "input 0 (x) is required");
    int64_t sa = par_attr_int(n, "start_dim", 1), ea = par_attr_int(n, "end_dim", -1);
    int32_t r = x->rank > 0 ? x->rank : 1; /* a rank-0 tensor flattens to [1], as PyTorch */
    int32_t s = par_axis_norm(sa, r), e = par_axis_norm(ea, r);
    if (s < 0)
        return par_msgf(msg, PAR_ERROR, "attribute 'start_dim': %lld is out of range for rank %d", (long long)sa,
                        (int)x->rank);
    if (e < 0)
        return par_msgf(msg, PAR_ERROR, "attribute 'end_dim': %lld is out of range for rank %d", (long long)ea,
                        (int)x->rank);
    if (s > e)
        return par_msgf(msg, PAR_ERROR, "attribute 'start_dim': %lld comes after 'end_dim' %lld", (long long)sa,
                        (long long)ea);
    if (x->rank == 0) {
        int64_t one = 1;
        copy_shape(&outs[0], 1, &one);
        return PAR_OK;
    }
    int64_t dims[PAR_MAX_RANK];
    int32_t k = 0;
    for (int32_t i = 0; i < s; i++) dims[k++] = x->dims[i];
    int64_t merged = 1;
    for (int32_t i = s; i <= e; i++) merged *= x->dims[i];
    dims[k++] = merged;
    for (int32_t i = e + 1; i < x->rank; i++) dims[k++] = x->dims[i];
    copy_shape(&outs[0], k, dims);
    return PAR_OK;
}

par_status par_ref_copy(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    if (!in[0] || !out[0]) return par_msgf(msg, PAR_ERROR, "%s: input 0 (x) is required", c->n ? c->n->op : "copy");
    if (in[0]->numel != out[0]->numel)
        return par_msgf(msg, PAR_ERROR, "%s: output has %lld elements, input %lld", c->n ? c->n->op : "copy",
                        (long long)out[0]->numel, (long long)in[0]->numel);
    memcpy(out[0]->v, in[0]->v, sizeof(double) * (size_t)in[0]->numel);
    memcpy(out[0]->e, in[0]->e, sizeof(double) * (size_t)in[0]->numel);
    return PAR_OK;
}

/* ------------------------------------------------------------------------------------------------------------- */
/* permute */

/* The normalized permutation, or an error naming the bad element. */
static par_status read_perm(const par_node *n, int32_t rank, int32_t *perm, par_msg *msg)
{
    int32_t count = par_attr_count(n, "perm");
    if (count != rank)
        return par_msgf(msg, PAR_ERROR, "attribute 'perm': %d elements for input 0 (x) of rank %d", (int)count,
                        (int)rank);
    int seen[PAR_MAX_RANK] = {0};
    for (int32_t i = 0; i < rank; i++) {
        int64_t p = par_attr_ints_at(n, "perm", i, -1000);
        perm[i] = par_axis_norm(p, rank);
        if (perm[i] < 0)
            return par_msgf(msg, PAR_ERROR, "attribute 'perm': element %d is %lld, out of range for rank %d", (int)i,
                            (long long)p, (int)rank);
        if (seen[perm[i]])
            return par_msgf(msg, PAR_ERROR, "attribute 'perm': dimension %d appears twice (not a permutation)",
                            (int)perm[i]);
        seen[perm[i]] = 1;
    }
    return PAR_OK;
}

par_status par_infer_permute(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0);
    if (!x) return par_msgf(msg, PAR_ERROR, "input 0 (x) is required");
    int32_t perm[PAR_MAX_RANK];
    par_status st = read_perm(n, x->rank, perm, msg);
    if (st != PAR_OK) return st;
    int64_t dims[PAR_MAX_RANK];
    for (int32_t i = 0; i < x->rank; i++) dims[i] = x->dims[perm[i]];
    copy_shape(&outs[0], x->rank, dims);
    return PAR_OK;
}

par_status par_ref_permute(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    if (!in[0] || !out[0]) return par_msgf(msg, PAR_ERROR, "permute: input 0 (x) is required");
    const par_rt *x = in[0];
    par_rt *y = out[0];
    int32_t perm[PAR_MAX_RANK];
    par_status st = read_perm(c->n, x->rank, perm, msg);
    if (st != PAR_OK) return st;
    int64_t xs[PAR_MAX_RANK], st_out[PAR_MAX_RANK];
    par_rt_strides(x, xs);
    if (y->rank != x->rank || y->numel != x->numel)
        return par_msgf(msg, PAR_ERROR, "permute: output shape does not match");
    for (int32_t i = 0; i < y->rank; i++) {
        if (y->dims[i] != x->dims[perm[i]]) return par_msgf(msg, PAR_ERROR, "permute: output shape does not match");
        st_out[i] = xs[perm[i]]; /* input stride walked by output dimension i */
    }
    int64_t idx[PAR_MAX_RANK] = {0}, off = 0;
    for (int64_t k = 0; k < y->numel; k++) {
        y->v[k] = x->v[off];
        y->e[k] = x->e[off];
        for (int32_t d = y->rank - 1; d >= 0; d--) {
            idx[d]++;
            off += st_out[d];
            if (idx[d] < y->dims[d]) break;
            off -= st_out[d] * idx[d];
            idx[d] = 0;
        }
    }
    return PAR_OK;
}

/* ------------------------------------------------------------------------------------------------------------- */
/* pad */

static par_status read_pads(const par_node *n, int32_t rank, int64_t *pads, par_msg *msg)
{
    int32_t count = par_attr_count(n, "pads");
    if (count != 2 * rank)
        return par_msgf(msg, PAR_ERROR, "attribute 'pads': %d elements, expected %d (2 * rank %d)", (int)count,
                        (int)(2 * rank), (int)rank);
    for (int32_t i = 0; i < count; i++) {
        pads[i] = par_attr_ints_at(n, "pads", i, -1);
        if (pads[i] < 0 || pads[i] > DIM_LIMIT)
            return par_msgf(msg, PAR_ERROR, "attribute 'pads': element %d is %lld, must be in [0, 2^28]", (int)i,
                            (long long)pads[i]);
    }
    return PAR_OK;
}

par_status par_infer_pad(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0);
    if (!x) return par_msgf(msg, PAR_ERROR, "input 0 (x) is required");
    int64_t pads[2 * PAR_MAX_RANK];
    par_status st = read_pads(n, x->rank, pads, msg);
    if (st != PAR_OK) return st;
    double value = par_attr_float(n, "value", 0);
    if (value != value) return par_msgf(msg, PAR_ERROR, "attribute 'value': NaN");
    int64_t dims[PAR_MAX_RANK];
    for (int32_t i = 0; i < x->rank; i++) dims[i] = x->dims[i] + pads[2 * i] + pads[2 * i + 1];
    copy_shape(&outs[0], x->rank, dims);
    return PAR_OK;
}

par_status par_ref_pad(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    if (!in[0] || !out[0]) return par_msgf(msg, PAR_ERROR, "pad: input 0 (x) is required");
    const par_rt *x = in[0];
    par_rt *y = out[0];
    if (x->dtype != PAR_DTYPE_F32 && x->dtype != PAR_DTYPE_F16 && x->dtype != PAR_DTYPE_F64)
        return par_msgf(msg, PAR_UNSUPPORTED, "pad: dtype %s reached the float kernel (only f32, f16, f64)",
                        par_dtype_name(x->dtype));
    int64_t pads[2 * PAR_MAX_RANK];
    par_status st = read_pads(c->n, x->rank, pads, msg);
    if (st != PAR_OK) return st;
    if (y->rank != x->rank) return par_msgf(msg, PAR_ERROR, "pad: output rank does not match");
    for (int32_t i = 0; i < x->rank; i++)
        if (y->dims[i] != x->dims[i] + pads[2 * i] + pads[2 * i + 1])
            return par_msgf(msg, PAR_ERROR, "pad: output shape does not match");
    double value = par_attr_float(c->n, "value", 0);
    /* The fill value as the backend holds it. */
    double fill_e = const_rounding(value, &c->prec);
    int64_t xs[PAR_MAX_RANK];
    par_rt_strides(x, xs);
    int64_t idx[PAR_MAX_RANK] = {0};
    for (int64_t k = 0; k < y->numel; k++) {
        int64_t off = 0;
        int inside = 1;
        for (int32_t d = 0; d < y->rank; d++) {
            int64_t s = idx[d] - pads[2 * d];
            if (s < 0 || s >= x->dims[d]) inside = 0;
            off += s * xs[d];
        }
        y->v[k] = inside ? x->v[off] : value;
        y->e[k] = inside ? x->e[off] : fill_e;
        for (int32_t d = y->rank - 1; d >= 0; d--) {
            if (++idx[d] < y->dims[d]) break;
            idx[d] = 0;
        }
    }
    return PAR_OK;
}

/* ------------------------------------------------------------------------------------------------------------- */
/* slice */

typedef struct slice_geom {
    int32_t dim;
    int64_t start, step, count;
} slice_geom;

static par_status slice_resolve(const par_node *n, int32_t rank, const int64_t *dims, slice_geom *s, par_msg *msg)
{
    int64_t da = par_attr_int(n, "dim", 0);
    s->dim = par_axis_norm(da, rank);
    if (s->dim < 0)
        return par_msgf(msg, PAR_ERROR, "attribute 'dim': %lld is out of range for rank %d", (long long)da, (int)rank);
    int64_t size = dims[s->dim];
    int64_t step = par_attr_int(n, "step", 1);
    if (step < 1) return par_msgf(msg, PAR_ERROR, "attribute 'step': %lld, must be >= 1", (long long)step);
    int64_t st = par_attr_int(n, "start", 0), en = par_attr_int(n, "end", INT64_MAX);
    /* Negative values count from the end; then both clamp to [0, size]. */
    if (st < 0) st += size;
    if (en < 0) en += size;
    st = st < 0 ? 0 : (st > size ? size : st);
    en = en < 0 ? 0 : (en > size ? size : en);
    if (en <= st)
        return par_msgf(msg, PAR_ERROR, "attributes 'start'/'end': [%lld, %lld) selects no element of dimension %d "
                        "(size %lld)", (long long)par_attr_int(n, "start", 0), (long long)par_attr_int(n, "end", 0),
                        (int)s->dim, (long long)size);
    s->start = st;
    s->step = step;
    s->count = (en - st + step - 1) / step;
    return PAR_OK;
}

par_status par_infer_slice(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0);
    if (!x) return par_msgf(msg, PAR_ERROR, "input 0 (x) is required");
    slice_geom s;
    par_status st = slice_resolve(n, x->rank, x->dims, &s, msg);
    if (st != PAR_OK) return st;
    int64_t dims[PAR_MAX_RANK];
    memcpy(dims, x->dims, sizeof dims);
    dims[s.dim] = s.count;
    copy_shape(&outs[0], x->rank, dims);
    return PAR_OK;
}

par_status par_ref_slice(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    if (!in[0] || !out[0]) return par_msgf(msg, PAR_ERROR, "slice: input 0 (x) is required");
    const par_rt *x = in[0];
    par_rt *y = out[0];
    slice_geom s;
    par_status st = slice_resolve(c->n, x->rank, x->dims, &s, msg);
    if (st != PAR_OK) return st;
    if (y->rank != x->rank || y->dims[s.dim] != s.count)
        return par_msgf(msg, PAR_ERROR, "slice: output shape does not match");
    int64_t outer = 1, inner = 1, size = x->dims[s.dim];
    for (int32_t d = 0; d < s.dim; d++) outer *= x->dims[d];
    for (int32_t d = s.dim + 1; d < x->rank; d++) inner *= x->dims[d];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < s.count; j++) {
            int64_t src = (o * size + s.start + j * s.step) * inner, dst = (o * s.count + j) * inner;
            memcpy(y->v + dst, x->v + src, sizeof(double) * (size_t)inner);
            memcpy(y->e + dst, x->e + src, sizeof(double) * (size_t)inner);
        }
    return PAR_OK;
}
