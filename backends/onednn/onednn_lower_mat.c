/*
 * onednn_lower_mat.c - conv2d, conv_transpose2d, linear and matmul as oneDNN convolution, deconvolution, inner
 * product and matmul primitives, f32 and int8.
 *
 * Layouts: source, weights and destination are created with dnnl_format_tag_any, so oneDNN picks its blocked
 * layouts (nChw16c, OIhw16i16o, ...) as frameworks let it; the plain source is reordered in before the primitive
 * and the destination out after it, constant weights once at prepare. Quantized nodes (u8/s8 activations, s8 weights
 * per tensor or per output channel, s32 bias): output scales in_scale * w_scale[o] / out_scale computed in float as
 * par_requant_scale_f32 (the fp32 scheme's ratio), source and destination zero points as attributes; oneDNN 2.6
 * computes out = saturate(rne(scale * (acc + bias) [post-ops]) + zp_dst). Post-ops: the fused activations and add
 * of plan->post (onednn_lower.c decides what fuses).
 *
 * It must not compute any output itself: every number comes from a oneDNN primitive.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "core/requant.h"
#include "onednn_internal.h"

par_status par_dn_check_mat(const par_graph_desc *g, const par_node *n, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0), *w = par_node_input(g, n, 1), *b = par_node_input(g, n, 2);
    const par_value *y = par_node_output(g, n, 0);
    int q = par_dn_is_quant(y->dtype);
    if (!q) {
        if (x->dtype != PAR_DTYPE_F32 || w->dtype != PAR_DTYPE_F32 || (b && b->dtype != PAR_DTYPE_F32))
            return par_msgf(msg, PAR_UNSUPPORTED, "mixed dtypes (%s x %s -> %s)", par_dtype_name(x->dtype),
                            par_dtype_name(w->dtype), par_dtype_name(y->dtype));
        return PAR_OK;
    }
    if (!par_dn_is_quant(x->dtype))
        return par_msgf(msg, PAR_UNSUPPORTED, "quantized output from a %s input", par_dtype_name(x->dtype));
    if (par_dn_op(n->op)->family == DN_MATMUL) {
        if (w->dtype != PAR_DTYPE_QS8)
            return par_msgf(msg, PAR_UNSUPPORTED, "oneDNN's int8 matmul takes s8 weights; the second input is %s",
                            par_dtype_name(w->dtype));
        return PAR_OK;
    }
    if (w->dtype != PAR_DTYPE_QS8)
        return par_msgf(msg, PAR_UNSUPPORTED, "oneDNN's int8 %s takes s8 weights; '%s' is %s", n->op, w->name,
                        par_dtype_name(w->dtype));
    if (w->quant_axis < 0 && w->zero_point != 0)
        return par_msgf(msg, PAR_UNSUPPORTED, "weights '%s' have zero point %d; oneDNN 2.6's int8 %s has no weights "
                        "zero point", w->name, w->zero_point, n->op);
    if (b && b->dtype != PAR_DTYPE_I32)
        return par_msgf(msg, PAR_UNSUPPORTED, "bias '%s' is %s, not i32", b->name, par_dtype_name(b->dtype));
    if (w->kind != PAR_VALUE_CONST)
        return par_msgf(msg, PAR_UNSUPPORTED, "quantized weights '%s' are not a constant", w->name);
    return PAR_OK;
}

/* Output scales and zero points of a quantized node whose result lands in value yv; w_axis_count is the number of
 * output channels (per-channel scales along dst dim `oc_dim`). */
static par_status quant_attr(dn_plan *p, const par_value *x, const par_value *w, const par_value *y, int oc_dim,
                             int is_matmul_w, dnnl_primitive_attr_t attr, par_msg *msg)
{
    int64_t count = w->quant_axis >= 0 ? w->dims[w->quant_axis] : 1;
    float *sc = malloc((size_t)count * sizeof *sc);
    if (!sc) return par_msgf(msg, PAR_ERROR, "out of memory");
    for (int64_t o = 0; o < count; o++)
        sc[o] = par_requant_scale_f32(x->scale, w->quant_axis >= 0 ? w->channel_scales[o] : w->scale, y->scale);
    par_status st = par_dn_check(dnnl_primitive_attr_set_output_scales(attr, count, count > 1 ? 1 << oc_dim : 0, sc),
                                 "dnnl_primitive_attr_set_output_scales", msg);
    free(sc);
    if (st == PAR_OK && x->zero_point != 0)
        st = par_dn_check(dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_SRC, 1, 0, &x->zero_point),
                          "dnnl_primitive_attr_set_zero_points(src)", msg);
    if (st == PAR_OK && is_matmul_w && w->zero_point != 0)
        st = par_dn_check(dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_WEIGHTS, 1, 0, &w->zero_point),
                          "dnnl_primitive_attr_set_zero_points(weights)", msg);
    if (st == PAR_OK && y->zero_point != 0)
        st = par_dn_check(dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_DST, 1, 0, &y->zero_point),
                          "dnnl_primitive_attr_set_zero_points(dst)", msg);
    (void)p;
    return st;
}

/* The common tail: source, weights (already in wmem when wmem is set), bias, destination with the reorders around
 * the primitive, the sum post-op's operand copied into the destination first. */
static par_status finish(dn_plan *p, int32_t ni, const char *kind, dnnl_primitive_desc_t pd, int32_t xv,
                         int32_t wv, dnnl_memory_t wmem, int32_t bv, int32_t yv, int32_t sum_v, par_msg *msg)
{
    dnnl_memory_t src = NULL, wei = wmem, bias = NULL, dst = NULL, dst_plain = NULL;
    par_status st = par_dn_input_as(p, ni, xv, par_dn_pd_md(pd, dnnl_query_src_md), &src, msg);
    if (st == PAR_OK && !wei) st = par_dn_input_as(p, ni, wv, par_dn_pd_md(pd, dnnl_query_weights_md), &wei, msg);
    if (st == PAR_OK && bv >= 0) {
        const dnnl_memory_desc_t *bmd = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 1);
        const par_value *b = &p->g->values[bv];
        if (b->kind == PAR_VALUE_CONST)
            st = par_dn_mem_const(p, bmd, b->data, (size_t)b->numel * par_dtype_size(b->dtype), &bias, msg);
        else st = par_dn_input_as(p, ni, bv, bmd, &bias, msg);
    }
    if (st == PAR_OK && p->can_block[yv] && !p->mem[yv]) {
        /* the destination stays in the primitive's layout: every reader takes any */
        st = par_dn_mem_new(p, par_dn_pd_md(pd, dnnl_query_dst_md), &dst, msg);
        if (st == PAR_OK) p->mem[yv] = dst;
    } else if (st == PAR_OK)
        st = par_dn_output_as(p, yv, par_dn_pd_md(pd, dnnl_query_dst_md), &dst, &dst_plain, msg);
    if (st == PAR_OK && sum_v >= 0) {
        dnnl_memory_t sm = NULL;
        st = par_dn_value_mem(p, sum_v, &sm, msg);
        if (st == PAR_OK) st = par_dn_reorder(p, ni, sm, dst, NULL, 0, msg);
    }
    if (st != PAR_OK) {
        dnnl_primitive_desc_destroy(pd);
        return st;
    }
    dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}, {DNNL_ARG_BIAS, bias}};
    st = par_dn_add_prim(p, ni, kind, pd, bias ? 4 : 3, args, msg);
    if (st == PAR_OK && dst_plain) st = par_dn_reorder(p, ni, dst, dst_plain, NULL, 0, msg);
    return st;
}

static par_status make_pd(dn_plan *p, const void *desc, dnnl_primitive_attr_t attr, dnnl_primitive_desc_t *pd,
                          const char *what, par_msg *msg)
{
    par_status st = par_dn_check(dnnl_primitive_desc_create(pd, desc, attr, p->c->eng, NULL), what, msg);
    dnnl_primitive_attr_destroy(attr);
    return st;
}

/* attr with fpmath, quantization (when y is quantized) and the node's post-ops */
static par_status node_attr(dn_plan *p, int32_t ni, const par_value *x, const par_value *w, int oc_dim, int matmul_w,
                            dnnl_primitive_attr_t *attr, int32_t *sum_v, par_msg *msg)
{
    const par_value *y = &p->g->values[p->final_out[ni]];
    par_status st = par_dn_attr(p, attr, msg);
    if (st != PAR_OK) return st;
    if (par_dn_is_quant(y->dtype)) st = quant_attr(p, x, w, y, oc_dim, matmul_w, *attr, msg);
    if (st == PAR_OK) st = par_dn_post_ops(p, ni, *attr, sum_v, msg);
    if (st != PAR_OK) dnnl_primitive_attr_destroy(*attr);
    return st;
}

par_status par_dn_lower_conv(dn_plan *p, int32_t ni, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    const par_value *x = par_node_input(g, n, 0), *w = par_node_input(g, n, 1), *b = par_node_input(g, n, 2);
    int32_t yv = p->final_out[ni];
    const par_value *y = &g->values[yv];
    int64_t G = par_attr_int(n, "groups", 1), O = w->dims[0], C = x->dims[1];
    int64_t sh = par_attr_ints_at(n, "stride", 0, 1), sw = par_attr_ints_at(n, "stride", 1, 1);
    int64_t dh = par_attr_ints_at(n, "dilation", 0, 1), dw = par_attr_ints_at(n, "dilation", 1, 1);
    int64_t kh = w->dims[2], kw = w->dims[3], oh = y->dims[2], ow = y->dims[3];
    int64_t pt, pl, pb, pr;
    const char *mode = par_attr_str(n, "pad_mode", "explicit");
    if (strcmp(mode, "explicit") == 0) {
        pt = par_attr_ints_at(n, "padding", 0, 0), pl = par_attr_ints_at(n, "padding", 1, 0);
        pb = par_attr_ints_at(n, "padding", 2, 0), pr = par_attr_ints_at(n, "padding", 3, 0);
    } else {
        /* same: NNAPI's rule (docs/ops.md); valid: no padding; the end pads follow from the output size */
        int64_t th = (oh - 1) * sh + (kh - 1) * dh + 1 - x->dims[2], tw = (ow - 1) * sw + (kw - 1) * dw + 1 - x->dims[3];
        if (th < 0) th = 0;
        if (tw < 0) tw = 0;
        if (strcmp(mode, "same") == 0) pt = th / 2, pb = th - pt, pl = tw / 2, pr = tw - pl;
        else pt = pl = 0, pb = pr = 0;
    }
    dnnl_data_type_t ydt = par_dn_dt(y->dtype), xdt = par_dn_dt(x->dtype), wdt = par_dn_dt(w->dtype);
    int q = par_dn_is_quant(y->dtype);
    dnnl_memory_desc_t xmd, wmd, bmd, ymd;
    int64_t wd5[5] = {G, O / G, C / G, kh, kw}, bd[1] = {O};
    par_status st = par_dn_md_tag(&xmd, 4, x->dims, xdt, dnnl_format_tag_any, msg);
    if (st == PAR_OK) st = G > 1 ? par_dn_md_tag(&wmd, 5, wd5, wdt, dnnl_format_tag_any, msg)
                                 : par_dn_md_tag(&wmd, 4, w->dims, wdt, dnnl_format_tag_any, msg);
    if (st == PAR_OK && b) st = par_dn_md_tag(&bmd, 1, bd, q ? dnnl_s32 : dnnl_f32, dnnl_a, msg);
    if (st == PAR_OK) st = par_dn_md_tag(&ymd, 4, y->dims, ydt, dnnl_format_tag_any, msg);
    if (st != PAR_OK) return st;
    dnnl_dims_t strides = {sh, sw}, dil = {dh - 1, dw - 1}, padl = {pt, pl}, padr = {pb, pr};
    dnnl_convolution_desc_t cd;
    st = par_dn_check(dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct,
                                                                 &xmd, &wmd, b ? &bmd : NULL, &ymd, strides, dil,
                                                                 padl, padr),
                      "convolution: dnnl_dilated_convolution_forward_desc_init", msg);
    if (st != PAR_OK) return st;
    dnnl_primitive_attr_t attr = NULL;
    int32_t sum_v = -1;
    if ((st = node_attr(p, ni, x, w, 1, 0, &attr, &sum_v, msg)) != PAR_OK) return st;
    dnnl_primitive_desc_t pd = NULL;
    if ((st = make_pd(p, &cd, attr, &pd, "convolution: dnnl_primitive_desc_create", msg)) != PAR_OK) return st;
    /* grouped weights: the plain [O, C/G, KH, KW] data seen as [G, O/G, C/G, KH, KW] (the same bytes) */
    dnnl_memory_t wmem = NULL;
    if (G > 1) {
        dnnl_memory_desc_t wplain;
        dnnl_memory_t wsrc = NULL;
        st = par_dn_md_tag(&wplain, 5, wd5, wdt, dnnl_abcde, msg);
        if (st == PAR_OK && w->kind == PAR_VALUE_CONST)
            st = par_dn_mem_const(p, &wplain, w->data, (size_t)w->numel * par_dtype_size(w->dtype), &wsrc, msg);
        else if (st == PAR_OK) {
            dnnl_memory_t vm = NULL;
            void *h = NULL;
            st = par_dn_value_mem(p, n->inputs[1], &vm, msg);
            if (st == PAR_OK) st = par_dn_mem_new(p, &wplain, &wsrc, msg);
            if (st == PAR_OK) {
                dnnl_memory_get_data_handle(wsrc, &h);
                (void)h;
                st = par_dn_add_copy(p, ni, vm, wsrc, (size_t)w->numel * par_dtype_size(w->dtype), msg);
            }
        }
        if (st == PAR_OK) {
            const dnnl_memory_desc_t *want = par_dn_pd_md(pd, dnnl_query_weights_md);
            st = par_dn_mem_new(p, want, &wmem, msg);
            if (st == PAR_OK) st = par_dn_reorder(p, ni, wsrc, wmem, NULL, w->kind == PAR_VALUE_CONST, msg);
        }
        if (st != PAR_OK) {
            dnnl_primitive_desc_destroy(pd);
            return st;
        }
    }
    return finish(p, ni, "conv", pd, n->inputs[0], n->inputs[1], wmem, b ? n->inputs[2] : -1, yv, sum_v, msg);
}

par_status par_dn_lower_deconv(dn_plan *p, int32_t ni, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    const par_value *x = par_node_input(g, n, 0), *w = par_node_input(g, n, 1), *b = par_node_input(g, n, 2);
    int32_t yv = p->final_out[ni];
    const par_value *y = &g->values[yv];
    int64_t G = par_attr_int(n, "groups", 1), C = x->dims[1], O = y->dims[1];
    int64_t sh = par_attr_ints_at(n, "stride", 0, 1), sw = par_attr_ints_at(n, "stride", 1, 1);
    int64_t dh = par_attr_ints_at(n, "dilation", 0, 1), dw = par_attr_ints_at(n, "dilation", 1, 1);
    int64_t kh = w->dims[2], kw = w->dims[3];
    int64_t pt = par_attr_ints_at(n, "padding", 0, 0), pl = par_attr_ints_at(n, "padding", 1, 0);
    /* oneDNN has no output padding: the end pads follow from the output size (pb - oph may be negative) */
    int64_t pb = (x->dims[2] - 1) * sh + (kh - 1) * dh + 1 - y->dims[2] - pt;
    int64_t pr = (x->dims[3] - 1) * sw + (kw - 1) * dw + 1 - y->dims[3] - pl;
    int q = par_dn_is_quant(y->dtype);
    dnnl_data_type_t ydt = par_dn_dt(y->dtype), xdt = par_dn_dt(x->dtype), wdt = par_dn_dt(w->dtype);
    int64_t OG = O / G, CG = C / G;
    int64_t wd5[5] = {G, OG, CG, kh, kw}, wd4[4] = {O, C, kh, kw}, bd[1] = {O};
    dnnl_memory_desc_t xmd, wmd, bmd, ymd;
    par_status st = par_dn_md_tag(&xmd, 4, x->dims, xdt, dnnl_format_tag_any, msg);
    if (st == PAR_OK) st = G > 1 ? par_dn_md_tag(&wmd, 5, wd5, wdt, dnnl_format_tag_any, msg)
                                 : par_dn_md_tag(&wmd, 4, wd4, wdt, dnnl_format_tag_any, msg);
    if (st == PAR_OK && b) st = par_dn_md_tag(&bmd, 1, bd, q ? dnnl_s32 : dnnl_f32, dnnl_a, msg);
    if (st == PAR_OK) st = par_dn_md_tag(&ymd, 4, y->dims, ydt, dnnl_format_tag_any, msg);
    if (st != PAR_OK) return st;
    dnnl_dims_t strides = {sh, sw}, dil = {dh - 1, dw - 1}, padl = {pt, pl}, padr = {pb, pr};
    dnnl_deconvolution_desc_t dd;
    dnnl_status_t ds = dnnl_dilated_deconvolution_forward_desc_init(&dd, dnnl_forward_inference,
                                                                   dnnl_deconvolution_direct, &xmd, &wmd,
                                                                   b ? &bmd : NULL, &ymd, strides, dil, padl, padr);
    if (ds == dnnl_invalid_arguments && (pb < 0 || pr < 0))
        return par_msgf(msg, PAR_UNSUPPORTED, "deconvolution: oneDNN has no output padding, and refuses this one as "
                        "a negative end padding (%" PRId64 ", %" PRId64 "): dnnl_invalid_arguments", pb, pr);
    st = par_dn_check(ds, "deconvolution: dnnl_dilated_deconvolution_forward_desc_init", msg);
    if (st != PAR_OK) return st;
    dnnl_primitive_attr_t attr = NULL;
    int32_t sum_v = -1;
    if ((st = node_attr(p, ni, x, w, 1, 0, &attr, &sum_v, msg)) != PAR_OK) return st;
    dnnl_primitive_desc_t pd = NULL;
    if ((st = make_pd(p, &dd, attr, &pd, "deconvolution: dnnl_primitive_desc_create", msg)) != PAR_OK) return st;
    /* PyTorch's weights [C, O/G, KH, KW] seen as oneDNN's [G, O/G, C/G, KH, KW] (or [O, C, KH, KW]) by strides */
    dnnl_memory_desc_t wplain;
    dnnl_memory_t wsrc = NULL, wmem = NULL;
    if (G > 1) {
        dnnl_dims_t s5 = {CG * OG * kh * kw, kh * kw, OG * kh * kw, kw, 1};
        dnnl_dims_t d5 = {G, OG, CG, kh, kw};
        st = par_dn_check(dnnl_memory_desc_init_by_strides(&wplain, 5, d5, wdt, s5),
                          "dnnl_memory_desc_init_by_strides", msg);
    } else {
        dnnl_dims_t s4 = {kh * kw, O * kh * kw, kw, 1};
        dnnl_dims_t d4 = {O, C, kh, kw};
        st = par_dn_check(dnnl_memory_desc_init_by_strides(&wplain, 4, d4, wdt, s4),
                          "dnnl_memory_desc_init_by_strides", msg);
    }
    if (st == PAR_OK && w->kind != PAR_VALUE_CONST)
        st = par_msgf(msg, PAR_UNSUPPORTED, "weights '%s' are not a constant", w->name);
    if (st == PAR_OK) st = par_dn_mem_const(p, &wplain, w->data, (size_t)w->numel * par_dtype_size(w->dtype), &wsrc, msg);
    if (st == PAR_OK) st = par_dn_mem_new(p, par_dn_pd_md(pd, dnnl_query_weights_md), &wmem, msg);
    if (st == PAR_OK) st = par_dn_reorder(p, ni, wsrc, wmem, NULL, 1, msg);
    if (st != PAR_OK) {
        dnnl_primitive_desc_destroy(pd);
        return st;
    }
    return finish(p, ni, "deconv", pd, n->inputs[0], n->inputs[1], wmem, b ? n->inputs[2] : -1, yv, sum_v, msg);
}

/* a value seen as a 2-D [rows, cols] matrix (the same bytes) */
static par_status as_2d(dn_plan *p, int32_t ni, int32_t v, int64_t rows, int64_t cols, dnnl_format_tag_t tag,
                        dnnl_memory_t *out, par_msg *msg)
{
    const par_value *val = &p->g->values[v];
    int64_t d[2] = {rows, cols};
    dnnl_memory_desc_t md;
    par_status st = par_dn_md_tag(&md, 2, d, par_dn_dt(val->dtype), tag, msg);
    if (st != PAR_OK) return st;
    if (val->kind == PAR_VALUE_CONST)
        return par_dn_mem_const(p, &md, val->data, (size_t)val->numel * par_dtype_size(val->dtype), out, msg);
    dnnl_memory_t vm = NULL;
    if ((st = par_dn_value_mem(p, v, &vm, msg)) != PAR_OK) return st;
    if ((st = par_dn_mem_new(p, &md, out, msg)) != PAR_OK) return st;
    return par_dn_add_copy(p, ni, vm, *out, (size_t)val->numel * par_dtype_size(val->dtype), msg);
}

/* linear: f32 as an inner product (formats any), quantized as a matmul (zero points: oneDNN 2.6's inner product
 * has none); x [..., K] is [M, K], y [..., O] is [M, O]. */
par_status par_dn_lower_linear(dn_plan *p, int32_t ni, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    const par_value *x = par_node_input(g, n, 0), *w = par_node_input(g, n, 1), *b = par_node_input(g, n, 2);
    int32_t yv = p->final_out[ni];
    const par_value *y = &g->values[yv];
    int64_t K = w->dims[1], O = w->dims[0], M = x->numel / K;
    int q = par_dn_is_quant(y->dtype);
    dnnl_memory_desc_t xmd, wmd, bmd, ymd;
    int64_t xd[2] = {M, K}, yd[2] = {M, O}, wd[2] = {O, K}, wkd[2] = {K, O}, bd[1] = {O}, bd2[2] = {1, O};
    dnnl_primitive_attr_t attr = NULL;
    int32_t sum_v = -1;
    dnnl_primitive_desc_t pd = NULL;
    par_status st;
    dnnl_memory_t xm = NULL, wm = NULL, bm = NULL, ym = NULL, yplain = NULL, ysrc = NULL;
    if (!q) {
        st = par_dn_md_tag(&xmd, 2, xd, dnnl_f32, dnnl_format_tag_any, msg);
        if (st == PAR_OK) st = par_dn_md_tag(&wmd, 2, wd, dnnl_f32, dnnl_format_tag_any, msg);
        if (st == PAR_OK && b) st = par_dn_md_tag(&bmd, 1, bd, dnnl_f32, dnnl_a, msg);
        if (st == PAR_OK) st = par_dn_md_tag(&ymd, 2, yd, dnnl_f32, dnnl_format_tag_any, msg);
        if (st != PAR_OK) return st;
        dnnl_inner_product_desc_t ipd;
        st = par_dn_check(dnnl_inner_product_forward_desc_init(&ipd, dnnl_forward_inference, &xmd, &wmd,
                                                               b ? &bmd : NULL, &ymd),
                          "inner_product: dnnl_inner_product_forward_desc_init", msg);
        if (st == PAR_OK) st = node_attr(p, ni, x, w, 1, 0, &attr, &sum_v, msg);
        if (st == PAR_OK) st = make_pd(p, &ipd, attr, &pd, "inner_product: dnnl_primitive_desc_create", msg);
    } else {
        st = par_dn_md_tag(&xmd, 2, xd, par_dn_dt(x->dtype), dnnl_format_tag_any, msg);
        if (st == PAR_OK) st = par_dn_md_tag(&wmd, 2, wkd, dnnl_s8, dnnl_format_tag_any, msg);
        if (st == PAR_OK && b) st = par_dn_md_tag(&bmd, 2, bd2, dnnl_s32, dnnl_ab, msg);
        if (st == PAR_OK) st = par_dn_md_tag(&ymd, 2, yd, par_dn_dt(y->dtype), dnnl_format_tag_any, msg);
        if (st != PAR_OK) return st;
        dnnl_matmul_desc_t mmd;
        st = par_dn_check(dnnl_matmul_desc_init(&mmd, &xmd, &wmd, b ? &bmd : NULL, &ymd),
                          "matmul: dnnl_matmul_desc_init", msg);
        if (st == PAR_OK) st = node_attr(p, ni, x, w, 1, 0, &attr, &sum_v, msg);
        if (st == PAR_OK) st = make_pd(p, &mmd, attr, &pd, "matmul: dnnl_primitive_desc_create", msg);
    }
    if (st != PAR_OK) return st;
    const char *kind = q ? "matmul" : "ip";
    /* source and weights seen in 2-D, then into the primitive's layouts */
    dnnl_memory_t x2 = NULL, w2 = NULL;
    st = as_2d(p, ni, n->inputs[0], M, K, dnnl_ab, &x2, msg);
    if (st == PAR_OK) st = as_2d(p, ni, n->inputs[1], q ? K : O, q ? O : K, q ? dnnl_ba : dnnl_ab, &w2, msg);
    const dnnl_memory_desc_t *want = par_dn_pd_md(pd, dnnl_query_src_md);
    const dnnl_memory_desc_t *have = NULL;
    if (st == PAR_OK) {
        dnnl_memory_get_memory_desc(x2, &have);
        if (dnnl_memory_desc_equal(have, want)) xm = x2;
        else if ((st = par_dn_mem_new(p, want, &xm, msg)) == PAR_OK) st = par_dn_reorder(p, ni, x2, xm, NULL, 0, msg);
    }
    if (st == PAR_OK) {
        want = par_dn_pd_md(pd, dnnl_query_weights_md);
        dnnl_memory_get_memory_desc(w2, &have);
        if (dnnl_memory_desc_equal(have, want)) wm = w2;
        else if ((st = par_dn_mem_new(p, want, &wm, msg)) == PAR_OK)
            st = par_dn_reorder(p, ni, w2, wm, NULL, w->kind == PAR_VALUE_CONST, msg);
    }
    if (st == PAR_OK && b) {
        const dnnl_memory_desc_t *bq = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 1);
        if (b->kind == PAR_VALUE_CONST)
            st = par_dn_mem_const(p, bq, b->data, (size_t)b->numel * par_dtype_size(b->dtype), &bm, msg);
        else st = par_dn_input_as(p, ni, n->inputs[2], bq, &bm, msg);
    }
    /* destination: 2-D in the primitive's layout, then the plain bytes of y */
    if (st == PAR_OK) {
        const dnnl_memory_desc_t *dmd = par_dn_pd_md(pd, dnnl_query_dst_md);
        dnnl_memory_desc_t y2;
        st = par_dn_md_tag(&y2, 2, yd, par_dn_dt(y->dtype), dnnl_ab, msg);
        if (st == PAR_OK) st = par_dn_value_mem(p, yv, &ysrc, msg);
        if (st == PAR_OK) st = par_dn_mem_new(p, dmd, &ym, msg);
        if (st == PAR_OK && !dnnl_memory_desc_equal(dmd, &y2)) st = par_dn_mem_new(p, &y2, &yplain, msg);
    }
    if (st == PAR_OK && sum_v >= 0) {
        dnnl_memory_t s2 = NULL;
        st = as_2d(p, ni, sum_v, M, O, dnnl_ab, &s2, msg);
        if (st == PAR_OK) st = par_dn_reorder(p, ni, s2, ym, NULL, 0, msg);
    }
    if (st != PAR_OK) {
        dnnl_primitive_desc_destroy(pd);
        return st;
    }
    dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DST, ym}, {DNNL_ARG_BIAS, bm}};
    st = par_dn_add_prim(p, ni, kind, pd, bm ? 4 : 3, args, msg);
    if (st == PAR_OK && yplain) st = par_dn_reorder(p, ni, ym, yplain, NULL, 0, msg);
    if (st == PAR_OK)
        st = par_dn_add_copy(p, ni, yplain ? yplain : ym, ysrc, (size_t)y->numel * par_dtype_size(y->dtype), msg);
    return st;
}

/* matmul a [..., M, K] x b [..., K, N], batch dims broadcast (both brought to the output's rank with leading 1s) */
par_status par_dn_lower_matmul(dn_plan *p, int32_t ni, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    const par_value *a = par_node_input(g, n, 0), *b = par_node_input(g, n, 1);
    int32_t yv = p->final_out[ni];
    const par_value *y = &g->values[yv];
    int r = y->rank;
    int64_t ad[PAR_MAX_RANK], bd[PAR_MAX_RANK];
    for (int i = 0; i < r; i++) {
        ad[i] = i < r - a->rank ? 1 : a->dims[i - (r - a->rank)];
        bd[i] = i < r - b->rank ? 1 : b->dims[i - (r - b->rank)];
    }
    static const dnnl_format_tag_t tags[] = {dnnl_a, dnnl_a, dnnl_ab, dnnl_abc, dnnl_abcd, dnnl_abcde, dnnl_abcdef};
    int q = par_dn_is_quant(y->dtype);
    dnnl_memory_desc_t amd, bmd, ymd;
    /* the plain layouts: oneDNN's matmul takes broadcast batch dims only in fixed layouts */
    par_status st = par_dn_md_tag(&amd, r, ad, par_dn_dt(a->dtype), tags[r], msg);
    if (st == PAR_OK) st = par_dn_md_tag(&bmd, r, bd, par_dn_dt(b->dtype), tags[r], msg);
    if (st == PAR_OK) st = par_dn_md_tag(&ymd, r, y->dims, par_dn_dt(y->dtype), tags[r], msg);
    if (st != PAR_OK) return st;
    dnnl_matmul_desc_t mmd;
    st = par_dn_check(dnnl_matmul_desc_init(&mmd, &amd, &bmd, NULL, &ymd), "matmul: dnnl_matmul_desc_init", msg);
    dnnl_primitive_attr_t attr = NULL;
    int32_t sum_v = -1;
    if (st == PAR_OK) st = par_dn_attr(p, &attr, msg);
    if (st == PAR_OK && q) {
        float sc = par_requant_scale_f32(a->scale, b->scale, y->scale);
        st = par_dn_check(dnnl_primitive_attr_set_output_scales(attr, 1, 0, &sc), "dnnl_primitive_attr_set_output_scales",
                          msg);
        if (st == PAR_OK && a->zero_point)
            st = par_dn_check(dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_SRC, 1, 0, &a->zero_point),
                              "dnnl_primitive_attr_set_zero_points(src)", msg);
        if (st == PAR_OK && b->zero_point)
            st = par_dn_check(dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_WEIGHTS, 1, 0, &b->zero_point),
                              "dnnl_primitive_attr_set_zero_points(weights)", msg);
        if (st == PAR_OK && y->zero_point)
            st = par_dn_check(dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_DST, 1, 0, &y->zero_point),
                              "dnnl_primitive_attr_set_zero_points(dst)", msg);
    }
    if (st == PAR_OK) st = par_dn_post_ops(p, ni, attr, &sum_v, msg);
    if (st != PAR_OK) {
        if (attr) dnnl_primitive_attr_destroy(attr);
        return st;
    }
    dnnl_primitive_desc_t pd = NULL;
    if ((st = make_pd(p, &mmd, attr, &pd, "matmul: dnnl_primitive_desc_create", msg)) != PAR_OK) return st;
    dnnl_memory_t am = NULL, bm = NULL, ym = NULL;
    const par_value *vals[2] = {a, b};
    dnnl_memory_t *mems[2] = {&am, &bm};
    const dnnl_memory_desc_t *mds[2] = {&amd, &bmd};
    for (int k = 0; k < 2 && st == PAR_OK; k++) {
        const par_value *v = vals[k];
        if (v->kind == PAR_VALUE_CONST)
            st = par_dn_mem_const(p, mds[k], v->data, (size_t)v->numel * par_dtype_size(v->dtype), mems[k], msg);
        else if (v->rank == r) st = par_dn_value_mem(p, n->inputs[k], mems[k], msg);
        else {
            dnnl_memory_t vm = NULL;
            st = par_dn_value_mem(p, n->inputs[k], &vm, msg);
            if (st == PAR_OK) st = par_dn_mem_new(p, mds[k], mems[k], msg);
            if (st == PAR_OK) st = par_dn_add_copy(p, ni, vm, *mems[k], (size_t)v->numel * par_dtype_size(v->dtype), msg);
        }
    }
    if (st == PAR_OK) st = par_dn_value_mem(p, yv, &ym, msg);
    if (st == PAR_OK && sum_v >= 0) {
        dnnl_memory_t sm = NULL;
        st = par_dn_value_mem(p, sum_v, &sm, msg);
        if (st == PAR_OK) st = par_dn_add_copy(p, ni, sm, ym, (size_t)y->numel * par_dtype_size(y->dtype), msg);
    }
    if (st != PAR_OK) {
        dnnl_primitive_desc_destroy(pd);
        return st;
    }
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, ym}};
    return par_dn_add_prim(p, ni, "matmul", pd, 3, args, msg);
}
