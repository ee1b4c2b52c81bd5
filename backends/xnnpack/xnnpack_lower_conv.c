/*
 * xnnpack_lower_conv.c - the xnnpack adapter's f32 lowerings of the weighted ops: conv2d (with a folded batch norm
 * and a fused clamp), conv_transpose2d, linear and matmul with a constant right operand (fully_connected).
 *
 * Weights are reordered to XNNPACK's OHWI layouts (exact); a folded batch norm scales the weights and bias in double
 * and rounds once to f32 (docs/ops.md allows folding). Nothing here computes tensor values in C, and nothing calls
 * the driver (xnnpack_lower.c): shared plumbing is in xnnpack_lower_util.c.
 */
#include <math.h>
#include <stdlib.h>

#include "xnnpack_internal.h"

par_status par_xnn_lower_conv2d(xa_plan *p, int32_t ni, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    const par_value *x = par_node_input(g, n, 0), *w = par_node_input(g, n, 1), *b = par_node_input(g, n, 2);
    const par_value *y = par_node_output(g, n, 0);
    int64_t C = x->dims[1], O = w->dims[0], KH = w->dims[2], KW = w->dims[3], G = par_attr_int(n, "groups", 1);
    int64_t gi = C / G, go = O / G, pad[4];
    par_xnn_conv_pads(n, x, w, pad);
    int64_t sh = par_attr_ints_at(n, "stride", 0, 1), sw = par_attr_ints_at(n, "stride", 1, 1);
    int64_t dh = par_attr_ints_at(n, "dilation", 0, 1), dw = par_attr_ints_at(n, "dilation", 1, 1);
    /* XNNPACK's own output size must be the graph's, or the lowering is wrong */
    int64_t oh = (x->dims[2] + pad[0] + pad[2] - (dh * (KH - 1) + 1)) / sh + 1;
    int64_t ow = (x->dims[3] + pad[1] + pad[3] - (dw * (KW - 1) + 1)) / sw + 1;
    if (oh != y->dims[2] || ow != y->dims[3])
        return par_msgf(msg, PAR_ERROR, "conv2d lowering: XNNPACK would produce %lldx%lld, the graph says %lldx%lld",
                        (long long)oh, (long long)ow, (long long)y->dims[2], (long long)y->dims[3]);
    /* OIHW -> OHWI, i.e. XNNPACK's [groups][group_output][kh][kw][group_input]; batch norm folded in double */
    float *k = malloc((size_t)(O * KH * KW * gi) * sizeof *k), *bias = malloc((size_t)O * sizeof *bias);
    if (!k || !bias) {
        free(k);
        free(bias);
        return par_msgf(msg, PAR_ERROR, "prepare: out of memory for conv2d weights");
    }
    const float *wd = w->data, *bd = b ? b->data : NULL;
    const par_node *bn = p->bn_of[ni] >= 0 ? &g->nodes[p->bn_of[ni]] : NULL;
    for (int64_t o = 0; o < O; o++) {
        double scale = 1.0, shift = bd ? bd[o] : 0.0;
        if (bn) {
            const float *gam = par_node_input(g, bn, 1)->data, *bet = par_node_input(g, bn, 2)->data;
            const float *mu = par_node_input(g, bn, 3)->data, *var = par_node_input(g, bn, 4)->data;
            scale = (double)gam[o] / sqrt((double)var[o] + par_attr_float(bn, "eps", 1e-5));
            shift = (shift - mu[o]) * scale + bet[o];
        }
        for (int64_t c = 0; c < gi; c++)
            for (int64_t i = 0; i < KH * KW; i++)
                k[(o * KH * KW + i) * gi + c] = (float)(wd[(o * gi + c) * KH * KW + i] * scale);
        bias[o] = (float)shift;
    }
    xnn_operator_t op = NULL;
    enum xnn_status st = xnn_create_convolution2d_nhwc_f32(
        (uint32_t)pad[0], (uint32_t)pad[3], (uint32_t)pad[2], (uint32_t)pad[1], (uint32_t)KH, (uint32_t)KW,
        (uint32_t)sh, (uint32_t)sw, (uint32_t)dh, (uint32_t)dw, (uint32_t)G, (size_t)gi, (size_t)go, (size_t)C,
        (size_t)O, k, (bd || bn) ? bias : NULL, p->out_min[ni], p->out_max[ni], 0, &op);
    free(k);
    free(bias);
    par_status cs = par_xnn_created(st, "convolution2d_nhwc_f32", msg);
    if (cs != PAR_OK) return cs;
    const void *in;
    void *out;
    if ((cs = par_xnn_io(p, ni, XA_NHWC, op, &in, &out, msg)) != PAR_OK) return cs;
    return par_xnn_push_op(p, op,
                   xnn_setup_convolution2d_nhwc_f32(op, (size_t)x->dims[0], (size_t)x->dims[2], (size_t)x->dims[3], in,
                                                    out, p->pool),
                   "setup_convolution2d_nhwc_f32", msg);
}

par_status par_xnn_lower_deconv(xa_plan *p, int32_t ni, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    const par_value *x = par_node_input(g, n, 0), *w = par_node_input(g, n, 1), *b = par_node_input(g, n, 2);
    const par_value *y = par_node_output(g, n, 0);
    int64_t C = x->dims[1], G = par_attr_int(n, "groups", 1), go = w->dims[1], O = go * G, gi = C / G;
    int64_t KH = w->dims[2], KW = w->dims[3];
    int64_t sh = par_attr_ints_at(n, "stride", 0, 1), sw = par_attr_ints_at(n, "stride", 1, 1);
    int64_t dh = par_attr_ints_at(n, "dilation", 0, 1), dw = par_attr_ints_at(n, "dilation", 1, 1);
    int64_t pt = par_attr_ints_at(n, "padding", 0, 0), pl = par_attr_ints_at(n, "padding", 1, 0);
    int64_t pb = par_attr_ints_at(n, "padding", 2, 0), pr = par_attr_ints_at(n, "padding", 3, 0);
    int64_t ah = par_attr_ints_at(n, "output_padding", 0, 0), aw = par_attr_ints_at(n, "output_padding", 1, 0);
    if (O != y->dims[1]) return par_msgf(msg, PAR_ERROR, "conv_transpose2d lowering: %lld output channels, graph "
                                         "says %lld", (long long)O, (long long)y->dims[1]);
    /* PyTorch [C][O/G][kh][kw] -> XNNPACK [G][O/G][kh][kw][C/G] */
    float *k = malloc((size_t)(O * KH * KW * gi) * sizeof *k);
    if (!k) return par_msgf(msg, PAR_ERROR, "prepare: out of memory for conv_transpose2d weights");
    const float *wd = w->data;
    for (int64_t gr = 0; gr < G; gr++)
        for (int64_t o = 0; o < go; o++)
            for (int64_t i = 0; i < KH * KW; i++)
                for (int64_t c = 0; c < gi; c++)
                    k[((gr * go + o) * KH * KW + i) * gi + c] = wd[((gr * gi + c) * go + o) * KH * KW + i];
    xnn_operator_t op = NULL;
    enum xnn_status st = xnn_create_deconvolution2d_nhwc_f32(
        (uint32_t)pt, (uint32_t)pr, (uint32_t)pb, (uint32_t)pl, (uint32_t)KH, (uint32_t)KW, (uint32_t)sh,
        (uint32_t)sw, (uint32_t)dh, (uint32_t)dw, (uint32_t)G, (size_t)gi, (size_t)go, (size_t)C, (size_t)O, k,
        b ? b->data : NULL, p->out_min[ni], p->out_max[ni], 0, &op);
    free(k);
    par_status cs = par_xnn_created(st, "deconvolution2d_nhwc_f32", msg);
    if (cs != PAR_OK) return cs;
    const void *in;
    void *out;
    if ((cs = par_xnn_io(p, ni, XA_NHWC, op, &in, &out, msg)) != PAR_OK) return cs;
    return par_xnn_push_op(p, op,
                   xnn_setup_deconvolution2d_nhwc_f32(op, (size_t)x->dims[0], (size_t)x->dims[2], (size_t)x->dims[3],
                                                      (uint32_t)ah, (uint32_t)aw, in, out, p->pool),
                   "setup_deconvolution2d_nhwc_f32", msg);
}

/* linear (weights [O, K]) and matmul with a constant right operand ([K, N]: XNN_FLAG_TRANSPOSE_WEIGHTS). */
par_status par_xnn_lower_fc(xa_plan *p, int32_t ni, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    const par_value *x = par_node_input(g, n, 0), *w = par_node_input(g, n, 1);
    const par_value *b = is_op(n, "linear") ? par_node_input(g, n, 2) : NULL;
    int lin = is_op(n, "linear");
    int64_t K = x->dims[x->rank - 1], O = lin ? w->dims[0] : w->dims[w->rank - 1];
    xnn_operator_t op = NULL;
    par_status cs = par_xnn_created(
        xnn_create_fully_connected_nc_f32((size_t)K, (size_t)O, (size_t)K, (size_t)O, w->data, b ? b->data : NULL,
                                          p->out_min[ni], p->out_max[ni], lin ? 0 : XNN_FLAG_TRANSPOSE_WEIGHTS, &op),
        "fully_connected_nc_f32", msg);
    if (cs != PAR_OK) return cs;
    const void *in;
    void *out;
    if ((cs = par_xnn_io(p, ni, XA_LOGICAL, op, &in, &out, msg)) != PAR_OK) return cs;
    return par_xnn_push_op(p, op, xnn_setup_fully_connected_nc_f32(op, (size_t)(x->numel / K), in, out, p->pool),
                   "setup_fully_connected_nc_f32", msg);
}
