/*
 * shape_norm.c - shape inference and geometry of the normalizations computed from the input's own statistics:
 * layer_norm, group_norm, instance_norm, rms_norm (docs/ops.md, PyTorch's F.layer_norm, F.group_norm,
 * F.instance_norm with use_input_stats, F.rms_norm). The output has x's shape; the checks are PyTorch's:
 * normalized_shape equal to x's trailing
 * dimensions, num_groups dividing C, more than one spatial element for instance_norm, weight and bias of the
 * normalized shape ([C] for group and instance norm), eps finite and > 0.
 * It must not compute any value.
 */
#include "shape_util.h"

#include <math.h>
#include <string.h>

const char *const par_norm_inputs[3] = {"x", "weight", "bias"};

static par_status layer_norm_geom(const par_node *n, int32_t xr, const int64_t *xd, par_norm_geom *q, par_msg *msg)
{
    int32_t k = par_attr_count(n, "normalized_shape");
    char xs[96];
    par_shape_format(xr, xd, xs, sizeof xs);
    if (k < 1)
        return par_msgf(msg, PAR_ERROR, "attribute 'normalized_shape': empty, at least one dimension is required");
    if (k > xr)
        return par_msgf(msg, PAR_ERROR, "attribute 'normalized_shape': %d dimensions, more than input 0 (x) of "
                        "shape %s has", (int)k, xs);
    q->w_rank = k;
    q->n = 1;
    for (int32_t i = 0; i < k; i++) {
        int64_t d = par_attr_ints_at(n, "normalized_shape", i, 0);
        q->w_dims[i] = d;
        if (d != xd[xr - k + i]) {
            char ns[96];
            int64_t nd[PAR_MAX_RANK];
            for (int32_t j = 0; j < k && j < PAR_MAX_RANK; j++) nd[j] = par_attr_ints_at(n, "normalized_shape", j, 0);
            par_shape_format(k, nd, ns, sizeof ns);
            return par_msgf(msg, PAR_ERROR, "attribute 'normalized_shape': %s does not match the last %d dimensions "
                            "of input 0 (x) of shape %s (element %d is %lld, x has %lld)", ns, (int)k, xs, (int)i,
                            (long long)d, (long long)xd[xr - k + i]);
        }
        q->n *= d;
    }
    q->groups = par_shape_numel(xr - k, xd);
    q->per_sample = 1;
    q->cpg = q->n;
    q->inner = 1;
    return PAR_OK;
}

static par_status channel_norm_geom(const par_node *n, int group, int32_t xr, const int64_t *xd, par_norm_geom *q,
                                    par_msg *msg)
{
    char xs[96];
    par_shape_format(xr, xd, xs, sizeof xs);
    if (xr < (group ? 2 : 3))
        return par_msgf(msg, PAR_ERROR, "input 0 (x): shape %s, expected rank >= %d ([N,C,*]%s)", xs, group ? 2 : 3,
                        group ? "" : ", at least one spatial dimension");
    int64_t ch = xd[1], inner = par_shape_numel(xr - 2, xd + 2);
    int64_t g = ch;
    if (group) {
        g = par_attr_int(n, "num_groups", 1);
        if (g < 1) return par_msgf(msg, PAR_ERROR, "attribute 'num_groups': %lld, must be >= 1", (long long)g);
        if (ch % g != 0)
            return par_msgf(msg, PAR_ERROR, "attribute 'num_groups': %lld does not divide the %lld channels of input "
                            "0 (x) of shape %s", (long long)g, (long long)ch, xs);
    } else if (inner == 1) {
        return par_msgf(msg, PAR_ERROR, "input 0 (x): shape %s has one spatial element per channel: instance "
                        "statistics need more than one (PyTorch's rule)", xs);
    }
    q->groups = xd[0] * g;
    q->per_sample = g;
    q->cpg = ch / g;
    q->inner = inner;
    q->n = q->cpg * inner;
    q->w_rank = 1;
    q->w_dims[0] = ch;
    return PAR_OK;
}

par_status par_norm_geom_of(const par_node *n, int32_t xr, const int64_t *xd, par_norm_geom *q, par_msg *msg)
{
    memset(q, 0, sizeof *q);
    par_status st;
    if (strcmp(n->op, "layer_norm") == 0 || strcmp(n->op, "rms_norm") == 0) st = layer_norm_geom(n, xr, xd, q, msg);
    else if (strcmp(n->op, "group_norm") == 0) st = channel_norm_geom(n, 1, xr, xd, q, msg);
    else if (strcmp(n->op, "instance_norm") == 0) st = channel_norm_geom(n, 0, xr, xd, q, msg);
    else return par_msgf(msg, PAR_ERROR, "op '%s' is not a normalization", n->op);
    if (st != PAR_OK) return st;
    q->eps = par_attr_float(n, "eps", 1e-5);
    if (!(q->eps > 0) || !isfinite(q->eps))
        return par_msgf(msg, PAR_ERROR, "attribute 'eps': %g, must be finite and > 0", q->eps);
    return PAR_OK;
}

static par_status infer_norm(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0);
    if (!x) return par_msgf(msg, PAR_ERROR, "input 0 (x) is required");
    par_norm_geom q;
    par_status st = par_norm_geom_of(n, x->rank, x->dims, &q, msg);
    if (st != PAR_OK) return st;
    for (int32_t i = 1; i < 3; i++) {
        const par_value *p = par_node_input(g, n, i);
        if (!p) continue;
        if (p->dtype != x->dtype)
            return par_msgf(msg, PAR_ERROR, "input %d (%s): dtype %s differs from input 0 (x) dtype %s", (int)i,
                            par_norm_inputs[i], par_dtype_name(p->dtype), par_dtype_name(x->dtype));
        if (!par_shape_equal(p->rank, p->dims, q.w_rank, q.w_dims)) {
            char ps[96], ws[96];
            par_shape_format(p->rank, p->dims, ps, sizeof ps);
            par_shape_format(q.w_rank, q.w_dims, ws, sizeof ws);
            return par_msgf(msg, PAR_ERROR, "input %d (%s): shape %s, expected %s (%s)", (int)i, par_norm_inputs[i],
                            ps, ws, strcmp(n->op, "group_norm") && strcmp(n->op, "instance_norm") ? "normalized_shape"
                            : "channels of x");
        }
    }
    copy_shape(&outs[0], x->rank, x->dims);
    return PAR_OK;
}

par_status par_infer_layer_norm(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    return infer_norm(g, n, outs, msg);
}

par_status par_infer_group_norm(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    return infer_norm(g, n, outs, msg);
}

par_status par_infer_instance_norm(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    return infer_norm(g, n, outs, msg);
}

par_status par_infer_rms_norm(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    return infer_norm(g, n, outs, msg);
}
