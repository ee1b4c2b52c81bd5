/*
 * shape_select.c - shape inference of the selection ops where, masked_fill, gather and embedding (docs/ops.md,
 * "Selection"), with the geometry the reference kernels walk too (par_gather_geom). Each error names the input or
 * attribute and the reason. It must not compute or read any value (an index's range is checked by the kernels, which
 * see the data).
 */
#include "shape_util.h"

#include <float.h>
#include <math.h>

/* numpy broadcasting of up to three shapes into out (rank, dims); the failing input is named. */
static par_status broadcast_n(const par_value *const *v, const char *const *names, int32_t k, par_value *out,
                              par_msg *msg)
{
    int32_t rank = 0;
    for (int32_t i = 0; i < k; i++)
        if (v[i]->rank > rank) rank = v[i]->rank;
    for (int32_t d = 0; d < rank; d++) {
        int64_t size = 1;
        int32_t from = -1;
        for (int32_t i = 0; i < k; i++) {
            int32_t j = v[i]->rank - rank + d;
            int64_t s = j >= 0 ? v[i]->dims[j] : 1;
            if (s == 1) continue;
            if (size != 1 && s != size) {
                char sa[96], sb[96];
                par_shape_format(v[i]->rank, v[i]->dims, sa, sizeof sa);
                par_shape_format(v[from]->rank, v[from]->dims, sb, sizeof sb);
                return par_msgf(msg, PAR_ERROR,
                                "input %d (%s): shape %s does not broadcast with input %d (%s) shape %s: output "
                                "dimension %d has sizes %lld and %lld",
                                (int)i, names[i], sa, (int)from, names[from], sb, (int)d, (long long)s,
                                (long long)size);
            }
            size = s;
            from = i;
        }
        out->dims[d] = size;
    }
    out->rank = rank;
    out->numel = par_shape_numel(rank, out->dims);
    return PAR_OK;
}

static int is_float(par_dtype t) { return t == PAR_DTYPE_F32 || t == PAR_DTYPE_F16; }

/* The output takes the dtype (and quantization) of the value it selects from. */
static void take_dtype(par_value *o, const par_value *from)
{
    o->dtype = from->dtype;
    o->scale = from->scale;
    o->zero_point = from->zero_point;
}

par_status par_infer_where(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    static const char *const names[3] = {"cond", "a", "b"};
    const par_value *v[3];
    for (int32_t i = 0; i < 3; i++) {
        v[i] = par_node_input(g, n, i);
        if (!v[i]) return par_msgf(msg, PAR_ERROR, "input %d (%s) is required", (int)i, names[i]);
    }
    if (v[0]->dtype != PAR_DTYPE_BOOL)
        return par_msgf(msg, PAR_ERROR, "input 0 (cond): dtype %s, expected bool", par_dtype_name(v[0]->dtype));
    if (v[1]->dtype != v[2]->dtype)
        return par_msgf(msg, PAR_ERROR, "input 2 (b): dtype %s differs from input 1 (a) dtype %s",
                        par_dtype_name(v[2]->dtype), par_dtype_name(v[1]->dtype));
    if (v[1]->dtype == PAR_DTYPE_BOOL)
        return par_msgf(msg, PAR_ERROR, "input 1 (a): dtype bool; where selects between numeric tensors");
    par_status st = broadcast_n(v, names, 3, &outs[0], msg);
    if (st != PAR_OK) return st;
    take_dtype(&outs[0], v[1]);
    return PAR_OK;
}

/* eq, gt, lt, ge, le: two float tensors of one dtype, broadcast; the output is bool. */
par_status par_infer_compare(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    static const char *const names[2] = {"a", "b"};
    const par_value *v[2] = {par_node_input(g, n, 0), par_node_input(g, n, 1)};
    if (!v[0] || !v[1]) return par_msgf(msg, PAR_ERROR, "inputs 0 (a) and 1 (b) are required");
    if (!is_float(v[0]->dtype))
        return par_msgf(msg, PAR_ERROR, "input 0 (a): dtype %s; comparisons take float tensors (f32, f16)",
                        par_dtype_name(v[0]->dtype));
    if (v[1]->dtype != v[0]->dtype)
        return par_msgf(msg, PAR_ERROR, "input 1 (b): dtype %s differs from input 0 (a) dtype %s",
                        par_dtype_name(v[1]->dtype), par_dtype_name(v[0]->dtype));
    par_status st = broadcast_n(v, names, 2, &outs[0], msg);
    if (st != PAR_OK) return st;
    outs[0].dtype = PAR_DTYPE_BOOL;
    outs[0].scale = 1.0f;
    outs[0].zero_point = 0;
    return PAR_OK;
}

/* logical_and, logical_or, logical_xor (two inputs, broadcast) and logical_not (one): bool in, bool out. */
par_status par_infer_logical(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    static const char *const names[2] = {"a", "b"};
    const par_value *v[2] = {par_node_input(g, n, 0), n->n_inputs > 1 ? par_node_input(g, n, 1) : NULL};
    const int32_t k = n->n_inputs > 1 ? 2 : 1;
    for (int32_t i = 0; i < k; i++) {
        if (!v[i]) return par_msgf(msg, PAR_ERROR, "input %d (%s) is required", (int)i, names[i]);
        if (v[i]->dtype != PAR_DTYPE_BOOL)
            return par_msgf(msg, PAR_ERROR, "input %d (%s): dtype %s, expected bool", (int)i, names[i],
                            par_dtype_name(v[i]->dtype));
    }
    par_status st = broadcast_n(v, names, k, &outs[0], msg);
    if (st != PAR_OK) return st;
    outs[0].dtype = PAR_DTYPE_BOOL;
    outs[0].scale = 1.0f;
    outs[0].zero_point = 0;
    return PAR_OK;
}

par_status par_infer_masked_fill(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0), *m = par_node_input(g, n, 1);
    if (!x || !m) return par_msgf(msg, PAR_ERROR, "inputs 0 (x) and 1 (mask) are required");
    if (m->dtype != PAR_DTYPE_BOOL)
        return par_msgf(msg, PAR_ERROR, "input 1 (mask): dtype %s, expected bool", par_dtype_name(m->dtype));
    if (!is_float(x->dtype))
        return par_msgf(msg, PAR_ERROR, "input 0 (x): dtype %s; masked_fill fills a float tensor (f32, f16)",
                        par_dtype_name(x->dtype));
    double value = par_attr_float(n, "value", 0);
    if (value != value) return par_msgf(msg, PAR_ERROR, "attribute 'value': NaN");
    const double vmax = x->dtype == PAR_DTYPE_F16 ? 65504.0 : FLT_MAX;
    if (isfinite(value) && fabs(value) > vmax)
        return par_msgf(msg, PAR_ERROR, "attribute 'value': %g overflows %s (infinities are allowed, finite values "
                        "must fit)", value, par_dtype_name(x->dtype));
    /* The mask broadcasts to x's shape (PyTorch: masked_fill is in place on x, so the output keeps x's shape). */
    char sx[96], sm[96];
    par_shape_format(x->rank, x->dims, sx, sizeof sx);
    par_shape_format(m->rank, m->dims, sm, sizeof sm);
    if (m->rank > x->rank)
        return par_msgf(msg, PAR_ERROR, "input 1 (mask): shape %s has more dimensions than input 0 (x) shape %s", sm,
                        sx);
    for (int32_t d = 0; d < m->rank; d++) {
        int64_t s = m->dims[d], t = x->dims[x->rank - m->rank + d];
        if (s != 1 && s != t)
            return par_msgf(msg, PAR_ERROR,
                            "input 1 (mask): shape %s does not broadcast to input 0 (x) shape %s: dimension %d has "
                            "size %lld, x %lld", sm, sx, (int)(x->rank - m->rank + d), (long long)s, (long long)t);
    }
    copy_shape(&outs[0], x->rank, x->dims);
    take_dtype(&outs[0], x);
    return PAR_OK;
}

par_status par_gather_geom(const par_node *n, int32_t xr, const int64_t *xd, int32_t ir, const int64_t *id,
                           par_gather_geom_t *q, par_msg *msg)
{
    int64_t a = par_attr_int(n, "axis", 0);
    if (xr < 1) return par_msgf(msg, PAR_ERROR, "input 0 (x): rank 0; gather needs rank >= 1");
    q->axis = par_axis_norm(a, xr);
    if (q->axis < 0)
        return par_msgf(msg, PAR_ERROR, "attribute 'axis': %lld is out of range for input 0 (x) of rank %d",
                        (long long)a, (int)xr);
    if (xr - 1 + ir > PAR_MAX_RANK)
        return par_msgf(msg, PAR_ERROR, "input 1 (indices): rank %d gives an output of rank %d, more than %d",
                        (int)ir, (int)(xr - 1 + ir), PAR_MAX_RANK);
    q->outer = q->inner = 1;
    for (int32_t d = 0; d < q->axis; d++) q->outer *= xd[d];
    for (int32_t d = q->axis + 1; d < xr; d++) q->inner *= xd[d];
    q->n = xd[q->axis];
    q->count = par_shape_numel(ir, id);
    q->rank = 0;
    for (int32_t d = 0; d < q->axis; d++) q->dims[q->rank++] = xd[d];
    for (int32_t d = 0; d < ir; d++) q->dims[q->rank++] = id[d];
    for (int32_t d = q->axis + 1; d < xr; d++) q->dims[q->rank++] = xd[d];
    return PAR_OK;
}

par_status par_infer_gather(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0), *ix = par_node_input(g, n, 1);
    if (!x || !ix) return par_msgf(msg, PAR_ERROR, "inputs 0 (x) and 1 (indices) are required");
    if (ix->dtype != PAR_DTYPE_I32)
        return par_msgf(msg, PAR_ERROR, "input 1 (indices): dtype %s, expected i32", par_dtype_name(ix->dtype));
    if (x->dtype == PAR_DTYPE_BOOL)
        return par_msgf(msg, PAR_ERROR, "input 0 (x): dtype bool; gather selects from a numeric tensor");
    par_gather_geom_t q;
    par_status st = par_gather_geom(n, x->rank, x->dims, ix->rank, ix->dims, &q, msg);
    if (st != PAR_OK) return st;
    copy_shape(&outs[0], q.rank, q.dims);
    take_dtype(&outs[0], x);
    return PAR_OK;
}

par_status par_infer_embedding(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    const par_value *ix = par_node_input(g, n, 0), *w = par_node_input(g, n, 1);
    (void)n;
    if (!ix || !w) return par_msgf(msg, PAR_ERROR, "inputs 0 (indices) and 1 (weight) are required");
    if (ix->dtype != PAR_DTYPE_I32)
        return par_msgf(msg, PAR_ERROR, "input 0 (indices): dtype %s, expected i32", par_dtype_name(ix->dtype));
    if (w->rank != 2) return par_msgf(msg, PAR_ERROR, "input 1 (weight): rank %d, expected 2 ([V, D])", (int)w->rank);
    if (w->dtype == PAR_DTYPE_BOOL || w->dtype == PAR_DTYPE_I32)
        return par_msgf(msg, PAR_ERROR, "input 1 (weight): dtype %s; the table holds real values",
                        par_dtype_name(w->dtype));
    if (ix->rank + 1 > PAR_MAX_RANK)
        return par_msgf(msg, PAR_ERROR, "input 0 (indices): rank %d gives an output of rank %d, more than %d",
                        (int)ix->rank, (int)ix->rank + 1, PAR_MAX_RANK);
    int64_t dims[PAR_MAX_RANK];
    for (int32_t d = 0; d < ix->rank; d++) dims[d] = ix->dims[d];
    dims[ix->rank] = w->dims[1];
    copy_shape(&outs[0], ix->rank + 1, dims);
    take_dtype(&outs[0], w);
    return PAR_OK;
}
