/*
 * xnnpack_lower_util.c - what the xnnpack adapter's lowering files share (xnnpack_lower.c, the driver, and its parts
 * xnnpack_lower_{conv,eltwise,pool,move,q8}.c): the parameter rules XNNPACK's operators impose whatever their type
 * (par_xnn_check_params), how parity's attributes map to XNNPACK's (clamp ranges, convolution and pooling padding),
 * the fusion test (a value's sole consumer), and the create / setup / step plumbing every lowering goes through.
 *
 * It must not call the driver or any lowering part: they call it. It computes no tensor values.
 */
#include <math.h>
#include <stdlib.h>

#include "xnnpack_internal.h"


par_status par_xnn_check_params(const par_graph_desc *g, const par_node *n, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0), *y = par_node_output(g, n, 0);
    if (is_op(n, "conv2d") || is_op(n, "conv_transpose2d") || is_op(n, "linear")) {
        const par_value *w = par_node_input(g, n, 1), *b = par_node_input(g, n, 2);
        if (!is_const(w) || (b && !is_const(b)))
            return par_msgf(msg, PAR_UNSUPPORTED, "weights and bias must be constants: XNNPACK packs them when the "
                                                  "operator is created");
    }
    if (is_op(n, "conv_transpose2d")) {
        for (int i = 0; i < 2; i++)
            if (par_attr_ints_at(n, "output_padding", i, 0) >= par_attr_ints_at(n, "stride", i, 1))
                return par_msgf(msg, PAR_UNSUPPORTED, "output_padding[%d] = %lld is not below stride[%d] = %lld: "
                                "XNNPACK's deconvolution requires adjustment < stride", i,
                                (long long)par_attr_ints_at(n, "output_padding", i, 0), i,
                                (long long)par_attr_ints_at(n, "stride", i, 1));
    }
    if (is_op(n, "matmul")) {
        const par_value *b = par_node_input(g, n, 1);
        if (!is_const(b))
            return par_msgf(msg, PAR_UNSUPPORTED, "matmul with a non-constant right operand: XNNPACK 2022-02 has no "
                                                  "batch matrix multiply, only fully_connected with packed weights");
        for (int32_t i = 0; i + 2 < b->rank; i++)
            if (b->dims[i] != 1)
                return par_msgf(msg, PAR_UNSUPPORTED, "matmul with a batched right operand (dim %d = %lld): "
                                "XNNPACK 2022-02 has no batch matrix multiply", i, (long long)b->dims[i]);
    }
    if (is_op(n, "hardtanh") || is_op(n, "clamp")) {
        float lo, hi;
        par_clamp_bounds_f32(n, &lo, &hi);
        if (!(lo < hi))
            return par_msgf(msg, PAR_UNSUPPORTED, "clamp range [%g, %g] is empty or a point: XNNPACK's clamp requires "
                                                  "output_min < output_max", (double)lo, (double)hi);
    }
    if (is_op(n, "prelu") && !is_const(par_node_input(g, n, 1)))
        return par_msgf(msg, PAR_UNSUPPORTED, "prelu with a non-constant slope: XNNPACK packs the slope at create");
    if (is_op(n, "prelu") && x->rank != 2 && x->rank != 4)
        return par_msgf(msg, PAR_UNSUPPORTED, "prelu on a rank-%d tensor: XNNPACK's prelu_nc needs channels "
                                              "innermost, which the adapter provides for rank 2 and 4 only", x->rank);
    if (is_op(n, "avg_pool2d") && par_attr_int(n, "count_include_pad", 1)) {
        for (int i = 0; i < 4; i++)
            if (par_attr_ints_at(n, "padding", i, 0) > 0)
                return par_msgf(msg, PAR_UNSUPPORTED, "count_include_pad=1 with padding: XNNPACK's average pooling "
                                                      "divides by the number of in-image elements only");
    }
    if ((is_op(n, "max_pool2d") || is_op(n, "avg_pool2d")) && par_attr_ints_at(n, "kernel", 0, 1) == 1 &&
        par_attr_ints_at(n, "kernel", 1, 1) == 1)
        return par_msgf(msg, PAR_UNSUPPORTED, "1x1 pooling window: XNNPACK's %s refuses pooling windows of one element "
                        "(invalid_parameter)", is_op(n, "max_pool2d") ? "max_pooling2d" : "average_pooling2d");
    if (is_op(n, "adaptive_avg_pool2d")) {
        int64_t oh = par_attr_ints_at(n, "output_size", 0, 1), ow = par_attr_ints_at(n, "output_size", 1, 1);
        if (x->dims[2] % oh || x->dims[3] % ow)
            return par_msgf(msg, PAR_UNSUPPORTED, "adaptive_avg_pool2d %lldx%lld -> %lldx%lld has windows of varying "
                            "size: XNNPACK has no adaptive pooling, and uniform average pooling cannot express it",
                            (long long)x->dims[2], (long long)x->dims[3], (long long)oh, (long long)ow);
    }
    if (is_op(n, "mean")) {
        int32_t k = par_attr_count(n, "axes");
        int a0 = k > 0 ? norm_axis(par_attr_ints_at(n, "axes", 0, 0), x->rank) : -1;
        int a1 = k > 1 ? norm_axis(par_attr_ints_at(n, "axes", 1, 0), x->rank) : -1;
        if (!(x->rank == 4 && k == 2 && ((a0 == 2 && a1 == 3) || (a0 == 3 && a1 == 2))))
            return par_msgf(msg, PAR_UNSUPPORTED, "mean over these axes: XNNPACK 2022-02 has only global average "
                                                  "pooling (mean over H and W of a 4-D tensor)");
    }
    if (is_op(n, "softmax")) {
        int a = norm_axis(par_attr_int(n, "axis", -1), x->rank);
        if (!(a == x->rank - 1 || (x->rank == 4 && a == 1)))
            return par_msgf(msg, PAR_UNSUPPORTED, "softmax over axis %d of a rank-%d tensor: XNNPACK's softmax_nc "
                                                  "reduces the innermost dimension only", a, x->rank);
    }
    if (is_op(n, "upsample_bilinear2d") && par_attr_count(n, "scale") > 0) {
        for (int i = 0; i < 2; i++) {
            double s = par_attr_floats_at(n, "scale", i, 1.0);
            if ((double)y->dims[2 + i] != (double)x->dims[2 + i] * s)
                return par_msgf(msg, PAR_UNSUPPORTED, "scale %g gives %lld -> %lld, not an exact multiple: PyTorch "
                                "then uses 1/scale as the coordinate ratio, XNNPACK always uses in/out", s,
                                (long long)x->dims[2 + i], (long long)y->dims[2 + i]);
        }
    }
    if (is_op(n, "pad") && strcmp(par_attr_str(n, "mode", "constant"), "constant") != 0)
        return par_msgf(msg, PAR_UNSUPPORTED, "pad mode %s: XNNPACK 2022-02 pads with a constant only "
                                              "(constant_pad_nd)", par_attr_str(n, "mode", "constant"));
    if (is_op(n, "slice") && par_attr_int(n, "step", 1) != 1)
        return par_msgf(msg, PAR_UNSUPPORTED, "slice with step %lld: XNNPACK 2022-02 has no strided slice "
                                              "(only strided copies with unit steps)",
                        (long long)par_attr_int(n, "step", 1));
    if (is_op(n, "batch_norm"))
        for (int32_t i = 1; i < 5; i++)
            if (!is_const(par_node_input(g, n, i)))
                return par_msgf(msg, PAR_UNSUPPORTED, "batch_norm with non-constant parameters: XNNPACK has no batch "
                                                      "norm operator; the adapter folds constant parameters only");
    return PAR_OK;
}

void par_xnn_conv_pads(const par_node *n, const par_value *x, const par_value *w, int64_t pad[4])
{
    const char *mode = par_attr_str(n, "pad_mode", "explicit");
    for (int i = 0; i < 4; i++) pad[i] = strcmp(mode, "explicit") == 0 ? par_attr_ints_at(n, "padding", i, 0) : 0;
    if (strcmp(mode, "same") != 0) return;
    for (int d = 0; d < 2; d++) {
        int64_t in = x->dims[2 + d], k = w->dims[2 + d], s = par_attr_ints_at(n, "stride", d, 1);
        int64_t dil = par_attr_ints_at(n, "dilation", d, 1);
        int64_t out = (in + s - 1) / s, total = (out - 1) * s + (k - 1) * dil + 1 - in;
        if (total < 0) total = 0;
        pad[d] = total / 2;         /* top, left */
        pad[d + 2] = total - total / 2; /* bottom, right */
    }
}

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

int32_t par_xnn_sole_consumer(const xa_plan *p, int32_t from, int32_t v)
{
    if (p->n_uses[v] != 1 || p->is_output[v]) return -1;
    for (int32_t j = from + 1; j < p->g->n_nodes; j++) {
        const par_node *m = &p->g->nodes[j];
        for (int32_t i = 0; i < m->n_inputs; i++)
            if (m->inputs[i] == v) return i == 0 ? j : -1;
    }
    return -1;
}

par_status par_xnn_created(enum xnn_status st, const char *fn, par_msg *msg)
{
    if (st == xnn_status_success) return PAR_OK;
    if (st == xnn_status_invalid_parameter || st == xnn_status_unsupported_parameter)
        return par_msgf(msg, PAR_UNSUPPORTED, "XNNPACK %s refused these parameters (%s)", fn, par_xnn_status_name(st));
    return par_msgf(msg, PAR_ERROR, "XNNPACK %s failed: %s", fn, par_xnn_status_name(st));
}

par_status par_xnn_push_op(xa_plan *p, xnn_operator_t op, enum xnn_status setup, const char *fn,
                           par_msg *msg)
{
    if (setup != xnn_status_success) {
        xnn_delete_operator(op);
        return par_msgf(msg, setup == xnn_status_invalid_parameter ? PAR_UNSUPPORTED : PAR_ERROR,
                        "XNNPACK %s failed: %s", fn, par_xnn_status_name(setup));
    }
    xa_step s = {.kind = XA_STEP_OP, .op = op};
    return par_xnn_add_step(p, &s, msg);
}

xa_layout par_xnn_current_layout(const xa_plan *p, int32_t v)
{
    return p->buf[v] ? p->lay[v] : XA_LOGICAL;
}

/* A strided copy of `batch` rows of `channels` elements of esize bytes (copy_nc_x8 for 1-byte elements, else
 * copy_nc_x32). */
par_status par_xnn_copy_rows(xa_plan *p, size_t esize, size_t batch, size_t channels, size_t in_stride,
                             size_t out_stride, const void *in, void *out, par_msg *msg)
{
    xnn_operator_t op = NULL;
    const int x8 = esize == 1;
    par_status st = par_xnn_created(x8 ? xnn_create_copy_nc_x8(channels, in_stride, out_stride, 0, &op)
                                       : xnn_create_copy_nc_x32(channels, in_stride, out_stride, 0, &op),
                                    x8 ? "copy_nc_x8" : "copy_nc_x32", msg);
    if (st != PAR_OK) return st;
    return par_xnn_push_op(p, op, x8 ? xnn_setup_copy_nc_x8(op, batch, in, out, p->pool)
                                     : xnn_setup_copy_nc_x32(op, batch, in, out, p->pool),
                           x8 ? "setup_copy_nc_x8" : "setup_copy_nc_x32", msg);
}

par_status par_xnn_io(xa_plan *p, int32_t ni, xa_layout lay, xnn_operator_t op, const void **in, void **out,
                      par_msg *msg)
{
    const par_node *n = &p->g->nodes[ni];
    *in = par_xnn_input(p, n->inputs[0], lay, msg);
    *out = *in ? par_xnn_output(p, p->final_out[ni], lay, msg) : NULL;
    if (*out) return PAR_OK;
    if (op) xnn_delete_operator(op);
    return PAR_ERROR;
}
