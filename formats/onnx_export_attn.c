/*
 * onnx_export_attn.c - the decoder-block ops as ONNX (opset 17) graphs of what they compute, as PyTorch's exporter
 * writes them (opset 17 has no RMSNormalization, RotaryEmbedding or Attention):
 *   rms_norm       Div(x, Sqrt(ReduceMean(x * x, trailing axes) + eps)) * weight;
 *   rope           half-split: the last axis sliced in halves a, b; Concat(a c - b s, b c + a s). Interleaved: x viewed
 *                  as [..., D/2, 2], its two columns sliced, cos and sin as [S, D/2, 1], the same formulas, Concat on
 *                  the last axis and reshaped back;
 *   sdpa           k and v repeated per query head (Reshape, Concat of copies, Reshape: repeat_interleave), MatMul with the
 *                  transposed keys, Mul by the scale, Add of the mask and of a causal mask (0 on and below the
 *                  diagonal, -inf above), Softmax on the last axis, MatMul with v;
 *   slice_scatter  Concat along dim of x's rows before start, src, and x's rows after it.
 * The building blocks are onnx_export_util.c's; the table row of each op is in onnx_export.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "formats/onnx_export_int.h"

static const char *bin(ex *e, const char *op, const char *a, const char *b)
{
    const char *in[2] = {a, b};
    return node(e, op, 2, in, NULL, NULL);
}

/* x[..., from:to] along axis */
static const char *slice(ex *e, const char *x, int64_t axis, int64_t from, int64_t to)
{
    const char *in[4] = {x, const_i64(e, 1, &from), const_i64(e, 1, &to), const_i64(e, 1, &axis)};
    return node(e, "Slice", 4, in, NULL, NULL);
}

static const char *reshape(ex *e, const char *x, int32_t rank, const int64_t *dims)
{
    return bin(e, "Reshape", x, const_i64(e, rank, dims));
}

int par_oxe_rms_norm(ex *e)
{
    const par_value *x = iv(e, 0);
    const char *xn = in_name(e, e->node->inputs[0]);
    const int32_t k = par_attr_count(e->node, "normalized_shape");
    int64_t axes[PAR_MAX_RANK];
    for (int32_t i = 0; i < k; i++) axes[i] = x->rank - k + i;
    attrs l = {.n = 0};
    at_ints(e, &l, "axes", k, axes);
    at_i(e, &l, "keepdims", 1);
    const char *sq = bin(e, "Mul", xn, xn), *ms;
    const char *in1[1] = {sq};
    if (!sq || !(ms = node(e, "ReduceMean", 1, in1, NULL, &l))) return EX_ERR;
    const char *r = bin(e, "Add", ms, scalar_f32(e, (float)par_attr_float(e->node, "eps", 1e-6)));
    const char *sd = node(e, "Sqrt", 1, &r, NULL, NULL);
    if (!iv(e, 1)) {
        const char *in[2] = {xn, sd};
        return finish_out(e, node(e, "Div", 2, in, out_name(e), NULL));
    }
    const char *in[2] = {bin(e, "Div", xn, sd), in_name(e, e->node->inputs[1])};
    return finish_out(e, node(e, "Mul", 2, in, out_name(e), NULL));
}

int par_oxe_rope(ex *e)
{
    const par_value *x = iv(e, 0);
    const int64_t D = x->dims[x->rank - 1], S = x->dims[x->rank - 2], h = D / 2;
    const int inter = par_attr_int(e->node, "interleaved", 0) != 0;
    const char *xn = in_name(e, e->node->inputs[0]);
    const char *c = in_name(e, e->node->inputs[1]), *s = in_name(e, e->node->inputs[2]);
    int64_t pd[PAR_MAX_RANK + 1];
    memcpy(pd, x->dims, sizeof(int64_t) * (size_t)x->rank);
    pd[x->rank - 1] = h, pd[x->rank] = 2;
    if (inter) {
        const int64_t td[3] = {S, h, 1};
        xn = reshape(e, xn, x->rank + 1, pd);
        c = reshape(e, c, 3, td), s = reshape(e, s, 3, td);
    }
    const char *a = inter ? slice(e, xn, -1, 0, 1) : slice(e, xn, -1, 0, h);
    const char *b = inter ? slice(e, xn, -1, 1, 2) : slice(e, xn, -1, h, D);
    const char *ya = bin(e, "Sub", bin(e, "Mul", a, c), bin(e, "Mul", b, s));
    const char *yb = bin(e, "Add", bin(e, "Mul", b, c), bin(e, "Mul", a, s));
    attrs l = {.n = 0};
    at_i(e, &l, "axis", -1);
    const char *cat[2] = {ya, yb};
    if (!inter) return finish_out(e, node(e, "Concat", 2, cat, out_name(e), &l));
    const char *y = node(e, "Concat", 2, cat, NULL, &l);
    const char *in[2] = {y, const_i64(e, x->rank, x->dims)};
    return finish_out(e, node(e, "Reshape", 2, in, out_name(e), NULL));
}

/* k or v [B, Hkv, S, D] as [B, Hq, S, D], each head repeated G times in a row: [B, Hkv, 1, S D], G copies
 * concatenated on axis 2, [B, Hq, S, D]. */
static const char *repeat_heads(ex *e, const char *t, const par_value *v, int64_t G)
{
    if (G == 1) return t;
    const int64_t d3[4] = {v->dims[0], v->dims[1], 1, v->dims[2] * v->dims[3]};
    const int64_t d4[4] = {v->dims[0], v->dims[1] * G, v->dims[2], v->dims[3]};
    const char *flat = reshape(e, t, 4, d3), *copies[64];
    if (G > 64) return no(e, "%lld query heads per key/value head (64 at most)", (long long)G), NULL;
    for (int64_t i = 0; i < G; i++) copies[i] = flat;
    attrs l = {.n = 0};
    at_i(e, &l, "axis", 2);
    return reshape(e, node(e, "Concat", (int32_t)G, copies, NULL, &l), 4, d4);
}

int par_oxe_sdpa(ex *e)
{
    const par_value *q = iv(e, 0), *k = iv(e, 1);
    const int64_t G = q->dims[1] / k->dims[1], Sq = q->dims[2], Skv = k->dims[2];
    const double sa = par_attr_float(e->node, "scale", 0.0);
    const float scale = (float)(sa > 0 ? sa : 1.0 / sqrt((double)q->dims[3]));
    const char *kr = repeat_heads(e, in_name(e, e->node->inputs[1]), k, G);
    const char *vr = repeat_heads(e, in_name(e, e->node->inputs[2]), iv(e, 2), G);
    if (!kr || !vr) return e->why[0] ? EX_NO : EX_ERR;
    attrs lt = {.n = 0};
    const int64_t perm[4] = {0, 1, 3, 2};
    at_ints(e, &lt, "perm", 4, perm);
    const char *kt = node(e, "Transpose", 1, &kr, NULL, &lt);
    const char *t = bin(e, "Mul", bin(e, "MatMul", in_name(e, e->node->inputs[0]), kt), scalar_f32(e, scale));
    if (iv(e, 3)) t = bin(e, "Add", t, in_name(e, e->node->inputs[3]));
    if (par_attr_int(e->node, "is_causal", 0)) {
        float *m = malloc(sizeof(float) * (size_t)(Sq * Skv));
        if (!m) return EX_ERR;
        for (int64_t i = 0; i < Sq; i++)
            for (int64_t j = 0; j < Skv; j++) m[i * Skv + j] = j > i ? -INFINITY : 0.0f;
        const int64_t md[2] = {Sq, Skv};
        t = bin(e, "Add", t, const_f32(e, 2, md, m));
        free(m);
    }
    attrs ls = {.n = 0};
    at_i(e, &ls, "axis", -1);
    const char *p = node(e, "Softmax", 1, &t, NULL, &ls);
    const char *in[2] = {p, vr};
    return finish_out(e, node(e, "MatMul", 2, in, out_name(e), NULL));
}

int par_oxe_slice_scatter(ex *e)
{
    const par_value *x = iv(e, 0), *src = iv(e, 1);
    int64_t dim = par_attr_int(e->node, "dim", 0);
    if (dim < 0) dim += x->rank;
    const int64_t start = par_attr_int(e->node, "start", 0), end = start + src->dims[dim];
    const char *xn = in_name(e, e->node->inputs[0]), *parts[3];
    int32_t n = 0;
    /* a src covering the whole axis leaves x unread: the graph keeps x as an input that no node reads (ONNX has no
     * zero-sized slice parity imports, and a runner feeds its inputs by name) */
    if (start > 0) parts[n++] = slice(e, xn, dim, 0, start);
    parts[n++] = in_name(e, e->node->inputs[1]);
    if (end < x->dims[dim]) parts[n++] = slice(e, xn, dim, end, x->dims[dim]);
    attrs l = {.n = 0};
    at_i(e, &l, "axis", dim);
    return finish_out(e, node(e, "Concat", n, parts, out_name(e), &l));
}
