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


/* ---------------------------------------------------------------------------------------------------------------
 * Elementwise
 * ------------------------------------------------------------------------------------------------------------- */


static int map_unary(ox_imp *im)
{
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    return ox_emit(im, im->twin, 1, &x, 0, NULL, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

static int map_binary(ox_imp *im)
{
    int32_t ab[2] = {ox_tensor(im, ox_in(im, 0)), ox_tensor(im, ox_in(im, 1))};
    if (ab[0] < 0 || ab[1] < 0) return OX_UNSUPPORTED;
    return ox_emit(im, im->twin, 2, ab, 0, NULL, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

/* Sum, Max, Min, Mean of any number of inputs: a chain of binary nodes. */
static int map_variadic(ox_imp *im)
{
    const char *op = im->twin;
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
        int32_t nd[2] = {acc, ox_scalar_f32(im, "mean_count", (float)n)}; /* divide by n: a scalar constant */
        if (nd[1] < 0) return OX_ERROR;
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
    for (int i = 0; i < 2; i++)
        if ((k[i] = ox_scalar_f32(im, i ? "hardsigmoid_beta" : "hardsigmoid_alpha", ab[i])) < 0) return OX_ERROR;
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
    if (ox_emit(im, "prelu", 2, ins, 0, NULL, 0, NULL) >= 0) return OX_OK;
    if (im->failed) return OX_ERROR;
    im->why[0] = 0; /* a slope of another broadcast: ONNX's definition written out */
    return ox_prelu_where(im, x, sv);
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










/* ---------------------------------------------------------------------------------------------------------------
 * Shape and data movement
 * ------------------------------------------------------------------------------------------------------------- */

static int emit_reshape(ox_imp *im, int32_t x, int32_t rank, const int64_t *dims)
{
    par_attr a = par_a_ints("shape", rank, dims);
    return ox_emit(im, "reshape", 1, &x, 1, &a, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
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
    int rc = ox_reshape_dims(im, pv->dims, pv->rank, pv->numel, shape, n, dims);
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
    int32_t axis = ox_norm_axis(ox_attr_i(im, "axis", 1), pv->rank);
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
            int32_t a = ox_norm_axis(ax[i], out_rank);
            if (a < 0 || a >= out_rank || out_rank > MAXL || flag[a]) return ox_unsupported(im, "bad axes");
            flag[a] = 1;
        }
        for (int32_t i = 0, k = 0; i < out_rank; i++) d[r++] = flag[i] ? 1 : pv->dims[k++];
    } else {
        int flag[MAXL] = {0};
        for (int32_t i = 0; i < na; i++) {
            int32_t a = ox_norm_axis(ax[i], pv->rank);
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
        int32_t axis = na > 0 ? ox_norm_axis(ax[i], r) : i;
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
    int32_t axis = ox_norm_axis(ox_attr_i(im, "axis", 0), pv->rank);
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
    int32_t axis = ox_norm_axis(ox_attr_i(im, "axis", 0), pv->rank);
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





/* ---------------------------------------------------------------------------------------------------------------
 * Resampling
 * ------------------------------------------------------------------------------------------------------------- */


/* ---------------------------------------------------------------------------------------------------------------
 * Quantization
 * ------------------------------------------------------------------------------------------------------------- */




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
    int rc = par_onnx_op_mapper(n->op_type) ? ox_map_node(im) : OX_UNSUPPORTED;
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
    {"Pow", ox_map_pow, "pow", 0},           {"Max", map_variadic, "maximum", 1},
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
    {"Conv", ox_map_conv, "conv2d", 0},         {"ConvTranspose", ox_map_conv_transpose, "conv_transpose2d", 0},
    {"MatMul", ox_map_matmul, "matmul", 0},     {"Gemm", ox_map_gemm_any, "linear", 0},
    {"MaxPool", ox_map_pool, "max_pool2d", 0},  {"AveragePool", ox_map_pool, "avg_pool2d", 0},
    {"GlobalAveragePool", ox_map_global_avg, "global_avg_pool2d", 0},
    {"GlobalMaxPool", ox_map_global_avg, "amax", 0},
    {"ReduceMean", ox_map_reduce, "mean", 0},   {"ReduceSum", ox_map_reduce, "sum", 0},
    {"ReduceMax", ox_map_reduce, "amax", 0},    {"ReduceMin", ox_map_reduce, "amin", 0},
    {"ArgMax", ox_map_arg, "argmax", 0},       {"ArgMin", ox_map_arg, "argmin", 0},
    {"Hardmax", ox_map_hardmax, "argmax", 0},
    {"ReduceProd", ox_map_reduce, "prod", 0},   {"ReduceL1", ox_map_reduce_composite, "sum", 0},
    {"ReduceL2", ox_map_reduce_composite, "sum", 0}, {"ReduceSumSquare", ox_map_reduce_composite, "sum", 0},
    {"ReduceLogSum", ox_map_reduce_composite, "sum", 0}, {"ReduceLogSumExp", ox_map_reduce_composite, "sum", 0},
    {"Selu", ox_map_selu, "elu", 0},         {"ThresholdedRelu", ox_map_thresholded_relu, "where", 0},
    {"DepthToSpace", ox_map_depth_space, "permute", 0}, {"SpaceToDepth", ox_map_depth_space, "permute", 0},
    {"GatherElements", ox_map_gather_elements, "gather", 0},
    {"Tan", ox_map_elementwise_composite, "sin", 0}, {"Sinh", ox_map_elementwise_composite, "exp", 0},
    {"Cosh", ox_map_elementwise_composite, "exp", 0}, {"Asinh", ox_map_elementwise_composite, "log", 0},
    {"Acosh", ox_map_elementwise_composite, "log", 0}, {"Atanh", ox_map_elementwise_composite, "log", 0},
    {"Celu", ox_map_elementwise_composite, "elu", 0}, {"Shrink", ox_map_elementwise_composite, "where", 0},
    {"IsNaN", ox_map_elementwise_composite, "eq", 0}, {"IsInf", ox_map_elementwise_composite, "eq", 0},
    {"Trilu", ox_map_trilu, "where", 0},     {"CumSum", ox_map_cumsum, "matmul", 0},
    {"Compress", ox_map_compress, "gather", 0}, {"OneHot", ox_map_onehot, "gather", 0},
    {"ScatterElements", ox_map_scatter, "gather", 0}, {"Scatter", ox_map_scatter, "gather", 0},
    {"ScatterND", ox_map_scatter, "gather", 0}, {"GatherND", ox_map_gather_nd, "gather", 0},
    {"Expand", ox_map_expand, "where", 0},   {"Tile", ox_map_tile, "concat", 0},
    {"MeanVarianceNormalization", ox_map_mvn, "mean", 0},
    {"NegativeLogLikelihoodLoss", ox_map_nll, "sum", 0}, {"SoftmaxCrossEntropyLoss", ox_map_sce, "log_softmax", 0},
    {"Softmax", ox_map_softmax, "softmax", 0},  {"LogSoftmax", ox_map_softmax, "log_softmax", 0},
    {"Reshape", map_reshape, "reshape", 1},  {"Flatten", map_flatten, "reshape", 1},
    {"Squeeze", map_squeeze_unsqueeze, "reshape", 1}, {"Unsqueeze", map_squeeze_unsqueeze, "reshape", 1},
    {"Transpose", map_transpose, "permute", 0}, {"Concat", map_concat, "concat", 1},
    {"Identity", map_identity, NULL, 1},     {"Dropout", map_identity, NULL, 0},
    {"Slice", map_slice, "slice", 1},        {"Split", map_split, "slice", 0},
    {"Pad", map_pad, "pad", 0},              {"Gather", map_gather, "gather", 1},
    {"Where", map_where, "where", 0},
    {"BatchNormalization", ox_map_batch_norm, "batch_norm", 0},
    {"InstanceNormalization", ox_map_instance_norm, "instance_norm", 0},
    {"LayerNormalization", ox_map_layer_norm, "layer_norm", 0},
    {"Resize", ox_map_resize, "upsample_nearest2d", 0}, {"Upsample", ox_map_resize, "upsample_nearest2d", 0},
    {"QuantizeLinear", ox_map_quantize, "quantize", 0}, {"DequantizeLinear", ox_map_dequantize, "dequantize", 0},
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


int ox_map_node(ox_imp *im)
{
    const ox_row *r = row_of(im->node->op_type);
    if (!r || !r->map || (r->op && !par_op_find(r->op))) return ox_unsupported(im, "no mapping");
    im->twin = r->op ? r->op : "";
    return r->map(im);
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
