/*
 * onnx_ops.c - the ONNX importer's op table: one row per ONNX op type with its mapping function onto parity's ops
 * (and the parity op it needs, so an op whose parity twin is not in this build's op table is listed as lacking),
 * and the folding of shape arithmetic on constants. docs/formats.md lists the same table for people.
 *
 * A mapping function reads the current node (ox_in, ox_attr_*), emits parity nodes (ox_emit) and returns OX_OK,
 * OX_UNSUPPORTED with the reason (what of the op parity cannot express), or OX_ERROR.
 *
 * Must not: build anything but through onnx_int.h's helpers; decide numerics (the reference does).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/ops.h"
#include "formats/onnx_int.h"

#define MAXL 64

static int32_t norm_axis(int64_t a, int32_t rank) { return (int32_t)(a < 0 ? a + rank : a); }

/* ---------------------------------------------------------------------------------------------------------------
 * Elementwise
 * ------------------------------------------------------------------------------------------------------------- */

static const char *direct_op(const char *onnx);

static int map_unary(ox_imp *im)
{
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    return ox_emit(im, direct_op(im->node->op_type), 1, &x, 0, NULL, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

static int map_binary(ox_imp *im)
{
    int32_t ab[2] = {ox_tensor(im, ox_in(im, 0)), ox_tensor(im, ox_in(im, 1))};
    if (ab[0] < 0 || ab[1] < 0) return OX_UNSUPPORTED;
    return ox_emit(im, direct_op(im->node->op_type), 2, ab, 0, NULL, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

/* Sum, Max, Min, Mean of any number of inputs: a chain of binary nodes. */
static int map_variadic(ox_imp *im)
{
    const char *op = direct_op(im->node->op_type);
    int32_t n = ox_n_in(im);
    if (n < 1) return ox_unsupported(im, "no inputs");
    int32_t acc = ox_tensor(im, ox_in(im, 0));
    if (acc < 0) return OX_UNSUPPORTED;
    int mean = strcmp(im->node->op_type, "Mean") == 0;
    for (int32_t i = 1; i < n; i++) {
        int32_t ab[2] = {acc, ox_tensor(im, ox_in(im, i))};
        if (ab[1] < 0) return OX_UNSUPPORTED;
        acc = ox_emit(im, op, 2, ab, 0, NULL, (i == n - 1 && !mean) ? 0 : -1, NULL);
        if (acc < 0) return OX_UNSUPPORTED;
    }
    if (n == 1 && !mean) {
        const par_value *pv = ox_pv(im, acc);
        par_attr a = par_a_ints("shape", pv->rank, pv->dims);
        return ox_emit(im, "reshape", 1, &acc, 1, &a, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
    }
    if (mean) {
        int32_t nd[2] = {acc, -1};
        const par_value *pv = ox_pv(im, acc);
        (void)pv;
        par_attr a = par_a_float("min", -INFINITY);
        (void)a;
        /* divide by n: a scalar constant */
        float k = (float)n;
        int64_t one = 1;
        char nm[64];
        snprintf(nm, sizeof nm, "mean_count_%d", (int)im->serial++);
        nd[1] = par_case_const_data(im->c, nm, PAR_DTYPE_F32, 1, &one, &k);
        if (nd[1] < 0) return ox_error(im, "%s", im->c->err.text);
        return ox_emit(im, "div", 2, nd, 0, NULL, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
    }
    return OX_OK;
}

static int map_leaky_relu(ox_imp *im)
{
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    par_attr a = par_a_float("negative_slope", ox_attr_f(im, "alpha", 0.01));
    return ox_emit(im, "leaky_relu", 1, &x, 1, &a, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

static int map_elu(ox_imp *im)
{
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    par_attr a = par_a_float("alpha", ox_attr_f(im, "alpha", 1.0));
    return ox_emit(im, "elu", 1, &x, 1, &a, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

static int map_hardsigmoid(ox_imp *im)
{
    double alpha = ox_attr_f(im, "alpha", 0.2), beta = ox_attr_f(im, "beta", 0.5);
    if (!(alpha > 0) || !isfinite(alpha) || !isfinite(beta)) return ox_unsupported(im, "alpha %g, beta %g", alpha, beta);
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    /* parity's hardsigmoid is PyTorch's: relu6(x + 3) / 6, that is alpha 1/6 and beta 1/2; another slope (Paddle's
     * 0.2) is written out as what it computes: clamp(alpha x + beta, 0, 1) */
    if (fabs(alpha - 1.0 / 6.0) <= 1e-6 && beta == 0.5)
        return ox_emit(im, "hardsigmoid", 1, &x, 0, NULL, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
    if (im->fused) return ox_unsupported(im, "a quantized HardSigmoid of another slope");
    float ab[2] = {(float)alpha, (float)beta};
    int32_t k[2];
    int64_t one = 1;
    for (int i = 0; i < 2; i++) {
        char nm[64];
        snprintf(nm, sizeof nm, "hardsigmoid_%s_%d", i ? "beta" : "alpha", (int)im->serial++);
        k[i] = par_case_const_data(im->c, nm, PAR_DTYPE_F32, 1, &one, &ab[i]);
        if (k[i] < 0) return ox_error(im, "%s", im->c->err.text);
    }
    int32_t m[2] = {x, k[0]};
    int32_t y = ox_emit(im, "mul", 2, m, 0, NULL, -1, NULL);
    if (y < 0) return OX_UNSUPPORTED;
    int32_t a[2] = {y, k[1]};
    y = ox_emit(im, "add", 2, a, 0, NULL, -1, NULL);
    if (y < 0) return OX_UNSUPPORTED;
    par_attr c[2] = {par_a_float("min", 0), par_a_float("max", 1)};
    return ox_emit(im, "clamp", 1, &y, 2, c, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

static int map_gelu(ox_imp *im)
{
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    par_attr a = par_a_str("approximate", ox_attr_s(im, "approximate", "none"));
    return ox_emit(im, "gelu", 1, &x, 1, &a, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

static int map_prelu(ox_imp *im)
{
    ox_val *s = ox_in(im, 1);
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0 || !s) return OX_UNSUPPORTED;
    /* ONNX broadcasts the slope; parity's prelu takes [1] or [C]: a slope of shape [C,1,1] is the same [C] */
    int64_t n = s->numel;
    int32_t sv = -1;
    if (s->is_const && s->v < 0 && (n == 1 || (ox_pv(im, x)->rank >= 2 && n == ox_pv(im, x)->dims[1]))) {
        int32_t keep_rank = s->rank;
        int64_t keep0 = s->dims[0];
        s->rank = 1;
        s->dims[0] = n;
        sv = ox_tensor(im, s);
        if (sv < 0) s->rank = keep_rank, s->dims[0] = keep0;
    } else {
        sv = ox_tensor(im, s);
    }
    if (sv < 0) return OX_UNSUPPORTED;
    int32_t ins[2] = {x, sv};
    return ox_emit(im, "prelu", 2, ins, 0, NULL, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

static int map_clip(ox_imp *im)
{
    double lo = -INFINITY, hi = INFINITY, v;
    if (im->opset < 11) {
        lo = ox_attr_f(im, "min", -INFINITY);
        hi = ox_attr_f(im, "max", INFINITY);
    } else {
        if (ox_in(im, 1)) {
            if (ox_const_floats(im, ox_in(im, 1), &v, 1) != 1) return OX_UNSUPPORTED;
            lo = v;
        }
        if (ox_in(im, 2)) {
            if (ox_const_floats(im, ox_in(im, 2), &v, 1) != 1) return OX_UNSUPPORTED;
            hi = v;
        }
    }
    if (lo > hi) return ox_unsupported(im, "Clip with min %g above max %g", lo, hi);
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    par_attr a[2] = {par_a_float("min", lo), par_a_float("max", hi)};
    return ox_emit(im, "clamp", 1, &x, 2, a, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Convolution, matrix ops, pooling
 * ------------------------------------------------------------------------------------------------------------- */

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

static int map_conv(ox_imp *im)
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

static int map_conv_transpose(ox_imp *im)
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

static int map_matmul(ox_imp *im)
{
    ox_val *a = ox_in(im, 0), *b = ox_in(im, 1);
    if (a && b && a->rank == 1 && b->rank == 2 && b->is_const && b->floats && b->v < 0 && !b->dq_of) {
        /* a vector times a constant matrix [K, N]: parity's linear with the weight [N, K] */
        float *t = malloc(sizeof(float) * (size_t)b->numel);
        if (!t) return ox_error(im, "out of memory");
        for (int64_t r = 0; r < b->dims[0]; r++)
            for (int64_t c = 0; c < b->dims[1]; c++) t[c * b->dims[0] + r] = b->floats[r * b->dims[1] + c];
        free(b->floats);
        b->floats = t;
        b->raw = NULL;
        int64_t d0 = b->dims[0];
        b->dims[0] = b->dims[1];
        b->dims[1] = d0;
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
static int map_gemm(ox_imp *im)
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
        float *t = malloc(sizeof(float) * (size_t)bv->numel);
        if (!t) return ox_error(im, "out of memory");
        for (int64_t r = 0; r < bv->dims[0]; r++)
            for (int64_t c = 0; c < bv->dims[1]; c++) t[c * bv->dims[0] + r] = bv->floats[r * bv->dims[1] + c];
        free(bv->floats);
        bv->floats = t;
        bv->raw = NULL;
        int64_t d0 = bv->dims[0];
        bv->dims[0] = bv->dims[1];
        bv->dims[1] = d0;
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

static int map_pool(ox_imp *im)
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
    if (max) {
        par_attr a[5] = {par_a_ints("kernel", 2, k), par_a_ints("stride", 2, st), par_a_ints("padding", 4, pad),
                         par_a_ints("dilation", 2, dil), par_a_int("ceil_mode", ceil_mode)};
        return ox_emit(im, "max_pool2d", 1, &x, 5, a, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
    }
    if (dil[0] != 1 || dil[1] != 1) return ox_unsupported(im, "dilated average pooling");
    par_attr a[5] = {par_a_ints("kernel", 2, k), par_a_ints("stride", 2, st), par_a_ints("padding", 4, pad),
                     par_a_int("ceil_mode", ceil_mode), par_a_int("count_include_pad",
                                                                   ox_attr_i(im, "count_include_pad", 0))};
    return ox_emit(im, "avg_pool2d", 1, &x, 5, a, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

static int map_global_avg(ox_imp *im)
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
static int map_reduce(ox_imp *im)
{
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    const par_value *xv = ox_pv(im, x);
    int64_t ax[MAXL];
    int32_t n = ox_attr_ints(im, "axes", ax, MAXL);
    if (ox_in(im, 1)) {
        n = ox_const_ints(im, ox_in(im, 1), ax, MAXL);
        if (n < 0) return OX_UNSUPPORTED;
    }
    if (n <= 0) {
        if (ox_attr_i(im, "noop_with_empty_axes", 0)) return ox_unsupported(im, "noop_with_empty_axes with no axes");
        n = xv->rank;
        for (int32_t i = 0; i < n; i++) ax[i] = i;
    }
    if (n == 0) return ox_unsupported(im, "a reduction of a scalar");
    for (int32_t i = 0; i < n; i++)
        if (norm_axis(ax[i], xv->rank) < 0 || norm_axis(ax[i], xv->rank) >= xv->rank)
            return ox_unsupported(im, "axis %lld of a rank-%d input", (long long)ax[i], (int)xv->rank);
    par_attr a[2] = {par_a_ints("axes", n, ax), par_a_int("keepdims", ox_attr_i(im, "keepdims", 1))};
    return ox_emit(im, direct_op(im->node->op_type), 1, &x, 2, a, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

/* Softmax / LogSoftmax: from opset 13 along one axis (parity's); before, over the input flattened to 2-D at axis,
 * which is parity's along the last axis when axis is the last one, else reshape -> softmax -> reshape. */
static int map_softmax(ox_imp *im)
{
    const char *op = direct_op(im->node->op_type);
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    const par_value *xv = ox_pv(im, x);
    int32_t r = xv->rank;
    int64_t axis = ox_attr_i(im, "axis", im->opset >= 13 ? -1 : 1);
    int32_t a0 = norm_axis(axis, r);
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

/* ---------------------------------------------------------------------------------------------------------------
 * Shape and data movement
 * ------------------------------------------------------------------------------------------------------------- */

static int emit_reshape(ox_imp *im, int32_t x, int32_t rank, const int64_t *dims)
{
    par_attr a = par_a_ints("shape", rank, dims);
    return ox_emit(im, "reshape", 1, &x, 1, &a, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

/* The output dims of ONNX Reshape: 0 copies the input's dim (unless allowzero), one -1 is inferred. */
static int reshape_dims(ox_imp *im, const int64_t *in, int32_t in_rank, int64_t in_numel, const int64_t *shape,
                        int32_t n, int64_t *out)
{
    int64_t known = 1;
    int32_t infer = -1;
    for (int32_t i = 0; i < n; i++) {
        out[i] = shape[i];
        if (shape[i] == 0 && !ox_attr_i(im, "allowzero", 0)) {
            if (i >= in_rank) return ox_unsupported(im, "shape copies dimension %d of a rank-%d input", (int)i,
                                                    (int)in_rank);
            out[i] = in[i];
        }
        if (out[i] == -1) {
            if (infer >= 0) return ox_unsupported(im, "two -1 in the shape");
            infer = i;
        } else if (out[i] < 1) {
            return ox_unsupported(im, "dimension %lld in the shape", (long long)out[i]);
        } else {
            known *= out[i];
        }
    }
    if (infer >= 0) {
        if (known == 0 || in_numel % known) return ox_unsupported(im, "the shape does not divide %lld elements",
                                                                  (long long)in_numel);
        out[infer] = in_numel / known;
    }
    return OX_OK;
}

static int map_reshape(ox_imp *im)
{
    ox_val *xv = ox_in(im, 0);
    int64_t shape[MAXL], dims[MAXL];
    int32_t n = im->opset >= 5 ? ox_const_ints(im, ox_in(im, 1), shape, MAXL) : ox_attr_ints(im, "shape", shape, MAXL);
    if (n < 0) return OX_UNSUPPORTED;
    int32_t x = ox_tensor(im, xv);
    if (x < 0) return OX_UNSUPPORTED;
    const par_value *pv = ox_pv(im, x);
    int rc = reshape_dims(im, pv->dims, pv->rank, pv->numel, shape, n, dims);
    if (rc != OX_OK) return rc;
    int keep = 1; /* parity's reshape infers one -1 itself: keep the file's shape when it has no 0 */
    for (int32_t i = 0; i < n; i++) keep &= shape[i] != 0;
    return emit_reshape(im, x, n, keep ? shape : dims);
}

static int map_flatten(ox_imp *im)
{
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    const par_value *pv = ox_pv(im, x);
    int32_t axis = norm_axis(ox_attr_i(im, "axis", 1), pv->rank);
    if (axis < 0 || axis > pv->rank) return ox_unsupported(im, "axis out of range");
    if (axis == 1 && pv->rank >= 2) {
        par_attr a[2] = {par_a_int("start_dim", 1), par_a_int("end_dim", -1)};
        return ox_emit(im, "flatten", 1, &x, 2, a, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
    }
    int64_t d[2] = {1, 1};
    for (int32_t i = 0; i < pv->rank; i++) d[i < axis ? 0 : 1] *= pv->dims[i];
    return emit_reshape(im, x, 2, d);
}

static int map_squeeze_unsqueeze(ox_imp *im)
{
    int unsq = strcmp(im->node->op_type, "Unsqueeze") == 0;
    int64_t ax[MAXL];
    int32_t na = im->opset >= 13 ? (ox_in(im, 1) ? ox_const_ints(im, ox_in(im, 1), ax, MAXL) : 0)
                                 : ox_attr_ints(im, "axes", ax, MAXL);
    if (na < 0 && (im->opset >= 13 ? ox_in(im, 1) != NULL : 0)) return OX_UNSUPPORTED;
    if (na < 0) na = 0;
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    const par_value *pv = ox_pv(im, x);
    int64_t d[MAXL];
    int32_t r = 0;
    if (unsq) {
        int32_t out_rank = pv->rank + na;
        int flag[MAXL] = {0};
        for (int32_t i = 0; i < na; i++) {
            int32_t a = norm_axis(ax[i], out_rank);
            if (a < 0 || a >= out_rank || out_rank > MAXL || flag[a]) return ox_unsupported(im, "bad axes");
            flag[a] = 1;
        }
        for (int32_t i = 0, k = 0; i < out_rank; i++) d[r++] = flag[i] ? 1 : pv->dims[k++];
    } else {
        int flag[MAXL] = {0};
        for (int32_t i = 0; i < na; i++) {
            int32_t a = norm_axis(ax[i], pv->rank);
            if (a < 0 || a >= pv->rank || pv->dims[a] != 1) return ox_unsupported(im, "squeezing a dimension not 1");
            flag[a] = 1;
        }
        for (int32_t i = 0; i < pv->rank; i++)
            if (!(na ? flag[i] : pv->dims[i] == 1)) d[r++] = pv->dims[i];
    }
    return emit_reshape(im, x, r, d);
}

static int map_transpose(ox_imp *im)
{
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    const par_value *pv = ox_pv(im, x);
    int64_t perm[MAXL];
    int32_t n = ox_attr_ints(im, "perm", perm, MAXL);
    if (n < 0) {
        n = pv->rank;
        for (int32_t i = 0; i < n; i++) perm[i] = n - 1 - i;
    }
    par_attr a = par_a_ints("perm", n, perm);
    return ox_emit(im, "permute", 1, &x, 1, &a, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

static int map_concat(ox_imp *im)
{
    int32_t n = ox_n_in(im), ins[64];
    if (n < 1 || n > 64) return ox_unsupported(im, "%d inputs (parity: 1 to 64)", (int)n);
    for (int32_t i = 0; i < n; i++)
        if ((ins[i] = ox_tensor(im, ox_in(im, i))) < 0) return OX_UNSUPPORTED;
    par_attr a = par_a_int("axis", ox_attr_i(im, "axis", 0));
    return ox_emit(im, "concat", n, ins, 1, &a, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

static int map_cast(ox_imp *im)
{
    ox_val *x = ox_in(im, 0);
    int32_t v = ox_tensor(im, x);
    if (v < 0) return OX_UNSUPPORTED;
    int64_t to = ox_attr_i(im, "to", 0);
    if (strcmp(im->node->op_type, "CastLike") == 0) {
        ox_val *t = ox_in(im, 1);
        if (!t) return ox_unsupported(im, "no target");
        to = t->dtype;
    }
    if (to != x->dtype) return ox_unsupported(im, "a cast from %s to %s (parity has no cast op)",
                                              par_onnx_dtype_name(x->dtype), par_onnx_dtype_name((int32_t)to));
    return ox_alias(im, 0, v);
}

static int map_identity(ox_imp *im)
{
    ox_val *x = ox_in(im, 0);
    if (!x) return ox_unsupported(im, "no input");
    if (strcmp(im->node->op_type, "Dropout") == 0) {
        int64_t t = 0;
        if (im->node->n_outputs > 1 && im->node->outputs[1][0]) return ox_unsupported(im, "the mask output");
        if (ox_in(im, 2) && (ox_const_ints(im, ox_in(im, 2), &t, 1) != 1 || t))
            return ox_unsupported(im, "training mode (random)");
        if (ox_attr_i(im, "is_test", 1) == 0 && im->opset < 7) return ox_unsupported(im, "training mode (random)");
    }
    int32_t v = ox_tensor(im, x);
    if (v < 0) return OX_UNSUPPORTED;
    return ox_alias(im, 0, v);
}

/* Slice: per sliced axis one parity slice (positive steps only). */
static int map_slice(ox_imp *im)
{
    int64_t st[MAXL], en[MAXL], ax[MAXL], sp[MAXL];
    int32_t n, na, ns;
    if (im->opset < 10) {
        n = ox_attr_ints(im, "starts", st, MAXL);
        if (ox_attr_ints(im, "ends", en, MAXL) != n) return ox_unsupported(im, "starts and ends differ in length");
        na = ox_attr_ints(im, "axes", ax, MAXL);
        ns = -1;
    } else {
        n = ox_const_ints(im, ox_in(im, 1), st, MAXL);
        if (n < 0 || ox_const_ints(im, ox_in(im, 2), en, MAXL) != n) return OX_UNSUPPORTED;
        na = ox_in(im, 3) ? ox_const_ints(im, ox_in(im, 3), ax, MAXL) : -1;
        ns = ox_in(im, 4) ? ox_const_ints(im, ox_in(im, 4), sp, MAXL) : -1;
        if ((ox_in(im, 3) && na < 0) || (ox_in(im, 4) && ns < 0)) return OX_UNSUPPORTED;
    }
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    int32_t r = ox_pv(im, x)->rank;
    if (n < 0) return ox_unsupported(im, "no starts");
    int32_t last = -1;
    for (int32_t i = 0; i < n; i++)
        if (!(ns > 0 && sp[i] == 1 && 0)) last = i;
    int32_t cur = x;
    for (int32_t i = 0; i < n; i++) {
        int64_t step = ns > 0 ? sp[i] : 1;
        if (step < 1) return ox_unsupported(im, "step %lld (parity's slice: steps >= 1)", (long long)step);
        int32_t axis = na > 0 ? norm_axis(ax[i], r) : i;
        if (axis < 0 || axis >= r) return ox_unsupported(im, "axis out of range");
        int64_t size = ox_pv(im, cur)->dims[axis];
        int64_t s = st[i], e = en[i];
        if (s < 0) s += size;
        if (e < 0) e += size;
        if (s < 0) s = 0;
        if (e > size) e = size;
        if (s >= e) return ox_unsupported(im, "an empty slice (parity has no zero-sized tensors)");
        /* parity's slice clamps start and end as ONNX does (docs/ops.md): the file's values as they are, the axis
         * as given */
        int64_t dim = na > 0 ? ax[i] : i;
        par_attr a[4] = {par_a_int("dim", dim), par_a_int("start", st[i]), par_a_int("end", en[i]),
                         par_a_int("step", step)};
        cur = ox_emit(im, "slice", 1, &cur, 4, a, i == last ? 0 : -1, NULL);
        if (cur < 0) return OX_UNSUPPORTED;
    }
    if (last < 0) return ox_alias(im, 0, cur);
    return OX_OK;
}

static int map_split(ox_imp *im)
{
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    const par_value *pv = ox_pv(im, x);
    int32_t axis = norm_axis(ox_attr_i(im, "axis", 0), pv->rank);
    if (axis < 0 || axis >= pv->rank) return ox_unsupported(im, "axis out of range");
    int32_t nout = im->node->n_outputs;
    int64_t sz[MAXL];
    int32_t n = im->opset >= 13 && ox_in(im, 1) ? ox_const_ints(im, ox_in(im, 1), sz, MAXL)
                                               : ox_attr_ints(im, "split", sz, MAXL);
    if (im->opset >= 13 && ox_in(im, 1) && n < 0) return OX_UNSUPPORTED;
    int64_t size = pv->dims[axis];
    if (n < 0) {
        if (nout < 1 || nout > MAXL) return ox_unsupported(im, "%d outputs", (int)nout);
        int64_t each = (size + nout - 1) / nout;
        for (int32_t i = 0; i < nout; i++) sz[i] = i < nout - 1 ? each : size - each * (nout - 1);
        n = nout;
    }
    if (n != nout) return ox_unsupported(im, "%d sizes for %d outputs", (int)n, (int)nout);
    int64_t at = 0;
    for (int32_t i = 0; i < n; i++) {
        if (sz[i] < 1) return ox_unsupported(im, "an empty part (parity has no zero-sized tensors)");
        par_attr a[4] = {par_a_int("dim", axis), par_a_int("start", at), par_a_int("end", at + sz[i]),
                         par_a_int("step", 1)};
        if (ox_emit(im, "slice", 1, &x, 4, a, i, NULL) < 0) return OX_UNSUPPORTED;
        at += sz[i];
    }
    if (at != size) return ox_unsupported(im, "the parts do not add up to the axis");
    return OX_OK;
}

static int map_pad(ox_imp *im)
{
    int64_t p[MAXL];
    double value = 0;
    int32_t n;
    if (im->opset < 11) {
        n = ox_attr_ints(im, "pads", p, MAXL);
        value = ox_attr_f(im, "value", 0.0);
    } else {
        n = ox_const_ints(im, ox_in(im, 1), p, MAXL);
        if (n < 0) return OX_UNSUPPORTED;
        if (ox_in(im, 2) && ox_const_floats(im, ox_in(im, 2), &value, 1) != 1) return OX_UNSUPPORTED;
        if (ox_in(im, 3)) return ox_unsupported(im, "the axes input");
    }
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    int32_t r = ox_pv(im, x)->rank;
    if (n != 2 * r) return ox_unsupported(im, "%d pads for rank %d", (int)n, (int)r);
    int64_t q[MAXL];
    for (int32_t i = 0; i < r; i++) {
        q[2 * i] = p[i];
        q[2 * i + 1] = p[i + r]; /* ONNX [b0, b1, ..., e0, e1, ...] -> parity [b0, e0, b1, e1, ...] */
        if (p[i] < 0 || p[i + r] < 0) return ox_unsupported(im, "negative pads (cropping)");
    }
    const char *mode = ox_attr_s(im, "mode", "constant");
    const char *pm = strcmp(mode, "edge") == 0 ? "replicate" : mode;
    if (strcmp(pm, "constant") && strcmp(pm, "reflect") && strcmp(pm, "replicate"))
        return ox_unsupported(im, "mode '%.20s'", mode);
    par_attr a[3] = {par_a_ints("pads", 2 * r, q), par_a_float("value", value), par_a_str("mode", pm)};
    return ox_emit(im, "pad", 1, &x, 3, a, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

static int map_gather(ox_imp *im)
{
    ox_val *iv = ox_in(im, 1);
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0 || !iv) return OX_UNSUPPORTED;
    const par_value *pv = ox_pv(im, x);
    int32_t axis = norm_axis(ox_attr_i(im, "axis", 0), pv->rank);
    if (iv->is_const && iv->ints && iv->v < 0) {
        for (int64_t i = 0; i < iv->numel; i++) {
            if (iv->ints[i] < 0) iv->ints[i] += pv->dims[axis]; /* ONNX allows negative indices; parity does not */
            if (iv->ints[i] < 0 || iv->ints[i] >= pv->dims[axis]) return ox_unsupported(im, "index out of range");
        }
        if (iv->dtype == PAR_ONNX_INT64) iv->dtype = PAR_ONNX_INT32;
    }
    int32_t ins[2] = {x, ox_tensor(im, iv)};
    if (ins[1] < 0) return OX_UNSUPPORTED;
    par_attr a = par_a_int("axis", ox_attr_i(im, "axis", 0));
    return ox_emit(im, "gather", 2, ins, 1, &a, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

static int map_where(ox_imp *im)
{
    ox_val *a = ox_in(im, 1), *b = ox_in(im, 2);
    double fill;
    if (a && b && a->is_const && !a->from_data && a->numel == 1 && a->floats && b->v >= 0 &&
        ox_pv(im, b->v)->dtype == PAR_DTYPE_F32 && ox_const_floats(im, a, &fill, 1) == 1) {
        /* a scalar where the condition holds, the tensor elsewhere: masked_fill, the same thing */
        int32_t mf[2] = {b->v, ox_tensor(im, ox_in(im, 0))};
        if (mf[1] < 0) return OX_UNSUPPORTED;
        const par_value *m = ox_pv(im, mf[1]), *x = ox_pv(im, mf[0]);
        if (m->rank <= x->rank) {
            par_attr at = par_a_float("value", fill);
            if (ox_emit(im, "masked_fill", 2, mf, 1, &at, 0, NULL) >= 0) return OX_OK;
            im->why[0] = 0;
        }
    }
    int32_t ins[3];
    for (int i = 0; i < 3; i++)
        if ((ins[i] = ox_tensor(im, ox_in(im, i))) < 0) return OX_UNSUPPORTED;
    return ox_emit(im, "where", 3, ins, 0, NULL, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Normalization
 * ------------------------------------------------------------------------------------------------------------- */

static int map_batch_norm(ox_imp *im)
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

static int map_instance_norm(ox_imp *im)
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

static int map_layer_norm(ox_imp *im)
{
    for (int32_t k = 1; k < im->node->n_outputs; k++)
        if (im->node->outputs[k][0]) return ox_unsupported(im, "the Mean / InvStdDev outputs");
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    const par_value *pv = ox_pv(im, x);
    int32_t axis = norm_axis(ox_attr_i(im, "axis", -1), pv->rank);
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
    return ox_emit(im, "layer_norm", n_in, ins, 2, a, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Resampling
 * ------------------------------------------------------------------------------------------------------------- */

/* Resize (opset 10: X, scales; 11+: X, roi, scales, sizes) and Upsample (X, scales) onto parity's upsample ops:
 * nearest with (asymmetric, floor) is upsample_nearest2d; (half_pixel, floor-free round_prefer_ceil) is not
 * parity's nearest-exact (floor((dst + 0.5) r)) in general, so only the modes that agree map; linear with
 * half_pixel / pytorch_half_pixel / align_corners onto upsample_bilinear2d; cubic (A = -0.75, half_pixel or
 * align_corners, no exclude_outside) onto upsample_bicubic2d. */
static int map_resize(ox_imp *im)
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

/* ---------------------------------------------------------------------------------------------------------------
 * Quantization
 * ------------------------------------------------------------------------------------------------------------- */

static int qparams(ox_imp *im, int32_t si, int32_t zi, float *scale, int32_t *zp, int32_t *zdt, int per_axis_ok,
                   ox_val **scales_out)
{
    ox_val *s = ox_in(im, si), *z = ox_in(im, zi);
    double sv;
    *zdt = z ? z->dtype : PAR_ONNX_UINT8;
    *zp = 0;
    if (!s) return ox_unsupported(im, "no scale");
    if (s->numel != 1) {
        if (per_axis_ok && s->is_const && s->floats) {
            *scales_out = s;
            if (z && z->is_const && z->ints)
                for (int64_t i = 0; i < z->numel; i++)
                    if (z->ints[i] != 0) return ox_unsupported(im, "per-axis zero points other than 0");
            return OX_OK;
        }
        return ox_unsupported(im, "per-axis quantization here");
    }
    if (ox_const_floats(im, s, &sv, 1) != 1) return OX_UNSUPPORTED;
    *scale = (float)sv;
    if (z) {
        int64_t zv;
        if (ox_const_ints(im, z, &zv, 1) != 1) return OX_UNSUPPORTED;
        *zp = (int32_t)zv;
    }
    if (*zdt != PAR_ONNX_UINT8 && *zdt != PAR_ONNX_INT8) return ox_unsupported(im, "%s quantization",
                                                                             par_onnx_dtype_name(*zdt));
    return OX_OK;
}

static int map_quantize(ox_imp *im)
{
    float scale;
    int32_t zp, zdt;
    ox_val *scales = NULL;
    int rc = qparams(im, 1, 2, &scale, &zp, &zdt, 0, &scales);
    if (rc != OX_OK) return rc;
    if (ox_attr(im, "axis") && ox_in(im, 1)->numel != 1) return ox_unsupported(im, "per-axis output quantization");
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    par_out_spec s = {.dtype = zdt == PAR_ONNX_INT8 ? PAR_DTYPE_QS8 : PAR_DTYPE_QU8, .scale = scale, .zero_point = zp};
    return ox_emit(im, "quantize", 1, &x, 0, NULL, 0, &s) < 0 ? OX_UNSUPPORTED : OX_OK;
}

/* DequantizeLinear: its output is made only when a float consumer needs it (ox_tensor); a consumer fused with it
 * (ox_qdq_try) reads the quantized value itself. The quantized value takes the parameters here: a graph input or a
 * constant (8-bit, or an int32 bias with zero point 0) gets them; a value quantized before must agree. */
static int map_dequantize(ox_imp *im)
{
    ox_val *xv = ox_in(im, 0);
    if (!xv) return ox_unsupported(im, "no input");
    float scale = 1;
    int32_t zp = 0, zdt;
    ox_val *scales = NULL;
    if (xv->is_const && xv->dtype == PAR_ONNX_INT32 && xv->v < 0) {
        ox_val *s = ox_in(im, 1), *z = ox_in(im, 2);
        if (!s || !s->is_const || !s->floats) return ox_unsupported(im, "a run-time scale");
        if (z && z->is_const && z->ints)
            for (int64_t i = 0; i < z->numel; i++)
                if (z->ints[i]) return ox_unsupported(im, "an int32 zero point other than 0");
        if (s->numel == 1) {
            xv->scale = s->floats[0];
        } else {
            int32_t axis = norm_axis(ox_attr_i(im, "axis", 1), xv->rank);
            if (axis < 0 || axis >= xv->rank || s->numel != xv->dims[axis])
                return ox_unsupported(im, "per-axis scales that do not match the axis");
            free(xv->q_scales);
            xv->q_axis = axis;
            xv->q_scales = malloc(sizeof(float) * (size_t)s->numel);
            if (!xv->q_scales) return ox_error(im, "out of memory");
            memcpy(xv->q_scales, s->floats, sizeof(float) * (size_t)s->numel);
            xv->scale = s->floats[0];
        }
    } else {
        int rc = qparams(im, 1, 2, &scale, &zp, &zdt, xv->is_const && xv->dtype == PAR_ONNX_INT8, &scales);
        if (rc != OX_OK) return rc;
        if (xv->dtype != PAR_ONNX_UINT8 && xv->dtype != PAR_ONNX_INT8)
            return ox_unsupported(im, "dequantizing %s (parity: 8-bit, and int32 biases)",
                                  par_onnx_dtype_name(xv->dtype));
        if (xv->v < 0 && (!xv->is_const || xv->from_data)) {
            if (ox_quant_input(im, xv, scale, zp) < 0) return OX_UNSUPPORTED;
        } else if (xv->v < 0) {
            xv->quantized = 1;
            if (scales) {
                int32_t axis = norm_axis(ox_attr_i(im, "axis", 1), xv->rank);
                if (axis < 0 || axis >= xv->rank || scales->numel != xv->dims[axis])
                    return ox_unsupported(im, "per-axis scales that do not match the axis");
                free(xv->q_scales);
                xv->q_axis = axis;
                xv->q_scales = malloc(sizeof(float) * (size_t)scales->numel);
                if (!xv->q_scales) return ox_error(im, "out of memory");
                memcpy(xv->q_scales, scales->floats, sizeof(float) * (size_t)scales->numel);
            } else {
                xv->scale = scale;
                xv->zero_point = zp;
            }
        } else {
            const par_value *pv = ox_pv(im, xv->v);
            if (scales || pv->scale != scale || pv->zero_point != zp)
                return ox_unsupported(im, "a tensor dequantized with other parameters than it was quantized with");
        }
    }
    ox_val *y = ox_out(im, 0);
    if (!y) return OX_OK;
    y->dq_of = xv->name;
    y->dtype = PAR_ONNX_FLOAT;
    y->rank = xv->rank;
    memcpy(y->dims, xv->dims, sizeof y->dims);
    y->numel = xv->numel;
    return OX_OK;
}

/* ---------------------------------------------------------------------------------------------------------------
 * QDQ: DequantizeLinear -> op -> QuantizeLinear as parity's quantized op
 * ------------------------------------------------------------------------------------------------------------- */

static int qdq_capable(const char *onnx);

/* The only consumer of value `name` after node i, or -1 when it has none, several, or is a graph output. */
static int32_t sole_consumer(const ox_imp *im, int32_t i, const char *name)
{
    const par_onnx_graph *g = &im->m->graph;
    for (int32_t k = 0; k < g->n_outputs; k++)
        if (strcmp(g->outputs[k].name, name) == 0) return -1;
    int32_t found = -1;
    for (int32_t j = i + 1; j < g->n_nodes; j++)
        for (int32_t k = 0; k < g->nodes[j].n_inputs; k++)
            if (strcmp(g->nodes[j].inputs[k], name) == 0) {
                if (found >= 0 && found != j) return -1;
                found = j;
            }
    return found;
}

int ox_qdq_try(ox_imp *im, int32_t i)
{
    const par_onnx_node *n = im->node;
    if (!qdq_capable(n->op_type) || n->n_outputs != 1 || !n->outputs[0][0] || n->n_inputs > 8) return OX_UNSUPPORTED;
    int32_t j = sole_consumer(im, i, n->outputs[0]);
    if (j < 0) return OX_UNSUPPORTED;
    const par_onnx_node *q = &im->m->graph.nodes[j];
    if (strcmp(q->op_type, "QuantizeLinear") != 0 || q->n_outputs != 1 || strcmp(q->inputs[0], n->outputs[0]) != 0)
        return OX_UNSUPPORTED;
    /* the output's parameters: per tensor, constant */
    ox_val *qs = q->n_inputs > 1 && q->inputs[1][0] ? ox_lookup(im, q->inputs[1]) : NULL;
    ox_val *qz = q->n_inputs > 2 && q->inputs[2][0] ? ox_lookup(im, q->inputs[2]) : NULL;
    if (!qs || !qs->is_const || !qs->floats || qs->numel != 1) return OX_UNSUPPORTED;
    if (qz && (!qz->is_const || !qz->ints || qz->numel != 1)) return OX_UNSUPPORTED;
    int32_t zdt = qz ? qz->dtype : PAR_ONNX_UINT8;
    if (zdt != PAR_ONNX_UINT8 && zdt != PAR_ONNX_INT8) return OX_UNSUPPORTED;
    /* every tensor input a dequantized value; parameter inputs (integer constants) as they are */
    ox_val *over[8] = {NULL};
    int any = 0;
    for (int32_t k = 0; k < n->n_inputs; k++) {
        if (!n->inputs[k][0]) continue;
        ox_val *x = ox_lookup(im, n->inputs[k]);
        if (!x) return OX_UNSUPPORTED;
        if (x->dq_of) {
            ox_val *src = ox_lookup(im, x->dq_of);
            if (!src) return OX_UNSUPPORTED;
            if (src->dtype == PAR_ONNX_INT32) {
                /* a bias: its scale must be the input's times the weight's (per channel), as parity's i32 bias */
                ox_val *xs = over[0], *ws = over[1];
                if (k != 2 || !xs || !ws || !src->ints) return OX_UNSUPPORTED;
                float sx = xs->v >= 0 ? ox_pv(im, xs->v)->scale : xs->scale;
                for (int64_t c = 0; c < src->numel; c++) {
                    float sw = ws->q_axis >= 0 ? ws->q_scales[c % ws->dims[ws->q_axis]] : ws->scale;
                    float sb = src->q_axis >= 0 ? src->q_scales[c] : src->scale;
                    if (fabsf(sb - sx * sw) > 1e-6f * sb) return OX_UNSUPPORTED;
                }
            }
            over[k] = src;
            any = 1;
        } else if (!x->is_const) {
            return OX_UNSUPPORTED; /* a float tensor computed at run time: not part of the pattern */
        }
    }
    if (!any || !over[0]) return OX_UNSUPPORTED;
    /* the i32 bias declares the input scale times the weight's (per channel: the first channel's) */
    if (over[2] && over[2]->dtype == PAR_ONNX_INT32) {
        ox_val *xs = over[0], *ws = over[1];
        over[2]->scale = (xs->v >= 0 ? ox_pv(im, xs->v)->scale : xs->scale) *
                         (ws->q_axis >= 0 ? ws->q_scales[0] : ws->scale);
        over[2]->quantized = 1;
    }
    memcpy(im->in_override, over, sizeof over);
    im->fused = 1;
    im->fuse_out = q->outputs[0];
    int64_t zv = qz ? qz->ints[0] : 0;
    im->fuse_spec = (par_out_spec){.dtype = zdt == PAR_ONNX_INT8 ? PAR_DTYPE_QS8 : PAR_DTYPE_QU8,
                                   .scale = qs->floats[0], .zero_point = (int32_t)zv};
    int32_t before = par_graph_desc_of(im->c->graph)->n_nodes;
    int rc = par_onnx_op_mapper(n->op_type) ? par_onnx_op_mapper(n->op_type)(im) : OX_UNSUPPORTED;
    int32_t added = par_graph_desc_of(im->c->graph)->n_nodes - before;
    im->fused = 0;
    im->fuse_out = NULL;
    memset(im->in_override, 0, sizeof im->in_override);
    if (rc == OX_OK && added == 1) {
        im->skip_node = j;
        return OX_OK;
    }
    if (added > 0 && !im->failed) return ox_error(im, "a quantized mapping added %d nodes", (int)added), OX_ERROR;
    im->why[0] = 0;
    return OX_UNSUPPORTED;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Folding shape arithmetic on constants
 * ------------------------------------------------------------------------------------------------------------- */

static int64_t *ints_of(ox_imp *im, const ox_val *x)
{
    int64_t *o = malloc(sizeof(int64_t) * (size_t)(x->numel > 0 ? x->numel : 1));
    if (!o) return NULL;
    for (int64_t i = 0; i < x->numel; i++) o[i] = x->ints ? x->ints[i] : (int64_t)x->floats[i];
    return o;
}

static int is_float(int32_t dt)
{
    return dt == PAR_ONNX_FLOAT || dt == PAR_ONNX_FLOAT16 || dt == PAR_ONNX_DOUBLE || dt == PAR_ONNX_BFLOAT16;
}

/* Element i of x as a double. */
static double el(const ox_val *x, int64_t i) { return x->floats ? x->floats[i] : (double)x->ints[i]; }

/* Broadcast index: element of x for output index o of shape (r, d). */
static int64_t bidx(const ox_val *x, int32_t r, const int64_t *d, int64_t o)
{
    int64_t idx = 0, stride = 1;
    for (int32_t i = r - 1; i >= 0; i--) {
        int64_t c = o % d[i];
        o /= d[i];
        int32_t xi = i - (r - x->rank);
        if (xi >= 0) {
            idx += (x->dims[xi] == 1 ? 0 : c) * stride;
            stride *= x->dims[xi];
        }
    }
    return idx;
}

int ox_fold_node(ox_imp *im)
{
    const char *op = im->node->op_type;
    ox_val *a = ox_in(im, 0), *b = ox_in(im, 1);
    int64_t d[MAXL];
    if (strcmp(op, "Constant") == 0) {
        const par_onnx_attr *t = ox_attr(im, "value");
        if (t && t->type == PAR_ONNX_ATTR_TENSOR && t->t) {
            ox_val tmp = {.name = "constant", .q_axis = -1};
            if (ox_load_tensor(im, &tmp, t->t) != OX_OK) return free(tmp.ints), free(tmp.floats), OX_UNSUPPORTED;
            return ox_fold(im, 0, tmp.dtype, tmp.rank, tmp.dims, tmp.ints, tmp.floats);
        }
        const char *names[] = {"value_float", "value_floats", "value_int", "value_ints"};
        for (int k = 0; k < 4; k++) {
            const par_onnx_attr *v = ox_attr(im, names[k]);
            if (!v) continue;
            int32_t n = k % 2 ? v->n : 1;
            int64_t dn = n;
            if (k < 2) {
                float *f = malloc(sizeof(float) * (size_t)(n ? n : 1));
                if (!f) return ox_error(im, "out of memory");
                for (int32_t i = 0; i < n; i++) f[i] = k ? v->floats[i] : v->f;
                return ox_fold(im, 0, PAR_ONNX_FLOAT, k ? 1 : 0, &dn, NULL, f);
            }
            int64_t *q = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
            if (!q) return ox_error(im, "out of memory");
            for (int32_t i = 0; i < n; i++) q[i] = k == 3 ? v->ints[i] : v->i;
            return ox_fold(im, 0, PAR_ONNX_INT64, k == 3 ? 1 : 0, &dn, q, NULL);
        }
        return ox_unsupported(im, "a Constant without a tensor, float or int value");
    }
    if (!a) return ox_unsupported(im, "no input");
    if (strcmp(op, "Shape") == 0 || strcmp(op, "Size") == 0) {
        int64_t r = a->rank, st = ox_attr_i(im, "start", 0), en = ox_attr_i(im, "end", r);
        if (st < 0) st += r;
        if (en < 0) en += r;
        if (st < 0) st = 0;
        if (en > r) en = r;
        if (op[1] == 'i') {
            int64_t *q = malloc(sizeof *q);
            if (!q) return ox_error(im, "out of memory");
            *q = a->numel;
            return ox_fold(im, 0, PAR_ONNX_INT64, 0, d, q, NULL);
        }
        int64_t n = en > st ? en - st : 0;
        int64_t *q = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
        if (!q) return ox_error(im, "out of memory");
        for (int64_t i = 0; i < n; i++) q[i] = a->dims[st + i];
        return ox_fold(im, 0, PAR_ONNX_INT64, 1, &n, q, NULL);
    }
    if (!a->is_const) return ox_unsupported(im, "not constant");
    if (strcmp(op, "Identity") == 0 || strcmp(op, "Cast") == 0 || strcmp(op, "Reshape") == 0 ||
        strcmp(op, "Squeeze") == 0 || strcmp(op, "Unsqueeze") == 0 || strcmp(op, "Flatten") == 0) {
        int32_t dt = a->dtype, r = a->rank;
        memcpy(d, a->dims, sizeof a->dims);
        if (op[0] == 'C') {
            dt = (int32_t)ox_attr_i(im, "to", 0);
            if (!is_float(dt) && !(dt >= 2 && dt <= 13 && dt != 8 && dt != 10 && dt != 11))
                return ox_unsupported(im, "Cast to %s", par_onnx_dtype_name(dt));
        } else if (op[0] == 'R') {
            int64_t sh[MAXL];
            int32_t n = ox_const_ints(im, b, sh, MAXL);
            if (n < 0) return OX_UNSUPPORTED;
            int rc = reshape_dims(im, a->dims, a->rank, a->numel, sh, n, d);
            if (rc != OX_OK) return rc;
            r = n;
        } else if (op[0] == 'F') {
            int32_t axis = norm_axis(ox_attr_i(im, "axis", 1), a->rank);
            d[0] = d[1] = 1;
            for (int32_t i = 0; i < a->rank; i++) d[i < axis ? 0 : 1] *= a->dims[i];
            r = 2;
        } else if (op[0] == 'S' || op[0] == 'U') {
            int64_t ax[MAXL];
            int32_t na = im->opset >= 13 ? (b ? ox_const_ints(im, b, ax, MAXL) : 0) : ox_attr_ints(im, "axes", ax, MAXL);
            if (na < 0) na = 0;
            int flag[MAXL] = {0};
            r = 0;
            if (op[0] == 'U') {
                int32_t orank = a->rank + na;
                if (orank > MAXL) return ox_unsupported(im, "rank");
                for (int32_t i = 0; i < na; i++) {
                    int32_t x = norm_axis(ax[i], orank);
                    if (x < 0 || x >= orank) return ox_unsupported(im, "bad axes");
                    flag[x] = 1;
                }
                for (int32_t i = 0, k = 0; i < orank; i++) d[r++] = flag[i] ? 1 : a->dims[k++];
            } else {
                for (int32_t i = 0; i < na; i++) {
                    int32_t x = norm_axis(ax[i], a->rank);
                    if (x < 0 || x >= a->rank) return ox_unsupported(im, "bad axes");
                    flag[x] = 1;
                }
                for (int32_t i = 0; i < a->rank; i++)
                    if (!(na ? flag[i] : a->dims[i] == 1)) d[r++] = a->dims[i];
            }
        }
        if (r > PAR_ONNX_MAX_RANK) return ox_unsupported(im, "rank");
        if (is_float(dt)) {
            float *f = malloc(sizeof(float) * (size_t)(a->numel ? a->numel : 1));
            if (!f) return ox_error(im, "out of memory");
            for (int64_t i = 0; i < a->numel; i++) f[i] = (float)el(a, i);
            return ox_fold(im, 0, dt, r, d, NULL, f);
        }
        int64_t *q = ints_of(im, a);
        if (!q) return ox_error(im, "out of memory");
        if (dt == PAR_ONNX_BOOL)
            for (int64_t i = 0; i < a->numel; i++) q[i] = el(a, i) != 0;
        return ox_fold(im, 0, dt, r, d, q, NULL);
    }
    if (strcmp(op, "Gather") == 0 && b && b->is_const && (a->ints || a->floats)) {
        int32_t axis = norm_axis(ox_attr_i(im, "axis", 0), a->rank);
        if (axis < 0 || axis >= a->rank || a->rank + b->rank - 1 > MAXL) return ox_unsupported(im, "axis");
        int32_t r = 0;
        int64_t outer = 1, inner = 1;
        for (int32_t i = 0; i < axis; i++) d[r++] = a->dims[i], outer *= a->dims[i];
        for (int32_t i = 0; i < b->rank; i++) d[r++] = b->dims[i];
        for (int32_t i = axis + 1; i < a->rank; i++) d[r++] = a->dims[i], inner *= a->dims[i];
        int64_t n = outer * b->numel * inner, ax = a->dims[axis];
        int64_t *q = a->ints ? malloc(sizeof(int64_t) * (size_t)(n ? n : 1)) : NULL;
        float *f = a->floats ? malloc(sizeof(float) * (size_t)(n ? n : 1)) : NULL;
        if (!q && !f) return ox_error(im, "out of memory");
        for (int64_t o = 0; o < outer; o++)
            for (int64_t j = 0; j < b->numel; j++) {
                int64_t k = (int64_t)el(b, j);
                if (k < 0) k += ax;
                if (k < 0 || k >= ax) return free(q), free(f), ox_unsupported(im, "index out of range");
                for (int64_t i = 0; i < inner; i++) {
                    int64_t src = (o * ax + k) * inner + i, dst = (o * b->numel + j) * inner + i;
                    if (q) q[dst] = a->ints[src];
                    else f[dst] = a->floats[src];
                }
            }
        return ox_fold(im, 0, a->dtype, r, d, q, f);
    }
    if (strcmp(op, "Concat") == 0) {
        int32_t n = ox_n_in(im);
        int32_t axis = norm_axis(ox_attr_i(im, "axis", 0), a->rank);
        if (axis < 0 || axis >= a->rank) return ox_unsupported(im, "axis");
        memcpy(d, a->dims, sizeof a->dims);
        d[axis] = 0;
        int any_float = 0;
        for (int32_t k = 0; k < n; k++) {
            ox_val *x = ox_in(im, k);
            if (!x || !x->is_const || x->rank != a->rank) return ox_unsupported(im, "inputs");
            d[axis] += x->dims[axis];
            any_float |= x->floats != NULL;
        }
        int64_t outer = 1, inner = 1, total = 1;
        for (int32_t i = 0; i < axis; i++) outer *= d[i];
        for (int32_t i = axis + 1; i < a->rank; i++) inner *= d[i];
        for (int32_t i = 0; i < a->rank; i++) total *= d[i];
        int64_t *q = any_float ? NULL : malloc(sizeof(int64_t) * (size_t)(total ? total : 1));
        float *f = any_float ? malloc(sizeof(float) * (size_t)(total ? total : 1)) : NULL;
        if (!q && !f) return ox_error(im, "out of memory");
        int64_t at = 0;
        for (int64_t o = 0; o < outer; o++)
            for (int32_t k = 0; k < n; k++) {
                ox_val *x = ox_in(im, k);
                int64_t chunk = x->dims[axis] * inner;
                for (int64_t i = 0; i < chunk; i++, at++) {
                    if (q) q[at] = (int64_t)el(x, o * chunk + i);
                    else f[at] = (float)el(x, o * chunk + i);
                }
            }
        return ox_fold(im, 0, a->dtype, a->rank, d, q, f);
    }
    if (strcmp(op, "ConstantOfShape") == 0) {
        int32_t r = (int32_t)a->numel;
        if (r > MAXL) return ox_unsupported(im, "rank");
        int64_t n = 1;
        for (int32_t i = 0; i < r; i++) {
            d[i] = (int64_t)el(a, i);
            if (d[i] < 0 || (d[i] && n > PAR_ONNX_MAX_ELEMS / d[i])) return ox_unsupported(im, "shape");
            n *= d[i];
        }
        const par_onnx_attr *t = ox_attr(im, "value");
        ox_val v = {.name = "value", .q_axis = -1};
        if (t && t->t && ox_load_tensor(im, &v, t->t) != OX_OK) return free(v.ints), free(v.floats), OX_UNSUPPORTED;
        int32_t dt = t && t->t ? v.dtype : PAR_ONNX_FLOAT;
        double fill = t && t->t && v.numel ? el(&v, 0) : 0.0;
        free(v.ints);
        free(v.floats);
        if (is_float(dt)) {
            float *f = malloc(sizeof(float) * (size_t)(n ? n : 1));
            if (!f) return ox_error(im, "out of memory");
            for (int64_t i = 0; i < n; i++) f[i] = (float)fill;
            return ox_fold(im, 0, dt, r, d, NULL, f);
        }
        int64_t *q = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
        if (!q) return ox_error(im, "out of memory");
        for (int64_t i = 0; i < n; i++) q[i] = (int64_t)fill;
        return ox_fold(im, 0, dt, r, d, q, NULL);
    }
    if (strcmp(op, "Range") == 0) {
        ox_val *c = ox_in(im, 2);
        if (!b || !c || !b->is_const || !c->is_const) return ox_unsupported(im, "inputs");
        double st = el(a, 0), lim = el(b, 0), dl = el(c, 0);
        if (dl == 0) return ox_unsupported(im, "delta 0");
        double nn = ceil((lim - st) / dl);
        int64_t n = nn > 0 ? (int64_t)nn : 0;
        if (n > PAR_ONNX_MAX_ELEMS) return ox_unsupported(im, "size");
        int fl = is_float(a->dtype);
        int64_t *q = fl ? NULL : malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
        float *f = fl ? malloc(sizeof(float) * (size_t)(n ? n : 1)) : NULL;
        if (!q && !f) return ox_error(im, "out of memory");
        for (int64_t i = 0; i < n; i++) {
            if (q) q[i] = (int64_t)st + i * (int64_t)dl;
            else f[i] = (float)(st + (double)i * dl);
        }
        return ox_fold(im, 0, a->dtype, 1, &n, q, f);
    }
    /* integer elementwise arithmetic of shapes: Add, Sub, Mul, Div, Equal, Less, Greater, Where, Expand, Min, Max */
    int bin = strcmp(op, "Add") == 0 || strcmp(op, "Sub") == 0 || strcmp(op, "Mul") == 0 || strcmp(op, "Div") == 0 ||
              strcmp(op, "Equal") == 0 || strcmp(op, "Less") == 0 || strcmp(op, "Greater") == 0 ||
              strcmp(op, "Min") == 0 || strcmp(op, "Max") == 0;
    if (bin && b && b->is_const && a->ints && b->ints && ox_n_in(im) == 2) {
        int32_t r = a->rank > b->rank ? a->rank : b->rank;
        int64_t n = 1;
        for (int32_t i = 0; i < r; i++) {
            int32_t ia = i - (r - a->rank), ib = i - (r - b->rank);
            int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
            if (da != db && da != 1 && db != 1) return ox_unsupported(im, "shapes do not broadcast");
            d[i] = da == 1 ? db : da;
            n *= d[i];
        }
        int64_t *q = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
        if (!q) return ox_error(im, "out of memory");
        int cmp = op[0] == 'E' || op[0] == 'L' || op[0] == 'G';
        for (int64_t o = 0; o < n; o++) {
            int64_t x = a->ints[bidx(a, r, d, o)], y = b->ints[bidx(b, r, d, o)], z;
            switch (op[0]) {
            case 'A': z = x + y; break;
            case 'S': z = x - y; break;
            case 'M': z = op[1] == 'u' ? x * y : op[1] == 'i' ? (x < y ? x : y) : (x > y ? x : y); break;
            case 'D':
                if (y == 0) return free(q), ox_unsupported(im, "division by zero");
                z = x / y;
                if ((x % y != 0) && ((x < 0) != (y < 0))) z--; /* numpy's floor division on integers */
                break;
            case 'E': z = x == y; break;
            case 'L': z = x < y; break;
            default: z = x > y; break;
            }
            q[o] = z;
        }
        return ox_fold(im, 0, cmp ? PAR_ONNX_BOOL : a->dtype, r, d, q, NULL);
    }
    return ox_unsupported(im, "folding %.40s on these inputs", op);
}

/* ---------------------------------------------------------------------------------------------------------------
 * The table
 * ------------------------------------------------------------------------------------------------------------- */

typedef struct ox_row {
    const char *onnx;   /* ONNX op type */
    ox_map_fn map;      /* NULL: only folded on constants */
    const char *op;     /* the parity op it needs (its absence from this build's op table makes the op lacking) */
    int fold;           /* folded when every input is known at import */
} ox_row;

/* The ops whose parity twin has a quantized form that computes the QDQ pattern's meaning (the ideal real result of
 * the dequantized inputs, requantized: docs/quantization.md) in one node. */
static const char *const qdq_ops[] = {"Conv", "ConvTranspose", "Gemm", "MatMul", "Add", "Mul", "Relu", "Clip",
                                      "LeakyRelu", "Sigmoid", "Tanh", "HardSwish", "HardSigmoid", "MaxPool",
                                      "AveragePool", "GlobalAveragePool", "ReduceMean", "Concat", "Reshape",
                                      "Flatten", "Transpose", "Squeeze", "Unsqueeze", "Resize", "Softmax", "Gather", "Slice", "Pad"};

static int qdq_capable(const char *onnx)
{
    for (size_t i = 0; i < sizeof qdq_ops / sizeof qdq_ops[0]; i++)
        if (strcmp(qdq_ops[i], onnx) == 0) return 1;
    return 0;
}

static const ox_row rows[] = {
    {"Add", map_binary, "add", 1},           {"Sub", map_binary, "sub", 1},
    {"Mul", map_binary, "mul", 1},           {"Div", map_binary, "div", 1},
    {"Pow", map_binary, "pow", 0},           {"Max", map_variadic, "maximum", 1},
    {"Min", map_variadic, "minimum", 1},     {"Sum", map_variadic, "add", 0},
    {"Mean", map_variadic, "add", 0},
    {"Equal", map_binary, "eq", 1},          {"Greater", map_binary, "gt", 1},
    {"Less", map_binary, "lt", 1},           {"GreaterOrEqual", map_binary, "ge", 0},
    {"LessOrEqual", map_binary, "le", 0},    {"And", map_binary, "logical_and", 0},
    {"Or", map_binary, "logical_or", 0},     {"Xor", map_binary, "logical_xor", 0},
    {"Not", map_unary, "logical_not", 0},
    {"Relu", map_unary, "relu", 0},          {"Sigmoid", map_unary, "sigmoid", 0},
    {"Tanh", map_unary, "tanh", 0},          {"Sqrt", map_unary, "sqrt", 0},
    {"HardSwish", map_unary, "hardswish", 0}, {"Abs", map_unary, "abs", 0},
    {"Neg", map_unary, "neg", 0},            {"Exp", map_unary, "exp", 0},
    {"Log", map_unary, "log", 0},            {"Floor", map_unary, "floor", 0},
    {"Ceil", map_unary, "ceil", 0},          {"Round", map_unary, "round", 0},
    {"Reciprocal", map_unary, "reciprocal", 0}, {"Sign", map_unary, "sign", 0},
    {"Softplus", map_unary, "softplus", 0},  {"Softsign", map_unary, "softsign", 0},
    {"Erf", map_unary, "erf", 0},            {"Sin", map_unary, "sin", 0},
    {"Cos", map_unary, "cos", 0},
    {"LeakyRelu", map_leaky_relu, "leaky_relu", 0}, {"Elu", map_elu, "elu", 0},
    {"HardSigmoid", map_hardsigmoid, "hardsigmoid", 0}, {"Gelu", map_gelu, "gelu", 0},
    {"PRelu", map_prelu, "prelu", 0},        {"Clip", map_clip, "clamp", 0},
    {"Conv", map_conv, "conv2d", 0},         {"ConvTranspose", map_conv_transpose, "conv_transpose2d", 0},
    {"MatMul", map_matmul, "matmul", 0},     {"Gemm", map_gemm, "linear", 0},
    {"MaxPool", map_pool, "max_pool2d", 0},  {"AveragePool", map_pool, "avg_pool2d", 0},
    {"GlobalAveragePool", map_global_avg, "global_avg_pool2d", 0},
    {"GlobalMaxPool", map_global_avg, "amax", 0},
    {"ReduceMean", map_reduce, "mean", 0},   {"ReduceSum", map_reduce, "sum", 0},
    {"ReduceMax", map_reduce, "amax", 0},    {"ReduceMin", map_reduce, "amin", 0},
    {"ReduceProd", map_reduce, "prod", 0},   {"ReduceL1", map_reduce, "norm_l1", 0},
    {"ReduceL2", map_reduce, "norm_l2", 0},  {"ReduceSumSquare", map_reduce, "sum_square", 0},
    {"ReduceLogSumExp", map_reduce, "logsumexp", 0},
    {"Softmax", map_softmax, "softmax", 0},  {"LogSoftmax", map_softmax, "log_softmax", 0},
    {"Reshape", map_reshape, "reshape", 1},  {"Flatten", map_flatten, "reshape", 1},
    {"Squeeze", map_squeeze_unsqueeze, "reshape", 1}, {"Unsqueeze", map_squeeze_unsqueeze, "reshape", 1},
    {"Transpose", map_transpose, "permute", 0}, {"Concat", map_concat, "concat", 1},
    {"Identity", map_identity, NULL, 1},     {"Dropout", map_identity, NULL, 0},
    {"Slice", map_slice, "slice", 0},        {"Split", map_split, "slice", 0},
    {"Pad", map_pad, "pad", 0},              {"Gather", map_gather, "gather", 1},
    {"Where", map_where, "where", 0},
    {"BatchNormalization", map_batch_norm, "batch_norm", 0},
    {"InstanceNormalization", map_instance_norm, "instance_norm", 0},
    {"LayerNormalization", map_layer_norm, "layer_norm", 0},
    {"Resize", map_resize, "upsample_nearest2d", 0}, {"Upsample", map_resize, "upsample_nearest2d", 0},
    {"QuantizeLinear", map_quantize, "quantize", 0}, {"DequantizeLinear", map_dequantize, "dequantize", 0},
    {"Cast", map_cast, NULL, 1},             {"CastLike", map_cast, NULL, 0},
    {"Shape", NULL, NULL, 1},
    {"Size", NULL, NULL, 1},                 {"Constant", NULL, NULL, 1},
    {"ConstantOfShape", NULL, NULL, 1},      {"Range", NULL, NULL, 1},
};

static const ox_row *row_of(const char *onnx)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (strcmp(rows[i].onnx, onnx) == 0) return &rows[i];
    return NULL;
}

static const char *direct_op(const char *onnx)
{
    const ox_row *r = row_of(onnx);
    return r && r->op ? r->op : "";
}

ox_map_fn par_onnx_op_mapper(const char *op_type)
{
    const ox_row *r = row_of(op_type);
    if (!r || !r->map) return NULL;
    if (r->op && !par_op_find(r->op)) return NULL; /* its parity twin is not in this build's op table */
    return r->map;
}

int par_onnx_op_foldable(const char *op_type)
{
    const ox_row *r = row_of(op_type);
    return r && r->fold;
}
