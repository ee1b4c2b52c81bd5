/*
 * shape_data.c - shape inference of the data movement ops: concat, reshape, flatten, permute, pad and slice
 * (docs/ops.md, "Shape and data movement"), and the resolved permutation, pads and slice the reference kernels
 * (reference/shape.c) walk. It must not move any data.
 */
#include "shape_util.h"

#include <string.h>

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
        if (dims[axis] > PAR_SHAPE_DIM_MAX)
            return par_msgf(msg, PAR_ERROR, "attribute 'axis': concatenated size exceeds 2^28");
    }
    copy_shape(&outs[0], x0->rank, dims);
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
        if (dims[i] < 0 || dims[i] > PAR_SHAPE_DIM_MAX)
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

/* ------------------------------------------------------------------------------------------------------------- */
/* permute */

/* The normalized permutation, or an error naming the bad element. */
par_status par_permute_read(const par_node *n, int32_t rank, int32_t *perm, par_msg *msg)
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
    par_status st = par_permute_read(n, x->rank, perm, msg);
    if (st != PAR_OK) return st;
    int64_t dims[PAR_MAX_RANK];
    for (int32_t i = 0; i < x->rank; i++) dims[i] = x->dims[perm[i]];
    copy_shape(&outs[0], x->rank, dims);
    return PAR_OK;
}

/* ------------------------------------------------------------------------------------------------------------- */
/* pad */

par_status par_pad_read(const par_node *n, int32_t rank, int64_t *pads, par_msg *msg)
{
    int32_t count = par_attr_count(n, "pads");
    if (count != 2 * rank)
        return par_msgf(msg, PAR_ERROR, "attribute 'pads': %d elements, expected %d (2 * rank %d)", (int)count,
                        (int)(2 * rank), (int)rank);
    for (int32_t i = 0; i < count; i++) {
        pads[i] = par_attr_ints_at(n, "pads", i, -1);
        if (pads[i] < 0 || pads[i] > PAR_SHAPE_DIM_MAX)
            return par_msgf(msg, PAR_ERROR, "attribute 'pads': element %d is %lld, must be in [0, 2^28]", (int)i,
                            (long long)pads[i]);
    }
    return PAR_OK;
}

int par_pad_mode(const par_node *n)
{
    const char *m = par_attr_str(n, "mode", "constant");
    return strcmp(m, "reflect") == 0 ? PAR_PAD_REFLECT : strcmp(m, "replicate") == 0 ? PAR_PAD_REPLICATE
                                                                                       : PAR_PAD_CONSTANT;
}

par_status par_infer_pad(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0);
    if (!x) return par_msgf(msg, PAR_ERROR, "input 0 (x) is required");
    int64_t pads[2 * PAR_MAX_RANK];
    par_status st = par_pad_read(n, x->rank, pads, msg);
    if (st != PAR_OK) return st;
    double value = par_attr_float(n, "value", 0);
    if (value != value) return par_msgf(msg, PAR_ERROR, "attribute 'value': NaN");
    /* PyTorch's F.pad: reflect mirrors without repeating the edge, so each pad must be below the dimension's size */
    if (par_pad_mode(n) == PAR_PAD_REFLECT)
        for (int32_t i = 0; i < 2 * x->rank; i++)
            if (pads[i] >= x->dims[i / 2])
                return par_msgf(msg, PAR_ERROR, "attribute 'pads': element %d is %lld; mode reflect needs pads below "
                                "the size %lld of dimension %d", (int)i, (long long)pads[i],
                                (long long)x->dims[i / 2], (int)(i / 2));
    int64_t dims[PAR_MAX_RANK];
    for (int32_t i = 0; i < x->rank; i++) dims[i] = x->dims[i] + pads[2 * i] + pads[2 * i + 1];
    copy_shape(&outs[0], x->rank, dims);
    return PAR_OK;
}

/* ------------------------------------------------------------------------------------------------------------- */
/* slice */

par_status par_slice_resolve(const par_node *n, int32_t rank, const int64_t *dims, par_slice_geom *s, par_msg *msg)
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
    par_slice_geom s;
    par_status st = par_slice_resolve(n, x->rank, x->dims, &s, msg);
    if (st != PAR_OK) return st;
    int64_t dims[PAR_MAX_RANK];
    memcpy(dims, x->dims, sizeof dims);
    dims[s.dim] = s.count;
    copy_shape(&outs[0], x->rank, dims);
    return PAR_OK;
}
