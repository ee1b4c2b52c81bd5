/*
 * shape_attention.c - shape inference and geometry of the decoder-block ops (docs/ops.md, "Attention"): rope (the
 * rotary position embedding of x [..., S, D] by cos and sin [S, D/2]), sdpa (scaled dot-product attention of q
 * [B, Hq, Sq, D] over k [B, Hkv, Skv, D] and v [B, Hkv, Skv, Dv], grouped-query heads, an optional additive mask
 * broadcast to [B, Hq, Sq, Skv]) and slice_scatter (src written into a copy of x at start along dim: a KV-cache
 * update). The checks are PyTorch's; every message names the input or attribute and the shapes.
 * It must not compute any value.
 */
#include "shape_util.h"

#include <math.h>
#include <string.h>

static par_status same_dtype(const par_value *x, const par_value *p, int32_t i, const char *name, par_msg *msg)
{
    if (p->dtype == x->dtype) return PAR_OK;
    return par_msgf(msg, PAR_ERROR, "input %d (%s): dtype %s differs from input 0's %s", (int)i, name,
                    par_dtype_name(p->dtype), par_dtype_name(x->dtype));
}

par_status par_rope_geom_of(const par_graph_desc *g, const par_node *n, par_rope_geom *q, par_msg *msg)
{
    static const char *const names[3] = {"x", "cos", "sin"};
    const par_value *v[3];
    for (int32_t i = 0; i < 3; i++)
        if (!(v[i] = par_node_input(g, n, i))) return par_msgf(msg, PAR_ERROR, "input %d (%s) is required", (int)i,
                                                                names[i]);
    char xs[96];
    par_shape_format(v[0]->rank, v[0]->dims, xs, sizeof xs);
    if (v[0]->rank < 2)
        return par_msgf(msg, PAR_ERROR, "input 0 (x): shape %s, expected rank >= 2 ([..., S, D])", xs);
    memset(q, 0, sizeof *q);
    q->D = v[0]->dims[v[0]->rank - 1];
    q->S = v[0]->dims[v[0]->rank - 2];
    if (q->D < 2 || q->D % 2 != 0)
        return par_msgf(msg, PAR_ERROR, "input 0 (x): shape %s, the last dimension (D = %lld) must be even and >= 2",
                        xs, (long long)q->D);
    q->rows = v[0]->numel / q->D;
    const int64_t want[2] = {q->S, q->D / 2};
    for (int32_t i = 1; i < 3; i++) {
        par_status st = same_dtype(v[0], v[i], i, names[i], msg);
        if (st != PAR_OK) return st;
        if (!par_shape_equal(v[i]->rank, v[i]->dims, 2, want)) {
            char ps[96];
            par_shape_format(v[i]->rank, v[i]->dims, ps, sizeof ps);
            return par_msgf(msg, PAR_ERROR, "input %d (%s): shape %s, expected [%lld,%lld] ([S, D/2] of x %s)",
                            (int)i, names[i], ps, (long long)want[0], (long long)want[1], xs);
        }
    }
    return read_flag(n, "interleaved", &q->interleaved, msg);
}

par_status par_infer_rope(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    par_rope_geom q;
    par_status st = par_rope_geom_of(g, n, &q, msg);
    if (st != PAR_OK) return st;
    const par_value *x = par_node_input(g, n, 0);
    copy_shape(&outs[0], x->rank, x->dims);
    return PAR_OK;
}

/* The mask's strides (in elements) when it is read at [b, h, i, j] of [B, Hq, Sq, Skv] under numpy broadcasting
 * (right-aligned; a missing or size-1 dimension reads with stride 0). */
static par_status mask_strides(const par_value *m, const int64_t *full, int64_t *st, par_msg *msg)
{
    char ms[96];
    par_shape_format(m->rank, m->dims, ms, sizeof ms);
    if (m->rank < 1 || m->rank > 4)
        return par_msgf(msg, PAR_ERROR, "input 3 (mask): shape %s, expected rank 1 to 4 (broadcast to [B, Hq, Sq, "
                        "Skv])", ms);
    int64_t s = 1;
    for (int32_t d = 3; d >= 0; d--) {
        int32_t k = d - (4 - m->rank);
        if (k < 0) {
            st[d] = 0;
            continue;
        }
        if (m->dims[k] != 1 && m->dims[k] != full[d])
            return par_msgf(msg, PAR_ERROR, "input 3 (mask): shape %s does not broadcast to [%lld,%lld,%lld,%lld] "
                            "(dimension %d is %lld)", ms, (long long)full[0], (long long)full[1], (long long)full[2],
                            (long long)full[3], (int)k, (long long)m->dims[k]);
        st[d] = m->dims[k] == 1 ? 0 : s;
        s *= m->dims[k];
    }
    return PAR_OK;
}

par_status par_sdpa_geom_of(const par_graph_desc *g, const par_node *n, par_sdpa_geom *q, par_msg *msg)
{
    static const char *const names[3] = {"q", "k", "v"};
    const par_value *v[3];
    char s[3][96];
    for (int32_t i = 0; i < 3; i++) {
        if (!(v[i] = par_node_input(g, n, i)))
            return par_msgf(msg, PAR_ERROR, "input %d (%s) is required", (int)i, names[i]);
        par_shape_format(v[i]->rank, v[i]->dims, s[i], sizeof s[i]);
        if (v[i]->rank != 4)
            return par_msgf(msg, PAR_ERROR, "input %d (%s): shape %s, expected rank 4 ([B, H, S, D])", (int)i,
                            names[i], s[i]);
        if (i > 0) {
            par_status st = same_dtype(v[0], v[i], i, names[i], msg);
            if (st != PAR_OK) return st;
        }
    }
    memset(q, 0, sizeof *q);
    q->B = v[0]->dims[0], q->Hq = v[0]->dims[1], q->Sq = v[0]->dims[2], q->D = v[0]->dims[3];
    q->Hkv = v[1]->dims[1], q->Skv = v[1]->dims[2], q->Dv = v[2]->dims[3];
    if (v[1]->dims[0] != q->B || v[2]->dims[0] != q->B || v[1]->dims[3] != q->D || v[2]->dims[1] != q->Hkv ||
        v[2]->dims[2] != q->Skv)
        return par_msgf(msg, PAR_ERROR, "inputs q %s, k %s, v %s: expected q [B, Hq, Sq, D], k [B, Hkv, Skv, D], "
                        "v [B, Hkv, Skv, Dv]", s[0], s[1], s[2]);
    if (q->Hkv < 1 || q->Hq % q->Hkv != 0)
        return par_msgf(msg, PAR_ERROR, "inputs q %s, k %s: the %lld query heads are not a multiple of the %lld "
                        "key/value heads", s[0], s[1], (long long)q->Hq, (long long)q->Hkv);
    if (q->D < 1 || q->Skv < 1)
        return par_msgf(msg, PAR_ERROR, "input 1 (k): shape %s, expected Skv >= 1 and D >= 1", s[1]);
    par_status st = read_flag(n, "is_causal", &q->causal, msg);
    if (st != PAR_OK) return st;
    q->scale = par_attr_float(n, "scale", 0.0);
    if (!isfinite(q->scale) || q->scale < 0)
        return par_msgf(msg, PAR_ERROR, "attribute 'scale': %g, must be finite and >= 0 (0: 1/sqrt(D))", q->scale);
    if (q->scale == 0) q->scale = 1.0 / sqrt((double)q->D);
    const par_value *m = par_node_input(g, n, 3);
    q->has_mask = m != NULL;
    if (m) {
        if ((st = same_dtype(v[0], m, 3, "mask", msg)) != PAR_OK) return st;
        const int64_t full[4] = {q->B, q->Hq, q->Sq, q->Skv};
        if ((st = mask_strides(m, full, q->mask_stride, msg)) != PAR_OK) return st;
    }
    return PAR_OK;
}

par_status par_infer_sdpa(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    par_sdpa_geom q;
    par_status st = par_sdpa_geom_of(g, n, &q, msg);
    if (st != PAR_OK) return st;
    const int64_t d[4] = {q.B, q.Hq, q.Sq, q.Dv};
    copy_shape(&outs[0], 4, d);
    return PAR_OK;
}

par_status par_slice_scatter_geom_of(const par_graph_desc *g, const par_node *n, par_scatter_geom *q, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0), *src = par_node_input(g, n, 1);
    if (!x || !src) return par_msgf(msg, PAR_ERROR, "inputs 0 (x) and 1 (src) are required");
    par_status st = same_dtype(x, src, 1, "src", msg);
    if (st != PAR_OK) return st;
    char xs[96], ss[96];
    par_shape_format(x->rank, x->dims, xs, sizeof xs);
    par_shape_format(src->rank, src->dims, ss, sizeof ss);
    int64_t dim = par_attr_int(n, "dim", 0);
    int32_t d = par_axis_norm(dim, x->rank);
    if (d < 0)
        return par_msgf(msg, PAR_ERROR, "attribute 'dim': %lld is out of range for input 0 (x) of shape %s",
                        (long long)dim, xs);
    if (src->rank != x->rank)
        return par_msgf(msg, PAR_ERROR, "input 1 (src): shape %s, expected the rank of input 0 (x) %s", ss, xs);
    for (int32_t i = 0; i < x->rank; i++)
        if (i != d && src->dims[i] != x->dims[i])
            return par_msgf(msg, PAR_ERROR, "input 1 (src): shape %s differs from input 0 (x) %s in dimension %d "
                            "(only dimension %d, 'dim', may differ)", ss, xs, (int)i, (int)d);
    int64_t start = par_attr_int(n, "start", 0);
    if (start < 0 || start > x->dims[d] - src->dims[d])
        return par_msgf(msg, PAR_ERROR, "attribute 'start': %lld, the %lld rows of input 1 (src) %s must fit in "
                        "dimension %d of input 0 (x) %s: start in [0, %lld]", (long long)start,
                        (long long)src->dims[d], ss, (int)d, xs, (long long)(x->dims[d] - src->dims[d]));
    q->dim = d;
    q->start = start;
    q->len = src->dims[d];
    q->outer = par_shape_numel(d, x->dims);
    q->inner = par_shape_numel(x->rank - d - 1, x->dims + d + 1);
    q->extent = x->dims[d];
    return PAR_OK;
}

par_status par_infer_slice_scatter(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    par_scatter_geom q;
    par_status st = par_slice_scatter_geom_of(g, n, &q, msg);
    if (st != PAR_OK) return st;
    const par_value *x = par_node_input(g, n, 0);
    copy_shape(&outs[0], x->rank, x->dims);
    return PAR_OK;
}
