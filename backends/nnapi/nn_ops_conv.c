/*
 * nn_ops_conv.c - the nnapi backend's lowering of the ops with weights or windows: conv2d (CONV_2D,
 * DEPTHWISE_CONV_2D, GROUPED_CONV_2D), linear and matmul by a constant (FULLY_CONNECTED), the pools (MAX_POOL_2D,
 * AVERAGE_POOL_2D, MEAN) and resampling (RESIZE_NEAREST_NEIGHBOR, RESIZE_BILINEAR). Each semantic gap between
 * PyTorch's op and NNAPI's operation is decided here, once, with the reason when it cannot be bridged exactly
 * (docs/backends/nnapi-converter.md lists them). It must not call the NNAPI library.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn_ops.h"

#define OOM(msg) par_msgf(msg, PAR_ERROR, "out of memory")

/* ---------------------------------------------------------------------------------------------------------------
 * Weights and bias
 * ------------------------------------------------------------------------------------------------------------- */
/* The filter operand's quantization: the activation's operand type decides the filter's (NNAPI: a per-tensor
 * filter has the input's type). qs8 weights beside a QUANT8_ASYMM input, and qu8 weights beside a signed one, are
 * shifted by 128 with their zero point (exact: the real values do not change). Per-channel qs8 weights are
 * TENSOR_QUANT8_SYMM_PER_CHANNEL (level 29) on channel axis ch_dim of the NNAPI filter. */
static int32_t weights(nn_model *m, const par_value *w, int32_t x_type, uint32_t rank, const uint32_t *dims,
                       const void *data, uint32_t ch_dim, par_status *st, par_msg *msg)
{
    size_t len = (size_t)w->numel * par_dtype_size(w->dtype);
    *st = PAR_OK;
    if (w->dtype == PAR_DTYPE_F32)
        return par_nn_const(m, ANEURALNETWORKS_TENSOR_FLOAT32, rank, dims, 0, 0, data, len);
    if (w->quant_axis >= 0) {
        if (m->set.level < 29) {
            *st = par_msgf(msg, PAR_UNSUPPORTED, "per-channel weights (TENSOR_QUANT8_SYMM_PER_CHANNEL) need level 29");
            return -1;
        }
        int32_t o = par_nn_const(m, ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL, rank, dims, 0, 0, data, len);
        float *cs = par_nn_alloc(m, (size_t)w->dims[0] * sizeof *cs);
        if (o < 0 || !cs) return -1;
        memcpy(cs, w->channel_scales, (size_t)w->dims[0] * sizeof *cs);
        m->opnd[o].ch_scales = cs;
        m->opnd[o].ch_dim = ch_dim;
        m->opnd[o].n_ch = (uint32_t)w->dims[0];
        return o;
    }
    int sgn = x_type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED;
    int flip = sgn ? w->dtype == PAR_DTYPE_QU8 : w->dtype == PAR_DTYPE_QS8;
    uint8_t *d = par_nn_alloc(m, len);
    if (!d) return -1;
    memcpy(d, data, len);
    if (flip)
        for (size_t i = 0; i < len; i++) d[i] ^= 0x80;
    int32_t zp = w->zero_point + (flip ? (sgn ? -128 : 128) : 0);
    return par_nn_const(m, x_type, rank, dims, w->scale, zp, d, len);
}

/* The bias: f32 as given or zeros; for quantized ops TENSOR_INT32 with zero point 0 and scale s_x * s_w (0 for
 * per-channel weights: NNAPI then takes s_x * s_w[c]). parity's i32 bias has that real value whatever scale it
 * declares (docs/quantization.md), so its integers go through unchanged. */
static int32_t bias(nn_model *m, const par_value *b, const par_value *x, const par_value *w, uint32_t n_out,
                    par_msg *msg)
{
    (void)msg;
    int q = nn_is_q(x->dtype);
    const void *data = b ? b->data : NULL;
    void *zeros = NULL;
    if (!data) {
        zeros = par_nn_alloc(m, (size_t)n_out * 4);
        if (!zeros) return -1;
        data = zeros;
    }
    if (!q) return par_nn_const(m, ANEURALNETWORKS_TENSOR_FLOAT32, 1, &n_out, 0, 0, data, (size_t)n_out * 4);
    float scale = w->quant_axis >= 0 ? 0.0f : x->scale * w->scale;
    return par_nn_const(m, ANEURALNETWORKS_TENSOR_INT32, 1, &n_out, scale, 0, data, (size_t)n_out * 4);
}

/* Common dtype checks of conv2d / linear / matmul. */
static par_status check_wdt(const nn_model *m, const par_node *n, const par_value *x, const par_value *w,
                            const par_value *b, const par_value *y, par_msg *msg)
{
    if (w->kind != PAR_VALUE_CONST)
        return par_msgf(msg, PAR_UNSUPPORTED, "%s with computed weights '%s'", n->op, w->name);
    if (b && b->kind != PAR_VALUE_CONST)
        return par_msgf(msg, PAR_UNSUPPORTED, "%s with a computed bias '%s'", n->op, b->name);
    if (x->dtype == PAR_DTYPE_F32) {
        if (w->dtype != PAR_DTYPE_F32 || (b && b->dtype != PAR_DTYPE_F32))
            return par_msgf(msg, PAR_UNSUPPORTED, "%s: f32 input with %s weights", n->op, par_dtype_name(w->dtype));
        return PAR_OK;
    }
    if (!nn_is_q(x->dtype) || !nn_is_q(w->dtype) || !nn_is_q(y->dtype) || (b && b->dtype != PAR_DTYPE_I32))
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: %s input, %s weights, %s output", n->op, par_dtype_name(x->dtype),
                        par_dtype_name(w->dtype), par_dtype_name(y->dtype));
    /* Before level 29 NNAPI requires output_scale > input_scale * filter_scale of quantized convolutions and fully
     * connected layers (the ratio of the requantization below 1). */
    if (w->quant_axis < 0 && m->set.level < 29 && !((double)y->scale > (double)x->scale * (double)w->scale))
        return par_msgf(msg, PAR_UNSUPPORTED,
                        "quantized %s before level 29 needs output scale > input scale * filter scale (%g <= %g * %g)",
                        n->op, (double)y->scale, (double)x->scale, (double)w->scale);
    return PAR_OK;
}

/* ---------------------------------------------------------------------------------------------------------------
 * conv2d
 * ------------------------------------------------------------------------------------------------------------- */
par_status par_nn_lower_conv2d(nn_model *m, int32_t node, int32_t code, par_msg *msg)
{
    const par_node *n = &m->g->nodes[node];
    const par_value *x = par_node_input(m->g, n, 0), *w = par_node_input(m->g, n, 1), *b = par_node_input(m->g, n, 2);
    const par_value *y = &m->g->values[n->outputs[0]];
    par_status st = check_wdt(m, n, x, w, b, y, msg);
    if (st != PAR_OK) return st;
    int64_t C = x->dims[1], O = w->dims[0], KH = w->dims[2], KW = w->dims[3];
    int64_t groups = par_attr_int(n, "groups", 1);
    int64_t sh = par_attr_ints_at(n, "stride", 0, 1), sw = par_attr_ints_at(n, "stride", 1, 1);
    int64_t dh = par_attr_ints_at(n, "dilation", 0, 1), dw = par_attr_ints_at(n, "dilation", 1, 1);
    const char *mode = par_attr_str(n, "pad_mode", "explicit");
    int32_t op;
    if (groups == 1) op = ANEURALNETWORKS_CONV_2D;
    else if (groups == C && O % C == 0) op = ANEURALNETWORKS_DEPTHWISE_CONV_2D;
    else op = ANEURALNETWORKS_GROUPED_CONV_2D;
    int dil = dh != 1 || dw != 1;
    if (dil && op == ANEURALNETWORKS_GROUPED_CONV_2D)
        return par_msgf(msg, PAR_UNSUPPORTED, "GROUPED_CONV_2D has no dilation");
    if (dil && m->set.level < 29)
        return par_msgf(msg, PAR_UNSUPPORTED, "%s with dilation needs level 29", par_nn_op_name(op));
    if (w->quant_axis >= 0 && w->quant_axis != 0)
        return par_msgf(msg, PAR_UNSUPPORTED, "per-channel weights on axis %d", w->quant_axis);

    int32_t xi = par_nn_value(m, n->inputs[0], NN_NHWC, node, &st, msg);
    if (xi < 0) return st;
    int32_t x_type = m->opnd[xi].type;
    /* The filter in NNAPI's order. */
    size_t es = par_dtype_size(w->dtype);
    void *f = par_nn_alloc(m, (size_t)w->numel * es);
    if (!f) return OOM(msg);
    uint32_t fd[4];
    uint32_t ch_dim = 0;
    if (op == ANEURALNETWORKS_DEPTHWISE_CONV_2D) {
        par_nn_filter_dw(w->data, f, O, KH, KW, es);
        fd[0] = 1, fd[1] = (uint32_t)KH, fd[2] = (uint32_t)KW, fd[3] = (uint32_t)O;
        ch_dim = 3;
    } else {
        int64_t cg = w->dims[1];
        par_nn_filter_ohwi(w->data, f, O, cg, KH, KW, es);
        fd[0] = (uint32_t)O, fd[1] = (uint32_t)KH, fd[2] = (uint32_t)KW, fd[3] = (uint32_t)cg;
    }
    int32_t wi = weights(m, w, x_type, 4, fd, f, ch_dim, &st, msg);
    if (wi < 0) return st != PAR_OK ? st : OOM(msg);
    int32_t bi = bias(m, b, x, w, (uint32_t)O, msg);
    int32_t in[16], k = 0;
    in[k++] = xi, in[k++] = wi, in[k++] = bi;
    if (strcmp(mode, "explicit") == 0) {
        /* parity's padding is [top, left, bottom, right]; NNAPI's explicit order is left, right, top, bottom. */
        in[k++] = par_nn_i32(m, (int32_t)par_attr_ints_at(n, "padding", 1, 0));
        in[k++] = par_nn_i32(m, (int32_t)par_attr_ints_at(n, "padding", 3, 0));
        in[k++] = par_nn_i32(m, (int32_t)par_attr_ints_at(n, "padding", 0, 0));
        in[k++] = par_nn_i32(m, (int32_t)par_attr_ints_at(n, "padding", 2, 0));
    } else {
        /* pad_mode same / valid are defined by NNAPI's own formula (docs/ops.md): the implicit codes. */
        in[k++] = par_nn_i32(m, strcmp(mode, "same") == 0 ? ANEURALNETWORKS_PADDING_SAME : ANEURALNETWORKS_PADDING_VALID);
    }
    in[k++] = par_nn_i32(m, (int32_t)sw);
    in[k++] = par_nn_i32(m, (int32_t)sh);
    if (op == ANEURALNETWORKS_DEPTHWISE_CONV_2D) in[k++] = par_nn_i32(m, (int32_t)(O / C));
    if (op == ANEURALNETWORKS_GROUPED_CONV_2D) in[k++] = par_nn_i32(m, (int32_t)groups);
    in[k++] = par_nn_i32(m, ANEURALNETWORKS_FUSED_NONE);
    if (op == ANEURALNETWORKS_GROUPED_CONV_2D || dil) in[k++] = par_nn_bool(m, 0); /* NHWC */
    if (dil) {
        in[k++] = par_nn_i32(m, (int32_t)dw);
        in[k++] = par_nn_i32(m, (int32_t)dh);
    }
    return par_nn_emit(m, node, op, (uint32_t)k, in, 1, msg);
}

/* conv_transpose2d: TRANSPOSE_CONV_2D (level 29), one group, no dilation. Weights [C, O, KH, KW] -> [O, KH, KW, C];
 * output_padding adds rows / columns at the end, which is the same as cropping less there: bottom and right
 * padding reduced by it (UNSUPPORTED where that padding is smaller than output_padding). */
par_status par_nn_lower_conv_transpose2d(nn_model *m, int32_t node, int32_t code, par_msg *msg)
{
    const par_node *n = &m->g->nodes[node];
    const par_value *x = par_node_input(m->g, n, 0), *w = par_node_input(m->g, n, 1), *b = par_node_input(m->g, n, 2);
    const par_value *y = &m->g->values[n->outputs[0]];
    par_status st = check_wdt(m, n, x, w, b, y, msg);
    if (st != PAR_OK) return st;
    if (par_attr_int(n, "groups", 1) != 1) return par_msgf(msg, PAR_UNSUPPORTED, "TRANSPOSE_CONV_2D has no groups");
    if (par_attr_ints_at(n, "dilation", 0, 1) != 1 || par_attr_ints_at(n, "dilation", 1, 1) != 1)
        return par_msgf(msg, PAR_UNSUPPORTED, "TRANSPOSE_CONV_2D has no dilation");
    if (w->quant_axis >= 0 && w->quant_axis != 1)
        return par_msgf(msg, PAR_UNSUPPORTED, "per-channel weights on axis %d", w->quant_axis);
    int64_t pt = par_attr_ints_at(n, "padding", 0, 0), pl = par_attr_ints_at(n, "padding", 1, 0);
    int64_t pb = par_attr_ints_at(n, "padding", 2, 0) - par_attr_ints_at(n, "output_padding", 0, 0);
    int64_t pr = par_attr_ints_at(n, "padding", 3, 0) - par_attr_ints_at(n, "output_padding", 1, 0);
    if (pb < 0 || pr < 0)
        return par_msgf(msg, PAR_UNSUPPORTED, "output_padding larger than the bottom / right padding needs negative "
                        "padding in TRANSPOSE_CONV_2D");
    if (m->set.level < 29) return par_msgf(msg, PAR_UNSUPPORTED, "TRANSPOSE_CONV_2D needs level 29");
    int64_t C = w->dims[0], O = w->dims[1], KH = w->dims[2], KW = w->dims[3];
    int32_t xi = par_nn_value(m, n->inputs[0], NN_NHWC, node, &st, msg);
    if (xi < 0) return st;
    size_t es = par_dtype_size(w->dtype);
    char *f = par_nn_alloc(m, (size_t)w->numel * es);
    if (!f) return OOM(msg);
    const char *s = w->data;
    for (int64_t c = 0; c < C; c++)
        for (int64_t o = 0; o < O; o++)
            for (int64_t k = 0; k < KH * KW; k++)
                memcpy(f + (size_t)((o * KH * KW + k) * C + c) * es, s + (size_t)((c * O + o) * KH * KW + k) * es, es);
    uint32_t fd[4] = {(uint32_t)O, (uint32_t)KH, (uint32_t)KW, (uint32_t)C};
    /* per-channel scales are indexed by the output channel, axis 1 of parity's weights, axis 0 of NNAPI's */
    par_value wv = *w;
    wv.dims[0] = O;
    int32_t wi = weights(m, &wv, m->opnd[xi].type, 4, fd, f, 0, &st, msg);
    if (wi < 0) return st != PAR_OK ? st : OOM(msg);
    int32_t in[11] = {xi, wi, bias(m, b, x, w, (uint32_t)O, msg),
                      par_nn_i32(m, (int32_t)pl), par_nn_i32(m, (int32_t)pr),
                      par_nn_i32(m, (int32_t)pt), par_nn_i32(m, (int32_t)pb),
                      par_nn_i32(m, (int32_t)par_attr_ints_at(n, "stride", 1, 1)),
                      par_nn_i32(m, (int32_t)par_attr_ints_at(n, "stride", 0, 1)),
                      par_nn_i32(m, ANEURALNETWORKS_FUSED_NONE), par_nn_bool(m, 0)};
    return par_nn_emit(m, node, ANEURALNETWORKS_TRANSPOSE_CONV_2D, 11, in, 1, msg);
}

/* ---------------------------------------------------------------------------------------------------------------
 * linear, matmul by a constant: FULLY_CONNECTED
 * ------------------------------------------------------------------------------------------------------------- */
/* RESHAPE of operand `src` to dims (the new operand keeps src's type and quantization); -1 when out of memory. */
static int32_t reshape_to(nn_model *m, int32_t node, int32_t src, uint32_t rank, const uint32_t *dims,
                          par_status *st, par_msg *msg)
{
    int32_t shape[PAR_MAX_RANK];
    for (uint32_t i = 0; i < rank; i++) shape[i] = (int32_t)dims[i];
    int32_t r = par_nn_operand(m, m->opnd[src].type, rank, dims, m->opnd[src].scale, m->opnd[src].zp);
    int32_t sh = par_nn_i32_vec(m, rank, shape);
    if (r < 0 || sh < 0) {
        *st = OOM(msg);
        return -1;
    }
    uint32_t in[2] = {(uint32_t)src, (uint32_t)sh}, out[1] = {(uint32_t)r};
    *st = par_nn_op(m, ANEURALNETWORKS_RESHAPE, node, 2, in, 1, out, msg);
    return *st == PAR_OK ? r : -1;
}

/* FULLY_CONNECTED has no per-channel weights at levels 27-30; a 1x1 CONV_2D over [batch, 1, 1, K] computes the same
 * accumulator with per-channel filter scales (level 29): RESHAPE, CONV_2D, RESHAPE to y. */
static par_status fc_per_channel(nn_model *m, int32_t node, int32_t xi, const par_value *x, const par_value *w,
                                 const void *f, const par_value *b, const par_value *y, int64_t batch, int64_t O,
                                 int64_t K, par_msg *msg)
{
    par_status st;
    uint32_t xd[4] = {(uint32_t)batch, 1, 1, (uint32_t)K};
    int32_t x4 = reshape_to(m, node, xi, 4, xd, &st, msg);
    if (x4 < 0) return st;
    uint32_t fd[4] = {(uint32_t)O, 1, 1, (uint32_t)K};
    int32_t wi = weights(m, w, m->opnd[x4].type, 4, fd, f, 0, &st, msg);
    if (wi < 0) return st != PAR_OK ? st : OOM(msg);
    int32_t type, shift;
    st = par_nn_tensor_type(m, y->dtype, &type, &shift, msg);
    if (st != PAR_OK) return st;
    uint32_t od[4] = {(uint32_t)batch, 1, 1, (uint32_t)O};
    int32_t y4 = par_nn_operand(m, type, 4, od, y->scale, y->zero_point + shift);
    int32_t in[10] = {x4, wi, bias(m, b, x, w, (uint32_t)O, msg), par_nn_i32(m, 0), par_nn_i32(m, 0),
                      par_nn_i32(m, 0), par_nn_i32(m, 0), par_nn_i32(m, 1), par_nn_i32(m, 1),
                      par_nn_i32(m, ANEURALNETWORKS_FUSED_NONE)};
    uint32_t ii[10], oo[1] = {(uint32_t)y4};
    for (int i = 0; i < 10; i++) {
        if (in[i] < 0 || y4 < 0) return OOM(msg);
        ii[i] = (uint32_t)in[i];
    }
    st = par_nn_op(m, ANEURALNETWORKS_CONV_2D, node, 10, ii, 1, oo, msg);
    if (st != PAR_OK) return st;
    int32_t shape[PAR_MAX_RANK];
    int32_t r = y->rank ? y->rank : 1;
    for (int32_t i = 0; i < r; i++) shape[i] = y->rank ? (int32_t)y->dims[i] : 1;
    int32_t in2[2] = {y4, par_nn_i32_vec(m, (uint32_t)r, shape)};
    return par_nn_emit(m, node, ANEURALNETWORKS_RESHAPE, 2, in2, 0, msg);
}

/* FULLY_CONNECTED of x (any rank >= 1, its last axis K) by weights [O, K] held in f (already in NNAPI's order);
 * NNAPI's output is [numel / K, O], reshaped to y's shape when that has another rank. */
static par_status fully_connected(nn_model *m, int32_t node, const par_value *x, const par_value *w, const void *f,
                                  const par_value *b, const par_value *y, int64_t O, int64_t K, par_msg *msg)
{
    const par_node *n = &m->g->nodes[node];
    par_status st;
    if (x->rank > 4 || y->rank > 4) return par_msgf(msg, PAR_UNSUPPORTED, "rank > 4");
    int32_t xi = par_nn_value(m, n->inputs[0], NN_LOGICAL, node, &st, msg);
    if (xi < 0) return st;
    int64_t batch = x->numel / K;
    if (w->quant_axis >= 0) return fc_per_channel(m, node, xi, x, w, f, b, y, batch, O, K, msg);
    if (x->rank < 2) {
        /* NNAPI's input has rank >= 2. */
        int32_t shape[2] = {1, (int32_t)K};
        uint32_t d2[2] = {1, (uint32_t)K};
        int32_t r = par_nn_operand(m, m->opnd[xi].type, 2, d2, m->opnd[xi].scale, m->opnd[xi].zp);
        int32_t sh = par_nn_i32_vec(m, 2, shape);
        if (r < 0 || sh < 0) return OOM(msg);
        uint32_t i2[2] = {(uint32_t)xi, (uint32_t)sh}, o2[1] = {(uint32_t)r};
        st = par_nn_op(m, ANEURALNETWORKS_RESHAPE, node, 2, i2, 1, o2, msg);
        if (st != PAR_OK) return st;
        xi = r;
    }
    uint32_t wd[2] = {(uint32_t)O, (uint32_t)K};
    int32_t wi = weights(m, w, m->opnd[xi].type, 2, wd, f, 0, &st, msg);
    if (wi < 0) return st != PAR_OK ? st : OOM(msg);
    int32_t bi = bias(m, b, x, w, (uint32_t)O, msg);
    int32_t in[4] = {xi, wi, bi, par_nn_i32(m, ANEURALNETWORKS_FUSED_NONE)};
    if (y->rank == 2) return par_nn_emit(m, node, ANEURALNETWORKS_FULLY_CONNECTED, 4, in, 0, msg);
    /* [batch, O], then RESHAPE to y. */
    int32_t type, shift;
    st = par_nn_tensor_type(m, y->dtype, &type, &shift, msg);
    if (st != PAR_OK) return st;
    uint32_t fd[2] = {(uint32_t)batch, (uint32_t)O};
    int q = nn_is_q(y->dtype);
    int32_t mid = par_nn_operand(m, type, 2, fd, q ? y->scale : 0, q ? y->zero_point + shift : 0);
    if (mid < 0) return OOM(msg);
    uint32_t ii[4], o1[1] = {(uint32_t)mid};
    for (int i = 0; i < 4; i++) {
        if (in[i] < 0) return OOM(msg);
        ii[i] = (uint32_t)in[i];
    }
    st = par_nn_op(m, ANEURALNETWORKS_FULLY_CONNECTED, node, 4, ii, 1, o1, msg);
    if (st != PAR_OK) return st;
    int32_t shape[PAR_MAX_RANK];
    int32_t r = y->rank ? y->rank : 1;
    for (int32_t i = 0; i < r; i++) shape[i] = y->rank ? (int32_t)y->dims[i] : 1;
    int32_t in2[2] = {mid, par_nn_i32_vec(m, (uint32_t)r, shape)};
    return par_nn_emit(m, node, ANEURALNETWORKS_RESHAPE, 2, in2, 0, msg);
}

par_status par_nn_lower_linear(nn_model *m, int32_t node, int32_t code, par_msg *msg)
{
    const par_node *n = &m->g->nodes[node];
    const par_value *x = par_node_input(m->g, n, 0), *w = par_node_input(m->g, n, 1), *b = par_node_input(m->g, n, 2);
    const par_value *y = &m->g->values[n->outputs[0]];
    par_status st = check_wdt(m, n, x, w, b, y, msg);
    if (st != PAR_OK) return st;
    return fully_connected(m, node, x, w, w->data, b, y, w->dims[0], w->dims[1], msg);
}

par_status par_nn_lower_matmul(nn_model *m, int32_t node, int32_t code, par_msg *msg)
{
    const par_node *n = &m->g->nodes[node];
    const par_value *a = par_node_input(m->g, n, 0), *bm = par_node_input(m->g, n, 1);
    const par_value *y = &m->g->values[n->outputs[0]];
    if (bm->kind != PAR_VALUE_CONST || bm->rank != 2) /* one FULLY_CONNECTED per batch item (nn_ops_seq.c) */
        return par_nn_lower_matmul_computed(m, node, code, msg);
    if (bm->quant_axis >= 0) return par_msgf(msg, PAR_UNSUPPORTED, "matmul by per-channel weights");
    par_status st = check_wdt(m, n, a, bm, NULL, y, msg);
    if (st != PAR_OK) return st;
    int64_t K = bm->dims[0], N = bm->dims[1];
    size_t es = par_dtype_size(bm->dtype);
    /* FULLY_CONNECTED's weights are [N, K]: b transposed. */
    char *f = par_nn_alloc(m, (size_t)(K * N) * es);
    if (!f) return OOM(msg);
    const char *s = bm->data;
    for (int64_t k = 0; k < K; k++)
        for (int64_t j = 0; j < N; j++) memcpy(f + (size_t)(j * K + k) * es, s + (size_t)(k * N + j) * es, es);
    return fully_connected(m, node, a, bm, f, NULL, y, N, K, msg);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Pools
 * ------------------------------------------------------------------------------------------------------------- */
par_status par_nn_lower_pool(nn_model *m, int32_t node, int32_t code, par_msg *msg)
{
    const par_node *n = &m->g->nodes[node];
    const par_value *x = par_node_input(m->g, n, 0), *y = &m->g->values[n->outputs[0]];
    par_status st;
    if (x->dtype != PAR_DTYPE_F32 && !nn_is_q(x->dtype))
        return par_msgf(msg, PAR_UNSUPPORTED, "%s of %s", n->op, par_dtype_name(x->dtype));
    int64_t H = x->dims[2], W = x->dims[3], OH = y->dims[2], OW = y->dims[3];
    int64_t kh, kw, sh, sw, pt = 0, pl = 0, pb = 0, pr = 0;
    const int maxp = code == NN_POOL_MAX;
    if (code == NN_POOL_GLOBAL) {
        kh = H, kw = W, sh = sw = 1;
    } else if (code == NN_POOL_ADAPTIVE) {
        if (H % OH || W % OW)
            return par_msgf(msg, PAR_UNSUPPORTED,
                            "adaptive_avg_pool2d %lldx%lld -> %lldx%lld has windows of varying size (no NNAPI pool)",
                            (long long)H, (long long)W, (long long)OH, (long long)OW);
        kh = sh = H / OH, kw = sw = W / OW;
    } else {
        kh = par_attr_ints_at(n, "kernel", 0, 1), kw = par_attr_ints_at(n, "kernel", 1, 1);
        sh = par_attr_ints_at(n, "stride", 0, 1), sw = par_attr_ints_at(n, "stride", 1, 1);
        pt = par_attr_ints_at(n, "padding", 0, 0), pl = par_attr_ints_at(n, "padding", 1, 0);
        pb = par_attr_ints_at(n, "padding", 2, 0), pr = par_attr_ints_at(n, "padding", 3, 0);
        if (maxp && (par_attr_ints_at(n, "dilation", 0, 1) != 1 || par_attr_ints_at(n, "dilation", 1, 1) != 1))
            return par_msgf(msg, PAR_UNSUPPORTED, "MAX_POOL_2D has no dilation");
    }
    int32_t xi = par_nn_value(m, n->inputs[0], NN_NHWC, node, &st, msg);
    if (xi < 0) return st;
    /* NNAPI's AVERAGE_POOL_2D divides by the window's elements inside its input, never counting padding. PyTorch's
     * count_include_pad = 1 counts the padding (but not what ceil_mode adds past it): the padding becomes real
     * zeros first (PAD, level 28; quantized PAD pads with the zero point, the real 0), and only ceil_mode's
     * extension stays NNAPI padding, uncounted, which is PyTorch's divisor exactly. */
    if (!maxp && par_attr_int(n, "count_include_pad", 1) && (pt || pl || pb || pr)) {
        if (m->set.level < (nn_is_q(x->dtype) ? 29 : 28))
            return par_msgf(msg, PAR_UNSUPPORTED, "avg_pool2d with count_include_pad=1 and padding needs PAD (level "
                            "%d): AVERAGE_POOL_2D never counts padding", nn_is_q(x->dtype) ? 29 : 28);
        int32_t pads[8] = {0, 0, (int32_t)pt, (int32_t)pb, (int32_t)pl, (int32_t)pr, 0, 0};
        uint32_t pd[2] = {4, 2}, dims[4];
        memcpy(dims, m->opnd[xi].dims, sizeof dims);
        dims[1] += (uint32_t)(pt + pb), dims[2] += (uint32_t)(pl + pr);
        int32_t pt_op = par_nn_const(m, ANEURALNETWORKS_TENSOR_INT32, 2, pd, 0, 0, pads, sizeof pads);
        int32_t xp = par_nn_operand(m, m->opnd[xi].type, 4, dims, m->opnd[xi].scale, m->opnd[xi].zp);
        if (pt_op < 0 || xp < 0) return OOM(msg);
        m->opnd[xp].nhwc = 1;
        uint32_t i2[2] = {(uint32_t)xi, (uint32_t)pt_op}, o2[1] = {(uint32_t)xp};
        st = par_nn_op(m, ANEURALNETWORKS_PAD, node, 2, i2, 1, o2, msg);
        if (st != PAR_OK) return st;
        xi = xp;
        H += pt + pb, W += pl + pr;
        pt = pl = pb = pr = 0;
    }
    /* ceil_mode: the windows PyTorch adds at the bottom / right start inside the image (or its padding), and
     * padding never counts in NNAPI's pools; extra end padding gives exactly those windows. */
    int64_t eb = (OH - 1) * sh + kh - (H + pt + pb), er = (OW - 1) * sw + kw - (W + pl + pr);
    if (eb > 0) pb += eb;
    if (er > 0) pr += er;
    /* (a window past the image, from ceil_mode, shows as padding from here on) */
    if ((H + pt + pb - kh) / sh + 1 != OH || (W + pl + pr - kw) / sw + 1 != OW)
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: NNAPI's output size differs from %lldx%lld", n->op,
                        (long long)OH, (long long)OW);
    if (nn_is_q(x->dtype) && !nn_same_q(x, y)) {
        /* Pools keep their input's parameters and MEAN truncates; a window average with its own output
         * parameters is a DEPTHWISE_CONV_2D whose filter is all ones with scale 1 / (kh kw): acc = sum (q - z) over
         * the window, requantized once with ratio s_in / (s_out kh kw), parity's AVG family under gemmlowp. Every
         * window must be whole (no padding, no ceil_mode window): the divisor is then kh kw everywhere. */
        if (maxp || pt || pl || pb || pr)
            return par_msgf(msg, PAR_UNSUPPORTED, "quantized %s with padding keeps its input's scale and zero point; "
                            "the output's differ", maxp ? "MAX_POOL_2D" : "AVERAGE_POOL_2D");
        int64_t C = x->dims[1];
        uint8_t *ones = par_nn_alloc(m, (size_t)(kh * kw * C));
        int32_t *zb = par_nn_alloc(m, (size_t)C * 4);
        if (!ones || !zb) return OOM(msg);
        memset(ones, 1, (size_t)(kh * kw * C));
        int32_t ft = m->opnd[xi].type;
        float fs = (float)(1.0 / (double)(kh * kw));
        if (m->set.level < 29 && !((double)y->scale > (double)x->scale * (double)fs))
            return par_msgf(msg, PAR_UNSUPPORTED, "a quantized average as DEPTHWISE_CONV_2D before level 29 needs "
                            "output scale > input scale / window (%g <= %g * %g)", (double)y->scale,
                            (double)x->scale, (double)fs);
        uint32_t fd[4] = {1, (uint32_t)kh, (uint32_t)kw, (uint32_t)C}, bd = (uint32_t)C;
        int32_t in[11] = {xi, par_nn_const(m, ft, 4, fd, fs, 0, ones, (size_t)(kh * kw * C)),
                          par_nn_const(m, ANEURALNETWORKS_TENSOR_INT32, 1, &bd, m->opnd[xi].scale * fs, 0, zb,
                                       (size_t)C * 4),
                          par_nn_i32(m, 0), par_nn_i32(m, 0), par_nn_i32(m, 0), par_nn_i32(m, 0),
                          par_nn_i32(m, (int32_t)sw), par_nn_i32(m, (int32_t)sh), par_nn_i32(m, 1),
                          par_nn_i32(m, ANEURALNETWORKS_FUSED_NONE)};
        return par_nn_emit(m, node, ANEURALNETWORKS_DEPTHWISE_CONV_2D, 11, in, 1, msg);
    }
    int32_t in[10] = {xi,
                      par_nn_i32(m, (int32_t)pl), par_nn_i32(m, (int32_t)pr),
                      par_nn_i32(m, (int32_t)pt), par_nn_i32(m, (int32_t)pb),
                      par_nn_i32(m, (int32_t)sw), par_nn_i32(m, (int32_t)sh),
                      par_nn_i32(m, (int32_t)kw), par_nn_i32(m, (int32_t)kh),
                      par_nn_i32(m, ANEURALNETWORKS_FUSED_NONE)};
    return par_nn_emit(m, node, maxp ? ANEURALNETWORKS_MAX_POOL_2D : ANEURALNETWORKS_AVERAGE_POOL_2D, 10, in, 1, msg);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Resampling
 * ------------------------------------------------------------------------------------------------------------- */
/* Does PyTorch's coordinate ratio of one axis equal NNAPI's in / out? With `size` it is in / out; with `scale` it
 * is 1 / scale, the same exactly when in * scale == out; an axis whose size does not change is copied by both
 * (PyTorch's same-size rule; NNAPI's ratio is then 1), and nearest maps dst to dst / 2 when out = 2 in, which
 * floor(dst * in / out) also gives. */
static int ratio_agrees(const par_node *n, int32_t axis, int64_t in, int64_t out, int nearest)
{
    if (par_attr_count(n, "size") > 0 || in == out || (nearest && out == 2 * in)) return 1;
    double s = par_attr_floats_at(n, "scale", axis, 0);
    return (double)in * s == (double)out;
}

par_status par_nn_lower_resize(nn_model *m, int32_t node, int32_t code, par_msg *msg)
{
    const par_node *n = &m->g->nodes[node];
    const par_value *x = par_node_input(m->g, n, 0), *y = &m->g->values[n->outputs[0]];
    const int nearest = code == ANEURALNETWORKS_RESIZE_NEAREST_NEIGHBOR;
    const int32_t op = code;
    par_status st;
    if (x->dtype != PAR_DTYPE_F32 && !nn_is_q(x->dtype))
        return par_msgf(msg, PAR_UNSUPPORTED, "%s of %s", n->op, par_dtype_name(x->dtype));
    if (nn_is_q(x->dtype) && !nearest)
        return par_msgf(msg, PAR_UNSUPPORTED, "quantized RESIZE_BILINEAR truncates its float interpolation (Android "
                        "11's TFLite reference); parity's bilinear rounds to nearest");
    if (nn_is_q(x->dtype) && m->set.level < 29)
        return par_msgf(msg, PAR_UNSUPPORTED, "quantized %s needs level 29", par_nn_op_name(op));
    if (nn_is_q(x->dtype) && !nn_same_q(x, y))
        return par_msgf(msg, PAR_UNSUPPORTED, "quantized %s keeps its input's scale and zero point; the output's differ",
                        par_nn_op_name(op));
    int64_t H = x->dims[2], W = x->dims[3], OH = y->dims[2], OW = y->dims[3];
    int align = !nearest && par_attr_int(n, "align_corners", 0);
    /* align_corners = 1 takes its ratio (in - 1) / (out - 1) from the sizes in both conventions. */
    if (!align && (!ratio_agrees(n, 0, H, OH, nearest) || !ratio_agrees(n, 1, W, OW, nearest)))
        return par_msgf(msg, PAR_UNSUPPORTED,
                        "%s by scale: PyTorch's ratio 1/scale differs from NNAPI's in/out (%lldx%lld -> %lldx%lld)",
                        n->op, (long long)H, (long long)W, (long long)OH, (long long)OW);
    int half_pixel = !nearest && !align && !(H == OH && W == OW);
    if ((align || half_pixel) && m->set.level < 30)
        return par_msgf(msg, PAR_UNSUPPORTED, "RESIZE_BILINEAR %s needs level 30",
                        align ? "align_corners" : "half_pixel_centers (PyTorch's align_corners=0)");
    int32_t xi = par_nn_value(m, n->inputs[0], NN_NHWC, node, &st, msg);
    if (xi < 0) return st;
    int32_t in[6], k = 0;
    in[k++] = xi, in[k++] = par_nn_i32(m, (int32_t)OW), in[k++] = par_nn_i32(m, (int32_t)OH);
    if (nearest || align || half_pixel) in[k++] = par_nn_bool(m, 0); /* NHWC */
    if (align || half_pixel) {
        in[k++] = par_nn_bool(m, align);
        in[k++] = par_nn_bool(m, half_pixel);
    }
    return par_nn_emit(m, node, op, (uint32_t)k, in, 1, msg);
}
