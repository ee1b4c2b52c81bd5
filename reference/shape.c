/*
 * shape.c - reference kernels of the data movement ops: concat, reshape, flatten, permute,
 * pad and slice (docs/ops.md, "Shape and data movement").
 *
 * These ops select or move elements and compute nothing, so a correct backend is bit-exact: each output element
 * carries its source element's value and budget unchanged. pad's modes follow PyTorch's F.pad: constant fills with
 * the value; reflect mirrors about the edge element without repeating it (each pad below the dimension's size);
 * replicate repeats the edge element. The one exception is pad's fill value, which a backend
 * holds in its own format: a value that the format cannot represent exactly (0.1, not 0 or 1) is allowed one
 * rounding to the arithmetic format and one to the storage format. The kernels copy v and e whatever the dtype
 * (pad's fill needs a float dtype); they must not allocate nor read anything but their inputs.
 */
#include "reference.h"
#include "elem_util.h"

#include <math.h>
#include <string.h>

#include "core/graph.h"
#include "core/shape.h"

/* ------------------------------------------------------------------------------------------------------------- */
/* concat */


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


par_status par_ref_permute(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    if (!in[0] || !out[0]) return par_msgf(msg, PAR_ERROR, "permute: input 0 (x) is required");
    const par_rt *x = in[0];
    par_rt *y = out[0];
    int32_t perm[PAR_MAX_RANK];
    par_status st = par_permute_read(c->n, x->rank, perm, msg);
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


par_status par_ref_pad(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    if (!in[0] || !out[0]) return par_msgf(msg, PAR_ERROR, "pad: input 0 (x) is required");
    const par_rt *x = in[0];
    par_rt *y = out[0];
    if (x->dtype != PAR_DTYPE_F32 && x->dtype != PAR_DTYPE_F16 && x->dtype != PAR_DTYPE_F64)
        return par_msgf(msg, PAR_UNSUPPORTED, "pad: dtype %s reached the float kernel (only f32, f16, f64)",
                        par_dtype_name(x->dtype));
    int64_t pads[2 * PAR_MAX_RANK];
    par_status st = par_pad_read(c->n, x->rank, pads, msg);
    if (st != PAR_OK) return st;
    if (y->rank != x->rank) return par_msgf(msg, PAR_ERROR, "pad: output rank does not match");
    for (int32_t i = 0; i < x->rank; i++)
        if (y->dims[i] != x->dims[i] + pads[2 * i] + pads[2 * i + 1])
            return par_msgf(msg, PAR_ERROR, "pad: output shape does not match");
    double value = par_attr_float(c->n, "value", 0);
    /* The fill value as the backend holds it. */
    double fill_e = const_rounding(value, &c->prec);
    const int mode = par_pad_mode(c->n);
    y->nonneg = x->nonneg && (mode != PAR_PAD_CONSTANT || value >= 0); /* reference.h, par_rt.nonneg */
    if (mode == PAR_PAD_REFLECT)
        for (int32_t i = 0; i < 2 * x->rank; i++)
            if (pads[i] >= x->dims[i / 2])
                return par_msgf(msg, PAR_ERROR, "pad: mode reflect: pad %lld on dimension %d of size %lld (must be "
                                "smaller)", (long long)pads[i], (int)(i / 2), (long long)x->dims[i / 2]);
    int64_t xs[PAR_MAX_RANK];
    par_rt_strides(x, xs);
    int64_t idx[PAR_MAX_RANK] = {0};
    for (int64_t k = 0; k < y->numel; k++) {
        int64_t off = 0;
        int inside = 1;
        for (int32_t d = 0; d < y->rank; d++) {
            int64_t s = idx[d] - pads[2 * d], n = x->dims[d];
            if (mode == PAR_PAD_REFLECT) /* mirror about the edge element, which is not repeated */
                s = s < 0 ? -s : s >= n ? 2 * (n - 1) - s : s;
            else if (mode == PAR_PAD_REPLICATE) /* the edge element repeated */
                s = s < 0 ? 0 : s >= n ? n - 1 : s;
            if (s < 0 || s >= n) inside = 0;
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


par_status par_ref_slice(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    if (!in[0] || !out[0]) return par_msgf(msg, PAR_ERROR, "slice: input 0 (x) is required");
    const par_rt *x = in[0];
    par_rt *y = out[0];
    par_slice_geom s;
    par_status st = par_slice_resolve(c->n, x->rank, x->dims, &s, msg);
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
