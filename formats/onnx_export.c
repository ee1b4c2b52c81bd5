/*
 * onnx_export.c - a parity case as an ONNX model (opset 17, IR 8): one row per parity op in `rows` below, each
 * writing the ONNX nodes that compute the same thing. Inputs keep their names, dtypes and shapes; constants become
 * initializers with raw data; a quantized value (qu8 / qs8) travels as its integers with a DequantizeLinear beside
 * it (QDQ form), so a quantized parity node becomes DequantizeLinear -> float op -> QuantizeLinear, which is the
 * ideal real result requantized: parity's definition of every quantized op (docs/quantization.md).
 *
 * What cannot be exported says why (PAR_UNSUPPORTED naming the node): docs/formats.md lists it.
 *
 * Must not: change the case; write anything but through par_onnx_save.
 *
 * The building blocks the writers share (names, initializers, attributes, nodes, quantized inputs and outputs) are
 * onnx_export_util.c's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ops.h"
#include "formats/layout.h"
#include "formats/onnx_export_int.h"

/* ---------------------------------------------------------------------------------------------------------------
 * One function per parity op (or family)
 * ------------------------------------------------------------------------------------------------------------- */

static const char *onnx_twin(const char *op);

static const char *x0(ex *e) { return in_name(e, e->node->inputs[0]); }

static int ex_same(ex *e)
{
    int32_t n = e->node->n_inputs;
    const char *in[8];
    for (int32_t i = 0; i < n && i < 8; i++) in[i] = in_name(e, e->node->inputs[i]);
    return finish_out(e, node(e, onnx_twin(e->node->op), n, in, out_name(e), NULL));
}

static int ex_clamp(ex *e)
{
    double lo, hi;
    const char *op = e->node->op;
    if (strcmp(op, "relu6") == 0) lo = 0, hi = 6;
    else if (strcmp(op, "hardtanh") == 0) lo = par_attr_float(e->node, "min_val", -1), hi = par_attr_float(e->node, "max_val", 1);
    else lo = par_attr_float(e->node, "min", -INFINITY), hi = par_attr_float(e->node, "max", INFINITY);
    const char *in[3] = {x0(e), isinf(lo) ? "" : scalar_f32(e, (float)lo), isinf(hi) ? "" : scalar_f32(e, (float)hi)};
    return finish_out(e, node(e, "Clip", isinf(hi) ? 2 : 3, in, out_name(e), NULL));
}

static int ex_leaky(ex *e)
{
    attrs l = {.n = 0};
    at_f(e, &l, "alpha", par_attr_float(e->node, "negative_slope", 0.01));
    const char *in[1] = {x0(e)};
    return finish_out(e, node(e, "LeakyRelu", 1, in, out_name(e), &l));
}

static int ex_elu(ex *e)
{
    attrs l = {.n = 0};
    at_f(e, &l, "alpha", par_attr_float(e->node, "alpha", 1));
    const char *in[1] = {x0(e)};
    return finish_out(e, node(e, "Elu", 1, in, out_name(e), &l));
}

static int ex_hardsigmoid(ex *e)
{
    attrs l = {.n = 0};
    at_f(e, &l, "alpha", 1.0 / 6.0);
    at_f(e, &l, "beta", 0.5);
    const char *in[1] = {x0(e)};
    return finish_out(e, node(e, "HardSigmoid", 1, in, out_name(e), &l));
}

/* silu: x * Sigmoid(x); gelu: 0.5 x (1 + Erf(x / sqrt 2)) or the tanh form (ONNX has Gelu only from opset 20) */
static int ex_silu_gelu(ex *e)
{
    const char *x = x0(e);
    if (strcmp(e->node->op, "silu") == 0) {
        const char *s = node(e, "Sigmoid", 1, &x, NULL, NULL);
        const char *in[2] = {x, s};
        return finish_out(e, node(e, "Mul", 2, in, out_name(e), NULL));
    }
    const char *t;
    if (strcmp(par_attr_str(e->node, "approximate", "none"), "tanh") == 0) {
        const char *x2[2] = {x, x}, *x3;
        const char *sq = node(e, "Mul", 2, x2, NULL, NULL);
        const char *cu[2] = {sq, x};
        x3 = node(e, "Mul", 2, cu, NULL, NULL);
        const char *k1[2] = {x3, scalar_f32(e, 0.044715f)};
        const char *a = node(e, "Mul", 2, k1, NULL, NULL);
        const char *s1[2] = {x, a};
        const char *b = node(e, "Add", 2, s1, NULL, NULL);
        const char *k2[2] = {b, scalar_f32(e, (float)sqrt(2.0 / M_PI))};
        const char *c = node(e, "Mul", 2, k2, NULL, NULL);
        t = node(e, "Tanh", 1, &c, NULL, NULL);
    } else {
        const char *k[2] = {x, scalar_f32(e, (float)(1.0 / sqrt(2.0)))};
        const char *a = node(e, "Mul", 2, k, NULL, NULL);
        t = node(e, "Erf", 1, &a, NULL, NULL);
    }
    const char *p1[2] = {t, scalar_f32(e, 1.0f)};
    const char *u = node(e, "Add", 2, p1, NULL, NULL);
    const char *hx[2] = {x, scalar_f32(e, 0.5f)};
    const char *h = node(e, "Mul", 2, hx, NULL, NULL);
    const char *fin[2] = {h, u};
    return finish_out(e, node(e, "Mul", 2, fin, out_name(e), NULL));
}

static int ex_rsqrt(ex *e)
{
    const char *x = x0(e);
    const char *r = node(e, "Sqrt", 1, &x, NULL, NULL);
    return finish_out(e, node(e, "Reciprocal", 1, &r, out_name(e), NULL));
}

static int ex_prelu(ex *e)
{
    const par_value *x = iv(e, 0), *s = iv(e, 1);
    const char *sn = in_name(e, e->node->inputs[1]);
    if (s->rank == 1 && s->dims[0] > 1 && x->rank > 2) {
        /* [C] -> [C, 1, ...]: ONNX broadcasts from the trailing dimension */
        int64_t sh[PAR_MAX_RANK];
        sh[0] = s->dims[0];
        for (int32_t i = 1; i < x->rank - 1; i++) sh[i] = 1;
        const char *in[2] = {sn, const_i64(e, x->rank - 1, sh)};
        sn = node(e, "Reshape", 2, in, NULL, NULL);
    }
    const char *in[2] = {x0(e), sn};
    return finish_out(e, node(e, "PRelu", 2, in, out_name(e), NULL));
}

/* The explicit pads of conv2d's pad_mode (same / valid computed from the input, docs/ops.md). */
static void conv_pads(ex *e, const par_value *x, const par_value *w, int64_t *pad)
{
    const char *mode = par_attr_str(e->node, "pad_mode", "explicit");
    for (int i = 0; i < 4; i++) pad[i] = par_attr_ints_at(e->node, "padding", i, 0);
    if (strcmp(mode, "valid") == 0) pad[0] = pad[1] = pad[2] = pad[3] = 0;
    if (strcmp(mode, "same") == 0)
        for (int d = 0; d < 2; d++) {
            int64_t in = x->dims[2 + d], st = par_attr_ints_at(e->node, "stride", d, 1);
            int64_t dl = par_attr_ints_at(e->node, "dilation", d, 1), k = w->dims[2 + d];
            int64_t out = (in + st - 1) / st, total = (out - 1) * st + (k - 1) * dl + 1 - in;
            if (total < 0) total = 0;
            pad[d] = total / 2;
            pad[d + 2] = total - total / 2;
        }
}

static int ex_conv(ex *e)
{
    const par_value *x = iv(e, 0), *w = iv(e, 1);
    int tr = strcmp(e->node->op, "conv_transpose2d") == 0;
    int64_t st[2], dl[2], pad[4], k[2] = {w->dims[2], w->dims[3]};
    for (int d = 0; d < 2; d++) {
        st[d] = par_attr_ints_at(e->node, "stride", d, 1);
        dl[d] = par_attr_ints_at(e->node, "dilation", d, 1);
    }
    if (tr) for (int i = 0; i < 4; i++) pad[i] = par_attr_ints_at(e->node, "padding", i, 0);
    else conv_pads(e, x, w, pad);
    attrs l = {.n = 0};
    at_ints(e, &l, "kernel_shape", 2, k);
    at_ints(e, &l, "strides", 2, st);
    at_ints(e, &l, "dilations", 2, dl);
    at_ints(e, &l, "pads", 4, pad);
    at_i(e, &l, "group", par_attr_int(e->node, "groups", 1));
    if (tr) {
        int64_t op[2] = {par_attr_ints_at(e->node, "output_padding", 0, 0), par_attr_ints_at(e->node, "output_padding", 1, 0)};
        at_ints(e, &l, "output_padding", 2, op);
    }
    int32_t n = iv(e, 2) ? 3 : 2;
    const par_value *b = iv(e, 2);
    const char *in[3] = {x0(e), in_name(e, e->node->inputs[1]), ""};
    if (n == 3) in[2] = b->dtype == PAR_DTYPE_I32 ? bias_name(e, e->node->inputs[2]) : in_name(e, e->node->inputs[2]);
    return finish_out(e, node(e, tr ? "ConvTranspose" : "Conv", n, in, out_name(e), &l));
}

static int ex_linear(ex *e)
{
    const par_value *x = iv(e, 0), *b = iv(e, 2);
    const char *w = in_name(e, e->node->inputs[1]);
    const char *bn = !b ? "" : b->dtype == PAR_DTYPE_I32 ? bias_name(e, e->node->inputs[2]) : in_name(e, e->node->inputs[2]);
    if (x->rank == 2) {
        attrs l = {.n = 0};
        at_i(e, &l, "transB", 1);
        const char *in[3] = {x0(e), w, bn};
        return finish_out(e, node(e, "Gemm", b ? 3 : 2, in, out_name(e), &l));
    }
    attrs l = {.n = 0};
    int64_t perm[2] = {1, 0};
    at_ints(e, &l, "perm", 2, perm);
    const par_value *wv = iv(e, 1);
    const char *wt;
    if (wv->kind == PAR_VALUE_CONST && wv->dtype == PAR_DTYPE_F32) {
        /* a constant weight [O, K] written transposed, [K, O], as MatMul takes it */
        float *t = malloc(sizeof(float) * (size_t)wv->numel);
        if (!t) return EX_ERR;
        const int32_t tr[2] = {1, 0};
        par_fmt_permute(wv->data, t, sizeof(float), 2, wv->dims, tr);
        int64_t d[2] = {wv->dims[1], wv->dims[0]};
        wt = const_f32(e, 2, d, t);
        free(t);
    } else {
        wt = node(e, "Transpose", 1, &w, NULL, &l);
    }
    const char *in[2] = {x0(e), wt};
    const char *y = node(e, "MatMul", 2, in, b ? NULL : out_name(e), NULL);
    if (!b) return finish_out(e, y);
    const char *in2[2] = {y, bn};
    return finish_out(e, node(e, "Add", 2, in2, out_name(e), NULL));
}

static int ex_pool(ex *e)
{
    int max = strcmp(e->node->op, "max_pool2d") == 0;
    int64_t k[2], st[2], dl[2], pad[4];
    for (int d = 0; d < 2; d++) {
        k[d] = par_attr_ints_at(e->node, "kernel", d, 1);
        st[d] = par_attr_ints_at(e->node, "stride", d, 1);
        dl[d] = par_attr_ints_at(e->node, "dilation", d, 1);
    }
    for (int i = 0; i < 4; i++) pad[i] = par_attr_ints_at(e->node, "padding", i, 0);
    for (int d = 0; par_attr_int(e->node, "ceil_mode", 0) && d < 2; d++)
        if (ox_ceil_pool_differs(iv(e, 0)->dims[2 + d], k[d], st[d], max ? dl[d] : 1, pad[d], pad[d + 2]))
            return no(e, "ceil_mode where the last window starts in the padding (PyTorch drops it, ONNX keeps it)");
    attrs l = {.n = 0};
    at_ints(e, &l, "kernel_shape", 2, k);
    at_ints(e, &l, "strides", 2, st);
    at_ints(e, &l, "pads", 4, pad);
    at_i(e, &l, "ceil_mode", par_attr_int(e->node, "ceil_mode", 0));
    if (max) at_ints(e, &l, "dilations", 2, dl);
    else at_i(e, &l, "count_include_pad", par_attr_int(e->node, "count_include_pad", 1));
    const char *in[1] = {x0(e)};
    return finish_out(e, node(e, max ? "MaxPool" : "AveragePool", 1, in, out_name(e), &l));
}

static int ex_adaptive(ex *e)
{
    const par_value *x = iv(e, 0);
    int64_t k[2], z[4] = {0, 0, 0, 0};
    for (int d = 0; d < 2; d++) {
        int64_t o = par_attr_ints_at(e->node, "output_size", d, 1), in = x->dims[2 + d];
        if (in % o) return no(e, "an adaptive pool whose windows differ in size (%lld into %lld)", (long long)in,
                              (long long)o);
        k[d] = in / o;
    }
    attrs l = {.n = 0};
    at_ints(e, &l, "kernel_shape", 2, k);
    at_ints(e, &l, "strides", 2, k);
    at_ints(e, &l, "pads", 4, z);
    const char *in[1] = {x0(e)};
    return finish_out(e, node(e, "AveragePool", 1, in, out_name(e), &l));
}

static int ex_reduce(ex *e)
{
    const par_attr *a = par_node_attr(e->node, "axes");
    const char *op = onnx_twin(e->node->op);
    attrs l = {.n = 0};
    at_i(e, &l, "keepdims", par_attr_int(e->node, "keepdims", 0));
    if (strcmp(op, "ReduceSum") == 0) {
        const char *in[2] = {x0(e), const_i64(e, a->count, a->ints)};
        return finish_out(e, node(e, op, 2, in, out_name(e), &l));
    }
    at_ints(e, &l, "axes", a->count, a->ints);
    const char *in[1] = {x0(e)};
    return finish_out(e, node(e, op, 1, in, out_name(e), &l));
}

static int ex_axis(ex *e)
{
    attrs l = {.n = 0};
    at_i(e, &l, "axis", par_attr_int(e->node, "axis", strcmp(e->node->op, "concat") == 0 ? 1 : -1));
    const char *in[64];
    int32_t n = e->node->n_inputs;
    for (int32_t i = 0; i < n; i++) in[i] = in_name(e, e->node->inputs[i]);
    return finish_out(e, node(e, onnx_twin(e->node->op), n, in, out_name(e), &l));
}

/* argmax / argmin: ONNX's ArgMax / ArgMin give int64 indices, parity's i32: a Cast to int32 after it, under the
 * output's name. */
static int ex_arg(ex *e)
{
    attrs l = {.n = 0};
    at_i(e, &l, "axis", par_attr_int(e->node, "axis", 0));
    at_i(e, &l, "keepdims", par_attr_int(e->node, "keepdims", 0));
    at_i(e, &l, "select_last_index", par_attr_int(e->node, "select_last", 0));
    const char *in[1] = {x0(e)};
    const char *idx = node(e, onnx_twin(e->node->op), 1, in, fresh(e, "index"), &l);
    if (!idx) return EX_ERR;
    attrs c = {.n = 0};
    at_i(e, &c, "to", PAR_ONNX_INT32);
    return node(e, "Cast", 1, &idx, out_name(e), &c) ? EX_OK : EX_ERR;
}

static int ex_reshape(ex *e)
{
    const par_value *y = &e->g->values[e->node->outputs[0]];
    if (strcmp(e->node->op, "flatten") == 0 && par_attr_int(e->node, "start_dim", 1) == 1 &&
        (par_attr_int(e->node, "end_dim", -1) == -1 || par_attr_int(e->node, "end_dim", -1) == iv(e, 0)->rank - 1)) {
        attrs l = {.n = 0};
        at_i(e, &l, "axis", 1);
        const char *in[1] = {x0(e)};
        return finish_out(e, node(e, "Flatten", 1, in, out_name(e), &l));
    }
    const par_attr *sh = strcmp(e->node->op, "reshape") == 0 ? par_node_attr(e->node, "shape") : NULL;
    /* the case's own shape (a -1 stays -1: ONNX infers it the same way) */
    const char *in[2] = {x0(e), sh ? const_i64(e, sh->count, sh->ints) : const_i64(e, y->rank, y->dims)};
    return finish_out(e, node(e, "Reshape", 2, in, out_name(e), NULL));
}

static int ex_permute(ex *e)
{
    const par_attr *p = par_node_attr(e->node, "perm");
    attrs l = {.n = 0};
    at_ints(e, &l, "perm", p->count, p->ints);
    const char *in[1] = {x0(e)};
    return finish_out(e, node(e, "Transpose", 1, in, out_name(e), &l));
}

static int ex_pad(ex *e)
{
    const par_attr *p = par_node_attr(e->node, "pads");
    int32_t r = p->count / 2;
    int64_t q[2 * PAR_MAX_RANK];
    for (int32_t i = 0; i < r; i++) q[i] = p->ints[2 * i], q[i + r] = p->ints[2 * i + 1];
    const char *mode = par_attr_str(e->node, "mode", "constant");
    attrs l = {.n = 0};
    at_s(e, &l, "mode", strcmp(mode, "replicate") == 0 ? "edge" : mode);
    const char *in[3] = {x0(e), const_i64(e, 2 * r, q), scalar_f32(e, (float)par_attr_float(e->node, "value", 0))};
    return finish_out(e, node(e, "Pad", 3, in, out_name(e), &l));
}

static int ex_slice(ex *e)
{
    int64_t v[4] = {par_attr_int(e->node, "start", 0), par_attr_int(e->node, "end", INT64_MAX),
                    par_attr_int(e->node, "dim", 0), par_attr_int(e->node, "step", 1)};
    const char *in[5] = {x0(e), const_i64(e, 1, &v[0]), const_i64(e, 1, &v[1]), const_i64(e, 1, &v[2]),
                         const_i64(e, 1, &v[3])};
    return finish_out(e, node(e, "Slice", 5, in, out_name(e), NULL));
}

static int ex_gather(ex *e)
{
    int emb = strcmp(e->node->op, "embedding") == 0;
    attrs l = {.n = 0};
    at_i(e, &l, "axis", emb ? 0 : par_attr_int(e->node, "axis", 0));
    const char *in[2] = {in_name(e, e->node->inputs[emb ? 1 : 0]), in_name(e, e->node->inputs[emb ? 0 : 1])};
    return finish_out(e, node(e, "Gather", 2, in, out_name(e), &l));
}

static int ex_masked_fill(ex *e)
{
    const char *in[3] = {in_name(e, e->node->inputs[1]), scalar_f32(e, (float)par_attr_float(e->node, "value", 0)),
                         x0(e)};
    if (iv(e, 0)->dtype != PAR_DTYPE_F32) return no(e, "masked_fill of %s", par_dtype_name(iv(e, 0)->dtype));
    return finish_out(e, node(e, "Where", 3, in, out_name(e), NULL));
}

static int ex_norm(ex *e)
{
    const par_value *x = iv(e, 0);
    const char *op = e->node->op;
    attrs l = {.n = 0};
    at_f(e, &l, "epsilon", par_attr_float(e->node, "eps", 1e-5));
    if (strcmp(op, "batch_norm") == 0) {
        const char *in[5];
        for (int i = 0; i < 5; i++) in[i] = in_name(e, e->node->inputs[i]);
        return finish_out(e, node(e, "BatchNormalization", 5, in, out_name(e), &l));
    }
    /* layer_norm / instance_norm: ONNX needs the scale (and instance norm the bias): ones / zeros when absent */
    int64_t shape[PAR_MAX_RANK], n = 1;
    int32_t r = 0;
    if (strcmp(op, "layer_norm") == 0) {
        const par_attr *ns = par_node_attr(e->node, "normalized_shape");
        for (int32_t i = 0; i < ns->count; i++) shape[r++] = ns->ints[i], n *= ns->ints[i];
        at_i(e, &l, "axis", x->rank - ns->count);
    } else {
        shape[r++] = n = x->dims[1];
    }
    const char *in[3];
    in[0] = x0(e);
    for (int i = 1; i < 3; i++) {
        if (iv(e, i)) {
            in[i] = in_name(e, e->node->inputs[i]);
            continue;
        }
        float *f = malloc(sizeof(float) * (size_t)n);
        if (!f) return EX_ERR;
        for (int64_t k = 0; k < n; k++) f[k] = i == 1 ? 1.0f : 0.0f;
        in[i] = const_f32(e, r, shape, f);
        free(f);
    }
    return finish_out(e, node(e, strcmp(op, "layer_norm") == 0 ? "LayerNormalization" : "InstanceNormalization", 3,
                              in, out_name(e), &l));
}

/* upsample_*: Resize(X, roi "", scales or sizes) with the coordinate mode that computes parity's rule. */
static int ex_resize(ex *e)
{
    const par_value *x = iv(e, 0), *y = &e->g->values[e->node->outputs[0]];
    const char *op = e->node->op;
    attrs l = {.n = 0};
    int ac = par_attr_int(e->node, "align_corners", 0) != 0;
    if (strcmp(op, "upsample_nearest2d") == 0) {
        at_s(e, &l, "mode", "nearest");
        at_s(e, &l, "coordinate_transformation_mode", "asymmetric");
        at_s(e, &l, "nearest_mode", "floor");
    } else if (strcmp(op, "upsample_nearest_exact2d") == 0) {
        at_s(e, &l, "mode", "nearest");
        at_s(e, &l, "coordinate_transformation_mode", "half_pixel");
        at_s(e, &l, "nearest_mode", "round_prefer_ceil");
    } else if (strcmp(op, "upsample_bilinear2d") == 0) {
        /* half_pixel, not pytorch_half_pixel: the two differ only on an output of size 1, where half_pixel computes
         * PyTorch's in / 2 - 0.5; below the edge ONNX's clamped neighbours give PyTorch's max(0, src) */
        at_s(e, &l, "mode", "linear");
        at_s(e, &l, "coordinate_transformation_mode", ac ? "align_corners" : "half_pixel");
    } else {
        at_s(e, &l, "mode", "cubic");
        at_f(e, &l, "cubic_coeff_a", -0.75);
        at_s(e, &l, "coordinate_transformation_mode", ac ? "align_corners" : "half_pixel");
    }
    int32_t nsc = par_attr_count(e->node, "scale");
    if (nsc > 0 && !ac) { /* align_corners: parity's coordinates come from the sizes, so the sizes are written */
        float sc[4] = {1, 1, (float)par_attr_floats_at(e->node, "scale", 0, 1),
                       (float)par_attr_floats_at(e->node, "scale", nsc > 1 ? 1 : 0, 1)};
        /* PyTorch's size rule (reference/resize.c): nearest and bilinear copy an axis that keeps its size, and
         * nearest takes dst / 2 on an axis that doubles it, whatever the scale; ONNX computes from the scale it is
         * given, so there the scale written is the sizes' ratio (1 or 2: exact in f32). nearest-exact and bicubic
         * resample such an axis in parity, but ONNX Runtime and OpenVINO copy it: refused. */
        int nearest = strcmp(op, "upsample_nearest2d") == 0;
        int same_size_copies = nearest || strcmp(op, "upsample_bilinear2d") == 0;
        for (int d = 0; d < 2; d++) {
            int64_t in = x->dims[2 + d], out = y->dims[2 + d];
            if (out == in && same_size_copies) sc[2 + d] = 1.0f;
            else if (out == 2 * in && nearest) sc[2 + d] = 2.0f;
            else if (out == in && sc[2 + d] != 1.0f)
                return no(e, "a scale that keeps the size (nearest-exact and bicubic resample there; ONNX "
                             "runtimes copy)");
        }
        int64_t four = 4;
        const char *in[3] = {x0(e), "", const_f32(e, 1, &four, sc)};
        return finish_out(e, node(e, "Resize", 3, in, out_name(e), &l));
    }
    const char *in[4] = {x0(e), "", "", const_i64(e, 4, y->dims)};
    return finish_out(e, node(e, "Resize", 4, in, out_name(e), &l));
}

static int ex_quantize(ex *e)
{
    /* quantize: its output's own QuantizeLinear (finish_out) of the float input does it all */
    return finish_out(e, x0(e));
}

static int ex_dequantize(ex *e)
{
    /* the DequantizeLinear of its quantized input, written under this node's output name */
    int32_t k = e->node->inputs[0];
    const par_value *v = &e->g->values[k];
    if (v->quant_axis >= 0) return no(e, "dequantizing a per-channel tensor");
    const char *s = scalar_f32(e, v->scale);
    uint8_t zb = (uint8_t)v->zero_point;
    const char *zn = fresh(e, "zp");
    if (!s || !zn || !add_init(e, zn, onnx_dtype(v->dtype), 0, NULL, &zb)) return EX_ERR;
    const char *in[3] = {v->name, s, zn};
    return node(e, "DequantizeLinear", 3, in, e->g->values[e->node->outputs[0]].name, NULL) ? EX_OK : EX_ERR;
}

typedef struct ex_row {
    const char *op;     /* parity op */
    const char *onnx;   /* its ONNX twin (the one-to-one rows) */
    int (*fn)(ex *);
} ex_row;

static const ex_row rows[] = {
    {"conv2d", "Conv", ex_conv}, {"conv_transpose2d", "ConvTranspose", ex_conv},
    {"linear", "Gemm", ex_linear}, {"matmul", "MatMul", ex_same},
    {"add", "Add", ex_same}, {"sub", "Sub", ex_same}, {"mul", "Mul", ex_same}, {"div", "Div", ex_same},
    {"relu", "Relu", ex_same}, {"relu6", "Clip", ex_clamp}, {"hardtanh", "Clip", ex_clamp},
    {"clamp", "Clip", ex_clamp}, {"leaky_relu", "LeakyRelu", ex_leaky}, {"prelu", "PRelu", ex_prelu},
    {"sigmoid", "Sigmoid", ex_same}, {"tanh", "Tanh", ex_same}, {"hardsigmoid", "HardSigmoid", ex_hardsigmoid},
    {"hardswish", "HardSwish", ex_same}, {"silu", NULL, ex_silu_gelu}, {"gelu", NULL, ex_silu_gelu},
    {"elu", "Elu", ex_elu}, {"sqrt", "Sqrt", ex_same}, {"rsqrt", NULL, ex_rsqrt},
    {"abs", "Abs", ex_same}, {"neg", "Neg", ex_same}, {"exp", "Exp", ex_same}, {"log", "Log", ex_same},
    {"floor", "Floor", ex_same}, {"ceil", "Ceil", ex_same}, {"round", "Round", ex_same},
    {"reciprocal", "Reciprocal", ex_same}, {"sign", "Sign", ex_same}, {"softplus", "Softplus", ex_same},
    {"softsign", "Softsign", ex_same}, {"erf", "Erf", ex_same}, {"sin", "Sin", ex_same}, {"cos", "Cos", ex_same},
    {"pow", "Pow", ex_same}, {"maximum", "Max", ex_same}, {"minimum", "Min", ex_same},
    {"eq", "Equal", ex_same}, {"gt", "Greater", ex_same}, {"lt", "Less", ex_same},
    {"ge", "GreaterOrEqual", ex_same}, {"le", "LessOrEqual", ex_same},
    {"logical_not", "Not", ex_same}, {"logical_and", "And", ex_same}, {"logical_or", "Or", ex_same},
    {"logical_xor", "Xor", ex_same},
    {"max_pool2d", "MaxPool", ex_pool}, {"avg_pool2d", "AveragePool", ex_pool},
    {"adaptive_avg_pool2d", "AveragePool", ex_adaptive}, {"global_avg_pool2d", "GlobalAveragePool", ex_same},
    {"mean", "ReduceMean", ex_reduce}, {"sum", "ReduceSum", ex_reduce}, {"amax", "ReduceMax", ex_reduce},
    {"amin", "ReduceMin", ex_reduce}, {"prod", "ReduceProd", ex_reduce}, {"norm_l1", "ReduceL1", ex_reduce},
    {"norm_l2", "ReduceL2", ex_reduce}, {"sum_square", "ReduceSumSquare", ex_reduce},
    {"logsumexp", "ReduceLogSumExp", ex_reduce},
    {"argmax", "ArgMax", ex_arg}, {"argmin", "ArgMin", ex_arg},
    {"softmax", "Softmax", ex_axis}, {"log_softmax", "LogSoftmax", ex_axis}, {"concat", "Concat", ex_axis},
    {"upsample_nearest2d", "Resize", ex_resize}, {"upsample_bilinear2d", "Resize", ex_resize},
    {"upsample_nearest_exact2d", "Resize", ex_resize}, {"upsample_bicubic2d", "Resize", ex_resize},
    {"reshape", "Reshape", ex_reshape}, {"flatten", "Flatten", ex_reshape}, {"permute", "Transpose", ex_permute},
    {"pad", "Pad", ex_pad}, {"slice", "Slice", ex_slice}, {"where", "Where", ex_same},
    {"masked_fill", "Where", ex_masked_fill}, {"gather", "Gather", ex_gather}, {"embedding", "Gather", ex_gather},
    {"batch_norm", "BatchNormalization", ex_norm}, {"layer_norm", "LayerNormalization", ex_norm},
    {"instance_norm", "InstanceNormalization", ex_norm},
    {"rms_norm", NULL, par_oxe_rms_norm}, {"rope", NULL, par_oxe_rope}, {"sdpa", NULL, par_oxe_sdpa},
    {"slice_scatter", NULL, par_oxe_slice_scatter},
    {"quantize", "QuantizeLinear", ex_quantize}, {"dequantize", "DequantizeLinear", ex_dequantize},
};

static const ex_row *ex_row_of(const char *op)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (strcmp(rows[i].op, op) == 0) return &rows[i];
    return NULL;
}

static const char *onnx_twin(const char *op)
{
    const ex_row *r = ex_row_of(op);
    return r && r->onnx ? r->onnx : "";
}

static void value_info(ex *e, par_onnx_value_info *vi, const par_value *v)
{
    memset(vi, 0, sizeof *vi);
    vi->name = v->name;
    vi->elem_type = onnx_dtype(v->dtype);
    vi->rank = v->rank;
    for (int32_t i = 0; i < v->rank; i++) vi->dims[i] = v->dims[i];
}

par_onnx_model *par_onnx_export_model(const par_case *c, par_status *st, par_msg *msg)
{
    return par_onnx_export_graph(par_graph_desc_of(c->graph), par_graph_name(c->graph), st, msg);
}

par_onnx_model *par_onnx_export_graph(const par_graph_desc *gd, const char *name, par_status *st, par_msg *msg)
{
    *st = PAR_ERROR;
    ex e = {.g = gd, .msg = msg};
    e.m = par_onnx_new();
    e.fname = calloc((size_t)e.g->n_values, sizeof *e.fname);
    if (!e.m || !e.fname) {
        par_onnx_free(e.m);
        free(e.fname);
        par_msgf(msg, PAR_ERROR, "out of memory");
        return NULL;
    }
    const par_graph_desc *g = e.g;
    int rc = EX_OK;
    for (int32_t k = 0; rc == EX_OK && k < g->n_values; k++) {
        const par_value *v = &g->values[k];
        if (v->kind != PAR_VALUE_CONST) continue;
        if (!add_init(&e, v->name, onnx_dtype(v->dtype), v->rank, v->dims, v->data)) rc = EX_ERR;
    }
    for (int32_t i = 0; rc == EX_OK && i < g->n_nodes; i++) {
        e.node = &g->nodes[i];
        const ex_row *r = ex_row_of(e.node->op);
        if (!r) {
            rc = no(&e, "no ONNX form of this op");
            break;
        }
        for (int32_t k = 0; k < e.node->n_inputs; k++) {
            const par_value *in = iv(&e, k);
            if (in && in->dtype == PAR_DTYPE_F16) {
                rc = no(&e, "f16 tensors (exported as float only)");
                break;
            }
        }
        for (int32_t k = 0; rc == EX_OK && k < e.node->n_outputs; k++)
            if (g->values[e.node->outputs[k]].dtype == PAR_DTYPE_QS16) rc = no(&e, "qs16 tensors (no int16 form here)");
        for (int32_t k = 0; rc == EX_OK && k < e.node->n_inputs; k++) {
            const par_value *in = iv(&e, k);
            if (in && in->dtype == PAR_DTYPE_QS16) rc = no(&e, "qs16 tensors (no int16 form here)");
        }
        if (rc == EX_OK) rc = r->fn(&e);
    }
    if (rc != EX_OK) {
        if (rc == EX_NO)
            *st = par_msgf(msg, PAR_UNSUPPORTED, "node '%s' (%s): %s", e.node ? e.node->name : "-",
                     e.node ? e.node->op : "-", e.why);
        else if (!msg->text[0]) par_msgf(msg, PAR_ERROR, "out of memory");
        par_onnx_free(e.m);
        free(e.nodes);
        free(e.inits);
        free(e.fname);
        return NULL;
    }
    par_onnx_model *m = e.m;
    par_onnx_graph *og = &m->graph;
    og->name = par_onnx_strdup(m, name ? name : "parity");
    og->nodes = par_onnx_alloc(m, sizeof *og->nodes * (size_t)(e.n_nodes ? e.n_nodes : 1));
    og->initializers = par_onnx_alloc(m, sizeof *og->initializers * (size_t)(e.n_inits ? e.n_inits : 1));
    og->inputs = par_onnx_alloc(m, sizeof *og->inputs * (size_t)(g->n_inputs ? g->n_inputs : 1));
    og->outputs = par_onnx_alloc(m, sizeof *og->outputs * (size_t)g->n_outputs);
    m->opsets = par_onnx_alloc(m, sizeof *m->opsets);
    if (og->nodes && og->initializers && og->inputs && og->outputs && m->opsets) {
        if (e.n_nodes) memcpy(og->nodes, e.nodes, sizeof *og->nodes * (size_t)e.n_nodes);
        og->n_nodes = e.n_nodes;
        if (e.n_inits) memcpy(og->initializers, e.inits, sizeof *og->initializers * (size_t)e.n_inits);
        og->n_initializers = e.n_inits;
        for (int32_t i = 0; i < g->n_inputs; i++) value_info(&e, &og->inputs[i], &g->values[g->inputs[i]]);
        og->n_inputs = g->n_inputs;
        for (int32_t i = 0; i < g->n_outputs; i++) value_info(&e, &og->outputs[i], &g->values[g->outputs[i]]);
        og->n_outputs = g->n_outputs;
        m->opsets[0].domain = "";
        m->opsets[0].version = 17;
        m->n_opsets = 1;
        m->producer_name = "parity";
        m->producer_version = "1";
    } else {
        par_onnx_free(m);
        m = NULL;
        par_msgf(msg, PAR_ERROR, "out of memory");
    }
    free(e.nodes);
    free(e.inits);
    free(e.fname);
    if (m) *st = PAR_OK;
    return m;
}

par_status par_onnx_export(const par_case *c, const char *path, par_msg *msg)
{
    msg->text[0] = 0;
    par_status st;
    par_onnx_model *m = par_onnx_export_model(c, &st, msg);
    if (!m) return st;
    st = par_onnx_save(m, path, msg);
    par_onnx_free(m);
    return st;
}
