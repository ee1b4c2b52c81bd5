/*
 * onednn_lower_elt.c - every op but the matrix ones as oneDNN primitives on parity's plain layouts: eltwise
 * (activations), binary with broadcast, prelu, pooling (v2: dilation), softmax and logsoftmax (softmax v2),
 * resampling, batch and layer normalization (inference), reduction (mean, sum, amax), and what every op may be
 * asked (supports). Data movement, concat, quantize and dequantize are in onednn_lower_move.c.
 *
 * Quantized nodes: clip-like activations on the stored integers (eltwise clip with integer bounds) after a
 * requantizing reorder when the output params differ; max pooling, concat and the moves on integers when the
 * params agree; add, mul, the average pools and mean through f32: a dequantizing reorder of each input
 * (scale * (q - zp)), the f32 primitive, a requantizing reorder (rne(y / s_out) + zp, saturated), as frameworks fall
 * back when oneDNN has no integer form with zero points.
 *
 * It must not compute any output itself: every number comes from a oneDNN primitive (or a byte copy).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "onednn_internal.h"

static int64_t norm_axis(int64_t a, int rank)
{
    return a < 0 ? a + rank : a;
}

/* The resampling checks: the sizes' ratio must be the scale PyTorch maps coordinates with. */
static par_status check_resample(const par_graph_desc *g, const par_node *n, const dn_op *r, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0), *y = par_node_output(g, n, 0);
    if (r->variant == DN_UP_NEAREST && (y->dims[2] % x->dims[2] || y->dims[3] % x->dims[3]))
        /* floor(dst * in / out) is floor((dst + 0.5) * in / out), oneDNN's nearest, for integer factors */
        return par_msgf(msg, PAR_UNSUPPORTED, "nearest with a non-integer factor (%" PRId64 " -> %" PRId64
                        "): oneDNN's nearest takes pixel centres (nearest-exact)", x->dims[2], y->dims[2]);
    if (par_attr_count(n, "scale") == 2) {
        /* oneDNN maps coordinates with out / in; PyTorch with 1 / scale: the same only when out = in * scale */
        for (int k = 0; k < 2; k++) {
            int64_t in = x->dims[2 + k], out = y->dims[2 + k];
            /* PyTorch's same-size copy, and nearest's dst / 2 at twice the size (docs/ops.md), are the sizes' ratio */
            if (out == in && r->variant != DN_UP_NEAREST_EXACT) continue;
            if (out == 2 * in && r->variant == DN_UP_NEAREST) continue;
            if ((double)out != (double)in * par_attr_floats_at(n, "scale", k, 1))
                return par_msgf(msg, PAR_UNSUPPORTED, "scale %g maps %" PRId64 " to %" PRId64 ": oneDNN's resampling "
                                "takes its coordinate ratio from the sizes, PyTorch from 1 / scale",
                                par_attr_floats_at(n, "scale", k, 1), in, out);
        }
    }
    if (r->variant == DN_UP_LINEAR && par_attr_int(n, "align_corners", 0))
        return par_msgf(msg, PAR_UNSUPPORTED, "align_corners=1: oneDNN's linear resampling takes pixel centres");
    return PAR_OK;
}

/* A quantized node: what its row allows. */
static par_status check_quant(const par_graph_desc *g, const par_node *n, const dn_op *r, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0), *y = par_node_output(g, n, 0);
    if (r->flags & (DN_F_CLIP | DN_F_Q_VIA_F32 | DN_F_Q_OK)) return PAR_OK; /* max_pool2d: requantized first */
    if (r->flags & DN_F_Q_SAME) {
        if (!par_dn_same_q(x, y))
            return par_msgf(msg, PAR_UNSUPPORTED, "quantized %s with output params other than its input's", n->op);
        return PAR_OK;
    }
    if (r->family == DN_CONCAT) {
        for (int32_t i = 0; i < n->n_inputs; i++)
            if (par_node_input(g, n, i)->dtype != y->dtype)
                return par_msgf(msg, PAR_UNSUPPORTED, "quantized concat of mixed dtypes");
        return PAR_OK;
    }
    return par_msgf(msg, PAR_UNSUPPORTED, "no quantized form of %s in this backend (oneDNN 2.6 has no int8 %s "
                    "with zero points)", n->op, n->op);
}

par_status par_dn_check_elt(const par_graph_desc *g, const par_node *n, par_msg *msg)
{
    const par_value *y = par_node_output(g, n, 0);
    const dn_op *r = par_dn_op(n->op);
    if (!r) return par_msgf(msg, PAR_UNSUPPORTED, "no oneDNN primitive for %s in this backend", n->op);
    if (r->family == DN_NONE) return par_msgf(msg, PAR_UNSUPPORTED, "%s", r->why);
    for (int32_t i = 0; i < n->n_inputs; i++) {
        const par_value *v = par_node_input(g, n, i);
        if (v && par_dn_dt(v->dtype) == dnnl_data_type_undef)
            return par_msgf(msg, PAR_UNSUPPORTED, "input %d ('%s') is %s", i, v->name, par_dtype_name(v->dtype));
    }
    if (par_dn_dt(y->dtype) == dnnl_data_type_undef)
        return par_msgf(msg, PAR_UNSUPPORTED, "output is %s", par_dtype_name(y->dtype));
    if (r->family == DN_QCONVERT) return PAR_OK;
    if (r->family == DN_POOL && r->variant == DN_POOL_ADAPTIVE) {
        const par_value *x = par_node_input(g, n, 0);
        if (x->dims[2] % y->dims[2] || x->dims[3] % y->dims[3])
            return par_msgf(msg, PAR_UNSUPPORTED, "adaptive windows of unequal sizes (%" PRId64 "x%" PRId64 " -> %"
                            PRId64 "x%" PRId64 "): oneDNN's pooling has one kernel", x->dims[2], x->dims[3],
                            y->dims[2], y->dims[3]);
    }
    par_status st = r->family == DN_RESAMPLE ? check_resample(g, n, r, msg) : PAR_OK;
    if (st != PAR_OK) return st;
    if (par_dn_is_quant(y->dtype)) return check_quant(g, n, r, msg);
    for (int32_t i = 0; i < n->n_inputs; i++) {
        const par_value *v = par_node_input(g, n, i);
        if (v && v->dtype != PAR_DTYPE_F32 && !(r->flags & DN_F_ANY_PARAM_DTYPE))
            return par_msgf(msg, PAR_UNSUPPORTED, "input %d ('%s') is %s", i, v->name, par_dtype_name(v->dtype));
    }
    if (r->family == DN_BINARY) {
        const par_value *x0 = par_node_input(g, n, 0), *x1 = par_node_input(g, n, 1);
        int b0 = x0->numel != y->numel, b1 = x1->numel != y->numel;
        if (b0 && b1)
            return par_msgf(msg, PAR_UNSUPPORTED, "both inputs broadcast; oneDNN's binary broadcasts only its second "
                            "source");
        if (b0 && r->alg == dnnl_binary_div)
            return par_msgf(msg, PAR_UNSUPPORTED, "the first input broadcasts; oneDNN's binary broadcasts only its "
                            "second source, and div does not commute");
    }
    if (r->family == DN_PRELU) {
        const par_value *x = par_node_input(g, n, 0), *sl = par_node_input(g, n, 1);
        if (sl->numel != 1 && (x->rank < 2 || sl->numel != x->dims[1]))
            return par_msgf(msg, PAR_UNSUPPORTED, "slope of %" PRId64 " elements", sl->numel);
    }
    if (r->family == DN_BNORM)
        for (int32_t i = 1; i < 5; i++)
            if (par_node_input(g, n, i)->kind != PAR_VALUE_CONST)
                return par_msgf(msg, PAR_UNSUPPORTED, "batch_norm input %d is not a constant", i);
    return PAR_OK;
}

static par_status plain_md(const par_value *v, dnnl_data_type_t dt, dnnl_memory_desc_t *md, par_msg *msg)
{
    return par_dn_md_plain(md, v->rank, v->dims, dt, msg);
}

static par_status prim_pd(dn_plan *p, const void *desc, dnnl_primitive_desc_t *pd, const char *what, par_msg *msg)
{
    dnnl_primitive_attr_t attr = NULL;
    par_status st = par_dn_attr(p, &attr, msg);
    if (st != PAR_OK) return st;
    st = par_dn_check(dnnl_primitive_desc_create(pd, desc, attr, p->c->eng, NULL), what, msg);
    dnnl_primitive_attr_destroy(attr);
    return st;
}

/* the f32 image of value v: its memory when f32, else a dequantized copy */
static par_status f32_of(dn_plan *p, int32_t ni, int32_t v, dnnl_memory_t *out, par_msg *msg)
{
    const par_value *val = &p->g->values[v];
    dnnl_memory_t m = NULL;
    par_status st = par_dn_value_mem(p, v, &m, msg);
    if (st != PAR_OK || val->dtype == PAR_DTYPE_F32) {
        *out = m;
        return st;
    }
    dnnl_memory_desc_t md;
    if ((st = plain_md(val, dnnl_f32, &md, msg)) != PAR_OK) return st;
    if ((st = par_dn_mem_new(p, &md, out, msg)) != PAR_OK) return st;
    return par_dn_scaled_reorder(p, ni, m, *out, val->scale, val->zero_point, 0, msg);
}

/* where an f32 result for value v goes: v's memory when f32, else a temporary that requant_out() stores */
static par_status f32_dst(dn_plan *p, int32_t v, dnnl_memory_t *out, par_msg *msg)
{
    const par_value *val = &p->g->values[v];
    if (val->dtype == PAR_DTYPE_F32) return par_dn_value_mem(p, v, out, msg);
    dnnl_memory_desc_t md;
    par_status st = plain_md(val, dnnl_f32, &md, msg);
    if (st == PAR_OK) st = par_dn_mem_new(p, &md, out, msg);
    return st;
}

static par_status requant_out(dn_plan *p, int32_t ni, int32_t v, dnnl_memory_t tmp, par_msg *msg)
{
    const par_value *val = &p->g->values[v];
    if (val->dtype == PAR_DTYPE_F32) return PAR_OK;
    dnnl_memory_t m = NULL;
    par_status st = par_dn_value_mem(p, v, &m, msg);
    if (st != PAR_OK) return st;
    return par_dn_scaled_reorder(p, ni, tmp, m, 1.0f / val->scale, 0, val->zero_point, msg);
}

/* x op c for a scalar constant c (a 1-element u8/s8 tensor broadcast as src1): binary max or min, exact on the
 * stored integers (oneDNN 2.6's int8 eltwise has relu and linear only, no clip) */
static par_status int_bound(dn_plan *p, int32_t ni, dnnl_memory_t src, dnnl_memory_t dst, dnnl_alg_kind_t alg,
                            float bound, par_msg *msg)
{
    const dnnl_memory_desc_t *md = NULL;
    dnnl_memory_get_memory_desc(dst, &md);
    int64_t ones[PAR_MAX_RANK];
    for (int i = 0; i < md->ndims; i++) ones[i] = 1;
    dnnl_memory_desc_t cmd;
    par_status st = par_dn_md_plain(&cmd, md->ndims, ones, md->data_type, msg);
    if (st != PAR_OK) return st;
    int8_t s8 = (int8_t)bound;
    uint8_t u8 = (uint8_t)bound;
    dnnl_memory_t cm = NULL;
    st = par_dn_mem_const(p, &cmd, md->data_type == dnnl_u8 ? (const void *)&u8 : (const void *)&s8, 1, &cm, msg);
    if (st != PAR_OK) return st;
    dnnl_binary_desc_t bd;
    st = par_dn_check(dnnl_binary_desc_init(&bd, alg, md, &cmd, md), "binary: dnnl_binary_desc_init", msg);
    dnnl_primitive_desc_t pd = NULL;
    if (st == PAR_OK) st = prim_pd(p, &bd, &pd, "binary: dnnl_primitive_desc_create", msg);
    if (st != PAR_OK) return st;
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC_0, src}, {DNNL_ARG_SRC_1, cm}, {DNNL_ARG_DST, dst}};
    return par_dn_add_prim(p, ni, "binary", pd, 3, args, msg);
}

static par_status lower_eltwise(dn_plan *p, int32_t ni, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    int32_t xv = n->inputs[0], yv = p->final_out[ni];
    const par_value *x = &g->values[xv], *y = &g->values[yv];
    dnnl_alg_kind_t alg;
    float a, b;
    dnnl_memory_t src = NULL, dst = NULL;
    par_status st;
    if (par_dn_is_quant(y->dtype)) {
        /* requantize when the params differ, then bound the stored integers */
        par_dn_qclip_range(n, y, &a, &b);
        float qmin = y->dtype == PAR_DTYPE_QU8 ? 0 : -128, qmax = y->dtype == PAR_DTYPE_QU8 ? 255 : 127;
        dnnl_memory_t back = NULL;
        if ((st = par_dn_value_mem(p, xv, &src, msg)) != PAR_OK) return st;
        const dnnl_memory_desc_t *md = NULL;
        dnnl_memory_get_memory_desc(src, &md);
        if (x->dtype != y->dtype) return par_msgf(msg, PAR_UNSUPPORTED, "%s from %s to %s", n->op,
                                                  par_dtype_name(x->dtype), par_dtype_name(y->dtype));
        if ((st = par_dn_like_dst(p, yv, md, &dst, &back, msg)) != PAR_OK) return st;
        if (!par_dn_same_q(x, y)) {
            dnnl_memory_t tmp = NULL;
            if ((st = par_dn_mem_new(p, md, &tmp, msg)) != PAR_OK) return st;
            if ((st = par_dn_scaled_reorder(p, ni, src, tmp, x->scale / y->scale, x->zero_point, y->zero_point, msg)) != PAR_OK)
                return st;
            src = tmp;
        }
        int lo = a > qmin, hi = b < qmax;
        if (!lo && !hi) st = par_dn_reorder(p, ni, src, dst, NULL, 0, msg);
        else if (lo && hi) {
            dnnl_memory_t tmp = NULL;
            st = par_dn_mem_new(p, md, &tmp, msg);
            if (st == PAR_OK) st = int_bound(p, ni, src, tmp, dnnl_binary_max, a, msg);
            if (st == PAR_OK) st = int_bound(p, ni, tmp, dst, dnnl_binary_min, b, msg);
        } else st = lo ? int_bound(p, ni, src, dst, dnnl_binary_max, a, msg)
                       : int_bound(p, ni, src, dst, dnnl_binary_min, b, msg);
        if (st == PAR_OK && back) st = par_dn_reorder(p, ni, dst, back, NULL, 0, msg);
        return st;
    }
    if (!par_dn_eltwise_alg(n, &alg, &a, &b)) return par_msgf(msg, PAR_UNSUPPORTED, "no eltwise for %s", n->op);
    dnnl_memory_t back = NULL;
    if ((st = par_dn_value_mem(p, xv, &src, msg)) != PAR_OK) return st;
    const dnnl_memory_desc_t *md = NULL;
    dnnl_memory_get_memory_desc(src, &md);
    if ((st = par_dn_like_dst(p, yv, md, &dst, &back, msg)) != PAR_OK) return st;
    dnnl_eltwise_desc_t ed;
    st = par_dn_check(dnnl_eltwise_forward_desc_init(&ed, dnnl_forward_inference, alg, md, a, b),
                      "eltwise: dnnl_eltwise_forward_desc_init", msg);
    dnnl_primitive_desc_t pd = NULL;
    if (st == PAR_OK) st = prim_pd(p, &ed, &pd, "eltwise: dnnl_primitive_desc_create", msg);
    if (st != PAR_OK) return st;
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
    if ((st = par_dn_add_prim(p, ni, "eltwise", pd, 2, args, msg)) != PAR_OK) return st;
    return back ? par_dn_reorder(p, ni, dst, back, NULL, 0, msg) : PAR_OK;
}

/* f32 operands of the output's shape, in whatever layout they are: src1 reordered to src0's when they differ */
static par_status binary_same(dn_plan *p, int32_t ni, dnnl_alg_kind_t alg, int32_t i0, int32_t i1, int32_t yv,
                              par_msg *msg)
{
    dnnl_memory_t s0 = NULL, s1 = NULL, dst = NULL, back = NULL;
    const dnnl_memory_desc_t *md0 = NULL, *md1 = NULL;
    par_status st = par_dn_value_mem(p, i0, &s0, msg);
    if (st == PAR_OK) st = par_dn_value_mem(p, i1, &s1, msg);
    if (st != PAR_OK) return st;
    dnnl_memory_get_memory_desc(s0, &md0);
    dnnl_memory_get_memory_desc(s1, &md1);
    if (!dnnl_memory_desc_equal(md0, md1)) {
        dnnl_memory_t t = NULL;
        if ((st = par_dn_mem_new(p, md0, &t, msg)) != PAR_OK) return st;
        if ((st = par_dn_reorder(p, ni, s1, t, NULL, p->g->values[i1].kind == PAR_VALUE_CONST, msg)) != PAR_OK)
            return st;
        s1 = t;
    }
    if ((st = par_dn_like_dst(p, yv, md0, &dst, &back, msg)) != PAR_OK) return st;
    dnnl_binary_desc_t bd;
    st = par_dn_check(dnnl_binary_desc_init(&bd, alg, md0, md0, md0), "binary: dnnl_binary_desc_init", msg);
    dnnl_primitive_desc_t pd = NULL;
    if (st == PAR_OK) st = prim_pd(p, &bd, &pd, "binary: dnnl_primitive_desc_create", msg);
    if (st != PAR_OK) return st;
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC_0, s0}, {DNNL_ARG_SRC_1, s1}, {DNNL_ARG_DST, dst}};
    if ((st = par_dn_add_prim(p, ni, "binary", pd, 3, args, msg)) != PAR_OK) return st;
    return back ? par_dn_reorder(p, ni, dst, back, NULL, 0, msg) : PAR_OK;
}

static par_status lower_binary(dn_plan *p, int32_t ni, const dn_op *row, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    int32_t yv = p->final_out[ni];
    const par_value *y = &g->values[yv];
    int32_t i0 = n->inputs[0], i1 = n->inputs[1];
    int negate = 0;
    if (g->values[i0].numel != y->numel) {
        /* the broadcast operand second: add, mul commute; a - b is computed as -(b - a), exactly (up to the sign
         * of a zero difference), by an eltwise linear post-op of alpha -1 */
        int32_t t = i0;
        i0 = i1;
        i1 = t;
        negate = row->alg == dnnl_binary_sub;
    }
    const dnnl_alg_kind_t alg = (dnnl_alg_kind_t)row->alg;
    if (y->dtype == PAR_DTYPE_F32 && g->values[i0].numel == y->numel && g->values[i1].numel == y->numel &&
        g->values[i0].rank == y->rank && g->values[i1].rank == y->rank)
        return binary_same(p, ni, alg, i0, i1, yv, msg);
    dnnl_memory_t s0 = NULL, s1 = NULL, dst = NULL, s1v = NULL;
    par_status st = f32_of(p, ni, i0, &s0, msg);
    if (st == PAR_OK) st = f32_of(p, ni, i1, &s1, msg);
    if (st == PAR_OK) st = f32_dst(p, yv, &dst, msg);
    if (st != PAR_OK) return st;
    /* src1 at the output's rank with leading 1s (the same bytes) */
    const par_value *v1 = &g->values[i1];
    int64_t d1[PAR_MAX_RANK];
    int r = y->rank;
    for (int i = 0; i < r; i++) d1[i] = i < r - v1->rank ? 1 : v1->dims[i - (r - v1->rank)];
    dnnl_memory_desc_t md0, md1, mdy;
    st = plain_md(y, dnnl_f32, &md0, msg);
    if (st == PAR_OK) st = par_dn_md_plain(&md1, r, d1, dnnl_f32, msg);
    if (st == PAR_OK) st = plain_md(y, dnnl_f32, &mdy, msg);
    if (st != PAR_OK) return st;
    void *h = NULL;
    dnnl_memory_get_data_handle(s1, &h);
    if (v1->rank != r) {
        /* the same buffer under the broadcast descriptor: a copy keeps handles simple across bind */
        if ((st = par_dn_mem_new(p, &md1, &s1v, msg)) != PAR_OK) return st;
        if ((st = par_dn_add_copy(p, ni, s1, s1v, (size_t)v1->numel * 4, msg)) != PAR_OK) return st;
        s1 = s1v;
    }
    dnnl_binary_desc_t bd;
    st = par_dn_check(dnnl_binary_desc_init(&bd, alg, &md0, &md1, &mdy), "binary: dnnl_binary_desc_init", msg);
    dnnl_primitive_desc_t pd = NULL;
    if (st == PAR_OK && negate) {
        dnnl_primitive_attr_t attr = NULL;
        dnnl_post_ops_t po = NULL;
        st = par_dn_attr(p, &attr, msg);
        if (st == PAR_OK) st = par_dn_check(dnnl_post_ops_create(&po), "dnnl_post_ops_create", msg);
        if (st == PAR_OK)
            st = par_dn_check(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_linear, -1.0f, 0.0f),
                              "dnnl_post_ops_append_eltwise(linear)", msg);
        if (st == PAR_OK)
            st = par_dn_check(dnnl_primitive_attr_set_post_ops(attr, po), "dnnl_primitive_attr_set_post_ops", msg);
        if (st == PAR_OK)
            st = par_dn_check(dnnl_primitive_desc_create(&pd, &bd, attr, p->c->eng, NULL),
                              "binary: dnnl_primitive_desc_create", msg);
        if (po) dnnl_post_ops_destroy(po);
        if (attr) dnnl_primitive_attr_destroy(attr);
    } else if (st == PAR_OK) st = prim_pd(p, &bd, &pd, "binary: dnnl_primitive_desc_create", msg);
    if (st != PAR_OK) return st;
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC_0, s0}, {DNNL_ARG_SRC_1, s1}, {DNNL_ARG_DST, dst}};
    if ((st = par_dn_add_prim(p, ni, "binary", pd, 3, args, msg)) != PAR_OK) return st;
    return requant_out(p, ni, yv, dst, msg);
}

static par_status lower_pool(dn_plan *p, int32_t ni, const dn_op *r, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    int32_t xv = n->inputs[0], yv = p->final_out[ni];
    const par_value *x = &g->values[xv], *y = &g->values[yv];
    int64_t H = x->dims[2], W = x->dims[3], OH = y->dims[2], OW = y->dims[3];
    int64_t kh, kw, sh, sw, dh = 1, dw = 1, pt = 0, pl = 0, pb = 0, pr = 0;
    dnnl_alg_kind_t alg = dnnl_pooling_avg_exclude_padding;
    if (r->variant == DN_POOL_GLOBAL) kh = H, kw = W, sh = H, sw = W;
    else if (r->variant == DN_POOL_ADAPTIVE) kh = sh = H / OH, kw = sw = W / OW;
    else {
        kh = par_attr_ints_at(n, "kernel", 0, 1), kw = par_attr_ints_at(n, "kernel", 1, 1);
        sh = par_attr_ints_at(n, "stride", 0, kh), sw = par_attr_ints_at(n, "stride", 1, kw);
        pt = par_attr_ints_at(n, "padding", 0, 0), pl = par_attr_ints_at(n, "padding", 1, 0);
        pb = par_attr_ints_at(n, "padding", 2, 0), pr = par_attr_ints_at(n, "padding", 3, 0);
        if (r->alg == dnnl_pooling_max) {
            alg = dnnl_pooling_max;
            dh = par_attr_ints_at(n, "dilation", 0, 1), dw = par_attr_ints_at(n, "dilation", 1, 1);
        } else if (par_attr_int(n, "count_include_pad", 1)) {
            alg = dnnl_pooling_avg_include_padding;
            /* PyTorch clips a ceil_mode window to the padded extent; oneDNN would count the extra end padding */
            int64_t eh = (OH - 1) * sh + kh - (H + pt + pb), ew = (OW - 1) * sw + kw - (W + pl + pr);
            if (eh > 0 || ew > 0)
                return par_msgf(msg, PAR_UNSUPPORTED, "avg_pool2d with count_include_pad and a ceil_mode window past "
                                "the padding: oneDNN would count the extra padding in the divisor");
        }
        /* ceil_mode: the end padding grows so that oneDNN's floor gives the output size */
        int64_t eh = (OH - 1) * sh + (kh - 1) * dh + 1 - (H + pt + pb), ew = (OW - 1) * sw + (kw - 1) * dw + 1 - (W + pl + pr);
        if (eh > 0) pb += eh;
        if (ew > 0) pr += ew;
    }
    dnnl_memory_t src = NULL, dst = NULL;
    int q = par_dn_is_quant(y->dtype) && alg != dnnl_pooling_max;
    par_status st = q ? f32_of(p, ni, xv, &src, msg) : par_dn_value_mem(p, xv, &src, msg);
    if (st == PAR_OK) st = q ? f32_dst(p, yv, &dst, msg) : par_dn_value_mem(p, yv, &dst, msg);
    if (st == PAR_OK && alg == dnnl_pooling_max && par_dn_is_quant(y->dtype) && !par_dn_same_q(x, y)) {
        /* requantization is monotone: requantize to the output's params (ratio s_in / s_out), then select */
        const dnnl_memory_desc_t *md = NULL;
        dnnl_memory_t tmp = NULL;
        dnnl_memory_get_memory_desc(src, &md);
        st = par_dn_mem_new(p, md, &tmp, msg);
        if (st == PAR_OK) st = par_dn_scaled_reorder(p, ni, src, tmp, x->scale / y->scale, x->zero_point, y->zero_point, msg);
        src = tmp;
    }
    if (st != PAR_OK) return st;
    const dnnl_memory_desc_t *smd = NULL, *dmd = NULL;
    dnnl_memory_get_memory_desc(src, &smd);
    dnnl_memory_get_memory_desc(dst, &dmd);
    dnnl_dims_t strides = {sh, sw}, kernel = {kh, kw}, dil = {dh - 1, dw - 1}, padl = {pt, pl}, padr = {pb, pr};
    dnnl_pooling_v2_desc_t pdsc;
    st = par_dn_check(dnnl_pooling_v2_forward_desc_init(&pdsc, dnnl_forward_inference, alg, smd, dmd, strides, kernel,
                                                        dil, padl, padr),
                      "pooling: dnnl_pooling_v2_forward_desc_init", msg);
    dnnl_primitive_desc_t pd = NULL;
    if (st == PAR_OK) st = prim_pd(p, &pdsc, &pd, "pooling: dnnl_primitive_desc_create", msg);
    if (st != PAR_OK) return st;
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
    if ((st = par_dn_add_prim(p, ni, "pool", pd, 2, args, msg)) != PAR_OK) return st;
    return q ? requant_out(p, ni, yv, dst, msg) : PAR_OK;
}

static par_status lower_softmax(dn_plan *p, int32_t ni, const dn_op *r, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    int32_t xv = n->inputs[0], yv = p->final_out[ni];
    const par_value *y = &g->values[yv];
    dnnl_memory_t src = NULL, dst = NULL;
    par_status st = f32_of(p, ni, xv, &src, msg);
    if (st == PAR_OK) st = f32_dst(p, yv, &dst, msg);
    if (st != PAR_OK) return st;
    const dnnl_memory_desc_t *md = NULL;
    dnnl_memory_get_memory_desc(dst, &md);
    int axis = (int)norm_axis(par_attr_int(n, "axis", -1), y->rank > 0 ? y->rank : 1);
    dnnl_softmax_v2_desc_t sd;
    st = par_dn_check(dnnl_softmax_v2_forward_desc_init(&sd, dnnl_forward_inference,
                                                        (dnnl_alg_kind_t)r->alg,
                                                        md, md, axis),
                      "softmax: dnnl_softmax_v2_forward_desc_init", msg);
    dnnl_primitive_desc_t pd = NULL;
    if (st == PAR_OK) st = prim_pd(p, &sd, &pd, "softmax: dnnl_primitive_desc_create", msg);
    if (st != PAR_OK) return st;
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
    if ((st = par_dn_add_prim(p, ni, "softmax", pd, 2, args, msg)) != PAR_OK) return st;
    return requant_out(p, ni, yv, dst, msg);
}

static par_status lower_resample(dn_plan *p, int32_t ni, const dn_op *r, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    int32_t xv = n->inputs[0], yv = p->final_out[ni];
    const int lin = r->alg == dnnl_resampling_linear;
    dnnl_memory_t src = NULL, dst = NULL;
    par_status st = lin ? f32_of(p, ni, xv, &src, msg) : par_dn_value_mem(p, xv, &src, msg);
    if (st == PAR_OK) st = lin ? f32_dst(p, yv, &dst, msg) : par_dn_value_mem(p, yv, &dst, msg);
    if (st != PAR_OK) return st;
    const dnnl_memory_desc_t *smd = NULL, *dmd = NULL;
    dnnl_memory_get_memory_desc(src, &smd);
    dnnl_memory_get_memory_desc(dst, &dmd);
    /* no factors: oneDNN's kernels map coordinates with the sizes (supports() refused scales they disagree with) */
    const float *fp = NULL;
    dnnl_resampling_desc_t rd;
    st = par_dn_check(dnnl_resampling_forward_desc_init(&rd, dnnl_forward_inference,
                                                        lin ? dnnl_resampling_linear : dnnl_resampling_nearest, fp,
                                                        smd, dmd),
                      "resampling: dnnl_resampling_forward_desc_init", msg);
    dnnl_primitive_desc_t pd = NULL;
    if (st == PAR_OK) st = prim_pd(p, &rd, &pd, "resampling: dnnl_primitive_desc_create", msg);
    if (st != PAR_OK) return st;
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
    if ((st = par_dn_add_prim(p, ni, "resampling", pd, 2, args, msg)) != PAR_OK) return st;
    return lin ? requant_out(p, ni, yv, dst, msg) : PAR_OK;
}

static par_status lower_bnorm(dn_plan *p, int32_t ni, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    int32_t xv = n->inputs[0], yv = p->final_out[ni];
    const par_value *x = &g->values[xv];
    dnnl_memory_t src = NULL, dst = NULL, mean = NULL, var = NULL, scale = NULL, shift = NULL, back = NULL;
    const dnnl_memory_desc_t *md = NULL;
    par_status st = par_dn_value_mem(p, xv, &src, msg);
    if (st == PAR_OK) {
        dnnl_memory_get_memory_desc(src, &md);
        st = par_dn_like_dst(p, yv, md, &dst, &back, msg);
    }
    /* parity's inputs: x, weight, bias, running_mean, running_var */
    if (st == PAR_OK) st = par_dn_value_mem(p, n->inputs[1], &scale, msg);
    if (st == PAR_OK) st = par_dn_value_mem(p, n->inputs[2], &shift, msg);
    if (st == PAR_OK) st = par_dn_value_mem(p, n->inputs[3], &mean, msg);
    if (st == PAR_OK) st = par_dn_value_mem(p, n->inputs[4], &var, msg);
    if (st != PAR_OK) return st;
    (void)x;
    dnnl_batch_normalization_desc_t bd;
    st = par_dn_check(dnnl_batch_normalization_forward_desc_init(&bd, dnnl_forward_inference, md,
                                                                 (float)par_attr_float(n, "eps", 1e-5),
                                                                 dnnl_use_global_stats | dnnl_use_scale |
                                                                     dnnl_use_shift),
                      "batch_normalization: dnnl_batch_normalization_forward_desc_init", msg);
    dnnl_primitive_desc_t pd = NULL;
    if (st == PAR_OK) st = prim_pd(p, &bd, &pd, "batch_normalization: dnnl_primitive_desc_create", msg);
    if (st != PAR_OK) return st;
    dnnl_exec_arg_t args[6] = {{DNNL_ARG_SRC, src},      {DNNL_ARG_DST, dst},        {DNNL_ARG_MEAN, mean},
                               {DNNL_ARG_VARIANCE, var}, {DNNL_ARG_SCALE, scale},    {DNNL_ARG_SHIFT, shift}};
    if ((st = par_dn_add_prim(p, ni, "bnorm", pd, 6, args, msg)) != PAR_OK) return st;
    return back ? par_dn_reorder(p, ni, dst, back, NULL, 0, msg) : PAR_OK;
}

/* a value's bytes as a plain memory of another shape: the constant's copy, or a copy step from its memory */
static par_status bytes_as(dn_plan *p, int32_t ni, int32_t v, int rank, const int64_t *dims, dnnl_memory_t *out,
                           par_msg *msg)
{
    const par_value *val = &p->g->values[v];
    dnnl_memory_desc_t md;
    par_status st = par_dn_md_plain(&md, rank, dims, par_dn_dt(val->dtype), msg);
    if (st != PAR_OK) return st;
    if (val->kind == PAR_VALUE_CONST)
        return par_dn_mem_const(p, &md, val->data, (size_t)val->numel * par_dtype_size(val->dtype), out, msg);
    dnnl_memory_t vm = NULL;
    if ((st = par_dn_value_mem(p, v, &vm, msg)) != PAR_OK) return st;
    if ((st = par_dn_mem_new(p, &md, out, msg)) != PAR_OK) return st;
    return par_dn_add_copy(p, ni, vm, *out, (size_t)val->numel * par_dtype_size(val->dtype), msg);
}

/* prelu: the slope as weights [1, C, 1, ...] (or all ones) broadcast over x */
static par_status lower_prelu(dn_plan *p, int32_t ni, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    int32_t xv = n->inputs[0], yv = p->final_out[ni];
    const par_value *x = &g->values[xv], *sl = &g->values[n->inputs[1]];
    int64_t wd[PAR_MAX_RANK];
    int r = x->rank > 0 ? x->rank : 1;
    for (int i = 0; i < r; i++) wd[i] = 1;
    if (sl->numel > 1) wd[1] = sl->numel;
    dnnl_memory_t src = NULL, wei = NULL, dst = NULL;
    par_status st = par_dn_value_mem(p, xv, &src, msg);
    if (st == PAR_OK) st = bytes_as(p, ni, n->inputs[1], r, wd, &wei, msg);
    if (st == PAR_OK) st = par_dn_value_mem(p, yv, &dst, msg);
    if (st != PAR_OK) return st;
    const dnnl_memory_desc_t *smd = NULL, *wmd = NULL;
    dnnl_memory_get_memory_desc(src, &smd);
    dnnl_memory_get_memory_desc(wei, &wmd);
    dnnl_prelu_desc_t pdsc;
    st = par_dn_check(dnnl_prelu_forward_desc_init(&pdsc, dnnl_forward_inference, smd, wmd),
                      "prelu: dnnl_prelu_forward_desc_init", msg);
    dnnl_primitive_desc_t pd = NULL;
    if (st == PAR_OK) st = prim_pd(p, &pdsc, &pd, "prelu: dnnl_primitive_desc_create", msg);
    if (st != PAR_OK) return st;
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}};
    return par_dn_add_prim(p, ni, "prelu", pd, 3, args, msg);
}

/* layer_norm over the last len(normalized_shape) dims: x seen as [M, P], weight and bias as [P] */
static par_status lower_lnorm(dn_plan *p, int32_t ni, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    int32_t xv = n->inputs[0], yv = p->final_out[ni];
    const par_value *x = &g->values[xv], *y = &g->values[yv];
    int32_t k = par_attr_count(n, "normalized_shape");
    int64_t P = 1;
    for (int32_t i = 0; i < k; i++) P *= x->dims[x->rank - k + i];
    int64_t d2[2] = {x->numel / P, P}, d1[1] = {P};
    dnnl_memory_t src = NULL, dst = NULL, sc = NULL, sh = NULL;
    par_status st = bytes_as(p, ni, xv, 2, d2, &src, msg);
    unsigned flags = 0;
    if (st == PAR_OK && n->n_inputs > 1 && n->inputs[1] >= 0) {
        st = bytes_as(p, ni, n->inputs[1], 1, d1, &sc, msg);
        flags |= dnnl_use_scale;
    }
    if (st == PAR_OK && n->n_inputs > 2 && n->inputs[2] >= 0) {
        st = bytes_as(p, ni, n->inputs[2], 1, d1, &sh, msg);
        flags |= dnnl_use_shift;
    }
    const dnnl_memory_desc_t *md = NULL;
    if (st == PAR_OK) {
        dnnl_memory_get_memory_desc(src, &md);
        st = par_dn_mem_new(p, md, &dst, msg);
    }
    if (st != PAR_OK) return st;
    dnnl_layer_normalization_desc_t ld;
    st = par_dn_check(dnnl_layer_normalization_forward_desc_init(&ld, dnnl_forward_inference, md, NULL,
                                                                 (float)par_attr_float(n, "eps", 1e-5), flags),
                      "layer_normalization: dnnl_layer_normalization_forward_desc_init", msg);
    dnnl_primitive_desc_t pd = NULL;
    if (st == PAR_OK) st = prim_pd(p, &ld, &pd, "layer_normalization: dnnl_primitive_desc_create", msg);
    if (st != PAR_OK) return st;
    dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
    int nargs = 2;
    if (sc) args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_SCALE, sc};
    if (sh) args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_SHIFT, sh};
    if ((st = par_dn_add_prim(p, ni, "lnorm", pd, nargs, args, msg)) != PAR_OK) return st;
    dnnl_memory_t ym = NULL;
    if ((st = par_dn_value_mem(p, yv, &ym, msg)) != PAR_OK) return st;
    return par_dn_add_copy(p, ni, dst, ym, (size_t)y->numel * 4, msg);
}

static par_status lower_reduce(dn_plan *p, int32_t ni, const dn_op *r, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    int32_t xv = n->inputs[0], yv = p->final_out[ni];
    const par_value *x = &g->values[xv], *y = &g->values[yv];
    const dnnl_alg_kind_t alg = (dnnl_alg_kind_t)r->alg;
    const int q = par_dn_is_quant(y->dtype) && alg == dnnl_reduction_mean;
    /* the destination at the input's rank with 1s on the reduced axes (the same bytes as keepdims or not) */
    int64_t d[PAR_MAX_RANK];
    for (int i = 0; i < x->rank; i++) d[i] = x->dims[i];
    for (int32_t k = 0; k < par_attr_count(n, "axes"); k++) d[norm_axis(par_attr_ints_at(n, "axes", k, 0), x->rank)] = 1;
    dnnl_memory_t src = NULL, dst = NULL, red = NULL;
    par_status st = q ? f32_of(p, ni, xv, &src, msg) : par_dn_value_mem(p, xv, &src, msg);
    if (st == PAR_OK) st = q ? f32_dst(p, yv, &dst, msg) : par_dn_value_mem(p, yv, &dst, msg);
    if (st != PAR_OK) return st;
    dnnl_memory_desc_t rmd;
    const dnnl_memory_desc_t *smd = NULL;
    dnnl_memory_get_memory_desc(src, &smd);
    if ((st = par_dn_md_plain(&rmd, x->rank, d, q ? dnnl_f32 : par_dn_dt(y->dtype), msg)) != PAR_OK) return st;
    if ((st = par_dn_mem_new(p, &rmd, &red, msg)) != PAR_OK) return st;
    if (dnnl_memory_desc_equal(smd, &rmd)) {
        /* every reduced axis has size 1: oneDNN's reduction refuses src == dst; the result is x itself */
        if ((st = par_dn_reorder(p, ni, src, red, NULL, 0, msg)) != PAR_OK) return st;
    } else {
        dnnl_reduction_desc_t rd;
        st = par_dn_check(dnnl_reduction_desc_init(&rd, alg, smd, &rmd, 0.0f, 0.0f),
                          "reduction: dnnl_reduction_desc_init", msg);
        dnnl_primitive_desc_t pd = NULL;
        if (st == PAR_OK) st = prim_pd(p, &rd, &pd, "reduction: dnnl_primitive_desc_create", msg);
        if (st != PAR_OK) return st;
        dnnl_exec_arg_t args[2] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, red}};
        if ((st = par_dn_add_prim(p, ni, "reduction", pd, 2, args, msg)) != PAR_OK) return st;
    }
    if ((st = par_dn_add_copy(p, ni, red, dst, (size_t)y->numel * (q ? 4 : par_dtype_size(y->dtype)), msg)) != PAR_OK)
        return st;
    return q ? requant_out(p, ni, yv, dst, msg) : PAR_OK;
}

par_status par_dn_lower_elt(dn_plan *p, int32_t ni, const dn_op *r, par_msg *msg)
{
    switch (r ? r->family : DN_NONE) {
    case DN_ELTWISE: return lower_eltwise(p, ni, msg);
    case DN_BINARY: return lower_binary(p, ni, r, msg);
    case DN_POOL: return lower_pool(p, ni, r, msg);
    case DN_SOFTMAX: return lower_softmax(p, ni, r, msg);
    case DN_RESAMPLE: return lower_resample(p, ni, r, msg);
    case DN_BNORM: return lower_bnorm(p, ni, msg);
    case DN_PRELU: return lower_prelu(p, ni, msg);
    case DN_LNORM: return lower_lnorm(p, ni, msg);
    case DN_REDUCE: return lower_reduce(p, ni, r, msg);
    default: return par_msgf(msg, PAR_UNSUPPORTED, "no oneDNN primitive for %s in this backend", p->g->nodes[ni].op);
    }
}
