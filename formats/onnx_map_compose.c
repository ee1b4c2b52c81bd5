/*
 * onnx_map_compose.c - the ONNX importer's mapping functions of ONNX ops that parity expresses as a composition of
 * its own ops (the rows of onnx_ops.c's table name them): the reductions ReduceL1, ReduceL2, ReduceSumSquare,
 * ReduceLogSum and ReduceLogSumExp, Selu and ThresholdedRelu, DepthToSpace and SpaceToDepth, GatherElements with
 * indices known at import, and the losses NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss with targets known at
 * import. Each composition computes what ONNX's definition says, op by op, so the reference's budget of the parts is
 * the budget of the whole; docs/formats.md lists them.
 *
 * Must not: walk a graph or call the table; decide numerics (the reference does, per parity op).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "formats/onnx_int.h"

static int32_t binary(ox_imp *im, const char *op, int32_t a, int32_t b)
{
    int32_t ab[2] = {a, b};
    return ox_step(im, op, 2, ab, 0, NULL);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Reductions: ONNX's definitions (onnx/reference/ops/op_reduce_*.py) over parity's sum, amax, abs, mul, exp, log,
 * sqrt. ReduceLogSumExp subtracts the maximum first (log(sum(exp(x - m))) + m, the same real number), as PyTorch's
 * logsumexp and ONNX Runtime do, so that a large input does not overflow exp where the result is finite.
 * ------------------------------------------------------------------------------------------------------------- */

int ox_map_reduce_composite(ox_imp *im)
{
    const char *t = im->node->op_type;
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    const par_value *xv = ox_pv(im, x);
    int64_t ax[PAR_MAX_RANK];
    int32_t n;
    if (ox_reduce_axes(im, xv, ax, &n) != OX_OK) return OX_UNSUPPORTED;
    int keep = ox_attr_i(im, "keepdims", 1) != 0;
    par_attr a[2] = {par_a_ints("axes", n, ax), par_a_int("keepdims", keep)};
    if (strcmp(t, "ReduceL1") == 0) {
        int32_t m = ox_step(im, "abs", 1, &x, 0, NULL);
        return ox_last(im, "sum", 1, &m, 2, a);
    }
    if (strcmp(t, "ReduceSumSquare") == 0 || strcmp(t, "ReduceL2") == 0) {
        int32_t sq = binary(im, "mul", x, x);
        if (strcmp(t, "ReduceSumSquare") == 0) return ox_last(im, "sum", 1, &sq, 2, a);
        int32_t s = ox_step(im, "sum", 1, &sq, 2, a);
        return ox_last(im, "sqrt", 1, &s, 0, NULL);
    }
    if (strcmp(t, "ReduceLogSum") == 0) {
        int32_t s = ox_step(im, "sum", 1, &x, 2, a);
        return ox_last(im, "log", 1, &s, 0, NULL);
    }
    /* ReduceLogSumExp */
    par_attr ak[2] = {a[0], par_a_int("keepdims", 1)};
    int32_t m = ox_step(im, "amax", 1, &x, 2, ak);
    int32_t e = binary(im, "sub", x, m);
    e = ox_step(im, "exp", 1, &e, 0, NULL);
    int32_t s = ox_step(im, "sum", 1, &e, 2, a);
    s = ox_step(im, "log", 1, &s, 0, NULL);
    if (!keep && m >= 0 && s >= 0) { /* the maximum in the output's shape */
        const par_value *sv = ox_pv(im, s);
        par_attr sh = par_a_ints("shape", sv->rank, sv->dims);
        m = ox_step(im, "reshape", 1, &m, 1, &sh);
    }
    int32_t sm[2] = {s, m};
    return ox_last(im, "add", 2, sm, 0, NULL);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Activations
 * ------------------------------------------------------------------------------------------------------------- */

/* Selu: gamma * (x > 0 ? x : alpha (e^x - 1)) = gamma * elu(x, alpha). */
int ox_map_selu(ox_imp *im)
{
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    par_attr a = par_a_float("alpha", ox_attr_f(im, "alpha", 1.67326319217681884765625));
    int32_t y = ox_step(im, "elu", 1, &x, 1, &a);
    int32_t g = ox_scalar_f32(im, "selu_gamma", (float)ox_attr_f(im, "gamma", 1.05070102214813232421875));
    int32_t yg[2] = {y, g};
    return ox_last(im, "mul", 2, yg, 0, NULL);
}

/* ThresholdedRelu: x > alpha ? x : 0 (a NaN compares false: 0, as ONNX's definition). */
int ox_map_thresholded_relu(ox_imp *im)
{
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    int32_t c = binary(im, "gt", x, ox_scalar_f32(im, "thresholdedrelu_alpha", (float)ox_attr_f(im, "alpha", 1.0)));
    int32_t in[3] = {c, x, ox_scalar_f32(im, "thresholdedrelu_zero", 0.0f)};
    return ox_last(im, "where", 3, in, 0, NULL);
}

/* ---------------------------------------------------------------------------------------------------------------
 * DepthToSpace, SpaceToDepth: ONNX's own definitions, a reshape to rank 6, a permutation, a reshape back.
 * ------------------------------------------------------------------------------------------------------------- */

int ox_map_depth_space(ox_imp *im)
{
    int d2s = strcmp(im->node->op_type, "DepthToSpace") == 0;
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    const par_value *xv = ox_pv(im, x);
    int64_t b = ox_attr_i(im, "blocksize", 0);
    if (xv->rank != 4) return ox_unsupported(im, "rank %d (NCHW: rank 4)", (int)xv->rank);
    int64_t N = xv->dims[0], C = xv->dims[1], H = xv->dims[2], W = xv->dims[3];
    int64_t six[6], perm[6], out[4];
    if (b < 1 || (d2s ? C % (b * b) : H % b || W % b))
        return ox_unsupported(im, "blocksize %lld for [%lld, %lld, %lld, %lld]", (long long)b, (long long)N,
                              (long long)C, (long long)H, (long long)W);
    if (d2s) {
        int crd = strcmp(ox_attr_s(im, "mode", "DCR"), "CRD") == 0;
        static const int64_t P_DCR[6] = {0, 3, 4, 1, 5, 2}, P_CRD[6] = {0, 1, 4, 2, 5, 3};
        int64_t c = C / (b * b);
        const int64_t s_dcr[6] = {N, b, b, c, H, W}, s_crd[6] = {N, c, b, b, H, W};
        memcpy(six, crd ? s_crd : s_dcr, sizeof six);
        memcpy(perm, crd ? P_CRD : P_DCR, sizeof perm);
        out[0] = N, out[1] = c, out[2] = H * b, out[3] = W * b;
    } else {
        static const int64_t P[6] = {0, 3, 5, 1, 2, 4};
        const int64_t s[6] = {N, C, H / b, b, W / b, b};
        memcpy(six, s, sizeof six);
        memcpy(perm, P, sizeof perm);
        out[0] = N, out[1] = C * b * b, out[2] = H / b, out[3] = W / b;
    }
    par_attr a6 = par_a_ints("shape", 6, six), ap = par_a_ints("perm", 6, perm), a4 = par_a_ints("shape", 4, out);
    int32_t r = ox_step(im, "reshape", 1, &x, 1, &a6);
    r = ox_step(im, "permute", 1, &r, 1, &ap);
    return ox_last(im, "reshape", 1, &r, 1, &a4);
}

/* ---------------------------------------------------------------------------------------------------------------
 * GatherElements with indices known at import: y[i] = data[i with axis replaced by indices[i]], i over the
 * indices' shape, which is the flattened data gathered at constant flat offsets, reshaped to the indices' shape.
 * ------------------------------------------------------------------------------------------------------------- */

int ox_map_gather_elements(ox_imp *im)
{
    ox_val *iv = ox_in(im, 1);
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0 || !iv) return OX_UNSUPPORTED;
    if (!iv->is_const || !iv->ints) return ox_unsupported(im, "indices computed at run time");
    const par_value *xv = ox_pv(im, x);
    int32_t r = xv->rank, axis = ox_norm_axis(ox_attr_i(im, "axis", 0), r);
    if (axis < 0 || axis >= r || iv->rank != r) return ox_unsupported(im, "axis or indices' rank out of range");
    int64_t stride[PAR_MAX_RANK], s = 1;
    for (int32_t d = r - 1; d >= 0; d--) {
        if (iv->dims[d] > xv->dims[d] && d != axis) return ox_unsupported(im, "indices larger than the data");
        stride[d] = s;
        s *= xv->dims[d];
    }
    if (iv->numel < 1) return ox_unsupported(im, "empty indices (parity has no zero-sized tensors)");
    int32_t *flat = malloc((size_t)iv->numel * sizeof *flat);
    if (!flat) return ox_error(im, "out of memory");
    for (int64_t i = 0; i < iv->numel; i++) {
        int64_t rem = i, off = 0;
        for (int32_t d = r - 1; d >= 0; d--) {
            int64_t c = rem % iv->dims[d];
            rem /= iv->dims[d];
            if (d == axis) {
                c = iv->ints[i] < 0 ? iv->ints[i] + xv->dims[d] : iv->ints[i];
                if (c < 0 || c >= xv->dims[d]) {
                    free(flat);
                    return ox_unsupported(im, "index %lld out of range", (long long)iv->ints[i]);
                }
            }
            off += c * stride[d];
        }
        flat[i] = (int32_t)off;
    }
    int32_t k = ox_const_made(im, "gather_elements_offsets", PAR_DTYPE_I32, iv->rank, iv->dims, flat);
    free(flat);
    if (k < 0) return OX_ERROR;
    int64_t n = xv->numel;
    par_attr sh = par_a_ints("shape", 1, &n), ax = par_a_int("axis", 0);
    int32_t in[2] = {ox_step(im, "reshape", 1, &x, 1, &sh), k};
    return ox_last(im, "gather", 2, in, 1, &ax);
}

/* ---------------------------------------------------------------------------------------------------------------
 * NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss with the target known at import (a node test's target is
 * its test data). ONNX: loss[n, d] = -input[n, t[n, d], d] * weight[t[n, d]], 0 where t = ignore_index; reduction
 * none, sum, or mean = sum(loss) / sum(weight[t] where t != ignore_index). With t constant the selection is a
 * product with a constant one-hot mask summed over the class axis (every other term is an exact 0), the weights a
 * gather at constant indices; the mean's divisor is a sum of the selected weights (a constant count without weights).
 * ------------------------------------------------------------------------------------------------------------- */

/* The loss of input x (a parity value, [N, C, d...]) for the current node's target (input 1) and weight (input 2). */
static int nll(ox_imp *im, int32_t x)
{
    ox_val *tv = ox_in(im, 1), *wv = ox_in(im, 2);
    if (!tv || !tv->is_const || !tv->ints) return ox_unsupported(im, "a target computed at run time");
    const par_value *xv = ox_pv(im, x);
    int32_t r = xv->rank;
    if (r < 2 || tv->rank != r - 1) return ox_unsupported(im, "input of rank %d, target of rank %d", (int)r, (int)tv->rank);
    for (int32_t d = 0; d < r - 1; d++)
        if (tv->dims[d] != xv->dims[d ? d + 1 : 0]) return ox_unsupported(im, "the target's shape");
    int64_t C = xv->dims[1], inner = 1, ii = ox_attr_i(im, "ignore_index", INT64_MIN), valid = 0;
    for (int32_t d = 2; d < r; d++) inner *= xv->dims[d];
    float *mask = calloc((size_t)xv->numel, sizeof *mask);
    int32_t *cls = malloc((size_t)tv->numel * sizeof *cls);
    if (!mask || !cls) {
        free(mask), free(cls);
        return ox_error(im, "out of memory");
    }
    for (int64_t i = 0; i < tv->numel; i++) {
        int64_t t = tv->ints[i], n = i / inner, j = i % inner;
        cls[i] = 0; /* an ignored element's weight is gathered at class 0 and multiplies an exact 0 */
        if (t == ii) continue;
        if (t < 0 || t >= C) {
            free(mask), free(cls);
            return ox_unsupported(im, "target %lld outside [0, %lld)", (long long)t, (long long)C);
        }
        mask[(n * C + t) * inner + j] = -1.0f; /* -input: the negation is exact */
        cls[i] = (int32_t)t;
        valid++;
    }
    int32_t mk = ox_const_made(im, "nll_mask", PAR_DTYPE_F32, r, xv->dims, mask);
    int32_t ck = wv ? ox_const_made(im, "nll_class", PAR_DTYPE_I32, tv->rank, tv->dims, cls) : 0;
    free(mask);
    free(cls);
    if (mk < 0 || ck < 0) return OX_ERROR;
    int64_t one = 1;
    par_attr cax[2] = {par_a_ints("axes", 1, &one), par_a_int("keepdims", 0)};
    const char *red = ox_attr_s(im, "reduction", "mean");
    int none = strcmp(red, "none") == 0;
    int32_t xm = binary(im, "mul", x, mk);
    if (none && !wv) return ox_last(im, "sum", 1, &xm, 2, cax);
    int32_t loss = ox_step(im, "sum", 1, &xm, 2, cax);
    int32_t wsel = -1;
    if (wv) {
        par_attr a0 = par_a_int("axis", 0);
        int32_t wc[2] = {ox_tensor(im, wv), ck};
        wsel = ox_step(im, "gather", 2, wc, 1, &a0);
        if (none) {
            int32_t lw[2] = {loss, wsel};
            return ox_last(im, "mul", 2, lw, 0, NULL);
        }
        loss = binary(im, "mul", loss, wsel);
    }
    int64_t all[PAR_MAX_RANK];
    for (int32_t d = 0; d < tv->rank; d++) all[d] = d;
    par_attr aall[2] = {par_a_ints("axes", tv->rank, all), par_a_int("keepdims", 0)};
    if (strcmp(red, "sum") == 0) return ox_last(im, "sum", 1, &loss, 2, aall);
    if (strcmp(red, "mean") != 0) return ox_unsupported(im, "reduction '%.20s'", red);
    if (!valid) return ox_unsupported(im, "a mean over no element (every target ignored)");
    int32_t total = ox_step(im, "sum", 1, &loss, 2, aall), den;
    if (wv) {
        /* the selected weights where the target is not ignored: the valid mask times the gathered weights */
        float *vm = malloc((size_t)tv->numel * sizeof *vm);
        if (!vm) return ox_error(im, "out of memory");
        for (int64_t i = 0; i < tv->numel; i++) vm[i] = tv->ints[i] == ii ? 0.0f : 1.0f;
        int32_t vk = ox_const_made(im, "nll_valid", PAR_DTYPE_F32, tv->rank, tv->dims, vm);
        free(vm);
        if (vk < 0) return OX_ERROR;
        int32_t ws = binary(im, "mul", wsel, vk);
        den = ox_step(im, "sum", 1, &ws, 2, aall);
    } else {
        float count = (float)valid; /* a rank-0 constant: the scalar loss keeps rank 0 */
        den = ox_const_made(im, "nll_count", PAR_DTYPE_F32, 0, NULL, &count);
        if (den < 0) return OX_ERROR;
    }
    int32_t td[2] = {total, den};
    return ox_last(im, "div", 2, td, 0, NULL);
}

int ox_map_nll(ox_imp *im)
{
    int32_t x = ox_tensor(im, ox_in(im, 0));
    return x < 0 ? OX_UNSUPPORTED : nll(im, x);
}

/* SoftmaxCrossEntropyLoss: the loss of log_softmax(scores) along the class axis; the second output (log_prob) is
 * that log_softmax. */
int ox_map_sce(ox_imp *im)
{
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    par_attr a = par_a_int("axis", 1);
    int want = im->node->n_outputs > 1 && im->node->outputs[1][0];
    int32_t lp = ox_emit(im, "log_softmax", 1, &x, 1, &a, want ? 1 : -1, NULL);
    return lp < 0 ? OX_UNSUPPORTED : nll(im, lp);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Elementwise functions by their definitions: Tan = sin / cos; Sinh, Cosh = (e^x -+ e^-x) / 2; Asinh =
 * log(x + sqrt(x^2 + 1)); Acosh = log(x + sqrt(x^2 - 1)); Atanh = log((1 + x) / (1 - x)) / 2; Celu = alpha elu(x /
 * alpha); Shrink = x + bias below -lambd, x - bias above lambd, else 0; IsNaN = not(x == x); IsInf = x == +inf or
 * x == -inf (as detect_positive / detect_negative ask). Each is the real function (the reference computes the
 * composition's value and budget per op), not a fast approximation of it.
 * ------------------------------------------------------------------------------------------------------------- */

static int32_t unary(ox_imp *im, const char *op, int32_t x) { return ox_step(im, op, 1, &x, 0, NULL); }

static int32_t times(ox_imp *im, int32_t x, float k) { return binary(im, "mul", x, ox_scalar_f32(im, "k", k)); }

/* log(x + sqrt(x * x + s)): asinh (s = 1), acosh (s = -1). */
static int arc_hyperbolic(ox_imp *im, int32_t x, float s)
{
    int32_t r = unary(im, "sqrt", binary(im, "add", binary(im, "mul", x, x), ox_scalar_f32(im, "one", s)));
    int32_t a = binary(im, "add", x, r);
    return ox_last(im, "log", 1, &a, 0, NULL);
}

int ox_map_elementwise_composite(ox_imp *im)
{
    const char *t = im->node->op_type;
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    if (strcmp(t, "Tan") == 0) {
        int32_t sc[2] = {unary(im, "sin", x), unary(im, "cos", x)};
        return ox_last(im, "div", 2, sc, 0, NULL);
    }
    if (strcmp(t, "Sinh") == 0 || strcmp(t, "Cosh") == 0) {
        int32_t d = binary(im, strcmp(t, "Sinh") == 0 ? "sub" : "add", unary(im, "exp", x),
                           unary(im, "exp", unary(im, "neg", x)));
        int32_t h[2] = {d, ox_scalar_f32(im, "half", 0.5f)};
        return ox_last(im, "mul", 2, h, 0, NULL);
    }
    if (strcmp(t, "Asinh") == 0) return arc_hyperbolic(im, x, 1.0f);
    if (strcmp(t, "Acosh") == 0) return arc_hyperbolic(im, x, -1.0f);
    if (strcmp(t, "Atanh") == 0) {
        int32_t one = ox_scalar_f32(im, "one", 1.0f);
        int32_t q = unary(im, "log", binary(im, "div", binary(im, "add", one, x), binary(im, "sub", one, x)));
        int32_t h[2] = {q, ox_scalar_f32(im, "half", 0.5f)};
        return ox_last(im, "mul", 2, h, 0, NULL);
    }
    if (strcmp(t, "Celu") == 0) {
        double alpha = ox_attr_f(im, "alpha", 1.0);
        if (!(alpha > 0) || !isfinite(alpha)) return ox_unsupported(im, "alpha %g", alpha);
        par_attr a1 = par_a_float("alpha", 1.0);
        int32_t e = binary(im, "div", x, ox_scalar_f32(im, "celu_alpha", (float)alpha));
        e = ox_step(im, "elu", 1, &e, 1, &a1);
        int32_t ea[2] = {e, ox_scalar_f32(im, "celu_alpha", (float)alpha)};
        return ox_last(im, "mul", 2, ea, 0, NULL);
    }
    if (strcmp(t, "Shrink") == 0) {
        float l = (float)ox_attr_f(im, "lambd", 0.5), b = (float)ox_attr_f(im, "bias", 0.0);
        int32_t bk = ox_scalar_f32(im, "shrink_bias", b);
        int32_t hi[3] = {binary(im, "gt", x, ox_scalar_f32(im, "shrink_lambd", l)), binary(im, "sub", x, bk),
                         ox_scalar_f32(im, "zero", 0.0f)};
        int32_t lo[3] = {binary(im, "lt", x, ox_scalar_f32(im, "shrink_lambd", -l)), binary(im, "add", x, bk),
                         ox_step(im, "where", 3, hi, 0, NULL)};
        return ox_last(im, "where", 3, lo, 0, NULL);
    }
    if (strcmp(t, "IsNaN") == 0) {
        int32_t e = binary(im, "eq", x, x);
        return ox_last(im, "logical_not", 1, &e, 0, NULL);
    }
    /* IsInf */
    int pos = ox_attr_i(im, "detect_positive", 1) != 0, neg = ox_attr_i(im, "detect_negative", 1) != 0;
    if (!pos && !neg) return ox_unsupported(im, "detecting neither infinity (an all-false constant)");
    int32_t p = pos ? binary(im, "eq", x, ox_scalar_f32(im, "inf", INFINITY)) : -1;
    int32_t n = neg ? binary(im, "eq", x, ox_scalar_f32(im, "minus_inf", -INFINITY)) : -1;
    if (!pos || !neg) {
        int32_t one = pos ? p : n;
        par_attr sh = par_a_ints("shape", ox_pv(im, x)->rank, ox_pv(im, x)->dims);
        return ox_last(im, "reshape", 1, &one, 1, &sh); /* the output named as ONNX's */
    }
    int32_t pn[2] = {p, n};
    return ox_last(im, "logical_or", 2, pn, 0, NULL);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Shape ops with constant parameters: Expand (where(true, x, x) over the broadcast shape: a selection, bit-exact)
 * and Tile (each repeated axis a concat of copies).
 * ------------------------------------------------------------------------------------------------------------- */

int ox_map_expand(ox_imp *im)
{
    int64_t shape[PAR_MAX_RANK];
    int32_t n = ox_const_ints(im, ox_in(im, 1), shape, PAR_MAX_RANK);
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (n < 0 || x < 0) return OX_UNSUPPORTED;
    const par_value *xv = ox_pv(im, x);
    int32_t r = n > xv->rank ? n : xv->rank;
    int64_t out[PAR_MAX_RANK], numel = 1;
    for (int32_t d = 0; d < r; d++) { /* numpy broadcasting of x's shape and the given one */
        int32_t i = d - (r - xv->rank), j = d - (r - n);
        int64_t a = i >= 0 ? xv->dims[i] : 1, b = j >= 0 ? shape[j] : 1;
        if (a != b && a != 1 && b != 1) return ox_unsupported(im, "shapes that do not broadcast");
        out[d] = a == 1 ? b : a;
        if (out[d] < 1) return ox_unsupported(im, "a zero-sized result");
        if (out[d] > PAR_ONNX_MAX_ELEMS / numel) return ox_unsupported(im, "more than 2^30 elements");
        numel *= out[d];
    }
    uint8_t *ones = malloc((size_t)numel);
    if (!ones) return ox_error(im, "out of memory");
    memset(ones, 1, (size_t)numel);
    int32_t c = ox_const_made(im, "expand_all", PAR_DTYPE_BOOL, r, out, ones);
    free(ones);
    if (c < 0) return OX_ERROR;
    int32_t in[3] = {c, x, x};
    return ox_last(im, "where", 3, in, 0, NULL);
}

int ox_map_tile(ox_imp *im)
{
    int64_t rep[PAR_MAX_RANK];
    int32_t n = ox_const_ints(im, ox_in(im, 1), rep, PAR_MAX_RANK);
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (n < 0 || x < 0) return OX_UNSUPPORTED;
    if (n != ox_pv(im, x)->rank) return ox_unsupported(im, "%d repeats for rank %d", (int)n, (int)ox_pv(im, x)->rank);
    int32_t lastd = -1;
    for (int32_t d = 0; d < n; d++) {
        if (rep[d] < 1 || rep[d] > 64) return ox_unsupported(im, "repeats %lld (parity: 1 to 64 by concat)",
                                                             (long long)rep[d]);
        if (rep[d] > 1) lastd = d;
    }
    if (lastd < 0) return ox_alias(im, 0, x);
    int32_t cur = x, ins[64];
    for (int32_t d = 0; d <= lastd; d++) {
        if (rep[d] == 1) continue;
        for (int64_t k = 0; k < rep[d]; k++) ins[k] = cur;
        par_attr a = par_a_int("axis", d);
        if (d == lastd) return ox_last(im, "concat", (int32_t)rep[d], ins, 1, &a);
        cur = ox_step(im, "concat", (int32_t)rep[d], ins, 1, &a);
        if (cur < 0) return OX_UNSUPPORTED;
    }
    return OX_UNSUPPORTED;
}

/* ---------------------------------------------------------------------------------------------------------------
 * MeanVarianceNormalization, as its function body: (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9) over the axes.
 * Gemm with alpha, beta or transA: alpha (A' B') + beta C, A' and B' transposed as asked (the plain form stays
 * ox_map_gemm's linear).
 * ------------------------------------------------------------------------------------------------------------- */

int ox_map_mvn(ox_imp *im)
{
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    int64_t ax[PAR_MAX_RANK] = {0, 2, 3};
    int32_t n = ox_attr_ints(im, "axes", ax, PAR_MAX_RANK);
    if (n < 0) n = 3;
    par_attr a[2] = {par_a_ints("axes", n, ax), par_a_int("keepdims", 1)};
    int32_t m = ox_step(im, "mean", 1, &x, 2, a);
    int32_t sq = binary(im, "mul", x, x);
    int32_t ex2 = ox_step(im, "mean", 1, &sq, 2, a);
    int32_t var = binary(im, "sub", ex2, binary(im, "mul", m, m));
    int32_t sd = binary(im, "add", unary(im, "sqrt", var), ox_scalar_f32(im, "mvn_eps", 1e-9f));
    int32_t qd[2] = {binary(im, "sub", x, m), sd};
    return ox_last(im, "div", 2, qd, 0, NULL);
}

int ox_map_gemm_any(ox_imp *im)
{
    double alpha = ox_attr_f(im, "alpha", 1.0), beta = ox_attr_f(im, "beta", 1.0);
    int ta = ox_attr_i(im, "transA", 0) != 0, tb = ox_attr_i(im, "transB", 0) != 0;
    if (alpha == 1.0 && beta == 1.0 && !ta) return ox_map_gemm(im);
    static const int64_t T[2] = {1, 0};
    par_attr pt = par_a_ints("perm", 2, T);
    int32_t ab[2] = {ox_tensor(im, ox_in(im, 0)), ox_tensor(im, ox_in(im, 1))};
    if (ab[0] < 0 || ab[1] < 0) return OX_UNSUPPORTED;
    if (ta) ab[0] = ox_step(im, "permute", 1, &ab[0], 1, &pt);
    if (tb) ab[1] = ox_step(im, "permute", 1, &ab[1], 1, &pt);
    int32_t y = ox_step(im, "matmul", 2, ab, 0, NULL);
    ox_val *cv = ox_in(im, 2);
    if (alpha != 1.0) {
        if (!cv) {
            int32_t yk[2] = {y, ox_scalar_f32(im, "gemm_alpha", (float)alpha)};
            return ox_last(im, "mul", 2, yk, 0, NULL);
        }
        y = times(im, y, (float)alpha);
    }
    if (y < 0) return im->failed ? OX_ERROR : OX_UNSUPPORTED;
    if (!cv) { /* transposes only: the product named as ONNX's output */
        par_attr sh = par_a_ints("shape", 2, ox_pv(im, y)->dims);
        return ox_last(im, "reshape", 1, &y, 1, &sh);
    }
    int32_t c = ox_tensor(im, cv);
    if (c >= 0 && beta != 1.0) c = times(im, c, (float)beta);
    int32_t yc[2] = {y, c};
    return ox_last(im, "add", 2, yc, 0, NULL);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Hardmax (opset 13: along one axis): 1 at the first maximum, 0 elsewhere, which is the row of an identity matrix
 * that argmax's index selects: gather(eye(n), argmax(x)) puts the one-hot along a new last axis, and a permutation
 * moves it to the axis. Exact (a selection of 0s and 1s). Before opset 13 Hardmax flattens to 2-D at the axis: that
 * form is refused.
 * ------------------------------------------------------------------------------------------------------------- */

int ox_map_hardmax(ox_imp *im)
{
    if (im->opset < 13) return ox_unsupported(im, "Hardmax before opset 13 (coerced to 2-D)");
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    const par_value *xv = ox_pv(im, x);
    int32_t r = xv->rank, axis = ox_norm_axis(ox_attr_i(im, "axis", -1), r);
    if (axis < 0 || axis >= r) return ox_unsupported(im, "axis out of range");
    int64_t n = xv->dims[axis], ed[2] = {n, n};
    if (n > 4096) return ox_unsupported(im, "an axis of %lld (the identity matrix would be %lld^2)", (long long)n,
                                        (long long)n);
    float *eye = calloc((size_t)(n * n), sizeof *eye);
    if (!eye) return ox_error(im, "out of memory");
    for (int64_t i = 0; i < n; i++) eye[i * n + i] = 1.0f;
    int32_t ek = ox_const_made(im, "hardmax_eye", PAR_DTYPE_F32, 2, ed, eye);
    free(eye);
    if (ek < 0) return OX_ERROR;
    par_attr aa[2] = {par_a_int("axis", axis), par_a_int("keepdims", 0)}, g0 = par_a_int("axis", 0);
    int32_t gi[2] = {ek, ox_step(im, "argmax", 1, &x, 2, aa)};
    if (axis == r - 1) return ox_last(im, "gather", 2, gi, 1, &g0);
    int32_t oh = ox_step(im, "gather", 2, gi, 1, &g0); /* [dims without axis..., n] */
    int64_t perm[PAR_MAX_RANK];
    for (int32_t d = 0, k = 0; d < r; d++) perm[d] = d == axis ? r - 1 : k++;
    par_attr ap = par_a_ints("perm", r, perm);
    return ox_last(im, "permute", 1, &oh, 1, &ap);
}

/* ---------------------------------------------------------------------------------------------------------------
 * PRelu whose slope broadcasts otherwise than parity's prelu takes ([1] or [C]): where(x < 0, x * slope, x), ONNX's
 * definition (a NaN compares false: x itself). Pow of a float base with an integer exponent known at import: the
 * exponent as f32 (exact below 2^24), parity's pow of two float tensors.
 * ------------------------------------------------------------------------------------------------------------- */

int ox_prelu_where(ox_imp *im, int32_t x, int32_t slope)
{
    int32_t in[3] = {binary(im, "lt", x, ox_scalar_f32(im, "zero", 0.0f)), binary(im, "mul", x, slope), x};
    return ox_last(im, "where", 3, in, 0, NULL);
}

int ox_map_pow(ox_imp *im)
{
    ox_val *ev = ox_in(im, 1);
    int32_t ab[2] = {ox_tensor(im, ox_in(im, 0)), -1};
    if (ab[0] < 0 || !ev) return OX_UNSUPPORTED;
    const int int_exp = ev->is_const && ev->ints && !ev->floats && ev->dtype != PAR_ONNX_BOOL;
    if (int_exp && ox_pv(im, ab[0])->dtype == PAR_DTYPE_F32 && ev->numel >= 1) {
        float *f = malloc((size_t)ev->numel * sizeof *f);
        if (!f) return ox_error(im, "out of memory");
        for (int64_t i = 0; i < ev->numel; i++) {
            if (ev->ints[i] > (1 << 24) || ev->ints[i] < -(1 << 24)) {
                free(f);
                return ox_unsupported(im, "an integer exponent beyond 2^24 (not exact in f32)");
            }
            f[i] = (float)ev->ints[i];
        }
        ab[1] = ox_const_made(im, "pow_exponent", PAR_DTYPE_F32, ev->rank, ev->dims, f);
        free(f);
        if (ab[1] < 0) return OX_ERROR;
    } else if ((ab[1] = ox_tensor(im, ev)) < 0) {
        return OX_UNSUPPORTED;
    }
    return ox_last(im, "pow", 2, ab, 0, NULL);
}
