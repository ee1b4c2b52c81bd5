/*
 * xnnpack_lower.c - lowering of parity ops to the operator API of the system XNNPACK (the 2022-02 snapshot that
 * Debian 12 ships): what the library can run (par_xnn_check, shared by supports and prepare), the fusions an
 * XNNPACK integrator makes (batch norm folded into the preceding convolution, a following relu/relu6/hardtanh/clamp
 * turned into the operator's output_min/output_max), and per op the create + setup calls.
 *
 * The adapter adds no arithmetic of its own beyond what every XNNPACK integrator does: weights are reordered to
 * XNNPACK's OHWI layouts (exact), a folded batch norm scales the weights and bias in double and rounds once to f32
 * (docs/ops.md allows folding), ceil_mode pooling becomes extra bottom/right padding (exact: XNNPACK's padded
 * pooling ignores padding), and hardsigmoid, which has no operator of its own, becomes two XNNPACK operators as in
 * TFLite's MobileNetV3 graphs: add 3 with the output clamped to [0, 6], then divide by 6 (each f32-rounded once).
 * Whatever XNNPACK lacks is UNSUPPORTED with the reason, never emulated in C here.
 */
#include <math.h>
#include <stdlib.h>

#include "xnnpack_internal.h"

int par_xnn_clamp_range(const par_node *n, float *lo, float *hi)
{
    if (is_op(n, "relu")) *lo = 0.0f, *hi = INFINITY;
    else if (is_op(n, "relu6")) *lo = 0.0f, *hi = 6.0f;
    else if (is_op(n, "hardtanh"))
        *lo = (float)par_attr_float(n, "min_val", -1), *hi = (float)par_attr_float(n, "max_val", 1);
    else if (is_op(n, "clamp"))
        *lo = (float)par_attr_float(n, "min", -INFINITY), *hi = (float)par_attr_float(n, "max", INFINITY);
    else return 0;
    return 1;
}

/* ---------------------------------------------------------------------------------------------------------------
 * What XNNPACK can run
 * ------------------------------------------------------------------------------------------------------------- */
static const struct {
    const char *op, *why;
} missing_ops[] = {
    {"tanh", "XNNPACK 2022-02 has no f32 tanh operator (tanh_nc_f32 came later)"},
    {"log_softmax", "XNNPACK has no log_softmax operator"},
    {"upsample_nearest2d", "XNNPACK 2022-02 has no nearest-neighbour resize operator (only resize_bilinear2d)"},
    {"permute", "XNNPACK 2022-02 has no transpose operator (transpose_nd_x32 came later)"},
};

static const char *const known_ops[] = {
    "conv2d", "conv_transpose2d", "linear", "matmul", "add", "sub", "mul", "div", "relu", "relu6", "hardtanh",
    "clamp", "leaky_relu", "prelu", "sigmoid", "hardswish", "hardsigmoid", "elu", "max_pool2d", "avg_pool2d",
    "adaptive_avg_pool2d", "global_avg_pool2d", "mean", "softmax", "upsample_bilinear2d", "concat", "reshape",
    "flatten", "pad", "slice", "batch_norm",
};

par_status par_xnn_check(const par_graph_desc *g, const par_node *n, par_msg *msg)
{
    if (par_xnn_is_q8_node(g, n)) return par_xnn_check_q8(g, n, msg);
    for (size_t i = 0; i < sizeof missing_ops / sizeof missing_ops[0]; i++)
        if (is_op(n, missing_ops[i].op)) return par_msgf(msg, PAR_UNSUPPORTED, "%s", missing_ops[i].why);
    int known = 0;
    for (size_t i = 0; i < sizeof known_ops / sizeof known_ops[0]; i++) known |= is_op(n, known_ops[i]);
    if (!known) return par_msgf(msg, PAR_UNSUPPORTED, "op '%s' has no XNNPACK lowering in this adapter", n->op);
    for (int32_t i = 0; i < n->n_inputs; i++) {
        const par_value *v = par_node_input(g, n, i);
        if (v && v->dtype != PAR_DTYPE_F32)
            return par_msgf(msg, PAR_UNSUPPORTED, "input %d ('%s') is %s; the adapter's float operators take f32", i,
                            v->name, par_dtype_name(v->dtype));
    }
    const par_value *x = par_node_input(g, n, 0), *y = par_node_output(g, n, 0);
    if (!x || !y) return par_msgf(msg, PAR_ERROR, "node has no input 0 or no output 0");
    if (y->dtype != PAR_DTYPE_F32)
        return par_msgf(msg, PAR_UNSUPPORTED, "output '%s' is %s; the adapter's float operators produce f32", y->name,
                        par_dtype_name(y->dtype));
    if (x->rank > XNN_MAX_TENSOR_DIMS || y->rank > XNN_MAX_TENSOR_DIMS)
        return par_msgf(msg, PAR_UNSUPPORTED, "rank above XNN_MAX_TENSOR_DIMS (%d)", XNN_MAX_TENSOR_DIMS);
    return par_xnn_check_params(g, n, msg);
}

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
        par_xnn_clamp_range(n, &lo, &hi);
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

/* ---------------------------------------------------------------------------------------------------------------
 * Fusions
 * ------------------------------------------------------------------------------------------------------------- */
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

static int takes_clamp(const par_node *n)
{
    static const char *const ops[] = {"conv2d", "conv_transpose2d", "linear", "matmul", "add", "sub", "mul",
                                      "div", "max_pool2d", "avg_pool2d", "global_avg_pool2d", "mean"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (is_op(n, ops[i])) return 1;
    return 0;
}

void par_xnn_plan_fusions(xa_plan *p)
{
    const par_graph_desc *g = p->g;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        p->final_out[i] = g->nodes[i].outputs[0];
        p->bn_of[i] = -1;
        p->out_min[i] = -INFINITY;
        p->out_max[i] = INFINITY;
    }
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const par_node *n = &g->nodes[i];
        if (p->skip[i] || par_xnn_is_q8_node(g, n)) continue;
        int32_t j;
        if (is_op(n, "conv2d") && (j = par_xnn_sole_consumer(p, i, p->final_out[i])) >= 0 &&
            is_op(&g->nodes[j], "batch_norm") && par_xnn_check(g, &g->nodes[j], NULL) == PAR_OK) {
            p->bn_of[i] = j;
            p->skip[j] = 1;
            p->final_out[i] = g->nodes[j].outputs[0];
        }
        float lo, hi;
        if (takes_clamp(n) && (j = par_xnn_sole_consumer(p, i, p->final_out[i])) >= 0 &&
            par_xnn_clamp_range(&g->nodes[j], &lo, &hi) && lo < hi) {
            p->skip[j] = 1;
            p->final_out[i] = g->nodes[j].outputs[0];
            p->out_min[i] = lo;
            p->out_max[i] = hi;
        }
    }
    par_xnn_plan_fusions_q8(p);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Lowering
 * ------------------------------------------------------------------------------------------------------------- */
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

static par_status lower_conv2d(xa_plan *p, int32_t ni, par_msg *msg)
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
    XA_CREATE(st, "convolution2d_nhwc_f32");
    const float *in = par_xnn_input(p, n->inputs[0], XA_NHWC, msg);
    float *out = in ? par_xnn_output(p, p->final_out[ni], XA_NHWC, msg) : NULL;
    if (!out) {
        xnn_delete_operator(op);
        return PAR_ERROR;
    }
    return par_xnn_push_op(p, op,
                   xnn_setup_convolution2d_nhwc_f32(op, (size_t)x->dims[0], (size_t)x->dims[2], (size_t)x->dims[3], in,
                                                    out, p->pool),
                   "setup_convolution2d_nhwc_f32", msg);
}

static par_status lower_deconv(xa_plan *p, int32_t ni, par_msg *msg)
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
    XA_CREATE(st, "deconvolution2d_nhwc_f32");
    const float *in = par_xnn_input(p, n->inputs[0], XA_NHWC, msg);
    float *out = in ? par_xnn_output(p, p->final_out[ni], XA_NHWC, msg) : NULL;
    if (!out) {
        xnn_delete_operator(op);
        return PAR_ERROR;
    }
    return par_xnn_push_op(p, op,
                   xnn_setup_deconvolution2d_nhwc_f32(op, (size_t)x->dims[0], (size_t)x->dims[2], (size_t)x->dims[3],
                                                      (uint32_t)ah, (uint32_t)aw, in, out, p->pool),
                   "setup_deconvolution2d_nhwc_f32", msg);
}

/* linear (weights [O, K]) and matmul with a constant right operand ([K, N]: XNN_FLAG_TRANSPOSE_WEIGHTS). */
static par_status lower_fc(xa_plan *p, int32_t ni, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    const par_value *x = par_node_input(g, n, 0), *w = par_node_input(g, n, 1);
    const par_value *b = is_op(n, "linear") ? par_node_input(g, n, 2) : NULL;
    int lin = is_op(n, "linear");
    int64_t K = x->dims[x->rank - 1], O = lin ? w->dims[0] : w->dims[w->rank - 1];
    xnn_operator_t op = NULL;
    XA_CREATE(xnn_create_fully_connected_nc_f32((size_t)K, (size_t)O, (size_t)K, (size_t)O, w->data, b ? b->data : NULL,
                                             p->out_min[ni], p->out_max[ni], lin ? 0 : XNN_FLAG_TRANSPOSE_WEIGHTS, &op),
           "fully_connected_nc_f32");
    const float *in = par_xnn_input(p, n->inputs[0], XA_LOGICAL, msg);
    float *out = in ? par_xnn_output(p, p->final_out[ni], XA_LOGICAL, msg) : NULL;
    if (!out) {
        xnn_delete_operator(op);
        return PAR_ERROR;
    }
    return par_xnn_push_op(p, op, xnn_setup_fully_connected_nc_f32(op, (size_t)(x->numel / K), in, out, p->pool),
                   "setup_fully_connected_nc_f32", msg);
}

static par_status lower_binary(xa_plan *p, int32_t ni, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    const par_value *y = par_node_output(g, n, 0);
    int nhwc = y->rank == 4;
    size_t shape[2][XNN_MAX_TENSOR_DIMS], rank[2];
    const float *in[2];
    for (int k = 0; k < 2; k++) {
        const par_value *v = par_node_input(g, n, k);
        if (nhwc) {
            int64_t d[4] = {1, 1, 1, 1};
            for (int32_t i = 0; i < v->rank; i++) d[4 - v->rank + i] = v->dims[i];
            shape[k][0] = (size_t)d[0], shape[k][1] = (size_t)d[2], shape[k][2] = (size_t)d[3];
            shape[k][3] = (size_t)d[1];
            rank[k] = 4;
            in[k] = par_xnn_input_nhwc4(p, n->inputs[k], msg);
        } else {
            for (int32_t i = 0; i < v->rank; i++) shape[k][i] = (size_t)v->dims[i];
            rank[k] = (size_t)v->rank;
            if (v->rank == 0) shape[k][0] = 1, rank[k] = 1;
            in[k] = par_xnn_input(p, n->inputs[k], XA_LOGICAL, msg);
        }
        if (!in[k]) return PAR_ERROR;
    }
    xnn_operator_t op = NULL;
    float lo = p->out_min[ni], hi = p->out_max[ni];
    const char *fn;
    if (is_op(n, "add")) XA_CREATE(xnn_create_add_nd_f32(lo, hi, 0, &op), fn = "add_nd_f32");
    else if (is_op(n, "sub")) XA_CREATE(xnn_create_subtract_nd_f32(lo, hi, 0, &op), fn = "subtract_nd_f32");
    else if (is_op(n, "mul")) XA_CREATE(xnn_create_multiply_nd_f32(lo, hi, 0, &op), fn = "multiply_nd_f32");
    else XA_CREATE(xnn_create_divide_nd_f32(lo, hi, 0, &op), fn = "divide_nd_f32");
    float *out = par_xnn_output(p, p->final_out[ni], nhwc ? XA_NHWC : XA_LOGICAL, msg);
    if (!out) {
        xnn_delete_operator(op);
        return PAR_ERROR;
    }
    enum xnn_status st;
    if (is_op(n, "add"))
        st = xnn_setup_add_nd_f32(op, rank[0], shape[0], rank[1], shape[1], in[0], in[1], out, p->pool);
    else if (is_op(n, "sub"))
        st = xnn_setup_subtract_nd_f32(op, rank[0], shape[0], rank[1], shape[1], in[0], in[1], out, p->pool);
    else if (is_op(n, "mul"))
        st = xnn_setup_multiply_nd_f32(op, rank[0], shape[0], rank[1], shape[1], in[0], in[1], out, p->pool);
    else st = xnn_setup_divide_nd_f32(op, rank[0], shape[0], rank[1], shape[1], in[0], in[1], out, p->pool);
    return par_xnn_push_op(p, op, st, fn, msg);
}

xa_layout par_xnn_current_layout(const xa_plan *p, int32_t v)
{
    return p->buf[v] ? p->lay[v] : XA_LOGICAL;
}

static par_status lower_unary(xa_plan *p, int32_t ni, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    const par_value *x = par_node_input(g, n, 0);
    xa_layout lay = par_xnn_current_layout(p, n->inputs[0]);
    const float *in = par_xnn_input(p, n->inputs[0], lay, msg);
    if (!in) return PAR_ERROR;
    size_t c = (size_t)x->numel;
    xnn_operator_t op = NULL;
    const char *fn;
    float lo, hi;
    if (par_xnn_clamp_range(n, &lo, &hi))
        XA_CREATE(xnn_create_clamp_nc_f32(c, c, c, lo, hi, 0, &op), fn = "clamp_nc_f32");
    else if (is_op(n, "leaky_relu"))
        XA_CREATE(xnn_create_leaky_relu_nc_f32(c, c, c, (float)par_attr_float(n, "negative_slope", 0.01), 0, &op),
               fn = "leaky_relu_nc_f32");
    else if (is_op(n, "elu"))
        XA_CREATE(xnn_create_elu_nc_f32(c, c, c, (float)par_attr_float(n, "alpha", 1.0), 0, &op), fn = "elu_nc_f32");
    else if (is_op(n, "sigmoid")) XA_CREATE(xnn_create_sigmoid_nc_f32(c, c, c, 0, &op), fn = "sigmoid_nc_f32");
    else XA_CREATE(xnn_create_hardswish_nc_f32(c, c, c, 0, &op), fn = "hardswish_nc_f32");
    float *out = par_xnn_output(p, p->final_out[ni], lay, msg);
    if (!out) {
        xnn_delete_operator(op);
        return PAR_ERROR;
    }
    enum xnn_status st;
    if (par_xnn_clamp_range(n, &lo, &hi)) st = xnn_setup_clamp_nc_f32(op, 1, in, out, p->pool);
    else if (is_op(n, "leaky_relu")) st = xnn_setup_leaky_relu_nc_f32(op, 1, in, out, p->pool);
    else if (is_op(n, "elu")) st = xnn_setup_elu_nc_f32(op, 1, in, out, p->pool);
    else if (is_op(n, "sigmoid")) st = xnn_setup_sigmoid_nc_f32(op, 1, in, out, p->pool);
    else st = xnn_setup_hardswish_nc_f32(op, 1, in, out, p->pool);
    return par_xnn_push_op(p, op, st, fn, msg);
}

static par_status lower_prelu(xa_plan *p, int32_t ni, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    const par_value *x = par_node_input(g, n, 0), *s = par_node_input(g, n, 1);
    int64_t C = x->dims[1];
    const float *sd = par_xnn_input(p, n->inputs[1], XA_LOGICAL, msg);
    float *slope = sd ? par_xnn_alloc(p, C) : NULL;
    if (!slope) return PAR_ERROR;
    for (int64_t c = 0; c < C; c++) slope[c] = sd[s->numel == 1 ? 0 : c];
    xnn_operator_t op = NULL;
    XA_CREATE(xnn_create_prelu_nc_f32((size_t)C, (size_t)C, (size_t)C, slope, 0, &op), "prelu_nc_f32");
    const float *in = par_xnn_input(p, n->inputs[0], XA_NHWC, msg);
    float *out = in ? par_xnn_output(p, p->final_out[ni], XA_NHWC, msg) : NULL;
    if (!out) {
        xnn_delete_operator(op);
        return PAR_ERROR;
    }
    return par_xnn_push_op(p, op, xnn_setup_prelu_nc_f32(op, (size_t)(x->numel / C), in, out, p->pool),
                           "setup_prelu_nc_f32", msg);
}

par_status par_xnn_lower(xa_plan *p, int32_t ni, par_msg *msg)
{
    const par_node *n = &p->g->nodes[ni];
    par_status st = par_xnn_check(p->g, n, msg);
    if (st != PAR_OK) return st;
    if (par_xnn_is_q8_node(p->g, n)) return par_xnn_lower_q8(p, ni, msg);
    if (is_op(n, "conv2d")) return lower_conv2d(p, ni, msg);
    if (is_op(n, "conv_transpose2d")) return lower_deconv(p, ni, msg);
    if (is_op(n, "linear") || is_op(n, "matmul")) return lower_fc(p, ni, msg);
    if (is_op(n, "add") || is_op(n, "sub") || is_op(n, "mul") || is_op(n, "div")) return lower_binary(p, ni, msg);
    if (is_op(n, "prelu")) return lower_prelu(p, ni, msg);
    if (is_op(n, "max_pool2d") || is_op(n, "avg_pool2d")) {
        int64_t pad[4];
        for (int i = 0; i < 4; i++) pad[i] = par_attr_ints_at(n, "padding", i, 0);
        return par_xnn_lower_pool(p, ni, par_attr_ints_at(n, "kernel", 0, 1), par_attr_ints_at(n, "kernel", 1, 1),
                          par_attr_ints_at(n, "stride", 0, 1), par_attr_ints_at(n, "stride", 1, 1), pad, msg);
    }
    if (is_op(n, "adaptive_avg_pool2d")) return par_xnn_lower_adaptive(p, ni, msg);
    if (is_op(n, "global_avg_pool2d") || is_op(n, "mean")) return par_xnn_lower_global_avg(p, ni, msg);
    if (is_op(n, "softmax")) return par_xnn_lower_softmax(p, ni, msg);
    if (is_op(n, "upsample_bilinear2d")) return par_xnn_lower_resize(p, ni, msg);
    if (is_op(n, "concat")) return par_xnn_lower_concat(p, ni, msg);
    if (is_op(n, "reshape") || is_op(n, "flatten")) return par_xnn_lower_reshape(p, ni, msg);
    if (is_op(n, "slice")) return par_xnn_lower_slice(p, ni, msg);
    if (is_op(n, "pad")) return par_xnn_lower_pad(p, ni, msg);
    if (is_op(n, "batch_norm")) return par_xnn_lower_batch_norm(p, ni, msg);
    if (is_op(n, "hardsigmoid")) return par_xnn_lower_hardsigmoid(p, ni, msg);
    return lower_unary(p, ni, msg);
}
