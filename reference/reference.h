/*
 * reference.h - the float64 reference interpreter: for every element of every tensor, a value and an error budget.
 *
 * The reference is the ground truth. Kernels (one file per op family) are plain loops that read like the op's
 * definition; they never optimize. Each kernel computes, for each output element:
 *   v: the exact result in float64 of the op applied to its inputs' reference values;
 *   e: the error budget, the largest |backend - v| that a correct implementation in the backend's arithmetic may
 *      show: (a) the op's own rounding in that arithmetic, from the standard forward error bounds, plus (b) its
 *      inputs' budgets propagated through the op's sensitivity. docs/oracle.md derives the budget of every op.
 * Rules every kernel follows (docs/oracle.md, "common rules"):
 *   - storage: an op whose result involves arithmetic adds prec.u_store * |v| for rounding the result to the
 *     storage type. Pure data movement / selection (PAR_OPF_EXACT) adds nothing: its budget is its inputs'.
 *   - a sum or dot product of k terms (counting a bias as a term) adds par_gamma(k, prec.u) * sum |term|.
 *   - an elementary function (exp, log, tanh, sigmoid, ...) adds prec.fn_ulps * prec.u * |v|.
 *   - propagation is first order with the sup of |f'| over [x - e, x + e] where f is not linear.
 * For qu8/qs8/i32 tensors v holds the stored integer q (real = scale * (q - zero_point)) and e is in steps of q.
 *
 * Kernels must not allocate memory that outlives the call, and must not read tensors other than their inputs.
 */
#ifndef PAR_REFERENCE_H
#define PAR_REFERENCE_H

#include <math.h>

#include "core/ops.h"

/* A reference tensor: logical NCHW, dense, row-major. */
typedef struct par_rt {
    par_dtype dtype;                 /* the graph value's dtype (what the backend stores) */
    int32_t rank;
    int64_t dims[PAR_MAX_RANK];
    int64_t numel;
    double *v;                       /* values */
    double *e;                       /* error budgets, >= 0: the pass rule |backend - v| <= e */
    double *s;                       /* error scales, 0 <= s <= e: the root-sum-square of the bounds of the
                                      * independent error sources behind the element (docs/oracle.md, rule 5);
                                      * NULL reads as e. Only linear combinations use it, to propagate. */
    /* Quantized outputs of quantized nodes (docs/quantization.md): v is the exact integer under the declared
     * scheme, e the budget in steps propagated from the inputs (0 when they are exact), and [ql, qh] (ql <= v <=
     * qh) the integers that another scheme or a tie of the ideal real value explains. The pass rule is
     * ql - e <= backend <= qh + e; a pass with backend != v is "labelled". NULL (every other tensor) reads as v. */
    double *ql, *qh;
    /* The bias bounds of a quantized tensor, in steps: the largest mean signed difference (up: positive, down:
     * negative, both >= 0) that rounding explains: the tie fraction of its own labels plus the systematic share of
     * its propagated budget (docs/quantization.md, "Bias"). Meaningful when ql is set; 0 otherwise. */
    double qb_up, qb_down;
    /* Ties (docs/quantization.md, "Ties"): NULL, or per element NaN or the value t = k + 1/2 (before the zero point)
     * at which the declared scheme's own arithmetic put the node's result exactly halfway between two integers, its
     * inputs being exact there; the rule tie_rule (par_tie_rule) decides it. Set on a quantized node's output, and
     * carried to a dequantize output, whose backend value x reads as the integer tie_zp + rint(x / tie_scale);
     * tie_scale is 0 on the integer tensor itself. */
    double *tie;
    int32_t tie_rule;
    int32_t tie_zp;
    double tie_scale;
    /* The flush part of e, for backends that flush subnormals (par_prec.flush > 0; NULL otherwise, read as 0): a
     * bound of the share of the element's error that flushing explains and that is not mean-zero, 0 <= f <= e.
     * A flush always goes toward zero, so it stays out of s where it enters; a linear combination of flushed
     * inputs moves the part that fluctuates with the terms' signs into s and keeps in f the part common to them
     * (par_flush_sum; docs/oracle.md, "Flushed subnormals", item 5). */
    double *f;
    /* 1 when every element a correct backend holds is >= 0 (or NaN) whatever its budget: the output of relu, relu6,
     * a clamp whose lower bound is >= 0 and hardsigmoid, and of an op that only selects elements of such inputs
     * (interp.c). Only flushing's sign rule reads it (par_held_sign): [v - e, v + e] may reach below 0 where the
     * held value cannot. */
    int nonneg;
    /* NULL, or a static sentence a kernel sets where it makes elements of this tensor unbounded for a reason of the
     * op's own that a record should name (par_unjudged_origin), rather than an interval reaching the storage's
     * overflow threshold: e.g. an eps that a flushing backend may read as 0. */
    const char *why_unbounded;
} par_rt;

/* The arithmetic the budgets are derived for (from the backend's par_arith). */
typedef struct par_prec {
    double u;        /* unit roundoff of arithmetic inside an op: 2^-24 for f32 */
    double u_store;  /* unit roundoff of the storage between ops: 2^-24 for f32, 2^-11 for f16, 2^-8 for bf16 */
    double fn_ulps;  /* error allowed to an elementary function (exp, log, tanh, ...), in units of u */
    /* Unit roundoff of the operands of a dot product on entry (reference/dot.h: conv2d, conv_transpose2d, linear,
     * matmul): 2^-8 when they may be rounded to bfloat16 (PAR_ARITH_BF16), else 0 (they are used as stored). */
    double u_in;
    par_requant requant; /* the requantization scheme of quantized nodes (PAR_PROC_REQUANT; fp32 by default) */
    int requant_exact;   /* the backend promises the scheme's integers exactly (PAR_PROC_REQUANT_EXACT): no labels */
    /* The algorithm of every node (g->n_nodes entries, par_algo) that the backend declared (PAR_PROC_NODE_ALGO,
     * validated by par_algo_check); NULL: every node PAR_ALGO_DIRECT. A declared Winograd conv2d is budgeted by
     * conv_winograd.c (docs/budgets/winograd.md). Not owned: it must outlive the par_ref_run call. */
    const int32_t *algo;
    /* The requantization scheme of every node (g->n_nodes entries) that the backend declared per node
     * (PAR_PROC_NODE_REQUANT, validated by exec/): a par_requant value replaces `requant` at that quantized node (its
     * integers and its tie rule), -1 keeps `requant`; NULL: every node under `requant`. Not owned, like algo. */
    const int32_t *requant_node;
    /* Subnormals flushed (PAR_ARITH_FLUSH_SUBNORMALS): the smallest normal number of the arithmetic inside ops
     * (2^-126 for f32 arithmetic, 2^-14 for f16 arithmetic), the bound of eta in the standard model with underflow
     * fl(x op y) = (x op y)(1 + d) + eta for the operations a kernel counts (par_eta). A tensor stored in f16 (an f16
     * tensor, or an f32 tensor under f16 storage) flushes at 2^-14 when it is read or written, whatever the
     * arithmetic (the interpreter's flush_tau). 0 for gradual underflow, whose |eta| <= 2^-150 (f32) is budgeted by
     * par_eta_gradual (docs/oracle.md, "Flushed subnormals"). */
    double flush;
    /* The statistical companion's scale (docs/oracle.md, "The statistical companion"): 1 makes a dot product's own
     * share of the scale s the root-sum-square of the bounds of its actual roundings, u times each partial sum of
     * the reference's order and each product, instead of sqrt(k) u times the whole magnitude; every scale
     * downstream follows. Only the scales of such a run are used (by the oracle's companion), never its budgets.
     * 0 everywhere else. */
    int stat_scale;
    /* 1: the dot products (reference/dot.h) take dot_add's general path everywhere, never the fast path, which gives
     * the same bits; tests/test_ref_dot.c compares the two. 0 everywhere else. */
    int dot_general;
} par_prec;

typedef struct par_ref_ctx {
    const par_graph_desc *g;
    const par_node *n;               /* the node being computed; its values: g->values[n->inputs[i]] etc. */
    par_prec prec;
    /* Output 0's elements whose evaluation in the backend's arithmetic may overflow an intermediate although the ideal
     * result is finite (a partial sum of huge terms, x * 6 inside hardswish): a kernel sets any[i] = 1 there
     * (par_mark_any), and the interpreter makes the element "anything" (docs/oracle.md, "NaN and Inf policy"): value
     * NaN, budget +Inf, any backend value passes and is counted unbounded. NULL: no marks wanted (the scale and flush
     * passes). */
    uint8_t *any;
} par_ref_ctx;

/* A binary floating-point format that a declared arithmetic computes in (par_prec.u) or stores in between ops
 * (par_prec.u_store): what the budgets need of it (docs/oracle.md, "Storage formats"). */
typedef struct par_fmt {
    const char *name;
    double u;           /* unit roundoff, 2^-bits */
    int bits;           /* significant bits, the hidden one included */
    int min_ex, max_ex; /* the frexp exponents of its normal numbers (|x| = m 2^ex, m in [1/2, 1)) */
    double tiny;        /* the smallest normal number: where a flushing format reads or writes 0 */
    double eta;         /* half the smallest subnormal: the absolute error of gradual underflow in one rounding */
    double max;         /* the largest finite number */
    double ovf;         /* the smallest magnitude that rounds to infinity (to nearest, ties to even) */
} par_fmt;

/* fmax and fmin bit for bit, inline: the comparison where it decides, the C library's function where it does not
 * (equal operands, whose zeros' signs the library chooses, and NaN operands). The hot kernels call them per element,
 * where a call through the library's entry point cost more than the arithmetic. */
static inline double par_fmax(double a, double b) { return a > b ? a : b > a ? b : fmax(a, b); }
static inline double par_fmin(double a, double b) { return a < b ? a : b < a ? b : fmin(a, b); }

/* The format of unit roundoff u: one row per format a par_arith names (f32, f16, bfloat16). The profiles name their
 * formats by u alone, which is unique per row. A u of no row (0: the exact profile, whose callers test it first)
 * reads as the narrowest row that is at least as coarse, f16 beyond f32's: its tiny, eta and ovf are the widest
 * allowances, so an unknown profile is judged loosely, never falsely. */
static inline const par_fmt *par_fmt_of(double u)
{
    static const par_fmt fmts[] = {
        {"f32", 0x1p-24, 24, -125, 128, 0x1p-126, 0x1p-150, 0x1.fffffep127, 0x1p128 - 0x1p103},
        {"f16", 0x1p-11, 11, -13, 16, 0x1p-14, 0x1p-25, 65504.0, 65520.0},
        {"bf16", 0x1p-8, 8, -125, 128, 0x1p-126, 0x1p-134, 0x1.fep127, 0x1p128 - 0x1p119},
    };
    for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++)
        if (fmts[i].u == u) return &fmts[i];
    return u <= 0x1p-24 ? &fmts[0] : &fmts[1];
}

/* Whether x is exactly a normal number of format f, or 0 or infinite: its significand fits in f's bits and its
 * exponent in f's range. Rounding x to f then changes nothing. */
static inline int par_fmt_exact(const par_fmt *f, double x)
{
    if (x == 0 || isinf(x)) return 1;
    if (isnan(x)) return 0;
    int ex;
    double m = frexp(fabs(x), &ex); /* |x| = m 2^ex, m in [0.5, 1) */
    double scaled = ldexp(m, f->bits);
    return scaled == floor(scaled) && ex >= f->min_ex && ex <= f->max_ex;
}

/* The largest magnitude an intermediate of the arithmetic holds without overflowing: FLT_MAX, or 65504 when the
 * arithmetic is f16; unlimited for the exact arithmetic (u = u_store = 0: par_prec_ideal, a quantized node's ideal
 * real result), whose intermediates are float64's. */
static inline double par_ovf_arith(const par_prec *p)
{
    if (p->u == 0 && p->u_store == 0) return INFINITY;
    return par_fmt_of(p->u)->max;
}

/* Mark element i of output 0 as "anything" (an intermediate may overflow; see par_ref_ctx.any). */
static inline void par_mark_any(const par_ref_ctx *c, int64_t i)
{
    if (c->any) c->any[i] = 1;
}

/* gamma_k = k u / (1 - k u): the forward error bound factor of a k-term sum (Higham, Accuracy and Stability of
 * Numerical Algorithms, 2nd ed., section 3.1). */
static inline double par_gamma(int64_t k, double u)
{
    double ku = (double)k * u;
    return ku < 0.5 ? ku / (1.0 - ku) : 1.0; /* beyond 1/2 the bound is meaningless: allow the whole magnitude */
}

/* Propagation of input errors through a linear combination y = sum_k c_k x_k (docs/oracle.md, rule 5). With
 * t_k = |c_k| e(x_k) (plus the cross terms of inexact coefficients), the worst case is sum t_k. An input's error is
 * a sum of independent, mean-zero sources (each rounding, for round-to-nearest on non-degenerate data) whose bounds
 * have the root-sum-square s(x_k); by Hoeffding's inequality |sum c_k d_k| <= lambda sqrt(sum (|c_k| s(x_k))^2)
 * except with probability 2 exp(-lambda^2 / 2) (3e-8 for lambda = 6). The budget takes the smaller of the two: the
 * worst case compounds by sum |c_k| per layer and makes deep graphs untestable; the probabilistic bound grows as the
 * signal does. The scale of y is its own rounding bound plus sqrt(sum (|c_k| s(x_k))^2), without lambda, so lambda
 * is applied once per comparison, not once per layer. */
#define PAR_PROP_LAMBDA 6.0
/* sum_t: the sum of the terms computed from the inputs' budgets e; sum_s2: the sum of the squares of the same terms
 * computed from the inputs' scales s. */
static inline double par_prop_bound(double sum_t, double sum_s2)
{
    double r = PAR_PROP_LAMBDA * sqrt(sum_s2);
    return r < sum_t ? r : sum_t;
}

/* With flushing, the flush parts f(x_k) of a linear combination's inputs (docs/oracle.md, "Flushed subnormals",
 * item 5). A flushed input is read as 0, an error -x'_k with |x'_k| <= f(x_k): its sign is the opposite of the held
 * value's, so flushes are not mean-zero, but the term c_k (-x'_k) has the sign of -c_k x'_k. Where the signs of the
 * terms are mixed (a convolution's weights, a residual's signed activations) their sum is a signed sum of the
 * bounds |c_k| f(x_k) scaled by how much each flush took: the accumulator keeps the square sum of the terms (the
 * fluctuation, which Hoeffding's inequality bounds by lambda sqrt(sq) when the signs are independent of the
 * magnitudes, with rule 5's 3e-8) and the sum of the terms signed by sgn(c_k x_k), the reference's signs, whose
 * magnitude bounds the part common to the signs: all-positive weights on positive inputs (an average of relu
 * outputs, a softmax's weights on positive values) give the worst case sum_k |c_k| f(x_k) exactly. A term of a
 * zero value or coefficient has either sign and enters the square sum only; cross terms (f e, second order) are
 * counted worst case. */
typedef struct par_flush_sum {
    double sq;   /* sum over the terms of (|c_k| f(x_k) + cross terms)^2 */
    double sgn;  /* sum of |c_k| f(x_k) signed by sgn(c_k x_k) where known, else 0 */
    double abs;  /* the cross terms f e, worst case */
} par_flush_sum;

/* The sign a flush error of v takes toward zero, negated: sgn(v), 0 at v = 0 (either sign). */
static inline double par_flush_sign(double v)
{
    return v > 0 ? 1.0 : v < 0 ? -1.0 : 0.0;
}

/* Add one term: t = |c| f(x) of sign sgn (par_flush_sign of the coefficient times the input's, 0 for either), and
 * cross, its second-order terms. */
static inline void par_flush_add(par_flush_sum *a, double t, double sgn, double cross)
{
    a->sq += (t + cross) * (t + cross);
    a->sgn += sgn * t;
    a->abs += cross;
}

/* The part of the flush common to the terms' signs: carried downstream as the flush part f of the result. */
static inline double par_flush_common(const par_flush_sum *a)
{
    return fabs(a->sgn) + a->abs;
}

/* The propagated bound of a linear combination with flushing: lambda times the root-sum-square of the inputs' scales
 * and flush terms, plus the flush part common to the signs; the worst case sum_t when smaller. A zero flush sum
 * gives par_prop_bound. */
static inline double par_prop_bound_flush(double sum_t, double sum_s2, const par_flush_sum *fl)
{
    double r = PAR_PROP_LAMBDA * sqrt(sum_s2 + fl->sq) + par_flush_common(fl);
    return r < sum_t ? r : sum_t;
}

/* The absolute error of gradual underflow in one operation of the arithmetic (eta of the standard model without
 * flushing): half the smallest subnormal of the coarser of the arithmetic's and the storage's formats, 2^-150 for
 * f32, 2^-25 when f16 is involved, 2^-134 under bfloat16 storage; 0 for the ideal result. */
static inline double par_eta_gradual(const par_prec *p)
{
    if (p->u == 0 && p->u_store == 0) return 0.0;
    return par_fmax(par_fmt_of(p->u)->eta, par_fmt_of(p->u_store)->eta);
}

/* The absolute error of n operations of a kernel whose results may underflow (a product or a partial sum inside the
 * op; eta of the standard model): n * flush when the backend flushes subnormals to zero, else n times the gradual
 * underflow's half subnormal (docs/oracle.md, "Flushed subnormals"). A kernel adds it to its own rounding for the
 * intermediate operations it counts; the interpreter adds the flush of the inputs (DAZ) and the underflow of each
 * node's results (FTZ, or the gradual eta of the stored result) itself, so a kernel never counts those. */
static inline double par_eta(const par_prec *p, double n)
{
    return p->flush > 0 ? n * p->flush : n * par_eta_gradual(p);
}

/* par_eta for a kernel that tells its n_mul multiplications (divisions, elementary functions) from its n_add
 * additions: flushing may hit any of them, (n_mul + n_add) tau; under gradual underflow an addition whose result is
 * subnormal is exact (Higham, section 2.1), so only the n_mul others count. */
static inline double par_eta_ops(const par_prec *p, double n_mul, double n_add)
{
    return p->flush > 0 ? (n_mul + n_add) * p->flush : n_mul * par_eta_gradual(p);
}

/* Flushing inside a sum (docs/oracle.md, "Flushed subnormals", item 3). An intermediate term (a product w x, a
 * scaled term x / d) that a correct backend holds within [lo, hi] in magnitude can be flushed only where it may lie
 * below tau, and then loses at most min(tau, hi); elsewhere it is a normal number and nothing is flushed. */
static inline double par_flush_term(double tau, double lo, double hi)
{
    return tau > 0 && lo < tau ? par_fmin(tau, hi) : 0.0;
}

/* The own flushes of a sum's terms (par_flush_term each, added to o by par_flush_add with the sign of the term's
 * reference value, tot their sum): a flushed term loses itself, an error of the sign opposite to the held term's,
 * so they are a signed sum like a linear combination's flushed inputs (docs/oracle.md, "Flushed subnormals", items
 * 3 and 5): the part common to the signs plus lambda times the root-sum-square of the rest, with rule 5's 3e-8
 * under item 5's assumption, or the worst case tot when smaller. par_flush_own_common is the share of it carried
 * as the flush part f (the rest is a fluctuation: a scale). */
static inline double par_flush_own_bound(double tot, const par_flush_sum *o)
{
    double r = PAR_PROP_LAMBDA * sqrt(o->sq) + par_flush_common(o);
    return r < tot ? r : tot;
}
static inline double par_flush_own_common(double tot, const par_flush_sum *o)
{
    double r = PAR_PROP_LAMBDA * sqrt(o->sq) + par_flush_common(o);
    return r < tot ? par_flush_common(o) : tot;
}

/* The sign a correct backend's held value within e of v can take, as a bit set: PAR_SG_POS, PAR_SG_NEG, or
 * PAR_SG_ANY when [v - e, v + e] holds values of both signs (unless the tensor is par_rt.nonneg); 0 for an exact
 * zero (it adds nothing to a sum). */
enum { PAR_SG_POS = 1, PAR_SG_NEG = 2, PAR_SG_ANY = 4 };
static inline int par_held_sign(double v, double e, int nonneg)
{
    if (v == 0 && e == 0) return 0;
    if (nonneg) return PAR_SG_POS; /* a held 0 adds nothing */
    if (fabs(v) >= e) return v > 0 ? PAR_SG_POS : PAR_SG_NEG; /* a held 0 at |v| = e adds nothing either */
    return PAR_SG_ANY;                                         /* NaN included */
}

/* The sign of a product of factors of held signs a and b (par_held_sign). */
static inline int par_sign_mul(int a, int b)
{
    if (!a || !b) return 0;
    if ((a | b) & PAR_SG_ANY) return PAR_SG_ANY;
    return a == b ? PAR_SG_POS : PAR_SG_NEG;
}

/* The additions of a sum of held normal-or-zero terms whose signs, or'ed, are mask: where every term has one sign,
 * every partial sum in any order is 0 or at least its largest term's magnitude (rounding is monotone), so no
 * addition lands below tau and none flushes: n_add of them count otherwise (par_eta_ops). */
static inline double par_flush_adds(const par_prec *p, int mask, double n_add)
{
    if (!(p->flush > 0)) return 0.0; /* gradual underflow: an addition is exact there */
    return (mask & PAR_SG_ANY) || mask == (PAR_SG_POS | PAR_SG_NEG) ? n_add * p->flush : 0.0;
}

/* The scales of a tensor (its budgets when it has none). */
static inline const double *par_rt_scales(const par_rt *t) { return t->s ? t->s : t->e; }

/* The integer result of quantized node c->n (docs/quantization.md, "Per-op integer semantics") under each
 * requantization scheme: in[i] are the node's inputs as reference tensors (stored integers in v for qu8/qs8/i32),
 * ideal its output 0 computed on the dequantized reals (f64, in real units), q[s] (output 0's numel each; NULL to
 * skip) receives the stored integers under scheme s for s in 0..PAR_REQUANT_N_SCHEMES - 1 (par_requant), win (may be
 * NULL) the half-width, in output steps, of the window around a rounding tie of the ideal value inside which a
 * correct backend may round either way, and tie (may be NULL) per element the value k + 1/2 (before the zero point)
 * where the declared scheme's (c->prec.requant) own arithmetic lands exactly on a tie, NaN elsewhere and for ops
 * whose formula does not pin ties (docs/quantization.md, "Ties"), and slack (may be NULL) per element how far the
 * declared scheme's arithmetic may move the value before its final rounding (par_requant_slack: gemmlowp's first
 * rounding), in output steps. The accumulators are computed once for all schemes sharing them. PAR_UNSUPPORTED for an
 * op without an integer form. (quant_ops.c) */
par_status par_qref_node(const par_ref_ctx *c, const par_rt *const *in, const par_rt *ideal, double *const *q,
                         double *win, double *tie, double *slack, par_msg *msg);

/* The operands of an accumulating op (qform ACC_AXIS1 / ACC_LAST): the input index of its i32 bias, and of the
 * quantized value whose scales (per tensor, or per output channel) are the weights' in the ratio s_x s_w / s_out:
 * 2 and 1, except linear_16a4w's 3 and 2 (its block scales carry the channel scales; docs/quantization.md, "16a4w"). */
static inline int32_t par_qacc_bias_input(const par_node *n)
{
    return par_op_of(n)->id == PAR_OP_LINEAR_16A4W ? 3 : 2;
}
static inline int32_t par_qacc_scale_input(const par_node *n)
{
    return par_op_of(n)->id == PAR_OP_LINEAR_16A4W ? 2 : 1;
}

/* linear_8da4w / linear_16a4w with the attribute scales = "bf16": every float scale of input idx (8da4w: s, the
 * block scales; 16a4w: the channel scales of the block-scale value, s unused) is exactly a bfloat16, else an ERROR
 * naming the input, the element and its value (linear_8da4w.c). */
par_status par_ref_w4_scales(const par_ref_ctx *c, const par_rt *s, int32_t idx, par_msg *msg);

/* The precision profile for a backend's declared arithmetic. */
par_prec par_prec_for(par_arith a);
/* The exact arithmetic (u = u_store = 0, no flushing): the reference's values with budgets 0 and nothing marked
 * "anything" short of float64's own range, the ideal result the metrics of an unjudged element are taken against. */
par_prec par_prec_ideal(void);
/* Declare (flush != 0) or clear the flushing of subnormals in a profile: sets p->flush from its arithmetic's u. */
void par_prec_set_flush(par_prec *p, int flush);

/* Allocate / free a reference tensor (values and budgets zeroed). */
par_status par_rt_alloc(par_rt *t, par_dtype dt, int32_t rank, const int64_t *dims, par_msg *msg);
void par_rt_free(par_rt *t);
/* Row-major strides of a tensor (elements). */
void par_rt_strides(const par_rt *t, int64_t *strides);

/* The interpreter's result: one par_rt per value of the graph (graph indexing), inputs and constants included. */
typedef struct par_ref_result {
    int32_t n_values;
    par_rt *values;
} par_ref_result;

/* Run the whole graph. inputs[i] is the data of g->inputs[i] in its dtype. Graph inputs and constants enter with
 * budget 0 when the backend stores them exactly, else u_store * |x| (f16 storage of an f32 tensor). */
par_status par_ref_run(const par_graph_desc *g, const par_prec *p, const void *const *inputs, par_ref_result **out,
                       par_msg *msg);
void par_ref_result_destroy(par_ref_result *r);

/* A reference kernel: the value and budget of every element of out[] from in[] (the ref column of core/ops.def). */
typedef par_status (*par_ref_fn)(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg);

/* The reference kernels of every op: declared from the op table. */
#define PAR_OP(id, name, in_min, in_max, n_out, flags, qform, schema, infer, ref, sweep)                               \
    par_status ref(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg);
#include "core/ops.def"
#undef PAR_OP

/* The reference kernel of an op (never NULL for a valid id). */
par_ref_fn par_ref_kernel(par_op_id id);

#endif
