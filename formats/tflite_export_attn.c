/*
 * tflite_export_attn.c - the decoder-block ops as TFLite graphs of what they compute (TFLite's builtins have no RMS
 * norm, rotary embedding or attention; LiteRT's converter writes them as these same compositions), all in parity's
 * own order (raw_in / raw_out, the NHWC transposes at the ends only):
 *   rms_norm       MUL(x * RSQRT(MEAN(x * x, trailing axes, kept) + eps), weight);
 *   rope           half-split: the last axis sliced in halves a, b (STRIDED_SLICE); CONCATENATION(a c - b s,
 *                  b c + a s). Interleaved: x reshaped to [P, S, D/2, 2] (P the leading dimensions' product), its two
 *                  columns sliced, cos and sin as [S, D/2, 1], the same formulas, concatenated and reshaped back;
 *   sdpa           k and v heads repeated per query head (RESHAPE, CONCATENATION of copies, RESHAPE), BATCH_MATMUL
 *                  with the transposed keys, MUL by the scale, ADD of the mask and of a causal mask (0 on and below
 *                  the diagonal, -inf above), SOFTMAX, BATCH_MATMUL with v;
 *   slice_scatter  CONCATENATION along dim of x's rows before start, src, and x's rows after it (src alone,
 *                  reshaped, when it covers the whole axis).
 * The building blocks are tflite_export_util.c's; par_tfx_node (tflite_export_ops.c) calls par_tfx_attn first.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/tflite_export_int.h"

/* A fresh f32 tensor of the node (a unique name: the tensor count), shape in the order given. */
static int32_t tmp(ex *e, const par_node *n, int32_t rank, const int64_t *shape)
{
    char nm[300];
    snprintf(nm, sizeof nm, "%s:t%d", n->name, (int)e->n_t);
    return tensor(e, nm, PAR_TFL_FLOAT32, rank, shape, 0);
}

/* An f32 constant of the node. */
static int32_t f32_const(ex *e, const par_node *n, int32_t rank, const int64_t *shape, const float *v)
{
    int64_t k = 1;
    for (int32_t i = 0; i < rank; i++) k *= shape[i];
    int32_t buf = buffer(e, v, (size_t)k * sizeof *v);
    char nm[300];
    snprintf(nm, sizeof nm, "%s:c%d", n->name, (int)e->n_t);
    return buf < 0 ? -1 : tensor(e, nm, PAR_TFL_FLOAT32, rank, shape, buf);
}

/* An int32 constant of the node. */
static int32_t i32_const(ex *e, const par_node *n, int32_t k, const int64_t *v)
{
    char nm[300];
    snprintf(nm, sizeof nm, "%s:c%d", n->name, (int)e->n_t);
    return const_i32(e, nm, k, v, 0);
}

/* op(a, b) into out, or into a new tensor of a's shape (or b's, where it has the larger rank) when out < 0. */
static int32_t bin(ex *e, const par_node *n, int32_t code, int32_t a, int32_t b, int32_t out)
{
    if (a < 0 || b < 0) return -1;
    if (out < 0) {
        const par_tfl_tensor *s = e->t[b].rank > e->t[a].rank ? &e->t[b] : &e->t[a];
        int64_t shape[MAXR];
        for (int32_t i = 0; i < s->rank; i++) shape[i] = s->shape[i];
        out = tmp(e, n, s->rank, shape);
    }
    int32_t ins[2] = {a, b};
    return op(e, code, 2, ins, out) ? out : -1;
}

/* RESHAPE(x) to shape, into out or a new tensor. */
static int32_t reshape(ex *e, const par_node *n, int32_t x, int32_t rank, const int64_t *shape, int32_t out)
{
    if (x < 0) return -1;
    if (out < 0) out = tmp(e, n, rank, shape);
    int32_t ins[2] = {x, i32_const(e, n, rank, shape)};
    par_tfl_op *o = op(e, PAR_TFL_OP_RESHAPE, 2, ins, out);
    if (!o) return -1;
    o->opt.has_ints = 1;
    o->opt.n_ints = rank;
    o->opt.ints = par_tfl_alloc(e->m, (size_t)rank * 4 + 1);
    if (!o->opt.ints) return fail(e, PAR_ERROR, "out of memory"), -1;
    for (int32_t i = 0; i < rank; i++) o->opt.ints[i] = (int32_t)shape[i];
    return out;
}

/* x[..., from:to, ...] on axis (STRIDED_SLICE). */
static int32_t slice(ex *e, const par_node *n, int32_t x, int32_t axis, int64_t from, int64_t to)
{
    if (x < 0) return -1;
    const int32_t r = e->t[x].rank;
    int64_t b[MAXR], en[MAXR], st[MAXR], shape[MAXR];
    for (int32_t j = 0; j < r; j++) b[j] = 0, en[j] = shape[j] = e->t[x].shape[j], st[j] = 1;
    b[axis] = from, en[axis] = to, shape[axis] = to - from;
    int32_t ins[4] = {x, i32_const(e, n, r, b), i32_const(e, n, r, en), i32_const(e, n, r, st)};
    int32_t y = tmp(e, n, r, shape);
    return y >= 0 && op(e, PAR_TFL_OP_STRIDED_SLICE, 4, ins, y) ? y : -1;
}

/* CONCATENATION of k tensors on axis, into out or a new tensor. */
static int32_t concat(ex *e, const par_node *n, int32_t k, const int32_t *xs, int32_t axis, int32_t out)
{
    for (int32_t i = 0; i < k; i++)
        if (xs[i] < 0) return -1;
    if (out < 0) {
        int64_t shape[MAXR];
        const int32_t r = e->t[xs[0]].rank;
        for (int32_t j = 0; j < r; j++) shape[j] = e->t[xs[0]].shape[j];
        for (int32_t i = 1; i < k; i++) shape[axis] += e->t[xs[i]].shape[axis];
        out = tmp(e, n, r, shape);
    }
    par_tfl_op *o = op(e, PAR_TFL_OP_CONCATENATION, k, xs, out);
    if (!o) return -1;
    o->opt.axis = axis;
    return out;
}

static int ex_rms_norm(ex *e, const par_node *n)
{
    const par_value *x = &e->g->values[n->inputs[0]];
    const int32_t k = par_attr_count(n, "normalized_shape"), xt = raw_in(e, n->inputs[0]);
    int64_t axes[MAXR], shape[MAXR];
    for (int32_t i = 0; i < x->rank; i++) shape[i] = i < x->rank - k ? x->dims[i] : 1;
    for (int32_t i = 0; i < k; i++) axes[i] = x->rank - k + i;
    int32_t sq = bin(e, n, PAR_TFL_OP_MUL, xt, xt, -1), ms = tmp(e, n, x->rank, shape);
    int32_t ins[2] = {sq, i32_const(e, n, k, axes)};
    par_tfl_op *o = ms < 0 ? NULL : op(e, PAR_TFL_OP_MEAN, 2, ins, ms);
    if (!o) return 0;
    o->opt.keep_dims = 1;
    const float eps = (float)par_attr_float(n, "eps", 1e-6);
    int32_t r = bin(e, n, PAR_TFL_OP_ADD, ms, f32_const(e, n, 0, NULL, &eps), -1), rs = tmp(e, n, x->rank, shape);
    if (r < 0 || rs < 0 || !op(e, PAR_TFL_OP_RSQRT, 1, &r, rs)) return 0;
    const int w = n->n_inputs > 1 && n->inputs[1] >= 0;
    int32_t out = raw_out(e, n->outputs[0]);
    int32_t y = bin(e, n, PAR_TFL_OP_MUL, xt, rs, w ? -1 : out);
    if (w) y = bin(e, n, PAR_TFL_OP_MUL, y, raw_in(e, n->inputs[1]), out);
    return y >= 0 && finish_raw(e, n->outputs[0], out);
}

static int ex_rope(ex *e, const par_node *n)
{
    const par_value *x = &e->g->values[n->inputs[0]];
    const int32_t r = x->rank;
    const int64_t D = x->dims[r - 1], S = x->dims[r - 2], h = D / 2, P = x->numel / (S * D);
    const int inter = par_attr_int(n, "interleaved", 0) != 0;
    int32_t xt = raw_in(e, n->inputs[0]), c = raw_in(e, n->inputs[1]), s = raw_in(e, n->inputs[2]);
    int32_t out = raw_out(e, n->outputs[0]), axis = r - 1;
    if (inter) {
        const int64_t xd[4] = {P, S, h, 2}, td[3] = {S, h, 1};
        xt = reshape(e, n, xt, 4, xd, -1);
        c = reshape(e, n, c, 3, td, -1), s = reshape(e, n, s, 3, td, -1);
        axis = 3;
    }
    int32_t a = inter ? slice(e, n, xt, axis, 0, 1) : slice(e, n, xt, axis, 0, h);
    int32_t b = inter ? slice(e, n, xt, axis, 1, 2) : slice(e, n, xt, axis, h, D);
    int32_t ya = bin(e, n, PAR_TFL_OP_SUB, bin(e, n, PAR_TFL_OP_MUL, a, c, -1), bin(e, n, PAR_TFL_OP_MUL, b, s, -1), -1);
    int32_t yb = bin(e, n, PAR_TFL_OP_ADD, bin(e, n, PAR_TFL_OP_MUL, b, c, -1), bin(e, n, PAR_TFL_OP_MUL, a, s, -1), -1);
    const int32_t parts[2] = {ya, yb};
    int32_t y = concat(e, n, 2, parts, axis, inter ? -1 : out);
    if (inter) y = reshape(e, n, y, r, x->dims, out);
    return y >= 0 && finish_raw(e, n->outputs[0], out);
}

/* k or v [B, Hkv, S, D] as [B, Hq, S, D], each head repeated G times in a row: [B, Hkv, 1, S D], G copies
 * concatenated on axis 2, [B, Hq, S, D]. */
static int32_t repeat_heads(ex *e, const par_node *n, int32_t t, const par_value *v, int64_t G)
{
    if (G == 1) return t;
    if (G > 64) return fail(e, PAR_UNSUPPORTED, "%lld query heads per key/value head (64 at most)", (long long)G), -1;
    const int64_t d3[4] = {v->dims[0], v->dims[1], 1, v->dims[2] * v->dims[3]};
    const int64_t d4[4] = {v->dims[0], v->dims[1] * G, v->dims[2], v->dims[3]};
    int32_t flat = reshape(e, n, t, 4, d3, -1), copies[64];
    for (int64_t i = 0; i < G; i++) copies[i] = flat;
    return reshape(e, n, concat(e, n, (int32_t)G, copies, 2, -1), 4, d4, -1);
}

static int ex_sdpa(ex *e, const par_node *n)
{
    const par_value *q = &e->g->values[n->inputs[0]], *k = &e->g->values[n->inputs[1]];
    const par_value *v = &e->g->values[n->inputs[2]];
    const int64_t G = q->dims[1] / k->dims[1], Sq = q->dims[2], Skv = k->dims[2];
    const double sa = par_attr_float(n, "scale", 0.0);
    const float scale = (float)(sa > 0 ? sa : 1.0 / sqrt((double)q->dims[3]));
    int32_t kr = repeat_heads(e, n, raw_in(e, n->inputs[1]), k, G);
    int32_t vr = repeat_heads(e, n, raw_in(e, n->inputs[2]), v, G);
    static const int32_t perm[4] = {0, 1, 3, 2};
    char nm[300];
    snprintf(nm, sizeof nm, "%s:kt%d", n->name, (int)e->n_t);
    int32_t kt = kr < 0 ? -1 : transpose(e, kr, 4, perm, nm);
    const int64_t td[4] = {q->dims[0], q->dims[1], Sq, Skv};
    int32_t t = tmp(e, n, 4, td), qt = raw_in(e, n->inputs[0]);
    t = bin(e, n, PAR_TFL_OP_BATCH_MATMUL, qt, kt, t);
    t = bin(e, n, PAR_TFL_OP_MUL, t, f32_const(e, n, 0, NULL, &scale), -1);
    if (n->n_inputs > 3 && n->inputs[3] >= 0) t = bin(e, n, PAR_TFL_OP_ADD, t, raw_in(e, n->inputs[3]), -1);
    if (par_attr_int(n, "is_causal", 0)) {
        float *m = malloc(sizeof *m * (size_t)(Sq * Skv));
        if (!m) return fail(e, PAR_ERROR, "out of memory");
        for (int64_t i = 0; i < Sq; i++)
            for (int64_t j = 0; j < Skv; j++) m[i * Skv + j] = j > i ? -INFINITY : 0.0f;
        const int64_t md[2] = {Sq, Skv};
        t = bin(e, n, PAR_TFL_OP_ADD, t, f32_const(e, n, 2, md, m), -1);
        free(m);
    }
    int32_t p = t < 0 ? -1 : tmp(e, n, 4, td);
    par_tfl_op *o = p < 0 ? NULL : op(e, PAR_TFL_OP_SOFTMAX, 1, &t, p);
    if (!o) return 0;
    o->opt.beta = 1.0f;
    int32_t out = raw_out(e, n->outputs[0]);
    return bin(e, n, PAR_TFL_OP_BATCH_MATMUL, p, vr, out) >= 0 && finish_raw(e, n->outputs[0], out);
}

static int ex_slice_scatter(ex *e, const par_node *n)
{
    const par_value *x = &e->g->values[n->inputs[0]], *src = &e->g->values[n->inputs[1]];
    int32_t dim = (int32_t)par_attr_int(n, "dim", 0);
    if (dim < 0) dim += x->rank;
    const int64_t start = par_attr_int(n, "start", 0), end = start + src->dims[dim];
    int32_t xt = raw_in(e, n->inputs[0]), parts[3], k = 0, out = raw_out(e, n->outputs[0]);
    if (start > 0) parts[k++] = slice(e, n, xt, dim, 0, start);
    parts[k++] = raw_in(e, n->inputs[1]);
    if (end < x->dims[dim]) parts[k++] = slice(e, n, xt, dim, end, x->dims[dim]);
    /* src over the whole axis: x is read by nothing, and src is the result */
    int32_t y = k == 1 ? reshape(e, n, parts[0], x->rank, x->dims, out) : concat(e, n, k, parts, dim, out);
    return y >= 0 && finish_raw(e, n->outputs[0], out);
}

/* The writer of a decoder-block op: 1 written, 0 failed (e->st says why), -1 not one of them. */
int par_tfx_attn(ex *e, const par_node *n)
{
    static const struct {
        const char *op;
        int (*write)(ex *, const par_node *);
    } rows[] = {{"rms_norm", ex_rms_norm}, {"rope", ex_rope}, {"sdpa", ex_sdpa}, {"slice_scatter", ex_slice_scatter}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (!strcmp(n->op, rows[i].op)) {
            if (e->g->values[n->inputs[0]].dtype != PAR_DTYPE_F32)
                return UNSUP("%s on %s (f32 only)", n->op, par_dtype_name(e->g->values[n->inputs[0]].dtype));
            return rows[i].write(e, n) && e->st == PAR_OK;
        }
    return -1;
}
