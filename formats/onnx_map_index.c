/*
 * onnx_map_index.c - the ONNX importer's mapping functions of ONNX ops whose positions are known at import, as
 * selections and sums that parity's ops compute: Trilu (a constant mask and where), CumSum (a product with a
 * constant triangular matrix of ones), Compress (gather at the kept positions), OneHot (a gather from the two values
 * at a constant 0/1 index), ScatterElements / Scatter / ScatterND without reduction (a gather from the data and the
 * updates at constant flat offsets) and GatherND (a gather at constant flat offsets). The positions come from
 * constants or from a node test's data (indices, conditions, depths are its inputs), never from run-time values;
 * docs/formats.md lists them.
 *
 * Must not: walk a graph or call the table; decide numerics (the reference does, per parity op).
 */
#include <stdlib.h>
#include <string.h>

#include "formats/onnx_int.h"

/* x (any rank) flattened and gathered at the flat offsets off (rank r, dims), which make output 0: OX_OK, ... */
static int take_flat(ox_imp *im, int32_t x, const int32_t *off, int32_t r, const int64_t *dims)
{
    if (x < 0) return im->failed ? OX_ERROR : OX_UNSUPPORTED;
    int32_t k = ox_const_made(im, "offsets", PAR_DTYPE_I32, r, dims, off);
    if (k < 0) return OX_ERROR;
    int64_t n = ox_pv(im, x)->numel;
    par_attr sh = par_a_ints("shape", 1, &n), ax = par_a_int("axis", 0);
    int32_t in[2] = {ox_step(im, "reshape", 1, &x, 1, &sh), k};
    return ox_last(im, "gather", 2, in, 1, &ax);
}

/* A constant input's integers (indices, a condition, a depth): the value, or NULL with why set. */
static ox_val *known(ox_imp *im, int32_t i, const char *what)
{
    ox_val *v = ox_in(im, i);
    if (!v) return ox_unsupported(im, "no %s", what), NULL;
    if (!v->is_const || (!v->ints && !v->floats)) return ox_unsupported(im, "%s computed at run time", what), NULL;
    if (v->numel < 1) return ox_unsupported(im, "empty %s (parity has no zero-sized tensors)", what), NULL;
    return v;
}

/* The most elements an index map made here may have (a hostile OneHot depth or GatherND must not allocate more). */
#define MAX_MAP (1 << 26)

static int64_t int_at(const ox_val *v, int64_t i) { return v->ints ? v->ints[i] : (int64_t)v->floats[i]; }

static int64_t numel_of(int32_t r, const int64_t *dims)
{
    int64_t n = 1;
    for (int32_t d = 0; d < r; d++) n *= dims[d];
    return n;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Trilu: y = where(mask, x, 0) with mask[i, j] = j - i >= k (upper) or j - i <= k (lower) over the last two axes.
 * ------------------------------------------------------------------------------------------------------------- */

int ox_map_trilu(ox_imp *im)
{
    int32_t x = ox_data_tensor(im, ox_in(im, 0));
    if (x < 0) return im->failed ? OX_ERROR : OX_UNSUPPORTED;
    int64_t k = 0;
    if (ox_in(im, 1)) {
        ox_val *kv = known(im, 1, "k");
        if (!kv) return OX_UNSUPPORTED;
        k = int_at(kv, 0);
    }
    int upper = ox_attr_i(im, "upper", 1) != 0;
    const par_value *xv = ox_pv(im, x);
    par_dtype dt = xv->dtype;
    if (dt != PAR_DTYPE_I32 && dt != PAR_DTYPE_F32) return ox_unsupported(im, "Trilu of %s", par_dtype_name(dt));
    if (xv->rank < 2) return ox_unsupported(im, "input of rank %d (Trilu needs 2 or more)", (int)xv->rank);
    int64_t n = xv->dims[xv->rank - 2], m = xv->dims[xv->rank - 1];
    uint8_t *mask = malloc((size_t)(n * m));
    if (!mask) return ox_error(im, "out of memory");
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < m; j++) mask[i * m + j] = upper ? j - i >= k : j - i <= k;
    int64_t md[2] = {n, m}, one = 1;
    int32_t mk = ox_const_made(im, "trilu_mask", PAR_DTYPE_BOOL, 2, md, mask);
    free(mask);
    int32_t zero_bits = 0; /* 0 as i32 and as f32 */
    int32_t z = ox_const_made(im, "zero", dt, 1, &one, &zero_bits);
    if (mk < 0 || z < 0) return OX_ERROR;
    int32_t in[3] = {mk, x, z};
    return ox_last(im, "where", 3, in, 0, NULL);
}

/* ---------------------------------------------------------------------------------------------------------------
 * CumSum along an axis of n elements: x as [outer, n, inner] times a constant n x n matrix of ones where element j
 * enters output i (j <= i; j < i exclusive; j >= i / j > i reverse), every other product an exact 0.
 * ------------------------------------------------------------------------------------------------------------- */

int ox_map_cumsum(ox_imp *im)
{
    int32_t x = ox_tensor(im, ox_in(im, 0));
    ox_val *av = known(im, 1, "axis");
    if (x < 0 || !av) return im->failed ? OX_ERROR : OX_UNSUPPORTED;
    const par_value *xv = ox_pv(im, x);
    int32_t r = xv->rank, a = ox_norm_axis(int_at(av, 0), r);
    if (a < 0 || a >= r) return ox_unsupported(im, "axis %lld of a rank-%d input", (long long)int_at(av, 0), (int)r);
    if (xv->dtype != PAR_DTYPE_F32 && xv->dtype != PAR_DTYPE_F16)
        return ox_unsupported(im, "CumSum of %s", par_dtype_name(xv->dtype));
    int64_t n = xv->dims[a], outer = numel_of(a, xv->dims), inner = numel_of(r - a - 1, xv->dims + a + 1);
    if (n > 2048) return ox_unsupported(im, "an axis of %lld elements (the matrix of ones would be too large)",
                                        (long long)n);
    int excl = ox_attr_i(im, "exclusive", 0) != 0, rev = ox_attr_i(im, "reverse", 0) != 0;
    float *w = calloc((size_t)(n * n), sizeof *w);
    if (!w) return ox_error(im, "out of memory");
    /* w[i][j]: element j enters output i; as the right factor of [.., n] rows the matrix is transposed */
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            int in = rev ? (excl ? j > i : j >= i) : (excl ? j < i : j <= i);
            if (in) w[inner == 1 ? j * n + i : i * n + j] = 1.0f;
        }
    int64_t wd[2] = {n, n};
    int32_t wk = ox_const_made(im, "cumsum_ones", PAR_DTYPE_F32, 2, wd, w);
    free(w);
    if (wk < 0) return OX_ERROR;
    int64_t d3[3] = {outer, n, inner};
    par_attr sh = par_a_ints("shape", inner == 1 ? 2 : 3, d3);
    int32_t x3 = ox_step(im, "reshape", 1, &x, 1, &sh);
    int32_t ab[2] = {inner == 1 ? x3 : wk, inner == 1 ? wk : x3};
    int32_t y = ox_step(im, "matmul", 2, ab, 0, NULL);
    par_attr back = par_a_ints("shape", r, xv->dims);
    return ox_last(im, "reshape", 1, &y, 1, &back);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Compress: the positions along the axis (or of the flattened input) whose condition is true, gathered.
 * ------------------------------------------------------------------------------------------------------------- */

int ox_map_compress(ox_imp *im)
{
    int32_t x = ox_tensor(im, ox_in(im, 0));
    ox_val *cv = known(im, 1, "condition");
    if (x < 0 || !cv) return im->failed ? OX_ERROR : OX_UNSUPPORTED;
    const par_value *xv = ox_pv(im, x);
    const par_onnx_attr *aa = ox_attr(im, "axis");
    int32_t r = xv->rank, a = aa ? ox_norm_axis(ox_attr_i(im, "axis", 0), r) : 0;
    if (a < 0 || a >= r) return ox_unsupported(im, "axis out of range");
    int64_t len = aa ? xv->dims[a] : xv->numel, cnt = 0;
    int32_t *idx = malloc((size_t)(cv->numel < len ? cv->numel : len) * sizeof *idx + sizeof *idx);
    if (!idx) return ox_error(im, "out of memory");
    for (int64_t i = 0; i < cv->numel && i < len; i++)
        if (int_at(cv, i)) idx[cnt++] = (int32_t)i;
    if (cnt == 0) {
        free(idx);
        return ox_unsupported(im, "nothing kept (parity has no zero-sized tensors)");
    }
    int32_t k = ox_const_made(im, "compress_index", PAR_DTYPE_I32, 1, &cnt, idx);
    free(idx);
    if (k < 0) return OX_ERROR;
    if (!aa) {
        int64_t n = xv->numel;
        par_attr sh = par_a_ints("shape", 1, &n);
        x = ox_step(im, "reshape", 1, &x, 1, &sh);
    }
    par_attr ax = par_a_int("axis", a);
    int32_t in[2] = {x, k};
    return ox_last(im, "gather", 2, in, 1, &ax);
}

/* ---------------------------------------------------------------------------------------------------------------
 * OneHot: values[1] where the index (negative ones counted from depth) equals the position on the new axis, else
 * values[0]: a gather from the two values at a constant index of 0s and 1s.
 * ------------------------------------------------------------------------------------------------------------- */

int ox_map_onehot(ox_imp *im)
{
    ox_val *iv = known(im, 0, "indices"), *dv = iv ? known(im, 1, "depth") : NULL;
    int32_t vals = dv ? ox_tensor(im, ox_in(im, 2)) : -1;
    if (vals < 0) return im->failed ? OX_ERROR : OX_UNSUPPORTED;
    if (ox_pv(im, vals)->numel != 2) return ox_unsupported(im, "values of %lld elements (ONNX: 2)",
                                                           (long long)ox_pv(im, vals)->numel);
    int64_t depth = int_at(dv, 0);
    int32_t r = iv->rank + 1, a = ox_norm_axis(ox_attr_i(im, "axis", -1), r);
    if (a < 0 || a >= r || r > PAR_MAX_RANK) return ox_unsupported(im, "axis or rank out of range");
    if (depth < 1 || depth > (1 << 20)) return ox_unsupported(im, "depth %lld", (long long)depth);
    int64_t dims[PAR_MAX_RANK], inner = numel_of(iv->rank - a, iv->dims + a);
    for (int32_t d = 0, s = 0; d < r; d++) dims[d] = d == a ? depth : iv->dims[s++];
    int64_t n = numel_of(r, dims);
    if (n > MAX_MAP) return ox_unsupported(im, "an output of %lld elements", (long long)n);
    int32_t *sel = malloc((size_t)n * sizeof *sel);
    if (!sel) return ox_error(im, "out of memory");
    for (int64_t o = 0; o < n; o++) { /* o = (outer, position on the new axis, inner) */
        int64_t in_ = o % inner, pos = (o / inner) % depth, outer = o / inner / depth;
        int64_t ix = int_at(iv, outer * inner + in_);
        if (ix < 0) ix += depth;
        sel[o] = ix == pos;
    }
    int32_t k = ox_const_made(im, "onehot_index", PAR_DTYPE_I32, r, dims, sel);
    free(sel);
    if (k < 0) return OX_ERROR;
    int64_t two = 2;
    par_attr sh = par_a_ints("shape", 1, &two), ax = par_a_int("axis", 0);
    int32_t in[2] = {ox_step(im, "reshape", 1, &vals, 1, &sh), k};
    return ox_last(im, "gather", 2, in, 1, &ax);
}

/* ---------------------------------------------------------------------------------------------------------------
 * ScatterElements / Scatter / ScatterND without reduction: out = concat(flat data, flat updates) gathered at
 * map[i] = i, or numel(data) + u where update u lands on i. Two updates on one element are refused (ONNX leaves
 * their order undefined); the reductions (add, mul, max, min) are not expressed.
 * ------------------------------------------------------------------------------------------------------------- */

/* The flat offset in data of update u: ScatterElements (indices of the updates' shape along axis), ScatterND
 * (index tuples of length q over data's first q axes, each a slice of `slice` elements). -1: out of range. */
static int64_t scatter_target(const par_value *xv, const ox_val *iv, int nd, int32_t axis, int64_t slice, int64_t u,
                              const int64_t *udims, int32_t ur)
{
    int64_t off = 0;
    if (nd) {
        int32_t q = (int32_t)iv->dims[iv->rank - 1];
        int64_t t = u / slice;
        for (int32_t d = 0; d < q; d++) {
            int64_t c = iv->ints[t * q + d];
            if (c < 0) c += xv->dims[d];
            if (c < 0 || c >= xv->dims[d]) return -1;
            off = off * xv->dims[d];
            off += c;
        }
        return off * slice + u % slice;
    }
    int64_t rem = u, stride = 1;
    for (int32_t d = ur - 1; d >= 0; d--) {
        int64_t c = rem % udims[d];
        rem /= udims[d];
        if (d == axis) {
            c = iv->ints[u] < 0 ? iv->ints[u] + xv->dims[d] : iv->ints[u];
            if (c < 0 || c >= xv->dims[d]) return -1;
        } else if (c >= xv->dims[d]) {
            return -1;
        }
        off += c * stride;
        stride *= xv->dims[d];
    }
    return off;
}

int ox_map_scatter(ox_imp *im)
{
    int nd = strcmp(im->node->op_type, "ScatterND") == 0;
    const char *red = ox_attr_s(im, "reduction", "none");
    if (strcmp(red, "none") != 0) return ox_unsupported(im, "reduction '%.20s'", red);
    int32_t x = ox_tensor(im, ox_in(im, 0)), up = x >= 0 ? ox_tensor(im, ox_in(im, 2)) : -1;
    ox_val *iv = up >= 0 ? known(im, 1, "indices") : NULL;
    if (!iv) return im->failed ? OX_ERROR : OX_UNSUPPORTED;
    if (!iv->ints) return ox_unsupported(im, "indices of a float type");
    const par_value *xv = ox_pv(im, x), *uv = ox_pv(im, up);
    int32_t r = xv->rank, axis = ox_norm_axis(ox_attr_i(im, "axis", 0), r);
    int64_t slice = 1;
    if (nd) {
        int64_t q = iv->rank < 1 ? 0 : iv->dims[iv->rank - 1];
        if (q < 1 || q > r) return ox_unsupported(im, "index tuples of length %lld", (long long)q);
        slice = numel_of(r - q, xv->dims + q);
        if (uv->numel != (iv->numel / q) * slice) return ox_unsupported(im, "updates' shape");
    } else if (axis < 0 || axis >= r || iv->rank != r || uv->rank != r || iv->numel != uv->numel) {
        return ox_unsupported(im, "axis, indices' or updates' shape out of range");
    }
    int64_t n = xv->numel;
    int32_t *map = malloc((size_t)n * sizeof *map);
    if (!map) return ox_error(im, "out of memory");
    for (int64_t i = 0; i < n; i++) map[i] = (int32_t)i;
    const char *bad = NULL;
    for (int64_t u = 0; !bad && u < uv->numel; u++) {
        int64_t t = scatter_target(xv, iv, nd, axis, slice, u, uv->dims, uv->rank);
        if (t < 0) bad = "an index out of range";
        else if (map[t] >= n) bad = "two updates of one element (ONNX leaves their order undefined)";
        else map[t] = (int32_t)(n + u);
    }
    if (bad) {
        free(map);
        return ox_unsupported(im, "%s", bad);
    }
    int64_t un = uv->numel;
    par_attr shx = par_a_ints("shape", 1, &n), shu = par_a_ints("shape", 1, &un), ax = par_a_int("axis", 0);
    int32_t parts[2] = {ox_step(im, "reshape", 1, &x, 1, &shx), ox_step(im, "reshape", 1, &up, 1, &shu)};
    int32_t both = ox_step(im, "concat", 2, parts, 1, &ax);
    int rc = take_flat(im, both, map, r, xv->dims);
    free(map);
    return rc;
}

/* ---------------------------------------------------------------------------------------------------------------
 * GatherND: index tuples of length q (the indices' last axis) over data's axes after the batch_dims first ones,
 * each selecting a slice of the remaining axes: a gather at constant flat offsets.
 * ------------------------------------------------------------------------------------------------------------- */

int ox_map_gather_nd(ox_imp *im)
{
    int32_t x = ox_tensor(im, ox_in(im, 0));
    ox_val *iv = x >= 0 ? known(im, 1, "indices") : NULL;
    if (!iv) return im->failed ? OX_ERROR : OX_UNSUPPORTED;
    const par_value *xv = ox_pv(im, x);
    int64_t bl = ox_attr_i(im, "batch_dims", 0), ql = iv->rank < 1 ? 0 : iv->dims[iv->rank - 1];
    if (bl < 0 || bl >= iv->rank || ql < 1 || bl + ql > xv->rank)
        return ox_unsupported(im, "batch_dims or index length");
    int32_t r = xv->rank, b = (int32_t)bl, q = (int32_t)ql;
    for (int32_t d = 0; d < b; d++)
        if (iv->dims[d] != xv->dims[d]) return ox_unsupported(im, "batch dimensions differ");
    int64_t dims[PAR_MAX_RANK];
    int32_t orank = iv->rank - 1 + r - b - q;
    if (orank < 1 || orank > PAR_MAX_RANK) return ox_unsupported(im, "output of rank %d", (int)orank);
    for (int32_t d = 0; d < iv->rank - 1; d++) dims[d] = iv->dims[d];
    for (int32_t d = b + q; d < r; d++) dims[iv->rank - 1 + d - b - q] = xv->dims[d];
    int64_t slice = numel_of(r - b - q, xv->dims + b + q), tuples = iv->numel / q;
    int64_t per_batch = tuples / numel_of(b, iv->dims), bstride = numel_of(r - b, xv->dims + b);
    if (tuples * slice > MAX_MAP) return ox_unsupported(im, "an output of %lld elements", (long long)(tuples * slice));
    int32_t *off = malloc((size_t)(tuples * slice) * sizeof *off);
    if (!off) return ox_error(im, "out of memory");
    for (int64_t t = 0; t < tuples; t++) {
        int64_t o = 0;
        for (int32_t d = 0; d < q; d++) {
            int64_t c = int_at(iv, t * q + d), len = xv->dims[b + d];
            if (c < 0) c += len;
            if (c < 0 || c >= len) {
                free(off);
                return ox_unsupported(im, "index %lld out of range", (long long)int_at(iv, t * q + d));
            }
            o = o * len + c;
        }
        for (int64_t s = 0; s < slice; s++) off[t * slice + s] = (int32_t)((t / per_batch) * bstride + o * slice + s);
    }
    int rc = take_flat(im, x, off, orank, dims);
    free(off);
    return rc;
}
