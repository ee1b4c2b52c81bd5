/*
 * xnnpack_lower_eltwise.c - the xnnpack adapter's f32 lowerings of elementwise ops: add, sub, mul, div with
 * broadcasting, the activations XNNPACK has operators for (clamp for relu / relu6 / hardtanh / clamp, leaky_relu,
 * elu, sigmoid, hardswish), prelu, and the two ops XNNPACK has no operator for that the adapter expresses with
 * XNNPACK's own operators as TFLite's graphs do: hardsigmoid (add 3 with the output clamped to [0, 6], then divide
 * by 6, each f32-rounded once) and a batch norm that follows no convolution (multiply, then add).
 *
 * Nothing here computes tensor values in C, and nothing calls the driver (xnnpack_lower.c).
 */
#include <math.h>
#include <stdlib.h>

#include "xnnpack_internal.h"

/* The f32 binary operators of XNNPACK share one create and one setup signature: a line per op. */
typedef struct binary_api {
    enum xnn_status (*create)(float output_min, float output_max, uint32_t flags, xnn_operator_t *op);
    enum xnn_status (*setup)(xnn_operator_t op, size_t rank_a, const size_t *shape_a, size_t rank_b,
                             const size_t *shape_b, const float *a, const float *b, float *y, pthreadpool_t pool);
    const char *name;
} binary_api;

static const binary_api add_api = {xnn_create_add_nd_f32, xnn_setup_add_nd_f32, "add_nd_f32"};
static const binary_api sub_api = {xnn_create_subtract_nd_f32, xnn_setup_subtract_nd_f32, "subtract_nd_f32"};
static const binary_api mul_api = {xnn_create_multiply_nd_f32, xnn_setup_multiply_nd_f32, "multiply_nd_f32"};
static const binary_api div_api = {xnn_create_divide_nd_f32, xnn_setup_divide_nd_f32, "divide_nd_f32"};

/* Numpy broadcasting: a 4-D output is computed in NHWC, each operand viewed as 4-D with leading ones; otherwise in
 * logical order (a rank-0 operand as shape [1]). A fused clamp becomes output_min / output_max. */
static par_status lower_binary(xa_plan *p, int32_t ni, const binary_api *api, par_msg *msg)
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
    par_status cs = par_xnn_created(api->create(p->out_min[ni], p->out_max[ni], 0, &op), api->name, msg);
    if (cs != PAR_OK) return cs;
    float *out = par_xnn_output(p, p->final_out[ni], nhwc ? XA_NHWC : XA_LOGICAL, msg);
    if (!out) {
        xnn_delete_operator(op);
        return PAR_ERROR;
    }
    return par_xnn_push_op(p, op, api->setup(op, rank[0], shape[0], rank[1], shape[1], in[0], in[1], out, p->pool),
                           api->name, msg);
}

par_status par_xnn_lower_add(xa_plan *p, int32_t ni, par_msg *msg)
{
    return lower_binary(p, ni, &add_api, msg);
}

par_status par_xnn_lower_sub(xa_plan *p, int32_t ni, par_msg *msg)
{
    return lower_binary(p, ni, &sub_api, msg);
}

par_status par_xnn_lower_mul(xa_plan *p, int32_t ni, par_msg *msg)
{
    return lower_binary(p, ni, &mul_api, msg);
}

par_status par_xnn_lower_div(xa_plan *p, int32_t ni, par_msg *msg)
{
    return lower_binary(p, ni, &div_api, msg);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Unary operators over the flat tensor in its input's layout: each op creates its operator, then unary_setup
 * binds the buffers and runs XNNPACK's setup (the setup signatures of the f32 unary operators are all the same).
 * ------------------------------------------------------------------------------------------------------------- */
typedef enum xnn_status (*unary_setup_fn)(xnn_operator_t op, size_t batch, const float *x, float *y,
                                          pthreadpool_t pool);

/* *op was just created with status `created` (the create call is an argument, so it has run when this reads *op). */
static par_status unary_setup(xa_plan *p, int32_t ni, xnn_operator_t *op, enum xnn_status created, const char *fn,
                              unary_setup_fn setup, par_msg *msg)
{
    par_status st = par_xnn_created(created, fn, msg);
    if (st != PAR_OK) return st;
    const void *in;
    void *out;
    st = par_xnn_io(p, ni, par_xnn_current_layout(p, p->g->nodes[ni].inputs[0]), *op, &in, &out, msg);
    if (st != PAR_OK) return st;
    return par_xnn_push_op(p, *op, setup(*op, 1, in, out, p->pool), fn, msg);
}

static size_t flat_numel(const xa_plan *p, int32_t ni)
{
    return (size_t)par_node_input(p->g, &p->g->nodes[ni], 0)->numel;
}

/* relu, relu6, hardtanh, clamp */
par_status par_xnn_lower_clamp(xa_plan *p, int32_t ni, par_msg *msg)
{
    size_t c = flat_numel(p, ni);
    float lo = -INFINITY, hi = INFINITY;
    par_clamp_bounds_f32(&p->g->nodes[ni], &lo, &hi);
    xnn_operator_t op = NULL;
    return unary_setup(p, ni, &op, xnn_create_clamp_nc_f32(c, c, c, lo, hi, 0, &op), "clamp_nc_f32",
                       xnn_setup_clamp_nc_f32, msg);
}

par_status par_xnn_lower_leaky_relu(xa_plan *p, int32_t ni, par_msg *msg)
{
    size_t c = flat_numel(p, ni);
    float slope = (float)par_attr_float(&p->g->nodes[ni], "negative_slope", 0.01);
    xnn_operator_t op = NULL;
    return unary_setup(p, ni, &op, xnn_create_leaky_relu_nc_f32(c, c, c, slope, 0, &op), "leaky_relu_nc_f32",
                       xnn_setup_leaky_relu_nc_f32, msg);
}

par_status par_xnn_lower_elu(xa_plan *p, int32_t ni, par_msg *msg)
{
    size_t c = flat_numel(p, ni);
    float alpha = (float)par_attr_float(&p->g->nodes[ni], "alpha", 1.0);
    xnn_operator_t op = NULL;
    return unary_setup(p, ni, &op, xnn_create_elu_nc_f32(c, c, c, alpha, 0, &op), "elu_nc_f32",
                       xnn_setup_elu_nc_f32, msg);
}

par_status par_xnn_lower_sigmoid(xa_plan *p, int32_t ni, par_msg *msg)
{
    size_t c = flat_numel(p, ni);
    xnn_operator_t op = NULL;
    return unary_setup(p, ni, &op, xnn_create_sigmoid_nc_f32(c, c, c, 0, &op), "sigmoid_nc_f32",
                       xnn_setup_sigmoid_nc_f32, msg);
}

par_status par_xnn_lower_hardswish(xa_plan *p, int32_t ni, par_msg *msg)
{
    size_t c = flat_numel(p, ni);
    xnn_operator_t op = NULL;
    return unary_setup(p, ni, &op, xnn_create_hardswish_nc_f32(c, c, c, 0, &op), "hardswish_nc_f32",
                       xnn_setup_hardswish_nc_f32, msg);
}

par_status par_xnn_lower_prelu(xa_plan *p, int32_t ni, par_msg *msg)
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
    par_status cs = par_xnn_created(xnn_create_prelu_nc_f32((size_t)C, (size_t)C, (size_t)C, slope, 0, &op),
                                    "prelu_nc_f32", msg);
    if (cs != PAR_OK) return cs;
    const void *in;
    void *out;
    if ((cs = par_xnn_io(p, ni, XA_NHWC, op, &in, &out, msg)) != PAR_OK) return cs;
    return par_xnn_push_op(p, op, xnn_setup_prelu_nc_f32(op, (size_t)(x->numel / C), in, out, p->pool),
                           "setup_prelu_nc_f32", msg);
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
    par_status st = par_xnn_created(xnn_create_add_nd_f32(0.0f, 6.0f, 0, &add), "add_nd_f32", msg);
    if (st != PAR_OK) return st;
    st = par_xnn_push_op(p, add, xnn_setup_add_nd_f32(add, 1, flat, 1, one, in, k, tmp, p->pool),
                            "setup_add_nd_f32", msg);
    if (st != PAR_OK) return st;
    st = par_xnn_created(xnn_create_divide_nd_f32(-INFINITY, INFINITY, 0, &div), "divide_nd_f32", msg);
    if (st != PAR_OK) return st;
    return par_xnn_push_op(p, div, xnn_setup_divide_nd_f32(div, 1, flat, 1, one, tmp, k + 1, out, p->pool),
                   "setup_divide_nd_f32", msg);
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
    par_status st = par_xnn_created(xnn_create_multiply_nd_f32(-INFINITY, INFINITY, 0, &mul), "multiply_nd_f32", msg);
    if (st != PAR_OK) return st;
    st = par_xnn_push_op(p, mul,
                            xnn_setup_multiply_nd_f32(mul, (size_t)x->rank, xd, (size_t)x->rank, cd, in, scale, tmp,
                                                      p->pool),
                            "setup_multiply_nd_f32", msg);
    if (st != PAR_OK) return st;
    st = par_xnn_created(xnn_create_add_nd_f32(-INFINITY, INFINITY, 0, &add), "add_nd_f32", msg);
    if (st != PAR_OK) return st;
    return par_xnn_push_op(p, add,
                   xnn_setup_add_nd_f32(add, (size_t)x->rank, xd, (size_t)x->rank, cd, tmp, shift, out, p->pool),
                   "setup_add_nd_f32", msg);
}
