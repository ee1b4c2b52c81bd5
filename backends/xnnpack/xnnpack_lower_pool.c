/*
 * xnnpack_lower_pool.c - the xnnpack adapter's f32 lowerings of pooling, softmax and resize: max_pool2d and
 * avg_pool2d (ceil_mode as extra bottom/right padding, exact since XNNPACK's padded pooling never lets padding win a
 * max nor counts it in an average), global_avg_pool2d and mean over H and W (global average pooling),
 * adaptive_avg_pool2d with uniform windows (average pooling, or a copy for 1x1 windows), softmax over the innermost
 * (or, in NHWC, the channel) axis, and upsample_bilinear2d.
 *
 * Nothing here computes tensor values in C, and nothing calls the driver (xnnpack_lower.c).
 */
#include <math.h>
#include <stdlib.h>

#include "xnnpack_internal.h"

/* Pooling: ceil_mode becomes extra bottom/right padding, which XNNPACK's padded pooling ignores (max: never wins;
 * average: not counted), so the result is PyTorch's, whose windows never start in the bottom/right padding. */
static par_status lower_pool(xa_plan *p, int32_t ni, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                             const int64_t pad_in[4], par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    const par_value *x = par_node_input(g, n, 0), *y = par_node_output(g, n, 0);
    int mx = is_op(n, "max_pool2d");
    int64_t dh = mx ? par_attr_ints_at(n, "dilation", 0, 1) : 1, dw = mx ? par_attr_ints_at(n, "dilation", 1, 1) : 1;
    int64_t pad[4] = {pad_in[0], pad_in[1], pad_in[2], pad_in[3]};
    if (par_xnn_pool_pads(n, x, y, kh, kw, sh, sw, dh, dw, pad, msg) != PAR_OK) return PAR_ERROR;
    size_t C = (size_t)x->dims[1];
    xnn_operator_t op = NULL;
    const uint32_t pt = (uint32_t)pad[0], pl = (uint32_t)pad[1], pb = (uint32_t)pad[2], pr = (uint32_t)pad[3];
    par_status cs = par_xnn_created(
        mx ? xnn_create_max_pooling2d_nhwc_f32(pt, pr, pb, pl, (uint32_t)kh, (uint32_t)kw, (uint32_t)sh, (uint32_t)sw,
                                               (uint32_t)dh, (uint32_t)dw, C, C, C, p->out_min[ni], p->out_max[ni], 0,
                                               &op)
           : xnn_create_average_pooling2d_nhwc_f32(pt, pr, pb, pl, (uint32_t)kh, (uint32_t)kw, (uint32_t)sh,
                                                   (uint32_t)sw, C, C, C, p->out_min[ni], p->out_max[ni], 0, &op),
        mx ? "max_pooling2d_nhwc_f32" : "average_pooling2d_nhwc_f32", msg);
    if (cs != PAR_OK) return cs;
    const void *in;
    void *out;
    if ((cs = par_xnn_io(p, ni, XA_NHWC, op, &in, &out, msg)) != PAR_OK) return cs;
    size_t N = (size_t)x->dims[0], H = (size_t)x->dims[2], W = (size_t)x->dims[3];
    if (mx)
        return par_xnn_push_op(p, op, xnn_setup_max_pooling2d_nhwc_f32(op, N, H, W, in, out, p->pool),
                       "setup_max_pooling2d_nhwc_f32", msg);
    return par_xnn_push_op(p, op, xnn_setup_average_pooling2d_nhwc_f32(op, N, H, W, in, out, p->pool),
                   "setup_average_pooling2d_nhwc_f32", msg);
}

/* max_pool2d, avg_pool2d: the node's window, stride and padding. */
par_status par_xnn_lower_pool2d(xa_plan *p, int32_t ni, par_msg *msg)
{
    const par_node *n = &p->g->nodes[ni];
    int64_t pad[4];
    for (int i = 0; i < 4; i++) pad[i] = par_attr_ints_at(n, "padding", i, 0);
    return lower_pool(p, ni, par_attr_ints_at(n, "kernel", 0, 1), par_attr_ints_at(n, "kernel", 1, 1),
                      par_attr_ints_at(n, "stride", 0, 1), par_attr_ints_at(n, "stride", 1, 1), pad, msg);
}

par_status par_xnn_lower_global_avg(xa_plan *p, int32_t ni, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    const par_value *x = par_node_input(g, n, 0);
    size_t C = (size_t)x->dims[1];
    xnn_operator_t op = NULL;
    par_status cs = par_xnn_created(
        xnn_create_global_average_pooling_nwc_f32(C, C, C, p->out_min[ni], p->out_max[ni], 0, &op),
        "global_average_pooling_nwc_f32", msg);
    if (cs != PAR_OK) return cs;
    /* [N, 1, 1, C] in NHWC and [N, C] are the same memory as the logical [N, C, 1, 1] */
    const void *in;
    void *out;
    if ((cs = par_xnn_io(p, ni, XA_NHWC, op, &in, &out, msg)) != PAR_OK) return cs;
    return par_xnn_push_op(p, op,
                   xnn_setup_global_average_pooling_nwc_f32(op, (size_t)x->dims[0], (size_t)(x->dims[2] * x->dims[3]),
                                                            in, out, p->pool),
                   "setup_global_average_pooling_nwc_f32", msg);
}

par_status par_xnn_lower_adaptive(xa_plan *p, int32_t ni, par_msg *msg)
{
    const par_node *n = &p->g->nodes[ni];
    const par_value *x = par_node_input(p->g, n, 0);
    int64_t oh = par_attr_ints_at(n, "output_size", 0, 1), ow = par_attr_ints_at(n, "output_size", 1, 1);
    if (oh == 1 && ow == 1) return par_xnn_lower_global_avg(p, ni, msg);
    int64_t kh = x->dims[2] / oh, kw = x->dims[3] / ow, zero[4] = {0, 0, 0, 0};
    if (kh * kw > 1) return lower_pool(p, ni, kh, kw, kh, kw, zero, msg);
    const float *in = par_xnn_input(p, n->inputs[0], XA_NHWC, msg);
    float *out = in ? par_xnn_output(p, p->final_out[ni], XA_NHWC, msg) : NULL;
    if (!out) return PAR_ERROR;
    return par_xnn_copy_rows(p, 4, 1, (size_t)x->numel, (size_t)x->numel, (size_t)x->numel, in, out, msg);
}

par_status par_xnn_lower_softmax(xa_plan *p, int32_t ni, par_msg *msg)
{
    const par_node *n = &p->g->nodes[ni];
    const par_value *x = par_node_input(p->g, n, 0);
    int a = norm_axis(par_attr_int(n, "axis", -1), x->rank);
    xa_layout lay = (x->rank == 4 && a == 1) ? XA_NHWC : XA_LOGICAL;
    size_t C = (size_t)x->dims[a];
    xnn_operator_t op = NULL;
    par_status cs = par_xnn_created(xnn_create_softmax_nc_f32(C, C, C, 0, &op), "softmax_nc_f32", msg);
    if (cs != PAR_OK) return cs;
    const void *in;
    void *out;
    if ((cs = par_xnn_io(p, ni, lay, op, &in, &out, msg)) != PAR_OK) return cs;
    return par_xnn_push_op(p, op, xnn_setup_softmax_nc_f32(op, (size_t)x->numel / C, in, out, p->pool),
                           "setup_softmax_nc_f32", msg);
}

par_status par_xnn_lower_resize(xa_plan *p, int32_t ni, par_msg *msg)
{
    const par_node *n = &p->g->nodes[ni];
    const par_value *x = par_node_input(p->g, n, 0), *y = par_node_output(p->g, n, 0);
    size_t C = (size_t)x->dims[1];
    xnn_operator_t op = NULL;
    uint32_t flags = par_attr_int(n, "align_corners", 0) ? XNN_FLAG_ALIGN_CORNERS : 0;
    par_status cs = par_xnn_created(xnn_create_resize_bilinear2d_nhwc_f32(C, C, C, flags, &op),
                                    "resize_bilinear2d_nhwc_f32", msg);
    if (cs != PAR_OK) return cs;
    const void *in;
    void *out;
    if ((cs = par_xnn_io(p, ni, XA_NHWC, op, &in, &out, msg)) != PAR_OK) return cs;
    return par_xnn_push_op(p, op,
                   xnn_setup_resize_bilinear2d_nhwc_f32(op, (size_t)x->dims[0], (size_t)x->dims[2], (size_t)x->dims[3],
                                                        (size_t)y->dims[2], (size_t)y->dims[3], in, out, p->pool),
                   "setup_resize_bilinear2d_nhwc_f32", msg);
}
