/*
 * ncnn_export_ops.c - parity's ops as ncnn layers: one row per op in `rows` below (the op, its ncnn layer type, a
 * writer and its parameter), the writers grouped by family. Parameter ids and weight orders are those of ncnn's
 * src/layer/<type>.cpp load_param / load_model (docs/formats.md lists them and what has no ncnn form, and why).
 *
 * Axes: parity's axis a of a value of rank >= 2 is ncnn's a - 1 (the batch is gone, par_nx_axis); ncnn numbers its
 * axes outer-first (c, d, h, w) as parity does.
 *
 * Must not: write what ncnn would compute otherwise than parity's op: such a case is refused with the reason.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/ncnn_export_int.h"

typedef struct nx_row {
    const char *op;     /* parity op */
    const char *type;   /* ncnn layer type */
    int (*fn)(nx *e, const struct nx_row *r);
    int k;              /* the writer's parameter: an op_type, a mode */
} nx_row;

static const par_value *iv(nx *e, int32_t i)
{
    int32_t k = i < e->node->n_inputs ? e->node->inputs[i] : -1;
    return k >= 0 ? &e->g->values[k] : NULL;
}

static const par_value *ov(nx *e) { return &e->g->values[e->node->outputs[0]]; }

/* One layer of one input and the node's output: its line up to the parameters. */
static int simple(nx *e, const char *type)
{
    char nm[48], inb[48];
    const char *b = in_blob(e, e->node->inputs[0]);
    if (!b) return 0;
    snprintf(inb, sizeof inb, "%s", b);
    const char *in[1] = {inb}, *out[1] = {out_blob(e, e->node->outputs[0])};
    return layer(e, type, fresh(e, nm, e->node->op), 1, in, 1, out);
}

/* ---- element-wise ---------------------------------------------------------------------------------------- */

static int w_plain(nx *e, const nx_row *r) { return simple(e, r->type) && end_layer(e); }

static int w_unary(nx *e, const nx_row *r) { return simple(e, r->type) && pi(e, 0, r->k) && end_layer(e); }

static int w_leaky(nx *e, const nx_row *r)
{
    return simple(e, r->type) && pf(e, 0, par_attr_float(e->node, "negative_slope", 0.01)) && end_layer(e);
}

static int w_elu(nx *e, const nx_row *r)
{
    return simple(e, r->type) && pf(e, 0, par_attr_float(e->node, "alpha", 1)) && end_layer(e);
}

static int w_hard(nx *e, const nx_row *r)
{
    /* PyTorch's hardsigmoid and hardswish: relu6(x + 3) / 6, i.e. ncnn's alpha 1/6, beta 1/2 */
    return simple(e, r->type) && pf(e, 0, 1.0 / 6.0) && pf(e, 1, 0.5) && end_layer(e);
}

static int w_gelu(nx *e, const nx_row *r)
{
    const char *a = par_attr_str(e->node, "approximate", "none");
    return simple(e, r->type) && pi(e, 0, strcmp(a, "tanh") == 0) && end_layer(e);
}

/* relu6, hardtanh, clamp: Clip with finite bounds; an infinite bound is no bound (ncnn's param text has no
 * infinity), so a one-sided clamp is BinaryOp max / min with a scalar and an unbounded one a Noop. */
static int w_clip(nx *e, const nx_row *r)
{
    double lo, hi;
    if (!strcmp(e->node->op, "relu6")) lo = 0, hi = 6;
    else if (!strcmp(e->node->op, "hardtanh"))
        lo = par_attr_float(e->node, "min_val", -1), hi = par_attr_float(e->node, "max_val", 1);
    else lo = par_attr_float(e->node, "min", -INFINITY), hi = par_attr_float(e->node, "max", INFINITY);
    int flo = isfinite(lo), fhi = isfinite(hi);
    if (flo && fhi) return simple(e, r->type) && pf(e, 0, lo) && pf(e, 1, hi) && end_layer(e);
    if (!flo && !fhi) return simple(e, "Noop") && end_layer(e);
    return simple(e, "BinaryOp") && pi(e, 0, flo ? 4 : 5) && pi(e, 1, 1) && pf(e, 2, flo ? lo : hi) && end_layer(e);
}

/* add .. pow: BinaryOp. ncnn aligns a lower-rank operand on its outer axes (binaryop.cpp), not numpy's inner
 * ones, so every operand is first given the output's rank (numpy's leading ones, then the batch dropped). */
static int w_binary(nx *e, const nx_row *r)
{
    const par_value *y = ov(e);
    nx_shape ys;
    if (!shape_of(e, y, &ys)) return 0;
    char b[2][48];
    for (int i = 0; i < 2; i++) {
        const par_value *x = iv(e, i);
        int64_t full[PAR_MAX_RANK];
        int32_t lead = y->rank - x->rank;
        for (int32_t d = 0; d < y->rank; d++) full[d] = d < lead ? 1 : x->dims[d - lead];
        nx_shape s = {.r = ys.r};
        for (int32_t d = 0; d < ys.r; d++) s.d[d] = full[d + (y->rank >= 2)];
        if (y->rank >= 2 && full[0] != 1) return no(e, "an operand with a batch");
        const char *nm = in_shaped(e, e->node->inputs[i], &s);
        if (!nm) return 0;
        snprintf(b[i], sizeof b[i], "%s", nm);
    }
    char nm[48];
    const char *in[2] = {b[0], b[1]}, *out[1] = {out_blob(e, e->node->outputs[0])};
    return layer(e, r->type, fresh(e, nm, e->node->op), 2, in, 1, out) && pi(e, 0, r->k) && end_layer(e);
}

static int w_prelu(nx *e, const nx_row *r)
{
    const par_value *x = iv(e, 0), *w = iv(e, 1);
    int64_t ch = x->rank >= 2 ? x->dims[1] : 1;
    if (w->numel != 1 && w->numel != ch) return no(e, "a slope per element (ncnn's PReLU has one per channel)");
    return simple(e, r->type) && pi(e, 0, w->numel) && end_layer(e) && weights(e, w, 0);
}

/* ---- convolution and linear ------------------------------------------------------------------------------ */

static int conv_params(nx *e, int64_t o, int64_t kh, int64_t kw)
{
    const par_node *n = e->node;
    return pi(e, 0, o) && pi(e, 1, kw) && pi(e, 11, kh) && pi(e, 2, par_attr_ints_at(n, "dilation", 1, 1)) &&
           pi(e, 12, par_attr_ints_at(n, "dilation", 0, 1)) && pi(e, 3, par_attr_ints_at(n, "stride", 1, 1)) &&
           pi(e, 13, par_attr_ints_at(n, "stride", 0, 1)) && pi(e, 4, par_attr_ints_at(n, "padding", 1, 0)) &&
           pi(e, 15, par_attr_ints_at(n, "padding", 3, 0)) && pi(e, 14, par_attr_ints_at(n, "padding", 0, 0)) &&
           pi(e, 16, par_attr_ints_at(n, "padding", 2, 0));
}

/* conv2d: Convolution (groups 1) or ConvolutionDepthWise (its group); OIHW is ncnn's weight order. */
static int w_conv(nx *e, const nx_row *r)
{
    (void)r;
    const par_value *x = iv(e, 0), *w = iv(e, 1), *b = iv(e, 2);
    if (x->rank != 4) return no(e, "a conv2d of rank %d", (int)x->rank);
    if (strcmp(par_attr_str(e->node, "pad_mode", "explicit"), "explicit") != 0)
        return no(e, "pad_mode %s (the exporter writes explicit padding only)", par_attr_str(e->node, "pad_mode", ""));
    int64_t g = par_attr_int(e->node, "groups", 1);
    if (!simple(e, g == 1 ? "Convolution" : "ConvolutionDepthWise") ||
        !conv_params(e, w->dims[0], w->dims[2], w->dims[3]) || !pi(e, 5, b != NULL) || !pi(e, 6, w->numel))
        return 0;
    if (g != 1 && !pi(e, 7, g)) return 0;
    return end_layer(e) && weights(e, w, 1) && (!b || weights(e, b, 0));
}

/* conv_transpose2d: Deconvolution / DeconvolutionDepthWise, whose weights are per group [out][in][kh][kw]
 * where parity's (PyTorch's) are [in][out/groups][kh][kw]. */
static int w_deconv(nx *e, const nx_row *r)
{
    (void)r;
    const par_value *x = iv(e, 0), *w = iv(e, 1), *b = iv(e, 2);
    if (x->rank != 4) return no(e, "a conv_transpose2d of rank %d", (int)x->rank);
    if (w->kind != PAR_VALUE_CONST || w->dtype != PAR_DTYPE_F32) return weights(e, w, 1);
    int64_t g = par_attr_int(e->node, "groups", 1), ci = w->dims[0], og = w->dims[1], k = w->dims[2] * w->dims[3];
    int64_t ig = ci / g;
    if (!simple(e, g == 1 ? "Deconvolution" : "DeconvolutionDepthWise") ||
        !conv_params(e, og * g, w->dims[2], w->dims[3]) || !pi(e, 5, b != NULL) || !pi(e, 6, w->numel) ||
        !pi(e, 18, par_attr_ints_at(e->node, "output_padding", 1, 0)) ||
        !pi(e, 19, par_attr_ints_at(e->node, "output_padding", 0, 0)))
        return 0;
    if (g != 1 && !pi(e, 7, g)) return 0;
    float *t = malloc(sizeof(float) * (size_t)w->numel);
    if (!t) return no(e, "out of memory");
    const float *src = w->data;
    for (int64_t gi = 0; gi < g; gi++)
        for (int64_t o = 0; o < og; o++)
            for (int64_t i = 0; i < ig; i++)
                memcpy(t + ((gi * og + o) * ig + i) * k, src + ((gi * ig + i) * og + o) * k, sizeof(float) * (size_t)k);
    int ok = end_layer(e) && floats(e, t, w->numel, 1) && (!b || weights(e, b, 0));
    free(t);
    return ok;
}

/* linear: InnerProduct, whose weight is parity's [out][in]; it reads a 1-D blob, or a 2-D one row by row when the
 * row is its input size (innerproduct.cpp), so parity's [1, K] and [1, M, K]. */
static int w_linear(nx *e, const nx_row *r)
{
    const par_value *x = iv(e, 0), *w = iv(e, 1), *b = iv(e, 2);
    if (x->rank < 2 || x->rank > 3) return no(e, "a linear of rank %d (InnerProduct flattens higher ranks)",
                                               (int)x->rank);
    return simple(e, r->type) && pi(e, 0, w->dims[0]) && pi(e, 1, b != NULL) && pi(e, 2, w->numel) &&
           end_layer(e) && weights(e, w, 1) && (!b || weights(e, b, 0));
}

/* ---- pools, reductions, normalization --------------------------------------------------------------------- */

/* max_pool2d / avg_pool2d: Pooling with ncnn's valid padding (the explicit pads, the output floored); ceil_mode
 * when the last window does not need it is the same, else refused: ncnn's full padding pads the tail to a whole
 * stride, PyTorch drops a last window that starts in the padding, and neither counts the same elements. */
static int w_pool(nx *e, const nx_row *r)
{
    const par_node *n = e->node;
    const par_value *x = iv(e, 0);
    if (x->rank != 4) return no(e, "a pool of rank %d", (int)x->rank);
    int64_t k[2], s[2], p[4];
    for (int d = 0; d < 2; d++) {
        k[d] = par_attr_ints_at(n, "kernel", d, 1);
        s[d] = par_attr_ints_at(n, "stride", d, 1);
        if (par_attr_ints_at(n, "dilation", d, 1) != 1) return no(e, "a dilated pool (ncnn's Pooling has none)");
    }
    for (int i = 0; i < 4; i++) p[i] = par_attr_ints_at(n, "padding", i, 0);
    for (int d = 0; par_attr_int(n, "ceil_mode", 0) && d < 2; d++)
        if ((x->dims[2 + d] + p[d] + p[d + 2] - k[d]) % s[d] != 0)
            return no(e, "ceil_mode with a partial last window (ncnn's full padding pads the tail to a whole "
                         "stride and counts it otherwise than PyTorch)");
    if (!simple(e, r->type) || !pi(e, 0, r->k) || !pi(e, 1, k[1]) || !pi(e, 11, k[0]) || !pi(e, 2, s[1]) ||
        !pi(e, 12, s[0]) || !pi(e, 3, p[1]) || !pi(e, 14, p[3]) || !pi(e, 13, p[0]) || !pi(e, 15, p[2]) ||
        !pi(e, 5, 1))
        return 0;
    if (r->k == 1 && !pi(e, 6, par_attr_int(n, "count_include_pad", 1))) return 0;
    return end_layer(e);
}

/* global_avg_pool2d: Pooling's global average, whose output is 1-D (c), reshaped to parity's [C, 1, 1]. */
static int w_global(nx *e, const nx_row *r)
{
    const par_value *y = ov(e);
    nx_shape ys;
    char tmp[48], nm[48], inb[48];
    if (!shape_of(e, y, &ys)) return 0;
    const char *b = in_blob(e, e->node->inputs[0]);
    if (!b) return 0;
    snprintf(inb, sizeof inb, "%s", b);
    const char *in[1] = {inb}, *out[1] = {fresh(e, tmp, "gap")};
    if (!layer(e, r->type, fresh(e, nm, e->node->op), 1, in, 1, out) || !pi(e, 0, 1) || !pi(e, 4, 1) ||
        !end_layer(e))
        return 0;
    return reshape_to(e, tmp, &ys, out_blob(e, e->node->outputs[0])) != NULL;
}

static int w_adaptive(nx *e, const nx_row *r)
{
    return simple(e, r->type) && pi(e, 0, 1) && pi(e, 7, 1) &&
           pi(e, 8, par_attr_ints_at(e->node, "output_size", 1, 1)) &&
           pi(e, 18, par_attr_ints_at(e->node, "output_size", 0, 1)) && end_layer(e);
}

/* mean, sum, amax, amin: Reduction over the listed axes (reduce_all 0; fixbug0 1: axes without the batch). */
static int w_reduce(nx *e, const nx_row *r)
{
    const par_attr *a = par_node_attr(e->node, "axes");
    const par_value *x = iv(e, 0), *y = ov(e);
    int32_t ax[PAR_MAX_RANK];
    if (!a || a->count < 1 || a->count > PAR_MAX_RANK) return no(e, "no axes");
    for (int32_t i = 0; i < a->count; i++)
        if (!axis_of(e, x, a->ints[i], &ax[i])) return 0;
    nx_shape ys;
    if (!shape_of(e, y, &ys)) return 0;
    if (!par_attr_int(e->node, "keepdims", 0) && x->rank >= 2 && y->rank < 2)
        return no(e, "every axis but the batch reduced without keepdims (ncnn's result has no dimension)");
    return simple(e, r->type) && pi(e, 0, r->k) && pi(e, 1, 0) && pints(e, 3, a->count, ax) &&
           pi(e, 4, par_attr_int(e->node, "keepdims", 0)) && pi(e, 5, 1) && end_layer(e);
}

static int w_softmax(nx *e, const nx_row *r)
{
    int32_t a;
    return axis_of(e, iv(e, 0), par_attr_int(e->node, "axis", -1), &a) && simple(e, r->type) && pi(e, 0, a) &&
           pi(e, 1, 1) && end_layer(e);
}

/* batch_norm(x, weight, bias, mean, var): BatchNorm's slope, mean, var, bias over axis 1 (ncnn's outermost). */
static int w_batchnorm(nx *e, const nx_row *r)
{
    const par_value *x = iv(e, 0);
    if (x->rank < 2) return no(e, "a batch_norm of rank %d", (int)x->rank);
    for (int i = 1; i < 5; i++)
        if (!iv(e, i)) return no(e, "batch_norm without its input %d", i);
    return simple(e, r->type) && pi(e, 0, x->dims[1]) && pf(e, 1, par_attr_float(e->node, "eps", 1e-5)) &&
           end_layer(e) && weights(e, iv(e, 1), 0) && weights(e, iv(e, 3), 0) && weights(e, iv(e, 4), 0) &&
           weights(e, iv(e, 2), 0);
}

/* gamma and beta of a norm: the node's inputs 1 and 2, ones / zeros where one is absent. */
static int affine(nx *e, int64_t n)
{
    for (int i = 1; i < 3; i++) {
        if (iv(e, i)) {
            if (iv(e, i)->numel != n) return no(e, "an affine input of %lld elements, not %lld",
                                                (long long)iv(e, i)->numel, (long long)n);
            if (!weights(e, iv(e, i), 0)) return 0;
            continue;
        }
        float *f = malloc(sizeof(float) * (size_t)n);
        if (!f) return no(e, "out of memory");
        for (int64_t k = 0; k < n; k++) f[k] = i == 1 ? 1.0f : 0.0f;
        int ok = floats(e, f, n, 0);
        free(f);
        if (!ok) return 0;
    }
    return 1;
}

/* layer_norm over the last 1 (ncnn: each row) or, on a 3-D blob, the last 2 dimensions (each channel). */
static int w_layernorm(nx *e, const nx_row *r)
{
    const par_attr *ns = par_node_attr(e->node, "normalized_shape");
    const par_value *x = iv(e, 0);
    int64_t n = 1;
    for (int32_t i = 0; ns && i < ns->count; i++) n *= ns->ints[i];
    int32_t nr = x->rank - (x->rank >= 2);
    if (!ns || !(ns->count == 1 || (ns->count == 2 && nr == 3)))
        return no(e, "normalized over %d dimensions of a %d-D blob (ncnn's LayerNorm: the last, or a channel)",
                  ns ? (int)ns->count : 0, (int)nr);
    return simple(e, r->type) && pi(e, 0, n) && pf(e, 1, par_attr_float(e->node, "eps", 1e-5)) && pi(e, 2, 1) &&
           end_layer(e) && affine(e, n);
}

static int w_groupnorm(nx *e, const nx_row *r)
{
    const par_value *x = iv(e, 0);
    if (x->rank < 3) return no(e, "a group_norm of rank %d", (int)x->rank);
    return simple(e, r->type) && pi(e, 0, par_attr_int(e->node, "num_groups", 1)) && pi(e, 1, x->dims[1]) &&
           pf(e, 2, par_attr_float(e->node, "eps", 1e-5)) && pi(e, 3, 1) && end_layer(e) && affine(e, x->dims[1]);
}

static int w_instancenorm(nx *e, const nx_row *r)
{
    const par_value *x = iv(e, 0);
    if (x->rank != 4) return no(e, "an instance_norm of rank %d (ncnn's InstanceNorm: (c, h, w))", (int)x->rank);
    return simple(e, r->type) && pi(e, 0, x->dims[1]) && pf(e, 1, par_attr_float(e->node, "eps", 1e-5)) &&
           pi(e, 2, 1) && end_layer(e) && affine(e, x->dims[1]);
}

/* ---- data movement ---------------------------------------------------------------------------------------- */

static int w_concat(nx *e, const nx_row *r)
{
    int32_t a, n = e->node->n_inputs;
    if (!axis_of(e, ov(e), par_attr_int(e->node, "axis", 1), &a)) return 0;
    char (*b)[48] = calloc((size_t)n, sizeof *b);
    const char **in = calloc((size_t)n, sizeof *in);
    int ok = b && in;
    for (int32_t i = 0; ok && i < n; i++) {
        const char *nm = in_blob(e, e->node->inputs[i]);
        ok = nm != NULL;
        if (ok) snprintf(b[i], sizeof b[i], "%s", nm), in[i] = b[i];
    }
    char nm[48];
    const char *out[1] = {out_blob(e, e->node->outputs[0])};
    ok = ok && layer(e, r->type, fresh(e, nm, "concat"), n, in, 1, out) && pi(e, 0, a) && end_layer(e);
    free(b);
    free(in);
    return ok;
}

/* reshape, flatten: Reshape to the output's ncnn shape (row-major both sides). */
static int w_reshape(nx *e, const nx_row *r)
{
    (void)r;
    nx_shape ys;
    char inb[48];
    const char *b = shape_of(e, ov(e), &ys) ? in_blob(e, e->node->inputs[0]) : NULL;
    if (!b) return 0;
    snprintf(inb, sizeof inb, "%s", b);
    return reshape_to(e, inb, &ys, out_blob(e, e->node->outputs[0])) != NULL;
}

/* permute: Permute's order_type, found by its list of output axes named innermost first (permute.cpp). */
static int w_permute(nx *e, const nx_row *r)
{
    static const char *const t2[] = {"wh", "hw"};
    static const char *const t3[] = {"whc", "hwc", "wch", "cwh", "hcw", "chw"};
    static const char *const t4[] = {"whdc", "hwdc", "wdhc", "dwhc", "hdwc", "dhwc", "whcd", "hwcd",
                                     "wchd", "cwhd", "hcwd", "chwd", "wdch", "dwch", "wcdh", "cwdh",
                                     "dcwh", "cdwh", "hdcw", "dhcw", "hcdw", "chdw", "dchw", "cdhw"};
    static const char *const names[NX_MAXR + 1][NX_MAXR] = {{""}, {"w"}, {"h", "w"}, {"c", "h", "w"},
                                                           {"c", "d", "h", "w"}};
    const par_attr *p = par_node_attr(e->node, "perm");
    const par_value *x = iv(e, 0);
    if (!p || p->count != x->rank) return no(e, "perm of %d axes for rank %d", p ? (int)p->count : 0, (int)x->rank);
    int32_t skip = x->rank >= 2, nr = x->rank - skip;
    if (skip && (p->ints[0] + x->rank) % x->rank != 0) return no(e, "a permutation that moves the batch axis");
    char key[NX_MAXR + 1] = "";
    for (int32_t i = 0; i < nr; i++) {
        int64_t src = (p->ints[skip + nr - 1 - i] + x->rank) % x->rank - skip;
        key[i] = names[nr][src][0];
    }
    key[nr] = '\0';
    const char *const *tab = nr == 2 ? t2 : nr == 3 ? t3 : nr == 4 ? t4 : NULL;
    int32_t n = nr == 2 ? 2 : nr == 3 ? 6 : nr == 4 ? 24 : 0, order = nr == 1 ? 0 : -1;
    for (int32_t i = 0; i < n; i++)
        if (!strcmp(tab[i], key)) order = i;
    if (order < 0) return no(e, "no Permute order for %s", key);
    return simple(e, r->type) && pi(e, 0, order) && end_layer(e);
}

/* pad: Padding's top / bottom (h), left / right (w), front / behind (the outermost of a 3-D blob: c). */
static int w_pad(nx *e, const nx_row *r)
{
    const par_attr *p = par_node_attr(e->node, "pads");
    const par_value *x = iv(e, 0);
    int32_t skip = x->rank >= 2, nr = x->rank - skip;
    int64_t q[2 * NX_MAXR] = {0};
    if (!p || p->count != 2 * x->rank) return no(e, "pads of %d values for rank %d", p ? (int)p->count : 0,
                                                  (int)x->rank);
    if (skip && (p->ints[0] || p->ints[1])) return no(e, "padding the batch axis");
    if (nr > 3) return no(e, "padding a 4-D blob (ncnn's Padding: front and behind pad its depth, not c)");
    for (int32_t i = 0; i < 2 * nr; i++) {
        q[i] = p->ints[2 * skip + i];
        if (q[i] < 0) return no(e, "a negative pad (a crop)");
    }
    /* q: per ncnn axis outer-first, begin and end */
    int64_t top = 0, bottom = 0, left = 0, right = 0, front = 0, behind = 0;
    left = q[2 * nr - 2], right = q[2 * nr - 1];
    if (nr >= 2) top = q[2 * nr - 4], bottom = q[2 * nr - 3];
    if (nr == 3) front = q[0], behind = q[1];
    const char *mode = par_attr_str(e->node, "mode", "constant");
    int type = !strcmp(mode, "constant") ? 0 : !strcmp(mode, "replicate") ? 1 : 2;
    return simple(e, r->type) && pi(e, 0, top) && pi(e, 1, bottom) && pi(e, 2, left) && pi(e, 3, right) &&
           pi(e, 4, type) && pf(e, 5, par_attr_float(e->node, "value", 0)) && pi(e, 7, front) &&
           pi(e, 8, behind) && end_layer(e);
}

/* slice: Crop's numpy-style starts / ends / axes, resolved to indices within [0, size] (step 1 only). */
static int w_slice(nx *e, const nx_row *r)
{
    const par_value *x = iv(e, 0);
    int32_t a;
    if (par_attr_int(e->node, "step", 1) != 1) return no(e, "a step of %lld (ncnn's Crop has none)",
                                                          (long long)par_attr_int(e->node, "step", 1));
    int64_t dim = par_attr_int(e->node, "dim", 0);
    if (!axis_of(e, x, dim, &a)) return 0;
    int64_t n = x->dims[(dim + x->rank) % x->rank];
    int64_t s = par_attr_int(e->node, "start", 0), t = par_attr_int(e->node, "end", INT64_MAX);
    s = s < 0 ? s + n : s, t = t < 0 ? t + n : t;
    s = s < 0 ? 0 : s > n ? n : s, t = t < 0 ? 0 : t > n ? n : t;
    if (t <= s) return no(e, "an empty slice");
    int32_t st = (int32_t)s, en = (int32_t)t;
    return simple(e, r->type) && pints(e, 9, 1, &st) && pints(e, 10, 1, &en) && pints(e, 11, 1, &a) &&
           end_layer(e);
}

/* upsample_*: Interp (1 nearest, 2 bilinear, 3 bicubic). ncnn's bilinear and bicubic take the coordinate ratio
 * from the sizes (interp.cpp: w / outw); with a scale parity takes 1 / scale (docs/ops.md), so a scale is written
 * only where the two agree. Nearest with a scale takes 1 / scale as parity does. */
static int w_interp(nx *e, const nx_row *r)
{
    const par_value *x = iv(e, 0), *y = ov(e);
    int ac = par_attr_int(e->node, "align_corners", 0) != 0;
    int nsc = par_attr_count(e->node, "scale");
    double sc[2] = {par_attr_floats_at(e->node, "scale", 0, 1), par_attr_floats_at(e->node, "scale", nsc > 1, 1)};
    if (x->rank != 4) return no(e, "an upsample of rank %d", (int)x->rank);
    if (nsc > 0 && r->k != 1 && !ac)
        for (int d = 0; d < 2; d++)
            if ((double)x->dims[2 + d] / (double)y->dims[2 + d] != 1.0 / sc[d])
                return no(e, "a scale whose inverse is not in / out (ncnn's Interp takes its ratio from the sizes)");
    /* nearest: where the output size is the input's or twice it, parity (PyTorch) takes the sizes' ratio whatever
     * the scale (copy, dst / 2), ncnn 1 / scale; then the sizes are written, when the other axis's ratio is the
     * same either way */
    int keep = 0, sizes_ok = 1;
    for (int d = 0; nsc > 0 && r->k == 1 && d < 2; d++) {
        int64_t in = x->dims[2 + d], out = y->dims[2 + d];
        if ((int64_t)((float)in * (float)sc[d]) != out)
            return no(e, "a scale whose f32 product with the size is not parity's output size");
        int by_size = out == in || out == 2 * in;
        keep |= by_size && (float)in / (float)out != 1.0f / (float)sc[d];
        sizes_ok &= by_size || (float)in / (float)out == 1.0f / (float)sc[d];
    }
    if (keep && !sizes_ok)
        return no(e, "a scale on an axis that keeps or doubles its size (PyTorch takes the sizes' ratio there, "
                     "ncnn 1 / scale) beside one whose 1 / scale is not in / out");
    if (!simple(e, r->type) || !pi(e, 0, r->k)) return 0;
    if (nsc > 0 && r->k == 1 && !keep) {
        if (!pf(e, 1, sc[0]) || !pf(e, 2, sc[1])) return 0;
    } else if (!pi(e, 3, y->dims[2]) || !pi(e, 4, y->dims[3])) {
        return 0;
    }
    return pi(e, 6, ac) && end_layer(e);
}

/* ---- the table ---------------------------------------------------------------------------------------------- */

static const nx_row rows[] = {
    {"conv2d", "Convolution", w_conv, 0}, {"conv_transpose2d", "Deconvolution", w_deconv, 0},
    {"linear", "InnerProduct", w_linear, 0},
    {"add", "BinaryOp", w_binary, 0}, {"sub", "BinaryOp", w_binary, 1}, {"mul", "BinaryOp", w_binary, 2},
    {"div", "BinaryOp", w_binary, 3}, {"maximum", "BinaryOp", w_binary, 4}, {"minimum", "BinaryOp", w_binary, 5},
    {"pow", "BinaryOp", w_binary, 6},
    {"relu", "ReLU", w_plain, 0}, {"leaky_relu", "ReLU", w_leaky, 0}, {"relu6", "Clip", w_clip, 0},
    {"hardtanh", "Clip", w_clip, 0}, {"clamp", "Clip", w_clip, 0}, {"prelu", "PReLU", w_prelu, 0},
    {"sigmoid", "Sigmoid", w_plain, 0}, {"tanh", "TanH", w_plain, 0}, {"hardsigmoid", "HardSigmoid", w_hard, 0},
    {"hardswish", "HardSwish", w_hard, 0}, {"silu", "Swish", w_plain, 0}, {"gelu", "GELU", w_gelu, 0},
    {"elu", "ELU", w_elu, 0}, {"softplus", "Softplus", w_plain, 0}, {"erf", "Erf", w_plain, 0},
    {"abs", "UnaryOp", w_unary, 0}, {"neg", "UnaryOp", w_unary, 1}, {"floor", "UnaryOp", w_unary, 2},
    {"ceil", "UnaryOp", w_unary, 3}, {"sqrt", "UnaryOp", w_unary, 5}, {"rsqrt", "UnaryOp", w_unary, 6},
    {"exp", "UnaryOp", w_unary, 7}, {"log", "UnaryOp", w_unary, 8}, {"sin", "UnaryOp", w_unary, 9},
    {"cos", "UnaryOp", w_unary, 10}, {"reciprocal", "UnaryOp", w_unary, 15}, {"round", "UnaryOp", w_unary, 18},
    {"sign", "UnaryOp", w_unary, 20},
    {"max_pool2d", "Pooling", w_pool, 0}, {"avg_pool2d", "Pooling", w_pool, 1},
    {"adaptive_avg_pool2d", "Pooling", w_adaptive, 0}, {"global_avg_pool2d", "Pooling", w_global, 0},
    {"sum", "Reduction", w_reduce, 0}, {"mean", "Reduction", w_reduce, 3}, {"amax", "Reduction", w_reduce, 4},
    {"amin", "Reduction", w_reduce, 5},
    {"softmax", "Softmax", w_softmax, 0},
    {"batch_norm", "BatchNorm", w_batchnorm, 0}, {"layer_norm", "LayerNorm", w_layernorm, 0},
    {"group_norm", "GroupNorm", w_groupnorm, 0}, {"instance_norm", "InstanceNorm", w_instancenorm, 0},
    {"concat", "Concat", w_concat, 0}, {"reshape", "Reshape", w_reshape, 0}, {"flatten", "Reshape", w_reshape, 0},
    {"permute", "Permute", w_permute, 0}, {"pad", "Padding", w_pad, 0}, {"slice", "Crop", w_slice, 0},
    {"upsample_nearest2d", "Interp", w_interp, 1}, {"upsample_bilinear2d", "Interp", w_interp, 2},
    {"upsample_bicubic2d", "Interp", w_interp, 3},
};

/* What has no ncnn layer, and why (docs/formats.md). */
static const char *const missing[][2] = {
    {"log_softmax", "no LogSoftmax layer (Softmax then log is another rounding)"},
    {"softsign", "no Softsign layer"},
    {"upsample_nearest_exact2d", "Interp's nearest is floor(dst * ratio), without the half-pixel centres"},
    {"matmul", "not written yet (ncnn's MatMul)"},
};

int par_nx_node(nx *e, const par_node *n)
{
    e->node = n;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (!strcmp(rows[i].op, n->op)) return rows[i].fn(e, &rows[i]);
    for (size_t i = 0; i < sizeof missing / sizeof missing[0]; i++)
        if (!strcmp(missing[i][0], n->op)) return no(e, "%s", missing[i][1]);
    return no(e, "no ncnn layer for this op");
}
