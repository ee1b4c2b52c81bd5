/*
 * xnnpack_lower_pool.c - lowering of the xnnpack backend's pooling, softmax, resize and data-movement ops (f32) to
 * XNNPACK operators, and the pieces the quantized lowering shares with them: the pooling padding (ceil_mode as
 * extra bottom/right padding, exact since XNNPACK's padded pooling never lets padding win a max nor counts it in an
 * average) and the strided copies of concat / reshape / flatten / slice, which move elements of any size (copy_nc_x32
 * for f32, copy_nc_x8 for qu8/qs8) and are bit-exact. Also the two f32 ops XNNPACK has no operator for that the
 * adapter expresses with XNNPACK's own operators: a batch norm that follows no convolution, and hardsigmoid.
 *
 * Nothing here computes values in C; whatever XNNPACK lacks is refused in par_xnn_check.
 */
#include <math.h>
#include <stdlib.h>

#include "xnnpack_internal.h"

par_status par_xnn_pool_pads(const par_node *n, const par_value *x, const par_value *y, int64_t kh, int64_t kw,
                             int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t pad[4], par_msg *msg)
{
    int64_t need_b = (y->dims[2] - 1) * sh + dh * (kh - 1) + 1 - x->dims[2] - pad[0];
    int64_t need_r = (y->dims[3] - 1) * sw + dw * (kw - 1) + 1 - x->dims[3] - pad[1];
    if (need_b > pad[2]) pad[2] = need_b;
    if (need_r > pad[3]) pad[3] = need_r;
    int64_t oh = (x->dims[2] + pad[0] + pad[2] - (dh * (kh - 1) + 1)) / sh + 1;
    int64_t ow = (x->dims[3] + pad[1] + pad[3] - (dw * (kw - 1) + 1)) / sw + 1;
    if (oh != y->dims[2] || ow != y->dims[3])
        return par_msgf(msg, PAR_ERROR, "%s lowering: XNNPACK would produce %lldx%lld, the graph says %lldx%lld",
                        n->op, (long long)oh, (long long)ow, (long long)y->dims[2], (long long)y->dims[3]);
    return PAR_OK;
}

/* Pooling: ceil_mode becomes extra bottom/right padding, which XNNPACK's padded pooling ignores (max: never wins;
 * average: not counted), so the result is PyTorch's, whose windows never start in the bottom/right padding. */
par_status par_xnn_lower_pool(xa_plan *p, int32_t ni, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
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
    if (mx)
        XA_CREATE(xnn_create_max_pooling2d_nhwc_f32((uint32_t)pad[0], (uint32_t)pad[3], (uint32_t)pad[2],
                                                    (uint32_t)pad[1], (uint32_t)kh, (uint32_t)kw, (uint32_t)sh,
                                                    (uint32_t)sw, (uint32_t)dh, (uint32_t)dw, C, C, C, p->out_min[ni],
                                                    p->out_max[ni], 0, &op),
                  "max_pooling2d_nhwc_f32");
    else
        XA_CREATE(xnn_create_average_pooling2d_nhwc_f32((uint32_t)pad[0], (uint32_t)pad[3], (uint32_t)pad[2],
                                                     (uint32_t)pad[1], (uint32_t)kh, (uint32_t)kw, (uint32_t)sh,
                                                     (uint32_t)sw, C, C, C, p->out_min[ni], p->out_max[ni], 0, &op),
               "average_pooling2d_nhwc_f32");
    const float *in = par_xnn_input(p, n->inputs[0], XA_NHWC, msg);
    float *out = in ? par_xnn_output(p, p->final_out[ni], XA_NHWC, msg) : NULL;
    if (!out) {
        xnn_delete_operator(op);
        return PAR_ERROR;
    }
    size_t N = (size_t)x->dims[0], H = (size_t)x->dims[2], W = (size_t)x->dims[3];
    if (mx)
        return par_xnn_push_op(p, op, xnn_setup_max_pooling2d_nhwc_f32(op, N, H, W, in, out, p->pool),
                       "setup_max_pooling2d_nhwc_f32", msg);
    return par_xnn_push_op(p, op, xnn_setup_average_pooling2d_nhwc_f32(op, N, H, W, in, out, p->pool),
                   "setup_average_pooling2d_nhwc_f32", msg);
}

par_status par_xnn_lower_global_avg(xa_plan *p, int32_t ni, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    const par_value *x = par_node_input(g, n, 0);
    size_t C = (size_t)x->dims[1];
    xnn_operator_t op = NULL;
    XA_CREATE(xnn_create_global_average_pooling_nwc_f32(C, C, C, p->out_min[ni], p->out_max[ni], 0, &op),
           "global_average_pooling_nwc_f32");
    const float *in = par_xnn_input(p, n->inputs[0], XA_NHWC, msg);
    /* [N, 1, 1, C] in NHWC and [N, C] are the same memory as the logical [N, C, 1, 1] */
    float *out = in ? par_xnn_output(p, p->final_out[ni], XA_NHWC, msg) : NULL;
    if (!out) {
        xnn_delete_operator(op);
        return PAR_ERROR;
    }
    return par_xnn_push_op(p, op,
                   xnn_setup_global_average_pooling_nwc_f32(op, (size_t)x->dims[0], (size_t)(x->dims[2] * x->dims[3]),
                                                            in, out, p->pool),
                   "setup_global_average_pooling_nwc_f32", msg);
}

par_status par_xnn_copy_rows(xa_plan *p, size_t esize, size_t batch, size_t channels, size_t in_stride,
                             size_t out_stride, const void *in, void *out, par_msg *msg)
{
    xnn_operator_t op = NULL;
    if (esize == 1) {
        XA_CREATE(xnn_create_copy_nc_x8(channels, in_stride, out_stride, 0, &op), "copy_nc_x8");
        return par_xnn_push_op(p, op, xnn_setup_copy_nc_x8(op, batch, in, out, p->pool), "setup_copy_nc_x8", msg);
    }
    XA_CREATE(xnn_create_copy_nc_x32(channels, in_stride, out_stride, 0, &op), "copy_nc_x32");
    return par_xnn_push_op(p, op, xnn_setup_copy_nc_x32(op, batch, in, out, p->pool), "setup_copy_nc_x32", msg);
}

par_status par_xnn_lower_adaptive(xa_plan *p, int32_t ni, par_msg *msg)
{
    const par_node *n = &p->g->nodes[ni];
    const par_value *x = par_node_input(p->g, n, 0);
    int64_t oh = par_attr_ints_at(n, "output_size", 0, 1), ow = par_attr_ints_at(n, "output_size", 1, 1);
    if (oh == 1 && ow == 1) return par_xnn_lower_global_avg(p, ni, msg);
    int64_t kh = x->dims[2] / oh, kw = x->dims[3] / ow, zero[4] = {0, 0, 0, 0};
    if (kh * kw > 1) return par_xnn_lower_pool(p, ni, kh, kw, kh, kw, zero, msg);
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
    XA_CREATE(xnn_create_softmax_nc_f32(C, C, C, 0, &op), "softmax_nc_f32");
    const float *in = par_xnn_input(p, n->inputs[0], lay, msg);
    float *out = in ? par_xnn_output(p, p->final_out[ni], lay, msg) : NULL;
    if (!out) {
        xnn_delete_operator(op);
        return PAR_ERROR;
    }
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
    XA_CREATE(xnn_create_resize_bilinear2d_nhwc_f32(C, C, C, flags, &op), "resize_bilinear2d_nhwc_f32");
    const float *in = par_xnn_input(p, n->inputs[0], XA_NHWC, msg);
    float *out = in ? par_xnn_output(p, p->final_out[ni], XA_NHWC, msg) : NULL;
    if (!out) {
        xnn_delete_operator(op);
        return PAR_ERROR;
    }
    return par_xnn_push_op(p, op,
                   xnn_setup_resize_bilinear2d_nhwc_f32(op, (size_t)x->dims[0], (size_t)x->dims[2], (size_t)x->dims[3],
                                                        (size_t)y->dims[2], (size_t)y->dims[3], in, out, p->pool),
                   "setup_resize_bilinear2d_nhwc_f32", msg);
}

static size_t prod(const size_t *d, int32_t from, int32_t to)
{
    size_t r = 1;
    for (int32_t i = from; i < to; i++) r *= d[i];
    return r;
}

par_status par_xnn_lower_concat(xa_plan *p, int32_t ni, par_msg *msg)
{
    const par_node *n = &p->g->nodes[ni];
    const par_value *y = par_node_output(p->g, n, 0);
    xa_layout lay = y->rank == 4 ? XA_NHWC : XA_LOGICAL;
    int32_t pa = par_xnn_phys_axis(y, lay, (int32_t)par_attr_int(n, "axis", 1));
    size_t yd[PAR_MAX_RANK], xd[PAR_MAX_RANK];
    par_xnn_phys_dims(y, lay, yd);
    size_t outer = prod(yd, 0, pa), inner_y = prod(yd, pa, y->rank), off = 0, es = par_dtype_size(y->dtype);
    const void *ins[64];
    if (n->n_inputs > 64) return par_msgf(msg, PAR_UNSUPPORTED, "concat of %d inputs (the adapter takes 64)",
                                          n->n_inputs);
    for (int32_t i = 0; i < n->n_inputs; i++)
        if (!(ins[i] = par_xnn_input(p, n->inputs[i], lay, msg))) return PAR_ERROR;
    char *out = par_xnn_output(p, p->final_out[ni], lay, msg);
    if (!out) return PAR_ERROR;
    for (int32_t i = 0; i < n->n_inputs; i++) {
        par_xnn_phys_dims(par_node_input(p->g, n, i), lay, xd);
        size_t inner = prod(xd, pa, y->rank);
        par_status st = par_xnn_copy_rows(p, es, outer, inner, inner, inner_y, ins[i], out + off * es, msg);
        if (st != PAR_OK) return st;
        off += inner;
    }
    return PAR_OK;
}

par_status par_xnn_lower_reshape(xa_plan *p, int32_t ni, par_msg *msg)
{
    const par_node *n = &p->g->nodes[ni];
    const par_value *x = par_node_input(p->g, n, 0);
    size_t cnt = (size_t)x->numel;
    const void *in = par_xnn_input(p, n->inputs[0], XA_LOGICAL, msg);
    void *out = in ? par_xnn_output(p, p->final_out[ni], XA_LOGICAL, msg) : NULL;
    if (!out) return PAR_ERROR;
    return par_xnn_copy_rows(p, par_dtype_size(x->dtype), 1, cnt, cnt, cnt, in, out, msg);
}

par_status par_xnn_lower_slice(xa_plan *p, int32_t ni, par_msg *msg)
{
    const par_node *n = &p->g->nodes[ni];
    const par_value *x = par_node_input(p->g, n, 0), *y = par_node_output(p->g, n, 0);
    xa_layout lay = par_xnn_current_layout(p, n->inputs[0]);
    int32_t a = norm_axis(par_attr_int(n, "dim", 0), x->rank), pa = par_xnn_phys_axis(x, lay, a);
    int64_t size = x->dims[a], start = par_attr_int(n, "start", 0);
    if (start < 0) start += size;
    start = start < 0 ? 0 : start > size ? size : start;
    size_t xd[PAR_MAX_RANK];
    par_xnn_phys_dims(x, lay, xd);
    size_t outer = prod(xd, 0, pa), inner = prod(xd, pa + 1, x->rank), len = (size_t)y->dims[a];
    size_t es = par_dtype_size(x->dtype);
    const char *in = par_xnn_input(p, n->inputs[0], lay, msg);
    void *out = in ? par_xnn_output(p, p->final_out[ni], lay, msg) : NULL;
    if (!out) return PAR_ERROR;
    return par_xnn_copy_rows(p, es, outer, len * inner, (size_t)size * inner, len * inner,
                             in + (size_t)start * inner * es, out, msg);
}

par_status par_xnn_lower_pad(xa_plan *p, int32_t ni, par_msg *msg)
{
    const par_node *n = &p->g->nodes[ni];
    const par_value *x = par_node_input(p->g, n, 0);
    xa_layout lay = par_xnn_current_layout(p, n->inputs[0]);
    size_t xd[PAR_MAX_RANK], pre[PAR_MAX_RANK], post[PAR_MAX_RANK];
    par_xnn_phys_dims(x, lay, xd);
    for (int32_t la = 0; la < x->rank; la++) {
        int32_t pa = par_xnn_phys_axis(x, lay, la);
        pre[pa] = (size_t)par_attr_ints_at(n, "pads", 2 * la, 0);
        post[pa] = (size_t)par_attr_ints_at(n, "pads", 2 * la + 1, 0);
    }
    float value = (float)par_attr_float(n, "value", 0.0);
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    xnn_operator_t op = NULL;
    XA_CREATE(xnn_create_constant_pad_nd_x32(&bits, 0, &op), "constant_pad_nd_x32");
    const float *in = par_xnn_input(p, n->inputs[0], lay, msg);
    float *out = in ? par_xnn_output(p, p->final_out[ni], lay, msg) : NULL;
    if (!out) {
        xnn_delete_operator(op);
        return PAR_ERROR;
    }
    return par_xnn_push_op(p, op, xnn_setup_constant_pad_nd_x32(op, (size_t)x->rank, xd, pre, post, in, out, p->pool),
                   "setup_constant_pad_nd_x32", msg);
}

/* A batch norm that follows no foldable convolution: y = x * scale[c] + shift[c], with scale and shift computed in
 * double and rounded once, as two broadcasting XNNPACK operators. */
par_status par_xnn_lower_batch_norm(xa_plan *p, int32_t ni, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    const par_value *x = par_node_input(g, n, 0);
    xa_layout lay = par_xnn_current_layout(p, n->inputs[0]);
    int64_t C = x->dims[1];
    float *scale = par_xnn_alloc(p, C), *shift = par_xnn_alloc(p, C), *tmp = par_xnn_alloc(p, x->numel);
    if (!scale || !shift || !tmp) return par_msgf(msg, PAR_ERROR, "prepare: out of memory for batch_norm");
    const float *gam = par_node_input(g, n, 1)->data, *bet = par_node_input(g, n, 2)->data;
    const float *mu = par_node_input(g, n, 3)->data, *var = par_node_input(g, n, 4)->data;
    double eps = par_attr_float(n, "eps", 1e-5);
    for (int64_t c = 0; c < C; c++) {
        double s = (double)gam[c] / sqrt((double)var[c] + eps);
        scale[c] = (float)s;
        shift[c] = (float)((double)bet[c] - (double)mu[c] * s);
    }
    size_t xd[PAR_MAX_RANK], cd[PAR_MAX_RANK];
    par_xnn_phys_dims(x, lay, xd);
    for (int32_t i = 0; i < x->rank; i++) cd[i] = 1;
    cd[par_xnn_phys_axis(x, lay, 1)] = (size_t)C;
    const float *in = par_xnn_input(p, n->inputs[0], lay, msg);
    float *out = in ? par_xnn_output(p, p->final_out[ni], lay, msg) : NULL;
    if (!out) return PAR_ERROR;
    xnn_operator_t mul = NULL, add = NULL;
    XA_CREATE(xnn_create_multiply_nd_f32(-INFINITY, INFINITY, 0, &mul), "multiply_nd_f32");
    par_status st = par_xnn_push_op(p, mul,
                            xnn_setup_multiply_nd_f32(mul, (size_t)x->rank, xd, (size_t)x->rank, cd, in, scale, tmp,
                                                      p->pool),
                            "setup_multiply_nd_f32", msg);
    if (st != PAR_OK) return st;
    XA_CREATE(xnn_create_add_nd_f32(-INFINITY, INFINITY, 0, &add), "add_nd_f32");
    return par_xnn_push_op(p, add,
                   xnn_setup_add_nd_f32(add, (size_t)x->rank, xd, (size_t)x->rank, cd, tmp, shift, out, p->pool),
                   "setup_add_nd_f32", msg);
}

/* hardsigmoid(x) = clamp(x + 3, 0, 6) / 6 with XNNPACK's add (fused clamp) and divide, over the flat tensor. */
par_status par_xnn_lower_hardsigmoid(xa_plan *p, int32_t ni, par_msg *msg)
{
    const par_node *n = &p->g->nodes[ni];
    const par_value *x = par_node_input(p->g, n, 0);
    xa_layout lay = par_xnn_current_layout(p, n->inputs[0]);
    float *k = par_xnn_alloc(p, 2), *tmp = par_xnn_alloc(p, x->numel);
    if (!k || !tmp) return par_msgf(msg, PAR_ERROR, "prepare: out of memory for hardsigmoid");
    k[0] = 3.0f;
    k[1] = 6.0f;
    const float *in = par_xnn_input(p, n->inputs[0], lay, msg);
    float *out = in ? par_xnn_output(p, p->final_out[ni], lay, msg) : NULL;
    if (!out) return PAR_ERROR;
    size_t flat[1] = {(size_t)x->numel}, one[1] = {1};
    xnn_operator_t add = NULL, div = NULL;
    XA_CREATE(xnn_create_add_nd_f32(0.0f, 6.0f, 0, &add), "add_nd_f32");
    par_status st = par_xnn_push_op(p, add, xnn_setup_add_nd_f32(add, 1, flat, 1, one, in, k, tmp, p->pool),
                            "setup_add_nd_f32", msg);
    if (st != PAR_OK) return st;
    XA_CREATE(xnn_create_divide_nd_f32(-INFINITY, INFINITY, 0, &div), "divide_nd_f32");
    return par_xnn_push_op(p, div, xnn_setup_divide_nd_f32(div, 1, flat, 1, one, tmp, k + 1, out, p->pool),
                   "setup_divide_nd_f32", msg);
}

