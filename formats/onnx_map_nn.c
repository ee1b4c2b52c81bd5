/*
 * onnx_map_nn.c - the ONNX importer's mapping functions of the network ops: convolutions, matrix products,
 * pooling, reductions, softmax, normalization, resampling (the rows of onnx_ops.c's table name them). Each reads
 * the current node and emits parity nodes through onnx_values.c; docs/formats.md lists what maps to what.
 *
 * Must not: walk a graph or call the table.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "formats/onnx_int.h"

#define MAXL 64

/* kernel, strides, pads [t, l, b, r], dilations of a 2-D conv or pool; auto_pad resolved from the input's size. */
static int window2d(ox_imp *im, const par_value *x, const int64_t *k, int64_t *st, int64_t *pad, int64_t *dil)
{
    int64_t v[MAXL];
    st[0] = st[1] = dil[0] = dil[1] = 1;
    pad[0] = pad[1] = pad[2] = pad[3] = 0;
    int32_t n;
    if ((n = ox_attr_ints(im, "strides", v, MAXL)) >= 0) {
        if (n != 2) return ox_unsupported(im, "%d-D window (parity: 2-D)", (int)n);
        st[0] = v[0], st[1] = v[1];
    }
    if ((n = ox_attr_ints(im, "dilations", v, MAXL)) >= 0) {
        if (n != 2) return ox_unsupported(im, "%d-D window (parity: 2-D)", (int)n);
        dil[0] = v[0], dil[1] = v[1];
    }
    if ((n = ox_attr_ints(im, "pads", v, MAXL)) >= 0) {
        if (n != 4) return ox_unsupported(im, "pads of %d values (parity: 2-D)", (int)n);
        pad[0] = v[0], pad[1] = v[1], pad[2] = v[2], pad[3] = v[3]; /* ONNX [h0, w0, h1, w1] = [t, l, b, r] */
    }
    const char *ap = ox_attr_s(im, "auto_pad", "NOTSET");
    if (strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0) {
        for (int d = 0; d < 2; d++) {
            int64_t in = x->dims[2 + d], out = (in + st[d] - 1) / st[d];
            int64_t total = (out - 1) * st[d] + (k[d] - 1) * dil[d] + 1 - in;
            if (total < 0) total = 0;
            int64_t small = total / 2, big = total - small;
            pad[d] = ap[5] == 'U' ? small : big;
            pad[d + 2] = ap[5] == 'U' ? big : small;
        }
    } else if (strcmp(ap, "VALID") == 0) {
        pad[0] = pad[1] = pad[2] = pad[3] = 0;
    } else if (strcmp(ap, "NOTSET") != 0) {
        return ox_unsupported(im, "auto_pad '%.20s'", ap);
    }
    for (int i = 0; i < 4; i++)
        if (pad[i] < 0) return ox_unsupported(im, "negative pads");
    return OX_OK;
}

int ox_map_conv(ox_imp *im)
{
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    const par_value *xv = ox_pv(im, x);
    if (xv->rank != 4) return ox_unsupported(im, "%d-D convolution (parity: 2-D)", (int)xv->rank - 2);
    int32_t w = ox_tensor(im, ox_in(im, 1));
    if (w < 0) return OX_UNSUPPORTED;
    const par_value *wv = ox_pv(im, w);
    int32_t ins[3] = {x, w, -1};
    if (ox_in(im, 2) && (ins[2] = ox_tensor(im, ox_in(im, 2))) < 0) return OX_UNSUPPORTED;
    int64_t st[2], pad[4], dil[2], k[2] = {wv->rank == 4 ? wv->dims[2] : 1, wv->rank == 4 ? wv->dims[3] : 1};
    int rc = window2d(im, xv, k, st, pad, dil);
    if (rc != OX_OK) return rc;
    par_attr a[4] = {par_a_ints("stride", 2, st), par_a_ints("padding", 4, pad), par_a_ints("dilation", 2, dil),
                     par_a_int("groups", ox_attr_i(im, "group", 1))};
    return ox_emit(im, "conv2d", ins[2] >= 0 ? 3 : 2, ins, 4, a, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

int ox_map_conv_transpose(ox_imp *im)
{
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    const par_value *xv = ox_pv(im, x);
    if (xv->rank != 4) return ox_unsupported(im, "%d-D transposed convolution (parity: 2-D)", (int)xv->rank - 2);
    if (ox_attr(im, "output_shape")) return ox_unsupported(im, "output_shape (give pads and output_padding)");
    const char *ap = ox_attr_s(im, "auto_pad", "NOTSET");
    if (strcmp(ap, "NOTSET") != 0 && strcmp(ap, "VALID") != 0) return ox_unsupported(im, "auto_pad '%.20s'", ap);
    int32_t w = ox_tensor(im, ox_in(im, 1));
    if (w < 0) return OX_UNSUPPORTED;
    int32_t ins[3] = {x, w, -1};
    if (ox_in(im, 2) && (ins[2] = ox_tensor(im, ox_in(im, 2))) < 0) return OX_UNSUPPORTED;
    int64_t v[MAXL], st[2] = {1, 1}, pad[4] = {0, 0, 0, 0}, dil[2] = {1, 1}, op[2] = {0, 0};
    if (ox_attr_ints(im, "strides", v, MAXL) == 2) st[0] = v[0], st[1] = v[1];
    if (ox_attr_ints(im, "dilations", v, MAXL) == 2) dil[0] = v[0], dil[1] = v[1];
    if (ox_attr_ints(im, "output_padding", v, MAXL) == 2) op[0] = v[0], op[1] = v[1];
    if (ox_attr_ints(im, "pads", v, MAXL) == 4) pad[0] = v[0], pad[1] = v[1], pad[2] = v[2], pad[3] = v[3];
    par_attr a[5] = {par_a_ints("stride", 2, st), par_a_ints("padding", 4, pad), par_a_ints("output_padding", 2, op),
                     par_a_ints("dilation", 2, dil), par_a_int("groups", ox_attr_i(im, "group", 1))};
    return ox_emit(im, "conv_transpose2d", ins[2] >= 0 ? 3 : 2, ins, 5, a, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

int ox_map_matmul(ox_imp *im)
{
    ox_val *a = ox_in(im, 0), *b = ox_in(im, 1);
    if (a && b && a->rank == 1 && b->rank == 2 && b->is_const && b->floats && b->v < 0 && !b->dq_of) {
        /* a vector times a constant matrix [K, N]: parity's linear with the weight [N, K] */
        if (ox_transpose_const(im, b) != OX_OK) return OX_ERROR;
        int32_t ins[2] = {ox_tensor(im, a), ox_tensor(im, b)};
        if (ins[0] < 0 || ins[1] < 0) return OX_UNSUPPORTED;
        return ox_emit(im, "linear", 2, ins, 0, NULL, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
    }
    int32_t ab[2] = {ox_tensor(im, a), ox_tensor(im, b)};
    if (ab[0] < 0 || ab[1] < 0) return OX_UNSUPPORTED;
    if (ox_pv(im, ab[0])->rank < 2 || ox_pv(im, ab[1])->rank < 2)
        return ox_unsupported(im, "a rank-1 operand (parity's matmul takes rank >= 2)");
    return ox_emit(im, "matmul", 2, ab, 0, NULL, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

/* Gemm: alpha A' B' + beta C. transB = 1, alpha = beta = 1 and C of shape [N] (or absent) is parity's linear;
 * otherwise a matmul (B transposed at import when constant) and an add. */
int ox_map_gemm(ox_imp *im)
{
    if (ox_attr_f(im, "alpha", 1.0) != 1.0 || ox_attr_f(im, "beta", 1.0) != 1.0)
        return ox_unsupported(im, "alpha or beta other than 1");
    if (ox_attr_i(im, "transA", 0)) return ox_unsupported(im, "transA = 1");
    int tb = ox_attr_i(im, "transB", 0) != 0;
    ox_val *bv = ox_in(im, 1), *cv = ox_in(im, 2);
    int32_t a = ox_tensor(im, ox_in(im, 0));
    if (a < 0 || !bv) return OX_UNSUPPORTED;
    if (!tb) {
        /* B [K, N] -> the weight [N, K] of linear: transposed at import when constant */
        if (!bv->is_const || bv->v >= 0 || bv->rank != 2 || !bv->floats) {
            int32_t ab[2] = {a, ox_tensor(im, bv)};
            if (ab[1] < 0) return OX_UNSUPPORTED;
            int32_t y = ox_emit(im, "matmul", 2, ab, 0, NULL, cv ? -1 : 0, NULL);
            if (y < 0 || !cv) return y < 0 ? OX_UNSUPPORTED : OX_OK;
            int32_t yc[2] = {y, ox_tensor(im, cv)};
            if (yc[1] < 0) return OX_UNSUPPORTED;
            return ox_emit(im, "add", 2, yc, 0, NULL, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
        }
        if (ox_transpose_const(im, bv) != OX_OK) return OX_ERROR;
    }
    int32_t ins[3] = {a, ox_tensor(im, bv), -1};
    if (ins[1] < 0) return OX_UNSUPPORTED;
    int64_t n = ox_pv(im, ins[1])->dims[0];
    if (cv) {
        if (cv->is_const && cv->numel == n && cv->v < 0) {
            cv->rank = 1;
            cv->dims[0] = n;
        }
        if ((ins[2] = ox_tensor(im, cv)) < 0) return OX_UNSUPPORTED;
        const par_value *c = ox_pv(im, ins[2]);
        if (!(c->rank == 1 && c->dims[0] == n)) {
            int32_t y = ox_emit(im, "linear", 2, ins, 0, NULL, -1, NULL);
            if (y < 0) return OX_UNSUPPORTED;
            int32_t yc[2] = {y, ins[2]};
            return ox_emit(im, "add", 2, yc, 0, NULL, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
        }
    }
    return ox_emit(im, "linear", ins[2] >= 0 ? 3 : 2, ins, 0, NULL, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

int ox_map_pool(ox_imp *im)
{
    int max = strcmp(im->node->op_type, "MaxPool") == 0;
    if (im->node->n_outputs > 1 && im->node->outputs[1][0]) return ox_unsupported(im, "the Indices output");
    if (ox_attr_i(im, "storage_order", 0)) return ox_unsupported(im, "storage_order = 1");
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    const par_value *xv = ox_pv(im, x);
    int64_t k[MAXL];
    int32_t nk = ox_attr_ints(im, "kernel_shape", k, MAXL);
    if (xv->rank != 4 || nk != 2) return ox_unsupported(im, "%d-D pooling (parity: 2-D)", (int)xv->rank - 2);
    int64_t st[2], pad[4], dil[2];
    int rc = window2d(im, xv, k, st, pad, dil);
    if (rc != OX_OK) return rc;
    int64_t ceil_mode = ox_attr_i(im, "ceil_mode", 0);
    for (int d = 0; ceil_mode && d < 2; d++)
        if (ox_ceil_pool_differs(xv->dims[2 + d], k[d], st[d], dil[d], pad[d], pad[d + 2]))
            return ox_unsupported(im, "ceil_mode where the last window starts in the padding (ONNX keeps it, "
                                  "PyTorch drops it)");
    /* padding beyond half the (dilated) window, which ONNX allows and PyTorch (parity) does not: the padding as a
     * pad node of the value the pool ignores (-inf for max; 0 for an average that counts the padding) and a pool
     * without padding, the same windows. Not fused (QDQ) and not with ceil_mode, whose last window depends on it. */
    int wide = 0;
    for (int d = 0; d < 4; d++) wide |= pad[d] > (dil[d % 2] * (k[d % 2] - 1) + 1) / 2;
    int incl = ox_attr_i(im, "count_include_pad", 0) != 0;
    if (wide && !im->fused && !ceil_mode && (max || incl)) {
        int64_t pp[8] = {0, 0, 0, 0, pad[0], pad[2], pad[1], pad[3]};
        par_attr ap[2] = {par_a_ints("pads", 8, pp), par_a_float("value", max ? -INFINITY : 0.0)};
        x = ox_emit(im, "pad", 1, &x, 2, ap, -1, NULL);
        if (x < 0) return OX_UNSUPPORTED;
        memset(pad, 0, sizeof pad);
    }
    if (max) {
        par_attr a[5] = {par_a_ints("kernel", 2, k), par_a_ints("stride", 2, st), par_a_ints("padding", 4, pad),
                         par_a_ints("dilation", 2, dil), par_a_int("ceil_mode", ceil_mode)};
        return ox_emit(im, "max_pool2d", 1, &x, 5, a, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
    }
    if (dil[0] != 1 || dil[1] != 1) return ox_unsupported(im, "dilated average pooling");
    par_attr a[5] = {par_a_ints("kernel", 2, k), par_a_ints("stride", 2, st), par_a_ints("padding", 4, pad),
                     par_a_int("ceil_mode", ceil_mode), par_a_int("count_include_pad", incl)};
    return ox_emit(im, "avg_pool2d", 1, &x, 5, a, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

int ox_map_global_avg(ox_imp *im)
{
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    if (ox_pv(im, x)->rank != 4) return ox_unsupported(im, "%d-D pooling (parity: 2-D)", (int)ox_pv(im, x)->rank - 2);
    if (strcmp(im->node->op_type, "GlobalMaxPool") == 0) {
        int64_t ax[2] = {2, 3};
        par_attr a[2] = {par_a_ints("axes", 2, ax), par_a_int("keepdims", 1)};
        return ox_emit(im, "amax", 1, &x, 2, a, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
    }
    return ox_emit(im, "global_avg_pool2d", 1, &x, 0, NULL, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

/* ReduceMean / ReduceSum / ReduceMax / ...: axes from the attribute (or, from opset 13 for ReduceSum and 18 for the
 * others, the second input); no axes reduces everything unless noop_with_empty_axes. */
int ox_reduce_axes(ox_imp *im, const par_value *xv, int64_t *ax, int32_t *n_out)
{
    int32_t n = ox_attr_ints(im, "axes", ax, PAR_MAX_RANK);
    if (ox_in(im, 1)) {
        n = ox_const_ints(im, ox_in(im, 1), ax, PAR_MAX_RANK);
        if (n < 0) return OX_UNSUPPORTED;
    }
    if (n <= 0) {
        if (ox_attr_i(im, "noop_with_empty_axes", 0)) return ox_unsupported(im, "noop_with_empty_axes with no axes");
        n = xv->rank;
        for (int32_t i = 0; i < n; i++) ax[i] = i;
    }
    if (n == 0) return ox_unsupported(im, "a reduction of a scalar");
    for (int32_t i = 0; i < n; i++)
        if (ox_norm_axis(ax[i], xv->rank) < 0 || ox_norm_axis(ax[i], xv->rank) >= xv->rank)
            return ox_unsupported(im, "axis %lld of a rank-%d input", (long long)ax[i], (int)xv->rank);
    *n_out = n;
    return OX_OK;
}

int ox_map_reduce(ox_imp *im)
{
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    int64_t ax[PAR_MAX_RANK];
    int32_t n;
    ox_val *axv = ox_in(im, 1);
    if (axv && axv->is_const && axv->numel == 0 && ox_attr_i(im, "noop_with_empty_axes", 0))
        return ox_alias(im, 0, x); /* no axes and noop_with_empty_axes: the input itself (a sum, mean, max or min of
                                    * one element) */
    if (ox_reduce_axes(im, ox_pv(im, x), ax, &n) != OX_OK) return OX_UNSUPPORTED;
    par_attr a[2] = {par_a_ints("axes", n, ax), par_a_int("keepdims", ox_attr_i(im, "keepdims", 1))};
    return ox_emit(im, im->twin, 1, &x, 2, a, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

/* ArgMax / ArgMin: parity's argmax / argmin (axis, keepdims, select_last_index as select_last); the output is i32
 * where ONNX's is int64 (the indices fit). */
int ox_map_arg(ox_imp *im)
{
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    par_attr a[3] = {par_a_int("axis", ox_attr_i(im, "axis", 0)), par_a_int("keepdims", ox_attr_i(im, "keepdims", 1)),
                     par_a_int("select_last", ox_attr_i(im, "select_last_index", 0))};
    return ox_emit(im, im->twin, 1, &x, 3, a, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

/* Softmax / LogSoftmax: from opset 13 along one axis (parity's); before, over the input flattened to 2-D at axis,
 * which is parity's along the last axis when axis is the last one, else reshape -> softmax -> reshape. */
int ox_map_softmax(ox_imp *im)
{
    const char *op = im->twin;
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    const par_value *xv = ox_pv(im, x);
    int32_t r = xv->rank;
    int64_t axis = ox_attr_i(im, "axis", im->opset >= 13 ? -1 : 1);
    int32_t a0 = ox_norm_axis(axis, r);
    if (a0 < 0 || a0 >= (r ? r : 1)) return ox_unsupported(im, "axis %lld of a rank-%d input", (long long)axis, (int)r);
    if (im->opset >= 13 || a0 == r - 1) {
        par_attr a = par_a_int("axis", axis);
        return ox_emit(im, op, 1, &x, 1, &a, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
    }
    int64_t d2[2] = {1, 1}, keep[PAR_MAX_RANK];
    for (int32_t i = 0; i < r; i++) {
        keep[i] = xv->dims[i];
        d2[i < a0 ? 0 : 1] *= xv->dims[i];
    }
    par_attr s2 = par_a_ints("shape", 2, d2);
    int32_t f = ox_emit(im, "reshape", 1, &x, 1, &s2, -1, NULL);
    if (f < 0) return OX_UNSUPPORTED;
    par_attr a = par_a_int("axis", 1);
    int32_t y = ox_emit(im, op, 1, &f, 1, &a, -1, NULL);
    if (y < 0) return OX_UNSUPPORTED;
    par_attr sb = par_a_ints("shape", r, keep);
    return ox_emit(im, "reshape", 1, &y, 1, &sb, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

int ox_map_batch_norm(ox_imp *im)
{
    if (im->node->n_outputs > 1 && im->node->outputs[1][0]) return ox_unsupported(im, "training mode outputs");
    if (ox_attr_i(im, "training_mode", 0)) return ox_unsupported(im, "training_mode = 1");
    /* ONNX (X, scale, B, mean, var) = parity (x, weight, bias, running_mean, running_var) */
    int32_t ins[5];
    for (int i = 0; i < 5; i++)
        if ((ins[i] = ox_tensor(im, ox_in(im, i))) < 0) return OX_UNSUPPORTED;
    par_attr a = par_a_float("eps", ox_attr_f(im, "epsilon", 1e-5));
    return ox_emit(im, "batch_norm", 5, ins, 1, &a, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

/* A constant whose every element is v (an ONNX scale of ones or bias of zeros, which parity leaves absent). */
static int const_all(const ox_val *w, float v)
{
    if (!w->is_const || w->from_data || !w->floats) return 0;
    for (int64_t i = 0; i < w->numel; i++)
        if (w->floats[i] != v || (v == 0 && signbit(w->floats[i]))) return 0;
    return 1;
}

int ox_map_instance_norm(ox_imp *im)
{
    int32_t ins[3] = {-1, -1, -1};
    for (int i = 0; i < 3; i++) {
        ox_val *w = ox_in(im, i);
        if (i && w && const_all(w, i == 1 ? 1.0f : 0.0f)) continue;
        if ((ins[i] = ox_tensor(im, w)) < 0) return OX_UNSUPPORTED;
    }
    par_attr a = par_a_float("eps", ox_attr_f(im, "epsilon", 1e-5));
    int32_t n_in = ins[2] >= 0 ? 3 : ins[1] >= 0 ? 2 : 1;
    return ox_emit(im, "instance_norm", n_in, ins, 1, &a, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

/* LayerNormalization's optional outputs, as its function body (opset 17) defines them over the normalized axes,
 * kept: Mean = ReduceMean(X), InvStdDev = 1 / sqrt(ReduceMean((X - Mean)^2) + epsilon), each a parity node of the
 * same meaning (mean, sub, mul, mean, add, rsqrt). */
static int layer_norm_stats(ox_imp *im, int32_t x, int32_t axis)
{
    const par_value *pv = ox_pv(im, x);
    int64_t ax[PAR_MAX_RANK];
    int32_t na = 0;
    for (int32_t i = axis; i < pv->rank; i++) ax[na++] = i;
    par_attr a[2] = {par_a_ints("axes", na, ax), par_a_int("keepdims", 1)};
    int want_inv = im->node->n_outputs > 2 && im->node->outputs[2][0];
    int32_t m = ox_emit(im, "mean", 1, &x, 2, a, im->node->n_outputs > 1 && im->node->outputs[1][0] ? 1 : -1, NULL);
    if (m < 0) return OX_UNSUPPORTED;
    if (!want_inv) return OX_OK;
    int32_t dm[2] = {x, m};
    int32_t d = ox_emit(im, "sub", 2, dm, 0, NULL, -1, NULL);
    int32_t dd[2] = {d, d};
    int32_t sq = d < 0 ? -1 : ox_emit(im, "mul", 2, dd, 0, NULL, -1, NULL);
    int32_t var = sq < 0 ? -1 : ox_emit(im, "mean", 1, &sq, 2, a, -1, NULL);
    if (var < 0) return OX_UNSUPPORTED;
    int32_t ve[2] = {var, ox_scalar_f32(im, "layer_norm_eps", (float)ox_attr_f(im, "epsilon", 1e-5))};
    if (ve[1] < 0) return OX_ERROR;
    int32_t s = ox_emit(im, "add", 2, ve, 0, NULL, -1, NULL);
    return s < 0 || ox_emit(im, "rsqrt", 1, &s, 0, NULL, 2, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

int ox_map_layer_norm(ox_imp *im)
{
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    const par_value *pv = ox_pv(im, x);
    int32_t axis = ox_norm_axis(ox_attr_i(im, "axis", -1), pv->rank);
    if (axis < 0 || axis >= pv->rank) return ox_unsupported(im, "axis out of range");
    int64_t ns[PAR_MAX_RANK];
    int32_t nn = 0;
    for (int32_t i = axis; i < pv->rank; i++) ns[nn++] = pv->dims[i];
    int32_t ins[3] = {x, -1, -1};
    for (int i = 1; i < 3; i++) {
        ox_val *w = ox_in(im, i);
        if (!w || const_all(w, i == 1 ? 1.0f : 0.0f)) continue; /* ONNX needs a scale: ones mean none */
        if (w->rank != nn) {
            /* a scale or bias broadcast to the normalized shape: parity's weight has exactly that shape */
            return ox_unsupported(im, "a scale or bias of rank %d for %d normalized dimensions", (int)w->rank, (int)nn);
        }
        if ((ins[i] = ox_tensor(im, w)) < 0) return OX_UNSUPPORTED;
    }
    par_attr a[2] = {par_a_ints("normalized_shape", nn, ns), par_a_float("eps", ox_attr_f(im, "epsilon", 1e-5))};
    int32_t n_in = ins[2] >= 0 ? 3 : ins[1] >= 0 ? 2 : 1;
    if (ox_emit(im, "layer_norm", n_in, ins, 2, a, 0, NULL) < 0) return OX_UNSUPPORTED;
    int stats = 0;
    for (int32_t k = 1; k < im->node->n_outputs; k++) stats |= im->node->outputs[k][0] != 0;
    return stats ? layer_norm_stats(im, x, axis) : OX_OK;
}

/* Resize (opset 10: X, scales; 11+: X, roi, scales, sizes) and Upsample (X, scales) onto parity's upsample ops:
 * nearest with (asymmetric, floor) is upsample_nearest2d; (half_pixel, floor-free round_prefer_ceil) is not
 * parity's nearest-exact (floor((dst + 0.5) r)) in general, so only the modes that agree map; linear with
 * half_pixel / pytorch_half_pixel / align_corners onto upsample_bilinear2d; cubic (A = -0.75, half_pixel or
 * align_corners, no exclude_outside) onto upsample_bicubic2d. */
int ox_map_resize(ox_imp *im)
{
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    const par_value *pv = ox_pv(im, x);
    if (pv->rank != 4) return ox_unsupported(im, "%d-D resize (parity: 2-D of NCHW)", (int)pv->rank - 2);
    double sc[MAXL];
    int64_t sz[MAXL];
    int32_t nsc = -1, nsz = -1;
    int upsample = strcmp(im->node->op_type, "Upsample") == 0;
    if (upsample && im->opset < 9) nsc = ox_attr_floats(im, "scales", sc, MAXL);
    else if (upsample || im->opset < 11) nsc = ox_const_floats(im, ox_in(im, 1), sc, MAXL);
    else {
        if (ox_in(im, 2) && ox_in(im, 2)->numel > 0) nsc = ox_const_floats(im, ox_in(im, 2), sc, MAXL);
        if (ox_in(im, 3) && ox_in(im, 3)->numel > 0) nsz = ox_const_ints(im, ox_in(im, 3), sz, MAXL);
        if (im->why[0]) return OX_UNSUPPORTED;
    }
    if (nsc >= 0 && nsc != 4) return ox_unsupported(im, "%d scales for rank 4", (int)nsc);
    if (nsz >= 0 && nsz != 4) return ox_unsupported(im, "%d sizes for rank 4", (int)nsz);
    if (nsc < 0 && nsz < 0) return ox_unsupported(im, "neither scales nor sizes");
    if (nsc == 4 && (sc[0] != 1 || sc[1] != 1)) return ox_unsupported(im, "scaling N or C");
    if (nsz == 4 && (sz[0] != pv->dims[0] || sz[1] != pv->dims[1])) return ox_unsupported(im, "resizing N or C");
    if (ox_attr(im, "antialias") && ox_attr_i(im, "antialias", 0)) return ox_unsupported(im, "antialias");
    if (ox_attr(im, "axes")) return ox_unsupported(im, "the axes attribute");
    const char *mode = ox_attr_s(im, "mode", "nearest");
    const char *ct = ox_attr_s(im, "coordinate_transformation_mode", im->opset >= 11 ? "half_pixel" : "asymmetric");
    const char *nm = ox_attr_s(im, "nearest_mode", "round_prefer_floor");
    if (upsample || im->opset < 11) ct = "asymmetric", nm = "floor";
    int64_t osz[2];
    for (int d = 0; d < 2; d++) osz[d] = nsz == 4 ? sz[2 + d] : (int64_t)floor((double)pv->dims[2 + d] * sc[2 + d]);
    /* scales: out = floor(in x scale) and the coordinate ratio 1 / scale, as parity's `scale`; but PyTorch (parity)
     * copies an axis whose size does not change whatever the scale, and computes align_corners from the sizes
     * where ONNX uses in x scale unrounded */
    const char *op;
    par_attr a[2];
    int na = 1;
    double scd[2] = {nsc == 4 ? sc[2] : 1, nsc == 4 ? sc[3] : 1};
    if (nsc == 4) {
        for (int d = 0; d < 2; d++) {
            if (osz[d] == pv->dims[2 + d] && scd[d] != 1.0)
                return ox_unsupported(im, "a scale that keeps the size (PyTorch copies there; ONNX resamples)");
            if (osz[d] == 2 * pv->dims[2 + d] && scd[d] != 2.0 && strcmp(mode, "nearest") == 0 &&
                strcmp(ct, "asymmetric") == 0)
                return ox_unsupported(im, "nearest with a scale other than 2 that doubles the size (PyTorch takes "
                                      "dst / 2 there; ONNX dst / scale)");
            if (strcmp(ct, "align_corners") == 0 && (double)osz[d] != (double)pv->dims[2 + d] * scd[d])
                return ox_unsupported(im, "align_corners with a scale whose output size is not in x scale exactly "
                                      "(ONNX's coordinates use in x scale unrounded, parity's the output size)");
        }
        a[0] = par_a_floats("scale", 2, scd);
    } else {
        a[0] = par_a_ints("size", 2, osz);
    }
    if (strcmp(mode, "nearest") == 0) {
        /* asymmetric + floor: floor(dst r), parity's nearest; half_pixel + round_prefer_ceil: floor((dst + 0.5) r -
         * 0.5 + 0.5) = floor((dst + 0.5) r), parity's nearest-exact (both clamp to in - 1) */
        if (strcmp(ct, "asymmetric") == 0 && strcmp(nm, "floor") == 0) op = "upsample_nearest2d";
        else if (strcmp(ct, "half_pixel") == 0 && strcmp(nm, "round_prefer_ceil") == 0) op = "upsample_nearest_exact2d";
        else return ox_unsupported(im, "nearest with %.30s coordinates and %.30s rounding", ct, nm);
    } else if (strcmp(mode, "linear") == 0) {
        op = "upsample_bilinear2d";
        if (strcmp(ct, "align_corners") == 0) a[na++] = par_a_int("align_corners", 1);
        else if (strcmp(ct, "pytorch_half_pixel") == 0 || strcmp(ct, "half_pixel") == 0) {
            /* the two agree with PyTorch's (dst + 0.5) in / out - 0.5 except on an output of size 1, where ONNX's
             * pytorch_half_pixel takes coordinate 0 and PyTorch 1.13 (parity) in / 2 - 0.5 */
            if (strcmp(ct, "pytorch_half_pixel") == 0 && (osz[0] == 1 || osz[1] == 1))
                return ox_unsupported(im, "pytorch_half_pixel to an output of size 1 (ONNX takes coordinate 0, "
                                      "PyTorch in / 2 - 0.5)");
            a[na++] = par_a_int("align_corners", 0);
        } else return ox_unsupported(im, "linear with %.30s coordinates", ct);
    } else if (strcmp(mode, "cubic") == 0) {
        if (fabs(ox_attr_f(im, "cubic_coeff_a", -0.75) + 0.75) > 1e-12) return ox_unsupported(im, "cubic_coeff_a != -0.75");
        if (ox_attr_i(im, "exclude_outside", 0)) return ox_unsupported(im, "exclude_outside");
        op = "upsample_bicubic2d";
        if (strcmp(ct, "align_corners") == 0) a[na++] = par_a_int("align_corners", 1);
        else if (strcmp(ct, "half_pixel") == 0 || strcmp(ct, "pytorch_half_pixel") == 0) a[na++] = par_a_int("align_corners", 0);
        else return ox_unsupported(im, "cubic with %.30s coordinates", ct);
    } else {
        return ox_unsupported(im, "mode '%.20s'", mode);
    }
    return ox_emit(im, op, 1, &x, na, a, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}
