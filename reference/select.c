/*
 * select.c - reference kernels of the selection ops where, masked_fill, gather and embedding (docs/ops.md,
 * "Selection"), following PyTorch's torch.where, Tensor.masked_fill, torch.index_select generalised to index tensors
 * of any rank (ONNX / NNAPI gather) and F.embedding.
 *
 * Budgets (docs/budgets/elementwise.md, "Selection"): these ops choose elements and compute nothing, so a correct
 * backend is bit-exact and each output element carries the selected input element's value and budget unchanged.
 * The one exception is masked_fill's fill value, a constant the backend holds in its own formats (docs/oracle.md,
 * rule 2): a value that the arithmetic or storage format cannot represent exactly (0.1, not 0, 1 or -inf) is allowed
 * one rounding to each format that cannot, as pad's fill value.
 *
 * Conditions and masks are bool tensors (v is 0 or 1); indices are i32 (v is the integer). An index outside [0, n)
 * is an error naming the element, as PyTorch raises one: a case with such an index is malformed, not a backend
 * failure. The kernels must not allocate nor read anything but their inputs.
 */
#include "reference.h"
#include "elem_util.h"
#include "kernel_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/graph.h"
#include "core/shape.h"

/* Strides of t read through an index of the output's rank under numpy broadcasting (0 on a broadcast dimension). */
static void bcast_strides(const par_rt *t, int32_t out_rank, const int64_t *out_dims, int64_t *st)
{
    int64_t s = 1;
    (void)out_dims;
    for (int32_t d = out_rank - 1; d >= 0; d--) {
        int32_t k = d - (out_rank - t->rank);
        int64_t size = k >= 0 ? t->dims[k] : 1;
        st[d] = size == 1 ? 0 : s;
        s *= size;
    }
}

/* Advance a multi-index over dims, moving k offsets along their strides. */
static void step_index(int32_t rank, const int64_t *dims, int64_t *idx, int32_t k, int64_t *const *off,
                       int64_t (*const st)[PAR_MAX_RANK])
{
    for (int32_t d = rank - 1; d >= 0; d--) {
        idx[d]++;
        for (int32_t j = 0; j < k; j++) *off[j] += st[j][d];
        if (idx[d] < dims[d]) return;
        for (int32_t j = 0; j < k; j++) *off[j] -= st[j][d] * idx[d];
        idx[d] = 0;
    }
}

/* The selected element (value *v, budget *e) when the decision behind it is ambiguous (a bool element with a
 * nonzero budget: its reference value or the other may be correct), the other candidate being (w, ew): a backend
 * may return either, so the budget covers the other's distance plus its budget, max(e, |w - v| + ew). When the two
 * differ by an infinity or a NaN (an infinite or NaN branch that a correct backend may pick), the element is
 * "anything" (docs/oracle.md, "NaN and Inf policy"). */
static void decided(double *v, double *e, double w, double ew)
{
    if (w == *v) { /* equal candidates, infinities of one sign included: the larger budget */
        *e = fmax(*e, ew);
        return;
    }
    double d = fabs(w - *v) + ew;
    if (!isfinite(d) || isnan(*v)) {
        *v = NAN;
        *e = INFINITY;
        return;
    }
    *e = fmax(*e, d);
}

/* ------------------------------------------------------------------------------------------------------------- */
/* where(cond, a, b) = cond ? a : b, all three broadcast */

par_status par_ref_where(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    (void)c;
    if (!in[0] || !in[1] || !in[2] || !out[0])
        return par_msgf(msg, PAR_ERROR, "where: inputs 0 (cond), 1 (a) and 2 (b) are required");
    par_rt *y = out[0];
    int64_t st[3][PAR_MAX_RANK], o[3] = {0, 0, 0}, idx[PAR_MAX_RANK] = {0};
    for (int32_t i = 0; i < 3; i++) {
        if (in[i]->rank > y->rank) return par_msgf(msg, PAR_ERROR, "where: output shape does not match");
        bcast_strides(in[i], y->rank, y->dims, st[i]);
    }
    int64_t *offs[3] = {&o[0], &o[1], &o[2]};
    for (int64_t k = 0; k < y->numel; k++) {
        const int pick_a = in[0]->v[o[0]] != 0;
        const double va = in[1]->v[o[1]], vb = in[2]->v[o[2]], ea = in[1]->e[o[1]], eb = in[2]->e[o[2]];
        y->v[k] = pick_a ? va : vb;
        y->e[k] = pick_a ? ea : eb;
        /* an ambiguous condition (a decision op's budget, docs/oracle.md "Decision ops"): either branch is correct */
        if (in[0]->e[o[0]] > 0) decided(&y->v[k], &y->e[k], pick_a ? vb : va, pick_a ? eb : ea);
        step_index(y->rank, y->dims, idx, 3, offs, st);
    }
    return PAR_OK;
}

/* ------------------------------------------------------------------------------------------------------------- */
/* masked_fill(x, mask; value) = mask ? value : x, the mask broadcast to x's shape */

par_status par_ref_masked_fill(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    if (!in[0] || !in[1] || !out[0]) return par_msgf(msg, PAR_ERROR, "masked_fill: inputs 0 (x) and 1 (mask) are required");
    const par_rt *x = in[0], *m = in[1];
    par_rt *y = out[0];
    if (y->numel != x->numel || m->rank > x->rank)
        return par_msgf(msg, PAR_ERROR, "masked_fill: output shape does not match");
    double value = par_attr_float(c->n, "value", 0);
    /* the fill as the backend holds it (docs/oracle.md, rule 2); infinities are exact in every float format */
    double fill_e = isinf(value) ? 0 : const_rounding(value, &c->prec);
    int64_t st[1][PAR_MAX_RANK], o = 0, idx[PAR_MAX_RANK] = {0};
    int64_t *offs[1] = {&o};
    bcast_strides(m, x->rank, x->dims, st[0]);
    for (int64_t k = 0; k < x->numel; k++) {
        int fill = m->v[o] != 0;
        y->v[k] = fill ? value : x->v[k];
        y->e[k] = fill ? fill_e : x->e[k];
        if (m->e[o] > 0) decided(&y->v[k], &y->e[k], fill ? x->v[k] : value, fill ? x->e[k] : fill_e);
        step_index(x->rank, x->dims, idx, 1, offs, st);
    }
    return PAR_OK;
}

/* ------------------------------------------------------------------------------------------------------------- */
/* gather and embedding: rows selected by an i32 index tensor */

/* The index element k of ix as an integer in [0, n), or an error naming the element by its coordinates. */
static par_status read_index(const char *op, const char *what, const par_rt *ix, int64_t k, int64_t n, int64_t *out,
                             par_msg *msg)
{
    double v = ix->v[k];
    if (v >= 0 && v < (double)n && v == floor(v)) {
        *out = (int64_t)v;
        return PAR_OK;
    }
    char at[128];
    size_t len = 0;
    int64_t rem = k, co[PAR_MAX_RANK];
    for (int32_t d = ix->rank - 1; d >= 0; d--) {
        co[d] = rem % ix->dims[d];
        rem /= ix->dims[d];
    }
    len += (size_t)snprintf(at + len, sizeof at - len, "[");
    for (int32_t d = 0; d < ix->rank && len < sizeof at; d++)
        len += (size_t)snprintf(at + len, sizeof at - len, d ? ",%lld" : "%lld", (long long)co[d]);
    if (len < sizeof at) snprintf(at + len, sizeof at - len, "]");
    return par_msgf(msg, PAR_ERROR, "%s: %s element %s is %.0f, outside [0, %lld)", op, what, at, v, (long long)n);
}

par_status par_ref_gather(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    if (!in[0] || !in[1] || !out[0]) return par_msgf(msg, PAR_ERROR, "gather: inputs 0 (x) and 1 (indices) are required");
    const par_rt *x = in[0], *ix = in[1];
    par_rt *y = out[0];
    par_gather_geom_t q;
    par_status st = par_gather_geom(c->n, x->rank, x->dims, ix->rank, ix->dims, &q, msg);
    if (st != PAR_OK) return st;
    if (y->numel != q.outer * q.count * q.inner) return par_msgf(msg, PAR_ERROR, "gather: output shape does not match");
    for (int64_t j = 0; j < q.count; j++) {
        int64_t r;
        st = read_index("gather", "input 1 (indices)", ix, j, q.n, &r, msg);
        if (st != PAR_OK) return st;
        for (int64_t o = 0; o < q.outer; o++) {
            size_t bytes = sizeof(double) * (size_t)q.inner;
            int64_t src = (o * q.n + r) * q.inner, dst = (o * q.count + j) * q.inner;
            memcpy(y->v + dst, x->v + src, bytes);
            memcpy(y->e + dst, x->e + src, bytes);
        }
    }
    return PAR_OK;
}

par_status par_ref_embedding(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    (void)c;
    if (!in[0] || !in[1] || !out[0])
        return par_msgf(msg, PAR_ERROR, "embedding: inputs 0 (indices) and 1 (weight) are required");
    const par_rt *ix = in[0], *w = in[1];
    par_rt *y = out[0];
    if (w->rank != 2 || y->numel != ix->numel * w->dims[1])
        return par_msgf(msg, PAR_ERROR, "embedding: output shape does not match");
    const int64_t V = w->dims[0], D = w->dims[1];
    for (int64_t j = 0; j < ix->numel; j++) {
        int64_t r;
        par_status st = read_index("embedding", "input 0 (indices)", ix, j, V, &r, msg);
        if (st != PAR_OK) return st;
        memcpy(y->v + j * D, w->v + r * D, sizeof(double) * (size_t)D);
        memcpy(y->e + j * D, w->e + r * D, sizeof(double) * (size_t)D);
    }
    return PAR_OK;
}

/* ------------------------------------------------------------------------------------------------------------- */
/* Decision ops (docs/oracle.md, "Decision ops"): eq, gt, lt, ge, le on two float tensors, and the logic ops on bool
 * tensors, all broadcast. The output is bool: v is 0 or 1, e is 0 where the answer is determined and 1 where a
 * correct backend may answer either way (budget 1 on a 0/1 value admits both). A comparison is ambiguous where
 * |a - b| <= e_a + e_b with e_a + e_b > 0 (each input may be anywhere within its budget of its reference value, so
 * the computed values may be ordered either way or be equal), and where an input's budget is infinite. NaN compares
 * false (IEEE 754, numpy): an exact NaN makes the answer exact. A logic op is ambiguous where its result changes
 * over the values its ambiguous inputs may take (and(x, 0) is 0 whatever x is). The scale of a decision is its
 * budget: a flipped decision is no mean-zero rounding. */

enum { CMP_EQ, CMP_GT, CMP_LT, CMP_GE, CMP_LE };

static int cmp_apply(int op, double a, double b)
{
    switch (op) {
    case CMP_EQ: return a == b;
    case CMP_GT: return a > b;
    case CMP_LT: return a < b;
    case CMP_GE: return a >= b;
    default: return a <= b;
    }
}

static par_status compare(int op, const char *name, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    if (!in[0] || !in[1] || !out[0]) return par_msgf(msg, PAR_ERROR, "%s: inputs 0 (a) and 1 (b) are required", name);
    par_rt *y = out[0];
    int64_t st[2][PAR_MAX_RANK], o[2] = {0, 0}, idx[PAR_MAX_RANK] = {0};
    for (int32_t i = 0; i < 2; i++) {
        if (in[i]->rank > y->rank) return par_msgf(msg, PAR_ERROR, "%s: output shape does not match", name);
        bcast_strides(in[i], y->rank, y->dims, st[i]);
    }
    int64_t *offs[2] = {&o[0], &o[1]};
    for (int64_t k = 0; k < y->numel; k++) {
        const double a = in[0]->v[o[0]], b = in[1]->v[o[1]], eab = in[0]->e[o[0]] + in[1]->e[o[1]];
        y->v[k] = cmp_apply(op, a, b);
        int amb;
        if (!(eab < INFINITY)) amb = 1;                 /* an unbounded or "anything" input */
        else if (isnan(a) || isnan(b)) amb = 0;         /* an exact NaN: false */
        else amb = eab > 0 && fabs(a - b) <= eab;       /* equal infinities: |a - b| is NaN, exact */
        y->e[k] = amb ? 1.0 : 0.0;
        if (y->s) y->s[k] = y->e[k];
        step_index(y->rank, y->dims, idx, 2, offs, st);
    }
    return PAR_OK;
}

#define PAR_CMP_KERNEL(fn, op, name)                                                                                   \
    par_status fn(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)                     \
    {                                                                                                                  \
        (void)c;                                                                                                       \
        return compare(op, name, in, out, msg);                                                                        \
    }
PAR_CMP_KERNEL(par_ref_eq, CMP_EQ, "eq")
PAR_CMP_KERNEL(par_ref_gt, CMP_GT, "gt")
PAR_CMP_KERNEL(par_ref_lt, CMP_LT, "lt")
PAR_CMP_KERNEL(par_ref_ge, CMP_GE, "ge")
PAR_CMP_KERNEL(par_ref_le, CMP_LE, "le")

enum { LOG_AND, LOG_OR, LOG_XOR, LOG_NOT };

static int log_apply(int op, int a, int b)
{
    switch (op) {
    case LOG_AND: return a && b;
    case LOG_OR: return a || b;
    case LOG_XOR: return a != b;
    default: return !a;
    }
}

static par_status logical(int op, const char *name, int32_t n_in, const par_rt *const *in, par_rt *const *out,
                          par_msg *msg)
{
    for (int32_t i = 0; i < n_in; i++)
        if (!in[i]) return par_msgf(msg, PAR_ERROR, "%s: input %d is required", name, (int)i);
    if (!out[0]) return par_msgf(msg, PAR_ERROR, "%s: output 0 is required", name);
    par_rt *y = out[0];
    int64_t st[2][PAR_MAX_RANK], o[2] = {0, 0}, idx[PAR_MAX_RANK] = {0};
    for (int32_t i = 0; i < n_in; i++) {
        if (in[i]->rank > y->rank) return par_msgf(msg, PAR_ERROR, "%s: output shape does not match", name);
        bcast_strides(in[i], y->rank, y->dims, st[i]);
    }
    int64_t *offs[2] = {&o[0], &o[1]};
    for (int64_t k = 0; k < y->numel; k++) {
        int va = in[0]->v[o[0]] != 0, vb = n_in > 1 ? in[1]->v[o[1]] != 0 : 0;
        /* the values each input may take: its own, or both where it is ambiguous */
        int a_lo = va, a_hi = va, b_lo = vb, b_hi = vb;
        if (in[0]->e[o[0]] > 0) a_lo = 0, a_hi = 1;
        if (n_in > 1 && in[1]->e[o[1]] > 0) b_lo = 0, b_hi = 1;
        int r = log_apply(op, va, vb), amb = 0;
        for (int x = a_lo; x <= a_hi; x++)
            for (int z = b_lo; z <= b_hi; z++) amb |= log_apply(op, x, z) != r;
        y->v[k] = r;
        y->e[k] = amb ? 1.0 : 0.0;
        if (y->s) y->s[k] = y->e[k];
        step_index(y->rank, y->dims, idx, n_in, offs, st);
    }
    return PAR_OK;
}

#define PAR_LOG_KERNEL(fn, op, n_in, name)                                                                             \
    par_status fn(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)                     \
    {                                                                                                                  \
        (void)c;                                                                                                       \
        return logical(op, name, n_in, in, out, msg);                                                                  \
    }
PAR_LOG_KERNEL(par_ref_logical_and, LOG_AND, 2, "logical_and")
PAR_LOG_KERNEL(par_ref_logical_or, LOG_OR, 2, "logical_or")
PAR_LOG_KERNEL(par_ref_logical_xor, LOG_XOR, 2, "logical_xor")
PAR_LOG_KERNEL(par_ref_logical_not, LOG_NOT, 1, "logical_not")

/* ------------------------------------------------------------------------------------------------------------- */
/* argmax, argmin (docs/ops.md, "Reductions"; docs/oracle.md, "Decision ops"): along one axis, the index of the
 * largest (smallest) element, the first of equal ones (the last with select_last, ONNX's select_last_index); a NaN
 * counts as larger (smaller) than everything, as torch.argmax and numpy do, so the first NaN wins. The output is i32:
 * v is the index. Its budget says which other indices a correct backend may return: the elements whose held values
 * may order them above the chosen one, those c with x_c + e_c >= x_v - e_v and e_c + e_v > 0 (as a comparison's
 * ambiguity; exact equal values are decided by the tie rule, never ambiguous), and every index when an element of
 * the slice is unbounded or "anything". The budget is the largest |c - v| over them: an interval of indices, which
 * also admits an index between two candidates that is none (docs/oracle.md says so). Its scale is its budget. */
static par_status arg_kernel(const par_ref_ctx *c, double sg, const char *name, const par_rt *const *in,
                             par_rt *const *out, par_msg *msg)
{
    par_status st;
    if (!in[0] || !out[0]) return par_msgf(msg, PAR_ERROR, "%s: input 0 (x) is required", name);
    if ((st = check_float(in[0], "input 0 (x)", msg)) != PAR_OK) return st;
    const par_rt *x = in[0];
    par_rt *y = out[0];
    int32_t axis, yr;
    int64_t yd[PAR_MAX_RANK];
    if ((st = par_arg_shape(c->n, x->rank, x->dims, &axis, &yr, yd, msg)) != PAR_OK) return st;
    if (!par_shape_equal(y->rank, y->dims, yr, yd))
        return par_msgf(msg, PAR_ERROR, "%s: output 0: allocated shape does not match the inferred", name);
    const int last = par_attr_int(c->n, "select_last", 0) != 0;
    int64_t n = x->dims[axis], inner = 1;
    for (int32_t d = axis + 1; d < x->rank; d++) inner *= x->dims[d];
    if (n < 1) return par_msgf(msg, PAR_ERROR, "%s: the axis is empty (no index to return)", name);
    for (int64_t o = 0; o < y->numel; o++) {
        const int64_t base = (o / inner) * n * inner + o % inner;
        int64_t v = -1;
        int unbounded = 0;
        for (int64_t k = 0; k < n; k++) {
            const double a = sg * x->v[base + k * inner];
            unbounded |= !(x->e[base + k * inner] < INFINITY);
            if (v < 0) { v = k; continue; }
            const double b = sg * x->v[base + v * inner];
            if (isnan(b) && !(isnan(a) && last)) continue;         /* a NaN holds its place (first, or last) */
            if (isnan(a) || a > b || (a == b && last)) v = k;
        }
        double e = 0;
        const double xv = sg * x->v[base + v * inner], ev = x->e[base + v * inner];
        for (int64_t k = 0; k < n && !unbounded && !isnan(xv); k++) {
            const double a = sg * x->v[base + k * inner], ea = x->e[base + k * inner];
            if (k != v && ea + ev > 0 && a + ea >= xv - ev) e = fmax(e, (double)(k > v ? k - v : v - k));
        }
        y->v[o] = (double)v;
        y->e[o] = unbounded ? (double)(n - 1) : e;
        if (y->s) y->s[o] = y->e[o];
    }
    return PAR_OK;
}

par_status par_ref_argmax(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    return arg_kernel(c, 1.0, "argmax", in, out, msg);
}

par_status par_ref_argmin(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    return arg_kernel(c, -1.0, "argmin", in, out, msg);
}
