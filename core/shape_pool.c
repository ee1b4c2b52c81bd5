/*
 * shape_pool.c - geometry and shape inference of max_pool2d, avg_pool2d, adaptive_avg_pool2d, global_avg_pool2d
 * and mean (docs/ops.md, PyTorch semantics): windows, ceil_mode, padding limits, reduced axes.
 * The reference kernels (reference/pool.c) walk the same geometry. It must not compute any value.
 */
#include "shape_util.h"

/* PyTorch's pooling_output_shape_pad_lr: with ceil_mode, a last window that would start in the end padding
 * (start >= in + pad_begin) is dropped. */
static int64_t pool_out(int64_t in, int64_t k, int64_t s, int64_t d, int64_t p0, int64_t p1, int ceil_mode)
{
    int64_t num = in + p0 + p1 - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
    int64_t o = par_floor_div(num, s) + 1;
    if (ceil_mode && o >= 1 && (o - 1) * s >= in + p0) o--;
    return o;
}

/* Does every window along one dimension hold at least one in-image position? Returns the first window that does
 * not, or -1. */
static int64_t empty_window(int64_t in, int64_t out, int64_t k, int64_t s, int64_t d, int64_t p0)
{
    for (int64_t o = 0; o < out; o++) {
        int64_t start = o * s - p0, hit = 0;
        for (int64_t i = 0; i < k && !hit; i++) hit = start + i * d >= 0 && start + i * d < in;
        if (!hit) return o;
    }
    return -1;
}

par_status par_pool2d_geom(const par_node *n, int32_t xr, const int64_t *xd, int dilated, int avg, par_pool_geom *q,
                               par_msg *msg)
{
    par_status st;
    if (xr != 4) return par_msgf(msg, PAR_ERROR, "input 0 (x): rank %d, expected 4", (int)xr);
    q->n = xd[0]; q->c = xd[1]; q->h = xd[2]; q->w = xd[3];
    if ((st = read_pair(n, "kernel", 1, &q->kh, &q->kw, msg)) != PAR_OK) return st;
    if ((st = read_pair(n, "stride", 1, &q->sh, &q->sw, msg)) != PAR_OK) return st;
    q->dh = q->dw = 1;
    if (dilated && (st = read_pair(n, "dilation", 1, &q->dh, &q->dw, msg)) != PAR_OK) return st;
    if ((st = read_flag(n, "ceil_mode", &q->ceil_mode, msg)) != PAR_OK) return st;
    q->count_include_pad = 0;
    if (avg && (st = read_flag(n, "count_include_pad", &q->count_include_pad, msg)) != PAR_OK) return st;
    int64_t p[4];
    for (int32_t i = 0; i < 4; i++) {
        /* PyTorch: padding at most half the (dilated) kernel extent, so padding alone never fills a window. */
        int64_t ext = (i % 2 == 0) ? q->dh * (q->kh - 1) + 1 : q->dw * (q->kw - 1) + 1;
        p[i] = par_attr_ints_at(n, "padding", i, 0);
        if (p[i] < 0 || p[i] > ext / 2)
            return par_msgf(msg, PAR_ERROR, "attribute 'padding': element %d is %lld, must be in [0, %lld] (half the "
                            "kernel extent %lld)", (int)i, (long long)p[i], (long long)(ext / 2), (long long)ext);
    }
    q->pt = p[0]; q->pl = p[1]; q->pb = p[2]; q->pr = p[3];
    q->oh = pool_out(q->h, q->kh, q->sh, q->dh, q->pt, q->pb, q->ceil_mode);
    q->ow = pool_out(q->w, q->kw, q->sw, q->dw, q->pl, q->pr, q->ceil_mode);
    if (q->oh < 1)
        return par_msgf(msg, PAR_ERROR, "attribute 'kernel': output height %lld < 1 (input height %lld + padding "
                        "%lld+%lld is smaller than the kernel extent %lld)", (long long)q->oh, (long long)q->h,
                        (long long)q->pt, (long long)q->pb, (long long)(q->dh * (q->kh - 1) + 1));
    if (q->ow < 1)
        return par_msgf(msg, PAR_ERROR, "attribute 'kernel': output width %lld < 1 (input width %lld + padding "
                        "%lld+%lld is smaller than the kernel extent %lld)", (long long)q->ow, (long long)q->w,
                        (long long)q->pl, (long long)q->pr, (long long)(q->dw * (q->kw - 1) + 1));
    /* With dilation a window may skip over the whole image (PyTorch would output -inf): refuse such cases. */
    int64_t eh = empty_window(q->h, q->oh, q->kh, q->sh, q->dh, q->pt);
    int64_t ew = empty_window(q->w, q->ow, q->kw, q->sw, q->dw, q->pl);
    if (eh >= 0 || ew >= 0)
        return par_msgf(msg, PAR_ERROR, "attribute 'dilation': the window of output %s %lld holds no input element",
                        eh >= 0 ? "row" : "column", (long long)(eh >= 0 ? eh : ew));
    return PAR_OK;
}

void par_pool2d_shape(const par_pool_geom *q, int32_t *rank, int64_t *dims)
{
    *rank = 4;
    dims[0] = q->n;
    dims[1] = q->c;
    dims[2] = q->oh;
    dims[3] = q->ow;
}

static par_status infer_pool2d(const par_graph_desc *g, const par_node *n, par_value *outs, int dilated, int avg,
                               par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0);
    if (!x) return par_msgf(msg, PAR_ERROR, "input 0 (x) is required");
    par_pool_geom q;
    par_status st = par_pool2d_geom(n, x->rank, x->dims, dilated, avg, &q, msg);
    if (st == PAR_OK) par_pool2d_shape(&q, &outs[0].rank, outs[0].dims);
    return st;
}

par_status par_infer_max_pool2d(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    return infer_pool2d(g, n, outs, 1, 0, msg);
}

par_status par_infer_avg_pool2d(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    return infer_pool2d(g, n, outs, 0, 1, msg);
}

/* ---- adaptive_avg_pool2d and global_avg_pool2d ---------------------------------------------------------------- */

par_status par_adaptive_pool_shape(const par_node *n, int32_t xr, const int64_t *xd, int global, int32_t *yr,
                                 int64_t *yd, par_msg *msg)
{
    par_status st;
    if (xr != 4) return par_msgf(msg, PAR_ERROR, "input 0 (x): rank %d, expected 4", (int)xr);
    int64_t oh = 1, ow = 1;
    if (!global && (st = read_pair(n, "output_size", 1, &oh, &ow, msg)) != PAR_OK) return st;
    *yr = 4;
    yd[0] = xd[0];
    yd[1] = xd[1];
    yd[2] = oh;
    yd[3] = ow;
    return PAR_OK;
}

par_status par_infer_adaptive_avg_pool2d(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0);
    if (!x) return par_msgf(msg, PAR_ERROR, "input 0 (x) is required");
    return par_adaptive_pool_shape(n, x->rank, x->dims, 0, &outs[0].rank, outs[0].dims, msg);
}

par_status par_infer_global_avg_pool2d(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0);
    if (!x) return par_msgf(msg, PAR_ERROR, "input 0 (x) is required");
    return par_adaptive_pool_shape(n, x->rank, x->dims, 1, &outs[0].rank, outs[0].dims, msg);
}

/* ---- mean ----------------------------------------------------------------------------------------------------- */

/* Resolve the reduced axes into a mask; output shape with or without the kept 1s. */
par_status par_mean_shape(const par_node *n, int32_t xr, const int64_t *xd, int *reduced, int32_t *yr,
                             int64_t *yd, par_msg *msg)
{
    par_status st;
    int32_t count = par_attr_count(n, "axes");
    int keep = 0;
    if ((st = read_flag(n, "keepdims", &keep, msg)) != PAR_OK) return st;
    if (count < 1) return par_msgf(msg, PAR_ERROR, "attribute 'axes': empty, at least one axis is required");
    for (int32_t i = 0; i < PAR_MAX_RANK; i++) reduced[i] = 0;
    for (int32_t i = 0; i < count; i++) {
        int64_t a = par_attr_ints_at(n, "axes", i, 0);
        int64_t na = a < 0 ? a + xr : a;
        if (na < 0 || na >= xr)
            return par_msgf(msg, PAR_ERROR, "attribute 'axes': axis %lld out of range for rank %d", (long long)a,
                            (int)xr);
        if (reduced[na])
            return par_msgf(msg, PAR_ERROR, "attribute 'axes': axis %lld repeated (dimension %lld)", (long long)a,
                            (long long)na);
        reduced[na] = 1;
    }
    *yr = 0;
    for (int32_t i = 0; i < xr; i++) {
        if (!reduced[i]) yd[(*yr)++] = xd[i];
        else if (keep) yd[(*yr)++] = 1;
    }
    return PAR_OK;
}

par_status par_infer_mean(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0);
    if (!x) return par_msgf(msg, PAR_ERROR, "input 0 (x) is required");
    int reduced[PAR_MAX_RANK];
    return par_mean_shape(n, x->rank, x->dims, reduced, &outs[0].rank, outs[0].dims, msg);
}

par_status par_arg_shape(const par_node *n, int32_t xr, const int64_t *xd, int32_t *axis, int32_t *yr, int64_t *yd,
                         par_msg *msg)
{
    par_status st;
    int keep = 0, last = 0;
    if ((st = read_flag(n, "keepdims", &keep, msg)) != PAR_OK) return st;
    if ((st = read_flag(n, "select_last", &last, msg)) != PAR_OK) return st;
    if (xr < 1) return par_msgf(msg, PAR_ERROR, "input 0 (x): rank 0; argmax and argmin need an axis");
    int64_t a = par_attr_int(n, "axis", 0), na = a < 0 ? a + xr : a;
    if (na < 0 || na >= xr)
        return par_msgf(msg, PAR_ERROR, "attribute 'axis': %lld out of range for rank %d", (long long)a, (int)xr);
    *axis = (int32_t)na;
    *yr = 0;
    for (int32_t i = 0; i < xr; i++) {
        if (i != na) yd[(*yr)++] = xd[i];
        else if (keep) yd[(*yr)++] = 1;
    }
    return PAR_OK;
}

/* argmax, argmin: the index along the axis, i32 (PyTorch's is int64; parity's indices are i32). */
par_status par_infer_arg(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0);
    if (!x) return par_msgf(msg, PAR_ERROR, "input 0 (x) is required");
    if (x->dtype != PAR_DTYPE_F32 && x->dtype != PAR_DTYPE_F16)
        return par_msgf(msg, PAR_ERROR, "input 0 (x): dtype %s; argmax and argmin take float tensors (f32, f16)",
                        par_dtype_name(x->dtype));
    int32_t axis;
    par_status st = par_arg_shape(n, x->rank, x->dims, &axis, &outs[0].rank, outs[0].dims, msg);
    if (st != PAR_OK) return st;
    if (x->dims[axis] > INT32_MAX)
        return par_msgf(msg, PAR_ERROR, "input 0 (x): dimension %d has %lld elements, more than i32 indices hold",
                        (int)axis, (long long)x->dims[axis]);
    outs[0].dtype = PAR_DTYPE_I32;
    outs[0].scale = 1.0f;
    outs[0].zero_point = 0;
    return PAR_OK;
}
