/*
 * onednn_lower_move.c - the onednn backend's data movement and conversions as oneDNN primitives: concat (the concat
 * primitive; quantized inputs of other params requantized first), permute and slice (reorders from the input's bytes
 * seen through a strided, offset memory descriptor), reshape and flatten (byte copies: the same row-major bytes),
 * quantize and dequantize (reorders with an output scale and zero points).
 *
 * It must not compute any output itself: every number comes from a oneDNN primitive (or a byte copy).
 */
#include <stdlib.h>

#include "onednn_internal.h"

static int64_t norm_axis(int64_t a, int rank)
{
    return a < 0 ? a + rank : a;
}

static par_status lower_concat(dn_plan *p, int32_t ni, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    int32_t yv = p->final_out[ni];
    const par_value *y = &g->values[yv];
    int nin = n->n_inputs;
    dnnl_memory_desc_t *mds = calloc((size_t)nin, sizeof *mds);
    dnnl_exec_arg_t *args = calloc((size_t)nin + 1, sizeof *args);
    par_status st = (mds && args) ? PAR_OK : par_msgf(msg, PAR_ERROR, "out of memory");
    for (int i = 0; i < nin && st == PAR_OK; i++) {
        dnnl_memory_t m = NULL;
        const par_value *xi = &g->values[n->inputs[i]];
        st = par_dn_value_mem(p, n->inputs[i], &m, msg);
        if (st == PAR_OK && par_dn_is_quant(y->dtype) && !par_dn_same_q(xi, y)) {
            /* requantized to the output's params first (the MOVE family: ratio s_in / s_out) */
            const dnnl_memory_desc_t *md = NULL;
            dnnl_memory_t tmp = NULL;
            dnnl_memory_get_memory_desc(m, &md);
            st = par_dn_mem_new(p, md, &tmp, msg);
            if (st == PAR_OK)
                st = par_dn_scaled_reorder(p, ni, m, tmp, xi->scale / y->scale, xi->zero_point, y->zero_point, msg);
            m = tmp;
        }
        if (st == PAR_OK) {
            const dnnl_memory_desc_t *md = NULL;
            dnnl_memory_get_memory_desc(m, &md);
            mds[i] = *md;
            args[i].arg = DNNL_ARG_MULTIPLE_SRC + i;
            args[i].memory = m;
        }
    }
    dnnl_memory_t dst = NULL;
    if (st == PAR_OK) st = par_dn_value_mem(p, yv, &dst, msg);
    dnnl_primitive_desc_t pd = NULL;
    if (st == PAR_OK) {
        const dnnl_memory_desc_t *dmd = NULL;
        dnnl_memory_get_memory_desc(dst, &dmd);
        dnnl_primitive_attr_t attr = NULL;
        st = par_dn_attr(p, &attr, msg);
        if (st == PAR_OK) {
            int axis = (int)norm_axis(par_attr_int(n, "axis", 1), y->rank);
            st = par_dn_check(dnnl_concat_primitive_desc_create(&pd, dmd, nin, axis, mds, attr, p->c->eng),
                              "concat: dnnl_concat_primitive_desc_create", msg);
            dnnl_primitive_attr_destroy(attr);
        }
    }
    if (st == PAR_OK) {
        args[nin].arg = DNNL_ARG_DST;
        args[nin].memory = dst;
        st = par_dn_add_prim(p, ni, "concat", pd, nin + 1, args, msg);
    }
    free(mds);
    free(args);
    return st;
}

/* permute and slice: a reorder from the input's bytes seen through a strided (and offset) descriptor */
static par_status lower_strided(dn_plan *p, int32_t ni, const dn_op *row, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    int32_t xv = n->inputs[0], yv = p->final_out[ni];
    const par_value *x = &g->values[xv], *y = &g->values[yv];
    int r = x->rank;
    int64_t xs[PAR_MAX_RANK];
    for (int i = r - 1, s = 1; i >= 0; i--) {
        xs[i] = s;
        s *= (int)x->dims[i];
    }
    dnnl_dims_t st_, dims;
    int64_t off = 0;
    for (int i = 0; i < r; i++) dims[i] = y->dims[i];
    if (row->variant == DN_PERMUTE) {
        for (int i = 0; i < r; i++) st_[i] = xs[norm_axis(par_attr_ints_at(n, "perm", i, i), r)];
    } else {
        int64_t dim = norm_axis(par_attr_int(n, "dim", 0), r), start = par_attr_int(n, "start", 0);
        int64_t step = par_attr_int(n, "step", 1);
        if (start < 0) start += x->dims[dim];
        if (start < 0) start = 0;
        if (start > x->dims[dim]) start = x->dims[dim];
        for (int i = 0; i < r; i++) st_[i] = xs[i];
        st_[dim] = xs[dim] * step;
        off = start * xs[dim];
    }
    dnnl_memory_desc_t smd;
    if (dnnl_memory_desc_init_by_strides(&smd, r, dims, par_dn_dt(x->dtype), st_) != dnnl_success)
        return par_msgf(msg, PAR_UNSUPPORTED, "this slice is no oneDNN memory descriptor (dnnl_memory_desc_init_by_strides "
                        "refuses a step whose strided extent passes the next dimension's stride)");
    par_status st;
    smd.offset0 = off;
    dnnl_memory_t xm = NULL, view = NULL, ym = NULL;
    if ((st = par_dn_value_mem(p, xv, &xm, msg)) != PAR_OK) return st;
    if ((st = par_dn_value_mem(p, yv, &ym, msg)) != PAR_OK) return st;
    /* the view shares x's buffer; a copy of x into a buffer of its own keeps handles simple across bind */
    dnnl_memory_desc_t full;
    if ((st = par_dn_md_plain(&full, r, x->dims, par_dn_dt(x->dtype), msg)) != PAR_OK) return st;
    size_t need = dnnl_memory_desc_get_size(&full);
    int64_t one[1] = {(int64_t)need};
    dnnl_memory_desc_t bytes;
    if ((st = par_dn_md_tag(&bytes, 1, one, dnnl_u8, dnnl_a, msg)) != PAR_OK) return st;
    dnnl_memory_t buf = NULL;
    if ((st = par_dn_mem_new(p, &bytes, &buf, msg)) != PAR_OK) return st;
    void *h = NULL;
    dnnl_memory_get_data_handle(buf, &h);
    st = par_dn_check(dnnl_memory_create(&view, &smd, p->c->eng, h), "dnnl_memory_create", msg);
    if (st != PAR_OK) return st;
    if ((st = par_dn_add_copy(p, ni, xm, buf, (size_t)x->numel * par_dtype_size(x->dtype), msg)) != PAR_OK) {
        dnnl_memory_destroy(view);
        return st;
    }
    if ((st = par_dn_own(p, view, msg)) != PAR_OK) return st;
    return par_dn_reorder(p, ni, view, ym, NULL, 0, msg);
}

static par_status lower_copy(dn_plan *p, int32_t ni, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    int32_t xv = n->inputs[0], yv = p->final_out[ni];
    dnnl_memory_t xm = NULL, ym = NULL;
    par_status st = par_dn_value_mem(p, xv, &xm, msg);
    if (st == PAR_OK) st = par_dn_value_mem(p, yv, &ym, msg);
    if (st != PAR_OK) return st;
    return par_dn_add_copy(p, ni, xm, ym, (size_t)g->values[yv].numel * par_dtype_size(g->values[yv].dtype), msg);
}

static par_status lower_qconvert(dn_plan *p, int32_t ni, const dn_op *r, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    int32_t xv = n->inputs[0], yv = p->final_out[ni];
    const par_value *x = &g->values[xv], *y = &g->values[yv];
    dnnl_memory_t xm = NULL, ym = NULL;
    par_status st = par_dn_value_mem(p, xv, &xm, msg);
    if (st == PAR_OK) st = par_dn_value_mem(p, yv, &ym, msg);
    if (st != PAR_OK) return st;
    if (r->variant == DN_DEQUANTIZE) return par_dn_scaled_reorder(p, ni, xm, ym, x->scale, x->zero_point, 0, msg);
    if (par_dn_is_quant(x->dtype))
        return par_dn_scaled_reorder(p, ni, xm, ym, x->scale / y->scale, x->zero_point, y->zero_point, msg);
    /* oneDNN's reorder multiplies: x * (1 / s), not x / s */
    return par_dn_scaled_reorder(p, ni, xm, ym, 1.0f / y->scale, 0, y->zero_point, msg);
}

par_status par_dn_lower_move(dn_plan *p, int32_t ni, const dn_op *r, par_msg *msg)
{
    switch (r->family) {
    case DN_QCONVERT: return lower_qconvert(p, ni, r, msg);
    case DN_CONCAT: return lower_concat(p, ni, msg);
    case DN_STRIDED: return lower_strided(p, ni, r, msg);
    default: return lower_copy(p, ni, msg);
    }
}
