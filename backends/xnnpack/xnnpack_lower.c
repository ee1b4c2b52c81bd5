/*
 * xnnpack_lower.c - the driver of the xnnpack adapter's lowering (the system XNNPACK, the 2022-02 snapshot that
 * Debian 12 ships): one op table says which function lowers each op on f32 tensors and which on qu8/qs8 tensors;
 * par_xnn_check answers from it (an op without a function is UNSUPPORTED, with the reason XNNPACK lacks it where the
 * table gives one) and from the parameter rules; par_xnn_plan_fusions plans the fusions an XNNPACK integrator makes
 * (batch norm folded into the preceding convolution, a following relu / relu6 / hardtanh / clamp turned into the
 * operator's output_min / output_max); par_xnn_lower calls the table's function.
 *
 * The lowerings are its parts: xnnpack_lower_conv.c (conv2d, conv_transpose2d, linear, matmul),
 * xnnpack_lower_eltwise.c (binary ops, activations, prelu, hardsigmoid, batch_norm), xnnpack_lower_pool.c (pooling,
 * softmax, resize), xnnpack_lower_move.c (concat, reshape, slice, pad) and xnnpack_lower_q8.c (quantized graphs);
 * what they share is in xnnpack_lower_util.c. They never call back into this file. Adding an op is one line in the
 * table plus its lower function. Whatever XNNPACK lacks is UNSUPPORTED with the reason, never emulated in C.
 */
#include <math.h>
#include <stdlib.h>

#include "xnnpack_internal.h"

/* ---------------------------------------------------------------------------------------------------------------
 * The op table. f32 / q8: the lowering on f32 tensors / on qu8-qs8 tensors (a node is quantized when any input or
 * its output is, and quantize / dequantize always are), NULL where the adapter has none; why_f32 / why_q8: the
 * reason given then, when XNNPACK 2022-02 lacks the operator (otherwise a generic one). An op with no line is
 * UNSUPPORTED.
 * ------------------------------------------------------------------------------------------------------------- */
typedef par_status (*xa_lower_fn)(xa_plan *p, int32_t ni, par_msg *msg);

typedef struct xa_op {
    const char *op;
    xa_lower_fn f32, q8;
    const char *why_f32, *why_q8;
} xa_op;

static const xa_op op_table[] = {
    {"conv2d", par_xnn_lower_conv2d, par_xnn_lower_conv_q8, NULL, NULL},
    {"conv_transpose2d", par_xnn_lower_deconv, NULL, NULL, NULL},
    {"linear", par_xnn_lower_fc, par_xnn_lower_conv_q8, NULL, NULL},
    {"matmul", par_xnn_lower_fc, NULL, NULL, NULL},
    {"add", par_xnn_lower_add, par_xnn_lower_add_q8, NULL, NULL},
    {"sub", par_xnn_lower_sub, NULL, NULL, NULL},
    {"mul", par_xnn_lower_mul, par_xnn_lower_mul_q8, NULL, NULL},
    {"div", par_xnn_lower_div, NULL, NULL, NULL},
    {"relu", par_xnn_lower_clamp, par_xnn_lower_clamp_q8, NULL, NULL},
    {"relu6", par_xnn_lower_clamp, par_xnn_lower_clamp_q8, NULL, NULL},
    {"hardtanh", par_xnn_lower_clamp, par_xnn_lower_clamp_q8, NULL, NULL},
    {"clamp", par_xnn_lower_clamp, par_xnn_lower_clamp_q8, NULL, NULL},
    {"leaky_relu", par_xnn_lower_leaky_relu, NULL, NULL, NULL},
    {"prelu", par_xnn_lower_prelu, NULL, NULL, NULL},
    {"sigmoid", par_xnn_lower_sigmoid, par_xnn_lower_sigmoid_q8, NULL, NULL},
    {"tanh", NULL, par_xnn_lower_tanh_q8, "XNNPACK 2022-02 has no f32 tanh operator (tanh_nc_f32 came later)", NULL},
    {"hardswish", par_xnn_lower_hardswish, NULL, NULL,
     "XNNPACK 2022-02 has no quantized hardswish (hardswish_nc_f32 / f16 only)"},
    {"hardsigmoid", par_xnn_lower_hardsigmoid, NULL, NULL, NULL},
    {"elu", par_xnn_lower_elu, NULL, NULL, NULL},
    {"max_pool2d", par_xnn_lower_pool2d, par_xnn_lower_pool_q8, NULL, NULL},
    {"avg_pool2d", par_xnn_lower_pool2d, par_xnn_lower_pool_q8, NULL, NULL},
    {"adaptive_avg_pool2d", par_xnn_lower_adaptive, NULL, NULL, NULL},
    {"global_avg_pool2d", par_xnn_lower_global_avg, par_xnn_lower_gap_q8, NULL, NULL},
    {"mean", par_xnn_lower_global_avg, NULL, NULL, NULL},
    {"softmax", par_xnn_lower_softmax, par_xnn_lower_softmax_q8, NULL, NULL},
    {"log_softmax", NULL, NULL, "XNNPACK has no log_softmax operator", NULL},
    {"upsample_nearest2d", NULL, NULL,
     "XNNPACK 2022-02 has no nearest-neighbour resize operator (only resize_bilinear2d)",
     "XNNPACK 2022-02 has no nearest-neighbour resize operator"},
    {"upsample_bilinear2d", par_xnn_lower_resize, par_xnn_lower_resize_q8, NULL, NULL},
    {"concat", par_xnn_lower_concat, par_xnn_lower_concat, NULL, NULL},
    {"reshape", par_xnn_lower_reshape, par_xnn_lower_reshape, NULL, NULL},
    {"flatten", par_xnn_lower_reshape, par_xnn_lower_reshape, NULL, NULL},
    {"permute", NULL, NULL, "XNNPACK 2022-02 has no transpose operator (transpose_nd_x32 came later)",
     "XNNPACK 2022-02 has no transpose operator (transpose_nd_x8 came later)"},
    {"slice", par_xnn_lower_slice, par_xnn_lower_slice, NULL, NULL},
    {"pad", par_xnn_lower_pad, NULL, NULL, NULL},
    {"batch_norm", par_xnn_lower_batch_norm, NULL, NULL, NULL},
    {"quantize", NULL, par_xnn_lower_quantize_q8, NULL, NULL},
    {"dequantize", NULL, par_xnn_lower_dequantize_q8, NULL, NULL},
};

static const xa_op *op_find(const par_node *n)
{
    for (size_t i = 0; i < sizeof op_table / sizeof op_table[0]; i++)
        if (is_op(n, op_table[i].op)) return &op_table[i];
    return NULL;
}

/* The table's lowering of node n for its tensor types, or NULL with the reason in msg. */
static xa_lower_fn lowering_of(const par_graph_desc *g, const par_node *n, par_msg *msg)
{
    const xa_op *e = op_find(n);
    if (par_xnn_is_q8_node(g, n)) {
        if (e && e->q8) return e->q8;
        if (e && e->why_q8) par_msgf(msg, PAR_UNSUPPORTED, "%s", e->why_q8);
        else par_msgf(msg, PAR_UNSUPPORTED, "op '%s' on qu8/qs8 tensors: XNNPACK 2022-02 has no quantized operator "
                      "for it", n->op);
        return NULL;
    }
    if (e && e->f32) return e->f32;
    if (e && e->why_f32) par_msgf(msg, PAR_UNSUPPORTED, "%s", e->why_f32);
    else par_msgf(msg, PAR_UNSUPPORTED, "op '%s' has no XNNPACK lowering in this adapter", n->op);
    return NULL;
}

par_status par_xnn_check(const par_graph_desc *g, const par_node *n, par_msg *msg)
{
    if (!lowering_of(g, n, msg)) return PAR_UNSUPPORTED;
    if (par_xnn_is_q8_node(g, n)) return par_xnn_check_q8(g, n, msg);
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

/* ---------------------------------------------------------------------------------------------------------------
 * Fusions
 * ------------------------------------------------------------------------------------------------------------- */
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
            par_clamp_bounds_f32(&g->nodes[j], &lo, &hi) && lo < hi) {
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
par_status par_xnn_lower(xa_plan *p, int32_t ni, par_msg *msg)
{
    const par_node *n = &p->g->nodes[ni];
    par_status st = par_xnn_check(p->g, n, msg);
    if (st != PAR_OK) return st;
    return lowering_of(p->g, n, msg)(p, ni, msg);
}
