/*
 * interp.c - the reference interpreter: walks a validated graph in order, calls each op's float64 kernel, and carries
 * values and error budgets for every tensor. Quantized nodes (docs/quantization.md) are evaluated twice: on the
 * dequantized reals with no rounding budgeted (the ideal value, and the inputs' budgets propagated in steps), and in
 * integers under each requantization scheme (quant_ops.c); the output holds the declared scheme's integer, the
 * budget in steps, and the range [ql, qh] that the other schemes and ties of the ideal value explain. It never calls
 * a backend and never allocates per element. The reference tensors are rt.c's, the table of kernels kernels.c's.
 */
#include "reference.h"
#include "elem_util.h"

#include <math.h>

#include "core/requant.h"
#include "core/shape.h"
#include <stdlib.h>

#include "core/tensor.h"

/* Relative accuracy assumed of a correct backend's requantization arithmetic (multiplier representation and
 * rounding of the scaled accumulator): fp32 requantization carries 24 significant bits, 32-bit fixed-point
 * multipliers 31; 2^-20 admits any multiplier with at least 21 significant bits. */
#define PAR_REQUANT_REL 0x1p-20

void par_ref_result_destroy(par_ref_result *r)
{
    if (!r) return;
    for (int32_t i = 0; i < r->n_values; i++) par_rt_free(&r->values[i]);
    free(r->values);
    free(r);
}

static int is_quant(par_dtype t) { return par_dtype_is_quant(t); }

/* ---- Flushed subnormals (PAR_ARITH_FLUSH_SUBNORMALS; docs/oracle.md, "Flushed subnormals") --------------------
 * A backend that flushes may read any element below the smallest normal tau as a zero (DAZ) and write any result
 * below tau as a zero (FTZ). The interpreter budgets both for every node, so that kernels only count the operations
 * inside an op (par_eta): a leaf below tau may be read as 0 (its budget becomes |x|), and a node's result that may
 * lie below tau may come out as 0 (flush_results). Each element's flush part f (reference.h) holds the worst-case
 * share of its budget that flushing explains, kept out of the probabilistic scale s. */

/* The format a float tensor of dtype dt is stored in by the backend: f16 for an f16 tensor, the declared storage
 * (par_prec.u_store: f32, f16 or bfloat16) for an f32 one; NULL for other dtypes (integers, f64 reference values). */
static const par_fmt *stored_fmt(const par_prec *p, par_dtype dt)
{
    if (dt == PAR_DTYPE_F16) return par_fmt_of(0x1p-11);
    return dt == PAR_DTYPE_F32 ? par_fmt_of(p->u_store > 0 ? p->u_store : 0x1p-24) : NULL;
}

/* tau for a tensor of dtype dt where it is read or written: the larger of the arithmetic's (p->flush) and its storage
 * format's smallest normal (2^-14 for a tensor stored in f16: an f16 tensor, or an f32 tensor under f16 storage); 0
 * when the backend keeps subnormals or dt is not a float type. */
static double flush_tau(const par_prec *p, par_dtype dt)
{
    if (!(p->flush > 0)) return 0;
    const par_fmt *f = stored_fmt(p, dt);
    return f ? fmax(p->flush, f->tiny) : 0;
}

/* Allocate t's flush parts, filled with NaN ("not computed", as the scales). */
static par_status alloc_flush(par_rt *t, par_msg *msg)
{
    free(t->f);
    t->f = malloc(sizeof *t->f * (size_t)(t->numel + 1));
    if (!t->f) return par_msgf(msg, PAR_ERROR, "reference: out of memory");
    for (int64_t i = 0; i < t->numel; i++) t->f[i] = NAN;
    return PAR_OK;
}

/* A result that a correct backend may hold anywhere in [v - e, v + e] and flush to zero when it lies below tau: the
 * element is then either within e of v or 0, so its budget becomes max(e, |v|), and its flush part grows by the size
 * of the flushed value, at most min(tau, |v| + e) (still at most the budget). Elements that cannot lie below tau are
 * untouched: an exact op stays exact except on a subnormal result, which may come out as a signed zero. */
static void flush_results(par_rt *t, double tau)
{
    for (int64_t i = 0; i < t->numel; i++) {
        if (isnan(t->f[i])) t->f[i] = t->e[i]; /* a part left uncomputed counts as all flush: the worst case */
        double v = fabs(t->v[i]), e = t->e[i];
        if (!(v < tau + e)) continue; /* NaN and infinite values too */
        t->f[i] = fmin(fmin(tau, v + e) + t->f[i], fmax(e, v));
        t->e[i] = fmax(e, v);
    }
}

static void nonfinite_rules(par_rt *t, const par_prec *p, const uint8_t *any, int taint_nan, int taint_inf);

/* Load a graph input or constant: exact in its own dtype; a float tensor stored in a narrower format by the backend
 * (f16 or bfloat16 storage of an f32 tensor) is rounded once at the boundary, by the standard model with underflow
 * fl(x) = x (1 + d) + eta: u_store * |x| plus the narrower format's half subnormal (2^-25 for f16, 2^-134 for
 * bfloat16: the eta that gradual_results gives computed results), which covers an element that becomes subnormal
 * or zero in that format; nothing for an element that is a normal number of that format (it is stored as it is). With
 * flushing, an element below tau may be read as 0: budget |x|, all of it the flush part. */
static par_status load_leaf(const par_value *val, const void *data, const par_prec *p, par_rt *t, par_msg *msg)
{
    if (par_rt_alloc(t, val->dtype, val->rank, val->dims, msg) != PAR_OK) return PAR_ERROR;
    const par_fmt *narrow = val->dtype == PAR_DTYPE_F32 && p->u_store > 0x1p-24 ? par_fmt_of(p->u_store) : NULL;
    const double tau = flush_tau(p, val->dtype);
    if (tau > 0 && alloc_flush(t, msg) != PAR_OK) return PAR_ERROR;
    for (int64_t i = 0; i < t->numel; i++) {
        t->v[i] = par_elem_get(val->dtype, data, i);
        t->e[i] = narrow && !par_fmt_exact(narrow, t->v[i]) ? narrow->u * fabs(t->v[i]) + narrow->eta : 0.0;
        t->s[i] = t->e[i];
        if (tau > 0) {
            t->f[i] = fabs(t->v[i]) < tau ? fabs(t->v[i]) : 0;
            t->e[i] = fmax(t->e[i], t->f[i]);
        }
    }
    nonfinite_rules(t, p, NULL, 0, 0);
    return PAR_OK;
}

/* Real scale of element i of a quantized tensor (per-channel aware). */
static double elem_scale(const par_value *val, const int64_t *strides, int64_t i)
{
    if (val->quant_axis >= 0 && val->channel_scales) {
        int64_t c = (i / strides[val->quant_axis]) % val->dims[val->quant_axis];
        return val->channel_scales[c];
    }
    return val->scale;
}

/* The steps by which a quantized element may differ from v for reasons other than propagation: the width of its
 * labelled range [ql, qh] (0 when it has none). */
static double label_width(const par_rt *q, int64_t i)
{
    if (!q->ql || !q->qh) return 0;
    return fmax(q->qh[i] - q->v[i], q->v[i] - q->ql[i]);
}

/* Dequantize a qu8/qs8/i32 reference tensor into a float one: exact (the product of a float scale and a small
 * integer is exact in float64). The budget is the element's steps, its labelled range included: a backend's value
 * anywhere in [ql - e, qh + e] is correct, and the consumers must accept what follows from any of them. */
static par_status dequant_rt(const par_value *val, const par_rt *q, par_rt *f, par_msg *msg)
{
    if (par_rt_alloc(f, PAR_DTYPE_F32, q->rank, q->dims, msg) != PAR_OK) return PAR_ERROR;
    int64_t strides[PAR_MAX_RANK];
    par_rt_strides(q, strides);
    for (int64_t i = 0; i < q->numel; i++) {
        double s = elem_scale(val, strides, i);
        f->v[i] = s * (q->v[i] - val->zero_point);
        f->e[i] = s * (q->e[i] + label_width(q, i));
        f->s[i] = s * (par_rt_scales(q)[i] + label_width(q, i));
    }
    return PAR_OK;
}

/* The i32 bias of a quantized conv2d / conv_transpose2d / linear: real = q * s_x * s_w[c] (zero point 0), per
 * output channel c when the weights are per-channel (scales indexed by output channel: axis 0, or axis 1 of
 * conv_transpose2d), whatever scale the bias value declares (NNAPI's and TFLite's rule, docs/quantization.md): the
 * integer accumulator adds q as is, so this is the only scale under which the ideal and the integers agree. */
static par_status dequant_bias(const par_graph_desc *g, const par_node *n, const par_rt *q, par_rt *f, par_msg *msg)
{
    const par_value *xv = &g->values[n->inputs[0]], *wv = &g->values[n->inputs[par_qacc_scale_input(n)]];
    if (par_rt_alloc(f, PAR_DTYPE_F32, q->rank, q->dims, msg) != PAR_OK) return PAR_ERROR;
    for (int64_t i = 0; i < q->numel; i++) {
        double ws = (wv->quant_axis >= 0 && wv->channel_scales && i < wv->dims[wv->quant_axis]) ? wv->channel_scales[i]
                                                                                            : wv->scale;
        double s = (double)xv->scale * ws;
        if (!is_quant(xv->dtype)) s = 1.0; /* a float conv with an i32 bias: not a quantized form */
        f->v[i] = s * q->v[i];
        f->e[i] = s * q->e[i];
        f->s[i] = s * par_rt_scales(q)[i];
    }
    return PAR_OK;
}

static double round_half_even(double x) { return x - remainder(x, 1.0); }

/* The scale, in steps, of a requantized element whose budget is e steps (docs/quantization.md, "Deep graphs"): e
 * itself in the default mode. Rounding turns the real result's small deviations into whole steps: an element within
 * reach of a rounding boundary may come out one step (or e steps) off, not the fraction of a step its real scale
 * says, so the bound of that deviation as an independent source of the next layer's sum (reference.h,
 * par_prop_bound) is e. With the real scale (smaller), a single input one step off moved a convolution by more than
 * its Hoeffding bound: correct gemmlowp integers fell outside the fp32 reference's allowances at 52630 elements of
 * mobilenet_v2_qs8's intermediate nodes. Elements far from a boundary keep e = 0, hence scale 0. Strict mode keeps
 * the real scale (never more than e): there no scheme and no tie is allowed, the only budgets are the float
 * arithmetic of the graph's quantize nodes (a few elements in 10^5), and a backend that promised exact integers is
 * judged on them bit for bit. */
static double step_scale(const par_rt *y, int64_t i, float out_scale, double e, int strict)
{
    if (!strict) return e;
    double s = par_rt_scales(y)[i] / (double)out_scale;
    return s < e ? s : e;
}

/* Requantize real results y (budget ey) into the output's integers. The allowed step difference is what rounding
 * any value in [x - d, x + d] can give, x = y / s + zp, d = ey / s + PAR_REQUANT_REL * |x - zp|: one step near a
 * tie, none elsewhere when the inputs are exact. */
static void requant_rt(const par_value *val, const par_rt *y, par_rt *q, int strict)
{
    double lo_q, hi_q;
    par_quant_range(val->dtype, &lo_q, &hi_q);
    for (int64_t i = 0; i < y->numel; i++) {
        double x = y->v[i] / val->scale;
        double d = y->e[i] / val->scale + PAR_REQUANT_REL * fabs(x);
        x += val->zero_point;
        double r = fmin(fmax(round_half_even(x), lo_q), hi_q);
        double lo = fmin(fmax(round_half_even(x - d), lo_q), hi_q);
        double hi = fmin(fmax(round_half_even(x + d), lo_q), hi_q);
        q->v[i] = r;
        q->e[i] = isfinite(d) ? fmax(r - lo, hi - r) : INFINITY;
        q->s[i] = step_scale(y, i, val->scale, q->e[i], strict);
    }
}

/* The exact integer output of a quantized node (docs/quantization.md): the declared scheme's integer in v; in
 * [ql, qh] every scheme's integer and, where the ideal value x = y / s + zp lies within the op's window of a tie
 * k + 1/2, both k and k + 1; in e the inputs' budgets propagated in steps: the float kernel moved the ideal value by
 * at most d = e(y) / s steps, and rounding a value moved by d moves the integer by at most ceil(d) steps.
 * PAR_UNSUPPORTED when the op has no integer form (the caller falls back to rounding the ideal value). */
/* The systematic share beta of an input's allowance: its bias bound over its mean allowance (labels + budget). A
 * rounding rule decides the direction of each tie from the value alone, so an input's differences are systematic at
 * most in the proportion its own bias bound admits; beta = 1 for a tensor with no bias bound of its own (a quantize
 * output: every allowed step may go the same way). */
static double systematic_share(const par_rt *q)
{
    if (!q || !par_dtype_is_quant(q->dtype) || q->numel == 0) return 0;
    double a = 0;
    for (int64_t i = 0; i < q->numel; i++) a += q->e[i] + label_width(q, i);
    if (!(a > 0)) return 0;
    if (!q->ql) return 1;
    double b = fmax(q->qb_up, q->qb_down) * (double)q->numel / a;
    return b < 1 ? b : 1;
}

/* Added to the tie window where inputs carry budgets: the schemes' own offsets away from exact ties, at least 2^-4,
 * and where the declared scheme is gemmlowp the reach of its first rounding (SRDHM, a unit of 2^-right output steps:
 * par_requant_slack, up to 1/4 step for ratios in [1/4, 1/2), such as a 2x4 average between close scales). */
#define PAR_QPROP_WIN 0x1p-4

static par_status requant_exact(const par_ref_ctx *c, const par_rt *const *qin, const par_value *ov, const par_rt *y,
                                par_rt *q, par_msg *msg)
{
    const int64_t n = y->numel;
    double *qs = malloc(sizeof *qs * (size_t)(PAR_REQUANT_N_SCHEMES * n + 1)),
           *win = malloc(sizeof *win * (size_t)(n + 1)), *tie = malloc(sizeof *tie * (size_t)(n + 1)),
           *slack = malloc(sizeof *slack * (size_t)(n + 1));
    par_status st = (qs && win && tie && slack) ? PAR_OK : par_msgf(msg, PAR_ERROR, "reference: out of memory");
    if (st == PAR_OK) {
        double *qp[PAR_REQUANT_N_SCHEMES];
        for (int s = 0; s < PAR_REQUANT_N_SCHEMES; s++) qp[s] = qs + (size_t)s * (size_t)n;
        st = par_qref_node(c, qin, y, qp, win, tie, slack, msg);
    }
    if (st == PAR_OK) {
        free(q->ql);
        free(q->qh);
        q->ql = malloc(sizeof *q->ql * (size_t)(n + 1));
        q->qh = malloc(sizeof *q->qh * (size_t)(n + 1));
        if (!q->ql || !q->qh) st = par_msgf(msg, PAR_ERROR, "reference: out of memory");
    }
    double lo_q, hi_q;
    par_quant_range(ov->dtype, &lo_q, &hi_q);
    const int decl = (unsigned)c->prec.requant < PAR_REQUANT_N_SCHEMES ? (int)c->prec.requant : 0;
    int64_t n_tie = 0;
    for (int64_t i = 0; i < n && st == PAR_OK; i++) {
        double v = qs[(size_t)decl * (size_t)n + (size_t)i], l = v, h = v;
        for (int s = 0; s < PAR_REQUANT_N_SCHEMES; s++) {
            l = fmin(l, qs[(size_t)s * (size_t)n + (size_t)i]);
            h = fmax(h, qs[(size_t)s * (size_t)n + (size_t)i]);
        }
        double x = y->v[i] / ov->scale + ov->zero_point, t = floor(x);
        if (fabs(x - t - 0.5) <= win[i]) {
            l = fmin(l, fmin(fmax(t, lo_q), hi_q));
            h = fmax(h, fmin(fmax(t + 1, lo_q), hi_q));
        }
        /* Strict mode (PAR_PROC_REQUANT_EXACT): the backend promised the declared scheme's integer, so no other
         * scheme and no tie is an allowed alternative: the labelled range is the integer itself. */
        if (c->prec.requant_exact) l = h = v;
        /* Inputs off by their allowance move the ideal value by at most d steps: the backend's integer is then what
         * rounding some value of [x - d - w', x + d + w'] gives (w' = the tie window plus PAR_QPROP_WIN for the
         * schemes' own offsets away from exact ties), which reaches past [ql, qh] only where that interval crosses
         * a rounding boundary: most elements keep e = 0 even when their inputs carry budgets. */
        double d = y->e[i] / ov->scale, p = 0;
        if (d > 0 && isfinite(d)) {
            double wp = win[i] + fmax(PAR_QPROP_WIN, slack[i]);
            double rlo = fmin(fmax(ceil(x - d - wp - 0.5), lo_q), hi_q);
            double rhi = fmin(fmax(floor(x + d + wp + 0.5), lo_q), hi_q);
            p = fmax(0, fmax(rhi - h, l - rlo));
        }
        q->v[i] = v;
        q->ql[i] = l;
        q->qh[i] = h;
        q->e[i] = isfinite(d) ? p : INFINITY;
        q->s[i] = step_scale(y, i, ov->scale, q->e[i], c->prec.requant_exact);
        /* A tie is judged only where the inputs are exact (the backend's integer then depends on its rounding
         * rule alone) and both neighbours survive the clamp. */
        if (!isnan(tie[i])) {
            double k = floor(tie[i]) + ov->zero_point;
            if (d != 0 || k < lo_q || k + 1 > hi_q || (v != k && v != k + 1)) tie[i] = NAN;
            else n_tie++;
        }
    }
    free(q->tie);
    q->tie = NULL;
    if (st == PAR_OK && n_tie > 0) {
        q->tie = tie;
        tie = NULL;
        q->tie_rule = (int32_t)par_requant_tie_rule((par_requant)decl, par_op_of(c->n)->qform == PAR_QFORM_ADD);
        q->tie_zp = ov->zero_point;
        q->tie_scale = 0;
    }
    if (st == PAR_OK && n > 0) {
        double beta = 0, up = 0, down = 0, prop = 0;
        for (int32_t k = 0; k < c->n->n_inputs; k++) beta = fmax(beta, systematic_share(qin[k]));
        for (int64_t i = 0; i < n; i++) {
            up += q->qh[i] - q->v[i];
            down += q->v[i] - q->ql[i];
            prop += q->e[i];
        }
        q->qb_up = (up + beta * prop) / (double)n;
        q->qb_down = (down + beta * prop) / (double)n;
    }
    free(qs);
    free(win);
    free(slack);
    free(tie);
    return st;
}

/* The smallest magnitude that rounds to infinity when stored in t's storage format: 2^128 - 2^103 for f32 (the
 * midpoint above FLT_MAX rounds to even, 2^128), 65520 for f16 and for an f32 tensor the backend stores in f16,
 * 2^128 - 2^119 under bfloat16 storage; 0 for tensors that are not stored in a float format the backend rounds to. */
static double storage_overflow(const par_rt *t, const par_prec *p)
{
    const par_fmt *f = stored_fmt(p, t->dtype);
    return f ? f->ovf : 0;
}

/* The NaN, Inf and overflow rules of a float tensor (docs/oracle.md, "NaN and Inf policy"), applied to every leaf and
 * every node output after its kernel: at a non-finite value the budget encodes what a backend may give, 0 for
 * exactly this NaN or Inf, +Inf for anything (NaN included); a finite value whose whole interval [v - e, v + e] lies
 * beyond the storage's overflow threshold is stored as that Inf by every correct backend, and one whose interval
 * reaches it may be stored as Inf: unbounded. The flags: any (NULL or per element: a kernel marked an intermediate
 * overflow), taint_nan (an input holds an "anything" element: a NaN output may be anything), taint_inf (an input
 * holds an anything or an unbounded element: a backend's input may be any Inf there, so an output that is infinite,
 * or whose budget is infinite or NaN, may be anything; only for ops that compute, exact ops move values as they
 * are). */
static void nonfinite_rules(par_rt *t, const par_prec *p, const uint8_t *any, int taint_nan, int taint_inf)
{
    if (t->dtype != PAR_DTYPE_F32 && t->dtype != PAR_DTYPE_F16 && t->dtype != PAR_DTYPE_F64) return;
    const double lim = storage_overflow(t, p);
    for (int64_t i = 0; i < t->numel; i++) {
        double v = t->v[i], e = t->e[i], ne;
        if (any && any[i]) v = NAN, ne = INFINITY;
        else if (isnan(v)) ne = taint_nan || taint_inf ? INFINITY : 0;
        else if (isinf(v)) ne = taint_inf ? INFINITY : 0;
        else if (taint_inf && !(e < INFINITY)) ne = INFINITY, v = NAN;
        else if (lim > 0 && fabs(v) - e >= lim) v = copysign(INFINITY, v), ne = 0;
        else if (lim > 0 && fabs(v) + e >= lim) ne = INFINITY;
        else continue;
        t->v[i] = v;
        t->e[i] = ne;
        if (t->s) t->s[i] = ne;
        if (t->f) t->f[i] = 0;
    }
}

/* Whether a float tensor holds an "anything" element (NaN with an infinite budget), or an unbounded one (finite with
 * an infinite budget). */
static void taint_of(const par_rt *t, int *any_el, int *unbounded_el)
{
    if (!t || !t->v || (t->dtype != PAR_DTYPE_F32 && t->dtype != PAR_DTYPE_F16 && t->dtype != PAR_DTYPE_F64)) return;
    for (int64_t i = 0; i < t->numel; i++) {
        if (!(t->e[i] < INFINITY)) {
            if (isnan(t->v[i])) *any_el = 1;
            else if (isfinite(t->v[i])) *unbounded_el = 1;
        }
    }
}

/* Gradual underflow of a computed result (docs/oracle.md, "Flushed subnormals"): rounded to its storage format, a
 * result in the subnormal range errs by up to half the smallest subnormal (2^-150 in f32, 2^-25 in f16) whatever its
 * relative budget says; the kernels' u_store |v| covers normal results only. Added to every element of a non-exact
 * op's float output (exact ops select an input element, which is stored already). */
static void gradual_results(par_rt *t, const par_prec *p)
{
    if (t->dtype != PAR_DTYPE_F32 && t->dtype != PAR_DTYPE_F16) return;
    const double eta = t->dtype == PAR_DTYPE_F16 ? par_fmt_of(0x1p-11)->eta : par_eta_gradual(p);
    for (int64_t i = 0; i < t->numel; i++) t->e[i] += eta;
    /* a rounding like any other, mean-zero: in the scale too, or a linear combination downstream loses it */
    if (t->s)
        for (int64_t i = 0; i < t->numel; i++) t->s[i] += eta;
}

/* Fill the scales of a node's outputs that its kernel left uncomputed (every kernel but the linear combinations):
 * the same kernel run on the inputs' scales in place of their budgets. Kernels other than linear combinations
 * propagate budgets deterministically (own rounding plus sup|f'| times the input's), so this gives their outputs'
 * scales the same bound over the inputs' scales, an upper bound of the root-sum-square (docs/oracle.md, rule 5). */
static par_status scale_pass(const par_op_info *info, const par_ref_ctx *c, int32_t n_in, const par_rt *const *in,
                             int32_t n_out, par_rt *const *out, par_msg *msg)
{
    int need = 0;
    for (int32_t i = 0; i < n_out; i++)
        if (out[i]->numel > 0 && isnan(out[i]->s[0])) need = 1;
    if (!need) return PAR_OK;
    par_rt vin[64], tout[4];
    const par_rt *pin[64] = {NULL};
    par_rt *pout[4] = {NULL};
    par_ref_ctx cs = *c;
    cs.any = NULL; /* the marks are the value pass's */
    cs.prec.flush = 0; /* flush errors are not mean-zero: they stay out of the scales (the flush pass below) */
    c = &cs;
    for (int32_t i = 0; i < n_in; i++) {
        if (!in[i]) continue;
        vin[i] = *in[i];
        vin[i].e = (double *)par_rt_scales(in[i]);
        vin[i].s = NULL;
        vin[i].f = NULL;
        pin[i] = &vin[i];
    }
    par_status st = PAR_OK;
    int32_t made = 0;
    for (int32_t i = 0; i < n_out && st == PAR_OK; i++, made++) {
        st = par_rt_alloc(&tout[i], out[i]->dtype, out[i]->rank, out[i]->dims, msg);
        pout[i] = &tout[i];
    }
    if (st == PAR_OK) st = par_ref_kernel(info->id)(c, pin, pout, msg);
    for (int32_t i = 0; i < n_out && st == PAR_OK; i++)
        for (int64_t k = 0; k < out[i]->numel; k++) /* s <= e by definition */
            out[i]->s[k] = tout[i].e[k] < out[i]->e[k] ? tout[i].e[k] : out[i]->e[k];
    for (int32_t i = 0; i < made; i++) par_rt_free(&tout[i]);
    return st;
}

/* A dequantize of a tensor with ties (docs/quantization.md, "Ties") carries them to its float output, so that a
 * quantize -> op -> dequantize case is judged on the op's ties: the oracle reads the backend's float back as the
 * integer zp + rint(x / scale), exact for any dequantization within half a step. */
static par_status carry_ties(const par_graph_desc *g, const par_node *n, par_rt *vals, par_msg *msg)
{
    const par_rt *q = n->inputs[0] >= 0 ? &vals[n->inputs[0]] : NULL;
    const par_value *iv = n->inputs[0] >= 0 ? &g->values[n->inputs[0]] : NULL;
    par_rt *f = &vals[n->outputs[0]];
    if (!q || !q->tie || q->tie_scale != 0 || !is_quant(iv->dtype) || iv->quant_axis >= 0 || f->numel != q->numel ||
        (f->dtype != PAR_DTYPE_F32 && f->dtype != PAR_DTYPE_F64))
        return PAR_OK;
    f->tie = malloc(sizeof *f->tie * (size_t)(q->numel + 1));
    if (!f->tie) return par_msgf(msg, PAR_ERROR, "reference: out of memory");
    memcpy(f->tie, q->tie, sizeof *f->tie * (size_t)q->numel);
    f->tie_rule = q->tie_rule;
    f->tie_zp = q->tie_zp;
    f->tie_scale = iv->scale;
    return PAR_OK;
}

/* Fill the flush parts of a node's outputs that its kernel left uncomputed (every kernel but the linear combinations,
 * which propagate them worst case themselves): the kernel run on the inputs' flush parts in place of their budgets,
 * with no rounding (u = u_store = fn_ulps = 0) and flushing on, so that it gives the inputs' flush parts through the
 * op's sensitivity plus the flushes it counts inside the op (par_eta, underflow_abs). Like the scale pass, the
 * sensitivity is taken over [x - f, x + f]. */
static par_status flush_pass(const par_op_info *info, const par_ref_ctx *c, int32_t n_in, const par_rt *const *in,
                             int32_t n_out, par_rt *const *out, par_msg *msg)
{
    int need = 0;
    for (int32_t i = 0; i < n_out; i++)
        if (out[i]->f && out[i]->numel > 0 && isnan(out[i]->f[0])) need = 1;
    if (!need) return PAR_OK;
    par_ref_ctx cf = *c;
    cf.any = NULL;
    cf.prec.u = cf.prec.u_store = cf.prec.fn_ulps = 0;
    par_rt vin[64], tout[4];
    double *zeros[64] = {NULL};
    const par_rt *pin[64] = {NULL};
    par_rt *pout[4] = {NULL};
    par_status st = PAR_OK;
    for (int32_t i = 0; i < n_in && st == PAR_OK; i++) {
        if (!in[i]) continue;
        vin[i] = *in[i];
        if (!in[i]->f) {
            zeros[i] = calloc((size_t)(in[i]->numel + 1), sizeof *zeros[i]);
            if (!zeros[i]) st = par_msgf(msg, PAR_ERROR, "reference: out of memory");
        }
        vin[i].e = in[i]->f ? in[i]->f : zeros[i];
        vin[i].s = NULL;
        vin[i].f = NULL;
        pin[i] = &vin[i];
    }
    int32_t made = 0;
    for (int32_t i = 0; i < n_out && st == PAR_OK; i++, made++) {
        st = par_rt_alloc(&tout[i], out[i]->dtype, out[i]->rank, out[i]->dims, msg);
        pout[i] = &tout[i];
    }
    if (st == PAR_OK) st = par_ref_kernel(info->id)(&cf, pin, pout, msg);
    for (int32_t i = 0; i < n_out && st == PAR_OK; i++)
        if (out[i]->f && isnan(out[i]->f[0]))
            for (int64_t k = 0; k < out[i]->numel; k++) /* f <= e by definition */
                out[i]->f[k] = tout[i].e[k] < out[i]->e[k] ? tout[i].e[k] : out[i]->e[k];
    for (int32_t i = 0; i < made; i++) par_rt_free(&tout[i]);
    for (int32_t i = 0; i < n_in; i++) free(zeros[i]);
    return st;
}

/* Ops whose output lies in a fixed range whatever the input (the op table's PAR_OPF_OUT_01: [0, 1], sigmoid,
 * hardsigmoid, softmax; PAR_OPF_OUT_PM1: [-1, 1], tanh, erf, softsign, sin, cos, sign): a correct backend computes
 * the op on held inputs, whose exact result lies in the range, with its own error on top, which beyond the range is at
 * most a few roundings of a result of magnitude 1 and the underflow allowance (docs/oracle.md, rule 5, "Ranges").
 * So however large the propagated budget, the held result is within max(v - lo, hi - v) of that range's far end
 * plus that allowance: the budget, and with it the scale and the flush part, is capped there. Without the cap a
 * sigmoid of an input held within 100 had a budget of up to 100 sup|f'|; the error scale of a model then grew
 * through every gate it multiplied. Elements with an infinite budget keep it (the backend's input may be an
 * infinity there, and sin or a softmax row of it is NaN: the interpreter's rules decide). */
static void range_cap(const par_op_info *info, const par_prec *p, par_rt *t)
{
    double lo, hi;
    if (info->flags & PAR_OPF_OUT_01) lo = 0, hi = 1;
    else if (info->flags & PAR_OPF_OUT_PM1) lo = -1, hi = 1;
    else return;
    if (t->dtype != PAR_DTYPE_F32 && t->dtype != PAR_DTYPE_F16 && t->dtype != PAR_DTYPE_F64) return;
    /* fn ulps of the function, up to 4 roundings of its steps, the storage rounding (twice: f16 storage of an f32
     * tensor), the underflow of a tiny result (twice) */
    const double a = (p->fn_ulps + 4) * p->u + 2 * p->u_store + 2 * underflow_abs(p);
    for (int64_t i = 0; i < t->numel; i++) {
        double v = t->v[i], e = t->e[i];
        if (!isfinite(v) || !(e < INFINITY)) continue;
        double w = fmax(v - lo, hi - v) + a;
        if (!(e > w)) continue;
        t->e[i] = w;
        if (t->s && t->s[i] > w) t->s[i] = w;
        if (t->f && t->f[i] > w) t->f[i] = w;
    }
}

/* The ops each of whose output elements is one of its inputs' elements (or nothing from a float input: an index):
 * where every float input is held >= 0, so is the output (par_rt.nonneg; pad and the clamps set it themselves). */
static int selects_elements(const char *op)
{
    static const char *const ops[] = {"max_pool2d", "amax", "amin", "upsample_nearest2d", "upsample_nearest_exact2d",
                                      "concat", "reshape", "flatten", "permute", "slice", "slice_scatter", "gather",
                                      "embedding", "maximum"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(op, ops[i]) == 0) return 1;
    return 0;
}

static void carry_nonneg(const par_node *n, const par_rt *const *in, par_rt *const *out)
{
    if (!selects_elements(n->op)) return;
    for (int32_t i = 0; i < n->n_inputs; i++)
        if (in[i] && (in[i]->dtype == PAR_DTYPE_F32 || in[i]->dtype == PAR_DTYPE_F16 || in[i]->dtype == PAR_DTYPE_F64) &&
            !in[i]->nonneg)
            return;
    for (int32_t i = 0; i < n->n_outputs; i++) out[i]->nonneg = 1;
}

static par_status run_node(const par_graph_desc *g, int32_t ni, const par_prec *p, par_rt *vals, par_msg *msg)
{
    const par_node *n = &g->nodes[ni];
    const par_op_info *info = par_op_of(n);
    const par_rt *in[64] = {NULL}; /* optional inputs past n_inputs read as absent */
    par_rt *out[4] = {NULL};
    par_rt tmp_in[64], tmp_out[4];
    int quant = 0;
    memset(tmp_in, 0, sizeof tmp_in);
    memset(tmp_out, 0, sizeof tmp_out);
    if (n->n_inputs > 64 || n->n_outputs > 4) return par_msgf(msg, PAR_ERROR, "node '%s': too many operands", n->name);

    /* quantize / dequantize are float kernels that see integers directly; every other op with a quantized
     * operand is computed on dequantized reals and requantized. */
    if (info->qform != PAR_QFORM_CONVERT) {
        for (int32_t i = 0; i < n->n_inputs; i++)
            if (n->inputs[i] >= 0 && is_quant(g->values[n->inputs[i]].dtype)) quant = 1;
        for (int32_t i = 0; i < n->n_outputs; i++)
            if (is_quant(g->values[n->outputs[i]].dtype)) quant = 1;
    }
    par_ref_ctx c = {.g = g, .n = n, .prec = *p};
    uint8_t *any = NULL;
    /* a scheme declared for this node (PAR_PROC_NODE_REQUANT) is the node's: its integers and its tie rule */
    if (p->requant_node && p->requant_node[ni] >= 0 && p->requant_node[ni] < PAR_REQUANT_N_SCHEMES)
        c.prec.requant = (par_requant)p->requant_node[ni];
    par_status st = PAR_OK;
    for (int32_t i = 0; i < n->n_outputs; i++) {
        const par_value *ov = &g->values[n->outputs[i]];
        if (par_rt_alloc(&vals[n->outputs[i]], ov->dtype, ov->rank, ov->dims, msg) != PAR_OK) return PAR_ERROR;
    }
    if (!quant) {
        for (int32_t i = 0; i < n->n_inputs; i++) in[i] = n->inputs[i] >= 0 ? &vals[n->inputs[i]] : NULL;
        for (int32_t i = 0; i < n->n_outputs; i++) out[i] = &vals[n->outputs[i]];
        /* dequantize reads budgets in steps: an integer input with a labelled range enters with its width added
         * (a backend's integer anywhere in [ql - e, qh + e] is correct, docs/quantization.md) */
        if (info->qform == PAR_QFORM_CONVERT && in[0] && in[0]->ql && in[0]->qh) {
            const par_rt *q = in[0];
            st = par_rt_alloc(&tmp_in[0], q->dtype, q->rank, q->dims, msg);
            for (int64_t k = 0; k < q->numel && st == PAR_OK; k++) {
                tmp_in[0].v[k] = q->v[k];
                tmp_in[0].e[k] = q->e[k] + label_width(q, k);
                tmp_in[0].s[k] = par_rt_scales(q)[k] + label_width(q, k);
            }
            in[0] = &tmp_in[0];
        }
        /* the kernel's marks of intermediate overflows in output 0 (par_mark_any) */
        if (n->n_outputs > 0 && out[0]->numel > 0) {
            any = calloc((size_t)out[0]->numel, 1);
            if (!any) st = par_msgf(msg, PAR_ERROR, "out of memory");
            c.any = any;
        }
        /* Flushing (PAR_ARITH_FLUSH_SUBNORMALS): the outputs carry flush parts, and their results may be flushed. */
        for (int32_t i = 0; i < n->n_outputs && st == PAR_OK; i++)
            if (flush_tau(p, out[i]->dtype) > 0) st = alloc_flush(out[i], msg);
        if (st == PAR_OK) st = par_ref_kernel(info->id)(&c, in, out, msg);
        if (st == PAR_OK) carry_nonneg(n, in, out);
        if (st == PAR_OK) st = scale_pass(info, &c, n->n_inputs, in, n->n_outputs, out, msg);
        if (st == PAR_OK && p->flush > 0) st = flush_pass(info, &c, n->n_inputs, in, n->n_outputs, out, msg);
        for (int32_t i = 0; i < n->n_outputs && st == PAR_OK; i++) range_cap(info, p, out[i]);
        if (st == PAR_OK && !(p->flush > 0) && !(info->flags & PAR_OPF_EXACT))
            for (int32_t i = 0; i < n->n_outputs; i++) gradual_results(out[i], p);
        for (int32_t i = 0; i < n->n_outputs && st == PAR_OK; i++)
            if (out[i]->f) flush_results(out[i], flush_tau(p, out[i]->dtype));
        if (st == PAR_OK) {
            int any_el = 0, unb_el = 0;
            for (int32_t i = 0; i < n->n_inputs; i++) taint_of(in[i], &any_el, &unb_el);
            const int exact = (info->flags & PAR_OPF_EXACT) != 0;
            for (int32_t i = 0; i < n->n_outputs; i++)
                nonfinite_rules(out[i], p, i == 0 ? any : NULL, any_el, !exact && (any_el || unb_el));
        }
        free(any);
        par_rt_free(&tmp_in[0]);
        if (st == PAR_OK && info->qform == PAR_QFORM_CONVERT) st = carry_ties(g, n, vals, msg);
    } else {
        if (!(info->flags & PAR_OPF_QUANT_OK)) {
            return par_msgf(msg, PAR_UNSUPPORTED, "node '%s': op %s has no quantized form in the reference", n->name,
                            n->op);
        }
        /* The ideal real result: integer backends accumulate exactly, so no float rounding is budgeted inside
         * the op; requantization (below) is where their error lives. */
        c.prec.u = c.prec.u_store = c.prec.fn_ulps = 0;
        c.prec.u_in = 0;   /* nor operands rounded to bfloat16: integer products are exact */
        c.prec.flush = 0; /* nor any flushing: integer arithmetic has no subnormals */
        for (int32_t i = 0; i < n->n_inputs && st == PAR_OK; i++) {
            in[i] = NULL;
            if (n->inputs[i] < 0) continue;
            const par_value *iv = &g->values[n->inputs[i]];
            const int acc = info->qform == PAR_QFORM_ACC_AXIS1 || info->qform == PAR_QFORM_ACC_LAST;
            if (acc && i == par_qacc_bias_input(n) && iv->dtype == PAR_DTYPE_I32) {
                st = dequant_bias(g, n, &vals[n->inputs[i]], &tmp_in[i], msg);
                in[i] = &tmp_in[i];
            } else if (is_quant(iv->dtype) || iv->dtype == PAR_DTYPE_I32) {
                st = dequant_rt(iv, &vals[n->inputs[i]], &tmp_in[i], msg);
                in[i] = &tmp_in[i];
            } else {
                in[i] = &vals[n->inputs[i]];
            }
        }
        for (int32_t i = 0; i < n->n_outputs && st == PAR_OK; i++) {
            const par_value *ov = &g->values[n->outputs[i]];
            st = par_rt_alloc(&tmp_out[i], PAR_DTYPE_F32, ov->rank, ov->dims, msg);
            out[i] = &tmp_out[i];
        }
        if (st == PAR_OK) st = par_ref_kernel(info->id)(&c, in, out, msg);
        if (st == PAR_OK) carry_nonneg(n, in, out);
        if (st == PAR_OK) st = scale_pass(info, &c, n->n_inputs, in, n->n_outputs, out, msg);
        for (int32_t i = 0; i < n->n_outputs && st == PAR_OK; i++) {
            const par_value *ov = &g->values[n->outputs[i]];
            if (is_quant(ov->dtype)) {
                par_status qs = PAR_UNSUPPORTED;
                if (i == 0) {
                    const par_rt *qin[64] = {NULL};
                    for (int32_t k = 0; k < n->n_inputs; k++) qin[k] = n->inputs[k] >= 0 ? &vals[n->inputs[k]] : NULL;
                    par_msg qm = {{0}};
                    qs = requant_exact(&c, qin, ov, &tmp_out[i], &vals[n->outputs[i]], &qm);
                    if (qs == PAR_ERROR) {
                        *msg = qm;
                        st = PAR_ERROR;
                    }
                }
                if (qs == PAR_UNSUPPORTED) requant_rt(ov, &tmp_out[i], &vals[n->outputs[i]], c.prec.requant_exact);
            } else {
                memcpy(vals[n->outputs[i]].v, tmp_out[i].v, sizeof(double) * (size_t)tmp_out[i].numel);
                memcpy(vals[n->outputs[i]].e, tmp_out[i].e, sizeof(double) * (size_t)tmp_out[i].numel);
                memcpy(vals[n->outputs[i]].s, tmp_out[i].s, sizeof(double) * (size_t)tmp_out[i].numel);
            }
        }
        for (int32_t i = 0; i < 64; i++) par_rt_free(&tmp_in[i]);
        for (int32_t i = 0; i < 4; i++) par_rt_free(&tmp_out[i]);
    }
    if (st != PAR_OK) {
        par_msg m = *msg;
        return par_msgf(msg, st, "reference: node '%s' (%s): %s", n->name, n->op, m.text);
    }
    /* A kernel must leave sane budgets: never negative, never NaN. */
    for (int32_t i = 0; i < n->n_outputs; i++) {
        const par_rt *t = &vals[n->outputs[i]];
        for (int64_t k = 0; k < t->numel; k++)
            if (!(t->e[k] >= 0))
                return par_msgf(msg, PAR_ERROR, "reference: node '%s' (%s): invalid budget %g at element %lld",
                                n->name, n->op, t->e[k], (long long)k);
    }
    return PAR_OK;
}

par_status par_ref_run(const par_graph_desc *g, const par_prec *p, const void *const *inputs, par_ref_result **out,
                       par_msg *msg)
{
    *out = NULL;
    par_ref_result *r = calloc(1, sizeof *r);
    if (!r) return par_msgf(msg, PAR_ERROR, "reference: out of memory");
    r->n_values = g->n_values;
    r->values = calloc((size_t)(g->n_values ? g->n_values : 1), sizeof *r->values);
    if (!r->values) {
        free(r);
        return par_msgf(msg, PAR_ERROR, "reference: out of memory");
    }
    par_status st = PAR_OK;
    for (int32_t i = 0; i < g->n_inputs && st == PAR_OK; i++)
        st = load_leaf(&g->values[g->inputs[i]], inputs[i], p, &r->values[g->inputs[i]], msg);
    for (int32_t v = 0; v < g->n_values && st == PAR_OK; v++)
        if (g->values[v].kind == PAR_VALUE_CONST) st = load_leaf(&g->values[v], g->values[v].data, p, &r->values[v], msg);
    for (int32_t ni = 0; ni < g->n_nodes && st == PAR_OK; ni++) st = run_node(g, ni, p, r->values, msg);
    if (st != PAR_OK) {
        par_ref_result_destroy(r);
        return st;
    }
    *out = r;
    return PAR_OK;
}
