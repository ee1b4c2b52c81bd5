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

/* An intermediate node: its value, -1 with why set (an unsupported part) or msg set. */
static int32_t step(ox_imp *im, const char *op, int32_t n_in, const int32_t *ins, int32_t n_attrs,
                    const par_attr *attrs)
{
    for (int32_t i = 0; i < n_in; i++)
        if (ins[i] < 0) return -1;
    return ox_emit(im, op, n_in, ins, n_attrs, attrs, -1, NULL);
}

static int last(ox_imp *im, const char *op, int32_t n_in, const int32_t *ins, int32_t n_attrs, const par_attr *attrs)
{
    for (int32_t i = 0; i < n_in; i++)
        if (ins[i] < 0) return im->failed ? OX_ERROR : OX_UNSUPPORTED;
    return ox_emit(im, op, n_in, ins, n_attrs, attrs, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

static int32_t binary(ox_imp *im, const char *op, int32_t a, int32_t b)
{
    int32_t ab[2] = {a, b};
    return step(im, op, 2, ab, 0, NULL);
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
        int32_t m = step(im, "abs", 1, &x, 0, NULL);
        return last(im, "sum", 1, &m, 2, a);
    }
    if (strcmp(t, "ReduceSumSquare") == 0 || strcmp(t, "ReduceL2") == 0) {
        int32_t sq = binary(im, "mul", x, x);
        if (strcmp(t, "ReduceSumSquare") == 0) return last(im, "sum", 1, &sq, 2, a);
        int32_t s = step(im, "sum", 1, &sq, 2, a);
        return last(im, "sqrt", 1, &s, 0, NULL);
    }
    if (strcmp(t, "ReduceLogSum") == 0) {
        int32_t s = step(im, "sum", 1, &x, 2, a);
        return last(im, "log", 1, &s, 0, NULL);
    }
    /* ReduceLogSumExp */
    par_attr ak[2] = {a[0], par_a_int("keepdims", 1)};
    int32_t m = step(im, "amax", 1, &x, 2, ak);
    int32_t e = binary(im, "sub", x, m);
    e = step(im, "exp", 1, &e, 0, NULL);
    int32_t s = step(im, "sum", 1, &e, 2, a);
    s = step(im, "log", 1, &s, 0, NULL);
    if (!keep && m >= 0 && s >= 0) { /* the maximum in the output's shape */
        const par_value *sv = ox_pv(im, s);
        par_attr sh = par_a_ints("shape", sv->rank, sv->dims);
        m = step(im, "reshape", 1, &m, 1, &sh);
    }
    int32_t sm[2] = {s, m};
    return last(im, "add", 2, sm, 0, NULL);
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
    int32_t y = step(im, "elu", 1, &x, 1, &a);
    int32_t g = ox_scalar_f32(im, "selu_gamma", (float)ox_attr_f(im, "gamma", 1.05070102214813232421875));
    int32_t yg[2] = {y, g};
    return last(im, "mul", 2, yg, 0, NULL);
}

/* ThresholdedRelu: x > alpha ? x : 0 (a NaN compares false: 0, as ONNX's definition). */
int ox_map_thresholded_relu(ox_imp *im)
{
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    int32_t c = binary(im, "gt", x, ox_scalar_f32(im, "thresholdedrelu_alpha", (float)ox_attr_f(im, "alpha", 1.0)));
    int32_t in[3] = {c, x, ox_scalar_f32(im, "thresholdedrelu_zero", 0.0f)};
    return last(im, "where", 3, in, 0, NULL);
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
    int32_t r = step(im, "reshape", 1, &x, 1, &a6);
    r = step(im, "permute", 1, &r, 1, &ap);
    return last(im, "reshape", 1, &r, 1, &a4);
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
    int32_t in[2] = {step(im, "reshape", 1, &x, 1, &sh), k};
    return last(im, "gather", 2, in, 1, &ax);
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
    if (none && !wv) return last(im, "sum", 1, &xm, 2, cax);
    int32_t loss = step(im, "sum", 1, &xm, 2, cax);
    int32_t wsel = -1;
    if (wv) {
        par_attr a0 = par_a_int("axis", 0);
        int32_t wc[2] = {ox_tensor(im, wv), ck};
        wsel = step(im, "gather", 2, wc, 1, &a0);
        if (none) {
            int32_t lw[2] = {loss, wsel};
            return last(im, "mul", 2, lw, 0, NULL);
        }
        loss = binary(im, "mul", loss, wsel);
    }
    int64_t all[PAR_MAX_RANK];
    for (int32_t d = 0; d < tv->rank; d++) all[d] = d;
    par_attr aall[2] = {par_a_ints("axes", tv->rank, all), par_a_int("keepdims", 0)};
    if (strcmp(red, "sum") == 0) return last(im, "sum", 1, &loss, 2, aall);
    if (strcmp(red, "mean") != 0) return ox_unsupported(im, "reduction '%.20s'", red);
    if (!valid) return ox_unsupported(im, "a mean over no element (every target ignored)");
    int32_t total = step(im, "sum", 1, &loss, 2, aall), den;
    if (wv) {
        /* the selected weights where the target is not ignored: the valid mask times the gathered weights */
        float *vm = malloc((size_t)tv->numel * sizeof *vm);
        if (!vm) return ox_error(im, "out of memory");
        for (int64_t i = 0; i < tv->numel; i++) vm[i] = tv->ints[i] == ii ? 0.0f : 1.0f;
        int32_t vk = ox_const_made(im, "nll_valid", PAR_DTYPE_F32, tv->rank, tv->dims, vm);
        free(vm);
        if (vk < 0) return OX_ERROR;
        int32_t ws = binary(im, "mul", wsel, vk);
        den = step(im, "sum", 1, &ws, 2, aall);
    } else {
        float count = (float)valid; /* a rank-0 constant: the scalar loss keeps rank 0 */
        den = ox_const_made(im, "nll_count", PAR_DTYPE_F32, 0, NULL, &count);
        if (den < 0) return OX_ERROR;
    }
    int32_t td[2] = {total, den};
    return last(im, "div", 2, td, 0, NULL);
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
