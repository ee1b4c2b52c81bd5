/*
 * elementwise.c - float64 reference kernels of add, sub, mul, div, minimum, maximum and pow, and of sqrt and rsqrt,
 * with the error budget of every output element (docs/budgets/elementwise.md, docs/budgets/norm-reduce.md).
 *
 * The kernels are one plain loop over the output, mapping each output index to its two broadcast input elements.
 * They see float tensors only (the interpreter dequantizes quantized operands around them); they must not allocate
 * memory that outlives the call nor read anything but their inputs.
 *
 * Budgets (u: arithmetic unit roundoff, u_s: storage unit roundoff, ea, eb: the inputs' budgets; a backend holds
 * operands a' = a + da, b' = b + db with |da| <= ea, |db| <= eb):
 *   add/sub  p = ea + eb                               (exact propagation of the perturbation)
 *   mul      p = |b| ea + |a| eb + ea eb               (a'b' - ab, exactly)
 *   div      p = ea / (|b| - eb) + |a| eb / (|b| (|b| - eb))   (a'/b' - a/b over the whole interval; +inf when
 *            the interval of b contains 0)
 *   own      u (|y| + p)                               (one correctly rounded IEEE operation on the held operands,
 *                                                       whose exact result is within p of y)
 *   storage  u_s (|y| + p + own)
 * minimum and maximum select (exact, no own rounding nor storage) and pow is an elementary function: pow_elem.
 */
#include "reference.h"
#include "elem_util.h"

#include "core/graph.h"
#include "core/tensor.h"
#include "core/ops.h"

#include <math.h>
#include <string.h>

typedef enum bin_op { BIN_ADD, BIN_SUB, BIN_MUL, BIN_DIV, BIN_MIN, BIN_MAX, BIN_POW } bin_op;

static const char *const bin_names[] = {"add", "sub", "mul", "div", "minimum", "maximum", "pow"};

/* Strides of input t laid against an output of rank `rank`: 0 along broadcast (size-1 or missing) dimensions. */
static par_status broadcast_strides(const par_rt *t, const par_rt *y, int64_t *st, const char *what, par_msg *msg)
{
    int64_t s = 1;
    for (int32_t k = 0; k < y->rank; k++) st[k] = 0;
    if (t->rank > y->rank) return par_msgf(msg, PAR_ERROR, "%s: rank %d exceeds the output's %d", what, (int)t->rank,
                                           (int)y->rank);
    for (int32_t i = t->rank - 1; i >= 0; i--) {
        int32_t k = y->rank - t->rank + i;
        if (t->dims[i] != 1 && t->dims[i] != y->dims[k])
            return par_msgf(msg, PAR_ERROR, "%s: dimension %d is %lld, does not broadcast to the output's %lld", what,
                            (int)i, (long long)t->dims[i], (long long)y->dims[k]);
        st[k] = t->dims[i] == 1 ? 0 : s;
        s *= t->dims[i];
    }
    return PAR_OK;
}

/* minimum / maximum (torch.minimum / torch.maximum, ONNX Min / Max of two inputs): NaN if either operand is NaN,
 * else the smaller / larger one; the sign of a zero result is not pinned (min(-0, +0) may be either). Both are
 * nondecreasing in each operand, so a backend holding a' in [a - ea, a + ea] and b' in [b - eb, b + eb] selects a
 * value in [f(a - ea, b - eb), f(a + ea, b + eb)]: the budget is the larger distance from y to those two (at most
 * max(ea, eb)); exact selection, no rounding. */
static void minmax_elem(int is_max, double a, double ea, double b, double eb, double *y, double *e)
{
    if (isnan(a) || isnan(b)) {
        *y = NAN;
        *e = INFINITY; /* the interpreter's NaN rule */
        return;
    }
    double v = is_max ? fmax(a, b) : fmin(a, b);
    *y = v;
    if (ea == 0 && eb == 0) {
        *e = 0;
        return;
    }
    double lo = is_max ? fmax(a - ea, b - eb) : fmin(a - ea, b - eb);
    double hi = is_max ? fmax(a + ea, b + eb) : fmin(a + ea, b + eb);
    double d = fmax(v - lo, hi - v);
    *e = d == d ? d : INFINITY;
}

/* Whether b is an odd integer (pow's sign rules). */
static int odd_integer(double b) { return b == nearbyint(b) && fmod(fabs(b), 2.0) == 1.0; }

/* pow(a, b), C99 Annex F / IEEE 754 pow, which torch.pow and ONNX Pow follow: pow(a, +-0) = 1 and pow(1, b) = 1 for
 * every a and b, NaN included; a negative finite base with a non-integer exponent is NaN; pow(+-0, b < 0) = +inf,
 * or +-inf (the zero's sign) for an odd integer b; the other infinities as Annex F. Budget, from the box of held
 * operands a' in [a - ea, a + ea], b' in [b - eb, b + eb]:
 *   a - ea > 0: y' = exp(b' log a'), and b' log a' is bilinear in (b', log a'), so its extremes over the box are at
 *     the corners: z_lo, z_hi; P = max(y - exp(z_lo), exp(z_hi) - y), exact. The same on |a| for a box wholly below 0
 *     with an exact integer exponent (the sign (-1)^b is fixed).
 *   an exact integer b >= 0 and a box of a through 0: |y'| <= max(|a - ea|, |a + ea|)^b, P = that + |y|.
 *   any other box holding a' <= 0 (a negative base with a budgeted or non-integer exponent: NaN or a number; a zero
 *     base with a negative exponent: an infinity), or a non-finite operand with a budget: "anything".
 *   own: fn (|y| + P): a correct powf is within a few ulps (glibc's under 1 ulp); exp(b log a) in f32 is not, its
 *     error grows as |b log a| u; plus the underflow allowance (a tiny result built from exponent bits).
 * Returns 1 when the element is "anything". */
static int pow_elem(double a, double ea, double b, double eb, const par_prec *pr, double *yo, double *eo)
{
    const double fn = pr->fn_ulps * pr->u;
    double v = pow(a, b);
    *yo = v;
    if (ea == 0 && eb == 0) {
        /* exact operands: the special values are required, except an infinity whose sign is a zero's */
        if (a == 0 && b < 0 && odd_integer(b)) {
            *eo = INFINITY;
            return 1;
        }
        *eo = isfinite(v) ? finish(v, 0, fn * fabs(v) + underflow_abs(pr), pr) : INFINITY;
        return 0;
    }
    if (isfinite(a) && a + ea < 0 && eb == 0 && b != nearbyint(b)) { /* a negative base, a fractional power: NaN */
        *eo = INFINITY;
        return 0;
    }
    if (!isfinite(a) || !isfinite(b) || isnan(v)) {
        *eo = INFINITY;
        return !isnan(a) && !isnan(b); /* NaN operands stay NaN (the interpreter's taint rule) */
    }
    double p;
    const int int_b = eb == 0 && b == nearbyint(b);
    if (a - ea > 0 || (a + ea < 0 && int_b)) {
        double m = fabs(a), l_lo = log(m - ea), l_hi = log(m + ea);
        double c[4] = {(b - eb) * l_lo, (b - eb) * l_hi, (b + eb) * l_lo, (b + eb) * l_hi};
        double z_lo = fmin(fmin(c[0], c[1]), fmin(c[2], c[3])), z_hi = fmax(fmax(c[0], c[1]), fmax(c[2], c[3]));
        double y = fabs(v);
        p = fmax(y - exp(z_lo), exp(z_hi) - y);
    } else if (int_b && b >= 0) {
        p = pow(fmax(fabs(a - ea), fabs(a + ea)), b) + fabs(v);
    } else {
        *eo = INFINITY;
        return 1;
    }
    *eo = finish(v, p, fn * (fabs(v) + p) + underflow_abs(pr), pr);
    return 0;
}

/* The roots of value v's error through elementwise ops (docs/budgets/elementwise.md, "Two operands"): v itself where
 * its producer is not elementwise (a convolution, a pool, a normalization) or it is a leaf, else the roots of the
 * producer's non-constant operands (an op whose output element i depends on input element i alone, by the op table's
 * shape function, or on a row of it: softmax, counted too). Two operands whose roots meet carry errors of one
 * source element for element (x and clamp(x + 3) in a decomposed hardswish): their errors add. At most max roots are
 * collected; *over is set when there were more (the caller then treats the operands as correlated). */
static void error_roots(const par_graph_desc *g, int32_t v, int depth, int32_t *roots, int *n, int max, int *over)
{
    int32_t p = v >= 0 ? g->values[v].producer : -1;
    const par_op_info *info = p >= 0 ? par_op_of(&g->nodes[p]) : NULL;
    if (depth < 64 && info && (info->infer == par_infer_same || info->infer == par_infer_broadcast)) {
        const par_node *nd = &g->nodes[p];
        int any = 0;
        for (int32_t i = 0; i < nd->n_inputs; i++)
            if (nd->inputs[i] >= 0 && g->values[nd->inputs[i]].kind != PAR_VALUE_CONST) {
                error_roots(g, nd->inputs[i], depth + 1, roots, n, max, over);
                any = 1;
            }
        if (any) return;
    }
    for (int k = 0; k < *n; k++)
        if (roots[k] == v) return;
    if (*n < max) roots[(*n)++] = v;
    else *over = 1;
}

/* Whether the two operands of node c->n have errors from disjoint roots (error_roots), so that rule 5 takes them as
 * independent sources: a residual's branch and skip, a gate and its signal. The same tensor on both sides, or two
 * elementwise functions of one tensor, are not. */
static int independent_operands(const par_ref_ctx *c)
{
    if (!c->g || !c->n || c->n->n_inputs < 2) return 0;
    enum { MAXR = 32 };
    int32_t ra[MAXR], rb[MAXR];
    int na = 0, nb = 0, over = 0;
    error_roots(c->g, c->n->inputs[0], 0, ra, &na, MAXR, &over);
    error_roots(c->g, c->n->inputs[1], 0, rb, &nb, MAXR, &over);
    if (over) return 0;
    for (int i = 0; i < na; i++)
        for (int k = 0; k < nb; k++)
            if (ra[i] == rb[k]) return 0;
    return 1;
}

/* A product of a tensor and a clamp of itself plus a constant, y = x * clamp(x + c, lo, hi): the decomposed
 * hardswish x * clip(x + 3, 0, 6) (/ 6 after it), or with relu6 / relu / hardtanh as the clamp (docs/budgets/
 * elementwise.md, "A product through a clamp of its own operand"). xi: which operand (0 or 1) is x; c a scalar
 * constant; the three tensors of the output's shape. */
typedef struct clamp_prod {
    int xi;
    double c, lo, hi;
} clamp_prod;

static const par_node *producer_of(const par_graph_desc *g, int32_t v)
{
    return v >= 0 && g->values[v].producer >= 0 ? &g->nodes[g->values[v].producer] : NULL;
}

static int find_clamp_prod(const par_ref_ctx *c, const par_rt *y, clamp_prod *q)
{
    if (!c->g || !c->n || c->n->n_inputs != 2) return 0;
    const par_graph_desc *g = c->g;
    for (int xi = 0; xi < 2; xi++) {
        int32_t x = c->n->inputs[xi], b = c->n->inputs[1 - xi];
        const par_node *cl = producer_of(g, b), *ad = cl && cl->n_inputs == 1 ? producer_of(g, cl->inputs[0]) : NULL;
        if (!ad || strcmp(ad->op, "add") != 0 || ad->n_inputs != 2 || x < 0 || g->values[x].numel != y->numel ||
            g->values[b].numel != y->numel || g->values[cl->inputs[0]].numel != y->numel)
            continue;
        int32_t k = ad->inputs[0] == x ? ad->inputs[1] : ad->inputs[1] == x ? ad->inputs[0] : -1;
        if (k < 0 || g->values[k].kind != PAR_VALUE_CONST || g->values[k].numel != 1 || !g->values[k].data ||
            !(g->values[k].dtype == PAR_DTYPE_F32 || g->values[k].dtype == PAR_DTYPE_F16 ||
              g->values[k].dtype == PAR_DTYPE_F64))
            continue;
        if (!strcmp(cl->op, "clamp")) q->lo = par_attr_float(cl, "min", -INFINITY), q->hi = par_attr_float(cl, "max", INFINITY);
        else if (!strcmp(cl->op, "relu6")) q->lo = 0, q->hi = 6;
        else if (!strcmp(cl->op, "relu")) q->lo = 0, q->hi = INFINITY;
        else if (!strcmp(cl->op, "hardtanh")) q->lo = par_attr_float(cl, "min_val", -1), q->hi = par_attr_float(cl, "max_val", 1);
        else continue;
        q->xi = xi;
        q->c = par_elem_get(g->values[k].dtype, g->values[k].data, 0);
        if (isfinite(q->c) && q->lo <= q->hi) return 1;
    }
    return 0;
}

static double clamp_prod_h(const clamp_prod *q, double z) { return z * fmin(fmax(z + q->c, q->lo), q->hi); }

/* The propagated error of y = x clamp(x + c) when the backend holds x' within ex of x: the held product is x'_2
 * clamp(x'_1 + c' + d) with x'_1, x'_2 the two reads of x (equal but for a storage rounding of one of them), c' the
 * held constant and d the add's rounding; clamp being 1-Lipschitz, |y' - y| <= max |h(x') - h(x)| over [x - ex,
 * x + ex] (h(z) = z clamp(z + c): linear below lo - c and above hi - c, a parabola of vertex -c/2 between, so the
 * maximum is at the interval's ends, the kinks or the vertex) + (|x| + ex) dl, dl the bound of everything that
 * moves clamp's argument off x'_2 + c. */
static double clamp_prod_prop(const clamp_prod *q, double x, double ex, const par_prec *pr)
{
    if (!isfinite(x) || !(ex < INFINITY)) return INFINITY;
    const double hx = clamp_prod_h(q, x), lo = x - ex, hi = x + ex;
    const double pts[5] = {lo, hi, q->lo - q->c, q->hi - q->c, -q->c / 2};
    double hmax = 0;
    for (int i = 0; i < 5; i++)
        if (pts[i] >= lo && pts[i] <= hi) hmax = fmax(hmax, fabs(clamp_prod_h(q, pts[i]) - hx));
    const double xa = fabs(x) + ex, ec = const_rounding(q->c, pr);
    const double dl = ec + (pr->u + pr->u_store * (1 + pr->u)) * (fabs(x + q->c) + ex + ec) + pr->u_store * xa +
                      (isfinite(q->lo) ? const_rounding(q->lo, pr) : 0) + (isfinite(q->hi) ? const_rounding(q->hi, pr) : 0) +
                      par_eta(pr, 3);
    double p = hmax + xa * dl;
    return p == p ? p : INFINITY;
}

/* One operand as the binary kernels read it: value, budget, scale and flush part (0 without flushing). */
typedef struct bin_in {
    double v, e, s, f;
} bin_in;

/* Value and budget of one output element from its two operands (add, sub, mul, div), and, where the operands are
 * independent (ind), its scale *so and flush part *fo (docs/budgets/elementwise.md, "Two operands"). add, sub and
 * mul are linear in the operands' errors to first order (mul's second-order term ea eb is kept worst case): y's
 * error is ca da + cb db with (ca, cb) = (1, +-1) or (b, a), a linear combination of two terms, and rule 5 bounds it
 * by the smaller of the worst case and lambda times the root-sum-square of the terms' scales (par_prop_bound_flush,
 * the flush parts signed by their terms). Operands with a common root keep the worst case, and their scale comes
 * from the interpreter's scale pass (the sum of the scales). */
static void bin_elem(bin_op op, bin_in a, bin_in b, const par_prec *pr, int ind, double p_cap, double *y, double *e,
                     double *so, double *fo)
{
    double v, p, ta = 0, tb = 0, cross = 0, fa = 0, fb = 0, sga = 0, sgb = 0;
    switch (op) {
    case BIN_ADD:
    case BIN_SUB:
        v = op == BIN_ADD ? a.v + b.v : a.v - b.v;
        p = a.e + b.e;
        ta = a.s, tb = b.s, fa = a.f, fb = b.f;
        sga = par_flush_sign(a.v), sgb = (op == BIN_ADD ? 1 : -1) * par_flush_sign(b.v);
        break;
    case BIN_MUL:
        v = a.v * b.v;
        p = fabs(b.v) * a.e + fabs(a.v) * b.e + a.e * b.e;
        ta = fabs(b.v) * a.s, tb = fabs(a.v) * b.s, fa = fabs(b.v) * a.f, fb = fabs(a.v) * b.f;
        sga = sgb = par_flush_sign(a.v) * par_flush_sign(b.v);
        cross = a.e * b.e;
        break;
    case BIN_DIV:
    default: {
        v = a.v / b.v;
        double lo = fabs(b.v) - b.e; /* the smallest |b'| a backend may hold */
        p = lo > 0 ? a.e / lo + fabs(a.v) * b.e / (fabs(b.v) * lo) : INFINITY;
        ind = 0;
        break;
    }
    }
    double prop2 = ta * ta + tb * tb;
    par_flush_sum fl = {0};
    if (ind) {
        if (fa > 0) par_flush_add(&fl, fa, sga, 0);
        if (fb > 0) par_flush_add(&fl, fb, sgb, 0);
        /* the first-order part by rule 5; the second-order term of mul worst case */
        p = fmin(p, par_prop_bound_flush(p - cross, prop2, &fl) + cross);
    }
    p = fmin(p, p_cap); /* a product through a clamp of its own operand (clamp_prod_prop) */
    double own = pr->u * (fabs(v) + p);
    double tot = p + own + pr->u_store * (fabs(v) + p + own);
    *y = v;
    *e = (isfinite(v) && tot == tot) ? tot : INFINITY;
    if (ind) {
        /* the scale: the one rounding, the terms' root-sum-square (the flush terms' fluctuation included), never
         * more than their sum (the scale of operands with a common root) nor the propagated bound, and mul's
         * second-order term on the scales (as the scale pass takes it); the flush part: the part common to the
         * flush terms' signs, and mul's second-order term on the flush parts (as the flush pass takes it) */
        double ps = own + fmin(fmin(sqrt(prop2 + fl.sq), ta + tb), p) + (op == BIN_MUL ? a.s * b.s : 0);
        ps += pr->u_store * (fabs(v) + ps);
        *so = *e < INFINITY ? fmin(ps, *e) : *e;
        *fo = fmin(par_flush_common(&fl) + (op == BIN_MUL ? a.f * b.f : 0), *e);
    }
}

static bin_in bin_read(const par_rt *t, int64_t i)
{
    bin_in r = {t->v[i], t->e[i], par_rt_scales(t)[i], t->f ? t->f[i] : 0};
    return r;
}

static par_status binary(const par_ref_ctx *c, bin_op op, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    if (!in[0] || !in[1] || !out[0]) return par_msgf(msg, PAR_ERROR, "%s: inputs 0 (a) and 1 (b) are required",
                                                     bin_names[op]);
    const par_rt *a = in[0], *b = in[1];
    par_rt *y = out[0];
    if (!is_float(a->dtype) || !is_float(b->dtype))
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: dtypes %s, %s reached the float kernel (only f32, f16, f64)",
                        bin_names[op], par_dtype_name(a->dtype), par_dtype_name(b->dtype));
    int64_t sa[PAR_MAX_RANK], sb[PAR_MAX_RANK];
    par_status st;
    if ((st = broadcast_strides(a, y, sa, "input 0 (a)", msg)) != PAR_OK) return st;
    if ((st = broadcast_strides(b, y, sb, "input 1 (b)", msg)) != PAR_OK) return st;

    int64_t idx[PAR_MAX_RANK] = {0};
    int64_t oa = 0, ob = 0;
    /* independent operands: the kernel gives the scales and flush parts itself (every pass but the value pass
     * leaves them to the interpreter: y->s is then written and not read) */
    const int ind = (op == BIN_ADD || op == BIN_SUB || op == BIN_MUL) && a->v != b->v && independent_operands(c);
    clamp_prod cp = {0};
    /* not in the flush pass (u = 0, flushing on): a flush part smaller than the worst case's can make a later linear
     * combination's flush part common to the signs larger (par_flush_common is not monotone in its terms), and the
     * bound is there to shrink budgets, never to grow one */
    const int flush_pass = c->prec.u == 0 && c->prec.flush > 0;
    const int cprod = op == BIN_MUL && !ind && !flush_pass && find_clamp_prod(c, y, &cp);
    const par_rt *xt = cprod ? in[cp.xi] : NULL;
    for (int64_t i = 0; i < y->numel; i++) {
        if (op == BIN_MIN || op == BIN_MAX)
            minmax_elem(op == BIN_MAX, a->v[oa], a->e[oa], b->v[ob], b->e[ob], &y->v[i], &y->e[i]);
        else if (op == BIN_POW) {
            if (pow_elem(a->v[oa], a->e[oa], b->v[ob], b->e[ob], &c->prec, &y->v[i], &y->e[i])) par_mark_any(c, i);
        } else {
            double so = 0, fo = 0;
            double cap = cprod ? clamp_prod_prop(&cp, xt->v[i], xt->e[i], &c->prec) : INFINITY;
            bin_elem(op, bin_read(a, oa), bin_read(b, ob), &c->prec, ind, cap, &y->v[i], &y->e[i], &so, &fo);
            if (ind && y->s) y->s[i] = so;
            if (ind && y->f) y->f[i] = fo;
        }
        /* a / +-0 is an infinity whose sign is the zero's, and the oracle does not pin the sign of a zero (a
         * correct backend may hold -0 where the reference has +0, docs/oracle.md): either infinity is right, so the
         * element is "anything" (0 / 0 and NaN / 0 stay NaN) */
        if (op == BIN_DIV && b->v[ob] == 0 && a->v[oa] != 0 && !isnan(a->v[oa])) par_mark_any(c, i);
        /* Advance the row-major output index and the two input offsets. */
        for (int32_t k = y->rank - 1; k >= 0; k--) {
            idx[k]++;
            oa += sa[k];
            ob += sb[k];
            if (idx[k] < y->dims[k]) break;
            oa -= sa[k] * idx[k];
            ob -= sb[k] * idx[k];
            idx[k] = 0;
        }
    }
    return PAR_OK;
}

par_status par_ref_add(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    return binary(c, BIN_ADD, in, out, msg);
}

par_status par_ref_sub(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    return binary(c, BIN_SUB, in, out, msg);
}

par_status par_ref_mul(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    return binary(c, BIN_MUL, in, out, msg);
}

par_status par_ref_div(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    return binary(c, BIN_DIV, in, out, msg);
}

par_status par_ref_minimum(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    return binary(c, BIN_MIN, in, out, msg);
}

par_status par_ref_maximum(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    return binary(c, BIN_MAX, in, out, msg);
}

par_status par_ref_pow(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    return binary(c, BIN_POW, in, out, msg);
}

/* ---- sqrt and rsqrt ----------------------------------------------------------------------------------------------
 * IEEE / PyTorch special values: sqrt(x < 0) = NaN, sqrt(-0) = -0, sqrt(+inf) = +inf; rsqrt(0) = +inf,
 * rsqrt(-0) = -inf, rsqrt(x < 0) = NaN, rsqrt(+inf) = +0. NaN propagates.
 * Budget (docs/budgets/norm-reduce.md), the held input x' in [x - e, x + e]:
 *   sqrt   propagated p = sqrt(x) - sqrt(x - e) when x - e >= 0 (sqrt is concave and increasing: the lower end of the
 *          interval moves it most), else sqrt(x + e) (a held x' may be 0); own u (|y| + p): IEEE sqrt is correctly
 *          rounded, one rounding of the held result.
 *   rsqrt  p = 1 / sqrt(x - e) - 1 / sqrt(x) when x - e > 0 (decreasing and convex: again the lower end), else
 *          unbounded; own (fn_ulps + 2) u (|y| + p): production rsqrt is an estimate refined by Newton steps, allowed
 *          the elementary-function error fn_ulps u, or 1 / sqrt(x) with two correctly rounded operations (2u).
 *   storage u_s (|y| + p + own) (finish()).
 * Where the value is an exact special (0, inf, NaN from an exact input) the budget is 0: a backend must return it.
 * An input interval that holds both 0 and negative values makes the element "anything" (sqrt_kernel). */
static void sqrt_elem(int rs, double x, double e, const par_prec *pr, double *yo, double *eo)
{
    double y = rs ? 1.0 / sqrt(x) : sqrt(x);
    if (!isfinite(y) || x == 0 || isinf(x)) {
        /* 0, -0, inf, NaN: exact when the input is exact; a budgeted zero input may be held as a tiny positive
         * (sqrt: then within sqrt(e); rsqrt: unbounded) */
        *yo = y;
        *eo = e == 0 ? 0 : (rs ? INFINITY : (isfinite(y) ? finish(y, sqrt(e), pr->u * sqrt(e), pr) : INFINITY));
        return;
    }
    double p, own;
    if (rs) {
        p = x - e > 0 ? 1.0 / sqrt(x - e) - y : INFINITY;
        own = (pr->fn_ulps + 2) * pr->u * (fabs(y) + p);
    } else {
        p = x - e >= 0 ? y - sqrt(x - e) : sqrt(x + e);
        own = pr->u * (fabs(y) + p);
    }
    *yo = y;
    *eo = finish(y, p, own, pr);
}

static par_status sqrt_kernel(const par_ref_ctx *c, int rs, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    const char *name = rs ? "rsqrt" : "sqrt";
    par_status io = float_unary_io(name, in, out, msg);
    if (io != PAR_OK) return io;
    const par_rt *x = in[0];
    par_rt *y = out[0];
    for (int64_t i = 0; i < x->numel; i++) {
        sqrt_elem(rs, x->v[i], x->e[i], &c->prec, &y->v[i], &y->e[i]);
        if (rs && x->v[i] == 0) par_mark_any(c, i); /* rsqrt(+-0) = +-inf: the zero's sign is not pinned (div) */
        /* A budgeted input whose interval [x - e, x + e] holds 0 and a negative value may be held as either: a
         * negative gives NaN, a signed zero gives +-0 (sqrt) or +-inf (rsqrt), a positive a finite result. Any of
         * them is correct (an f32 leaf of -1e-30 stored in f16 is -0, whose sqrt is -0). An interval wholly below 0
         * gives NaN, required as before. */
        else if (x->e[i] > 0 && x->v[i] - x->e[i] < 0 && x->v[i] + x->e[i] >= 0) par_mark_any(c, i);
    }
    return PAR_OK;
}

par_status par_ref_sqrt(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    return sqrt_kernel(c, 0, in, out, msg);
}

par_status par_ref_rsqrt(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    return sqrt_kernel(c, 1, in, out, msg);
}
