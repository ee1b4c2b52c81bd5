/*
 * onednn_lower.c - the onednn backend's lowering driver: which nodes fuse into a preceding convolution,
 * deconvolution, inner product or matmul as oneDNN post-ops (as frameworks fuse them), what each op may be asked
 * (supports), and the dispatch of each node to its lowering in onednn_lower_mat.c, onednn_lower_move.c or
 * onednn_lower_elt.c.
 *
 * Fusion: a node N of those four kinds whose output feeds exactly one node and is no graph output takes that node as
 * a post-op when it is an activation with an exact eltwise (f32; quantized: relu, relu6, hardtanh, clamp with the
 * same output params, as a clip of the integers) or, for f32 outputs, an add of a tensor of the same shape computed
 * before N (oneDNN's sum post-op: that tensor is copied into N's destination before N runs); up to three in a chain.
 *
 * It must not create primitives itself (the lowering files do).
 */
#include "onednn_internal.h"

/* a convolution, deconvolution, inner product or matmul: the head of a post-op chain */
static int is_mat(const dn_op *r)
{
    return r && r->family >= DN_CONV && r->family <= DN_MATMUL;
}

static int has_flag(const par_node *n, unsigned flag)
{
    const dn_op *r = par_dn_op(n->op);
    return r && (r->flags & flag) != 0;
}

/* the add that becomes oneDNN's sum post-op */
static int is_add(const par_node *n)
{
    const dn_op *r = par_dn_op(n->op);
    return r && r->family == DN_BINARY && r->alg == dnnl_binary_add;
}

static int fusable_act(const par_graph_desc *g, const par_node *n, const par_value *in)
{
    const par_value *y = &g->values[n->outputs[0]];
    if (n->n_inputs != 1) return 0;
    if (par_dn_is_quant(y->dtype))
        return has_flag(n, DN_F_CLIP) && in->dtype == y->dtype && in->scale == y->scale && in->zero_point == y->zero_point;
    dnnl_alg_kind_t alg;
    float a, b;
    return y->dtype == PAR_DTYPE_F32 && par_dn_eltwise_alg(n, &alg, &a, &b);
}

static int same_shape(const par_value *a, const par_value *b)
{
    if (a->rank != b->rank || a->dtype != b->dtype) return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return 0;
    return 1;
}

void par_dn_plan_fusions(dn_plan *p)
{
    const par_graph_desc *g = p->g;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        p->fused_into[i] = -1;
        p->post[i] = -1;
        p->final_out[i] = g->nodes[i].outputs[0];
    }
    for (int32_t i = 0; i < g->n_nodes; i++) {
        if (p->fused_into[i] >= 0 || !is_mat(par_dn_op(g->nodes[i].op))) continue;
        int32_t tail = i, cur = g->nodes[i].outputs[0], sums = 0;
        for (int k = 0; k < 3; k++) {
            if (p->n_uses[cur] != 1 || p->is_output[cur]) break;
            int32_t j = -1;
            for (int32_t m = tail + 1; m < g->n_nodes && j < 0; m++)
                for (int32_t a = 0; a < g->nodes[m].n_inputs; a++)
                    if (g->nodes[m].inputs[a] == cur) j = m;
            if (j < 0) break;
            const par_node *n = &g->nodes[j];
            int ok = 0;
            if (is_add(n) && !sums && g->values[cur].dtype == PAR_DTYPE_F32) {
                int32_t other = n->inputs[0] == cur ? n->inputs[1] : n->inputs[0];
                const par_value *ov = &g->values[other];
                ok = other != cur && same_shape(ov, &g->values[cur]) && same_shape(ov, &g->values[n->outputs[0]]) &&
                     (ov->kind != PAR_VALUE_NODE || ov->producer < i);
                sums += ok;
            } else ok = fusable_act(g, n, &g->values[cur]);
            if (!ok) break;
            p->fused_into[j] = i;
            p->post[tail] = j;
            tail = j;
            cur = n->outputs[0];
        }
        p->final_out[i] = cur;
    }
}

/* does node j read its input k in any layout? */
static int takes_any_layout(const dn_plan *p, int32_t j, int32_t k)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[j];
    const par_value *y = &g->values[n->outputs[0]];
    if (p->fused_into[j] >= 0) return 1; /* a post-op: its input is internal, a sum operand is reordered in */
    const dn_op *r = par_dn_op(n->op);
    if (!r) return 0;
    if (par_dn_is_quant(y->dtype)) {
        /* convolutions and the integer clamps take any layout; add, mul, the average pools, mean and softmax read
         * their inputs through a dequantizing reorder, dequantize is one */
        if (r->family == DN_CONV) return k == 0;
        return (r->flags & DN_F_Q_ANY_LAYOUT) != 0;
    }
    if (r->flags & DN_F_F32_ANY_LAYOUT) return 1;
    if (y->dtype != PAR_DTYPE_F32) return 0;
    if (r->flags & DN_F_FIRST_ANY_LAYOUT) return k == 0;
    dnnl_alg_kind_t alg;
    float a, b;
    if (n->n_inputs == 1 && par_dn_eltwise_alg(n, &alg, &a, &b)) return 1;
    if (is_add(n))
        return same_shape(&g->values[n->inputs[0]], y) && same_shape(&g->values[n->inputs[1]], y);
    return 0;
}

void par_dn_plan_layouts(dn_plan *p)
{
    const par_graph_desc *g = p->g;
    for (int32_t v = 0; v < g->n_values; v++) {
        const par_value *val = &g->values[v];
        p->can_block[v] = val->kind == PAR_VALUE_NODE && par_dn_dt(val->dtype) != dnnl_s32 && val->rank == 4 &&
                          !p->is_output[v] && p->n_uses[v] > 0;
    }
    for (int32_t j = 0; j < g->n_nodes; j++)
        for (int32_t k = 0; k < g->nodes[j].n_inputs; k++)
            if (g->nodes[j].inputs[k] >= 0 && !takes_any_layout(p, j, k)) p->can_block[g->nodes[j].inputs[k]] = 0;
}

par_status par_dn_check_node(const par_graph_desc *g, int32_t ni, par_msg *msg)
{
    const par_node *n = &g->nodes[ni];
    if (n->n_outputs != 1) return par_msgf(msg, PAR_UNSUPPORTED, "%d outputs", n->n_outputs);
    const dn_op *r = par_dn_op(n->op);
    if (is_mat(r)) {
        const par_value *x = par_node_input(g, n, 0);
        if ((r->family == DN_CONV || r->family == DN_DECONV) && x->rank != 4)
            return par_msgf(msg, PAR_UNSUPPORTED, "input of rank %d", x->rank);
        return par_dn_check_mat(g, n, msg);
    }
    return par_dn_check_elt(g, n, msg);
}

par_status par_dn_lower(dn_plan *p, int32_t ni, par_msg *msg)
{
    if (p->fused_into[ni] >= 0) return PAR_OK;
    const dn_op *r = par_dn_op(p->g->nodes[ni].op);
    switch (r ? r->family : DN_NONE) {
    case DN_CONV: return par_dn_lower_conv(p, ni, msg);
    case DN_DECONV: return par_dn_lower_deconv(p, ni, msg);
    case DN_LINEAR: return par_dn_lower_linear(p, ni, msg);
    case DN_MATMUL: return par_dn_lower_matmul(p, ni, msg);
    case DN_QCONVERT: case DN_CONCAT: case DN_STRIDED: case DN_COPY: return par_dn_lower_move(p, ni, r, msg);
    default: return par_dn_lower_elt(p, ni, r, msg);
    }
}
