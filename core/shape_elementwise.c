/*
 * shape_elementwise.c - shape inference of the elementwise ops: numpy broadcasting (add, sub, mul, div), the
 * same-shape ops with the semantic checks of their attributes (activations, softmax axis, clamp bounds), prelu's
 * slope, batch_norm's parameters, quantize and dequantize (their dtypes and quantization).
 * It must not compute any value.
 */
#include "shape_util.h"

#include <math.h>

par_status par_infer_broadcast(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    const par_value *a = par_node_input(g, n, 0);
    const par_value *b = par_node_input(g, n, 1);
    if (!a || !b) return par_msgf(msg, PAR_ERROR, "inputs 0 (a) and 1 (b) are required");
    if (a->dtype != b->dtype)
        return par_msgf(msg, PAR_ERROR, "input 1 (b): dtype %s differs from input 0 (a) dtype %s",
                        par_dtype_name(b->dtype), par_dtype_name(a->dtype));
    int32_t rank = a->rank > b->rank ? a->rank : b->rank;
    for (int32_t k = 0; k < rank; k++) {
        /* k counts from the last dimension; a missing leading dimension acts as 1. */
        int32_t ia = a->rank - 1 - k, ib = b->rank - 1 - k;
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da != db && da != 1 && db != 1) {
            char sa[96], sb[96];
            par_shape_format(a->rank, a->dims, sa, sizeof sa);
            par_shape_format(b->rank, b->dims, sb, sizeof sb);
            return par_msgf(msg, PAR_ERROR,
                            "input 1 (b): shape %s does not broadcast with input 0 (a) shape %s: output dimension %d "
                            "has sizes %lld and %lld",
                            sb, sa, (int)(rank - 1 - k), (long long)db, (long long)da);
        }
        outs[0].dims[rank - 1 - k] = da > db ? da : db;
    }
    outs[0].rank = rank;
    outs[0].numel = par_shape_numel(rank, outs[0].dims);
    return PAR_OK;
}

par_status par_infer_same(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0);
    if (!x) return par_msgf(msg, PAR_ERROR, "input 0 (x) is required");
    /* Semantic checks of the attributes this inference serves (softmax axis, clamp bounds). */
    if (par_node_attr(n, "axis") && par_axis_norm(par_attr_int(n, "axis", -1), x->rank) < 0)
        return par_msgf(msg, PAR_ERROR, "attribute 'axis': %lld is out of range for input 0 (x) of rank %d",
                        (long long)par_attr_int(n, "axis", -1), (int)x->rank);
    static const char *const pairs[2][2] = {{"min_val", "max_val"}, {"min", "max"}};
    for (int k = 0; k < 2; k++) {
        if (!par_node_attr(n, pairs[k][0])) continue;
        double lo = par_attr_float(n, pairs[k][0], -INFINITY), hi = par_attr_float(n, pairs[k][1], INFINITY);
        if (lo != lo || hi != hi)
            return par_msgf(msg, PAR_ERROR, "attribute '%s': NaN bound", lo != lo ? pairs[k][0] : pairs[k][1]);
        if (lo > hi)
            return par_msgf(msg, PAR_ERROR, "attribute '%s': %g is greater than '%s' %g", pairs[k][0], lo,
                            pairs[k][1], hi);
    }
    static const char *const finite_attrs[] = {"negative_slope", "alpha"};
    for (int k = 0; k < 2; k++)
        if (par_node_attr(n, finite_attrs[k]) && !isfinite(par_attr_float(n, finite_attrs[k], 0)))
            return par_msgf(msg, PAR_ERROR, "attribute '%s': must be finite", finite_attrs[k]);
    outs[0].rank = x->rank;
    for (int32_t i = 0; i < x->rank; i++) outs[0].dims[i] = x->dims[i];
    outs[0].numel = x->numel;
    return PAR_OK;
}

par_status par_infer_prelu(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0);
    const par_value *s = par_node_input(g, n, 1);
    if (!x || !s) return par_msgf(msg, PAR_ERROR, "inputs 0 (x) and 1 (slope) are required");
    if (s->dtype != x->dtype)
        return par_msgf(msg, PAR_ERROR, "input 1 (slope): dtype %s differs from input 0 (x) dtype %s",
                        par_dtype_name(s->dtype), par_dtype_name(x->dtype));
    char ss[96];
    par_shape_format(s->rank, s->dims, ss, sizeof ss);
    if (s->rank != 1)
        return par_msgf(msg, PAR_ERROR, "input 1 (slope): shape %s, expected [1] or [C] (rank 1)", ss);
    if (s->dims[0] != 1) {
        if (x->rank < 2)
            return par_msgf(msg, PAR_ERROR, "input 1 (slope): shape %s needs input 0 (x) of rank >= 2 (has %d)", ss,
                            (int)x->rank);
        if (s->dims[0] != x->dims[1])
            return par_msgf(msg, PAR_ERROR, "input 1 (slope): shape %s, expected [1] or [%lld] (channels of x)", ss,
                            (long long)x->dims[1]);
    }
    outs[0].rank = x->rank;
    for (int32_t i = 0; i < x->rank; i++) outs[0].dims[i] = x->dims[i];
    outs[0].numel = x->numel;
    return PAR_OK;
}

const char *const par_batch_norm_inputs[5] = {"x", "weight", "bias", "running_mean", "running_var"};

par_status par_infer_batch_norm(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0);
    if (!x) return par_msgf(msg, PAR_ERROR, "input 0 (x) is required");
    if (x->rank < 2) return par_msgf(msg, PAR_ERROR, "input 0 (x): rank %d, expected >= 2 ([N,C,...])", (int)x->rank);
    int64_t ch = x->dims[1];
    for (int32_t i = 1; i < 5; i++) {
        const par_value *p = par_node_input(g, n, i);
        if (!p) return par_msgf(msg, PAR_ERROR, "input %d (%s) is required", (int)i, par_batch_norm_inputs[i]);
        if (p->dtype != x->dtype)
            return par_msgf(msg, PAR_ERROR, "input %d (%s): dtype %s differs from input 0 (x) dtype %s", (int)i,
                            par_batch_norm_inputs[i], par_dtype_name(p->dtype), par_dtype_name(x->dtype));
        if (p->rank != 1 || p->dims[0] != ch)
            return par_msgf(msg, PAR_ERROR, "input %d (%s): shape must be [%lld] (channels of x)", (int)i,
                            par_batch_norm_inputs[i], (long long)ch);
    }
    double eps = par_attr_float(n, "eps", 1e-5);
    if (!(eps > 0) || !isfinite(eps))
        return par_msgf(msg, PAR_ERROR, "attribute 'eps': %g, must be finite and > 0", eps);
    outs[0].rank = x->rank;
    for (int32_t i = 0; i < x->rank; i++) outs[0].dims[i] = x->dims[i];
    outs[0].numel = x->numel;
    return PAR_OK;
}

static void same_shape(par_value *o, const par_value *x)
{
    o->rank = x->rank;
    for (int32_t i = 0; i < x->rank; i++) o->dims[i] = x->dims[i];
    o->numel = x->numel;
}

par_status par_infer_quantize(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0);
    if (!x) return par_msgf(msg, PAR_ERROR, "input 0 (x) is required");
    if (x->dtype != PAR_DTYPE_F32 && x->dtype != PAR_DTYPE_F16)
        return par_msgf(msg, PAR_ERROR, "input 0 (x): dtype %s, expected f32 or f16", par_dtype_name(x->dtype));
    if (!par_dtype_is_quant(outs[0].dtype))
        return par_msgf(msg, PAR_ERROR, "output 0: dtype %s, must be declared qu8 or qs8 (with scale and zero point)",
                        par_dtype_name(outs[0].dtype));
    if (!(outs[0].scale > 0) || !isfinite(outs[0].scale))
        return par_msgf(msg, PAR_ERROR, "output 0: scale %g, must be finite and > 0", (double)outs[0].scale);
    double lo, hi;
    par_quant_range(outs[0].dtype, &lo, &hi);
    if (outs[0].zero_point < lo || outs[0].zero_point > hi)
        return par_msgf(msg, PAR_ERROR, "output 0: zero point %d outside [%g, %g] of %s", (int)outs[0].zero_point, lo,
                        hi, par_dtype_name(outs[0].dtype));
    same_shape(&outs[0], x);
    return PAR_OK;
}

par_status par_infer_dequantize(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0);
    if (!x) return par_msgf(msg, PAR_ERROR, "input 0 (x) is required");
    if (!par_dtype_is_quant(x->dtype))
        return par_msgf(msg, PAR_ERROR, "input 0 (x): dtype %s is not quantized (expected qu8 or qs8)",
                        par_dtype_name(x->dtype));
    outs[0].dtype = PAR_DTYPE_F32;
    same_shape(&outs[0], x);
    return PAR_OK;
}
