/*
 * xnnpack_lower_move.c - the xnnpack adapter's data-movement lowerings: concat, reshape / flatten and slice as
 * XNNPACK's strided row copies (copy_nc_x32 for f32, copy_nc_x8 for qu8/qs8: any element of that size, bit-exact,
 * so the quantized lowering uses them too), and pad (constant_pad_nd_x32, f32).
 *
 * Nothing here computes tensor values in C, and nothing calls the driver (xnnpack_lower.c).
 */
#include <stdlib.h>

#include "xnnpack_internal.h"

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
    par_status cs = par_xnn_created(xnn_create_constant_pad_nd_x32(&bits, 0, &op), "constant_pad_nd_x32", msg);
    if (cs != PAR_OK) return cs;
    const void *in;
    void *out;
    if ((cs = par_xnn_io(p, ni, lay, op, &in, &out, msg)) != PAR_OK) return cs;
    return par_xnn_push_op(p, op, xnn_setup_constant_pad_nd_x32(op, (size_t)x->rank, xd, pre, post, in, out, p->pool),
                   "setup_constant_pad_nd_x32", msg);
}
