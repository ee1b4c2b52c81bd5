/*
 * onnx_fold.c - shape arithmetic folded at import: a node whose every input is known (initializers, Constant nodes,
 * shapes, and what folding made of them) and whose op computes shapes (Shape, Size, Gather, Concat, Unsqueeze,
 * Squeeze, Reshape, Flatten, Cast, Identity, Constant, ConstantOfShape, Range, Slice of a vector, integer
 * Add / Sub / Mul / Div / Equal / Less / Greater / Min / Max) becomes a constant. Integers are folded in int64 and
 * floats in float, as ONNX computes them.
 *
 * Must not: emit parity nodes (a folded value is a constant until a node takes it as a tensor).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "formats/onnx_int.h"

#define MAXL 64

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

/* A Constant node: its tensor, or its value_float(s) / value_int(s). */
static int fold_constant(ox_imp *im)
{
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

/* Shape (start, end) and Size of any input: its dims are known. */
static int fold_shape(ox_imp *im, ox_val *a, const char *op)
{
    int64_t d[MAXL];
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

/* Identity, Cast, Reshape, Squeeze, Unsqueeze, Flatten of a constant: the same elements, another shape or type. */
static int fold_view(ox_imp *im, ox_val *a, ox_val *b, const char *op)
{
    int64_t d[MAXL];
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
        int rc = ox_reshape_dims(im, a->dims, a->rank, a->numel, sh, n, d);
        if (rc != OX_OK) return rc;
        r = n;
    } else if (op[0] == 'F') {
        int32_t axis = ox_norm_axis(ox_attr_i(im, "axis", 1), a->rank);
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
                int32_t x = ox_norm_axis(ax[i], orank);
                if (x < 0 || x >= orank) return ox_unsupported(im, "bad axes");
                flag[x] = 1;
            }
            for (int32_t i = 0, k = 0; i < orank; i++) d[r++] = flag[i] ? 1 : a->dims[k++];
        } else {
            for (int32_t i = 0; i < na; i++) {
                int32_t x = ox_norm_axis(ax[i], a->rank);
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

/* Gather of a constant along an axis with constant indices. */
static int fold_gather(ox_imp *im, ox_val *a, ox_val *b)
{
    int64_t d[MAXL];
    int32_t axis = ox_norm_axis(ox_attr_i(im, "axis", 0), a->rank);
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

/* Concat of constants. */
static int fold_concat(ox_imp *im, ox_val *a)
{
    int64_t d[MAXL];
    int32_t n = ox_n_in(im);
    int32_t axis = ox_norm_axis(ox_attr_i(im, "axis", 0), a->rank);
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

/* ConstantOfShape: a constant shape filled with the value attribute (0.0 by default). */
static int fold_constant_of_shape(ox_imp *im, ox_val *a)
{
    int64_t d[MAXL];
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

/* Range with constant start, limit and delta. */
static int fold_range(ox_imp *im, ox_val *a, ox_val *b)
{
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

/* A slice of a shape vector: starts, ends (and axes 0, steps) constant. */
static int fold_slice(ox_imp *im, ox_val *a, ox_val *b)
{
    int64_t st, en, sp = 1, ax = 0;
    if (ox_const_ints(im, b, &st, 1) != 1 || ox_const_ints(im, ox_in(im, 2), &en, 1) != 1)
        return ox_unsupported(im, "folding a Slice of several axes");
    if (ox_in(im, 3) && (ox_const_ints(im, ox_in(im, 3), &ax, 1) != 1 || (ax != 0 && ax != -1)))
        return ox_unsupported(im, "folding a Slice on another axis");
    if (ox_in(im, 4) && (ox_const_ints(im, ox_in(im, 4), &sp, 1) != 1 || sp < 1))
        return ox_unsupported(im, "folding a Slice with a step below 1");
    int64_t size = a->numel;
    if (st < 0) st += size;
    if (en < 0) en += size;
    st = st < 0 ? 0 : st > size ? size : st;
    en = en < 0 ? 0 : en > size ? size : en;
    int64_t n = en > st ? (en - st + sp - 1) / sp : 0;
    int64_t *q = a->ints ? malloc(sizeof(int64_t) * (size_t)(n ? n : 1)) : NULL;
    float *f = a->floats ? malloc(sizeof(float) * (size_t)(n ? n : 1)) : NULL;
    if (!q && !f) return ox_error(im, "out of memory");
    for (int64_t i = 0; i < n; i++) {
        if (q) q[i] = a->ints[st + i * sp];
        else f[i] = a->floats[st + i * sp];
    }
    return ox_fold(im, 0, a->dtype, 1, &n, q, f);
}

/* Integer elementwise arithmetic of shapes, broadcast. */
static int fold_binary(ox_imp *im, ox_val *a, ox_val *b, const char *op)
{
    int64_t d[MAXL];
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

int ox_fold_node(ox_imp *im)
{
    const char *op = im->node->op_type;
    ox_val *a = ox_in(im, 0), *b = ox_in(im, 1);
    if (strcmp(op, "Constant") == 0) return fold_constant(im);
    if (!a) return ox_unsupported(im, "no input");
    if (strcmp(op, "Shape") == 0 || strcmp(op, "Size") == 0) return fold_shape(im, a, op);
    if (!a->is_const) return ox_unsupported(im, "not constant");
    if (strcmp(op, "Identity") == 0 || strcmp(op, "Cast") == 0 || strcmp(op, "Reshape") == 0 ||
        strcmp(op, "Squeeze") == 0 || strcmp(op, "Unsqueeze") == 0 || strcmp(op, "Flatten") == 0)
        return fold_view(im, a, b, op);
    if (strcmp(op, "Gather") == 0 && b && b->is_const && (a->ints || a->floats)) return fold_gather(im, a, b);
    if (strcmp(op, "Concat") == 0) return fold_concat(im, a);
    if (strcmp(op, "ConstantOfShape") == 0) return fold_constant_of_shape(im, a);
    if (strcmp(op, "Range") == 0) return fold_range(im, a, b);
    if (strcmp(op, "Slice") == 0 && a->rank == 1 && im->opset >= 10) return fold_slice(im, a, b);
    /* integer elementwise arithmetic of shapes: Add, Sub, Mul, Div, Equal, Less, Greater, Where, Expand, Min, Max */
    int bin = strcmp(op, "Add") == 0 || strcmp(op, "Sub") == 0 || strcmp(op, "Mul") == 0 || strcmp(op, "Div") == 0 ||
              strcmp(op, "Equal") == 0 || strcmp(op, "Less") == 0 || strcmp(op, "Greater") == 0 ||
              strcmp(op, "Min") == 0 || strcmp(op, "Max") == 0;
    if (bin && b && b->is_const && a->ints && b->ints && ox_n_in(im) == 2) return fold_binary(im, a, b, op);
    return ox_unsupported(im, "folding %.40s on these inputs", op);
}
