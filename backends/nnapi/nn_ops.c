/*
 * nn_ops.c - the nnapi converter's lowering of the ops that need no weights: elementwise
 * arithmetic with broadcasting, activations, softmax, mean, data movement, quantize / dequantize and batch_norm
 * (folded into a MUL and an ADD). Each function appends NNAPI operations to the model description or returns
 * PAR_UNSUPPORTED with the reason; convolution, fully connected, pooling and resampling are in nn_ops_conv.c.
 *
 * Layout rule (docs/backends/nnapi-converter.md): a 4-D value is held NHWC where its producer can make it so; an op
 * whose axes matter maps them through par_nn_axis, and one that needs the logical order (reshape, flatten)
 * asks for it (a TRANSPOSE, level 28, unless H = W = 1 or C = 1). It must not call the NNAPI library.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn_ops.h"

#define OOM(msg) par_msgf(msg, PAR_ERROR, "out of memory")

static const par_value *in_val(const nn_model *m, const par_node *n, int32_t k)
{
    return par_node_input(m->g, n, k);
}

static const par_value *out_val(const nn_model *m, const par_node *n)
{
    return &m->g->values[n->outputs[0]];
}

static par_status check_rank(const par_value *v, par_msg *msg)
{
    if (v->rank > 4) return par_msgf(msg, PAR_UNSUPPORTED, "'%s' has rank %d; NNAPI operations take rank <= 4",
                                     v->name, v->rank);
    return PAR_OK;
}

/* One operation of in[] -> the node's output in the given layout (nn_ops.h). */
par_status par_nn_emit(nn_model *m, int32_t node, int32_t type, uint32_t n_in, const int32_t *in, int nhwc,
                       par_msg *msg)
{
    const par_node *n = &m->g->nodes[node];
    par_status st;
    int32_t o = par_nn_out(m, n->outputs[0], nhwc, &st, msg);
    if (o < 0) return st;
    uint32_t ii[70], out[1] = {(uint32_t)o};
    if (n_in > 70) return par_msgf(msg, PAR_ERROR, "node '%s': %u operands, at most 70", n->name, n_in);
    for (uint32_t i = 0; i < n_in; i++) {
        if (in[i] < 0) return OOM(msg);
        ii[i] = (uint32_t)in[i];
    }
    return par_nn_op(m, type, node, n_in, ii, 1, out, msg);
}

/* A constant value as an operand of rank `rank` (leading 1s added, numpy style), permuted to NHWC when nhwc. */
static int32_t const_bcast(nn_model *m, const par_value *v, int32_t rank, int nhwc, par_status *st, par_msg *msg)
{
    int32_t type, shift;
    *st = par_nn_tensor_type(m, v->dtype, &type, &shift, msg);
    if (*st != PAR_OK) return -1;
    if (v->quant_axis >= 0) {
        *st = par_msgf(msg, PAR_UNSUPPORTED, "constant '%s' with per-channel scales used as an activation", v->name);
        return -1;
    }
    int64_t ld[4] = {1, 1, 1, 1};
    int32_t r = rank < 1 ? 1 : rank;
    for (int32_t i = 0; i < v->rank; i++) ld[r - v->rank + i] = v->dims[i];
    size_t es = par_dtype_size(v->dtype), len = (size_t)v->numel * es;
    uint8_t *d = par_nn_alloc(m, len);
    if (!d) {
        *st = OOM(msg);
        return -1;
    }
    uint32_t dims[4];
    if (nhwc && r == 4) {
        par_nn_nchw_to_nhwc(v->data, d, ld, es);
        dims[0] = (uint32_t)ld[0], dims[1] = (uint32_t)ld[2], dims[2] = (uint32_t)ld[3], dims[3] = (uint32_t)ld[1];
    } else {
        memcpy(d, v->data, len);
        for (int32_t i = 0; i < r; i++) dims[i] = (uint32_t)ld[i];
    }
    if (shift)
        for (size_t i = 0; i < len; i++) d[i] ^= 0x80;
    int q = nn_is_q(v->dtype);
    int32_t o = par_nn_const(m, type, (uint32_t)r, dims, q ? v->scale : 0.0f, q ? v->zero_point + shift : 0, d, len);
    if (o < 0) *st = OOM(msg);
    else m->opnd[o].nhwc = nhwc && r == 4;
    return o;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Elementwise binary: ADD, SUB, MUL, DIV with NNAPI's (numpy's) broadcasting on the operands as held
 * ------------------------------------------------------------------------------------------------------------- */
par_status par_nn_lower_binary(nn_model *m, int32_t node, int32_t code, par_msg *msg)
{
    const par_node *n = &m->g->nodes[node];
    const par_value *a = in_val(m, n, 0), *b = in_val(m, n, 1), *y = out_val(m, n);
    const int32_t type = code;
    par_status st = check_rank(y, msg);
    if (st != PAR_OK) return st;
    if (y->dtype != PAR_DTYPE_F32 && !nn_is_q(y->dtype))
        return par_msgf(msg, PAR_UNSUPPORTED, "%s of %s", n->op, par_dtype_name(y->dtype));
    if (nn_is_q(y->dtype) && type == ANEURALNETWORKS_SUB && m->set.level < 29)
        return par_msgf(msg, PAR_UNSUPPORTED, "quantized SUB needs level 29");
    if (nn_is_q(y->dtype) && type == ANEURALNETWORKS_DIV)
        return par_msgf(msg, PAR_UNSUPPORTED, "NNAPI's DIV has no quantized form");
    if (nn_is_q(y->dtype) && type == ANEURALNETWORKS_MUL && m->set.level < 29 &&
        !((double)y->scale > (double)a->scale * (double)b->scale))
        return par_msgf(msg, PAR_UNSUPPORTED,
                        "quantized MUL before level 29 needs output scale > product of input scales (%g <= %g * %g)",
                        (double)y->scale, (double)a->scale, (double)b->scale);
    int a_c = a->kind == PAR_VALUE_CONST, b_c = b->kind == PAR_VALUE_CONST;
    int32_t R = y->rank;
    int nhwc = 0;
    int32_t oa, ob;
    if (R == 4 && !a_c && !b_c && a->rank == 4 && b->rank == 4) {
        /* Both 4-D activations: the layout of the first, the second brought to it. */
        oa = nn_in(m, node, 0, NN_ANY, &st, msg);
        if (oa < 0) return st;
        nhwc = m->opnd[oa].nhwc;
        ob = nn_in(m, node, 1, nhwc ? NN_NHWC : NN_LOGICAL, &st, msg);
        if (ob < 0) return st;
    } else if (R == 4 && (a_c || b_c) && !(a_c && b_c) && (a_c ? b : a)->rank == 4) {
        /* One 4-D activation and a constant: the constant re-laid out to the activation's order. */
        int32_t act = nn_in(m, node, a_c ? 1 : 0, NN_ANY, &st, msg);
        if (act < 0) return st;
        nhwc = m->opnd[act].nhwc;
        int32_t cst = const_bcast(m, a_c ? a : b, 4, nhwc, &st, msg);
        if (cst < 0) return st;
        oa = a_c ? cst : act;
        ob = a_c ? act : cst;
    } else {
        /* Anything else in the logical order (lower ranks broadcast against trailing logical dims). */
        oa = a_c ? const_bcast(m, a, a->rank, 0, &st, msg) : nn_in(m, node, 0, NN_LOGICAL, &st, msg);
        if (oa < 0) return st;
        ob = b_c ? const_bcast(m, b, b->rank, 0, &st, msg) : nn_in(m, node, 1, NN_LOGICAL, &st, msg);
        if (ob < 0) return st;
    }
    int32_t in[3] = {oa, ob, par_nn_i32(m, ANEURALNETWORKS_FUSED_NONE)};
    return par_nn_emit(m, node, type, 3, in, nhwc, msg);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Activations
 * ------------------------------------------------------------------------------------------------------------- */
/* relu, relu6, hardtanh and clamp whose bounds are one of NNAPI's: RELU [0, inf), RELU1 [-1, 1], RELU6 [0, 6]. */
static int32_t clamp_code(double lo, double hi)
{
    if (lo == 0 && isinf(hi) && hi > 0) return ANEURALNETWORKS_RELU;
    if (lo == -1 && hi == 1) return ANEURALNETWORKS_RELU1;
    if (lo == 0 && hi == 6) return ANEURALNETWORKS_RELU6;
    return -1;
}

/* A quantized relu / relu6 / hardtanh(-1, 1) whose output has other parameters than its input: NNAPI's RELU family
 * keeps the input's, so the node becomes ADD(x, 0) with the output's parameters and the clamp as the ADD's fused
 * activation: one requantization to the output's parameters, then the clamp in the output's integers, which is
 * parity's CLAMP family (docs/quantization.md). The activation is not fused into x's producer: that would replace
 * two requantizations by one and change the integers. */
static par_status requant_clamp(nn_model *m, int32_t node, int32_t type, par_msg *msg)
{
    const par_node *n = &m->g->nodes[node];
    const par_value *x = in_val(m, n, 0);
    par_status st;
    int32_t a = nn_in(m, node, 0, NN_ANY, &st, msg);
    if (a < 0) return st;
    const nn_operand *xa = &m->opnd[a];
    uint32_t one = 1;
    uint8_t zero = (uint8_t)nn_zp(m, x); /* the stored integer of real 0 (an int8 zero point stored as its byte) */
    int32_t z = par_nn_const(m, xa->type, 1, &one, xa->scale, xa->zp, &zero, 1);
    int32_t fuse = type == ANEURALNETWORKS_RELU ? ANEURALNETWORKS_FUSED_RELU
                 : type == ANEURALNETWORKS_RELU1 ? ANEURALNETWORKS_FUSED_RELU1
                                                 : ANEURALNETWORKS_FUSED_RELU6;
    int32_t in[3] = {a, z, par_nn_i32(m, fuse)};
    return par_nn_emit(m, node, ANEURALNETWORKS_ADD, 3, in, xa->nhwc, msg);
}

par_status par_nn_lower_unary(nn_model *m, int32_t node, int32_t code, par_msg *msg)
{
    const par_node *n = &m->g->nodes[node];
    const par_value *x = in_val(m, n, 0), *y = out_val(m, n);
    int32_t type = code;
    par_status st = check_rank(y, msg);
    if (st != PAR_OK) return st;
    if (code == NN_CLAMP_BY_BOUNDS) {
        double lo, hi;
        par_clamp_bounds(n, &lo, &hi);
        type = clamp_code(lo, hi);
        if (type < 0)
            return par_msgf(msg, PAR_UNSUPPORTED, "%s(%g, %g): NNAPI clamps only to [0, inf), [-1, 1] and [0, 6]",
                            n->op, lo, hi);
    }
    if (y->dtype != PAR_DTYPE_F32 && !nn_is_q(y->dtype))
        return par_msgf(msg, PAR_UNSUPPORTED, "%s of %s", n->op, par_dtype_name(y->dtype));
    if (nn_is_q(y->dtype) && type == ANEURALNETWORKS_HARD_SWISH)
        return par_msgf(msg, PAR_UNSUPPORTED, "quantized HARD_SWISH is TFLite's int16 fixed-point approximation "
                        "(Android 11), up to 2 steps from parity's table of the exact function");
    if (nn_is_q(y->dtype)) {
        int32_t zp = nn_zp(m, y);
        int sgn = y->dtype == PAR_DTYPE_QS8 && m->set.level >= 30;
        if (type == ANEURALNETWORKS_LOGISTIC && !(y->scale == 1.0f / 256 && zp == (sgn ? -128 : 0)))
            return par_msgf(msg, PAR_UNSUPPORTED, "quantized LOGISTIC needs output scale 1/256, zero point %d (has %g, %d)",
                            sgn ? -128 : 0, (double)y->scale, y->zero_point);
        if (type == ANEURALNETWORKS_TANH && !(y->scale == 1.0f / 128 && zp == (sgn ? 0 : 128)))
            return par_msgf(msg, PAR_UNSUPPORTED, "quantized TANH needs output scale 1/128, zero point %d (has %g, %d)",
                            sgn ? 0 : 128, (double)y->scale, y->zero_point);
        if ((type == ANEURALNETWORKS_RELU || type == ANEURALNETWORKS_RELU1 || type == ANEURALNETWORKS_RELU6) &&
            !nn_same_q(x, y))
            return requant_clamp(m, node, type, msg);
    }
    int32_t a = nn_in(m, node, 0, NN_ANY, &st, msg);
    if (a < 0) return st;
    int32_t in[1] = {a};
    return par_nn_emit(m, node, type, 1, in, m->opnd[a].nhwc, msg);
}

par_status par_nn_lower_prelu(nn_model *m, int32_t node, int32_t code, par_msg *msg)
{
    const par_node *n = &m->g->nodes[node];
    const par_value *x = in_val(m, n, 0), *s = in_val(m, n, 1);
    par_status st = check_rank(x, msg);
    if (st != PAR_OK) return st;
    if (x->dtype != PAR_DTYPE_F32) return par_msgf(msg, PAR_UNSUPPORTED, "prelu of %s", par_dtype_name(x->dtype));
    if (s->kind != PAR_VALUE_CONST) return par_msgf(msg, PAR_UNSUPPORTED, "prelu with a computed slope");
    int32_t a = nn_in(m, node, 0, NN_ANY, &st, msg);
    if (a < 0) return st;
    int nhwc = m->opnd[a].nhwc;
    /* slope [1] or [C]: as the channel axis of x as held (last for NHWC; axis 1 of the logical order). */
    uint32_t dims[4] = {1, 1, 1, 1}, rank = 1;
    dims[0] = (uint32_t)s->numel;
    if (!nhwc && s->numel > 1) {
        rank = (uint32_t)x->rank - 1;
        for (uint32_t i = 1; i < rank; i++) dims[i] = 1;
    }
    int32_t sl = par_nn_const(m, ANEURALNETWORKS_TENSOR_FLOAT32, rank, dims, 0, 0, s->data, (size_t)s->numel * 4);
    int32_t in[2] = {a, sl};
    return par_nn_emit(m, node, ANEURALNETWORKS_PRELU, 2, in, nhwc, msg);
}

/* hardsigmoid (f32): min(max(x + 3, 0), 6) / 6 in PyTorch's order: ADD of 3 with RELU6 fused (the clamp is exact),
 * then DIV by 6 (level 28); two roundings, as PyTorch's own kernel. */
par_status par_nn_lower_hardsigmoid(nn_model *m, int32_t node, int32_t code, par_msg *msg)
{
    const par_node *n = &m->g->nodes[node];
    const par_value *x = in_val(m, n, 0);
    par_status st = check_rank(x, msg);
    if (st != PAR_OK) return st;
    if (x->dtype != PAR_DTYPE_F32)
        return par_msgf(msg, PAR_UNSUPPORTED, "hardsigmoid of %s: NNAPI has no table lookup for it",
                        par_dtype_name(x->dtype));
    if (m->set.level < 28) return par_msgf(msg, PAR_UNSUPPORTED, "hardsigmoid as ADD and DIV needs level 28 (DIV)");
    int32_t a = nn_in(m, node, 0, NN_ANY, &st, msg);
    if (a < 0) return st;
    uint32_t one = 1;
    float three = 3.0f, six = 6.0f;
    int32_t mid = par_nn_operand(m, ANEURALNETWORKS_TENSOR_FLOAT32, m->opnd[a].rank, m->opnd[a].dims, 0, 0);
    int32_t c3 = par_nn_const(m, ANEURALNETWORKS_TENSOR_FLOAT32, 1, &one, 0, 0, &three, 4);
    int32_t c6 = par_nn_const(m, ANEURALNETWORKS_TENSOR_FLOAT32, 1, &one, 0, 0, &six, 4);
    int32_t f6 = par_nn_i32(m, ANEURALNETWORKS_FUSED_RELU6), f0 = par_nn_i32(m, ANEURALNETWORKS_FUSED_NONE);
    if (mid < 0 || c3 < 0 || c6 < 0 || f6 < 0 || f0 < 0) return OOM(msg);
    m->opnd[mid].nhwc = m->opnd[a].nhwc;
    uint32_t i1[3] = {(uint32_t)a, (uint32_t)c3, (uint32_t)f6}, o1[1] = {(uint32_t)mid};
    st = par_nn_op(m, ANEURALNETWORKS_ADD, node, 3, i1, 1, o1, msg);
    if (st != PAR_OK) return st;
    int32_t in[3] = {mid, c6, f0};
    return par_nn_emit(m, node, ANEURALNETWORKS_DIV, 3, in, m->opnd[a].nhwc, msg);
}

/* leaky_relu (f32): PRELU (level 29) with a one-element slope, the same product x * slope for x < 0. */
par_status par_nn_lower_leaky_relu(nn_model *m, int32_t node, int32_t code, par_msg *msg)
{
    const par_node *n = &m->g->nodes[node];
    const par_value *x = in_val(m, n, 0);
    par_status st = check_rank(x, msg);
    if (st != PAR_OK) return st;
    if (x->dtype != PAR_DTYPE_F32)
        return par_msgf(msg, PAR_UNSUPPORTED, "leaky_relu of %s: NNAPI's quantized PRELU requantizes the slope's "
                        "product, parity's is a table of the float function", par_dtype_name(x->dtype));
    int32_t a = nn_in(m, node, 0, NN_ANY, &st, msg);
    if (a < 0) return st;
    float slope = (float)par_attr_float(n, "negative_slope", 0.01);
    uint32_t one = 1;
    int32_t in[2] = {a, par_nn_const(m, ANEURALNETWORKS_TENSOR_FLOAT32, 1, &one, 0, 0, &slope, sizeof slope)};
    return par_nn_emit(m, node, ANEURALNETWORKS_PRELU, 2, in, m->opnd[a].nhwc, msg);
}

par_status par_nn_lower_softmax(nn_model *m, int32_t node, int32_t code, par_msg *msg)
{
    const par_node *n = &m->g->nodes[node];
    const par_value *x = in_val(m, n, 0), *y = out_val(m, n);
    const int lsm = code == ANEURALNETWORKS_LOG_SOFTMAX;
    par_status st = check_rank(x, msg);
    if (st != PAR_OK) return st;
    if (x->dtype != PAR_DTYPE_F32 && !(nn_is_q(x->dtype) && !lsm))
        return par_msgf(msg, PAR_UNSUPPORTED, "%s of %s", n->op, par_dtype_name(x->dtype));
    if (nn_is_q(y->dtype)) {
        int sgn = y->dtype == PAR_DTYPE_QS8 && m->set.level >= 30;
        if (!(y->scale == 1.0f / 256 && nn_zp(m, y) == (sgn ? -128 : 0)))
            return par_msgf(msg, PAR_UNSUPPORTED, "quantized SOFTMAX needs output scale 1/256, zero point %d (has %g, %d)",
                            sgn ? -128 : 0, (double)y->scale, y->zero_point);
    }
    int32_t a = nn_in(m, node, 0, NN_ANY, &st, msg);
    if (a < 0) return st;
    int nhwc = m->opnd[a].nhwc;
    int32_t axis = (int32_t)par_attr_int(n, "axis", -1);
    if (axis < 0) axis += x->rank;
    int32_t pax = par_nn_axis(x->rank, nhwc, axis);
    int32_t rank = x->rank ? x->rank : 1;
    int32_t in[3] = {a, par_nn_f32(m, 1.0f), -1};
    uint32_t n_in = 2;
    /* Before level 29 SOFTMAX takes rank 2 or 4 and works on the last axis. */
    if (lsm || pax != rank - 1 || (rank != 2 && rank != 4)) {
        if (!lsm && m->set.level < 29)
            return par_msgf(msg, PAR_UNSUPPORTED, "SOFTMAX on axis %d of a rank-%d tensor needs level 29", pax, rank);
        in[2] = par_nn_i32(m, pax);
        n_in = 3;
    }
    return par_nn_emit(m, node, lsm ? ANEURALNETWORKS_LOG_SOFTMAX : ANEURALNETWORKS_SOFTMAX, n_in, in, nhwc, msg);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Reductions and data movement
 * ------------------------------------------------------------------------------------------------------------- */
par_status par_nn_lower_mean(nn_model *m, int32_t node, int32_t code, par_msg *msg)
{
    const par_node *n = &m->g->nodes[node];
    const par_value *x = in_val(m, n, 0);
    par_status st = check_rank(x, msg);
    if (st != PAR_OK) return st;
    if (x->dtype != PAR_DTYPE_F32)
        return par_msgf(msg, PAR_UNSUPPORTED, nn_is_q(x->dtype) ? "quantized MEAN truncates its integer average "
                        "(Android's reference Mean); parity's mean rounds to nearest" : "mean of %s",
                        par_dtype_name(x->dtype));
    int keep = (int)par_attr_int(n, "keepdims", 0);
    int32_t na = par_attr_count(n, "axes");
    int red[PAR_MAX_RANK] = {0};
    for (int32_t i = 0; i < na; i++) {
        int64_t ax = par_attr_ints_at(n, "axes", i, 0);
        red[ax < 0 ? ax + x->rank : ax] = 1;
    }
    /* NHWC holds the kept axes in the logical order unless C survives beside H or W without keepdims. */
    int want = NN_ANY;
    if (x->rank == 4 && !keep && !red[1] && !(red[2] && red[3])) want = NN_LOGICAL;
    int32_t a = nn_in(m, node, 0, want, &st, msg);
    if (a < 0) return st;
    int nhwc = m->opnd[a].nhwc;
    int32_t axes[PAR_MAX_RANK], k = 0;
    for (int32_t i = 0; i < x->rank; i++)
        if (red[i]) axes[k++] = par_nn_axis(x->rank, nhwc, i);
    int32_t in[3] = {a, par_nn_i32_vec(m, (uint32_t)k, axes), par_nn_i32(m, keep)};
    return par_nn_emit(m, node, ANEURALNETWORKS_MEAN, 3, in, nhwc && keep, msg);
}

par_status par_nn_lower_concat(nn_model *m, int32_t node, int32_t code, par_msg *msg)
{
    const par_node *n = &m->g->nodes[node];
    const par_value *y = out_val(m, n);
    par_status st = check_rank(y, msg);
    if (st != PAR_OK) return st;
    if (y->dtype != PAR_DTYPE_F32 && !nn_is_q(y->dtype))
        return par_msgf(msg, PAR_UNSUPPORTED, "concat of %s", par_dtype_name(y->dtype));
    if (n->n_inputs > 64) return par_msgf(msg, PAR_UNSUPPORTED, "concat of more than 64 inputs");
    if (nn_is_q(y->dtype) && m->set.level < 29)
        for (int32_t i = 0; i < n->n_inputs; i++)
            if (!nn_same_q(in_val(m, n, i), y))
                return par_msgf(msg, PAR_UNSUPPORTED,
                                "quantized CONCATENATION of inputs with other scales than the output's needs level 29");
    /* The layout of the first activation input; every other input brought to it. */
    int want = NN_LOGICAL;
    if (y->rank == 4)
        for (int32_t i = 0; i < n->n_inputs; i++) {
            const par_value *v = in_val(m, n, i);
            if (v->kind == PAR_VALUE_CONST) continue;
            int32_t o = m->val_opnd[n->inputs[i]];
            want = (o >= 0 && m->opnd[o].nhwc) ? NN_NHWC : NN_LOGICAL;
            break;
        }
    int32_t in[65];
    for (int32_t i = 0; i < n->n_inputs; i++) {
        in[i] = nn_in(m, node, i, want, &st, msg);
        if (in[i] < 0) return st;
    }
    int32_t axis = (int32_t)par_attr_int(n, "axis", 1);
    if (axis < 0) axis += y->rank;
    in[n->n_inputs] = par_nn_i32(m, par_nn_axis(y->rank, want == NN_NHWC, axis));
    return par_nn_emit(m, node, ANEURALNETWORKS_CONCATENATION, (uint32_t)n->n_inputs + 1, in, want == NN_NHWC, msg);
}

static par_status need_same_q(const nn_model *m, const par_node *n, const char *what, par_msg *msg)
{
    const par_value *x = in_val(m, n, 0), *y = out_val(m, n);
    if (nn_is_q(y->dtype) && !nn_same_q(x, y))
        return par_msgf(msg, PAR_UNSUPPORTED, "quantized %s keeps its input's scale and zero point; the output's differ",
                        what);
    if (y->dtype != PAR_DTYPE_F32 && !nn_is_q(y->dtype))
        return par_msgf(msg, PAR_UNSUPPORTED, "%s of %s", n->op, par_dtype_name(y->dtype));
    return PAR_OK;
}

/* reshape, flatten: RESHAPE of the logical order. */
par_status par_nn_lower_reshape(nn_model *m, int32_t node, int32_t code, par_msg *msg)
{
    const par_node *n = &m->g->nodes[node];
    const par_value *x = in_val(m, n, 0), *y = out_val(m, n);
    par_status st = need_same_q(m, n, "RESHAPE", msg);
    if (st == PAR_OK) st = check_rank(x, msg);
    if (st == PAR_OK) st = check_rank(y, msg);
    if (st != PAR_OK) return st;
    int32_t a = nn_in(m, node, 0, NN_LOGICAL, &st, msg);
    if (a < 0) return st;
    int32_t shape[PAR_MAX_RANK];
    int32_t r = y->rank ? y->rank : 1;
    for (int32_t i = 0; i < r; i++) shape[i] = y->rank ? (int32_t)y->dims[i] : 1;
    int32_t in[2] = {a, par_nn_i32_vec(m, (uint32_t)r, shape)};
    return par_nn_emit(m, node, ANEURALNETWORKS_RESHAPE, 2, in, 0, msg);
}

par_status par_nn_lower_permute(nn_model *m, int32_t node, int32_t code, par_msg *msg)
{
    const par_node *n = &m->g->nodes[node];
    const par_value *x = in_val(m, n, 0), *y = out_val(m, n);
    par_status st = need_same_q(m, n, "TRANSPOSE", msg);
    if (st == PAR_OK) st = check_rank(x, msg);
    if (st != PAR_OK) return st;
    int32_t a = nn_in(m, node, 0, NN_ANY, &st, msg);
    if (a < 0) return st;
    int in_nhwc = m->opnd[a].nhwc, out_nhwc = y->rank == 4;
    /* Output physical axis j holds logical output axis L(j), which is logical input axis perm[L(j)], found at
     * physical input axis par_nn_axis(perm[L(j)]). */
    static const int32_t FROM_NHWC[4] = {0, 2, 3, 1};
    int32_t p[PAR_MAX_RANK], ident = 1;
    for (int32_t j = 0; j < x->rank; j++) {
        int32_t L = out_nhwc ? FROM_NHWC[j] : j;
        p[j] = par_nn_axis(x->rank, in_nhwc, (int32_t)par_attr_ints_at(n, "perm", L, 0));
        if (p[j] != j) ident = 0;
    }
    if (ident) {
        int32_t shape[PAR_MAX_RANK];
        for (int32_t i = 0; i < x->rank; i++) shape[i] = (int32_t)m->opnd[a].dims[i];
        int32_t in[2] = {a, par_nn_i32_vec(m, (uint32_t)x->rank, shape)};
        return par_nn_emit(m, node, ANEURALNETWORKS_RESHAPE, 2, in, out_nhwc, msg);
    }
    int32_t in[2] = {a, par_nn_i32_vec(m, (uint32_t)x->rank, p)};
    return par_nn_emit(m, node, ANEURALNETWORKS_TRANSPOSE, 2, in, out_nhwc, msg);
}

par_status par_nn_lower_pad(nn_model *m, int32_t node, int32_t code, par_msg *msg)
{
    const par_node *n = &m->g->nodes[node];
    const par_value *x = in_val(m, n, 0);
    par_status st = check_rank(x, msg);
    if (st != PAR_OK) return st;
    const char *mode = par_attr_str(n, "mode", "constant");
    if (strcmp(mode, "constant") != 0)
        return par_msgf(msg, PAR_UNSUPPORTED, "pad mode %s: NNAPI (levels 27-30) pads with a constant only", mode);
    if (x->dtype != PAR_DTYPE_F32) return par_msgf(msg, PAR_UNSUPPORTED, "pad of %s", par_dtype_name(x->dtype));
    double value = par_attr_float(n, "value", 0);
    int32_t a = nn_in(m, node, 0, NN_ANY, &st, msg);
    if (a < 0) return st;
    int nhwc = m->opnd[a].nhwc;
    int32_t pads[2 * PAR_MAX_RANK];
    for (int32_t i = 0; i < x->rank; i++) {
        int32_t p = par_nn_axis(x->rank, nhwc, i);
        pads[2 * p] = (int32_t)par_attr_ints_at(n, "pads", 2 * i, 0);
        pads[2 * p + 1] = (int32_t)par_attr_ints_at(n, "pads", 2 * i + 1, 0);
    }
    uint32_t pd[2] = {(uint32_t)x->rank, 2};
    int32_t pt = par_nn_const(m, ANEURALNETWORKS_TENSOR_INT32, 2, pd, 0, 0, pads, (size_t)x->rank * 2 * 4);
    if (value == 0 && !signbit(value)) {
        int32_t in[2] = {a, pt};
        return par_nn_emit(m, node, ANEURALNETWORKS_PAD, 2, in, nhwc, msg);
    }
    int32_t in[3] = {a, pt, par_nn_f32(m, (float)value)};
    return par_nn_emit(m, node, ANEURALNETWORKS_PAD_V2, 3, in, nhwc, msg);
}

par_status par_nn_lower_slice(nn_model *m, int32_t node, int32_t code, par_msg *msg)
{
    const par_node *n = &m->g->nodes[node];
    const par_value *x = in_val(m, n, 0), *y = out_val(m, n);
    par_status st = need_same_q(m, n, "STRIDED_SLICE", msg);
    if (st == PAR_OK) st = check_rank(x, msg);
    if (st != PAR_OK) return st;
    int32_t a = nn_in(m, node, 0, NN_ANY, &st, msg);
    if (a < 0) return st;
    int nhwc = m->opnd[a].nhwc;
    int32_t dim = (int32_t)par_attr_int(n, "dim", 0);
    if (dim < 0) dim += x->rank;
    int64_t size = x->dims[dim], start = par_attr_int(n, "start", 0), step = par_attr_int(n, "step", 1);
    if (start < 0) start += size;
    if (start < 0) start = 0;
    if (start > size) start = size;
    int64_t count = y->dims[dim];
    int32_t b[PAR_MAX_RANK], e[PAR_MAX_RANK], s[PAR_MAX_RANK];
    for (int32_t i = 0; i < x->rank; i++) {
        int32_t p = par_nn_axis(x->rank, nhwc, i);
        b[p] = 0;
        e[p] = (int32_t)x->dims[i];
        s[p] = 1;
        if (i == dim) {
            b[p] = (int32_t)start;
            e[p] = (int32_t)(start + (count - 1) * step + 1);
            s[p] = (int32_t)step;
        }
    }
    uint32_t r = (uint32_t)x->rank;
    if (step == 1 && m->set.level >= 29) {
        /* SLICE (level 29): begin and size. */
        int32_t sz[PAR_MAX_RANK];
        for (uint32_t i = 0; i < r; i++) sz[i] = e[i] - b[i];
        int32_t in[3] = {a, par_nn_i32_vec(m, r, b), par_nn_i32_vec(m, r, sz)};
        return par_nn_emit(m, node, ANEURALNETWORKS_SLICE, 3, in, nhwc, msg);
    }
    int32_t in[7] = {a, par_nn_i32_vec(m, r, b), par_nn_i32_vec(m, r, e), par_nn_i32_vec(m, r, s),
                     par_nn_i32(m, 0), par_nn_i32(m, 0), par_nn_i32(m, 0)};
    return par_nn_emit(m, node, ANEURALNETWORKS_STRIDED_SLICE, 7, in, nhwc, msg);
}

par_status par_nn_lower_quantize(nn_model *m, int32_t node, int32_t code, par_msg *msg)
{
    const par_node *n = &m->g->nodes[node];
    const par_value *x = in_val(m, n, 0), *y = out_val(m, n);
    const int q = code == ANEURALNETWORKS_QUANTIZE;
    par_status st = check_rank(x, msg);
    if (st != PAR_OK) return st;
    if (q ? x->dtype != PAR_DTYPE_F32 : !nn_is_q(x->dtype))
        return par_msgf(msg, PAR_UNSUPPORTED, "%s of %s", n->op, par_dtype_name(x->dtype));
    if (q && !nn_is_q(y->dtype))
        return par_msgf(msg, PAR_UNSUPPORTED, "quantize to %s", par_dtype_name(y->dtype));
    int32_t a = nn_in(m, node, 0, NN_ANY, &st, msg);
    if (a < 0) return st;
    int32_t in[1] = {a};
    return par_nn_emit(m, node, q ? ANEURALNETWORKS_QUANTIZE : ANEURALNETWORKS_DEQUANTIZE, 1, in, m->opnd[a].nhwc, msg);
}

/* batch_norm (inference): y = x * s[c] + t[c], s = weight / sqrt(var + eps), t = bias - mean * s, folded in double
 * and rounded once to f32; a MUL and an ADD with the constants laid out along the channel axis as held. */
par_status par_nn_lower_batch_norm(nn_model *m, int32_t node, int32_t code, par_msg *msg)
{
    const par_node *n = &m->g->nodes[node];
    const par_value *x = in_val(m, n, 0), *y = out_val(m, n);
    par_status st = check_rank(x, msg);
    if (st != PAR_OK) return st;
    if (x->dtype != PAR_DTYPE_F32) return par_msgf(msg, PAR_UNSUPPORTED, "batch_norm of %s", par_dtype_name(x->dtype));
    for (int32_t k = 1; k < 5; k++)
        if (in_val(m, n, k)->kind != PAR_VALUE_CONST || in_val(m, n, k)->dtype != PAR_DTYPE_F32)
            return par_msgf(msg, PAR_UNSUPPORTED, "batch_norm with computed or non-f32 statistics");
    int64_t C = x->dims[1];
    const float *w = in_val(m, n, 1)->data, *b = in_val(m, n, 2)->data, *mu = in_val(m, n, 3)->data,
                *var = in_val(m, n, 4)->data;
    double eps = par_attr_float(n, "eps", 1e-5);
    float *s = par_nn_alloc(m, (size_t)C * 4), *t = par_nn_alloc(m, (size_t)C * 4);
    if (!s || !t) return OOM(msg);
    for (int64_t c = 0; c < C; c++) {
        double sc = (double)w[c] / sqrt((double)var[c] + eps);
        s[c] = (float)sc;
        t[c] = (float)((double)b[c] - (double)mu[c] * sc);
    }
    int32_t a = nn_in(m, node, 0, NN_ANY, &st, msg);
    if (a < 0) return st;
    int nhwc = m->opnd[a].nhwc;
    uint32_t dims[PAR_MAX_RANK] = {(uint32_t)C, 1, 1, 1, 1, 1}, rank = nhwc ? 1 : (uint32_t)x->rank - 1;
    if (rank < 1) rank = 1;
    int32_t cs = par_nn_const(m, ANEURALNETWORKS_TENSOR_FLOAT32, rank, dims, 0, 0, s, (size_t)C * 4);
    int32_t ct = par_nn_const(m, ANEURALNETWORKS_TENSOR_FLOAT32, rank, dims, 0, 0, t, (size_t)C * 4);
    if (cs < 0 || ct < 0) return OOM(msg);
    /* The intermediate x * s: an operand of the output's shape, in the same layout. */
    int32_t mid = par_nn_operand(m, ANEURALNETWORKS_TENSOR_FLOAT32, m->opnd[a].rank, m->opnd[a].dims, 0, 0);
    int32_t none = par_nn_i32(m, ANEURALNETWORKS_FUSED_NONE);
    if (mid < 0 || none < 0) return OOM(msg);
    m->opnd[mid].nhwc = nhwc;
    uint32_t i1[3] = {(uint32_t)a, (uint32_t)cs, (uint32_t)none}, o1[1] = {(uint32_t)mid};
    st = par_nn_op(m, ANEURALNETWORKS_MUL, node, 3, i1, 1, o1, msg);
    if (st != PAR_OK) return st;
    (void)y;
    int32_t in[3] = {mid, ct, none};
    return par_nn_emit(m, node, ANEURALNETWORKS_ADD, 3, in, nhwc, msg);
}
